"""Allow ``python -m qossim``."""

import sys

from qossim.cli import main

if __name__ == "__main__":
    sys.exit(main())
