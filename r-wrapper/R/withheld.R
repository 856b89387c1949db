# The quantities of lm/glm fits that a private fit may not have.
#
# R users reach them in three ways: methods (residuals(), confint(), sigma()),
# list fields (fit$residuals, fit$df.residual) and fields of the summary
# (summary(fit)$r.squared). Without this file R would return NULL for the
# fields (and for residuals(), fitted(), deviance() through their default
# methods) or fail with "no applicable method": both hide why.
#
# The R side never decides alone that a quantity is withheld: each accessor asks
# the Python result for the same quantity by its statsmodels name
# (dpsubset.interfaces.r_bridge.released). Where Python releases it (a private
# quantity, such as the intervals of a fit with private inference), the value
# comes back, converted to R; where Python raises NotReleasedError, its reason
# (why, and what to do instead) becomes the R condition "dpsubset_not_released";
# and where the Python result has no such quantity at all, the reason below does.

.withheld_reasons <- list(
  from_data = paste0(
    "it would be computed from the private (training) data and is not covered by the privacy ",
    "guarantee. Use predict(fit, newdata) on data you may use (public or held-out rows) and compare ",
    "with their response there."),
  inference = paste0(
    "dpsubset releases no standard errors, covariances, confidence intervals or tests: none is ",
    "computed privately, and a non-private one would leak the data. Report the DP coefficients with ",
    "their privacy report (summary(fit), tidy(fit), fit$privacy)."),
  fit_stat = paste0(
    "it is a goodness-of-fit statistic of the private (training) data and is not released privately. ",
    "To compare models, score them on public or held-out data with predict(fit, newdata).")
)

.not_released <- function(what, reason_text) {
  cond <- structure(class = c("dpsubset_not_released", "dpsubset_error", "error", "condition"),
                    list(message = sprintf("%s is not released for a dpsubset fit: %s", what, reason_text),
                         call = NULL))
  stop(cond)
}

.withheld <- function(what, reason) .not_released(what, .withheld_reasons[[reason]])

# Python's NotReleasedError message ("res.bse is not released: <why>.") -> <why>, in R's voice.
.python_reason <- function(msg) {
  .r_voice(sub("^res\\.[A-Za-z0-9_]+(\\(\\))? is not released: ", "", msg))
}

# A released value sent by r_bridge._plain_any -> R: a number, a named numeric
# vector, or a data.frame with row names (term names mapped to R's spelling by `map`).
.py_value <- function(out, map = NULL) {
  if (!is.null(out$frame)) {
    df <- .plain_frame(out$frame)
    rownames(df) <- .rename(.chr(out$index), map)
    return(df)
  }
  if (!is.null(out$values)) {
    v <- vapply(out$values, function(x) if (is.null(x)) NA_real_ else as.numeric(x), 0)
    if (!is.null(out$names)) names(v) <- .rename(.chr(out$names), map)
    return(v)
  }
  if (is.null(out$value)) NA else out$value
}

# Ask the Python result behind `object` (a fit, or its summary) for the quantity `py`
# (statsmodels' name; a method is called with `kwargs`). `what`: the R accessor, for
# the message; `reason`: the entry of .withheld_reasons used when Python has no such
# quantity at all.
.released <- function(object, py, what, reason, kwargs = NULL) {
  out <- .bridge()$released(.python_result(object), py, kwargs)
  err <- out$error
  if (is.null(err)) return(.py_value(out, object$terms_python))
  if (identical(err$type, "NotReleasedError")) .not_released(what, .python_reason(err$message))
  if (identical(err$type, "NotAvailable")) .withheld(what, reason)
  .raise_python_error(err, object$terms_python)
}

