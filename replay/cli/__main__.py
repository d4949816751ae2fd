"""`python -m replay.cli`: the same program as the `kreplay` console script."""

import sys

from replay.cli import main

if __name__ == "__main__":
    sys.exit(main())
