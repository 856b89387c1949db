# The methods of lm/glm fits that a private fit does not have.
#
# Each of them would be computed from the private (training) data, and none is
# released privately. Without a method R would return NULL (residuals, fitted,
# deviance) or fail with "no applicable method" (vcov, confint, logLik, AIC,
# BIC, anova); both hide why. Each method here is an error that says why the
# quantity is withheld and what to do instead, as predict() without newdata does.

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

.withheld <- function(what, reason) {
  cond <- structure(class = c("dpsubset_not_released", "dpsubset_error", "error", "condition"),
                    list(message = sprintf("%s is not released for a dpsubset fit: %s", what,
                                           .withheld_reasons[[reason]]),
                         call = NULL))
  stop(cond)
}

#' Quantities a private fit does not release
#'
#' `residuals()`, `fitted()`, `deviance()`, `vcov()`, `confint()`, `logLik()`,
#' `AIC()`, `BIC()` and `anova()` are errors for a `"dpsubset"` fit, with a
#' message that says why and what to use instead: each would be computed from
#' the private data, and none is released privately (the privacy guarantee
#' covers the support and the DP coefficients only). Use [predict.dpsubset()]
#' on data you may use, and [summary.dpsubset()], [tidy.dpsubset()] and the
#' privacy report `fit$privacy` to report the fit.
#'
#' The errors have class `"dpsubset_not_released"` (and `"dpsubset_error"`).
#'
#' @param object A `"dpsubset"` fit.
#' @param parm,level,k,... Ignored: the quantity is not released whatever they are.
#' @return Nothing: each signals an error.
#' @name dpsubset-not-released
#' @importFrom stats residuals fitted deviance vcov confint logLik AIC BIC anova
#' @examplesIf dpsubset_available()
#' fit <- dp_best_subset(mpg ~ wt + hp + qsec, data = mtcars, eps = 1, s = 1,
#'                       bounds = dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), qsec = c(12, 25)),
#'                                                y = c(5, 50)), random_state = 1)
#' try(residuals(fit))
NULL

#' @rdname dpsubset-not-released
#' @export
residuals.dpsubset <- function(object, ...) .withheld("residuals()", "from_data")

#' @rdname dpsubset-not-released
#' @export
fitted.dpsubset <- function(object, ...) .withheld("fitted()", "from_data")

#' @rdname dpsubset-not-released
#' @export
deviance.dpsubset <- function(object, ...) .withheld("deviance()", "fit_stat")

#' @rdname dpsubset-not-released
#' @export
vcov.dpsubset <- function(object, ...) .withheld("vcov()", "inference")

#' @rdname dpsubset-not-released
#' @export
confint.dpsubset <- function(object, parm, level = 0.95, ...) .withheld("confint()", "inference")

#' @rdname dpsubset-not-released
#' @export
logLik.dpsubset <- function(object, ...) .withheld("logLik()", "fit_stat")

#' @rdname dpsubset-not-released
#' @export
AIC.dpsubset <- function(object, ..., k = 2) .withheld("AIC()", "fit_stat")

#' @rdname dpsubset-not-released
#' @export
BIC.dpsubset <- function(object, ...) .withheld("BIC()", "fit_stat")

#' @rdname dpsubset-not-released
#' @export
anova.dpsubset <- function(object, ...) .withheld("anova()", "inference")
