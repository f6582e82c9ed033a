"""The faults tests/e2e/test_faults.py inflicts around converged and changing XRs, each as it
happens to a real control plane: a component SIGKILLed and restarted (a crash, an OOM kill, a
lost node), the function unreachable behind a network that answers nothing, the credentials
Secret deleted.

A fault is inflicted, held while the test watches what the XRs show, and lifted; `hold` says
what it saw, for the note the suite prints."""

from __future__ import annotations

import datetime
import functools
import re
import socket
import time
from typing import Any

from . import kinds
from .calls import read_reconciles
from .controlplane import CROSSPLANE_NAMESPACE
from .kube import wait_for
from .pair import NAMESPACE, Member, Pair
from .providerkubernetes import PROCESS_NAME as PROVIDER_KUBERNETES
from .runtime import FUNCTION_NAME, FUNCTION_PROCESS
from .scene import CREDENTIALS_SECRET
from .stages import CONVERGE_SECONDS, not_synced
from .xr import composed, reason

# A metadata-only edit of an XR: Crossplane reconciles it at once, so a fault's effect on calls
# shows without waiting for the next poll.
TOUCHED_ANNOTATION = "e2e.modelplane.ai/touched"
# Crossplane cancels a reconcile after 2 minutes (internal/controller/apiextensions/composite/
# reconciler.go, `timeout`); an unreachable function is held unreachable for longer...
RECONCILE_TIMEOUT_SECONDS = 120
UNREACHABLE_SECONDS = RECONCILE_TIMEOUT_SECONDS + 10
# ...and a crashed function is back well within that, as a container restart on a loaded node.
FUNCTION_DOWN_SECONDS = 10
# A crashed component stays down long enough for the others to notice (their watches and calls
# fail, and controllers back off) before it comes back.
DOWN_SECONDS = 5


def touch(pair: Pair) -> None:
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    touched = {"metadata": {"annotations": {TOUCHED_ANNOTATION: stamp}}}
    for member in pair.members:
        pair.suite.plane.api.merge_patch(member.kind, member.name, touched, NAMESPACE)


def failed_code(pair: Pair, member: Member) -> str:
    """The gRPC status code (`rpc error: code = Unavailable`) of a failed call the XR reports
    on Synced=False, naming the function; else ''."""
    xr = pair.suite.plane.api.get(member.kind, member.name, NAMESPACE)
    match = re.search(r"rpc error: code = (\w+)", not_synced(xr, FUNCTION_NAME))
    return match[1] if match else ""


def failed_with(pair: Pair, member: Member, code: str) -> bool:
    return failed_code(pair, member) == code


class Fault:
    """A fault: inflict, hold (returns what the XRs showed meanwhile), recover."""

    name: str
    # Whether its mid-change round is made during the converged round's outage (pools added
    # once the XRs have reported it) instead of in an outage of its own: for a fault that is
    # long by definition.
    one_outage = False

    def inflict(self, pair: Pair) -> None:
        raise NotImplementedError

    def hold(self, pair: Pair, changing: Member | None) -> str:
        """While the fault lasts; `changing` is the XR given a new pool just before it."""
        time.sleep(DOWN_SECONDS)
        return f"down {DOWN_SECONDS} s"

    def recover(self, pair: Pair) -> None:
        raise NotImplementedError


class FunctionKilled(Fault):
    """The function SIGKILLed and restarted within seconds, as a crashed container is.

    A call in flight when the process dies fails (gRPC Unavailable) and its XR reports it. A
    call made while nothing listens does not fail: Crossplane calls functions with gRPC's
    waitForReady (internal/xfn/function_runner.go, `svcConfig`), so it waits for the function
    to come back, up to the reconcile's 2-minute deadline, and goes through the new process."""

    name = "function-killed"
    killed_at: datetime.datetime

    def inflict(self, pair: Pair) -> None:
        self.killed_at = datetime.datetime.now(datetime.UTC)
        pair.suite.plane.processes.kill(FUNCTION_PROCESS)

    def hold(self, pair: Pair, changing: Member | None) -> str:
        start = time.monotonic()
        touch(pair)
        time.sleep(FUNCTION_DOWN_SECONDS)
        seen = ", ".join(f"{m.name}: {self._what_happened(pair, m)}" for m in pair.members)
        return f"down {time.monotonic() - start:.0f} s; {seen}"

    def _what_happened(self, pair: Pair, member: Member) -> str:
        code = failed_code(pair, member)
        if code:
            return f"a call in flight failed ({code})"
        # Crossplane logs whole seconds: a reconcile of the kill's second counts.
        since = self.killed_at.replace(microsecond=0)
        begun = read_reconciles(
            pair.suite.plane.crossplane_log, member.kind, NAMESPACE, member.name
        )
        if any(at >= since for at in begun):
            return "a reconcile began and its call waited"
        # The XR's watch circuit breaker, open after the last burst of events, dropped the
        # touch: no reconcile until its half-open slot or the next poll.
        return "no reconcile began"

    def recover(self, pair: Pair) -> None:
        pair.suite.plane.processes.restart(FUNCTION_PROCESS)


class Tarpit:
    """A TCP port that takes connections into its backlog and never answers them: to a gRPC
    client, a function behind a network that drops everything (its TLS handshake hangs)."""

    def __init__(self, port: int) -> None:
        # The function's own port, just freed: its old connections may linger in TIME_WAIT,
        # which create_server's SO_REUSEADDR allows for.
        self._socket = socket.create_server(("127.0.0.1", port), backlog=1024)
        self.port = int(self._socket.getsockname()[1])

    def close(self) -> None:
        self._socket.close()


