"""The `function` console script: serve the composition function over gRPC."""

from __future__ import annotations

import os
import sys

import click
from crossplane.function import cli as sdkcli
from crossplane.function import logging, runtime

from function import addresses, health, metrics, server
from function.memo.memo import MEMO_BYTES, Memo
from function.runner import FunctionRunner

MEGABYTE = 1024 * 1024
# Read by hand, not by click: click takes an empty variable for an unset one, and empty is how a
# DeploymentRuntimeConfig turns a side port off.
METRICS_ENV = "METRICS_ADDRESS"
HEALTH_ENV = "HEALTH_ADDRESS"
MEMO_ENV = "MEMO_MIB"


@click.command()
@sdkcli.standard_options
@click.option(
    "--metrics-address",
    default=metrics.DEFAULT_ADDRESS,
    show_default=True,
    help="Serve Prometheus metrics at http://ADDRESS/metrics, plain HTTP whatever the gRPC "
    f"port serves; empty: no metrics. Also {METRICS_ENV}.",
)
@click.option(
    "--health-address",
    default=health.DEFAULT_ADDRESS,
    show_default=True,
    help="Also serve the gRPC health service here, in plaintext and alone, for the kubelet's "
    f"gRPC probes (which cannot speak TLS); empty: only on --address. Also {HEALTH_ENV}.",
)
@click.option(
    "--memo-mib",
    type=click.IntRange(min=1),
    default=MEMO_BYTES // MEGABYTE,
    show_default=True,
    envvar=MEMO_ENV,
    help="Memory for the memo of each XR's last answer, in MiB. Every replica sees every XR, "
    "so it must hold the whole fleet, one entry per XR and pass; past it, the least "
    f"recently called XRs are composed afresh (docs/operations.md, Memory). Also {MEMO_ENV}.",
)
def cli(
    *,
    memo_mib: int,
    metrics_address: str,
    health_address: str,
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
    metrics_address = flag_or_environment("metrics_address", metrics_address, METRICS_ENV)
    health_address = flag_or_environment("health_address", health_address, HEALTH_ENV)
    for flag, value in (
        ("--metrics-address", metrics_address),
        ("--health-address", health_address),
    ):
        try:
            if value:
                addresses.split(value)
        except ValueError as error:
            click.echo(f"function: {flag}: {error}", err=True)
            sys.exit(2)
    counted = metrics.Metrics() if metrics_address else None
    if counted is not None:
        try:
            metrics.serve(counted, metrics_address)
        except OSError as error:
            click.echo(f"function: cannot serve metrics on {metrics_address}: {error}", err=True)
            sys.exit(1)
    try:
        # The SDK's cli.run would open a TLS and a plaintext port on the same address when given
        # both; --insecure means plaintext only, as its help text says.
        credentials = (
            None if insecure or not tls_certs_dir else runtime.load_credentials(tls_certs_dir)
        )
        server.serve(
            FunctionRunner(log_calls=debug, metrics=counted, memo=Memo(memo_mib * MEGABYTE)),
            address,
            creds=credentials,
            options=options,
            health_address=health_address or None,
        )
    except server.ProbePortError as error:
        click.echo(f"function: {error}", err=True)
        sys.exit(1)
    except Exception as error:  # startup failures: report in one line and exit non-zero
        click.echo(f"function: cannot serve on {address}: {error}", err=True)
        sys.exit(1)


def flag_or_environment(parameter: str, value: str, variable: str) -> str:
    """The flag's value when given, else the variable's when set (empty too), else the default."""
    source = click.get_current_context().get_parameter_source(parameter)
    if source is click.core.ParameterSource.DEFAULT:
        return os.environ.get(variable, value)
    return value


if __name__ == "__main__":
    cli()
