"""``python -m fuzz``: run the fuzz targets (see :mod:`fuzz.runner`)."""

from __future__ import annotations

import sys

from fuzz.runner import main

sys.exit(main())
