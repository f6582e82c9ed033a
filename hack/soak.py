"""Soak the `function` console script: many calls over one channel, watching its memory.

Starts `function --insecure` on loopback and sends --calls RunFunction calls (default 100 000)
over one gRPC channel, from --concurrency threads (default 1), cycling through a mix of requests
for both kinds: new, cluster-ready and converged XRs, converged XRs whose credentials vanished,
observed state with garbage status, invalid specs (a GPU pool without gpu, out-of-range counts,
hundreds of pools, no System pool), an unknown composite kind, a request without a composite and
a bad step input. Each request comes in --xrs variants (distinct XR names, so distinct composed
objects), and every call carries its own meta.tag and XR resourceVersion, as Crossplane's do.

Every answer is compared with the answer the function gives in-process for the same request:
a gRPC error, a FATAL where none is expected (or none where one is), or any other difference
counts as an error. The server's RSS (psutil) is read after a --warmup of 1 000 calls and at the
end; the growth must stay under --max-growth percent (10).

    .venv/bin/python hack/soak.py                    # 100 000 calls, one caller
    .venv/bin/python hack/soak.py --calls 20000 --concurrency 4

Exit code 0 when there was no error and the growth stayed under the limit, 1 otherwise.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import itertools
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
import psutil  # noqa: E402
from crossplane.function.proto.v1 import run_function_pb2 as fnv1  # noqa: E402
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1  # noqa: E402

from hack.render import function_server  # noqa: E402
from harness.fixtures import (  # noqa: E402
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    civo_xr,
    coreweave_xr,
    credentials_secret,
    request,
    run,
)

MEGABYTE = 1024 * 1024
GARBAGE_STATUS: dict[str, Any] = {
    "conditions": "not-a-list",
    "atProvider": {"manifest": ["wrong", "shape"], "apiServerEndpoint": 42, "id": {"x": None}},
}


@dataclasses.dataclass(frozen=True)
class Case:
    label: str
    request: fnv1.RunFunctionRequest
    fatal: bool
    expected: bytes  # the in-process answer, meta.tag cleared


def answer_bytes(rsp: fnv1.RunFunctionResponse) -> bytes:
    rsp.meta.tag = ""
    wire: bytes = rsp.SerializeToString(deterministic=True)
    return wire


def case(label: str, req: fnv1.RunFunctionRequest, *, fatal: bool) -> Case:
    rsp = run(req)
    fatals = [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    if bool(fatals) != fatal or any("internal error" in r.message for r in fatals):
        raise SystemExit(f"soak: scenario {label} does not behave as expected in-process")
    return Case(label, req, fatal, answer_bytes(rsp))


def report_all(world: World) -> None:
    """Healthy providers: everything applied is Ready and reports its usual status."""
    for key, body in world.observed.items():
        if body["kind"] in ("Secret", "ProviderConfig", "Usage"):
            body.setdefault("status", {})
            continue
        at_provider: dict[str, Any] = {"id": f"id-{key}"}
        if key == "cks-cluster":
            at_provider["apiServerEndpoint"] = ENDPOINT
        elif key == "shared-vast-observer":
            at_provider["manifest"] = {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "shared-vast"},
                "provisioner": "csi.vastdata.com",
                "reclaimPolicy": "Retain",
            }
        elif body["kind"] == "Object":
            at_provider["manifest"] = copy.deepcopy(body["spec"]["forProvider"]["manifest"])
        elif body["kind"] == "NodePool":
            body["metadata"]["annotations"]["crossplane.io/external-name"] = f"id-{key}"
        world.ready(key, atProvider=at_provider)


def grown(xr: dict[str, Any], rounds: int) -> World:
    world = World(xr)
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
    for _ in range(rounds):
        world.reconcile()
        report_all(world)
    return world


CREDENTIALS = {
    "coreweave-providerconfig": [CLUSTER_PROVIDER_CONFIG],
    "coreweave-credentials": [credentials_secret()],
}


def cases_for(index: int) -> list[Case]:
    """Every scenario for the index-th XR of each kind."""
    name = {"metadata": {"name": f"inference-{index}", "namespace": "ml-team"}}
    cw, civo = {**coreweave_xr(), **name}, {**civo_xr(), **name}
    cw_converged = grown(copy.deepcopy(cw), 4)
    civo_converged = grown(copy.deepcopy(civo), 4)
    cw_ready = grown(copy.deepcopy(cw), 1)
    garbled = copy.deepcopy(cw_converged.observed)
    for key in ("cks-cluster", "nodepool-h100", "shared-vast-observer"):
        garbled[key]["status"] = GARBAGE_STATUS
    civo_garbled = copy.deepcopy(civo_converged.observed)
    for key in ("civo-cluster", "nodepool-l40s"):
        civo_garbled[key]["status"] = GARBAGE_STATUS
        civo_garbled[key]["metadata"]["annotations"]["crossplane.io/external-name"] = 7
    gpu_without_gpu = copy.deepcopy(cw)
    del gpu_without_gpu["spec"]["nodePools"][0]["gpu"]
    out_of_range = copy.deepcopy(cw)
    out_of_range["spec"]["nodePools"][1]["nodeCount"] = 5000
    too_many = copy.deepcopy(cw)
    too_many["spec"]["nodePools"] = [
        {"name": f"p{i}", "instanceType": "gd-8xl40s-i128"} for i in range(300)
    ]
    no_system = copy.deepcopy(civo)
    no_system["spec"]["nodePools"][0]["role"] = "GPU"
    unknown = {**cw, "kind": "AWSCluster"}
    return [
        case("coreweave-new", request(cw), fatal=False),
        case("coreweave-ready", request(cw, cw_ready.observed, CREDENTIALS), fatal=False),
        case("coreweave-converged", request(cw, cw_converged.observed, CREDENTIALS), fatal=False),
        case("coreweave-credentials-gone", request(cw, cw_converged.observed, {}), fatal=False),
        case("coreweave-garbage-observed", request(cw, garbled, CREDENTIALS), fatal=False),
        case("coreweave-gpu-without-gpu", request(gpu_without_gpu), fatal=True),
        case("coreweave-out-of-range", request(out_of_range, cw_converged.observed), fatal=True),
        case("coreweave-300-pools", request(too_many), fatal=True),
        case("civo-new", request(civo), fatal=False),
        case("civo-converged", request(civo, civo_converged.observed), fatal=False),
        case("civo-garbage-observed", request(civo, civo_garbled), fatal=False),
        case("civo-no-system-pool", request(no_system, civo_converged.observed), fatal=True),
        case("unknown-kind", request(unknown), fatal=True),
        case("no-composite", fnv1.RunFunctionRequest(), fatal=True),
        case(
            "bad-input",
            request(civo, step_input={"civo": {"cni": "calico"}}),
            fatal=True,
        ),
    ]


@dataclasses.dataclass
class Tally:
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    calls: int = 0
    expected_fatals: int = 0
    grpc_errors: int = 0
    unexpected: int = 0
    examples: list[str] = dataclasses.field(default_factory=list)

    def record(self, kind: str | None, fatal: bool, detail: str = "") -> None:
        with self.lock:
            self.calls += 1
            if kind is None:
                self.expected_fatals += fatal
                return
            if kind == "grpc":
                self.grpc_errors += 1
            else:
                self.unexpected += 1
            if len(self.examples) < 5:
                self.examples.append(detail)

    @property
    def errors(self) -> int:
        return self.grpc_errors + self.unexpected


def one_call(stub: grpcv1.FunctionRunnerServiceStub, item: Case, n: int, tally: Tally) -> None:
    req = fnv1.RunFunctionRequest()
    req.CopyFrom(item.request)
    req.meta.tag = f"soak-{n}"
    if req.observed.HasField("composite"):
        metadata = req.observed.composite.resource.fields["metadata"].struct_value
        metadata.fields["resourceVersion"].string_value = str(1000 + n)
    try:
        rsp = stub.RunFunction(req, timeout=30)
    except grpc.RpcError as error:
        tally.record("grpc", item.fatal, f"{item.label}: {error.code()} {error.details()}")
        return
    if rsp.meta.tag != req.meta.tag:
        tally.record("answer", item.fatal, f"{item.label}: tag {rsp.meta.tag!r}")
    elif answer_bytes(rsp) != item.expected:
        fatal = [r.message[:120] for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        tally.record("answer", item.fatal, f"{item.label}: differs from in-process (FATAL {fatal})")
    else:
        tally.record(None, item.fatal)


def run_calls(
    stub: grpcv1.FunctionRunnerServiceStub,
    cases: list[Case],
    start: int,
    count: int,
    concurrency: int,
    tally: Tally,
) -> None:
    def worker(offset: int) -> None:
        for n in range(start + offset, start + count, concurrency):
            one_call(stub, cases[n % len(cases)], n, tally)

    if concurrency == 1:
        worker(0)
        return
    with ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(worker, i) for i in range(concurrency)]:
            future.result()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--calls", type=int, default=100_000, help="measured calls (100000)")
    parser.add_argument("--warmup", type=int, default=1_000, help="calls before the start RSS")
    parser.add_argument("--concurrency", type=int, default=1, help="callers sharing the channel")
    parser.add_argument("--xrs", type=int, default=20, help="distinct XRs per scenario (20)")
    parser.add_argument("--max-growth", type=float, default=10.0, help="RSS growth limit, %%")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    built = time.monotonic()
    per_xr = [cases_for(i) for i in range(args.xrs)]
    # Interleave so that consecutive calls are different scenarios of different XRs.
    cases = [c for group in itertools.zip_longest(*per_xr) for c in group if c is not None]
    print(
        f"soak: {len(cases)} distinct requests ({len(per_xr[0])} scenarios x {args.xrs} XRs), "
        f"built in {time.monotonic() - built:.1f}s"
    )
    tally = Tally()
    with function_server() as port:
        # The function server is the one process this script starts.
        [server] = psutil.Process().children()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = grpcv1.FunctionRunnerServiceStub(channel)
            run_calls(stub, cases, 0, args.warmup, 1, tally)
            rss_start = server.memory_info().rss
            peak = rss_start
            began = time.monotonic()
            done = 0
            chunk = max(args.calls // 20, 1)
            while done < args.calls:
                count = min(chunk, args.calls - done)
                run_calls(stub, cases, args.warmup + done, count, args.concurrency, tally)
                done += count
                rss = server.memory_info().rss
                peak = max(peak, rss)
                print(
                    f"soak: {done:>7} calls  rss {rss / MEGABYTE:7.1f} MiB  errors {tally.errors}",
                    flush=True,
                )
            elapsed = time.monotonic() - began
            rss_end = server.memory_info().rss
            cpu = server.cpu_times()
    growth = (rss_end - rss_start) / rss_start * 100
    print()
    print(
        f"calls                {args.calls} measured (+{args.warmup} warm-up), "
        f"concurrency {args.concurrency}, one channel"
    )
    print(
        f"mix                  {len(per_xr[0])} scenarios x {args.xrs} XRs, both kinds; "
        f"{tally.expected_fatals} expected FATALs (invalid input)"
    )
    print(f"RSS start            {rss_start / MEGABYTE:.1f} MiB (after warm-up)")
    print(f"RSS end              {rss_end / MEGABYTE:.1f} MiB (peak {peak / MEGABYTE:.1f} MiB)")
    print(f"RSS growth           {growth:+.2f} % (limit {args.max_growth:.0f} %)")
    print(f"throughput           {args.calls / elapsed:.0f} calls/s over {elapsed:.1f}s")
    print(f"server CPU           {cpu.user + cpu.system:.1f}s total")
    print(f"gRPC errors          {tally.grpc_errors}")
    print(f"unexpected answers   {tally.unexpected}")
    for example in tally.examples:
        print(f"  e.g. {example}")
    ok = tally.errors == 0 and growth < args.max_growth
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
