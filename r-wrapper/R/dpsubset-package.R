#' dpsubset: differentially private best subset selection
#'
#' The R interface to the Python package dpsubset. Start with
#' [dp_best_subset()]; [dpsubset_python] says how the Python is found.
#'
#' @keywords internal
"_PACKAGE"
