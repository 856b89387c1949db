"""The cyclic garbage collector is paused while a call runs, and restored afterwards."""
import gc

import numpy as np
import pandas as pd
import pytest

import dpsubset.api as api
from dpsubset import dp_best_subset
from dpsubset.runtime.limits import paused_garbage_collection


def test_pause_restores_the_collector_on_success_and_on_error():
    assert gc.isenabled()
    with paused_garbage_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with paused_garbage_collection():
            raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()  # a caller that had paused it keeps it paused
    try:
        with paused_garbage_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_call_runs_with_the_collector_paused(monkeypatch):
    seen = []
    design = api._design
    monkeypatch.setattr(api, "_design", lambda *a, **k: seen.append(gc.isenabled()) or design(*a, **k))
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, (200, 4)), columns=["y", "a", "b", "c"])
    dp_best_subset("y ~ a + b + c", df, eps=2.0, s=1, bounds=(1.0, 1.0), random_state=0)
    assert seen == [False] and gc.isenabled()
