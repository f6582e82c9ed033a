"""The benchmark behind `make bench`: the function, as the default install runs it (metrics on),
against the no-op floor.

One module per concern, so a new scenario or measurement touches one file:

- `xrs.py`        the converged 8-pool XR of each kind, reached through harness.fixtures.World
- `noise.py`      the metadata the API server, Crossplane and providers add
- `scenarios.py`  serialized requests per kind; fleet members; per-call variation
- `floors.py`     the no-op floor server (a standalone script)
- `servers.py`    starting the function and the floor, calling them, their CPU and memory
- `scrape.py`     scraping the function's /metrics while measured; the count audit
- `measure.py`    serial latency, concurrency, whole reconciles
- `report.py`     bench/results.md and its goals
- `docs.py`       the docs' bench figures (performance table, sizing), rendered from the results
- `cli.py`        the order of a run and its flags

The method is described in bench/README.md.
"""
