# Finding the Python that runs dpsubset, and loading the bridge module.
#
# Every computation happens in the Python package dpsubset; this file decides
# which Python reticulate starts and turns a failure into a message that says
# what to do. The bridge module (dpsubset.interfaces.r_bridge) takes and returns plain
# values only, so reticulate's numpy/pandas conversion is never used (it breaks
# on numpy >= 2 and pandas >= 3 in reticulate 1.28).

.dps <- new.env(parent = emptyenv())

#' Which Python the dpsubset R package uses
#'
#' The R package is a thin interface: the fits run in the Python package
#' `dpsubset`, loaded through 'reticulate' the first time it is needed (the
#' first call of [dp_best_subset()] or [dpsubset_available()]). The Python is
#' chosen the way 'reticulate' users expect, in this order:
#'
#' 1. the environment variable `RETICULATE_PYTHON`, if set (for example to the
#'    `.venv/bin/python` that `make install` creates in a checkout of dpsubset);
#' 2. a Python that was chosen in this session before the first call, with
#'    [reticulate::use_python()] or [reticulate::use_virtualenv()];
#' 3. the virtualenv `"r-dpsubset"` (or the name in
#'    `options(dpsubset.envname = )`) if it exists, as created by
#'    [install_dpsubset()];
#' 4. otherwise whatever 'reticulate' finds on its own.
#'
#' If the chosen Python cannot import `dpsubset`, the call fails with a message
#' naming the Python that was tried and the two ways to fix it. 'reticulate'
#' starts one Python per R session: to switch, restart R.
#'
#' `dpsubset_available()` tells whether the Python package can be loaded, without
#' an error (it starts Python if it has not started yet). `dpsubset_python()`
#' returns the path of the Python in use, or `NA` if none was loaded.
#'
#' @return `dpsubset_available()`: `TRUE` or `FALSE`. `dpsubset_python()`: a
#'   string.
#' @seealso [install_dpsubset()]
#' @name dpsubset_python
#' @examples
#' dpsubset_available()
NULL

#' @rdname dpsubset_python
#' @export
dpsubset_available <- function() {
  ok <- tryCatch({
    .bridge()
    TRUE
  }, error = function(e) FALSE)
  ok
}

#' @rdname dpsubset_python
#' @export
dpsubset_python <- function() {
  if (!reticulate::py_available(initialize = FALSE)) return(NA_character_)
  cfg <- tryCatch(reticulate::py_config(), error = function(e) NULL)
  if (is.null(cfg)) NA_character_ else cfg$python
}

#' Install the Python package dpsubset into a virtualenv for R
#'
#' Creates (once) the virtualenv `envname` with 'reticulate' and installs the
#' Python package `dpsubset` into it with pip. The R package uses this
#' virtualenv automatically when `RETICULATE_PYTHON` is not set (see
#' [dpsubset_python]). Restart R afterwards if Python was already started in
#' this session.
#'
#' @param package What pip installs: the path of a dpsubset checkout (the
#'   folder with `pyproject.toml`), a wheel file, or a pip requirement.
#' @param envname Name (or path) of the virtualenv.
#' @param python The Python used to create the virtualenv (3.11 or newer);
#'   `NULL` lets 'reticulate' choose.
#' @param ... Passed to [reticulate::virtualenv_install()].
#' @return The virtualenv's name, invisibly.
#' @export
#' @examples
#' \dontrun{
#' install_dpsubset("~/src/dpsubset")
#' }
install_dpsubset <- function(package = "dpsubset", envname = getOption("dpsubset.envname", "r-dpsubset"),
                             python = NULL, ...) {
  if (!is.character(package) || length(package) != 1L) stop("package must be one string", call. = FALSE)
  # pip needs an absolute path to tell a local folder from a requirement name.
  if (file.exists(package)) package <- normalizePath(package)
  if (!reticulate::virtualenv_exists(envname)) reticulate::virtualenv_create(envname, python = python)
  reticulate::virtualenv_install(envname, packages = package, ...)
  message(sprintf("dpsubset is installed in the virtualenv '%s'. In a new R session, library(dpsubset) uses it.",
                  envname))
  invisible(envname)
}

# Point reticulate to the dpsubset virtualenv when the user has not chosen a
# Python (RETICULATE_PYTHON unset) and Python has not started yet.
.choose_python <- function() {
  if (reticulate::py_available(initialize = FALSE)) return(invisible(FALSE))
  if (nzchar(Sys.getenv("RETICULATE_PYTHON"))) return(invisible(FALSE))
  envname <- getOption("dpsubset.envname", "r-dpsubset")
  found <- tryCatch(reticulate::virtualenv_exists(envname), error = function(e) FALSE)
  if (isTRUE(found)) reticulate::use_virtualenv(envname, required = FALSE)
  invisible(isTRUE(found))
}

.no_python_message <- function(err) {
  py <- dpsubset_python()
  tried <- if (is.na(py)) "no Python could be started" else sprintf("the Python tried was %s", py)
  paste0(
    "The dpsubset R package needs the Python package 'dpsubset', and it could not be loaded (", tried, ").\n",
    "Python said: ", err, "\n",
    "To fix this, in a new R session, either\n",
    "  * point reticulate to a Python that has dpsubset installed, before library(dpsubset) is used:\n",
    "      Sys.setenv(RETICULATE_PYTHON = \"/path/to/dpsubset/.venv/bin/python\")\n",
    "    (`make install` in a dpsubset checkout creates that .venv), or\n",
    "  * install it once into a virtualenv that this package finds by itself:\n",
    "      dpsubset::install_dpsubset(\"/path/to/dpsubset\")\n",
    "See ?dpsubset_python."
  )
}

# The Python module dpsubset.interfaces.r_bridge, loaded once per session.
.bridge <- function() {
  if (!is.null(.dps$bridge)) return(.dps$bridge)
  .choose_python()
  mod <- tryCatch(reticulate::import("dpsubset.interfaces.r_bridge"), error = function(e) e)
  if (inherits(mod, "error")) {
    .dps$last_error <- conditionMessage(mod)
    stop(.no_python_message(conditionMessage(mod)), call. = FALSE)
  }
  .dps$bridge <- mod
  mod
}

# Re-raise, on the R side, the warnings Python recorded during a call, in R's
# voice (see messages.R): the message text only, its kind in the condition's
# class, as R's own warnings are. A PrivacyLeakWarning becomes an R warning of
# class "dpsubset_privacy_leak", a LowUtilityWarning one of class
# "dpsubset_low_utility", a PredictionClippedWarning one of class
# "dpsubset_prediction_clipped", a BallBindsWarning one of class "dpsubset_ball_binds"
# (each also "dpsubset_warning"), so that each can
# be caught on its own (withCallingHandlers / tryCatch); the others are
# "dpsubset_warning". `map`: formulaic names -> R names of the model's columns.
.replay_warnings <- function(ws, map = NULL) {
  for (w in ws) {
    cls <- switch(w$category,
                  PrivacyLeakWarning = c("dpsubset_privacy_leak", "dpsubset_warning"),
                  LowUtilityWarning = c("dpsubset_low_utility", "dpsubset_warning"),
                  PredictionClippedWarning = c("dpsubset_prediction_clipped", "dpsubset_warning"),
                  BallBindsWarning = c("dpsubset_ball_binds", "dpsubset_warning"),
                  "dpsubset_warning")
    cond <- structure(class = c(cls, "warning", "condition"),
                      list(message = .r_message(w$message, map), call = NULL))
    warning(cond)
  }
  invisible(NULL)
}

