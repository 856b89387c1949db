# Planning a release before any data are read: the rows or the eps it needs.

#' Rows or eps a private release needs, from public inputs only
#'
#' Before a release, from settings fixed without the data: under an assumed model
#' (`p` columns on the public box, `s` of them with effect `effect`, errors of sd
#' `noise` or a target `r2`), simulates data sets, runs the exact top-R search of a
#' release on each and computes the exact probability that the release is the true
#' support, over a grid of rows (give `eps`) or of eps (give `n`); with
#' `target_width` it also runs the refit and the bootstrap of `inference = TRUE`
#' and reports the median width of the slopes' 95 \% intervals and the chance that
#' the refit's ball binds (its intervals then reach far beyond it; `Inf` width when
#' that chance is above one half). No data are read. The computation is the Python
#' package's `dps.plan` (its docs: docs/guide/sample-size.md, "Planning with
#' dps.plan").
#'
#' @param p,s Candidate columns and support size.
#' @param effect Assumed size of each of the `s` true coefficients (units of the
#'   response per unit of the column); with a codebook, a named vector such as
#'   `c(age = 0.5, educ = 2)` names the true columns (otherwise they are the
#'   codebook's first `s` columns).
#' @param noise,r2 Assumed error standard deviation, or the assumed R^2 instead.
#' @param bounds `c(b_x, b_y)`: every column clipped to `[-b_x, b_x]`, the
#'   response to `[-b_y, b_y]`; or the codebook the release takes
#'   ([dpsubset_bounds()], the same forms as `dp_best_subset(bounds = )`),
#'   mapped as the release maps it (an interval onto `[-1, 1]`, a number `b`
#'   clipped to `[-b, b]`).
#' @param eps,n Give `eps` to find the rows needed, or `n` to find the eps needed.
#' @param rho Correlation of adjacent columns (AR(1)).
#' @param target_prob Target probability of releasing the true support.
#' @param target_width Target median width of the slopes' 95 \% intervals.
#' @param inference Plan for a release with `inference = TRUE` (implied by
#'   `target_width`).
#' @param trials Simulated data sets per grid point.
#' @param n_grid,eps_grid The grid searched (defaults from 250 to 100,000 rows,
#'   eps from 0.25 to 32).
#' @param random_state Seed of the simulation (public: nothing private is drawn).
#' @param response The codebook entry of the response, when the codebook gives it
#'   among the columns rather than as `y`.
#' @return A data.frame of class `"dpsubset_plan"`, one row per grid point
#'   (`n`, `eps`, `p_true_support` and, with `target_width`, `median_width`
#'   and `p_ball_binds`), with attributes `n_needed`, `eps_needed` (`NA` when no
#'   grid point meets the targets) and `assumptions`.
#' @examples
#' \dontrun{
#' dpsubset_plan(p = 10, s = 3, effect = 0.5, noise = 0.5, bounds = c(1, 3), eps = 4)
#' }
#' @export
dpsubset_plan <- function(p, s, effect, noise = NULL, r2 = NULL, bounds = c(1, 3), eps = NULL, n = NULL,
                          rho = 0, target_prob = 0.9, target_width = NULL, inference = FALSE, trials = 3,
                          n_grid = NULL, eps_grid = NULL, random_state = 0, response = NULL) {
  for (nm in c("p", "s", "rho", "target_prob", "trials", "random_state")) {
    .check_number(get(nm), nm)
  }
  if (is.null(names(effect))) .check_number(effect, "effect") else if (!is.numeric(unlist(effect))) {
    stop("effect must be numbers named by codebook column, e.g. c(age = 0.5, educ = 2)", call. = FALSE)
  }
  for (nm in c("noise", "r2", "eps", "n", "target_width")) {
    if (!is.null(get(nm))) .check_number(get(nm), nm)
  }
  if (is.null(bounds)) stop("bounds: give c(b_x, b_y) or the release's codebook, dpsubset_bounds(...)", call. = FALSE)
  if (is.numeric(bounds) && is.null(names(bounds)) && length(bounds) == 2L && anyNA(bounds)) {
    stop("bounds: plan needs both bounds, c(b_x, b_y) without NA", call. = FALSE)
  }
  if (!isTRUE(inference) && !isFALSE(inference)) stop("inference must be TRUE or FALSE", call. = FALSE)
  if (!is.null(response) && (!is.character(response) || length(response) != 1L)) {
    stop("response must be the name of the response's codebook entry", call. = FALSE)
  }
  # a named vector or list of effects by column (with a codebook) travels as a dict
  effect_py <- if (!is.null(names(effect))) as.list(effect) else effect
  args <- list(p = p, s = s, effect = effect_py, bounds = .bounds_plain(bounds), rho = rho,
               target_prob = target_prob, inference = inference, trials = trials, random_state = random_state)
  for (nm in c("noise", "r2", "eps", "n", "target_width", "response")) {
    if (!is.null(get(nm))) args[[nm]] <- get(nm)
  }
  if (!is.null(n_grid)) args$n_grid <- as.list(as.numeric(n_grid))
  if (!is.null(eps_grid)) args$eps_grid <- as.list(as.numeric(eps_grid))
  out <- .bridge()$plan(args)
  if (!is.null(out$error)) stop(out$error, call. = FALSE)
  table <- as.data.frame(lapply(out$table, function(v) as.numeric(unlist(v))), stringsAsFactors = FALSE)
  structure(table, class = c("dpsubset_plan", "data.frame"),
            n_needed = if (is.null(out$n_needed)) NA_real_ else out$n_needed,
            eps_needed = if (is.null(out$eps_needed)) NA_real_ else out$eps_needed,
            assumptions = out$assumptions)
}

#' @export
print.dpsubset_plan <- function(x, ...) {
  cat("Plan of a private release (public inputs only):", attr(x, "assumptions"), "\n", sep = " ")
  print(as.data.frame(unclass(x)[names(x)], stringsAsFactors = FALSE), row.names = FALSE, ...)
  needed <- if (!is.na(attr(x, "n_needed"))) sprintf("rows needed: n >= %g", attr(x, "n_needed")) else
    if (!is.na(attr(x, "eps_needed"))) sprintf("eps needed: eps >= %g", attr(x, "eps_needed")) else
      "no point of the grid meets the targets"
  cat(needed, "\n")
  invisible(x)
}
