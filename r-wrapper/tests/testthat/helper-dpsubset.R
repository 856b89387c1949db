# Tests that call Python skip when the Python package dpsubset cannot be loaded
# (as under R CMD check on a machine without it). `make test` sets
# DPSUBSET_REQUIRE_PYTHON=true: there a missing Python is a failure, not a skip.
skip_if_no_python <- function() {
  ok <- dpsubset::dpsubset_available()
  if (!ok && identical(Sys.getenv("DPSUBSET_REQUIRE_PYTHON"), "true")) {
    stop("DPSUBSET_REQUIRE_PYTHON=true but the Python package dpsubset cannot be loaded: ",
         dpsubset:::.dps$last_error)
  }
  testthat::skip_if_not(ok, "the Python package dpsubset is not available (set RETICULATE_PYTHON)")
}

# Public bounds for mtcars from what cars of the 1970s can be, not from the data:
# one codebook for every formula (entries for columns a formula does not use are
# listed in fit$bounds_unused). `cols`: only the bounds of these columns.
mtcars_bounds <- function(cols = NULL) {
  x <- list(cyl = c(2, 12), disp = c(50, 500), hp = c(40, 400), drat = c(2, 5.5), wt = c(1, 6),
            qsec = c(12, 25), vs = c(0, 1), am = c(0, 1), gear = c(3, 6), carb = c(1, 8))
  if (!is.null(cols)) x <- x[cols]
  dpsubset_bounds(x = x, y = c(5, 50))
}

# Simulated data whose best support is clear.
sim_data <- function(n = 200, p = 8, seed = 1) {
  set.seed(seed)
  X <- matrix(runif(n * p, -1, 1), n, p, dimnames = list(NULL, paste0("x", seq_len(p))))
  y <- 0.8 * X[, 1] - 0.6 * X[, 2] + 0.5 * X[, 3] + rnorm(n, sd = 0.05)
  data.frame(y = pmax(pmin(y, 2), -2), X)
}
