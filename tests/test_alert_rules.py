"""deploy/monitoring.yaml's alerts, parsed and run by the real promtool.

tests/test_deploy.py proves each alert reads series that exist; only Prometheus's own rule
loader and PromQL engine prove the expressions and templates valid and the alerts firing when
they should. Each case feeds promtool's rule unit tests the scrapes a Prometheus would store
(one sample per scrape interval of the PodMonitor, label values from function/metrics.py and
Crossplane's function runner), evaluates one alert at one instant, and expects exactly the
alerts firing then, with their labels and annotation text. promtool comes from
hack/controlplane/build-promtool.sh, which `make test` runs.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.utils import floatToGoString

from function.metrics import CALL_SECONDS_BUCKETS
from hack.configurations import packaged_function_name
from harness.e2e.binaries import REPO, cache_root
from tests.test_deploy import documents

BUILD_SCRIPT = REPO / "hack" / "controlplane" / "build-promtool.sh"
# promtool answers in well under a second; a hang is a fault to report, not to wait out.
PROMTOOL_TIMEOUT_SECONDS = 60
# How often Prometheus evaluates the group: its default, which the PrometheusRule keeps.
EVALUATION_INTERVAL = "1m"
# A process start time as the function's process collector reports it (any past instant).
PROCESS_START = 1_764_547_200.0
# promtool's clock starts at 0: a replica started an hour before the first scrape, old for every
# evaluation; one started at minute 10 is young until minute 25.
OLD_PROCESS_START = -3600.0
YOUNG_PROCESS_START = 600.0
# Crossplane's gRPC method for every call it makes to a function.
RUN_FUNCTION = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"


MONITORING_DOCS = documents("deploy/monitoring.yaml")
POD_MONITOR = MONITORING_DOCS["PodMonitor"]["spec"]
RULE_GROUPS = MONITORING_DOCS["PrometheusRule"]["spec"]["groups"]
RULES = {rule["alert"]: rule for group in RULE_GROUPS for rule in group["rules"]}
# The job label the PodMonitor's relabeling puts on the function's series.
[JOB] = {r["replacement"] for r in POD_MONITOR["podMetricsEndpoints"][0]["relabelings"]}
# Crossplane labels its calls with the Function's name: a hand install's, or the name the
# Configuration packages install it under.
FUNCTION_NAME = documents("examples/function.yaml")["Function"]["metadata"]["name"]
DEPENDENCY_FUNCTION_NAME = packaged_function_name()
SCRAPE_SECONDS = int(POD_MONITOR["podMetricsEndpoints"][0]["interval"].removesuffix("s"))
SCRAPES_PER_MINUTE = 60 // SCRAPE_SECONDS


@pytest.fixture(scope="module")
def promtool_binary() -> Path:
    """The promtool hack/controlplane/build-promtool.sh builds: at its PROMETHEUS_VERSION
    default, which an environment variable of that name overrides there as here."""
    default = re.search(r"\$\{PROMETHEUS_VERSION:-(v[^}]+)\}", BUILD_SCRIPT.read_text())
    assert default, f"{BUILD_SCRIPT} names no default PROMETHEUS_VERSION"
    version = os.environ.get("PROMETHEUS_VERSION") or default.group(1)
    binary = cache_root() / "bin" / f"promtool-{version}" / "promtool"
    if not binary.exists():
        pytest.skip(
            f"promtool is not built at {binary}: run `bash {BUILD_SCRIPT.relative_to(REPO)}` "
            "(`make test` runs it; it needs Go)"
        )
    return binary


@pytest.fixture(scope="module")
def rule_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The PrometheusRule's groups as the rule file the Prometheus Operator generates from it."""
    path = tmp_path_factory.mktemp("rules") / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": RULE_GROUPS}, sort_keys=False))
    return path


def run_promtool(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(binary), *args]
    return subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=PROMTOOL_TIMEOUT_SECONDS
    )


def explained(result: subprocess.CompletedProcess[str]) -> str:
    return f"$ {shlex.join(result.args)}\n{result.stdout}{result.stderr}"


# --- Input series, in promtool's expanding notation, one sample per scrape -------------------


def labelled(name: str, **labels: str) -> str:
    return name + "{" + ",".join(f'{key}="{value}"' for key, value in labels.items()) + "}"


