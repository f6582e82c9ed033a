"""How `make e2e` splits the suite across parallel workers, each with a control plane of its own.

Most e2e time is waiting on controllers (provider polls, Crossplane's poll, idle windows longer
than the function's 60 s TTL), not CPU. So the suite runs as shards side by side, one
pytest-xdist worker each. A shard is one xdist scope (ShardScheduling): all of its tests run, in
order, on one worker and one control plane, as the whole suite did before it was split. Each
engine's tests are split by module, so that no shard takes much longer than the others.
(Not xdist's `loadgroup`: it marks a group by rewriting `Item._nodeid`, which pytest 9.2 no
longer reads, so every test became a group of its own.)

Each worker runs in a network namespace of its own (harness/e2e/own-network), because
provider-kubernetes binds ports 9443 and 8080 (v1.2.1 with no flag to move them, v1.3 by
default), and two on one loopback cannot both start. Where namespaces are not available (not
root) the suite runs on one worker, shard after shard, as before.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .engine import Engine

# The modules that get a control plane of their own, on each engine that runs them; every other
# module shares the shard DEFAULT_SHARD. Chosen so that no shard is much longer than the
# slowest module group, test_faults (docs/testing.md, "How long the proof takes", has each
# shard's measured time).
SHARDS: dict[str, str] = {
    "test_faults": "faults",
    "test_coreweave": "coreweave",
    "test_cluster_autoscaler": "cluster-autoscaler",
    "test_autoscaled_pools": "pools-consumer-upgrade",
    "test_upgrade": "pools-consumer-upgrade",
    # Not the rest shard: on v2.1.0 and v2.3.4 it followed the Civo lifecycle there and made
    # that shard the suite's longest (1 344 s cold, af42384); the autoscaled pools' shard is
    # the shortest on every engine (427-571 s, with the upgrade 812 s). A shard of its own
    # would start three more control planes, past the machine's 128 inotify instances.
    "test_consumer": "pools-consumer-upgrade",
    # Installing the APIs as users do: each module on a control plane of its own, one after
    # another in one worker (module-scoped; Crossplane's RBAC manager and provider-kubernetes
    # both bind :8080, so never two at once).
    "test_migration": "install",
    "test_rbac": "install",
    "test_readme": "install",
    "test_provider_upgrade": "install",
    "test_uninstall": "uninstall",
}
DEFAULT_SHARD = "rest"
# Which modules each older engine runs: those marked every_engine (tests/e2e/conftest.py).
EVERY_ENGINE_MODULES = (
    "test_civo",
    "test_consumer",
    "test_coreweave",
    "test_package",
    "test_configuration",
    "test_autoscaled_pools",
)

OWN_NETWORK = Path(__file__).with_name("own-network")


def shard_of(module: str, engine: Engine) -> str:
    return f"{engine.label}-{SHARDS.get(module, DEFAULT_SHARD)}"


def shards(engines: list[Engine]) -> list[str]:
    """Every shard the suite has on these engines: as many as `make e2e` runs workers."""
    names = (
        shard_of(module, engine)
        for engine in engines
        for module in (*(SHARDS if engine.primary else EVERY_ENGINE_MODULES), "")
    )
    return list(dict.fromkeys(names))


def shard_of_test(nodeid: str, engines: list[Engine]) -> str:
    """The shard of a collected test, from its node ID alone (what xdist's scheduler sees):
    `tests/e2e/test_faults.py::test_x[<engine test_id>...]`."""
    module = Path(nodeid.split("::", 1)[0]).stem
    params = nodeid[nodeid.find("[") + 1 :] if "[" in nodeid else ""
    for engine in engines:
        if params.startswith(engine.test_id):
            return shard_of(module, engine)
    # Not an engine's test (none today): a scope of its own, as xdist would make it.
    return nodeid


@functools.cache
def own_network_available() -> bool:
    """Whether a worker can have a network namespace of its own here (root, unshare, ip)."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    probe = subprocess.run([str(OWN_NETWORK), "true"], capture_output=True, check=False, timeout=30)
    return probe.returncode == 0


def make_scheduler(config: Any, log: Any, engines: list[Engine]) -> Any:
    """xdist's scope scheduling, with a scope per shard: each worker takes whole shards (those
    with the most tests first, when there are more shards than workers)."""
    from xdist.scheduler import LoadScopeScheduling

    class ShardScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return shard_of_test(nodeid, engines)

    return ShardScheduling(config, log)
