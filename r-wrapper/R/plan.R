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
#'   columns).
#' @param noise,r2 Assumed error standard deviation, or the assumed R^2 instead.
#' @param bounds `c(b_x, b_y)`: every column clipped to `[-b_x, b_x]`, the
#'   response to `[-b_y, b_y]`.
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
                          n_grid = NULL, eps_grid = NULL, random_state = 0) {
  for (nm in c("p", "s", "effect", "rho", "target_prob", "trials", "random_state")) {
    .check_number(get(nm), nm)
  }
  for (nm in c("noise", "r2", "eps", "n", "target_width")) {
    if (!is.null(get(nm))) .check_number(get(nm), nm)
  }
  if (!is.numeric(bounds) || length(bounds) != 2L || anyNA(bounds)) {
    stop("bounds must be two numbers, c(b_x, b_y)", call. = FALSE)
  }
  if (!isTRUE(inference) && !isFALSE(inference)) stop("inference must be TRUE or FALSE", call. = FALSE)
  args <- list(p = p, s = s, effect = effect, bounds = as.list(as.numeric(bounds)), rho = rho,
               target_prob = target_prob, inference = inference, trials = trials, random_state = random_state)
  for (nm in c("noise", "r2", "eps", "n", "target_width")) {
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
