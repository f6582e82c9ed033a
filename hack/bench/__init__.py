"""The benchmark behind `make bench`: the function against no-op and replay floors, without
metrics and with them.

One module per concern, so a new scenario or measurement touches one file:

- `xrs.py`        the converged 8-pool XR of each kind, reached through harness.fixtures.World
- `noise.py`      the metadata the API server, Crossplane and providers add (request shape)
- `scenarios.py`  serialized requests per kind and shape; fleet members; per-call variation
- `floors.py`     the no-op and replay floor servers (standalone scripts)
- `servers.py`    starting the function (metrics off and on) and the floors, calling them,
                  their CPU and memory
- `scrape.py`     scraping the metered function's /metrics while measured; the count audit
- `measure.py`    serial latency, concurrency, the servicer in-process, whole reconciles
- `report.py`     bench/results.md and its goals
- `docs.py`       the docs' bench figures (performance table, sizing), rendered from the results
- `cli.py`        the order of a run and its flags

The method is described in bench/README.md.
"""