def function_series(name: str, **labels: str) -> str:
    """A series of the function's, as the PodMonitor stores it (pod: the replica's Pod)."""
    return labelled(name, job=JOB, pod=labels.pop("pod", "function-a"), **labels)


def crossplane_calls(function_name: str, grpc_code: str) -> str:
    """Crossplane core's count of its calls to a function, labelled as its runner labels them."""
    return labelled(
        "function_run_function_response_total",
        job="crossplane",
        function_name=function_name,
        function_package=f"xpkg.crossplane.io/example/{function_name}:v0.1.0",
        grpc_target=f"dns:///{function_name}.crossplane-system:9443",
        grpc_method=RUN_FUNCTION,
        grpc_code=grpc_code,
        # An answer that never came carries no result: Crossplane counts it "Normal".
        result_severity="Normal",
    )


def rising(per_minute: float, minutes: int, start: float = 0) -> str:
    """A counter gaining per_minute for that many minutes (its first sample is start)."""
    return f"{start:g}+{per_minute / SCRAPES_PER_MINUTE:g}x{minutes * SCRAPES_PER_MINUTE}"


def steady(value: float, minutes: int) -> str:
    """The same value on every scrape for that many minutes (one sample at each end)."""
    return f"{value:g}x{minutes * SCRAPES_PER_MINUTE}"


def not_yet_exported(minutes: int) -> str:
    """No sample for that many minutes: the scrape does not carry the series yet (a labelled
    counter the client creates with its first event)."""
    return f"_x{minutes * SCRAPES_PER_MINUTE}"


# The target is gone: Prometheus ends its series with a staleness marker at the failed scrape.
TARGET_GONE = "stale"


def then(*segments: str) -> str:
    return " ".join(segments)


def call_seconds(kind: str, minutes: int, calls_per_minute: dict[float, float]) -> dict[str, str]:
    """inference_clusters_call_seconds of one kind: calls_per_minute maps how long a call takes
    to how many such calls arrive a minute, sorted into the function's own buckets."""
    name = "inference_clusters_call_seconds"
    series = {}
    for bound in (*CALL_SECONDS_BUCKETS, math.inf):
        within = sum(count for seconds, count in calls_per_minute.items() if seconds <= bound)
        # prometheus_client's utils carry no annotations (function/metrics.py calls it so too).
        le = floatToGoString(bound)  # type: ignore[no-untyped-call]
        series[function_series(f"{name}_bucket", kind=kind, le=le)] = rising(within, minutes)
    total = sum(calls_per_minute.values())
    spent = sum(seconds * count for seconds, count in calls_per_minute.items())
    series[function_series(f"{name}_count", kind=kind)] = rising(total, minutes)
    series[function_series(f"{name}_sum", kind=kind)] = rising(spent, minutes)
    return series


def calls(kind: str, minutes: int, per_minute: dict[str, float]) -> dict[str, str]:
    """inference_clusters_calls_total of one kind, by result; every result exists from the
    start (function/metrics.py creates them at zero)."""
    return {
        function_series("inference_clusters_calls_total", kind=kind, result=result): rising(
            per_minute.get(result, 0), minutes
        )
        for result in ("none", "normal", "warning", "fatal")
    }


def internal_errors(
    error_type: str,
    values: str,
    pod: str = "function-a",
    process: str = steady(OLD_PROCESS_START, 60),
) -> dict[str, str]:
    """A replica's count of one error type, with the start time its process reports beside
    it (the alert asks how long Prometheus has known the replica)."""
    name = "inference_clusters_internal_errors_total"
    return {
        function_series(name, kind="CivoCluster", error_type=error_type, pod=pod): values,
        **replica(pod, process),
    }


def replica(pod: str, values: str, job: str = JOB) -> dict[str, str]:
    return {labelled("process_start_time_seconds", job=job, pod=pod): values}


def replicas(a: str, b: str, job: str = JOB, prefix: str = "function") -> dict[str, str]:
    return {**replica(f"{prefix}-a", a, job), **replica(f"{prefix}-b", b, job)}


# --- The cases --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Firing:
    """One alert firing: all its labels (alertname aside) and its templated summary."""

    labels: dict[str, str]
    summary: str


@dataclass(frozen=True)
class Case:
    alert: str
    # What the scrapes show, and when: the test's id.
    situation: str
    series: dict[str, str]
    # When the alert is evaluated, in minutes from the first scrape.
    eval_minute: int = 30
    # Exactly the alerts firing at eval_minute (pending ones are not firing); none: quiet.
    firing: tuple[Firing, ...] = ()


