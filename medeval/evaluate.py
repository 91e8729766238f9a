"""``python -m medeval.evaluate``: see :mod:`medeval.cli.evaluate`."""

import sys

from medeval.cli.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
