"""What the report says a run ran on: the machine, and the version of everything that ran."""

from __future__ import annotations

import os
import platform

import psutil

from hack import provenance
from harness.e2e.binaries import etcd_for
from harness.e2e.engine import Engine
from harness.e2e.runtime import package_version


def machine() -> dict[str, str]:
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return {
        "CPU": provenance.cpu_model(),
        "cores": str(os.cpu_count()),
        "RAM": f"{psutil.virtual_memory().total / 1024**3:.1f} GiB",
        "load average (1/5/15 min) at the start": load,
    }


def software(engine: Engine) -> dict[str, str]:
    return {
        "function": f"{package_version()} from the working tree at {provenance.commit()}",
        "Crossplane": engine.version,
        "Kubernetes": engine.kubernetes,
        "etcd": etcd_for(engine.kubernetes),
        "provider-kubernetes": engine.provider_kubernetes,
        "provider-helm": engine.provider_helm,
        "Python": platform.python_version(),
    }
