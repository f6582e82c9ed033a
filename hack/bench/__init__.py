"""The benchmark behind `make bench`: the function, as the default install runs it (metrics on),
against the no-op floor. One module per concern, so a new scenario or measurement touches one
file: bench/README.md lists them (and `docs.py`, the docs' figures rendered from the results) and
describes the method.
"""
