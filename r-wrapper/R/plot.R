# A picture of a fit: the released coefficients with their private intervals, and any
# non-private fits (lm, glm) beside them, marked as such. Base graphics only.

# The rows one fit contributes: term, estimate, lower, upper (NA: no interval released).
.plot_rows <- function(f, level, intercept) {
  if (inherits(f, "dpsubset")) {
    if (is.null(f$coefficients)) stop("plot(): the fit has no coefficients (refit = FALSE)", call. = FALSE)
    terms <- c(f$forced, f$support)          # unselected terms are not estimates of 0: not drawn
    est <- unname(f$coefficients[terms])
    ci <- tryCatch(confint(f, level = level), dpsubset_not_released = function(e) NULL)
    lo <- if (is.null(ci)) rep(NA_real_, length(terms)) else unname(ci[terms, 1])
    hi <- if (is.null(ci)) rep(NA_real_, length(terms)) else unname(ci[terms, 2])
    private <- TRUE
  } else {
    cf <- stats::coef(f)
    cf <- cf[!is.na(cf)]
    terms <- names(cf)
    est <- unname(cf)
    ci <- tryCatch(suppressMessages(stats::confint.default(f, level = level)), error = function(e) NULL)
    if (inherits(f, "lm") && !inherits(f, "glm")) ci <- stats::confint(f, level = level)
    lo <- unname(ci[terms, 1])
    hi <- unname(ci[terms, 2])
    private <- FALSE
  }
  out <- data.frame(term = terms, estimate = est, lower = lo, upper = hi, private = private,
                    stringsAsFactors = FALSE)
  if (!intercept) out <- out[out$term != "(Intercept)", , drop = FALSE]
  out
}

#' Plot the coefficients of a dpsubset fit
#'
#' A dot-and-whisker plot of the released coefficients (the always-in and the
#' selected columns) with their private intervals at `level` (a fit made with
#' `inference = TRUE`; otherwise points only, and the subtitle says that no
#' interval is released). Columns that were not selected are not drawn (their
#' coefficient is 0 by selection, not an estimate); the subtitle names them.
#' Further fits go in `compare`: other dpsubset fits, and non-private `lm()` or
#' `glm()` fits, drawn with open symbols and labelled "NOT private" in the
#' legend, which sits outside the plotting region.
#'
#' @param x A `"dpsubset"` fit.
#' @param compare A named list of further fits (dpsubset, lm or glm), e.g.
#'   `list(OLS = lm(mpg ~ wt + hp, mtcars))`.
#' @param level Level of the intervals.
#' @param intercept Draw the intercept too (default `FALSE`: its scale is often another).
#' @param main,xlab Title and axis label.
#' @param ... Passed to [graphics::plot.default()].
#' @return `x`, invisibly; the data drawn are in `attr(, "plotted")`.
#' @export
#' @examplesIf dpsubset_available()
#' b <- dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), qsec = c(12, 25)), y = c(5, 50))
#' fit <- dp_best_subset(mpg ~ wt + hp + qsec, data = mtcars, eps = 4, s = 2, bounds = b,
#'                       inference = TRUE)
#' plot(fit, compare = list(OLS = lm(mpg ~ wt + hp + qsec, mtcars)))
plot.dpsubset <- function(x, compare = NULL, level = 0.95, intercept = FALSE, main = NULL,
                          xlab = "coefficient (units of the data)", ...) {
  if (!is.null(compare)) {
    if (inherits(compare, c("dpsubset", "lm"))) compare <- list(compare)
    if (!is.list(compare) || !all(vapply(compare, inherits, NA, c("dpsubset", "lm")))) {
      stop("plot(): compare must be a list of dpsubset, lm or glm fits, e.g. list(OLS = lm(mpg ~ wt, mtcars))",
           call. = FALSE)
    }
  }
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1) {
    stop("plot(): level must be one number between 0 and 1, e.g. 0.95", call. = FALSE)
  }
  fits <- c(list(x), compare)
  labels <- c("DP", if (length(compare)) {
    nm <- names(compare)
    if (is.null(nm)) nm <- rep("", length(compare))
    ifelse(nzchar(nm), nm, paste0("fit ", seq_along(compare) + 1L))
  })
  rows <- lapply(seq_along(fits), function(i) cbind(.plot_rows(fits[[i]], level, intercept), fit = labels[i]))
  d <- do.call(rbind, rows)
  terms <- unique(d$term)
  if (!length(terms)) stop("plot(): no coefficient to draw (only the intercept; try intercept = TRUE)", call. = FALSE)
  k <- length(fits)
  off <- if (k > 1L) seq(0.25, -0.25, length.out = k) else 0   # the first fit on top
  d$y <- match(d$term, rev(terms)) + off[match(d$fit, labels)]
  rng <- range(c(d$estimate, d$lower, d$upper, 0), finite = TRUE, na.rm = TRUE)
  not_sel <- setdiff(x$candidates, x$support)
  no_ci <- all(is.na(d$lower[d$fit == "DP"]))
  sub <- paste0(if (length(not_sel)) paste0("DP: not selected (not drawn): ", paste(not_sel, collapse = ", ")) else "",
                if (no_ci) paste0(if (length(not_sel)) "; " else "", "no private intervals (inference = FALSE)") else
                  sprintf("%s%g%% private intervals", if (length(not_sel)) "; " else "", 100 * level))
  legend_lab <- ifelse(vapply(fits, inherits, NA, "dpsubset"), labels, paste(labels, "(NOT private)"))
  op <- graphics::par(mar = c(6.5, max(4.1, 0.5 + 0.55 * max(nchar(terms))), 4.1, 2.1), xpd = FALSE)
  on.exit(graphics::par(op), add = TRUE)
  graphics::plot.default(d$estimate, d$y, type = "n", xlim = rng, ylim = c(0.5, length(terms) + 0.5),
                         yaxt = "n", ylab = "", xlab = xlab,
                         main = if (is.null(main)) sprintf("dpsubset: %s", .formula_string(x$formula)) else main,
                         ...)
  graphics::mtext(sub, side = 3, line = 0.4, cex = 0.75)
  graphics::axis(2, at = rev(seq_along(terms)), labels = terms, las = 1,
                 cex.axis = if (length(terms) > 8) 0.8 else 1)
  graphics::abline(v = 0, lty = 3, col = "grey50")
  cols <- grDevices::palette.colors(max(k, 2L), "Okabe-Ito")[seq_len(k) + 1L]
  cols[is.na(cols)] <- "black"
  for (i in seq_len(k)) {
    di <- d[d$fit == labels[i], , drop = FALSE]
    ok <- !is.na(di$lower)
    if (any(ok)) graphics::segments(di$lower[ok], di$y[ok], di$upper[ok], di$y[ok], col = cols[i], lwd = 2)
    graphics::points(di$estimate, di$y, pch = if (inherits(fits[[i]], "dpsubset")) 19 else 1, col = cols[i],
                     cex = 1.2)
  }
  # the legend under the axis title, in the margin: never on the points
  graphics::legend(x = mean(graphics::par("usr")[1:2]), y = graphics::grconvertY(0.01, "ndc", "user"),
                   xjust = 0.5, yjust = 0, legend = legend_lab, col = cols,
                   pch = ifelse(vapply(fits, inherits, NA, "dpsubset"), 19, 1), lwd = 2, horiz = TRUE, bty = "n",
                   xpd = NA, cex = 0.85)
  attr(x, "plotted") <- d
  invisible(x)
}
