"""Two function processes behind one endpoint share Crossplane's calls.

Crossplane (v2.1 to v2.4) dials a function's endpoint with gRPC `round_robin` over every address
its name resolves to, so replicas of the function (examples/function.yaml) share the load. Here the
endpoint's name resolves to two processes; a CivoCluster created while they serve must be
composed by both, and its calls split between them.
"""

from __future__ import annotations

from harness.e2e import kinds
from harness.e2e.calls import read_calls
from harness.e2e.kube import wait_for
from harness.e2e.replicas import replicas
from harness.e2e.stages import CONVERGE_SECONDS
from harness.e2e.suite import Suite
from harness.e2e.xr import example_xr

NAME = "replicas-check"
# Enough calls on each process that round_robin, not chance, put them there. (Not an even
# split: until both connections are ready, round_robin sends every call to the first.)
CALLS_EACH = 3


def test_two_function_processes_share_one_endpoint(suite: Suite) -> None:
    api = suite.plane.api
    xr = example_xr("civo", NAME)
    namespace = xr["metadata"]["namespace"]
    described = f"{kinds.CIVO_CLUSTER_XR.kind}/{namespace}/{NAME}"
    with replicas(suite.runtime, 2) as serving:
        api.apply(kinds.CIVO_CLUSTER_XR, xr)
        try:

            def calls_each() -> list[int] | None:
                counts = [
                    sum(1 for c in read_calls(log) if c.xr == described) for log in serving.logs
                ]
                return counts if min(counts) >= CALLS_EACH else None

            counts = wait_for(
                f"both replicas to serve {CALLS_EACH} calls for {NAME}",
                calls_each,
                CONVERGE_SECONDS,
                interval=1,
            )
            suite.notes.append(f"{NAME}: calls per replica behind {serving.endpoint}: {counts}")
            # Each replica's metrics count the calls it served, not the fleet's: what a
            # PodMonitor sums over the replicas.
            metered = [suite.runtime.assert_operable(name) for name in serving.names]
            assert all(m.calls >= CALLS_EACH for m in metered), metered
        finally:
            api.delete(kinds.CIVO_CLUSTER_XR, NAME, namespace)
            wait_for(
                f"{NAME} to be deleted",
                lambda: api.get(kinds.CIVO_CLUSTER_XR, NAME, namespace) is None,
                CONVERGE_SECONDS,
            )
