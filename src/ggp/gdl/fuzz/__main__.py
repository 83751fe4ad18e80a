"""``python -m ggp.gdl.fuzz``: see :func:`ggp.gdl.fuzz.runner.main`."""

import sys

from ggp.gdl.fuzz.runner import main

if __name__ == "__main__":
    sys.exit(main())
