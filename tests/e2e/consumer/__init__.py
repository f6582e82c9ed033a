"""A consumer of the XRs on the real engine, shaped like Modelplane's InferenceCluster: its own
composition function, XRD and Composition (tests/e2e/test_consumer.py drives it)."""