#' Quantities a private fit does not release
#'
#' `residuals()`, `fitted()`, `deviance()`, `vcov()`, `confint()`, `sigma()`,
#' `df.residual()`, `logLik()`, `AIC()`, `BIC()`, `anova()`, `hatvalues()`,
#' `cooks.distance()`, `rstandard()`, `rstudent()`, `model.frame()` and `model.matrix()` of a
#' `"dpsubset"` fit, the fields of an lm or glm fit that it does not have
#' (`fit$residuals`, `fit$fitted.values`, `fit$df.residual`, `fit$model`, ...)
#' and those of an lm summary (`summary(fit)$r.squared`, `$sigma`,
#' `$fstatistic`, ...) ask the Python result for the same quantity. Each of
#' them would be computed from the private data, and none is released
#' privately by default (the privacy guarantee covers the support and the DP
#' coefficients): each is then an error that says why and what to use instead,
#' never a silent `NULL`. Use [predict.dpsubset()] on data you may use, and
#' [summary.dpsubset()], [tidy.dpsubset()] and the privacy report
#' `fit$privacy` to report the fit. A quantity the Python package does release
#' privately (such as intervals from private inference, where available) is
#' returned instead: `confint()`, `vcov()` and `fit$selection_confidence` (the
#' selection confidence in words) of a fit made with `inference = TRUE`.
#'
#' The errors have class `"dpsubset_not_released"` (and `"dpsubset_error"`).
#' `predict(fit, newdata, interval = "confidence")`, `predict(..., se.fit =
#' TRUE)` and `tidy(fit, conf.int = TRUE)` follow the same rule.
#'
#' @param object,x A `"dpsubset"` fit (for `$`, a fit or its summary).
#' @param parm Terms (R's names) or their positions, for `confint()`.
#' @param level Confidence level, for `confint()`.
#' @param name The field asked for with `$`.
#' @param k,... Passed on where the quantity is released; otherwise unused.
#' @return The quantity, where the Python package releases it privately;
#'   otherwise each signals an error of class `"dpsubset_not_released"`.
#' @name dpsubset-not-released
#' @param model A `"dpsubset"` fit (for the influence measures).
#' @importFrom stats residuals fitted deviance vcov confint logLik AIC BIC anova sigma df.residual
#' @importFrom stats hatvalues cooks.distance rstandard rstudent terms model.frame model.matrix
#' @examplesIf dpsubset_available()
#' fit <- dp_best_subset(mpg ~ wt + hp + qsec, data = mtcars, eps = 1, s = 1,
#'                       bounds = dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), qsec = c(12, 25)),
#'                                                y = c(5, 50)), random_state = 1)
#' try(residuals(fit))
#' try(fit$residuals)
#' try(summary(fit)$r.squared)
NULL

#' @rdname dpsubset-not-released
#' @export
residuals.dpsubset <- function(object, ...) .released(object, "resid", "residuals()", "from_data")

#' @rdname dpsubset-not-released
#' @export
fitted.dpsubset <- function(object, ...) .released(object, "fittedvalues", "fitted()", "from_data")

#' @rdname dpsubset-not-released
#' @export
deviance.dpsubset <- function(object, ...) .released(object, "deviance", "deviance()", "fit_stat")

#' @rdname dpsubset-not-released
#' @export
vcov.dpsubset <- function(object, ...) {
  v <- as.matrix(.released(object, "cov_params", "vcov()", "inference"))
  colnames(v) <- .rename(colnames(v), object$terms_python)   # rows are renamed by .py_value
  v
}

#' @rdname dpsubset-not-released
#' @export
confint.dpsubset <- function(object, parm, level = 0.95, ...) {
  ci <- .confint_matrix(object, level, "confint()")
  if (missing(parm)) return(ci)
  bad <- if (is.character(parm)) setdiff(parm, rownames(ci)) else
    if (is.numeric(parm)) parm[is.na(parm) | parm < 1 | parm > nrow(ci) | parm != round(parm)] else NA
  if (length(bad)) {
    stop(sprintf("confint(): parm %s %s not a term of the fit; its terms are %s (or positions 1 to %d)",
                 paste(if (is.character(parm)) paste0("'", bad, "'") else format(bad), collapse = ", "),
                 if (length(bad) == 1L) "is" else "are", paste0("'", rownames(ci), "'", collapse = ", "),
                 nrow(ci)), call. = FALSE)
  }
  ci[parm, , drop = FALSE]
}

# Intervals of the coefficients from the Python result's conf_int(alpha), as confint() shows them.
.confint_matrix <- function(object, level, what) {
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1) {
    stop("level must be one number between 0 and 1, e.g. 0.95", call. = FALSE)
  }
  ci <- as.matrix(.released(object, "conf_int", what, "inference", list(alpha = 1 - level)))
  a <- (1 - level) / 2
  colnames(ci) <- paste(format(100 * c(a, 1 - a), trim = TRUE, scientific = FALSE, digits = 3), "%")
  ci
}

#' @rdname dpsubset-not-released
#' @export
sigma.dpsubset <- function(object, ...) sqrt(.released(object, "scale", "sigma()", "fit_stat"))

#' @rdname dpsubset-not-released
#' @export
df.residual.dpsubset <- function(object, ...) .released(object, "df_resid", "df.residual()", "inference")

#' @rdname dpsubset-not-released
#' @export
logLik.dpsubset <- function(object, ...) .released(object, "llf", "logLik()", "fit_stat")

