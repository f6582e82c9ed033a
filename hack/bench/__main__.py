"""`python -m hack.bench` (what `make bench` runs): see cli.py."""

import sys

from hack.bench.cli import main

sys.exit(main())
