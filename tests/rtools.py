"""Shared set-up of the tests that use R: rpy2 in this process, Rscript for the R wrapper.

The R wrapper (r-wrapper/, which calls Python through reticulate) is run in an
``Rscript`` child, as an R user runs it, and not inside this process through
rpy2: reticulate loaded into an R that rpy2 embeds runs its finalizers without
the GIL, which aborts the interpreter at gc() and at exit (reticulate 1.28 with
rpy2 3.5). rpy2 is used in-process for R's data and for leaps.

Outside ``make test`` these tests skip when R, rpy2 or the installed R wrapper
are missing; ``make test`` sets DPSUBSET_REQUIRE_R=true, which turns those skips
into failures.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = os.environ.get("DPSUBSET_REQUIRE_R") == "true"


def r_library():
    """The R library holding the installed wrapper (``make`` puts it in .venv/R-library)."""
    libs = [p for p in os.environ.get("R_LIBS", "").split(os.pathsep) if p]
    default = ROOT / ".venv" / "R-library"
    if default.is_dir():
        libs.append(str(default))
    return libs


def need(condition, why):
    """Skip (or fail under DPSUBSET_REQUIRE_R=true) unless ``condition``."""
    if condition:
        return
    if REQUIRED:
        pytest.fail(f"DPSUBSET_REQUIRE_R=true but {why}")
    pytest.skip(why)


def robjects():
    """rpy2's robjects with the wrapper's library on R's search path."""
    try:
        import rpy2.robjects as ro
    except Exception as exc:  # ImportError, or R not found by rpy2
        need(False, f"rpy2 cannot start R ({type(exc).__name__}: {exc})")
    libs = r_library()
    if libs:
        ro.globalenv["dps_libs"] = ro.StrVector(libs)
        ro.r(".libPaths(unique(c(dps_libs, .libPaths())))")
    return ro


def r_has(ro, package):
    return bool(ro.r(f'isTRUE(requireNamespace("{package}", quietly = TRUE))')[0])


def rscript(code, timeout=600):
    """Run R code in an Rscript child that uses this Python for the wrapper; return stdout."""
    exe = shutil.which("Rscript")
    need(exe is not None, "Rscript is not on PATH")
    env = dict(os.environ)
    libs = r_library()
    if libs:
        env["R_LIBS"] = os.pathsep.join(libs)
    env["RETICULATE_PYTHON"] = sys.executable
    proc = subprocess.run([exe, "--vanilla", "-e", code], capture_output=True, text=True, env=env,
                          timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"Rscript failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout
