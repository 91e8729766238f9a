"""``python -m medeval.train``: see :mod:`medeval.cli.train`."""

import sys

from medeval.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
