"""The version matrix (hack/controlplane/versions.env), what the e2e suite expects of each engine,
and the package's declared Crossplane range, checked without a control plane."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
import yaml

from harness.e2e.binaries import etcd_for, locate, release_order
from harness.e2e.calls import Call, Reconciles, read_reconciles, reconciles_of
from harness.e2e.engine import Engine, engines
from harness.e2e.kinds import CIVO_CLUSTER_XR, COREWEAVE_CLUSTER_XR
from harness.e2e.shards import EVERY_ENGINE_MODULES, SHARDS, shard_of, shard_of_test, shards
from harness.example_sets import ROOT


def test_the_matrix_runs_the_newest_first_modelplanes_next_and_keeps_the_oldest() -> None:
    """Each row is what runs together: the newest of each that builds, then Modelplane's
    Crossplane and provider-kubernetes, then the oldest this function supports, on the
    Kubernetes before."""
    matrix = engines()
    assert [e.test_id for e in matrix] == [
        "crossplane-v2.4.0+kubernetes-v1.37.2+provider-kubernetes-v1.3.1+provider-helm-v1.3.0",
        "crossplane-v2.3.4+kubernetes-v1.37.2+provider-kubernetes-v1.3.0+provider-helm-v1.3.0",
        "crossplane-v2.1.0+kubernetes-v1.36.5+provider-kubernetes-v1.2.1+provider-helm-v1.3.0",
    ]
    assert [e.primary for e in matrix] == [True, False, False]
    assert [locate(e.row).kubectl for e in matrix] == [locate(matrix[0].row).kubectl] * 3
    assert locate(matrix[2].row).kube_apiserver.parent.name == "kube-v1.36.5"
    assert locate(matrix[1].row).provider_kubernetes.parent.name == "provider-kubernetes-v1.3.0"
    # Each Kubernetes on the etcd its kube-apiserver is built and tested with.
    etcds = [locate(e.row).etcd.parent.name for e in matrix]
    assert etcds == ["etcd-v3.7.0", "etcd-v3.7.0", "etcd-v3.6.8"]


def test_a_kubernetes_without_its_etcd_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=re.escape("names no etcd for Kubernetes v1.35.0")):
        etcd_for("v1.35.0")


@pytest.mark.parametrize(
    ("rows_", "message"),
    [
        ("", "MATRIX_ROWS lists no row"),
        ("v2.4.0/v1.37.2", "row 'v2.4.0/v1.37.2' is not CROSSPLANE/KUBERNETES/PROVIDER_KUBERNETES"),
        ("v2.4.0//v1.3.1", "row 'v2.4.0//v1.3.1' is not CROSSPLANE/KUBERNETES/PROVIDER_KUBERNETES"),
    ],
)
def test_a_malformed_row_is_refused_naming_it(
    rows_: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MATRIX_ROWS", rows_ or ",")
    with pytest.raises(ValueError, match=re.escape(message)):
        engines()


def test_the_package_admits_every_engine_and_starts_at_the_oldest() -> None:
    meta = yaml.safe_load((ROOT / "package" / "crossplane.yaml").read_text())
    constraint = meta["spec"]["crossplane"]["version"]
    match = re.fullmatch(r">=(v\d+\.\d+\.\d+)", constraint)
    assert match, f"spec.crossplane.version {constraint!r} is not a lower bound"
    oldest = min((e.version for e in engines()), key=release_order)
    assert match.group(1) == oldest, "the declared oldest version is not the one e2e proves"


def test_every_engine_has_its_shards_and_every_shard_a_worker() -> None:
    """Each engine's modules split into shards, a worker and control plane each."""
    matrix = engines()
    primary, v2_3, v2_1 = matrix
    assert shards(matrix) == [
        "crossplane-v2.4.0-faults",
        "crossplane-v2.4.0-coreweave",
        "crossplane-v2.4.0-cluster-autoscaler",
        "crossplane-v2.4.0-pools-consumer-upgrade",
        "crossplane-v2.4.0-install",
        "crossplane-v2.4.0-uninstall",
        "crossplane-v2.4.0-rest",
        "crossplane-v2.3.4-rest",
        "crossplane-v2.3.4-pools-consumer-upgrade",
        "crossplane-v2.3.4-coreweave",
        "crossplane-v2.1.0-rest",
        "crossplane-v2.1.0-pools-consumer-upgrade",
        "crossplane-v2.1.0-coreweave",
    ]
    # The autoscaled pools a shard of their own on every engine: on an older one they take
    # 4-6 minutes (Crossplane's poll), which the rest shard could not take without becoming
    # the longest (docs/testing.md).
    assert shard_of("test_autoscaled_pools", v2_3) == "crossplane-v2.3.4-pools-consumer-upgrade"
    # The consumer beside them: in the rest shard it made the older engines' rest shards the
    # suite's longest.
    assert shard_of("test_consumer", v2_1) == "crossplane-v2.1.0-pools-consumer-upgrade"
    assert shard_of("test_provider_upgrade", primary) == "crossplane-v2.4.0-install"
    assert shard_of("test_faults", primary) == "crossplane-v2.4.0-faults"
    assert shard_of("test_autoscaled_pools", primary) == "crossplane-v2.4.0-pools-consumer-upgrade"
    assert shard_of("test_civo", primary) == "crossplane-v2.4.0-rest"
    assert shard_of("test_coreweave", v2_3) == "crossplane-v2.3.4-coreweave"
    assert shard_of("test_package", v2_1) == "crossplane-v2.1.0-rest"
    # A control plane of its own, started inside the rest shard's worker: a worker more would
    # start one more control plane at the moment all the others start.
    assert shard_of("test_configuration", v2_3) == "crossplane-v2.3.4-rest"
    # Each on a control plane of its own, in one worker.
    for module in ("test_migration", "test_rbac", "test_readme"):
        assert shard_of(module, primary) == "crossplane-v2.4.0-install"
    # What xdist's scheduler sees: node IDs only.
    node_shards = {
        f"tests/e2e/test_faults.py::test_x[{primary.test_id}]": "crossplane-v2.4.0-faults",
        f"tests/e2e/test_autoscaled_pools.py::test_y[{primary.test_id}-ssa]": (
            "crossplane-v2.4.0-pools-consumer-upgrade"
        ),
        f"tests/e2e/test_civo.py::test_z[{v2_1.test_id}]": "crossplane-v2.1.0-rest",
        "tests/e2e/test_civo.py::test_plain": "tests/e2e/test_civo.py::test_plain",
    }
    assert {node: shard_of_test(node, matrix) for node in node_shards} == node_shards


