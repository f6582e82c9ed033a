"""`make fleet`: N CoreWeaveClusters and N CivoClusters brought to Ready on the e2e control plane,
measured through an idle window, then deleted; writes bench/fleet.md.

One module per concern: xrs.py (the fleet's manifests), lifecycle.py (create, wait for Ready,
settle, delete), window.py (the idle window's samples: processes, metrics, calls per reconcile),
errors.py (what went wrong, as far as the harness can see), fakecloud.py (the fake cloud's loop
slowed while the fleet is idle), about.py (machine and versions), report.py (the report, pure),
cli.py (the order of a run and its flags).
"""
