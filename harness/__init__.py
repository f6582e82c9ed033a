"""What the tests and the tools in hack/ share, so that neither imports the other.

- fixtures.py: XRs, credentials and RunFunction requests built as Crossplane sends them, and
  World, which plays Crossplane and the providers across reconciles without a control plane.
- example_sets.py: the example XRs in examples/ and their render stages in tests/stages/.
- pinned_chart.py: the cluster-autoscaler chart the Civo Composition pins, in ../shared/charts.
- e2e/: a real control plane (Kubernetes, Crossplane, the providers, a faked cloud) for the e2e
  suite, `make fleet` and the release tools.
"""