def civo_warning(summary: str) -> tuple[Firing, ...]:
    return (Firing({"kind": "CivoCluster", "severity": "warning"}, summary),)


# A type's first error creates its series, at 1, at minute 20; none follow.
FIRST_KEY_ERROR_AT_MINUTE_20 = internal_errors(
    "KeyError", then(not_yet_exported(20), steady(1, 40))
)

# A replica started at minute 10 counts its first error at minute 15; none follow.
NEW_REPLICA_FIRST_ERROR_AT_MINUTE_15 = internal_errors(
    "KeyError",
    then(not_yet_exported(15), steady(1, 25)),
    pod="function-b",
    process=then(not_yet_exported(10), steady(YOUNG_PROCESS_START, 30)),
)


def deadline_exceeded_from_minute_5(function_name: str) -> dict[str, str]:
    """Crossplane's calls to the function named so: OK throughout, and from minute 5 on a few
    each minute end in DeadlineExceeded."""
    return {
        crossplane_calls(function_name, "OK"): rising(10, 40),
        crossplane_calls(function_name, "DeadlineExceeded"): then(
            not_yet_exported(5), rising(2, 35, start=1)
        ),
    }


# What the alerts several cases expect to fire say.
DEADLINE_EXCEEDED_FIRES = (
    Firing(
        {"grpc_code": "DeadlineExceeded", "severity": "warning"},
        "Crossplane's calls to function-inference-clusters end in DeadlineExceeded",
    ),
)
TOO_FEW_REPLICAS_FIRES = (
    Firing(
        {"job": JOB, "severity": "warning"},
        "fewer than 2 replicas of function-inference-clusters are serving metrics",
    ),
)

FATAL = "InferenceClustersFatalAnswers"
SLOW = "InferenceClustersSlowCalls"
INTERNAL = "InferenceClustersInternalErrors"
REPLICAS = "InferenceClustersReplicaDown"
FAILING = "InferenceClustersCallsFailing"


def key_error_fires(situation: str, series: dict[str, str], eval_minute: int) -> Case:
    """An InternalErrors case whose alert fires for CivoCluster's KeyError."""
    firing = Firing(
        {"kind": "CivoCluster", "error_type": "KeyError", "severity": "critical"},
        "CivoCluster: the function failed internally (KeyError)",
    )
    return Case(INTERNAL, situation, series, eval_minute, (firing,))


# Each minute the first error of a new type (FIRST_KEY_ERROR_AT_MINUTE_20) fires at, as its case
# names it. increase() over a series that appeared at 1 sees no increase: only the `unless offset`
# half can catch it (test_increase_alone_misses_a_first_error proves it at each of these minutes).
FIRST_ERROR_FIRES_AT = {
    20: "at the scrape that first shows it",
    21: "a minute later",
    34: "14 min later",
}

