"""The gRPC servicer: malformed requests and internal faults still get one clear answer."""

from __future__ import annotations

import io
from typing import Any

import pytest
import structlog
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function import runner
from harness.fixtures import coreweave_xr, request, results, run

COMPOSED = (
    "this function composes CoreWeaveCluster (infrastructure.modelplane.ai/v1alpha1), "
    "CivoCluster (infrastructure.modelplane.ai/v1alpha1)"
)
COREWEAVE_CORE = ("infrastructure.modelplane.ai/v1alpha1", "CoreWeaveCluster")


def xr_without(*path: str) -> dict[str, Any]:
    xr = coreweave_xr()
    parent = xr
    for part in path[:-1]:
        parent = parent[part]
    del parent[path[-1]]
    return xr


@pytest.mark.parametrize(
    ("req", "message"),
    [
        pytest.param(
            fnv1.RunFunctionRequest(),
            f'unsupported composite resource "<none>" (<none>); {COMPOSED}',
            id="no-observed-composite",
        ),
        pytest.param(
            request({**coreweave_xr(), "kind": "AWSCluster"}),
            'unsupported composite resource "AWSCluster" (infrastructure.modelplane.ai/v1alpha1); '
            + COMPOSED,
            id="unknown-kind",
        ),
        pytest.param(
            request({**coreweave_xr(), "apiVersion": "infrastructure.modelplane.ai/v2"}),
            'unsupported composite resource "CoreWeaveCluster" (infrastructure.modelplane.ai/v2); '
            + COMPOSED,
            id="unknown-version",
        ),
        pytest.param(
            request(xr_without("metadata", "namespace")),
            "invalid CoreWeaveCluster (1 problem): metadata.namespace: required",
            id="no-namespace",
        ),
        pytest.param(
            request({**coreweave_xr(), "metadata": {}}),
            "invalid CoreWeaveCluster (2 problems): metadata.name: required; "
            "metadata.namespace: required",
            id="no-name-or-namespace",
        ),
        pytest.param(
            request(xr_without("spec")),
            "invalid CoreWeaveCluster spec (1 problem): spec: must be an object",
            id="no-spec",
        ),
    ],
)
def test_malformed_requests_get_one_fatal(req: fnv1.RunFunctionRequest, message: str) -> None:
    rsp = run(req)
    assert results(rsp) == [("Fatal", message)]
    assert len(rsp.desired.resources) == 0


def test_internal_fault_is_a_fatal_without_request_content(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> Any:
        raise KeyError("CW-SECRET-must-not-leak")

    monkeypatch.setitem(runner.CORES, COREWEAVE_CORE, broken)
    rsp = run(request(coreweave_xr()))
    assert results(rsp) == [
        ("Fatal", "internal error (KeyError) while composing; the function's logs have the details")
    ]
    assert "CW-SECRET" not in str(rsp)


def test_response_keeps_tag_and_ttl_and_earlier_steps_desired_state() -> None:
    req = request(coreweave_xr())
    req.desired.resources["from-an-earlier-step"].resource.update(
        {"apiVersion": "v1", "kind": "ConfigMap"}
    )
    rsp = run(req)
    assert rsp.meta.tag == "test"
    assert rsp.meta.ttl.seconds == 60
    assert "from-an-earlier-step" in rsp.desired.resources
    assert {"vpc", "cks-cluster", "usage-vpc-by-cluster"} <= set(rsp.desired.resources)


@pytest.mark.parametrize("level", [logging.Level.INFO, logging.Level.DEBUG], ids=["info", "debug"])
def test_internal_fault_log_names_the_place_but_no_content(
    monkeypatch: pytest.MonkeyPatch, level: logging.Level
) -> None:
    """The SDK's JSON logger prints every frame's locals with a traceback; a token held in a
    local variable or quoted by the exception must still not reach the log."""

    def broken(*_: Any) -> Any:
        token = "CW-SECRET-held-in-a-local"
        raise ValueError(f"cannot use {token}")

    monkeypatch.setitem(runner.CORES, COREWEAVE_CORE, broken)
    buffer = io.StringIO()
    structlog.reset_defaults()  # an earlier INFO configuration leaves a level filter behind
    logging.configure(level)
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=buffer))
    try:
        run(request(coreweave_xr()))
    finally:
        structlog.reset_defaults()
        logging.configure(logging.Level.DISABLED)
    logged = buffer.getvalue()
    assert "composition failed" in logged
    assert "ValueError" in logged
    assert "in broken" in logged, "the failing frame is named"
    assert "CW-SECRET" not in logged
