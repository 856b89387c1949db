# lm / broom / modelsummary habits (issue 39): each works as with lm, or is an R error that says why.

mt_fit <- function(...) {
  dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(), random_state = 1, ...)
}

test_that("summary_table takes an lm() beside a private fit, labelled NOT private, with its N", {
  skip_if_no_python()
  fit <- mt_fit()
  ols <- lm(mpg ~ wt + hp, mtcars)
  tab <- summary_table(list(DP = fit, OLS = ols), fmt = "frame")
  expect_equal(colnames(tab), c("DP", "OLS"))
  expect_equal(tab["N", "OLS"], "32")
  expect_equal(tab["Guarantee", "OLS"], "none")
  expect_equal(tab["Method", "OLS"], "lm")
  expect_equal(as.numeric(tab["wt", "OLS"]), unname(coef(ols)["wt"]), tolerance = 1e-3)
  # the OLS intercept shares the row of the private intercept
  expect_true("(Intercept)" %in% rownames(tab))
  expect_equal(as.numeric(tab["(Intercept)", "OLS"]), unname(coef(ols)[1]), tolerance = 1e-3)
  txt <- summary_table(list(DP = fit, OLS = ols))
  expect_match(txt, "NOT private: OLS", fixed = TRUE)
  # lm's t interval: the same numbers as confint(lm)
  ci <- summary_table(list(DP = fit, OLS = ols), fmt = "frame", statistic = "conf_int")
  expect_match(ci["wt (conf. int.)", "OLS"], format(round(confint(ols)["wt", 1], 3), nsmall = 3), fixed = TRUE)
  expect_error(summary_table(list(DP = fit, x = 1:3)), "element 2 is of class integer")
  expect_error(summary_table(list(OLS = ols)), "a dpsubset fit")
})

test_that("coef_map takes modelsummary's named vector and labels a named vector", {
  skip_if_no_python()
  fit <- mt_fit()
  keep <- fit$support[1:2]
  cm <- stats::setNames(c("First", "Second"), keep)
  tab <- summary_table(fit, fmt = "frame", coef_map = cm)
  expect_equal(rownames(tab)[1:2], c("First", "Second"))
  expect_false(any(setdiff(fit$support, keep) %in% rownames(tab)))
  tab2 <- summary_table(fit, fmt = "frame", coef_map = keep)       # an unnamed vector: terms kept
  expect_equal(rownames(tab2)[1:2], keep)
  tab3 <- summary_table(fit, fmt = "frame", labels = stats::setNames("Renamed", keep[1]))
  expect_true("Renamed" %in% rownames(tab3))
  expect_error(summary_table(fit, coef_map = 1:2), "named character vector such as c(wt = \"Weight\"",
               fixed = TRUE)
  err <- expect_error(summary_table(fit, coef_map = c(zz = "Z")), "not terms of any of the fits")
  expect_match(conditionMessage(err), "names(coef(fit))", fixed = TRUE)
  expect_false(grepl("res.terms", conditionMessage(err), fixed = TRUE))
})

test_that("terms(), formula() and update() work on a fit of mpg ~ .", {
  skip_if_no_python()
  fit <- mt_fit()
  tt <- terms(fit)
  expect_equal(attr(tt, "term.labels"), setdiff(names(mtcars), "mpg"))
  expect_equal(attr(fit$terms, "term.labels"), attr(tt, "term.labels"))
  expect_equal(formula(fit), formula(lm(mpg ~ ., mtcars)), ignore_attr = TRUE)
  fit2 <- update(fit, . ~ . - hp)
  expect_s3_class(fit2, "dpsubset")
  expect_false("hp" %in% fit2$candidates)
  expect_equal(length(fit2$candidates), 9L)
  # the fit keeps the columns' names and types, never a row of the data
  expect_equal(nrow(fit$.prototype), 0L)
})

test_that("subset = keeps rows as lm() does, evaluated in data", {
  skip_if_no_python()
  d <- mtcars
  d$region <- rep(c("north", "south"), 16)
  fit <- dp_best_subset(mpg ~ wt + hp, data = d, eps = 6, s = 1, bounds = mtcars_bounds(c("wt", "hp")),
                        subset = region == "north", random_state = 1)
  expect_equal(nobs(fit), 16L)
  expect_equal(nobs(update(fit, subset = region == "south" & cyl > 4)), sum(d$region == "south" & d$cyl > 4))
  d$flag <- c(NA, rep(TRUE, 31))
  expect_error(dp_best_subset(mpg ~ wt, data = d, eps = 6, s = 1, bounds = mtcars_bounds("wt"), subset = flag),
               "NA in 1 row")
  # an unknown argument is named, not evaluated
  expect_error(dp_best_subset(mpg ~ wt, data = d, eps = 6, s = 1, weights = no_such_object),
               "unknown argument(s) weights", fixed = TRUE)
})

test_that("plot(fit) draws the coefficients with their intervals and an lm beside (a PNG)", {
  skip_if_no_python()
  fit <- mt_fit(inference = TRUE)
  png_file <- tempfile(fileext = ".png")
  grDevices::png(png_file, width = 700, height = 450)
  out <- plot(fit, compare = list(OLS = lm(mpg ~ ., mtcars)))
  grDevices::dev.off()
  expect_gt(file.size(png_file), 5000)
  d <- attr(out, "plotted")
  dp <- d[d$fit == "DP", ]
  expect_equal(dp$term, fit$support)                  # unselected terms are not drawn as 0
  expect_true(all(dp$lower <= dp$estimate & dp$estimate <= dp$upper))
  expect_equal(unname(confint(fit)[fit$support, 1]), dp$lower)
  expect_false(any(d$private[d$fit == "OLS"]))
  # without inference: points only
  grDevices::png(png_file)
  plain <- plot(mt_fit())
  grDevices::dev.off()
  expect_true(all(is.na(attr(plain, "plotted")$lower)))
  expect_error(plot(fit, compare = list(1)), "compare must be a list")
})

