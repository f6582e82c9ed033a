"""Objects checked as kube-apiserver checks a create, by its own code.

hack/controlplane/validator/ is a small Go program on k8s.io/apiextensions-apiserver (at the
primary engine's Kubernetes) and crossplane-runtime's XRD-to-CRD conversion: it prunes, defaults
and validates (OpenAPI schema, CEL rules, list types, metadata) with the functions the API server
calls, and answers one JSON line per object. hack/controlplane/build-validator.sh builds it into
the version-keyed cache (`make test` runs it); one process serves a test process's whole session.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.e2e.binaries import cache_root

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "hack" / "controlplane" / "validator"
BUILD_SCRIPT = REPO / "hack" / "controlplane" / "build-validator.sh"
XRDS = tuple(sorted((REPO / "apis").glob("*/definition.yaml")))
SHARED_CRDS_ENV = "SHARED_CRDS_DIR"


@dataclass(frozen=True)
class Verdict:
    """What the API server says to a create: its field errors (or, under Strict field
    validation, the unknown fields it fails on first), its Status message, and the object as it
    would store it (pruned, defaulted, status dropped where the status subresource owns it)."""

    known: bool  # whether a served CRD defines the kind at all (core kinds have none)
    errors: tuple[str, ...]
    message: str
    stored: dict[str, Any]


def as_sent(value: Any) -> Any:
    """The value as Crossplane sends it to the API server: composed resources travel as protobuf
    Structs, whose numbers are doubles that protojson writes without a fraction when integral
    (2.0 becomes 2, which the API server decodes as an integer)."""
    if isinstance(value, dict):
        return {key: as_sent(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_sent(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def shared_crds_dir() -> Path | None:
    """The shared CRD folder (``$SHARED_CRDS_DIR`` or ``<repo>/../shared/crds``)."""
    override = os.environ.get(SHARED_CRDS_ENV)
    candidate = Path(override) if override else REPO.parent / "shared" / "crds"
    return candidate if candidate.is_dir() else None


def binary() -> Path:
    """Where build-validator.sh puts the build of this source (keyed by its hash)."""
    digest = hashlib.sha256()
    for name in ("main.go", "go.mod", "go.sum"):
        digest.update((SOURCE / name).read_bytes())
    return cache_root() / "bin" / f"validator-{digest.hexdigest()[:12]}" / "validator"


class Validator:
    """One validator process over a set of CRD and XRD files; safe to share between threads."""

    def __init__(self, *paths: Path) -> None:
        self._process = subprocess.Popen(
            [str(binary()), *map(str, paths)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._lock = threading.Lock()

    def has_schema(self, api_version: str, kind: str) -> bool:
        """Whether a served CRD version defines this kind (core kinds have none)."""
        probe = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "probe"}}
        return self.verdict(probe, "Ignore").known

    def verdict(
        self, obj: dict[str, Any], field_validation: str = "Strict", with_status: bool = False
    ) -> Verdict:
        """The API server's answer to creating `obj`; `with_status` keeps and checks the status
        a create drops, as a status update must pass."""
        request = {
            "object": as_sent(obj),
            "fieldValidation": field_validation,
            "withStatus": with_status,
        }
        line = json.dumps(request) + "\n"
        with self._lock:
            assert self._process.stdin is not None and self._process.stdout is not None
            self._process.stdin.write(line)
            self._process.stdin.flush()
            reply = self._process.stdout.readline()
        if not reply:
            raise RuntimeError(f"the validator exited ({self._process.wait()}) on {line[:300]}")
        answer = json.loads(reply)
        return Verdict(
            answer["known"], tuple(answer["errors"]), answer["message"], answer["stored"] or {}
        )

    def validate(
        self, obj: dict[str, Any], field_validation: str = "Strict", with_status: bool = False
    ) -> list[str]:
        """The errors creating `obj` fails with; [] when the API server accepts it (a kind
        without a CRD fails the test)."""
        verdict = self.verdict(obj, field_validation, with_status)
        assert verdict.known, f"no served CRD defines {obj.get('apiVersion')} {obj.get('kind')}"
        return list(verdict.errors)


@functools.cache
def validator(*paths: Path) -> Validator:
    """The process for these CRD and XRD paths: started once, then shared. Skips (a failure
    under FIC_TOOLS_REQUIRED) when the binary or the shared CRDs are missing."""
    built = binary()
    if not built.exists():
        pytest.skip(
            f"the validator is not built at {built}: run `bash {BUILD_SCRIPT.relative_to(REPO)}` "
            "(`make test` runs it; it needs Go)"
        )
    return Validator(*paths)


def provider_crds() -> Validator:
    """The real CRDs of every provider and of Crossplane (../shared/crds), and our XRDs."""
    crds = shared_crds_dir()
    if crds is None:
        pytest.skip(
            f"../shared/crds not found (set ${SHARED_CRDS_ENV}): nothing to validate against"
        )
    return validator(crds, *XRDS)


def xrds() -> Validator:
    """Our XRDs alone, as Crossplane turns them into CRDs."""
    return validator(*XRDS)


@functools.lru_cache(maxsize=8192)
def _composed_problems(body_json: str) -> tuple[str, ...]:
    body = json.loads(body_json)
    verdict = provider_crds().verdict(body)  # one round trip, the kind's CRD looked up with it
    if not verdict.known:
        return (f"no CRD for {body['apiVersion']} {body['kind']}",)
    return verdict.errors


def composed_problems(body: dict[str, Any]) -> tuple[str, ...]:
    """What creating a composed object fails with against the real CRDs (a kind without one is
    a problem too); cached by content, since walks and properties compose the same objects
    often."""
    return _composed_problems(json.dumps(body, sort_keys=True))


def spec_problems(xr: dict[str, Any]) -> list[str]:
    """What the API server refuses an XR with, as a user applies it: unknown fields pruned, not
    errors (no strict field validation), and without the summary line that follows an error."""
    return [p for p in xrds().validate(xr, "Ignore") if not p.startswith("<nil>: Invalid value")]
