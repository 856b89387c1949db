"""verbose=True shows progress (stderr) inside the long loops of the exact search;
verbose=False writes nothing."""
import numpy as np
import pandas as pd
import pytest

from dpsubset import dp_best_subset, Search
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.enumeration import mistakes_by_enumeration, top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch, default_R
from dpsubset.search.outer_approximation import OuterApproximation, progress


def _problem(seed=1, n=80, p=12, s=3):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    y = np.clip(X[:, :s].sum(axis=1) + rng.normal(size=n), -3, 3)
    return LeastSquaresScorer(X, y, 1.0, 1.0, np.ones((n, 1))), s


def _run_all_loops(verbose, monkeypatch):
    """Top-R and mistake classes with every loop forced to run: the best support by
    outer approximation, the top-R completion, and the class subproblems."""
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    monkeypatch.setattr(SubsetSearch, "class_bounds",
                        lambda self, ks, target=None: {k: -np.inf for k in ks})
    sc, s = _problem()
    search = SubsetSearch(sc, s, search="outer_approximation", verbose=verbose)
    R = default_R(sc.p, s)
    t = search.top_r(R)
    m = search.mistake_classes()
    for k in m.open_classes:
        m.close(k)
    # The per-base subproblem loop (the route of classes the scorer's branch and bound
    # does not take) is called directly, whichever route the refiner chose.
    S3, v3, _ = search._class_by_subproblems(m.center, 3, "class 3")
    assert v3 == pytest.approx(m.scores[3], rel=1e-12)
    # progress reporting changes nothing in the results
    np.testing.assert_array_equal(t.supports, top_r_by_enumeration(sc, s, R).supports)
    np.testing.assert_allclose(m.scores, mistakes_by_enumeration(sc, s).scores, rtol=1e-12)


def test_search_loops_report_progress_only_when_verbose(capsys, monkeypatch):
    _run_all_loops(False, monkeypatch)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    _run_all_loops(True, monkeypatch)
    err = capsys.readouterr().err
    assert "best support" in err  # outer-approximation iterations
    assert "top-R completion" in err  # completion rounds
    assert "mistake class 3: subproblems" in err  # the per-base loop
    assert "mistake class 3: branch and bound" in err  # the class closed by the draw


def test_outer_approximation_bar_shows_the_gap(capsys):
    sc, s = _problem(seed=4, p=14)
    oa = OuterApproximation(sc, s, verbose=True, name="oa", cuts_per_round=0)
    oa.add_cut(np.arange(s))
    oa.solve("best support")
    err = capsys.readouterr().err
    assert "oa: best support" in err and "gap=" in err


def test_progress_helper_is_a_no_op_when_quiet(capsys):
    bar = progress(False, desc="x", total=3)
    bar.update()
    bar.set_postfix(a=1)
    bar.close()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("verbose", [False, True])
def test_dp_best_subset_progress(verbose, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, size=(200, 8)), columns=[f"x{j}" for j in range(8)])
    df["y"] = np.clip(df.x0 + df.x1 + 0.3 * rng.normal(size=200), -3, 3)
    dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(1, 3), random_state=0, verbose=verbose)
    err = capsys.readouterr().err
    assert (err != "") is verbose


# --- verbose=None (the default): a bar for the whole call, after a delay, on a terminal ---

import contextlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import dpsubset.runtime.progress as prog  # noqa: E402
from dpsubset.search.limits import Deadline  # noqa: E402


class _Terminal(io.StringIO):
    """stderr as a terminal would be: tqdm writes to it, ``isatty()`` says yes."""

    def isatty(self):
        return True


class _NotTerminal(io.StringIO):
    def isatty(self):
        return False


def _frame():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, size=(200, 8)), columns=[f"x{j}" for j in range(8)])
    df["y"] = np.clip(df.x0 + df.x1 + 0.3 * rng.normal(size=200), -3, 3)
    return df