test_that("coef(summary(fit)) is lm's numeric matrix; fit$bounds_derived is there", {
  skip_if_no_python()
  fit <- mt_fit(inference = TRUE)
  m <- coef(summary(fit))
  expect_true(is.matrix(m) && is.numeric(m))
  expect_equal(colnames(m), c("Estimate", "Std. Error", "z value", "Pr(>|z|)"))
  expect_equal(rownames(m), c("(Intercept)", fit$support))
  expect_equal(m[, "Estimate"], coef(fit)[rownames(m)])
  m0 <- coef(summary(mt_fit()))
  expect_equal(colnames(m0), "Estimate")
  f2 <- dp_best_subset(mpg ~ wt + I(wt^2), data = mtcars, eps = 6, s = 1, bounds = mtcars_bounds("wt"),
                       random_state = 1)
  bd <- f2$bounds_derived
  expect_type(bd, "list")
  expect_equal(bd[["I(wt ** 2)"]], c(1, 36))
})

test_that("confint(parm = ) and s = 2.5 are R errors that say why", {
  skip_if_no_python()
  fit <- mt_fit(inference = TRUE)
  expect_error(confint(fit, parm = "zz"), "parm 'zz' is not a term of the fit")
  expect_equal(rownames(confint(fit, parm = fit$support[1])), fit$support[1])
  expect_error(confint(fit, parm = 99), "positions 1 to")
  err <- tryCatch(dp_best_subset(mpg ~ ., mtcars, eps = 6, s = 2.5, bounds = mtcars_bounds()), error = identity)
  expect_false(inherits(err, "Rcpp::exception"))
  expect_match(conditionMessage(err), "s, the number of columns to select, must be a whole number")
})

test_that("warnings speak R: classes, dpsubset_plan(), no docs/*.md paths", {
  skip_if_no_python()
  v <- dpsubset:::.r_voice
  w <- v(paste("choose Ball(r_refit=...) from what is known (docs/guide/inference.md, 'When the ball binds');",
               "more rows would help: dps.plan"))
  expect_false(grepl("docs/", w, fixed = TRUE))
  expect_false(grepl("dps.plan", w, fixed = TRUE))
  expect_match(w, "ball = list(r_refit = ...) from", fixed = TRUE)
  expect_match(w, "dpsubset_plan()", fixed = TRUE)
  # a release on the sphere of a small ball: the warning's class says its kind
  d <- sim_data(n = 400, p = 4)
  d$y <- 3 * d$y
  ws <- list()
  fit <- withCallingHandlers(
    dp_best_subset(y ~ ., d, eps = 4, s = 2, bounds = c(1, 6), ball = list(r_refit = 0.05), inference = TRUE,
                   random_state = 1),
    warning = function(w) { ws[[length(ws) + 1L]] <<- w; invokeRestart("muffleWarning") })
  ball <- Filter(function(w) inherits(w, "dpsubset_ball_binds"), ws)
  expect_length(ball, 1L)
  expect_s3_class(ball[[1]], "dpsubset_warning")
  expect_false(grepl("docs/|r_refit=|True", conditionMessage(ball[[1]])))
})

test_that("factor levels that look learned from the data warn as a privacy leak, once", {
  skip_if_no_python()
  d <- mtcars
  d$g1 <- factor(rep(c("a", "b"), 16))             # factor(x): levels from the values
  d$g2 <- factor(rep(c("u", "v", "w", "u"), 8))
  d$g3 <- factor(rep(c("x", "y"), 16), levels = c("y", "x", "z"))   # an order set in advance
  ws <- list()
  withCallingHandlers(
    dp_best_subset(mpg ~ wt + g1 + g2 + g3, data = d, eps = 6, s = 1, bounds = mtcars_bounds("wt"),
                   random_state = 1),
    warning = function(w) { ws[[length(ws) + 1L]] <<- w; invokeRestart("muffleWarning") })
  leak <- Filter(function(w) inherits(w, "dpsubset_privacy_leak"), ws)
  expect_length(leak, 1L)
  expect_match(conditionMessage(leak[[1]]), "'g1', 'g2'", fixed = TRUE)
  expect_false(grepl("g3", conditionMessage(leak[[1]])))
  # the warning reads the levels, not the rows: a level that no row has changes nothing
  d$g4 <- factor(rep(c("a", "b"), 16), levels = c("a", "b", "c"))
  ws4 <- list()
  withCallingHandlers(
    dp_best_subset(mpg ~ wt + g4, data = d, eps = 6, s = 1, bounds = mtcars_bounds("wt"), random_state = 1),
    warning = function(w) { ws4[[length(ws4) + 1L]] <<- w; invokeRestart("muffleWarning") })
  expect_length(Filter(function(w) inherits(w, "dpsubset_privacy_leak"), ws4), 1L)
  expect_no_warning(dp_best_subset(mpg ~ wt + g1 + g2, data = d, eps = 6, s = 1, bounds = mtcars_bounds("wt"),
                                   random_state = 1, public_levels = c("g1", "g2")))
  expect_error(dp_best_subset(mpg ~ wt, data = d, eps = 6, s = 1, public_levels = "wt"), "not factor column")
})
