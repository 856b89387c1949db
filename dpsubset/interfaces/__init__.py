"""Ways into the package other than the Python API: the ``dpsubset`` command line
(:mod:`.cli`) and R, through the R wrapper's bridge (:mod:`.r_bridge`, reticulate)
and the conversion of R data frames (:mod:`.r_frames`, also used by
:func:`dpsubset.dp_best_subset` for rpy2 objects).

Each entry point only converts inputs and outputs; every computation is
:func:`dpsubset.dp_best_subset`'s.
"""
