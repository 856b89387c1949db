"""Shared test set-up: the test folders mirror dpsubset's subpackages (tests/<stage>/), and
the helpers that several of them import (rtools.py, pinned_releases.py) sit in tests/ itself,
so tests/ goes on the import path once here."""
import pathlib
import sys

TESTS = pathlib.Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
