# Methods for "dpsubset" objects. They read only the released (private or
# public) fields of the object; predict() is the one that calls Python again.

.guarantee_words <- c(
  pure = "pure eps-differential privacy",
  approximate = "(eps, delta)-differential privacy",
  conditional = "eps-differential privacy only on data satisfying a condition that is not checked privately",
  void = "NO differential privacy guarantee"
)

# The exact search in words: the same for every release of a method (a search that
# does not certify its answer releases nothing), never a count of the solves.
.search_words <- function(privacy) {
  if (isTRUE(privacy$exact_search)) "all solves certified optimal" else "not used by this method"
}

# Delta as the Python report words it: with bounds from the data it is a function of
# max |value|, so not shown; never "NaN".
.sensitivity_text <- function(privacy, digits) {
  if (!isTRUE(privacy$bounds_public)) return("not shown (bounds from data)")
  if (is.null(privacy$sensitivity) || is.na(privacy$sensitivity)) return("n/a")
  format(privacy$sensitivity, digits = digits)
}

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
  if (!is.null(x$privacy$selection_confidence)) {
    cat(strwrap(paste("Selection confidence:", x$privacy$selection_confidence), exdent = 2), sep = "\n")
  }
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
    cat(sprintf("  score sensitivity Delta = %s\n", .sensitivity_text(x, 6)))
    if (!is.na(x$gap_check_passed)) {
      cat("  gap check:", if (x$gap_check_passed) "passed, mistakes ran\n" else "not passed, top-R ran\n")
    }
    # no count or route of the solves: they depend on the data
    cat(sprintf("  exact search: %s\n", .search_words(x)))
    if (!is.null(x$selection_confidence)) {
      cat(strwrap(paste("selection confidence:", x$selection_confidence), indent = 2, exdent = 4), sep = "\n")
    }
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
#'   fit it describes. With `inference = TRUE` the coefficients also have
#'   `std.error`, `conf.low` and `conf.high` (private 95\% intervals) and
#'   `selection_confidence` holds the private bounds on the probability that
#'   the mechanism releases the best-scoring support, with its verdict (a list
#'   `low`, `high`, `level`, `verdict`; `NULL` when none was released). Without
#'   it there are no standard errors or p-values: none is released. The
#'   fields of an lm summary it does not hold (`r.squared`, `adj.r.squared`,
#'   `sigma`, `fstatistic`, ...) are errors that say why (see
#'   [dpsubset-not-released]), not `NULL`.
#' @export
summary.dpsubset <- function(object, ...) {
  terms <- c(object$forced, object$support)
  est <- if (is.null(object$coefficients)) rep(NA_real_, length(terms)) else unname(object$coefficients[terms])
  coefs <- data.frame(term = terms, estimate = est,
                      status = c(rep("always in", length(object$forced)), rep("selected", length(object$support))),
                      stringsAsFactors = FALSE)
  gl <- object$.glance
  intervals <- "std.error" %in% names(object$.tidy)   # released only with inference = TRUE
  if (intervals) {
    ci <- .confint_matrix(object, 0.95, "summary()")
    coefs$std.error <- object$.tidy$std.error[match(terms, object$.tidy$term)]
    coefs$conf.low <- unname(ci[terms, 1])
    coefs$conf.high <- unname(ci[terms, 2])
    coefs <- coefs[c("term", "estimate", "std.error", "conf.low", "conf.high", "status")]
  }
  confidence <- if ("selection_conf_low" %in% names(gl)) {
    list(low = gl$selection_conf_low, high = gl$selection_conf_high, level = gl$selection_conf_level,
         verdict = gl$selection_verdict)
  }
  structure(list(call = object$call, formula = object$formula, response = object$response, method = object$method,
                 loss = object$loss, intervals = intervals, selection_confidence = confidence,
                 inference_requested = "eps_inference" %in% names(gl),
                 inference_mode = if ("inference_mode" %in% names(gl)) gl$inference_mode,
                 ball_binds = isTRUE(gl$ball_binds), truth_in_ball = isTRUE(gl$truth_in_ball),
                 nobs = object$nobs, s = object$s, n_candidates = length(object$candidates),
                 not_selected = setdiff(object$candidates, object$support), coefficients = coefs,
                 stages = object$privacy$stages, privacy = object$privacy, refit = object$refit,
                 bounds_unused = object$bounds_unused,
                 terms_python = object$terms_python, .python = object$.python, .prototype = object$.prototype),
            class = "summary.dpsubset")
}

