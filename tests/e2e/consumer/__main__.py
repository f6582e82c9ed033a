"""Serves the consumer's function over mTLS, as a package runtime runs a function:
`python -m tests.e2e.consumer <tls-certs-dir> <address>`."""

from __future__ import annotations

import sys

from crossplane.function import runtime

from tests.e2e.consumer.fn import Consumer

if __name__ == "__main__":
    certs_dir, address = sys.argv[1:3]
    runtime.serve(Consumer(), address, creds=runtime.load_credentials(certs_dir), insecure=False)