CASES = [
    Case(
        FATAL,
        "a fifth of CivoCluster answers FATAL for 30 min, CoreWeaveCluster none",
        {
            **calls("CivoCluster", 40, {"normal": 8, "fatal": 2}),
            **calls("CoreWeaveCluster", 40, {"normal": 10}),
        },
        firing=civo_warning("CivoCluster: 20% of the function's answers are FATAL"),
    ),
    Case(
        FATAL,
        "a twentieth of answers FATAL, under the 10% threshold",
        calls("CivoCluster", 40, {"normal": 19, "fatal": 1}),
    ),
    Case(
        FATAL,
        "a fifth of answers FATAL for only 12 min, under `for: 15m`",
        calls("CivoCluster", 40, {"normal": 8, "fatal": 2}),
        eval_minute=12,
    ),
    Case(FATAL, "no calls at all (0/0 is no ratio)", calls("CivoCluster", 40, {})),
    Case(
        SLOW,
        "3 CivoCluster calls in 100 take half a second",
        call_seconds("CivoCluster", 40, {0.002: 97, 0.5: 3}),
        firing=civo_warning("CivoCluster: p99 time in the function is 750ms"),
    ),
    Case(
        SLOW,
        "every call takes 2 s, past the last finite bucket (1 s)",
        call_seconds("CivoCluster", 40, {2.0: 10}),
        firing=civo_warning("CivoCluster: p99 time in the function is 1s"),
    ),
    Case(
        SLOW,
        "every call takes 0.2 s: p99 0.2485 s, under 0.25 s",
        call_seconds("CivoCluster", 40, {0.2: 10}),
    ),
    Case(
        SLOW,
        "one call in 200 takes half a second: p99 stays fast",
        call_seconds("CivoCluster", 40, {0.002: 199, 0.5: 1}),
    ),
    key_error_fires(
        "a known error type occurs again",
        internal_errors("KeyError", then(steady(1, 20), steady(2, 20))),
        eval_minute=25,
    ),
    *(
        key_error_fires(f"first error of a new type, {when}", FIRST_KEY_ERROR_AT_MINUTE_20, minute)
        for minute, when in FIRST_ERROR_FIRES_AT.items()
    ),
    Case(
        INTERNAL,
        "first error of a new type, 15 min later with none since",
        FIRST_KEY_ERROR_AT_MINUTE_20,
        eval_minute=35,
    ),
    key_error_fires(
        "a known type's first error on a second replica",
        {
            **internal_errors("KeyError", steady(5, 40), pod="function-a"),
            **internal_errors(
                "KeyError", then(not_yet_exported(20), steady(1, 20)), pod="function-b"
            ),
        },
        eval_minute=22,
    ),
    Case(
        INTERNAL,
        "old errors, none new for 40 min",
        internal_errors("KeyError", steady(3, 60)),
        eval_minute=40,
    ),
    Case(
        INTERNAL,
        "errors an old replica counted before this Prometheus first scraped it",
        internal_errors("KeyError", steady(3, 30)),
        eval_minute=5,
    ),
    Case(
        INTERNAL,
        "old errors, after a 20 min gap in Prometheus's scrapes",
        internal_errors(
            "KeyError",
            then(steady(3, 10), not_yet_exported(20), steady(3, 20)),
            process=then(
                steady(OLD_PROCESS_START, 10), not_yet_exported(20), steady(OLD_PROCESS_START, 20)
            ),
        ),
        eval_minute=32,
    ),
    key_error_fires(
        "a new replica's first error, 5 min after it started",
        NEW_REPLICA_FIRST_ERROR_AT_MINUTE_15,
        eval_minute=16,
    ),
    key_error_fires(
        "a new replica's first error, 11 min later (the replica 16 min old)",
        NEW_REPLICA_FIRST_ERROR_AT_MINUTE_15,
        eval_minute=26,
    ),
    Case(REPLICAS, "2 replicas", replicas(steady(PROCESS_START, 40), steady(PROCESS_START, 40))),
    Case(
        REPLICAS,
        "1 replica for 30 min",
        replica("function-a", steady(PROCESS_START, 40)),
        firing=TOO_FEW_REPLICAS_FIRES,
    ),
    Case(
        REPLICAS,
        "1 replica for only 5 min, under `for: 10m`",
        replicas(steady(PROCESS_START, 40), then(steady(PROCESS_START, 25), TARGET_GONE)),
    ),
    Case(
        REPLICAS,
        "no replica at all (absent), another job's 2 replicas present",
        replicas(steady(PROCESS_START, 40), steady(PROCESS_START, 40), job="other", prefix="other"),
        eval_minute=15,
        firing=TOO_FEW_REPLICAS_FIRES,
    ),
    Case(
        REPLICAS,
        # Both halves of the rule carry {job}: losing the last replica continues the alert
        # (and its `for` clock) that losing the first began.
        "1 replica from minute 20, none from minute 25: under 2 for 11 min",
        replicas(
            then(steady(PROCESS_START, 25), TARGET_GONE),
            then(steady(PROCESS_START, 20), TARGET_GONE),
        ),
        eval_minute=32,
        firing=TOO_FEW_REPLICAS_FIRES,
    ),
    Case(FAILING, "only OK answers", {crossplane_calls(FUNCTION_NAME, "OK"): rising(10, 40)}),
    Case(
        FAILING,
        "DeadlineExceeded from minute 5 on",
        deadline_exceeded_from_minute_5(FUNCTION_NAME),
        firing=DEADLINE_EXCEEDED_FIRES,
    ),
    Case(
        FAILING,
        "DeadlineExceeded from minute 5 on, the function the Configurations installed",
        deadline_exceeded_from_minute_5(DEPENDENCY_FUNCTION_NAME),
        firing=DEADLINE_EXCEEDED_FIRES,
    ),
    Case(
        FAILING,
        "DeadlineExceeded for 5 min, none for the last 25",
        {
            crossplane_calls(FUNCTION_NAME, "OK"): rising(10, 40),
            crossplane_calls(FUNCTION_NAME, "DeadlineExceeded"): then(
                not_yet_exported(5), rising(2, 5, start=1), steady(11, 30)
            ),
        },
        eval_minute=40,
    ),
    Case(
        FAILING,
        "another function's calls end in Unavailable",
        {
            crossplane_calls(FUNCTION_NAME, "OK"): rising(10, 40),
            crossplane_calls("function-other", "Unavailable"): rising(2, 40),
        },
    ),
]


