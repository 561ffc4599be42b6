"""``python -m mutation``: measure the scenario suite and the unit tests on mutants (see :mod:`mutation.cli`)."""

from __future__ import annotations

import sys

from mutation.cli import main

sys.exit(main())
