"""The docs' bench figures (hack/bench/docs.py): rendered from bench/results.md, never by hand."""

from __future__ import annotations

import pytest

from hack.bench import docs

# A results file as `make bench` writes it, cut to what the docs read: two fleet sizes, two
# concurrent cells (the docs quote the heaviest); every other figure realistic.
RESULTS = """# Benchmark results

- Date: 2026-12-03 10:00 UTC
- Machine: AMD EPYC, 2 cores

## Results

### Serial latency by fleet size (client-side, gRPC unary over loopback)

| XR               | fleet | fn p50 ms | x no-op p50 / p99 | server CPU µs/call fn / no-op | errors |
|------------------|-------|-----------|-------------------|-------------------------------|--------|
| CoreWeaveCluster | 1     | 4.8       | 1.26 / 1.05       | 4475 / 3550                   | 0      |
| CivoCluster      | 1     | 3.1       | 1.32 / 1.29       | 2862 / 2075                   | 0      |
| CoreWeaveCluster | 1024  | 4.2       | 1.09 / 0.99       | 3818 / 3564                   | 0      |
| CivoCluster      | 1024  | 2.8       | 1.34 / 1.02       | 2529 / 1865                   | 0      |

### Memory by fleet size (VmHWM / VmRSS, read after each fleet size)

| after fleet | function MB: peak / now | no-op floor MB: peak / now |
|-------------|-------------------------|----------------------------|
| 1           | 59.6 / 58.3             | 49.4 / 48.1                |
| 1024        | 79.2 / 76.2             | 57.1 / 48.9                |
| then 8,32 concurrent callers | 127.2 / 80.8   | 98.7 / 52.9                |

### Whole converged reconciles through the requirements loop (fleet of 1024)

| XR                                     | calls per reconcile (mean) | function CPU µs per reconcile |
|----------------------------------------|----------------------------|-------------------------------|
| CoreWeaveCluster, Crossplane v2.1-v2.3 | 2.00                       | 6367                          |
| CoreWeaveCluster, Crossplane v2.4      | 1.00                       | 3500                          |
| CivoCluster, Crossplane v2.1-v2.3      | 1.00                       | 2333                          |
| CivoCluster, Crossplane v2.4           | 1.00                       | 2200                          |

### Concurrent callers (8,32 callers sharing one channel per server; fleets of 32, 1024; 3 s per server per XR, after one untimed call per XR)

| XR               | fleet | callers | server      | calls/s | errors | p50 ms | p99 ms | server CPU µs/call | x no-op CPU | x serial CPU | memo hits / calls | calls |
|------------------|-------|---------|-------------|---------|--------|--------|--------|--------------------|-------------|--------------|-------------------|-------|
| CoreWeaveCluster | 32    | 8       | function    | 441     | 0      | 16.94  | 33.78  | 2040               | 0.97        | 0.93         | 1338 / 1338       | 1338  |
| CoreWeaveCluster | 32    | 8       | no-op floor | 431     | 0      | 17.08  | 39.28  | 2105               | 1.00        | 0.94         |                   | 1311  |
| CoreWeaveCluster | 1024  | 32      | function    | 300     | 0      | 20.00  | 41.50  | 3200               | 1.04        | 0.84         | 900 / 900         | 900   |
| CoreWeaveCluster | 1024  | 32      | no-op floor | 311     | 0      | 24.82  | 37.04  | 3082               | 1.00        | 0.87         |                   | 954   |
| CivoCluster      | 1024  | 32      | function    | 600     | 0      | 9.00   | 20.40  | 1500               | 1.18        | 0.59         | 1800 / 1800       | 1800  |
| CivoCluster      | 1024  | 32      | no-op floor | 724     | 0      | 9.95   | 21.19  | 1269               | 1.00        | 0.68         |                   | 2207  |

### Requests (as Crossplane sends them, with metadata noise)

- CoreWeaveCluster: 8 pools, 22 desired resources, request 175.8 KiB
- CivoCluster: 8 pools, 14 desired resources, request 66.3 KiB
"""


def prose(markdown: str) -> str:
    """The text as one line, whatever its wrapping; each wrapped line within the docs' 100
    columns."""
    assert all(len(line) <= 100 for line in markdown.splitlines()), markdown
    return " ".join(markdown.split())


