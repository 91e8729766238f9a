"""``python -m medeval.embed``: see :mod:`medeval.cli.embed`."""

import sys

from medeval.cli.embed import main

if __name__ == "__main__":
    sys.exit(main())
