# Methods for "dpsubset" objects. They read only the released (private or
# public) fields of the object; predict() is the one that calls Python again.

.guarantee_words <- c(
  pure = "pure eps-differential privacy",
  approximate = "(eps, delta)-differential privacy",
  conditional = "eps-differential privacy only on data satisfying a condition that is not checked privately",
  void = "NO differential privacy guarantee"
)

.formula_string <- function(f) paste(deparse(f, width.cutoff = 500L), collapse = " ")

#' @export
print.dpsubset <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Differentially private best subset selection (dpsubset)\n")
  cat(sprintf("Formula: %s   [n = %d, %d candidate columns, s = %d, method %s, loss %s]\n",
              .formula_string(x$formula), x$nobs, length(x$candidates), x$s, x$method, x$loss))
  if (!is.null(x$response_levels)) {
    cat(sprintf("Classes: %s (coded -1), %s (coded +1)\n", x$response_levels[1], x$response_levels[2]))
  }
  cat("Selected:", if (length(x$support)) paste(x$support, collapse = ", ") else "(none)", "\n")
  if (!is.null(x$coefficients)) {
    cat("\nDP coefficients (zero for the", length(x$candidates) - length(x$support),
        "columns not selected):\n")
    print.default(format(coef(x, complete = FALSE), digits = digits), print.gap = 2L, quote = FALSE)
  } else {
    cat("\nNo coefficients (refit = FALSE).\n")
  }
  cat("\n")
  print(x$privacy, brief = TRUE)
  invisible(x)
}

#' @export
print.dpsubset_privacy <- function(x, brief = FALSE, ...) {
  cat(sprintf("Privacy: %s; total eps = %s, delta = %s\n", .guarantee_words[[x$guarantee]],
              format(x$eps, digits = 6), format(x$delta, digits = 3)))
  cat(strwrap(x$statement, indent = 2, exdent = 2), sep = "\n")
  if (length(x$leaks)) cat(paste0("  ! ", x$leaks), sep = "\n")
  if (!brief) {
    cat(sprintf("  neighbours: %s\n", x$neighbours))
    for (i in seq_len(nrow(x$stages))) {
      st <- x$stages[i, ]
      cat(sprintf("  - %s: %s (eps = %s, delta = %s)\n", st$stage, st$mechanism, format(st$eps, digits = 6),
                  format(st$delta, digits = 3)))
    }
    cat(sprintf("  score sensitivity Delta = %s\n", format(x$sensitivity, digits = 6)))
    if (!is.na(x$gap_check_passed)) {
      cat("  gap check:", if (x$gap_check_passed) "passed, mistakes ran\n" else "not passed, top-R ran\n")
    }
    cat(sprintf("  exact solves: %d of %d certified optimal\n", sum(x$certificates$closed),
                nrow(x$certificates)))
  }
  invisible(x)
}

#' Summarise a dpsubset fit
#'
#' @param object A `"dpsubset"` fit.
#' @param x A `"summary.dpsubset"` object.
#' @param digits Significant digits to print.
#' @param ... Unused.
#' @return `summary()` returns a list of class `"summary.dpsubset"`:
#'   `coefficients` (data.frame: term, estimate, status for the always-in and
#'   selected columns), `privacy` (the report), `stages`, and the fields of the
#'   fit it describes. There are no standard errors or p-values: they would be
#'   computed from the private data and are not covered by the guarantee.
#' @export
summary.dpsubset <- function(object, ...) {
  terms <- c(object$forced, object$support)
  est <- if (is.null(object$coefficients)) rep(NA_real_, length(terms)) else unname(object$coefficients[terms])
  coefs <- data.frame(term = terms, estimate = est,
                      status = c(rep("always in", length(object$forced)), rep("selected", length(object$support))),
                      stringsAsFactors = FALSE)
  structure(list(call = object$call, formula = object$formula, response = object$response, method = object$method,
                 loss = object$loss,
                 nobs = object$nobs, s = object$s, n_candidates = length(object$candidates),
                 not_selected = setdiff(object$candidates, object$support), coefficients = coefs,
                 stages = object$privacy$stages, privacy = object$privacy, refit = object$refit),
            class = "summary.dpsubset")
}

#' @rdname summary.dpsubset
#' @export
print.summary.dpsubset <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:\n", paste(deparse(x$call, width.cutoff = 80L), collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Private best subset selection: response %s, n = %d, method %s, loss %s\n", x$response, x$nobs,
              x$method, x$loss))
  cat(sprintf("Selected %d of %d candidate columns.\n\n", x$s, x$n_candidates))
  cf <- x$coefficients
  tab <- data.frame(Estimate = if (x$refit) format(cf$estimate, digits = digits) else "-", Status = cf$status,
                    row.names = cf$term, check.names = FALSE)
  cat(if (x$refit) "DP coefficients (objective perturbation on the selected support):\n" else
    "Columns in the model (refit = FALSE: no coefficients):\n")
  print(tab, right = TRUE)
  if (length(x$not_selected)) {
    cat(strwrap(paste0("Not selected (coefficient 0): ", paste(x$not_selected, collapse = ", ")), exdent = 2),
        sep = "\n")
  }
  cat("\nPrivacy budget:\n")
  st <- x$stages
  st <- rbind(st, data.frame(stage = "total", mechanism = "", eps = sum(st$eps), delta = sum(st$delta)))
  st$eps <- format(st$eps, digits = 6)
  st$delta <- format(st$delta, digits = 3)
  print(st, row.names = FALSE, right = FALSE)
  cat("\n")
  print(x$privacy, brief = TRUE)
  cat(sprintf("  score sensitivity Delta = %s; exact solves certified optimal: %d of %d\n",
              format(x$privacy$sensitivity, digits = 4), sum(x$privacy$certificates$closed),
              nrow(x$privacy$certificates)))
  cat("No standard errors or p-values: they would be computed from the private data.\n")
  invisible(x)
}

