"""The `function` console script: serve the composition function over gRPC."""

from __future__ import annotations

import sys

import click
from crossplane.function import cli as sdkcli
from crossplane.function import logging, runtime

from function import server
from function.runner import FunctionRunner

MEGABYTE = 1024 * 1024


@click.command()
@sdkcli.standard_options
def cli(
    *,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
) -> None:
    """Serve function-inference-clusters: mTLS with --tls-certs-dir; plaintext needs --insecure."""
    logging.configure(level=logging.Level.DEBUG if debug else logging.Level.INFO)
    options = [
        ("grpc.max_receive_message_length", max_recv_message_size * MEGABYTE),
        (
            "grpc.max_send_message_length",
            (max_send_message_size or max_recv_message_size) * MEGABYTE,
        ),
        # gRPC shares a port between processes by default; a second function on the same address
        # must fail to start instead of silently taking half of Crossplane's calls.
        ("grpc.so_reuseport", 0),
    ]
    if not insecure and not tls_certs_dir:
        click.echo(
            "function: mTLS needs --tls-certs-dir (or TLS_SERVER_CERTS_DIR) holding tls.crt, "
            "tls.key and ca.crt; pass --insecure to serve plaintext",
            err=True,
        )
        sys.exit(2)
    try:
        # The SDK's cli.run would open a TLS and a plaintext port on the same address when given
        # both; --insecure means plaintext only, as its help text says.
        credentials = (
            None if insecure or not tls_certs_dir else runtime.load_credentials(tls_certs_dir)
        )
        server.serve(FunctionRunner(log_calls=debug), address, creds=credentials, options=options)
    except Exception as error:  # startup failures: report in one line and exit non-zero
        click.echo(f"function: cannot serve on {address}: {error}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    cli()
