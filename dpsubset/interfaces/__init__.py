"""Ways into the package other than the Python API: the ``dpsubset`` command line
(:mod:`.cli`) and R, through the R wrapper's bridge (:mod:`.r_bridge`, reticulate). The
conversion of R data frames, which :func:`dpsubset.dp_best_subset` also needs for rpy2
objects, is the design stage's (:mod:`dpsubset.design.r_frames`), so that the API
never imports an entry point.

Each entry point only converts inputs and outputs; every computation is
:func:`dpsubset.dp_best_subset`'s.
"""
