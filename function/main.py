"""The `function` console script: serve the composition function over gRPC."""

import click
from crossplane.function import cli as sdkcli

from function.runner import FunctionRunner


@click.command()
@sdkcli.standard_options
def cli(**options: object) -> None:
    """Serve function-inference-clusters (mTLS unless --insecure)."""
    sdkcli.run(FunctionRunner(), **options)  # type: ignore[arg-type]


if __name__ == "__main__":
    cli()
