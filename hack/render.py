"""Render every example stage with the real Crossplane CLI and validate it offline.

  --write  regenerate tests/stages/<set>/rendered/<stage>.yaml for every example set
  --check  re-render, fail on any difference from the committed files, and pipe each stage
           (plus the XRDs, Compositions, step-input CRD and every manifest in examples/) through
           `crank beta validate` against ../shared/crds, Crossplane's own CRDs and the
           project's XRDs.

It starts the function itself (the `function` script, plaintext on a free loopback port) and
stops it afterwards. Without crank (needs Go) or ../shared/crds it says so and skips.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from harness.e2e.binaries import crank, versions
from harness.example_sets import STAGES, ExampleSet, example_sets
from harness.fixtures import free_port, until_listening
from harness.required_tools import required

ROOT = Path(__file__).resolve().parents[1]
SHARED_CRDS = Path(os.environ.get("SHARED_CRDS_DIR", ROOT.parent / "shared" / "crds"))
# beta validate always adds the Crossplane image as a dependency; an existing cache directory
# for it stops the download (this machine has no registry access).
CROSSPLANE_IMAGE = "xpkg.crossplane.io/crossplane/crossplane:v2.2.4"
# Kinds Kubernetes itself serves; beta validate has no schema for them and says so. The
# deletion guard's policy and binding are checked by a real API server instead (make e2e,
# tests/e2e/test_configuration.py), which compiles the policy's CEL when it is created.
CORE_KINDS = {
    "/v1, Kind=Secret",
    "apiextensions.k8s.io/v1, Kind=CustomResourceDefinition",
    "admissionregistration.k8s.io/v1, Kind=ValidatingAdmissionPolicy",
    "admissionregistration.k8s.io/v1, Kind=ValidatingAdmissionPolicyBinding",
}
NO_SIDE_PORTS = ("--metrics-address=", "--health-address=")


def written(output: IO[bytes]) -> str:
    output.seek(0)
    return output.read().decode()


@contextlib.contextmanager
def function_server() -> Iterator[int]:
    """The function on a free loopback port, in plaintext. Its stderr goes to a file, not a
    pipe: a caller making many calls must never block it on a full pipe."""
    port = free_port()
    script = Path(sys.executable).parent / "function"
    # The SDK's flags read these too: a developer's DEBUG must not log every call.
    environment = {
        k: v for k, v in os.environ.items() if k not in ("ADDRESS", "DEBUG", "TLS_SERVER_CERTS_DIR")
    }
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            # No metrics or health probe port: a render needs neither, and must not fail on them.
            [str(script), "--insecure", f"--address=127.0.0.1:{port}", *NO_SIDE_PORTS],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=environment,
        )
        try:
            until_listening(process, port, seconds=15, written=lambda: written(stderr))
            yield port
        finally:
            process.terminate()
            process.wait(timeout=10)


def has_documents(path: Path) -> bool:
    return any(line and not line.startswith("#") for line in path.read_text().splitlines())


def render_command(
    crank: str, example: ExampleSet, stage: str, functions: Path, *, results: bool, root: Path
) -> list[str]:
    """The crank render command line of one stage (docs and the README show the same)."""
    command = [
        crank,
        "render",
        str(example.xr),
        # Each composite kind's Composition: apis/<kind, lower case, plural>/composition.yaml.
        str(root / "apis" / f"{example.kind().lower()}s" / "composition.yaml"),
        str(functions),
        "--include-full-xr",
        "--timeout=30s",
    ]
    if example.required is not None:
        command.append(f"--required-resources={example.required}")
    observed = example.observed(stage)
    if has_documents(observed):
        command.append(f"--observed-resources={observed}")
    if results:
        command.append("--include-function-results")
    return command


def render(
    crank: str,
    example: ExampleSet,
    stage: str,
    port: int,
    tmp: Path,
    *,
    results: bool,
    root: Path = ROOT,
) -> str:
    """One stage of one example set through crank and the function on `port`; `root` is the
    checkout whose apis/ render it (another release's, for the release tests)."""
    functions = tmp / f"{example.name}-functions.yaml"
    functions.write_text(
        example.functions.read_text().replace("localhost:9443", f"127.0.0.1:{port}")
    )
    command = render_command(crank, example, stage, functions, results=results, root=root)
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"crank render {example.name}/{stage} failed:\n{done.stderr}")
    return done.stdout