#' @rdname summary.dpsubset
#' @section Value of coef(summary(fit)):
#'   `coef(summary(fit))` is, as for lm, a numeric matrix with the terms in
#'   rows (the always-in and selected columns) and the columns `Estimate` and,
#'   with `inference = TRUE`, `Std. Error`, `z value` and `Pr(>|z|)` (private:
#'   from the released standard errors; the tests are normal, not t).
#' @export
coef.summary.dpsubset <- function(object, ...) {
  cf <- object$coefficients
  m <- matrix(cf$estimate, ncol = 1L, dimnames = list(cf$term, "Estimate"))
  if (isTRUE(object$intervals)) {
    z <- cf$estimate / cf$std.error
    m <- cbind(m, `Std. Error` = cf$std.error, `z value` = z, `Pr(>|z|)` = 2 * stats::pnorm(-abs(z)))
  }
  m
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
  if (isTRUE(x$intervals)) {   # the private std. errors and 95 % intervals (inference = TRUE)
    num <- function(v) ifelse(is.na(v), "", format(v, digits = digits))
    tab <- data.frame(Estimate = tab$Estimate, `Std. Error` = num(cf$std.error), `2.5 %` = num(cf$conf.low),
                      `97.5 %` = num(cf$conf.high), Status = cf$status, row.names = cf$term, check.names = FALSE)
  }
  cat(if (x$refit) "DP coefficients (objective perturbation on the selected support):\n" else
    "Columns in the model (refit = FALSE: no coefficients):\n")
  print(tab, right = TRUE)
  if (length(x$not_selected)) {
    cat(strwrap(paste0("Not selected (coefficient 0): ", paste(x$not_selected, collapse = ", ")), exdent = 2),
        sep = "\n")
  }
  if (length(x$bounds_unused)) {
    cat(strwrap(paste0("Codebook entries this formula does not use: ", paste(x$bounds_unused, collapse = ", ")),
                exdent = 2), sep = "\n")
  }
  cat("\nPrivacy budget:\n")
  st <- x$stages
  # the report's total: the sum of the stages, or with split = TRUE the larger part's (parallel composition)
  st <- rbind(st, data.frame(stage = "total", mechanism = "", eps = x$privacy$eps, delta = x$privacy$delta))
  # one line per stage, the mechanism last: its long names (the inference stages) would
  # wrap a printed data.frame into blocks
  cat(sprintf("  %s  eps = %s  delta = %s  %s", format(st$stage), format(format(st$eps, digits = 6)),
              format(format(st$delta, digits = 3)), st$mechanism), sep = "\n")
  cat("\n")
  print(x$privacy, brief = TRUE)
  cat(sprintf("  score sensitivity Delta = %s; exact search: %s\n",
              .sensitivity_text(x$privacy, 4), .search_words(x$privacy)))
  if (isTRUE(x$intervals)) {
    where <- if (identical(x$inference_mode, "split")) "refit on rows the selection did not see (refit = list(split = TRUE))" else
      "conditional on the released support"
    cat(strwrap(paste0("Std. errors and 95 % intervals: private, ", where, "; they account for the sampling ",
                       "and the privacy noise of the refit (the dpsubset documentation, page 'inference')."), exdent = 2),
        sep = "\n")
    if (isTRUE(x$ball_binds) && isTRUE(x$truth_in_ball)) {
      cat(strwrap(paste("The released coefficients lie on the sphere of the refit's ball: the ball binds, so they",
                        "are shrunk as a whole (where released columns are correlated, one of them may be pulled past 0",
                        "to the other sign); the intervals assume, as stated with inference = list(truth_in_ball = TRUE), that the",
                        "true coefficients lie inside the ball (the dpsubset documentation, page 'inference', \"When the",
                        "ball binds\")."), exdent = 2), sep = "\n")
    } else if (isTRUE(x$ball_binds)) {
      cat(strwrap(paste("The released coefficients lie on the sphere of the refit's ball: the ball binds, so they",
                        "are shrunk as a whole (where released columns are correlated, one of them may be pulled past 0",
                        "to the other sign) and the true coefficients may lie beyond the sphere. The intervals",
                        "allow for that: the end on the side where the truth may lie is that of least squares on",
                        "the private second moments (open, inf, for logistic), so they are wider than the refit's",
                        "own noise would make them (the dpsubset documentation, page 'inference', \"When the ball binds\")."),
                  exdent = 2), sep = "\n")
    }
  } else if (isTRUE(x$inference_requested)) {   # inference = TRUE with the hinge loss
    cat(strwrap(sprintf(paste("No standard errors or p-values: loss '%s' has no model of the response to",
                              "simulate from, so inference = TRUE gives no intervals for it."),
                        x$loss), exdent = 2), sep = "\n")
  } else {
    cat(strwrap(paste("No standard errors or p-values: none was requested (dp_best_subset(..., inference = TRUE)",
                      "releases them privately)."), exdent = 2), sep = "\n")
  }
  sc <- x$selection_confidence
  if (!is.null(sc)) {
    cat(strwrap(sprintf("Selection confidence: P(best-scoring support released) in [%s, %s] (%s%% confidence): %s",
                        format(sc$low, digits = 3), format(sc$high, digits = 3), format(100 * sc$level),
                        sc$verdict), exdent = 2), sep = "\n")
  }
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
#' For the regression losses (`"squared"`, `"huber"`) the predictions are in
#' the units of the response, whatever `type`. For the two-class losses, as for
#' [stats::predict.glm()]: `type = "link"` (the default) gives the linear
#' predictor (positive: the second of `fit$response_levels`), `type =
#' "response"` the probability of the second level (logistic loss only: the
#' smoothed hinge has no probability model), and `type = "class"` the predicted
#' class, a factor with the levels `fit$response_levels`.
#'
#' A fit saved with [saveRDS()] still predicts after [readRDS()] in a new
#' session: the Python result travels inside the object, pickled.
#'
#' @param object A `"dpsubset"` fit (with `refit = TRUE`).
#' @param newdata A data.frame with the columns the formula uses (the
#'   response is not needed), without missing values.
#' @param type `"link"`, `"response"` or `"class"` (see Details).
#' @param interval,level,se.fit As for [stats::predict.lm()]: intervals
#'   (`"confidence"` for the mean response, `"prediction"` for a new
#'   observation) at `level`, or standard errors of the mean response. They
#'   need a fit made with `inference = TRUE` (private, from the same bootstrap
#'   as `confint()`; the prediction interval adds a new observation's error
#'   at an upper 99 % confidence bound on the residual standard deviation, from
#'   the release's own private residual sum of squares, a stage of the privacy
#'   report: no further privacy cost at prediction time); without it the call
#'   is an error of class `"dpsubset_not_released"` that says why (see
#'   [dpsubset-not-released]). They are returned as `predict.lm()` returns them
#'   (a matrix `fit`, `lwr`, `upr`; a list with `fit` and `se.fit`), the mean
#'   response in the response's units (the probability of the second level for
#'   the logistic loss, which has no `"prediction"` interval: its new
#'   observations are classes).
#' @param ... Not used; an error if given (so that no argument is silently ignored).
#' @return A numeric vector named by the row names of `newdata`, or for
#'   `type = "class"` a factor; with `interval` or `se.fit`, see above.
#' @export
predict.dpsubset <- function(object, newdata, type = c("link", "response", "class"),
                             interval = c("none", "confidence", "prediction"), level = 0.95, se.fit = FALSE,
                             ...) {
  .no_dots("predict", ...)
  if (missing(newdata) || is.null(newdata)) {
    stop("predict() needs newdata: dpsubset releases no fitted values, since they would be computed from the ",
         "private data and are not covered by the privacy guarantee. Call predict(fit, newdata) with data you ",
         "may use.", call. = FALSE)
  }
  type <- match.arg(type)
  if (is.null(object$coefficients)) stop("predict() needs coefficients: fit with refit = TRUE", call. = FALSE)
  two_class <- !is.null(object$response_levels)
  if (type == "class" && !two_class) {
    stop(sprintf("type = \"class\" is for the two-class losses (logistic, hinge); this fit has loss = \"%s\": ",
                 object$loss), "use type = \"response\" (or \"link\", the same for this loss)", call. = FALSE)
  }
  if (type == "response" && two_class && object$loss != "logistic") {
    stop(sprintf("type = \"response\": the %s loss has no probability model, so there is no mean response; ",
                 object$loss),
         "use type = \"class\" for the class or type = \"link\" for the margin (or fit with ",
         "loss = \"logistic\" for probabilities)", call. = FALSE)
  }
  which <- if (two_class) c(link = "linear", response = "mean", class = "class")[[type]] else NULL
  vars <- all.vars(object$formula[[3]])
  vars <- if ("." %in% vars) NULL else vars
  if (is.data.frame(newdata)) .fail_on_missing(newdata, if (is.null(vars)) names(newdata) else vars, "newdata")
  cols <- .encode_frame(newdata, vars, argname = "newdata")
  interval <- match.arg(interval)
  if (interval != "none" || isTRUE(se.fit)) {
    return(.predict_intervals(object, cols, interval, level, isTRUE(se.fit), rownames(newdata)))
  }
  out <- .bridge()$predict(.python_result(object), cols, which)
  if (!is.null(out$error)) .raise_python_error(out$error, object$terms_python)
  .replay_warnings(out$warnings)
  if (!is.null(out$labels)) {
    lab <- vapply(out$labels, function(v) if (is.null(v)) NA_character_ else v, "")
    return(stats::setNames(factor(lab, levels = object$response_levels), rownames(newdata)))
  }
  stats::setNames(as.numeric(unlist(out$values)), rownames(newdata))
}

# Intervals or standard errors of predictions: asked from the Python result
# (r_bridge.prediction_frame), which releases them only where they are private.
.predict_intervals <- function(object, cols, interval, level, se.fit, rows) {
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1) {
    stop("level must be one number between 0 and 1, e.g. 0.95", call. = FALSE)
  }
  what <- if (interval != "none") sprintf("predict(interval = \"%s\")", interval) else "predict(se.fit = TRUE)"
  if (interval == "prediction" && !is.null(object$response_levels)) {
    stop(sprintf(paste0("predict(interval = \"prediction\"): a two-class response (loss = \"%s\") has no ",
                        "prediction interval, since its new observations are classes; use interval = ",
                        "\"confidence\" for the probability's interval"), object$loss), call. = FALSE)
  }
  out <- .bridge()$prediction_frame(.python_result(object), cols, 1 - level)
  err <- out$error
  if (!is.null(err)) {
    if (err$type %in% c("NotReleasedError", "NotAvailable")) {
      reason <- if (err$type == "NotReleasedError") .python_reason(err$message) else .withheld_reasons$inference
      .not_released(what, reason)
    }
    .raise_python_error(err, object$terms_python)
  }
  pf <- .py_value(out)
  fit <- stats::setNames(pf$mean, rows)
  if (interval != "none") {
    side <- if (interval == "confidence") "mean_ci_" else "obs_ci_"
    fit <- cbind(fit = pf$mean, lwr = pf[[paste0(side, "lower")]], upr = pf[[paste0(side, "upper")]])
    rownames(fit) <- rows
  }
  if (!se.fit) return(fit)
  list(fit = fit, se.fit = stats::setNames(pf$mean_se, rows))
}