def static_annotations(alert: str) -> dict[str, str]:
    """The alert's annotations other than its summary: plain text, expected as written."""
    annotations = dict(RULES[alert]["annotations"])
    annotations.pop("summary")
    for name, text in annotations.items():
        assert "{{" not in text, f"{alert}'s {name} is a template: give the case its text"
    return annotations


def promtool_tests(rule_file: Path, series: dict[str, str], **test: Any) -> dict[str, Any]:
    """A promtool rule test file of one test over these series, scraped at the PodMonitor's
    interval; test holds its name and what it evaluates."""
    input_series = [{"series": name, "values": values} for name, values in series.items()]
    one_test = {**test, "interval": f"{SCRAPE_SECONDS}s", "input_series": input_series}
    return {
        "rule_files": [str(rule_file)],
        "evaluation_interval": EVALUATION_INTERVAL,
        "tests": [one_test],
    }


def test_rules_are_valid(promtool_binary: Path, rule_file: Path) -> None:
    result = run_promtool(
        promtool_binary, "check", "rules", "--lint=all", "--lint-fatal", str(rule_file)
    )
    assert result.returncode == 0, explained(result)
    assert result.stdout == f"Checking {rule_file}\n  SUCCESS: {len(RULES)} rules found\n\n"
    assert result.stderr == "", explained(result)


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    assert {case.alert for case in CASES if case.firing} == set(RULES)
    assert {case.alert for case in CASES if not case.firing} == set(RULES)


@pytest.mark.parametrize(
    "case",
    CASES,
    ids=[f"{case.alert.removeprefix('InferenceClusters')}: {case.situation}" for case in CASES],
)
def test_alert(case: Case, promtool_binary: Path, rule_file: Path, tmp_path: Path) -> None:
    """promtool's rule unit test of one case: its series, one alert at one instant."""
    expected = [
        {
            "exp_labels": firing.labels,
            "exp_annotations": {**static_annotations(case.alert), "summary": firing.summary},
        }
        for firing in case.firing
    ]
    unit = promtool_tests(
        rule_file,
        case.series,
        name=case.situation,
        alert_rule_test=[
            {"eval_time": f"{case.eval_minute}m", "alertname": case.alert, "exp_alerts": expected}
        ],
    )
    tests = tmp_path / "tests.yaml"
    tests.write_text(yaml.safe_dump(unit, sort_keys=False))
    result = run_promtool(promtool_binary, "test", "rules", str(tests))
    assert result.returncode == 0, explained(result)
    assert "SUCCESS" in result.stdout, explained(result)


def test_increase_alone_misses_a_first_error(
    promtool_binary: Path, rule_file: Path, tmp_path: Path
) -> None:
    """Why InferenceClustersInternalErrors has its `unless ... offset 15m` half: increase(), its
    first half, sees nothing of a series that a type's first error creates."""
    increase_half = (
        "sum by (kind, error_type) (increase("
        f'inference_clusters_internal_errors_total{{job="{JOB}"}}[15m])) > 0'
    )
    assert increase_half in RULES[INTERNAL]["expr"]
    tests = tmp_path / "tests.yaml"
    unit = promtool_tests(
        rule_file,
        FIRST_KEY_ERROR_AT_MINUTE_20,
        promql_expr_test=[
            {"expr": increase_half, "eval_time": f"{minute}m", "exp_samples": []}
            for minute in FIRST_ERROR_FIRES_AT
        ],
    )
    tests.write_text(yaml.safe_dump(unit, sort_keys=False))
    result = run_promtool(promtool_binary, "test", "rules", str(tests))
    assert result.returncode == 0, explained(result)
