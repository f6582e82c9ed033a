"""The README's install and first clusters, run as written on a fresh control plane.

Every `sh` block of the README's "Install" and "A first cluster of each kind" sections runs in
order with bash, with the real kubectl (the primary row's, built beside its API server) and the
real `crossplane` CLI (crank) on the PATH, against a control plane that has Crossplane, the fake
clouds and the provider runtimes and nothing else: no function, no APIs, no credentials. The
only edits are the README's own placeholders, each replaced by the suite's value: the registry
(the suite's, at 127.0.0.1), the CoreWeave org token (the fake cloud's) and the Civo API key.

While the commands run, the suite plays the package runtime for what they install (the
providers' and the function's revisions, the function served from the working tree), and a proxy
stands in for the internet for the one public host the packaged Civo Composition reaches:
https://kubernetes.github.io/autoscaler, the cluster-autoscaler chart (harness/e2e/proxy.py).
Asserted: every block succeeds, both API-reference XRs are Ready through the Configurations'
Compositions, `status.secrets` names the kubeconfig Secret that the last command prints, and the
autoscaler chart came from the public repository's stand-in.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from harness.doc_commands import README, SECTIONS, filled, sh_blocks
from harness.e2e import kinds
from harness.e2e.binaries import REPO
from harness.e2e.engine import Engine
from harness.e2e.packages import brought_by_configurations, report_package_runtimes, serve_providers
from harness.e2e.stages import CONVERGE_SECONDS, wait_ready
from harness.e2e.suite import SHARED_CRDS, Suite
from harness.e2e.user_cli import run_as_user, user_environment
from tests.e2e.conftest import require_packages

# The API reference's examples, as the README applies them.
XRS = (
    (kinds.COREWEAVE_CLUSTER_XR, "inference-us-east-04"),
    (kinds.CIVO_CLUSTER_XR, "inference-nyc1"),
)
XR_NAMESPACE = "platform"
# What the commands may take: pushing three packages, installing seven, bringing two clusters up.
SESSION_SECONDS = 2 * CONVERGE_SECONDS
# The line the test has the shell print after each block.
BLOCK_DONE = "@@ block done at"


def session(blocks: list[str]) -> str:
    """The blocks as one shell session, as a user pastes them into one terminal (a variable set
    in one is used in the next), each followed by a line saying when it finished."""
    # The bare echo ends a last line printed without a newline (kubectl's jsonpath output).
    return "".join(f'{block}\necho\necho "{BLOCK_DONE} $(date +%s.%N)"\n' for block in blocks)


def test_the_readme_installs_and_brings_up_a_cluster_of_each_kind(
    fresh_suite: Suite, engine: Engine, summary: list[str], tmp_path: Path
) -> None:
    suite = fresh_suite
    require_packages()
    # What the public registries serve: the providers' packages (the README has users push
    # only this project's).
    serve_providers(suite.plane, SHARED_CRDS)
    # The function process a runtime would start once its revision exists; the revision is
    # pointed at it as it appears.
    suite.runtime.start_serving()
    env = user_environment(suite.plane, tmp_path)
    registry = f"127.0.0.1:{suite.plane.registry_port}/modelplane"
    brought = brought_by_configurations(REPO)
    blocks = [
        filled(block, registry, suite.plane.org_token)
        for section in SECTIONS
        for block in sh_blocks(README.read_text(), section)
    ]
    started = time.time()
    output = run_as_user(
        session(blocks),
        env,
        SESSION_SECONDS,
        # What the commands install runs as a package runtime would have it.
        meanwhile=lambda: report_package_runtimes(suite.plane, brought, suite.runtime.endpoint),
    )
    finished = [
        float(line.split()[-1]) for line in output.splitlines() if line.startswith(BLOCK_DONE)
    ]
    assert len(finished) == len(blocks), output
    took = [b - a for a, b in zip([started, *finished], finished, strict=False)]
    # What the last command printed: status.secrets.
    last = [line for line in output.splitlines() if line.strip()][-2]

    api = suite.plane.api
    for kind, name in XRS:
        xr = wait_ready(api, kind, name, XR_NAMESPACE)
        composition = (xr["spec"]["crossplane"].get("compositionRevisionRef") or {}).get("name")
        revision = api.get(kinds.COMPOSITION_REVISION, composition or "") or {}
        assert [s["functionRef"]["name"] for s in revision["spec"]["pipeline"]] == [
            "modelplane-function-inference-clusters"
        ], f"{name} is not composed through a Configuration's Composition"
    coreweave = api.get(kinds.COREWEAVE_CLUSTER_XR, XRS[0][1], XR_NAMESPACE) or {}
    # The last command prints status.secrets: the kubeconfig Secret, which exists.
    [secret] = coreweave["status"]["secrets"]
    assert json.loads(last) == [secret], output
    assert api.get(kinds.SECRET, secret["name"], XR_NAMESPACE) is not None
    # The Civo Composition installs the autoscaler chart from its public repository.
    assert any(f.endswith(".tgz") for f in suite.public_charts.fetched), suite.public_charts.fetched
    summary.append(
        f"README on {engine.label}: {len(took)} blocks ran as written, taking "
        + ", ".join(f"{t:.0f} s" for t in took)
        + " (push, install until Healthy, credentials, first clusters until Ready)"
    )