# Arguments in `...` that a method does not use are errors, not silently ignored.
.no_dots <- function(fn, ...) {
  if (...length()) {
    nms <- names(list(...))
    nms <- if (is.null(nms)) rep("", ...length()) else nms
    nms[!nzchar(nms)] <- "(unnamed)"
    stop(sprintf("%s(): unknown argument(s) %s; see ?%s.dpsubset", fn, paste(nms, collapse = ", "), fn),
         call. = FALSE)
  }
  invisible()
}

# The Python result behind a fit; rebuilt from its pickle once after readRDS().
.python_result <- function(object) {
  st <- object$.python
  res <- st$result
  if (is.null(res) || reticulate::py_is_null_xptr(res)) {
    res <- .bridge()$result_from_pickle(st$pickle)
    st$result <- res
  }
  res
}

#' @export
nobs.dpsubset <- function(object, ...) object$nobs

# The fit's terms as lm() has them: '.' expanded over the data's columns (their names
# and types only: the fit keeps a data.frame of zero rows), so that update(fit, . ~ . - hp)
# and terms(fit) work on a fit of mpg ~ . as they do on lm's.
.fit_terms <- function(x) {
  proto <- .subset2(x, ".prototype")
  f <- .subset2(x, "formula")
  if (is.null(proto)) stats::terms(f) else stats::terms(f, data = proto)
}