#' Coefficients of a dpsubset fit
#'
#' @param object A `"dpsubset"` fit.
#' @param complete `TRUE` (default): the always-in columns and every candidate,
#'   with zeros for the candidates that were not selected (as in the Python
#'   API). `FALSE`: only the always-in and the selected columns.
#' @param ... Unused.
#' @return A named numeric vector (`NULL` for a fit with `refit = FALSE`).
#' @export
coef.dpsubset <- function(object, complete = TRUE, ...) {
  cf <- object$coefficients
  if (is.null(cf) || isTRUE(complete)) return(cf)
  cf[c(object$forced, object$support)]
}

#' Predictions from a dpsubset fit
#'
#' New data are transformed by the same formula, clipped to the same public
#' bounds and mapped by the same public maps as the training data, then
#' multiplied by the DP coefficients (in Python).
#'
#' There is no default for `newdata`: dpsubset releases no fitted values,
#' since they would be computed from the private data and are not covered by
#' the guarantee. Pass data you are allowed to use (which may be the training
#' data, if you accept that).
#'
#' A fit saved with [saveRDS()] still predicts after [readRDS()] in a new
#' session: the Python result travels inside the object, pickled.
#'
#' @param object A `"dpsubset"` fit (with `refit = TRUE`).
#' @param newdata A data.frame with the columns the formula uses (the
#'   response is not needed).
#' @param ... Unused.
#' @return A numeric vector named by the row names of `newdata`.
#' @export
predict.dpsubset <- function(object, newdata, ...) {
  if (missing(newdata) || is.null(newdata)) {
    stop("predict() needs newdata: dpsubset releases no fitted values, since they would be computed from the ",
         "private data and are not covered by the privacy guarantee. Call predict(fit, newdata) with data you ",
         "may use.", call. = FALSE)
  }
  if (is.null(object$coefficients)) stop("predict() needs coefficients: fit with refit = TRUE", call. = FALSE)
  vars <- all.vars(object$formula[[3]])
  vars <- if ("." %in% vars) NULL else vars
  cols <- .encode_frame(newdata, vars, argname = "newdata")
  bridge <- .bridge()
  st <- object$.python
  res <- st$result
  if (is.null(res) || reticulate::py_is_null_xptr(res)) {
    # A fit read back with readRDS(): rebuild the Python result from its pickle, once.
    res <- bridge$result_from_pickle(st$pickle)
    st$result <- res
  }
  out <- bridge$predict(res, cols)
  if (!is.null(out$error)) .raise_python_error(out$error)
  .replay_warnings(out$warnings)
  stats::setNames(as.numeric(unlist(out$values)), rownames(newdata))
}

#' @export
nobs.dpsubset <- function(object, ...) object$nobs

#' @export
formula.dpsubset <- function(x, ...) x$formula

#' Tidy and glance at a dpsubset fit
#'
#' Methods for the generics of the 'generics' package (the ones 'broom' uses),
#' so that table tools that read broom output read dpsubset fits too.
#'
#' @param x A `"dpsubset"` fit.
#' @param ... Unused.
#' @return `tidy()`: a data.frame with one row per column of the model (the
#'   always-in columns, then every candidate) and columns `term`, `estimate`
#'   (the DP coefficient, 0 when not selected, `NA` when `refit = FALSE`),
#'   `selected` and `forced` (logical). `glance()`: a one-row data.frame with
#'   `nobs`, `method`, `loss`, `s`, `n_candidates`, `eps`, `delta`, `guarantee`,
#'   `sensitivity` and `certified` (all exact solves certified optimal).
#' @name tidy.dpsubset
#' @method tidy dpsubset
#' @export
tidy.dpsubset <- function(x, ...) {
  terms <- c(x$forced, x$candidates)
  est <- if (is.null(x$coefficients)) rep(NA_real_, length(terms)) else unname(x$coefficients[terms])
  data.frame(term = terms, estimate = est, selected = terms %in% x$support, forced = terms %in% x$forced,
             stringsAsFactors = FALSE)
}

#' @rdname tidy.dpsubset
#' @method glance dpsubset
#' @export
glance.dpsubset <- function(x, ...) {
  p <- x$privacy
  data.frame(nobs = x$nobs, method = x$method, loss = x$loss, s = x$s, n_candidates = length(x$candidates),
             eps = p$eps, delta = p$delta, guarantee = p$guarantee, sensitivity = p$sensitivity,
             certified = isTRUE(p$all_certificates_closed), stringsAsFactors = FALSE)
}

#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance

#' @importFrom stats coef predict nobs formula
NULL
