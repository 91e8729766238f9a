"""``python -m medeval.tasks``: see :mod:`medeval.cli.tasks`."""

import sys

from medeval.cli.tasks import main

if __name__ == "__main__":
    sys.exit(main())
