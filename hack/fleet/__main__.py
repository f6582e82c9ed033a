"""`python -m hack.fleet` (what `make fleet` runs): see cli.py."""

import sys

from hack.fleet.cli import main

sys.exit(main())
