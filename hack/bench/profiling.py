"""Profile the function's own work in-process with pyinstrument: `--profile`.

Requests are decoded outside the profiled region (decoding is gRPC's work, paid by the floors
too); what is profiled is `runner.run`, `response.to` and `runner.write`, over the members of a
fleet in turn, so per-XR caches are exercised as in a real fleet.
"""

from __future__ import annotations

import time
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from pyinstrument import Profiler

from hack.bench.scenarios import Scenario, next_n, runner_response


def hot_spots(profiler: Profiler, top: int) -> str:
    """Per function: inclusive time (outermost call on each stack only) and self time (time in
    C called from it, e.g. upb, counts as its self time), as shares of the profiled time."""
    session = profiler.last_session
    root = session.root_frame() if session is not None else None
    if root is None:
        return "(no samples)"
    inclusive: dict[str, float] = {}
    own: dict[str, float] = {}
    stack: list[tuple[Any, frozenset[str]]] = [(root, frozenset())]
    for _ in range(10_000_000):  # bounded walk of the call tree
        if not stack:
            break
        frame, active = stack.pop()
        if frame.is_synthetic:
            continue
        key = f"{frame.function}  {frame.file_path_short}:{frame.line_no}"
        own[key] = own.get(key, 0.0) + frame.total_self_time
        if key not in active:
            inclusive[key] = inclusive.get(key, 0.0) + frame.time
        stack.extend((child, active | {key}) for child in frame.children)
    total = root.time or 1.0
    lines = ["inclusive   self   function"]
    for key, spent in sorted(inclusive.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{spent / total:8.1%} {own.get(key, 0.0) / total:7.1%}   {key}")
    lines.append("")
    lines.append("self time (top):")
    for key, spent in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{spent / total:8.1%}   {key}")
    return "\n".join(lines)


def profile(scenario: Scenario, fleet: int, calls: int) -> str:
    """The profile of `calls` in-process calls over a fleet of `fleet` XRs, after one warm-up
    call per XR."""
    for member in range(max(50, fleet)):
        data = scenario.call(member % fleet, next_n())
        runner_response(fnv1.RunFunctionRequest.FromString(data))
    profiler = Profiler(interval=0.0001)
    chunk = 100
    done = 0
    wall = 0.0
    while done < calls:
        batch = [
            fnv1.RunFunctionRequest.FromString(scenario.call((done + i) % fleet, next_n()))
            for i in range(min(chunk, calls - done))
        ]
        start = time.perf_counter()
        profiler.start()
        for req in batch:
            runner_response(req)
        profiler.stop()
        wall += time.perf_counter() - start
        done += len(batch)
    return (
        f"pyinstrument: {calls} in-process calls of runner.run + response.to + runner.write on "
        f"{scenario.label}, fleet of {fleet} XRs "
        f"({len(scenario.template.blob) / 1024:.1f} KiB per request), "
        f"{wall / calls * 1e6:.0f} µs per call under the profiler\n\n"
        + profiler.output_text(unicode=True, color=False, time="percent_of_total")
        + "\nHot spots (share of profiled time):\n\n"
        + hot_spots(profiler, 25)
    )