#' @rdname dpsubset-not-released
#' @export
AIC.dpsubset <- function(object, ..., k = 2) {
  if (!identical(k, 2)) .withheld("AIC(k = ) other than 2", "fit_stat")
  .released(object, "aic", "AIC()", "fit_stat")
}

#' @rdname dpsubset-not-released
#' @export
BIC.dpsubset <- function(object, ...) .released(object, "bic", "BIC()", "fit_stat")

#' @rdname dpsubset-not-released
#' @export
anova.dpsubset <- function(object, ...) .released(object, "anova", "anova()", "inference")

#' @rdname dpsubset-not-released
#' @export
hatvalues.dpsubset <- function(model, ...) .released(model, "get_influence", "hatvalues()", "from_data")

#' @rdname dpsubset-not-released
#' @export
cooks.distance.dpsubset <- function(model, ...) .released(model, "get_influence", "cooks.distance()", "from_data")

#' @rdname dpsubset-not-released
#' @export
rstandard.dpsubset <- function(model, ...) .released(model, "resid_pearson", "rstandard()", "from_data")

#' @rdname dpsubset-not-released
#' @export
rstudent.dpsubset <- function(model, ...) .released(model, "get_influence", "rstudent()", "from_data")

#' @rdname dpsubset-not-released
#' @param formula A `"dpsubset"` fit (for `model.frame()`).
#' @export
model.frame.dpsubset <- function(formula, ...) .released(formula, "model_frame", "model.frame()", "from_data")

#' @rdname dpsubset-not-released
#' @export
model.matrix.dpsubset <- function(object, ...) .released(object, "exog", "model.matrix()", "from_data")

#' @export
terms.dpsubset <- function(x, ...) .fit_terms(x)

# Fields of lm and glm fits (and of their summaries) that a "dpsubset" object does
# not hold: name -> c(statsmodels' name of the quantity, reason when Python has none).
.fit_fields <- list(
  residuals = c("resid", "from_data"), fitted.values = c("fittedvalues", "from_data"),
  linear.predictors = c("fittedvalues", "from_data"), effects = c("effects", "from_data"),
  qr = c("qr", "from_data"), model = c("model_frame", "from_data"), y = c("endog", "from_data"),
  x = c("exog", "from_data"), weights = c("weights", "from_data"),
  prior.weights = c("weights", "from_data"), deviance = c("deviance", "fit_stat"),
  null.deviance = c("null_deviance", "fit_stat"), aic = c("aic", "fit_stat"),
  df.residual = c("df_resid", "inference"), df.null = c("df_null", "inference"),
  # released with inference = TRUE (the sentence; glance() has the bounds as numbers);
  # otherwise Python's reason says how to get it
  selection_confidence = c("selection_confidence", "inference")
)
.summary_fields <- list(
  r.squared = c("rsquared", "fit_stat"), adj.r.squared = c("rsquared_adj", "fit_stat"),
  sigma = c("scale", "fit_stat"), fstatistic = c("fvalue", "inference"),
  df = c("df_resid", "inference"), residuals = c("resid", "from_data"),
  cov.unscaled = c("normalized_cov_params", "inference"), aliased = c("aliased", "inference"),
  deviance = c("deviance", "fit_stat"), null.deviance = c("null_deviance", "fit_stat"),
  aic = c("aic", "fit_stat"), dispersion = c("scale", "fit_stat"),
  df.residual = c("df_resid", "inference"), cov.scaled = c("cov_params", "inference")
)

# `$` for a fit or a summary: its own fields as for a list (partial matching
# included), then the lm/glm fields it does not hold, asked from Python.
.dollar <- function(x, name, fields, prefix) {
  own <- names(unclass(x))
  if (name %in% own) return(.subset2(x, name))
  # lm's terms object (public: the formula's), not a partial match of terms_python
  if (identical(name, "terms") && "formula" %in% own) return(.fit_terms(x))
  hit <- pmatch(name, own)
  if (!is.na(hit)) return(.subset2(x, hit))
  f <- pmatch(name, names(fields))
  if (is.na(f)) return(NULL)
  field <- names(fields)[f]
  value <- .released(x, fields[[field]][1], paste0(prefix, "$", field), fields[[field]][2])
  if (is.character(value)) value <- .r_voice(value)   # a sentence (selection_confidence): R's spelling
  if (identical(fields[[field]][1], "scale") && field == "sigma") sqrt(value) else value
}

#' @rdname dpsubset-not-released
#' @export
`$.dpsubset` <- function(x, name) .dollar(x, name, .fit_fields, "fit")

#' @rdname dpsubset-not-released
#' @export
`$.summary.dpsubset` <- function(x, name) .dollar(x, name, .summary_fields, "summary(fit)")
