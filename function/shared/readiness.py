"""When a composed resource counts as ready, and the XR conditions that explain waiting."""

from __future__ import annotations

from function.shared.observed import View


def ready_when_ready(observed: View) -> bool:
    """Managed resources and Objects: ready only when their own Ready condition says so."""
    return observed.ready


def ready_when_exists(observed: View) -> bool:
    """Secrets, ProviderConfigs and Usages have no runtime signal: ready once they exist."""
    return observed.exists
