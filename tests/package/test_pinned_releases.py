"""Seeded releases equal the pinned ones (tests/pinned_releases.py says how they are made
and when to regenerate them): a refactoring must not change what is released."""
import json

import numpy as np
import pytest

from pinned_releases import PIN_FILE, cases, release

PINNED = json.loads(PIN_FILE.read_text())
CASES = cases()


def test_every_case_is_pinned():
    assert sorted(PINNED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_is_the_pinned_one(name):
    got, want = release(*CASES[name]), PINNED[name]
    assert got["support"] == want["support"]
    names = sorted(want["params"])
    assert sorted(got["params"]) == names
    np.testing.assert_allclose([got["params"][k] for k in names], [want["params"][k] for k in names],
                               rtol=1e-9, atol=1e-12)
    assert (got["guarantee"], got["eps"], got["delta"]) == (want["guarantee"], want["eps"], want["delta"])
    assert got["stages"] == want["stages"]
    if want["sensitivity"] is None:
        assert got["sensitivity"] is None
    else:
        assert got["sensitivity"] == pytest.approx(want["sensitivity"], rel=1e-12)
