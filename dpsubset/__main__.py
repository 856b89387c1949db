"""``python -m dpsubset``: the command line of :mod:`dpsubset.interfaces.cli`."""
import sys

from .interfaces.cli import main

if __name__ == "__main__":
    sys.exit(main())
