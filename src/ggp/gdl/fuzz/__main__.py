"""``python -m ggp.gdl.fuzz``: see :func:`ggp.gdl.fuzz.runner.main`."""

import sys

from .runner import main

sys.exit(main())
