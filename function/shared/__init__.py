"""Rules both clouds share: reading observed state, validation, naming and the outcome shape."""