def test_the_shard_tables_name_the_suites_modules() -> None:
    """A renamed module or a new every_engine test must not fall out of the worker count."""
    modules = {path.stem: path.read_text() for path in (ROOT / "tests" / "e2e").glob("test_*.py")}
    assert set(SHARDS) <= set(modules), "a shard names a module that does not exist"
    marked = {name for name, text in modules.items() if "@pytest.mark.every_engine" in text}
    assert marked == set(EVERY_ENGINE_MODULES)


@pytest.mark.parametrize(
    ("version", "installs_crds", "seeds", "with_required", "without_required"),
    [
        ("v2.1.0", True, False, 2, 1),
        ("v2.2.0", False, False, 2, 1),
        ("v2.3.4", False, False, 2, 1),
        ("v2.4.0", False, True, 1, 1),
        ("v2.10.0", False, True, 1, 1),
    ],
)
def test_what_each_engine_is_expected_to_do(
    version: str, installs_crds: bool, seeds: bool, with_required: int, without_required: int
) -> None:
    engine = Engine(version, primary=False)
    assert engine.label == f"crossplane-{version}"
    assert engine.installs_function_package_crds is installs_crds
    assert engine.seeds_required_resources is seeds
    assert engine.calls_per_converged_reconcile(requires_resources=True) == with_required
    assert engine.calls_per_converged_reconcile(requires_resources=False) == without_required


def test_an_engine_version_must_be_a_release() -> None:
    with pytest.raises(ValueError, match=re.escape("not a Crossplane release version: 'v2.4'")):
        _ = Engine("v2.4", primary=True).seeds_required_resources


XR = "CoreWeaveCluster/ml-team/a"
START = datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.UTC)


def _at(second: float) -> datetime.datetime:
    return START + datetime.timedelta(seconds=second)


def _crossplane_line(second: float, controller: str, namespace: str, name: str) -> str:
    at = _at(second).strftime("%Y-%m-%dT%H:%M:%SZ")
    request = f'{{"name":"{name}","namespace":"{namespace}"}}'
    return f'{at}\tDEBUG\tcrossplane\tReconciling\t{{"controller": "{controller}", "request": {request}}}'


