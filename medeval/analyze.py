"""``python -m medeval.analyze``: see :mod:`medeval.cli.analyze`."""

import sys

from medeval.cli.analyze import main

if __name__ == "__main__":
    sys.exit(main())