@functools.cache
def crossplane_crds() -> Path | None:
    """Crossplane's own CRDs (DeploymentRuntimeConfig, Provider, ...), from the module crank is
    built from (hack/install-crank.sh leaves it in the Go module cache)."""
    version = versions()["CRANK_VERSION"]
    cache = subprocess.run(
        ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False
    ).stdout.strip()
    module = Path(cache) / "github.com" / "crossplane" / "crossplane" / f"v2@{version}"
    crds = module / "cluster" / "crds"
    return crds if cache and crds.is_dir() else None


def validate(crank: str, documents: list[Path], tmp: Path) -> list[str]:
    """Run beta validate on the files; return the problems it reports."""
    cache = tmp / "xpcache"
    (cache / CROSSPLANE_IMAGE.replace(":", "@")).mkdir(parents=True, exist_ok=True)
    extensions = [SHARED_CRDS / d for d in ("coreweave", "civo", "helm", "kubernetes")]
    # Crossplane's CRDs from its module when crank's build left it, else the few in ../shared.
    extensions.append(crossplane_crds() or SHARED_CRDS / "crossplane")
    extensions += sorted((ROOT / "apis").glob("*/definition.yaml"))
    extensions.append(ROOT / "package" / "input")
    done = subprocess.run(
        [
            crank,
            "beta",
            "validate",
            f"--cache-dir={cache}",
            f"--crossplane-image={CROSSPLANE_IMAGE}",
            ",".join(str(e) for e in extensions),
            ",".join(str(d) for d in documents),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    output = done.stdout + done.stderr
    problems = []
    for line in output.splitlines():
        if line.startswith("[!] could not find CRD/XRD for:"):
            if line.split(":", 1)[1].strip() not in CORE_KINDS:
                problems.append(line)
        elif line.startswith("[x]"):
            problems.append(line)
    if done.returncode != 0 and not problems:
        problems.append(output.strip())
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args()

    pinned = crank()
    if pinned is None:
        print(
            "render-check SKIPPED: the Crossplane CLI (crank) is not installed; it needs Go (hack/install-crank.sh)"
        )
        return 1 if required() else 0
    cli = str(pinned)
    can_validate = SHARED_CRDS.is_dir()
    if args.check and not can_validate:
        print(
            f"render-check: {SHARED_CRDS} not found; beta validate SKIPPED, renders still compared"
        )
        if required():
            return 1

    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp_name, function_server() as port:
        tmp = Path(tmp_name)
        for example in example_sets():
            for stage in STAGES:
                name = f"{example.name}/{stage}"
                output = render(cli, example, stage, port, tmp, results=True)
                target = example.rendered(stage)
                if args.write:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(output)
                    print(f"wrote {target.relative_to(ROOT)}")
                    continue
                committed = target.read_text() if target.exists() else ""
                verdict = "matches" if committed == output else "DIFFERS"
                if committed != output:
                    diff = "".join(
                        difflib.unified_diff(
                            committed.splitlines(keepends=True),
                            output.splitlines(keepends=True),
                            f"committed/{name}.yaml",
                            f"rendered/{name}.yaml",
                        )
                    )
                    failures.append(f"{name}: rendered output differs (run `make render`):\n{diff}")
                if not can_validate:
                    print(f"{name}: rendered output {verdict}")
                    continue
                plain = tmp / f"{example.name}-{stage}.yaml"
                plain.write_text(render(cli, example, stage, port, tmp, results=False))
                # The observed stage is validated too: fixtures must look like real objects.
                observed = example.observed(stage)
                documents = [plain, *([observed] if has_documents(observed) else [])]
                problems = validate(cli, documents, tmp)
                failures += [f"{name}: {p}" for p in problems]
                print(f"{name}: rendered output {verdict}; validate: {len(problems)} problems")
        if args.check and can_validate:
            packaged = [*sorted((ROOT / "apis").glob("*/*.yaml")), ROOT / "package" / "input"]
            problems = validate(cli, packaged, tmp)
            failures += [f"apis and input CRD: {p}" for p in problems]
            print(f"apis and package/input: validate: {len(problems)} problems")
            # What a user applies: every manifest crank packs into the package as its examples.
            manifests = sorted((ROOT / "examples").rglob("*.yaml"))
            problems = validate(cli, manifests, tmp)
            failures += [f"examples/: {p}" for p in problems]
            print(f"examples/ ({len(manifests)} files): validate: {len(problems)} problems")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
