"""N CoreWeaveClusters and N CivoClusters on the e2e control plane, measured idle: bench/fleet.md.

The run brings up the e2e control plane on the primary engine, creates the fleet, waits until
every XR is Ready, settles, measures an idle window, writes the report, deletes the fleet and
writes the report again with how deletion went.

    make fleet                          # N = 32 CoreWeaveClusters and 32 CivoClusters
    FLEET_SIZE=4 make fleet             # another N
    FLEET_RECONCILE_RATE=10 make fleet  # Crossplane's --max-reconcile-rate (default 100)
    .venv/bin/python -m hack.fleet --help

Exit code: 0 when every XR became Ready, nothing changed in the idle window and deletion
completed; 1 otherwise (the report says what happened); 2 when the binaries are not built.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import tempfile
import time
import traceback
from pathlib import Path

from hack.fleet import about, errors, fakecloud, lifecycle, window
from hack.fleet.report import CROSSPLANE_RECONCILE_RATE, Run, render
from hack.fleet.xrs import Member, autoscaled, fleet
from harness.e2e.binaries import REPO, locate
from harness.e2e.engine import engines
from harness.e2e.stages import IDLE_WINDOW_SECONDS, LOG_SETTLE_SECONDS, QUIET_SECONDS
from harness.e2e.suite import Suite, start

SIZE_ENV = "FLEET_SIZE"
AUTOSCALED_ENV = "FLEET_CIVO_AUTOSCALED"
RECONCILE_RATE_ENV = "FLEET_RECONCILE_RATE"
# The fleet: 32 of each kind, the bench's middle fleet size.
DEFAULT_SIZE = 32
# Two reconcile periods (the e2e idle window twice): every XR reconciles at least twice, and
# the CPU figures cover more than one poll of each.
WINDOW_SECONDS = 2 * IDLE_WINDOW_SECONDS
# `make fleet` must finish within 30 minutes on 2 cores: bring-up takes about 2, the window and
# its settling up to 7, deletion up to 5; this is what is left for the fleet to become Ready.
CONVERGE_SECONDS = 900
# A converged fleet goes quiet within a poll; after this the window starts anyway (and the
# report says so), since Crossplane's watch circuit breakers may still be closing one by one.
QUIET_TIMEOUT_SECONDS = 240
DELETE_SECONDS = 300
OUTPUT = REPO / "bench" / "fleet.md"
# Changes in the idle window listed one by one (watch-events.tsv in the work folder has all).
CHANGES_LISTED = 20


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument(
        "--size",
        type=int,
        default=int(os.environ.get(SIZE_ENV, DEFAULT_SIZE)),
        help=f"XRs of each kind (default ${SIZE_ENV} or {DEFAULT_SIZE})",
    )
    parser.add_argument(
        "--civo-autoscaled",
        type=int,
        default=os.environ.get(AUTOSCALED_ENV),
        help=f"CivoClusters with the example's autoscaled pool (default ${AUTOSCALED_ENV} or "
        "all); the rest have that pool fixed, so provider-helm installs nothing in their "
        "clusters",
    )
    parser.add_argument(
        "--reconcile-rate",
        type=int,
        default=int(os.environ.get(RECONCILE_RATE_ENV, CROSSPLANE_RECONCILE_RATE)),
        help="Crossplane core's --max-reconcile-rate, each controller's reconcile workers "
        f"(default ${RECONCILE_RATE_ENV} or Crossplane's own {CROSSPLANE_RECONCILE_RATE})",
    )
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error("--size must be at least 1")
    if args.reconcile_rate < 1:
        parser.error("--reconcile-rate must be at least 1")
    if args.civo_autoscaled is None:
        args.civo_autoscaled = args.size
    return args


def say(line: str) -> None:
    print(f"fleet: {line}", flush=True)


def harness_notes(run: Run, members: list[Member], sent_within: float) -> None:
    """What the harness itself contributes to the figures, and how they were taken."""
    civo = [m for m in members if m.kind.kind == "CivoCluster"]
    run.notes += [
        f"All {len(members)} XRs were sent at once (within {sent_within:.1f} s); time to Ready "
        "runs from the moment the harness sent each XR to the first watch event showing it "
        "Ready=True, so it includes waiting behind the rest of the fleet.",
        f"Each CivoCluster's cluster is a kube-apiserver of its own on the control plane's etcd "
        f"({len(civo)} of them): their CPU and memory are in their own row, not the control "
        "plane's; etcd's figure includes serving them.",
        f"Each CoreWeaveCluster's CKS cluster is a kube-apiserver of its own too "
        f"({len(members) - len(civo)} of them), in its own row, where the fake cloud plays "
        "CKS's NodePool controller.",
    ]
    if run.civo_autoscaled == len(civo):
        run.notes.append(
            "Every CivoCluster keeps the example's autoscaled pool, so each gets the "
            "cluster-autoscaler Release: the Civo clusters' API servers and Helm installs fit "
            "this machine at this N (their row below: memory and CPU per cluster). "
            f"${AUTOSCALED_ENV}=<k> fixes that pool on all but the first k."
        )
    else:  # run.civo_autoscaled counts the CivoClusters that autoscale: never more than all
        run.notes.append(
            f"{len(civo) - run.civo_autoscaled} of the {len(civo)} CivoClusters have the "
            f"example's autoscaled pool fixed at its initial size (${AUTOSCALED_ENV}, "
            "--civo-autoscaled): they compose no cluster-autoscaler Release, so provider-helm "
            "installs and polls nothing in their clusters. Every Civo cluster still gets an API "
            "server of its own (the fake cloud starts one per cluster, whatever its pools)."
        )


def command(args: argparse.Namespace) -> str:
    """The command that repeats this run: `make fleet`, with the variables it changed."""
    size = f"{SIZE_ENV}={args.size} " if args.size != DEFAULT_SIZE else ""
    rate = args.reconcile_rate
    rate_set = f"{RECONCILE_RATE_ENV}={rate} " if rate != CROSSPLANE_RECONCILE_RATE else ""
    return f"{size}{rate_set}make fleet"


def write(run: Run) -> None:
    OUTPUT.write_text(render(run))
    say(f"wrote {OUTPUT}")


def main(argv: list[str] | None = None) -> int:
    began = time.monotonic()
    args = parse_args(argv)
    engine = next(e for e in engines() if e.primary)
    binaries = locate(engine.row)
    if missing := binaries.missing():
        print(f"fleet: binaries not built, e.g. {missing[0]}; run `make controlplane`")
        return 2
    members = fleet(args.size, args.civo_autoscaled)
    work = Path(tempfile.mkdtemp(prefix=f"fic-fleet-{engine.version}-"))
    run = Run(
        command=command(args),
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        machine=about.machine(),
        versions=about.software(engine),
        size=args.size,
        civo_autoscaled=sum(1 for m in members if autoscaled(m) and m.kind.kind == "CivoCluster"),
        reconcile_rate=args.reconcile_rate,
        window_seconds=WINDOW_SECONDS,
        work_dir=str(work),
    )
    suite: Suite | None = None
    succeeded = False
    try:
        say(f"control plane ({engine.label}) in {work} ...")
        rate = f"--max-reconcile-rate={args.reconcile_rate}"
        suite = start(work, binaries, engine, crossplane_flags=(rate,))
        try:
            succeeded = measure(run, suite, members)
        except Exception as error:  # what was measured is still worth a report, and deletion
            traceback.print_exc()
            run.errors.append(f"the run stopped early: {type(error).__name__}: {error}")
        write(run)
        say(f"deleting {len(members)} XRs ...")
        run.deletion = lifecycle.delete(suite, members, DELETE_SECONDS)
        succeeded = succeeded and run.deletion[0].startswith("Complete")
        write(run)
    finally:
        if suite is not None:
            suite.stop()
        # FLEET_KEEP=1 keeps a successful run's work folder (logs, watch-events.tsv) for reading.
        if succeeded and os.environ.get("FLEET_KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)
        else:
            say(f"logs and state kept in {work}")
    say(f"took {time.monotonic() - began:.0f} s")
    return 0 if succeeded else 1


def measure(run: Run, suite: Suite, members: list[Member]) -> bool:
    """Creates the fleet, waits for Ready, measures the idle window; fills `run`. True when the
    whole fleet converged and nothing changed in the window."""
    api, log = suite.plane.api, suite.log
    names = {m.name for m in members}
    say(f"creating {len(members)} XRs ...")
    bring_up_started = time.monotonic()
    sent = lifecycle.create(api, members)
    ready = lifecycle.wait_ready(api, members, CONVERGE_SECONDS)
    run.bring_up_seconds = time.monotonic() - bring_up_started
    sent_within = max(sent.values()) - min(sent.values())
    took = lifecycle.ready_seconds(log, members, sent)
    harness_notes(run, members, sent_within)
    if ready != names:
        say(f"only {len(ready)} of {len(members)} XRs Ready after {CONVERGE_SECONDS} s")
        run.kinds = window.kind_figures(members, took, suite.engine)
        run.errors += [
            f"not Ready after {CONVERGE_SECONDS} s: {line}"
            for line in lifecycle.not_ready(api, members)
        ]
        run.errors += errors.observed(suite, names)[0]
        return False
    with fakecloud.slowed(suite.cloud):
        return idle(run, suite, members, took)


def idle(run: Run, suite: Suite, members: list[Member], took: dict[str, float]) -> bool:
    """Settles the Ready fleet and measures the idle window; fills `run`. True when nothing
    changed in it."""
    log, names = suite.log, {m.name for m in members}
    run.notes.append(
        f"From the whole fleet Ready to the window's end the fake providers' loop waited "
        f"{fakecloud.IDLE_LOOP_SECONDS:g} s between passes (0.5 s during bring-up and "
        "deletion; hack/fleet/fakecloud.py says why)."
    )
    say(f"all Ready; waiting until nothing changes for {QUIET_SECONDS} s ...")
    if not lifecycle.wait_quiet(log, members, QUIET_SECONDS, QUIET_TIMEOUT_SECONDS):
        run.notes.append(
            f"The fleet was never quiet for {QUIET_SECONDS} s within {QUIET_TIMEOUT_SECONDS} s "
            "of being Ready; the window started anyway."
        )
    say(f"idle window of {WINDOW_SECONDS} s ...")
    sample_errors: list[str] = []
    first = window.take(suite)
    # A measurement window, not a wait for a condition: it must last whole reconcile periods.
    time.sleep(max(0.0, WINDOW_SECONDS - (time.monotonic() - first.at)))
    last = window.take(suite)
    # The last reconcile's calls reach the function's log a moment after the window.
    time.sleep(LOG_SETTLE_SECONDS)
    run.window_seconds = last.at - first.at
    changes_seen: list[str] = []
    run.kinds = window.per_kind(suite, members, took, first, last, changes_seen, run.off_figure)
    run.costs = window.costs(first, last, sample_errors)
    run.memo = window.memo(first, last)
    run.errors += [f"changed in the idle window: {line}" for line in changes_seen[:CHANGES_LISTED]]
    if len(changes_seen) > CHANGES_LISTED:
        run.errors.append(f"... and {len(changes_seen) - CHANGES_LISTED} more changes")
    observed, observed_in_window = errors.observed(suite, names, first, last)
    run.errors += sample_errors + observed
    run.problems_in_window = len(changes_seen) + len(sample_errors) + observed_in_window
    return sum(k.real_changes for k in run.kinds) == 0 and not sample_errors