def test_the_sizing_rests_on_the_concurrent_cpu_per_call() -> None:
    sizing = docs.sizing(docs.Figures(RESULTS))
    assert [line[:2] for line in sizing.splitlines()].count("- ") == 3
    # 1e6 / 3200 µs = 312 calls/s per core; x 60 / 1 call x 0.5 = 9 375, to the hundred.
    assert prose(sizing) == (
        "- **One replica** is one Python process composing on one core. Under 32 concurrent "
        "callers over a fleet of 1024 XRs, a converged call cost it 3200 µs of CPU (CoreWeave) "
        "and 1500 µs (Civo) on the bench machine "
        "([`bench/results.md`](../bench/results.md), 2026-12-03): one core answers at most 312 "
        "and 667 calls/s. (The bench measured 300 and 600 calls/s: its callers share the "
        "machine's two cores.) "
        "- **Per XR**: Crossplane reconciles a converged XR about once a minute "
        "(`--poll-interval` defaults to 1m; with realtime compositions, on by default since v2.1, "
        "the XR is requeued after the pipeline's TTL, 60 s here, with ±10 % jitter), plus a "
        "reconcile whenever a composed resource changes. A converged CoreWeaveCluster costs 2 "
        "calls per reconcile before v2.4 and 1 on v2.4; a CivoCluster 1 (see [Supported "
        "versions](versions.md)). "
        "- **So** one replica at half its capacity (headroom for change-driven reconciles, "
        "rollouts and a lost replica) serves about 312 \u00d7 60 / 1 \u00d7 0.5 \u2248 9 400 "
        "CoreWeaveClusters on v2.4 (312 \u00d7 60 / 2 \u00d7 0.5 \u2248 4 700 on "
        "v2.1\u2013v2.3) or 667 \u00d7 60 / 1 \u00d7 0.5 \u2248 20 000 CivoClusters, as "
        "long as every replica's memo holds the whole fleet (next bullet): past it, calls are "
        "composed afresh at several times the cost, which more replicas do not fix, since each "
        "sees every XR; `--memo-mib` does. Two "
        "replicas are for availability; add one per that many XRs. On your own nodes, run "
        "`make bench` there (`bench/README.md`) and read the same figures, or scale these by the "
        "no-op floor's CPU per call, which calibrates a machine."
    )


def test_the_performance_table_has_a_row_per_kind() -> None:
    assert docs.performance_table(docs.Figures(RESULTS)).splitlines() == [
        "| converged 8-pool XR | p50 vs no-op floor at 1 / 1024 XRs | calls per reconcile: "
        "before v2.4 / v2.4 | function CPU per reconcile on v2.4 | 32 callers, 1024 XRs: calls/s, "
        "p99, server CPU per call (x no-op floor) |",
        "|---|---|---|---|---|",
        "| CoreWeaveCluster (175.8 KiB, 22 objects) | 1.26 / 1.09\u00d7 | 2 / 1 "
        "| 3.5 ms | 300 calls/s, p99 42 ms, 3.2 ms (1.0\u00d7) |",
        "| CivoCluster (66.3 KiB, 14 objects) | 1.32 / 1.34\u00d7 | 1 / 1 | 2.2 ms "
        "| 600 calls/s, p99 20 ms, 1.5 ms (1.2\u00d7) |",
        "",
        "From [`bench/results.md`](../bench/results.md) of 2026-12-03. Peak RSS after 1024 XRs "
        "of each kind: 79.2 MB, 127.2 MB once the concurrent callers ran (every request in flight "
        "held at once).",
    ]


def test_the_concurrency_sentence_compares_with_the_floor_and_serial_cost() -> None:
    assert prose(docs.concurrency_sentence(docs.Figures(RESULTS))) == (
        "Under 32 concurrent callers a converged CoreWeave call cost the function 3.2 ms of server "
        "CPU, 1.0 times the no-op floor's (3.1 ms) and 0.8 times its own serial CPU (3.8 ms) "
        "([`bench/results.md`](../bench/results.md), 2026-12-03); "
        "[the sizing](operations.md#sizing) uses the concurrent figures."
    )


def test_the_docs_quote_the_committed_results() -> None:
    """What `make bench` last wrote into the docs is what bench/results.md gives now: a figure
    edited by hand, or results committed without their docs, fail here."""
    stale = [
        path.name
        for path, text in docs.rendered(docs.RESULTS.read_text()).items()
        if path.read_text() != text
    ]
    assert stale == [], "run `.venv/bin/python -m hack.bench.docs`"


@pytest.mark.parametrize(
    ("results", "message"),
    [
        (RESULTS.replace("- Date: ", "- When: "), "bench/results.md has no '- Date:' line"),
        (
            RESULTS.replace("### Concurrent callers", "### Concurrency"),
            "bench/results.md has no table under a heading starting 'Concurrent callers'",
        ),
        (
            RESULTS.replace("### Memory by fleet size", "### Memory"),
            "bench/results.md has no table under a heading starting 'Memory by fleet size'",
        ),
    ],
)
def test_results_without_what_the_docs_quote_are_refused(results: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        docs.Figures(results)
    assert str(error.value) == message


def test_a_doc_without_its_block_is_refused() -> None:
    with pytest.raises(ValueError) as error:
        docs.replaced("# Sizing\n", "sizing", "figures")
    assert str(error.value) == "no <!-- bench:sizing --> ... <!-- /bench:sizing --> block"