#' @export
formula.dpsubset <- function(x, ...) {
  f <- stats::formula(.fit_terms(x))   # as formula(lm(y ~ ., d)): the '.' expanded
  environment(f) <- globalenv()        # never the caller's frame (it may hold the data)
  f
}

# A data.frame as a tibble when the tibble package is installed (as broom returns).
.as_tibble <- function(df) {
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

#' Tidy, glance at and augment a dpsubset fit
#'
#' Methods for the generics of the 'generics' package (the ones 'broom' uses),
#' with the same columns, names and values as the Python API's `tidy()` and
#' `glance()`. They return a tibble when the 'tibble' package is installed, a
#' data.frame otherwise. Table packages that read broom output, such as
#' 'modelsummary', find `term` and `estimate` here, and, for a fit made with
#' `inference = TRUE`, broom's `std.error`, `statistic` and `p.value` (private:
#' from the Python package's private inference; `NA` for the columns not
#' selected). Without `inference = TRUE` these columns are absent, not `NA`:
#' none is released. For a table of several fits, see [summary_table()].
#'
#' `augment()` works on new data only: it returns `newdata` with the column
#' `.fitted` (from [predict.dpsubset()], `type = type.predict`). Without
#' `newdata` it is an error, since fitted values and residuals of the training
#' data would be computed from the private data.
#'
#' @param x A `"dpsubset"` fit.
#' @param conf.int,conf.level As for broom's `tidy.lm()`: add the columns
#'   `conf.low` and `conf.high` of intervals at `conf.level`. They are asked
#'   from the Python result (its `conf_int()`): without private intervals the
#'   call is an error of class `"dpsubset_not_released"` that says why (see
#'   [dpsubset-not-released]), never a table without them.
#' @param newdata A data.frame you may use (for `augment()`).
#' @param type.predict Passed to [predict.dpsubset()] as `type`.
#' @param ... Unused.
#' @return `tidy()`: one row per column of the model (the always-in columns,
#'   then every candidate), with `term` (R's name, as in `coef()`), `estimate`
#'   (the DP coefficient, 0 when not selected, `NA` when `refit = FALSE`),
#'   `selected`, `forced`, `status` (`"forced"`, `"selected"` or `"not
#'   selected"`), `clip_lo` and `clip_hi` (the public clipping interval; `NA`
#'   for the intercept and when the bounds were taken from the data); with
#'   `inference = TRUE`, `std.error`, `statistic`, `p.value` after `estimate`
#'   (and `conf.low`, `conf.high` with `conf.int = TRUE`).
#'   `glance()`: one row with `nobs`, `n_candidates`, `n_forced`, `s`, `method`,
#'   `loss`, `refit`, `eps`, `delta`, `eps_select`, `eps_refit`, `guarantee`,
#'   `seeded` (`TRUE` when `random_state` was given: the release is then private
#'   only while the seed is secret), `sensitivity`, `certificates_closed`
#'   (`TRUE` for every fit: a search that does not certify releases nothing),
#'   `gap_check_passed`, `bounds_public`, `r`, `lam`, `formula` (the R
#'   formula) and `response`; with `inference = TRUE` also `eps_inference`,
#'   `inference_mode` (`"conditional"` or `"split"`), `ball_binds` (`TRUE` when
#'   the released coefficients lie on the sphere of the refit's ball: the
#'   truth may then lie beyond it, and the intervals reach out on that side,
#'   to `Inf` for logistic), `truth_in_ball` (`TRUE` when you stated that the
#'   true coefficients lie inside that ball) and the selection
#'   confidence: `selection_conf_low`, `selection_conf_high` (bounds on the
#'   probability that the mechanism releases the best-scoring support),
#'   `selection_conf_level` and `selection_verdict` (in words). No count of the
#'   exact solves: it depends on the data. `augment()`: `newdata` plus `.fitted`.
#' @name tidy.dpsubset
#' @method tidy dpsubset
#' @export
tidy.dpsubset <- function(x, conf.int = FALSE, conf.level = 0.95, ...) {
  .no_dots("tidy", ...)
  td <- x$.tidy
  if (isTRUE(conf.int)) {
    ci <- .confint_matrix(x, conf.level, "tidy(conf.int = TRUE)")
    where <- match(td$term, rownames(ci))
    td$conf.low <- unname(ci[where, 1])
    td$conf.high <- unname(ci[where, 2])
    # broom's order: term, estimate, std.error, statistic, p.value, conf.low, conf.high, ...
    after <- max(match(c("estimate", "std.error", "statistic", "p.value"), names(td)), na.rm = TRUE)
    rest <- setdiff(names(td), c("conf.low", "conf.high"))
    td <- td[c(rest[seq_len(after)], "conf.low", "conf.high", rest[-seq_len(after)])]
  }
  .as_tibble(td)
}

#' @rdname tidy.dpsubset
#' @method glance dpsubset
#' @export
glance.dpsubset <- function(x, ...) {
  .as_tibble(x$.glance)
}

#' @rdname tidy.dpsubset
#' @method augment dpsubset
#' @export
augment.dpsubset <- function(x, newdata = NULL, type.predict = c("link", "response", "class"), ...) {
  if (is.null(newdata)) {
    stop("augment() needs newdata: dpsubset releases no fitted values or residuals of the training data, ",
         "since they would be computed from the private data and are not covered by the privacy guarantee. ",
         "Call augment(fit, newdata = ...) with data you may use.", call. = FALSE)
  }
  type.predict <- match.arg(type.predict)
  out <- newdata
  out$.fitted <- unname(predict.dpsubset(x, newdata, type = type.predict))
  .as_tibble(out)
}

#' Several dpsubset fits side by side
#'
#' Terms in rows (R's names), fits in columns, and the privacy accounting of
#' each fit (method, loss, refit, s, p, n, eps and its split, delta, guarantee,
#' seeded, certificates) in the rows at the bottom: the Python package's
#' `summary_table()`, called on the fits.
#'
#' @param fits A `"dpsubset"` fit or a list of them (names of the list are
#'   used as column headings when `model_names` is not given), optionally with
#'   non-private `lm()` or `glm()` fits beside them, as modelsummary takes them:
#'   `list(DP = fit, OLS = lm(mpg ~ wt + hp, mtcars))`. Such a column is labelled
#'   NOT private (its guarantee row says "none" and a note under the table says so).
#' @param model_names Column headings, one per fit.
#' @param fmt `"text"`, `"markdown"`, `"latex"`, `"html"` (a string; print it
#'   with `cat()`) or `"frame"` (a data.frame of strings, terms as row names).
#' @param statistic What is shown under each coefficient of a fit made with
#'   `inference = TRUE`: `"std_error"` (default: the private standard error in
#'   parentheses, the usual layout of a paper), `"conf_int"` (the private
#'   interval at `conf_level`, in brackets) or `NULL` (nothing). A fit without
#'   private inference shows none, and the table's note says so.
#' @param conf_level Level of the intervals of `statistic = "conf_int"`.
#' @param ... Further arguments of the Python `summary_table()` by name, e.g.
#'   `title = "..."`, `all_terms = TRUE`, `coef_map = c(wt = "Weight", hp = "Horsepower")`
#'   (modelsummary's named vector: these rows, in this order, with these labels),
#'   `labels = c(wt = "Weight")` (rename only), `size = "small"`, `resize = TRUE`,
#'   `abbreviate = FALSE` (LaTeX).
#' @return A string of class `"dpsubset_table"` (printed as is), or a data.frame
#'   (the row under a term is named `"<term> (std. error)"` or `"<term> (conf. int.)"`).
#' @export
summary_table <- function(fits, model_names = NULL, fmt = c("text", "markdown", "latex", "html", "frame"),
                          statistic = "std_error", conf_level = 0.95, ...) {
  if (inherits(fits, c("dpsubset", "lm"))) fits <- list(fits)
  ok <- vapply(fits, inherits, NA, c("dpsubset", "lm"))
  if (!is.list(fits) || !length(fits) || !all(ok) || !any(vapply(fits, inherits, NA, "dpsubset"))) {
    what <- if (is.list(fits) && length(fits) && !all(ok)) {
      sprintf(" (element %d is of class %s)", which(!ok)[1], class(fits[[which(!ok)[1]]])[1])
    } else ""
    stop("fits must be a dpsubset fit or a list of them, optionally with non-private lm() or glm() fits ",
         "beside them (shown as NOT private), e.g. list(DP = fit, OLS = lm(mpg ~ wt + hp, mtcars))", what,
         call. = FALSE)
  }
  fmt <- match.arg(fmt)
  if (!is.null(statistic) && !(is.character(statistic) && length(statistic) == 1L &&
                               statistic %in% c("std_error", "conf_int"))) {
    stop("statistic must be \"std_error\" (standard errors in parentheses), \"conf_int\" (intervals in ",
         "brackets) or NULL (nothing under the coefficients)", call. = FALSE)
  }
  if (!is.numeric(conf_level) || length(conf_level) != 1L || is.na(conf_level) || conf_level <= 0 ||
      conf_level >= 1) {
    stop("conf_level must be one number between 0 and 1, e.g. 0.95", call. = FALSE)
  }
  if (is.null(model_names) && !is.null(names(fits)) && all(nzchar(names(fits)))) model_names <- names(fits)
  if (!is.null(model_names)) model_names <- as.list(as.character(model_names))
  fits <- unname(fits)  # a named R list would reach Python as a dict
  renames <- lapply(fits, function(f) as.list(f$terms_python))
  options <- c(list(statistic = statistic, conf_level = as.numeric(conf_level)), .table_options(list(...)))
  py <- lapply(fits, function(f) if (inherits(f, "dpsubset")) .python_result(f) else .lm_baseline(f))
  out <- .bridge()$summary_table(py, model_names, fmt, renames, options)
  if (!is.null(out$error)) .raise_python_error(out$error)
  if (!is.null(out$frame)) {
    df <- .plain_frame(out$frame)
    rownames(df) <- .chr(out$index)
    return(df)
  }
  structure(out$text, class = "dpsubset_table")
}

# An lm() or glm() fit as plain numbers for the table (r_bridge: PlainBaseline): NOT private.
.lm_baseline <- function(f) {
  cf <- stats::coef(f)
  cf <- cf[!is.na(cf)]   # aliased terms have no estimate
  se <- tryCatch(sqrt(diag(stats::vcov(f)))[names(cf)], error = function(e) NULL)
  gaussian <- !inherits(f, "glm") || identical(f$family$family, "gaussian")
  list(names = as.list(names(cf)), coef = as.list(unname(cf)), se = if (!is.null(se)) as.list(unname(se)),
       nobs = as.integer(stats::nobs(f)), response = paste(deparse(stats::formula(f)[[2L]]), collapse = ""),
       method = class(f)[1], df_resid = if (gaussian) as.numeric(f$df.residual) else NULL)
}

# R spellings of the table's options: modelsummary's coef_map = c(wt = "Weight") (a
# named character vector) and labels as a named vector become named lists (a dict);
# an unnamed character vector of terms, a list.
.table_options <- function(opts) {
  for (nm in intersect(c("coef_map", "labels"), names(opts))) {
    v <- opts[[nm]]
    if (is.null(v) || is.function(v)) next
    if (!(is.character(v) || (is.list(v) && all(vapply(v, is.character, NA))))) {
      stop(sprintf(paste0("%s: give a named character vector such as c(wt = \"Weight\", hp = ",
                          "\"Horsepower\")%s"), nm,
                   if (nm == "coef_map") " (rows in that order, others dropped), or a character vector of terms" else ""),
           call. = FALSE)
    }
    v <- unlist(v)
    if (is.null(names(v))) {
      if (nm == "labels") stop("labels: every entry must be named, e.g. c(wt = \"Weight\")", call. = FALSE)
      opts[[nm]] <- as.list(unname(v))
    } else {
      if (any(!nzchar(names(v)))) stop(sprintf("%s: every entry must be named by a term", nm), call. = FALSE)
      opts[[nm]] <- as.list(v)
    }
  }
  opts
}

#' @export
print.dpsubset_table <- function(x, ...) {
  cat(x, "\n", sep = "")
  invisible(x)
}

#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance

#' @importFrom generics augment
#' @export
generics::augment

#' @importFrom stats coef predict nobs formula
NULL