class FunctionUnreachable(Fault):
    """The function's address stops answering for longer than a reconcile: the process gone
    and its port a tarpit, as behind a network that drops its traffic. Crossplane's calls wait
    (waitForReady) until the reconcile's 2-minute deadline, and then the XRs report it; the
    function comes back on the same address, as the network heals."""

    name = "function-unreachable"
    one_outage = True
    tarpit: Tarpit

    def inflict(self, pair: Pair) -> None:
        pair.suite.plane.processes.kill(FUNCTION_PROCESS)
        self.tarpit = Tarpit(pair.suite.runtime.port)

    def hold(self, pair: Pair, changing: Member | None) -> str:
        start = time.monotonic()
        touch(pair)
        for member in pair.members:
            wait_for(
                f"{member.name} to report a function call failed with DeadlineExceeded on Synced",
                functools.partial(failed_with, pair, member, "DeadlineExceeded"),
                # A poll begins a reconcile within a minute even if the breaker dropped the touch.
                UNREACHABLE_SECONDS + CONVERGE_SECONDS,
                interval=1,
            )
        reported = time.monotonic() - start
        # Longer than a reconcile whatever the XRs reported: an outage, not a blip.
        time.sleep(max(0.0, UNREACHABLE_SECONDS - reported))
        return (
            f"unreachable {time.monotonic() - start:.0f} s; both XRs reported their calls' "
            f"DeadlineExceeded on Synced after {reported:.0f} s"
        )

    def recover(self, pair: Pair) -> None:
        self.tarpit.close()
        pair.suite.plane.processes.restart(FUNCTION_PROCESS)


class Killed(Fault):
    """A control-plane component SIGKILLed and started again with the same command; its state
    is all in the API server (etcd, for the API server), so it must pick up where it was."""

    def __init__(self, process: str) -> None:
        self.name = f"{process}-killed"
        self.process = process

    def inflict(self, pair: Pair) -> None:
        pair.suite.plane.processes.kill(self.process)

    def recover(self, pair: Pair) -> None:
        pair.suite.plane.processes.restart(self.process)


class ProviderKubernetesKilled(Killed):
    killed_at = 0.0

    def __init__(self) -> None:
        super().__init__(PROVIDER_KUBERNETES)

    def inflict(self, pair: Pair) -> None:
        self.killed_at = time.time()
        super().inflict(pair)

    def hold(self, pair: Pair, changing: Member | None) -> str:
        if changing is not pair.coreweave:
            return super().hold(pair, changing)
        # Mid-change: Crossplane composes the new pool's Object, and no provider applies it.
        pool = str(changing.pools[-1]["name"])
        api = pair.suite.plane.api
        wait_for(
            f"the Object of pool {pool} composed while provider-kubernetes is down",
            lambda: (
                f"nodepool-{pool}"
                in composed(api, changing.name, NAMESPACE, (kinds.KUBERNETES_OBJECT,))
            ),
            CONVERGE_SECONDS,
        )
        applied = pair.cks.get(kinds.CKS_NODEPOOL, pool)
        if applied is None:
            return "the new pool's Object composed, not applied, while down"
        # The change can beat the kill: the pool is added just before it, and Crossplane and the
        # provider may finish first (the warm CI run of 836723a did). Then the NodePool must
        # predate the kill (creationTimestamp has whole seconds, so within its second).
        created = datetime.datetime.fromisoformat(applied["metadata"]["creationTimestamp"])
        assert created.timestamp() <= self.killed_at, (
            f"NodePool {pool} created at {created}, after provider-kubernetes was killed at "
            f"{datetime.datetime.fromtimestamp(self.killed_at, datetime.UTC)}"
        )
        return "the new pool applied before the kill, nothing applied while down"


class CredentialsDeleted(Fault):
    """The CoreWeave credentials Secret deleted, then restored: the function keeps and re-uses
    the kubeconfig it wrote (ClusterAccess=LastKnownKubeconfig), so nothing in the cluster is
    cut off, and a pool added meanwhile is still applied."""

    name = "credentials-deleted"
    saved: dict[str, Any]

    def inflict(self, pair: Pair) -> None:
        api = pair.suite.plane.api
        saved = api.get(kinds.SECRET, CREDENTIALS_SECRET, CROSSPLANE_NAMESPACE)
        assert saved is not None, f"no {CREDENTIALS_SECRET} Secret to delete"
        self.saved = saved
        api.delete(kinds.SECRET, CREDENTIALS_SECRET, CROSSPLANE_NAMESPACE)

    def hold(self, pair: Pair, changing: Member | None) -> str:
        api, member = pair.suite.plane.api, pair.coreweave
        touch(pair)
        wait_for(
            f"{member.name} ClusterAccess=LastKnownKubeconfig",
            lambda: (
                reason(api.get(member.kind, member.name, NAMESPACE), "ClusterAccess")
                == "LastKnownKubeconfig"
            ),
            CONVERGE_SECONDS,
        )
        if changing is not member:
            return "ClusterAccess=LastKnownKubeconfig"
        pool = str(member.pools[-1]["name"])
        wait_for(
            f"pool {pool} applied in the cluster through the kept kubeconfig",
            lambda: pair.cks.get(kinds.CKS_NODEPOOL, pool),
            CONVERGE_SECONDS,
        )
        return "ClusterAccess=LastKnownKubeconfig; the new pool applied through the kept kubeconfig"

    def recover(self, pair: Pair) -> None:
        restored = {
            "metadata": {"name": CREDENTIALS_SECRET, "namespace": CROSSPLANE_NAMESPACE},
            "type": self.saved.get("type", "Opaque"),
            "data": self.saved["data"],
        }
        pair.suite.plane.api.apply(kinds.SECRET, restored)
