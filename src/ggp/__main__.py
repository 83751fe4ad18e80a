"""``python -m ggp``: the ``ggp`` command (see :mod:`ggp.cli`)."""

import sys

from ggp.cli import main

if __name__ == "__main__":
    sys.exit(main())