def test_reconciles_are_read_from_crossplanes_debug_log(tmp_path: Path) -> None:
    coreweave = "composite/coreweaveclusters.infrastructure.modelplane.ai"
    civo = "composite/civoclusters.infrastructure.modelplane.ai"
    log = tmp_path / "crossplane.log"
    lines = [
        _crossplane_line(1, coreweave, "ml-team", "a"),
        _crossplane_line(2, civo, "ml-team", "a"),
        _crossplane_line(3, coreweave, "other", "a"),
        _at(4).isoformat() + "\tDEBUG\tcrossplane\tSuccessfully composed resources\t{}",
        _crossplane_line(5, coreweave, "ml-team", "a"),
    ]
    log.write_text("\n".join(lines) + "\n")
    assert read_reconciles(log, COREWEAVE_CLUSTER_XR, "ml-team", "a") == [_at(1), _at(5)]
    assert read_reconciles(log, CIVO_CLUSTER_XR, "ml-team", "a") == [_at(2)]


def _call(second: float, memoised: bool = True, xr: str = XR) -> Call:
    return Call(at=_at(second), xr=xr, required=(), memoised=memoised)


@pytest.mark.parametrize(
    ("begun", "calls", "expected"),
    [
        # v2.1: two calls per reconcile; the calls of a reconcile begun before the window
        # (second 9) do not count.
        (
            [9, 20, 80],
            [_call(9.1), _call(9.2), _call(20.1), _call(20.2), _call(80.1), _call(80.2)],
            Reconciles(groups=((1, 2), (1, 2)), memoised=4),
        ),
        # v2.4: one call each; another XR's calls and a composed-afresh call are told apart.
        (
            [20, 80],
            [_call(20.1, memoised=False), _call(50, xr="CivoCluster/ml-team/a"), _call(80.1)],
            Reconciles(groups=((1, 1), (1, 1)), memoised=1),
        ),
        # A reconcile that made no call (the response cache answered it) counts as one with none.
        ([20, 40], [_call(40.1)], Reconciles(groups=((1, 0), (1, 1)), memoised=1)),
        # Crossplane logs whole seconds: two reconciles begun in one second count together.
        (
            [20.2, 20.7, 60],
            [_call(20.3), _call(20.8), _call(60.1)],
            Reconciles(groups=((2, 2), (1, 1)), memoised=3),
        ),
    ],
)
def test_calls_belong_to_the_reconciles_that_began_before_them(
    begun: list[float], calls: list[Call], expected: Reconciles
) -> None:
    found = reconciles_of(calls, [_at(s) for s in begun], XR, _at(10), _at(85))
    assert found == expected
    assert str(found).startswith(f"{expected.calls} calls in {expected.reconciles} reconciles")


def test_a_call_in_the_second_the_next_reconcile_was_logged_may_be_the_previous_ones() -> None:
    """Crossplane logs whole seconds: a reconcile logged at 20 that began at 20.7 comes after a
    call at 20.3 that ended the reconcile logged at 19. Seen under load on v2.1.0: two
    reconciles read as 0 and 2 calls, one each in truth."""
    found = reconciles_of([_call(20.3), _call(21.4)], [_at(19.5), _at(20.7)], XR, _at(10), _at(85))
    assert found == Reconciles(groups=((1, 0), (1, 2)), memoised=2)
    assert found.early == (0, 1)
    assert found.every_reconcile_took(1)
    assert not found.every_reconcile_took(2)


@pytest.mark.parametrize(
    ("groups", "early", "calls", "took"),
    [
        # Without early calls, each group's calls are its own.
        (((1, 2), (1, 2)), (), 2, True),
        (((1, 1), (1, 2)), (), 1, False),
        (((2, 2), (1, 1)), (), 1, True),
        # Only a call of the next reconcile's own second can be the previous reconcile's.
        (((1, 0), (1, 2)), (0, 0), 1, False),
        (((1, 0), (1, 2)), (0, 2), 1, True),
        # A call before the window, logged in the first reconcile's second.
        (((1, 2), (1, 1)), (1, 0), 1, True),
        (((1, 3), (1, 1)), (1, 0), 1, False),
        # The last reconcile's calls cannot be lent forward.
        (((1, 1), (1, 0)), (0, 0), 1, False),
        # Two calls per reconcile (v2.1 CoreWeave), the second group's first call moved back.
        (((1, 1), (1, 3)), (0, 1), 2, True),
    ],
)
def test_every_reconcile_took(
    groups: tuple[tuple[int, int], ...], early: tuple[int, ...], calls: int, took: bool
) -> None:
    assert Reconciles(groups=groups, memoised=0, early=early).every_reconcile_took(calls) is took