def _wait_for(stream, text, seconds=5.0):
    end = time.monotonic() + seconds
    while text not in stream.getvalue() and time.monotonic() < end:
        time.sleep(0.02)
    return stream.getvalue()


def test_the_default_bar_appears_only_after_the_delay(monkeypatch):
    monkeypatch.setattr(prog, "PROGRESS_DELAY", 0.4)
    monkeypatch.setattr(prog, "PROGRESS_REFRESH", 0.05)
    term = _Terminal()
    bar = prog.call_progress(None, Deadline(600), file=term)
    bar.set_description("selection (top_r)")
    time.sleep(0.1)
    assert term.getvalue() == ""  # a call that ends within the delay prints nothing
    out = _wait_for(term, "left of time_limit")
    assert re.search(r"dp_best_subset: selection \(top_r\) \| \d+ s spent, (599|600) s left of "
                     r"time_limit=600 s \|[^|]*\| 0/3 stages", out)
    bar.update()
    assert "1/3 stages" in _wait_for(term, "1/3 stages")
    bar.close()
    assert not bar._thread.is_alive()
    # the bar is transient: its last write clears the line
    assert term.getvalue().endswith("\r") or term.getvalue().rstrip(" ").endswith("\r")


def test_the_bar_names_no_limit_and_redraws_while_a_stage_runs(monkeypatch):
    monkeypatch.setattr(prog, "PROGRESS_REFRESH", 0.05)
    term = _Terminal()
    bar = prog.call_progress(True, Deadline(None), file=term)  # True: at once
    _wait_for(term, "no time limit")
    n = term.getvalue().count("no time limit")
    time.sleep(0.3)  # no news from the call: the thread still redraws
    assert term.getvalue().count("no time limit") > n
    bar.close()


@pytest.mark.parametrize("verbose, stream", [(False, _Terminal), (None, _NotTerminal)])
def test_no_bar_when_silenced_or_not_a_terminal(verbose, stream, monkeypatch):
    monkeypatch.setattr(prog, "PROGRESS_DELAY", 0.0)
    out = stream()
    bar = prog.call_progress(verbose, Deadline(600), file=out)
    bar.set_description("selection")
    bar.update()
    time.sleep(0.1)
    bar.close()
    assert out.getvalue() == "" and bar is prog._NO_BAR


@pytest.mark.parametrize("verbose, shown", [(None, True), (False, False)])
def test_dp_best_subset_shows_the_bar_on_a_terminal_by_default(verbose, shown, monkeypatch):
    monkeypatch.setattr(prog, "PROGRESS_DELAY", 0.0)  # as if the call had run past 2 s
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    res = dp_best_subset("y ~ .", _frame(), eps=1.0, s=2, bounds=(1, 3), random_state=0,
                         verbose=verbose, search=Search(time_limit=100))
    out = term.getvalue()
    assert ("dp_best_subset: " in out) is shown
    if shown:
        assert "left of time_limit=100 s" in out
        # settings, stage names, counts and seconds only: no value of the data or the fit
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out)
        for line in filter(None, (part.strip() for part in re.split(r"[\r\n]", text))):
            assert re.fullmatch(
                r"dp_best_subset: (design|selection \(top_r\)( \([^()|]*\))?|refit) \| \d+ s spent, \d+ s left of "
                r"time_limit=100 s \|[^|]*\| \d/3 stages", line), line
        for value in res.params[res.params != 0]:
            assert f"{value:.3g}" not in text


def test_dp_best_subset_quick_call_prints_nothing_by_default(monkeypatch):
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    dp_best_subset("y ~ .", _frame(), eps=1.0, s=2, bounds=(1, 3), random_state=0)
    assert term.getvalue() == ""  # well under the 2 s delay


def test_verbose_is_checked_before_any_work():
    with pytest.raises(TypeError, match=r"verbose must be None .* True .* or False .*; got str"):
        dp_best_subset("y ~ .", _frame(), eps=1.0, s=2, bounds=(1, 3), verbose="yes")
    assert prog.check_verbose(np.bool_(True)) is True


