"""The figures the docs quote from the benchmark, rendered from bench/results.md.

docs/performance.md's summary table and docs/operations.md's sizing are blocks between
`<!-- bench:NAME -->` and `<!-- /bench:NAME -->` markers, written here from the committed
results; `make bench` rewrites them after each run, and tests/test_bench_docs.py fails when a
block differs from what the committed results give. So no figure in those blocks is copied by
hand, and none outlives the run it came from.

    .venv/bin/python -m hack.bench.docs           # rewrite the blocks from bench/results.md
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from hack.fleet.report import wrap
from harness.example_sets import ROOT

RESULTS = ROOT / "bench" / "results.md"
PERFORMANCE = ROOT / "docs" / "performance.md"
OPERATIONS = ROOT / "docs" / "operations.md"
# Crossplane's poll: a converged XR is reconciled about once a minute (docs/operations.md).
RECONCILES_PER_MINUTE = 1
# Half a replica's capacity is planned for: headroom for change-driven reconciles, rollouts and
# a lost replica.
PLANNED_SHARE = 0.5
# The docs' multiplication sign and en dash (as escapes: ruff flags the characters in code).
TIMES = "\u00d7"
DASH = "\u2013"
# A replica is one Python process: one core at most.
MICROSECONDS_PER_CORE_SECOND = 1_000_000


def rows(markdown: str, heading: str) -> list[dict[str, str]]:
    """The rows, by column name, of the table under the first `### heading...` of the results."""
    lines = iter(markdown.splitlines())
    if not any(line.startswith(f"### {heading}") for line in lines):
        raise ValueError(f"bench/results.md has no table under a heading starting {heading!r}")
    section = itertools.takewhile(lambda line: not line.startswith("#"), lines)
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in section if line[:1] == "|"]
    header, _, *body = cells  # the line under the header is its rule
    return [dict(zip(header, row, strict=True)) for row in body]


class Figures:
    """What the docs quote, read from one bench/results.md."""

    def __init__(self, markdown: str) -> None:
        date = re.search(r"^- Date: (\d{4}-\d{2}-\d{2})", markdown, flags=re.M)
        if date is None:
            raise ValueError("bench/results.md has no '- Date:' line")
        self.date = date.group(1)
        # Serial: kind -> fleet -> function p50 / no-op p50; kind -> function server CPU µs per
        # call at the largest fleet.
        self.serial_ratio: dict[str, dict[int, str]] = {}
        self.serial_cpu: dict[str, int] = {}
        for row in rows(markdown, "Serial latency by fleet size"):
            kind, fleet = row["XR"], int(row["fleet"])
            ratios = self.serial_ratio.setdefault(kind, {})
            ratios[fleet] = row["x no-op p50 / p99"].split("/")[0].strip()
            if fleet == max(ratios):
                self.serial_cpu[kind] = int(row["server CPU µs/call fn / no-op"].split("/")[0])
        loops = {r["XR"]: r for r in rows(markdown, "Whole converged reconciles")}

        def calls(kind: str, loop: str) -> str:
            """A mean number of calls per reconcile, as the docs write it: 2, or 1.5."""
            return f"{float(loops[f'{kind}, {loop}']['calls per reconcile (mean)']):g}"

        # kind -> (calls per reconcile before v2.4, on v2.4, function CPU µs per reconcile on
        # v2.4).
        self.reconciles = {
            kind: (
                calls(kind, "Crossplane v2.1-v2.3"),
                calls(kind, "Crossplane v2.4"),
                int(loops[f"{kind}, Crossplane v2.4"]["function CPU µs per reconcile"]),
            )
            for kind in self.serial_ratio
        }
        loaded = rows(markdown, "Concurrent callers")
        # The heaviest load measured: the largest fleet, the most callers (closest to
        # Crossplane's many reconcile workers); kind -> server -> its row.
        self.concurrent_fleet = max(int(r["fleet"]) for r in loaded)
        self.callers = max(int(r["callers"]) for r in loaded)
        self.concurrent: dict[str, dict[str, dict[str, str]]] = {}
        for row in loaded:
            if (int(row["fleet"]), int(row["callers"])) == (self.concurrent_fleet, self.callers):
                self.concurrent.setdefault(row["XR"], {})[row["server"]] = row
        # kind -> (22, "175.8 KiB"): desired objects and request size.
        self.requests = {
            match[1]: (int(match[2]), match[3])
            for match in re.finditer(
                r"^- (\w+): \d+ pools, (\d+) desired resources, request ([\d.]+ KiB)",
                markdown,
                flags=re.M,
            )
        }
        memory = rows(markdown, "Memory by fleet size")
        # Its rows after each fleet size; a row after the concurrent load is the load's (every
        # request in flight held at once), not the fleet's.
        by_fleet = [r for r in memory if r["after fleet"].isdigit()]
        largest = max(by_fleet, key=lambda r: int(r["after fleet"]))
        (under_load,) = [r for r in memory if "concurrent" in r["after fleet"]]
        self.peak_rss_fleet = int(largest["after fleet"])
        self.peak_rss_mb, self.loaded_rss_mb = (
            row["function MB: peak / now"].split("/")[0].strip() for row in (largest, under_load)
        )


def performance_table(figures: Figures) -> str:
    fleets = sorted(next(iter(figures.serial_ratio.values())))
    lines = [
        f"| converged 8-pool XR | p50 vs no-op floor at {' / '.join(map(str, fleets))} XRs "
        "| calls per reconcile: before v2.4 / v2.4 | function CPU per reconcile on v2.4 "
        f"| {figures.callers} callers, {figures.concurrent_fleet} XRs: calls/s, p99, "
        "server CPU per call (x no-op floor) |",
        "|---|---|---|---|---|",
    ]
    for kind in figures.serial_ratio:
        objects, size = figures.requests[kind]
        ratios = " / ".join(figures.serial_ratio[kind][f] for f in fleets)
        older, newer, cpu = figures.reconciles[kind]
        loaded = figures.concurrent[kind]
        function, floor = loaded["function"], loaded["no-op floor"]
        cost = int(function["server CPU µs/call"]) / int(floor["server CPU µs/call"])
        lines.append(
            f"| {kind} ({size}, {objects} objects) | {ratios}{TIMES} | {older} / {newer} "
            f"| {cpu / 1000:.1f} ms | {function['calls/s']} calls/s, "
            f"p99 {float(function['p99 ms']):.0f} ms, "
            f"{int(function['server CPU µs/call']) / 1000:.1f} ms ({cost:.1f}{TIMES}) |"
        )
    lines += [
        "",
        f"From [`bench/results.md`](../bench/results.md) of {figures.date}. Peak RSS after "
        f"{figures.peak_rss_fleet} XRs of each kind: {figures.peak_rss_mb} MB, "
        f"{figures.loaded_rss_mb} MB once the concurrent callers ran (every request in flight "
        "held at once).",
    ]
    return "\n".join(lines)


def concurrency_sentence(figures: Figures) -> str:
    loaded = figures.concurrent["CoreWeaveCluster"]
    function = int(loaded["function"]["server CPU µs/call"])
    floor = int(loaded["no-op floor"]["server CPU µs/call"])
    serial = figures.serial_cpu["CoreWeaveCluster"]
    return wrap(
        f"Under {figures.callers} concurrent callers a converged CoreWeave call cost the function "
        f"{function / 1000:.1f} ms of server CPU, {function / floor:.1f} times the no-op "
        f"floor's ({floor / 1000:.1f} ms) and {function / serial:.1f} times its own serial CPU "
        f"({serial / 1000:.1f} ms) ([`bench/results.md`](../bench/results.md), {figures.date}); "
        "[the sizing](operations.md#sizing) uses the concurrent figures."
    )


def sizing(figures: Figures) -> str:
    coreweave = figures.concurrent["CoreWeaveCluster"]["function"]
    civo = figures.concurrent["CivoCluster"]["function"]
    cw_cpu, civo_cpu = int(coreweave["server CPU µs/call"]), int(civo["server CPU µs/call"])
    cw_capacity = MICROSECONDS_PER_CORE_SECOND / cw_cpu
    civo_capacity = MICROSECONDS_PER_CORE_SECOND / civo_cpu
    cw_older, cw_newer, _ = figures.reconciles["CoreWeaveCluster"]
    _, civo_newer, _ = figures.reconciles["CivoCluster"]
    per_minute = 60 * RECONCILES_PER_MINUTE

    def fleet(capacity: float, calls: str) -> str:
        # To the hundred, grouped as the docs write numbers: 11 700.
        xrs = capacity * per_minute / float(calls) * PLANNED_SHARE
        return f"{round(xrs, -2):,.0f}".replace(",", " ")

    bullets = [
        f"**One replica** is one Python process composing on one core. Under {figures.callers} "
        f"concurrent callers over a fleet of {figures.concurrent_fleet} XRs, a converged call "
        f"cost it {cw_cpu} µs of CPU (CoreWeave) and {civo_cpu} µs (Civo) on the bench machine "
        f"([`bench/results.md`](../bench/results.md), {figures.date}): one core answers at most "
        f"{cw_capacity:.0f} and {civo_capacity:.0f} calls/s. (The bench measured "
        f"{coreweave['calls/s']} and {civo['calls/s']} calls/s: its callers share the machine's "
        "two cores.)",
        "**Per XR**: Crossplane reconciles a converged XR about once a minute (`--poll-interval` "
        "defaults to 1m; with realtime compositions, on by default since v2.1, the XR is "
        "requeued after the pipeline's TTL, 60 s here, with ±10 % jitter), plus a reconcile "
        f"whenever a composed resource changes. A converged CoreWeaveCluster costs {cw_older} "
        f"calls per reconcile before v2.4 and {cw_newer} on v2.4; a CivoCluster {civo_newer} "
        "(see [Supported versions](versions.md)).",
        "**So** one replica at half its capacity (headroom for change-driven reconciles, "
        f"rollouts and a lost replica) serves about {cw_capacity:.0f} {TIMES} 60 / {cw_newer} "
        f"{TIMES} 0.5 ≈ {fleet(cw_capacity, cw_newer)} CoreWeaveClusters on v2.4 "
        f"({cw_capacity:.0f} {TIMES} 60 / {cw_older} {TIMES} 0.5 ≈ {fleet(cw_capacity, cw_older)} "
        f"on v2.1{DASH}v2.3) or {civo_capacity:.0f} {TIMES} 60 / {civo_newer} {TIMES} 0.5 ≈ "
        f"{fleet(civo_capacity, civo_newer)} CivoClusters, as long as every replica's memo holds "
        "the whole fleet (next bullet): past it, calls are composed afresh at several times the "
        "cost, which more replicas do not fix, since each sees every XR; `--memo-mib` does. Two "
        "replicas are for availability; add one per that many XRs. On your own nodes, run "
        "`make bench` there (`bench/README.md`) and read the same figures, or scale these by the "
        "no-op floor's CPU per call, which calibrates a machine.",
    ]
    return "\n".join(wrap(b, bullet=True) for b in bullets)


# Each generated block: the file it is in, and how it is rendered.
BLOCKS = {
    "performance-table": (PERFORMANCE, performance_table),
    "concurrency": (PERFORMANCE, concurrency_sentence),
    "sizing": (OPERATIONS, sizing),
}


def replaced(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    pattern = re.compile(re.escape(begin) + r"\n(?:.*?\n)?" + re.escape(end), flags=re.S)
    if not pattern.search(text):
        raise ValueError(f"no {begin} ... {end} block")
    return pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text)


def rendered(results: str) -> dict[Path, str]:
    """Each doc with its blocks rewritten from these results."""
    figures = Figures(results)
    docs: dict[Path, str] = {}
    for name, (path, render) in BLOCKS.items():
        docs[path] = replaced(docs.get(path, path.read_text()), name, render(figures))
    return docs


def main() -> None:
    """Rewrite the blocks from bench/results.md."""
    for path, text in rendered(RESULTS.read_text()).items():
        path.write_text(text)


if __name__ == "__main__":
    main()
