"""The benchmark measures converged reconciles: its requests (hack/bench/scenarios.py) must
compose exactly what a converged XR composes, or `make bench` stops at its start (as it did
when a Usage was retired and nothing ran the bench)."""

from __future__ import annotations

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from hack.bench.scenarios import build_scenarios, next_n, runner_response
from harness.fixtures import desired, results

SCENARIOS = build_scenarios(2)


@pytest.mark.parametrize(
    ("label", "composed"),
    [
        # vpc, cks-cluster, 2 Usages, kubeconfig, kubernetes-providerconfig, system pool,
        # shared-vast observer, StorageClass clone, a pool each (5) and a settings Object per
        # autoscaled pool (3).
        ("CoreWeaveCluster", 21),
        # network, firewall, cluster, 2 Usages, helm ProviderConfig, the autoscaler, and a
        # NodePool per pool but the inline one (7).
        ("CivoCluster", 14),
    ],
)
def test_each_bench_request_composes_a_converged_xr(label: str, composed: int) -> None:
    (scenario,) = [s for s in SCENARIOS if s.kind == label]
    assert scenario.expected == composed
    for member in range(scenario.members):
        request = scenario.call(member, next_n())
        rsp = runner_response(fnv1.RunFunctionRequest.FromString(request))
        assert len(desired(rsp)) == composed
        assert [severity for severity, _ in results(rsp)] == []