def test_the_bar_goes_when_its_call_ends_without_close(monkeypatch):
    monkeypatch.setattr(prog, "PROGRESS_REFRESH", 0.05)
    term = _Terminal()

    def call_that_fails():
        bar = prog.call_progress(True, Deadline(600), file=term)
        _wait_for(term, "stages")
        return bar  # leaves without close(), as an error past the call's close() would

    bar = call_that_fails()
    bar._thread.join(timeout=5)
    assert not bar._thread.is_alive() and bar._bar is None


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_the_bar_shows_on_a_terminal_that_does_not_say_its_size(monkeypatch):
    # A pseudo-terminal without a size (0 x 0, as under script(1) or some CI runners):
    # tqdm left to itself hides the bar there.
    monkeypatch.setattr(prog, "PROGRESS_DELAY", 0.0)
    master, slave = os.openpty()
    with os.fdopen(slave, "w", encoding="utf-8") as tty:
        assert tty.isatty() and os.get_terminal_size(slave).columns == 0
        bar = prog.call_progress(None, Deadline(600), file=tty)
        bar.set_description("selection (top_r)")
        bar.close()
        tty.flush()
    os.set_blocking(master, False)
    seen = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(master, 65536):
            seen += chunk
    os.close(master)
    assert b"dp_best_subset: selection (top_r) |" in seen


# --- how far the search has come, on the call's bar (issue 39) ---

def test_the_search_relays_how_far_it_has_come_to_the_calls_bar(monkeypatch):
    """A long selection used to sit at "1/3 stages": its loops now tell the call's bar their
    relative gap or the share of their steps done, with verbose=None, as the API calls them."""
    monkeypatch.setattr(prog, "PROGRESS_REFRESH", 0.02)
    monkeypatch.setattr(prog, "NEWS_INTERVAL", 0.0)
    term = _Terminal()
    bar = prog.call_progress(True, Deadline(600), file=term)
    bar.set_description("selection (top_r)")
    sc, s = _problem(seed=4, p=14)
    oa = OuterApproximation(sc, s, verbose=False, name="oa", cuts_per_round=0)
    oa.add_cut(np.arange(s))
    oa.solve("best support")
    assert re.fullmatch(r"oa: best support: gap [0-9.e+-]+%?.*", bar._news), bar._news
    out = _wait_for(term, "(oa: best support: gap")
    assert "dp_best_subset: selection (top_r) (oa: best support: gap" in out
    # a loop with a known number of steps: the share done
    relay = progress(None, desc="mistake class 2: branch and bound", total=4, unit="base")
    relay.update()
    relay.set_postfix(nodes=17)
    assert bar._news == "mistake class 2: branch and bound: 1/4 bases, 17 nodes"
    bar.set_description("refit")
    assert bar._news == ""                       # a new stage: no stale news
    bar.close()
    assert prog._ACTIVE == {}
    assert progress(None, desc="x") is prog._NO_BAR     # no call's bar: nothing relayed


def test_relayed_news_names_counts_and_gaps_only(monkeypatch):
    term = _Terminal()
    bar = prog.call_progress(True, Deadline(600), file=term)
    relay = progress(False, desc="x")
    relay.set_postfix(gap="1.0e-02", open=3, best=-123.456, lower=7.5)   # scores never pass
    assert bar._news == "x: gap 1.0e-02, 3 nodes open"
    bar.close()


def test_the_search_finds_the_same_with_news_relayed(monkeypatch):
    term = _Terminal()
    bar = prog.call_progress(True, Deadline(600), file=term)
    monkeypatch.setattr(prog, "NEWS_INTERVAL", 0.0)
    _run_all_loops(False, monkeypatch)    # asserts the exact lists inside
    assert bar._news != ""
    bar.close()
