"""The figures the docs quote from the benchmark, rendered from bench/results.md.

docs/performance.md's summary table and docs/operations.md's sizing are blocks between
`<!-- bench:NAME -->` and `<!-- /bench:NAME -->` markers, written here from the committed
results; `make bench` rewrites them after each run, and tests/test_bench_docs.py fails when a
block differs from what the committed results give. So no figure in those blocks is copied by
hand, and none outlives the run it came from.

    .venv/bin/python -m hack.bench.docs           # rewrite the blocks from bench/results.md
    .venv/bin/python -m hack.bench.docs --check   # exit 1 if a block is stale
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results.md"
PERFORMANCE = ROOT / "docs" / "performance.md"
OPERATIONS = ROOT / "docs" / "operations.md"
# The XR kinds, as the bench labels them, in the order the docs list them.
KINDS = ("CoreWeaveCluster", "CivoCluster")
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


@dataclasses.dataclass(frozen=True)
class Table:
    heading: str
    rows: list[dict[str, str]]


def tables(markdown: str) -> list[Table]:
    """Every table of the results, each with the `###` heading above it, rows by column name."""
    found: list[Table] = []
    heading, header = "", None
    for line in markdown.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if not line.startswith("|"):
            header = None
        elif header is None:
            header = _cells(line)
            found.append(Table(heading, []))
        elif not set(line) <= set("|-: "):  # not the line under the header
            found[-1].rows.append(dict(zip(header, _cells(line), strict=True)))
    return found


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(all_tables: list[Table], heading_start: str) -> Table:
    matching = [t for t in all_tables if t.heading.startswith(heading_start)]
    if not matching:
        raise ValueError(
            f"bench/results.md has no table under a heading starting {heading_start!r}"
        )
    return matching[0]


@dataclasses.dataclass(frozen=True)
class Figures:
    """What the docs quote, read from one bench/results.md."""

    date: str
    # Serial: kind -> fleet -> function p50 / no-op p50.
    serial_ratio: dict[str, dict[int, str]]
    # kind -> function server CPU µs per call, serial, at the largest fleet.
    serial_cpu: dict[str, int]
    # kind -> (calls per reconcile before v2.4, on v2.4, function CPU µs per reconcile on v2.4).
    reconciles: dict[str, tuple[str, str, int]]
    # Concurrent: the callers, the fleet, and kind -> server -> row.
    callers: int
    concurrent_fleet: int
    concurrent: dict[str, dict[str, dict[str, str]]]
    # kind -> (22, "175.8 KiB"): desired objects and request size.
    requests: dict[str, tuple[int, str]]
    peak_rss_mb: str
    peak_rss_fleet: int
    # The peak once the concurrent load ran (every request in flight held at once).
    loaded_rss_mb: str


def parse(markdown: str) -> Figures:
    date = re.search(r"^- Date: (\d{4}-\d{2}-\d{2})", markdown, flags=re.M)
    if date is None:
        raise ValueError("bench/results.md has no '- Date:' line")
    all_tables = tables(markdown)
    serial = _table(all_tables, "Serial latency by fleet size")
    serial_ratio: dict[str, dict[int, str]] = {}
    serial_cpu: dict[str, int] = {}
    for row in serial.rows:
        kind, fleet = row["XR"], int(row["fleet"])
        serial_ratio.setdefault(kind, {})[fleet] = row["x no-op p50 / p99"].split("/")[0].strip()
        if fleet == max(serial_ratio[kind]):
            serial_cpu[kind] = int(row["server CPU µs/call fn / no-op"].split("/")[0])
    loops = {r["XR"]: r for r in _table(all_tables, "Whole converged reconciles").rows}
    reconciles: dict[str, tuple[str, str, int]] = {}
    for kind in KINDS:
        older = loops[f"{kind}, Crossplane v2.1-v2.3"]
        newer = loops[f"{kind}, Crossplane v2.4"]
        reconciles[kind] = (
            _calls(older["calls per reconcile (mean)"]),
            _calls(newer["calls per reconcile (mean)"]),
            int(newer["function CPU µs per reconcile"]),
        )
    loaded = _table(all_tables, "Concurrent callers")
    # The heaviest load measured: the largest fleet, the most callers (closest to Crossplane's
    # many reconcile workers).
    fleet = max(int(r["fleet"]) for r in loaded.rows)
    callers = max(int(r["callers"]) for r in loaded.rows)
    concurrent: dict[str, dict[str, dict[str, str]]] = {}
    for row in loaded.rows:
        if (int(row["fleet"]), int(row["callers"])) != (fleet, callers):
            continue
        concurrent.setdefault(row["XR"], {})[row["server"]] = row
    requests = {}
    for match in re.finditer(
        r"^- (\w+): \d+ pools, (\d+) desired resources, request ([\d.]+ KiB)",
        markdown,
        flags=re.M,
    ):
        requests[match.group(1)] = (int(match.group(2)), match.group(3))
    memory = _table(all_tables, "Memory by fleet size")
    # Its rows after each fleet size; a row after the concurrent load is the load's, not the
    # fleet's.
    by_fleet = [r for r in memory.rows if r["after fleet"].isdigit()]
    largest = max(by_fleet, key=lambda r: int(r["after fleet"]))
    (under_load,) = [r for r in memory.rows if "concurrent" in r["after fleet"]]
    return Figures(
        date=date.group(1),
        serial_ratio=serial_ratio,
        serial_cpu=serial_cpu,
        reconciles=reconciles,
        callers=callers,
        concurrent_fleet=fleet,
        concurrent=concurrent,
        requests=requests,
        peak_rss_mb=largest["function MB: peak / now"].split("/")[0].strip(),
        peak_rss_fleet=int(largest["after fleet"]),
        loaded_rss_mb=under_load["function MB: peak / now"].split("/")[0].strip(),
    )


def _calls(mean: str) -> str:
    """A mean number of calls per reconcile, as the docs write it: 2, or 1.5."""
    return f"{float(mean):g}"


def _thousands(value: float) -> str:
    """A count of XRs, rounded to the hundred, grouped as the docs write numbers: 11 700."""
    return f"{round(value, -2):,.0f}".replace(",", " ")


def performance_table(figures: Figures) -> str:
    fleets = sorted(next(iter(figures.serial_ratio.values())))
    lines = [
        f"| converged 8-pool XR | p50 vs no-op floor at {' / '.join(map(str, fleets))} XRs "
        "| calls per reconcile: before v2.4 / v2.4 | function CPU per reconcile on v2.4 "
        f"| {figures.callers} callers, {figures.concurrent_fleet} XRs: calls/s, p99, "
        "server CPU per call (x no-op floor) |",
        "|---|---|---|---|---|",
    ]
    for kind in KINDS:
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
    lines.append("")
    lines.append(
        f"From [`bench/results.md`](../bench/results.md) of {figures.date}. Peak RSS after "
        f"{figures.peak_rss_fleet} XRs of each kind: {figures.peak_rss_mb} MB, "
        f"{figures.loaded_rss_mb} MB once the concurrent callers ran (every request in flight "
        "held at once)."
    )
    return "\n".join(lines)


def _wrapped(paragraph: str, bullet: bool = False) -> str:
    """Wrapped at the docs' 100 columns; a bullet's further lines indented under its text."""
    return textwrap.fill(
        paragraph.removeprefix("- "),
        width=100,
        initial_indent="- " if bullet else "",
        subsequent_indent="  " if bullet else "",
        break_long_words=False,
        break_on_hyphens=False,
    )


def concurrency_sentence(figures: Figures) -> str:
    loaded = figures.concurrent["CoreWeaveCluster"]
    function = int(loaded["function"]["server CPU µs/call"])
    floor = int(loaded["no-op floor"]["server CPU µs/call"])
    serial = figures.serial_cpu["CoreWeaveCluster"]
    return _wrapped(
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
        return _thousands(capacity * per_minute / float(calls) * PLANNED_SHARE)

    bullets = [
        "- **One replica** is one Python process composing on one core. Under "
        f"{figures.callers} concurrent callers over a fleet of {figures.concurrent_fleet} "
        f"XRs, a converged call cost it {cw_cpu} µs of CPU (CoreWeave) and "
        f"{civo_cpu} µs (Civo) on the bench machine "
        f"([`bench/results.md`](../bench/results.md), {figures.date}): one core answers at "
        f"most {cw_capacity:.0f} and {civo_capacity:.0f} calls/s. (The bench measured "
        f"{coreweave['calls/s']} and {civo['calls/s']} calls/s: its callers share the "
        "machine's two cores.)",
        "- **Per XR**: Crossplane reconciles a converged XR about once a minute "
        "(`--poll-interval` defaults to 1m; with realtime compositions, on by default since "
        "v2.1, the XR is requeued after the pipeline's TTL, 60 s here, with ±10 % jitter), "
        "plus a reconcile whenever a composed resource changes. A converged "
        f"CoreWeaveCluster costs {cw_older} calls per reconcile before v2.4 and {cw_newer} "
        f"on v2.4; a CivoCluster {civo_newer} (see [Supported versions](versions.md)).",
        f"- **So** one replica at half its capacity (headroom for change-driven reconciles, "
        f"rollouts and a lost replica) serves about {cw_capacity:.0f} {TIMES} 60 / {cw_newer} {TIMES} 0.5 "
        f"≈ {fleet(cw_capacity, cw_newer)} CoreWeaveClusters on v2.4 ({cw_capacity:.0f} {TIMES} 60 "
        f"/ {cw_older} {TIMES} 0.5 ≈ {fleet(cw_capacity, cw_older)} on v2.1{DASH}v2.3) or "
        f"{civo_capacity:.0f} {TIMES} 60 / {civo_newer} {TIMES} 0.5 ≈ {fleet(civo_capacity, civo_newer)} "
        "CivoClusters, as long as every replica's memo holds the whole fleet (next bullet): "
        "past it, calls are composed afresh at several times the cost, which more replicas do "
        "not fix, since each sees every XR; `--memo-mib` does. Two replicas are for "
        "availability; add one per that many XRs. On "
        "your own nodes, run `make bench` there (`bench/README.md`) and read the same "
        "figures, or scale these by the no-op floor's CPU per call, which calibrates a "
        "machine.",
    ]
    return "\n".join(_wrapped(b, bullet=True) for b in bullets)


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
    figures = parse(results)
    docs: dict[Path, str] = {}
    for name, (path, render) in BLOCKS.items():
        docs[path] = replaced(docs.get(path, path.read_text()), name, render(figures))
    return docs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a block is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in rendered(RESULTS.read_text()).items():
        if path.read_text() != text:
            stale.append(path.relative_to(ROOT).as_posix())
            if not args.check:
                path.write_text(text)
    if args.check and stale:
        print(f"stale bench figures in {', '.join(stale)}: run python -m hack.bench.docs")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
