# Private inference in R's tables (issue 26): summary_table(), summary(), tidy() and
# glance() show the standard errors, intervals and selection confidence of a fit made
# with inference = TRUE, under R's names of the terms; a fit without it shows none
# and says how to get them.

inference_data <- function(n = 3000, seed = 3) {
  set.seed(seed)
  d <- data.frame(wt = runif(n, 1, 6), hp = runif(n, 40, 400), qsec = runif(n, 12, 25),
                  am = factor(rbinom(n, 1, 0.5), levels = c(0, 1)))
  d$mpg <- pmin(pmax(40 - 4 * d$wt + 2 * (d$am == "1") + rnorm(n), 5), 50)
  d
}
inference_bounds <- function() {
  dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), qsec = c(12, 25)), y = c(5, 50))
}
inference_fit <- function(...) {
  # I(wt^2) and am1: R's names differ from Python's (I(wt ** 2), am[T.1])
  dp_best_subset(mpg ~ wt + I(wt^2) + hp + qsec + am, inference_data(), eps = 8, s = 2,
                 bounds = inference_bounds(), random_state = 1, ...)
}

test_that("tidy() and glance() carry broom's inference columns with inference = TRUE, none without", {
  skip_if_no_python()
  fit <- inference_fit(inference = TRUE)
  td <- tidy(fit)
  expect_equal(names(td)[1:5], c("term", "estimate", "std.error", "statistic", "p.value"))
  on <- td$term %in% c("(Intercept)", fit$support)
  expect_true(all(td$std.error[on] > 0) && all(is.na(td$std.error[!on])))
  v <- vcov(fit)   # the bootstrap covariance: its diagonal is the squared standard error
  expect_equal(td$std.error[on], unname(sqrt(diag(v))[td$term[on]]), tolerance = 1e-8)
  # the statistic is the normal score of the p-value, which inverts the intervals
  expect_equal(td$statistic[on], sign(td$estimate[on]) * qnorm(1 - pmax(td$p.value[on], 5e-7) / 2), tolerance = 1e-8)
  ci95 <- confint(fit)[td$term[on], , drop = FALSE]
  expect_equal(td$p.value[on] < 0.05, ci95[, 1] > 0 | ci95[, 2] < 0, ignore_attr = TRUE)
  expect_true(all(ci95[, 1] <= td$estimate[on] & td$estimate[on] <= ci95[, 2]))
  ci <- tidy(fit, conf.int = TRUE, conf.level = 0.9)
  expect_equal(names(ci)[1:7], c("term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"))
  expect_equal(ci$conf.low[on], unname(confint(fit, level = 0.9)[ci$term[on], 1]))
  gl <- glance(fit)
  spent <- sum(fit$privacy$stages$eps[grepl("^inference", fit$privacy$stages$stage)])
  expect_gt(spent, 0)
  expect_equal(gl$eps_inference, spent)
  expect_equal(gl$inference_mode, "conditional")
  expect_true(gl$selection_conf_low >= 0 && gl$selection_conf_low <= gl$selection_conf_high &&
                gl$selection_conf_high <= 1)
  expect_match(gl$selection_verdict, "trusted|uncertain|not shown")

  plain <- inference_fit()
  expect_false(any(c("std.error", "statistic", "p.value") %in% names(tidy(plain))))
  expect_false(any(c("eps_inference", "selection_conf_low", "selection_verdict") %in% names(glance(plain))))
  err <- expect_error(tidy(plain, conf.int = TRUE), class = "dpsubset_not_released")
  expect_match(conditionMessage(err), "inference = TRUE", fixed = TRUE)
})

test_that("summary() shows the std. errors, the intervals and the selection confidence", {
  skip_if_no_python()
  fit <- inference_fit(inference = TRUE)
  s <- summary(fit)
  cf <- s$coefficients
  expect_equal(names(cf), c("term", "estimate", "std.error", "conf.low", "conf.high", "status"))
  expect_equal(cf$std.error, tidy(fit)$std.error[match(cf$term, tidy(fit)$term)])
  expect_equal(cf$conf.low, unname(confint(fit)[cf$term, 1]))
  expect_equal(s$selection_confidence$low, glance(fit)$selection_conf_low)
  out <- capture.output(print(s))
  flat <- gsub("\\s+", " ", paste(out, collapse = " "))   # the notes are wrapped
  expect_true(any(grepl("Std. Error", out, fixed = TRUE)) && any(grepl("97.5 %", out, fixed = TRUE)))
  expect_match(flat, "Selection confidence: P(best-scoring support released) in [", fixed = TRUE)
  expect_match(flat, "conditional on the released support", fixed = TRUE)
  expect_false(grepl("No standard errors", flat))
  # the budget's total is the report's
  expect_true(any(grepl(sprintf("total +eps = %s", format(fit$privacy$eps, digits = 6)), out)))

  plain <- summary(inference_fit())
  expect_null(plain$selection_confidence)
  expect_false("std.error" %in% names(plain$coefficients))
  flat <- gsub("\\s+", " ", paste(capture.output(print(plain)), collapse = " "))
  expect_match(flat, "No standard errors or p-values: none was requested (dp_best_subset(..., inference = TRUE)",
               fixed = TRUE)
  expect_false(grepl("Selection confidence", flat))
})

test_that("summary_table() puts standard errors or intervals under each coefficient, R's names", {
  skip_if_no_python()
  fit <- inference_fit(inference = TRUE)
  plain <- inference_fit()
  td <- tidy(fit, conf.int = TRUE, conf.level = 0.9)
  shown <- td$term[td$term %in% c("(Intercept)", fit$support)]
  expect_true(any(shown != "(Intercept)"))
  frame <- summary_table(list(private = fit, plain = plain), fmt = "frame")
  for (t in shown) {
    cell <- frame[paste0(t, " (std. error)"), "private"]
    expect_match(cell, "^\\(.*\\)$")
    expect_equal(as.numeric(gsub("[()]", "", cell)), td$std.error[td$term == t], tolerance = 1e-3)
    expect_equal(frame[paste0(t, " (std. error)"), "plain"], "")
  }
  ci <- summary_table(fit, fmt = "frame", statistic = "conf_int", conf_level = 0.9)
  for (t in shown) {
    bounds <- as.numeric(strsplit(gsub("[][]", "", ci[paste0(t, " (conf. int.)"), 1]), ", ")[[1]])
    expect_equal(bounds, c(td$conf.low[td$term == t], td$conf.high[td$term == t]), tolerance = 1e-3)
  }
  none <- summary_table(fit, fmt = "frame", statistic = NULL)
  expect_false(any(grepl("(std. error)", rownames(none), fixed = TRUE)))
  text <- gsub("\\s+", " ", summary_table(list(fit, plain), statistic = "conf_int"))   # notes wrapped
  expect_match(text, "95% confidence intervals in brackets", fixed = TRUE)
  expect_match(text, "No confidence intervals for (2): none is released privately", fixed = TRUE)
  expect_error(summary_table(fit, statistic = "t"), "statistic must be")
  expect_error(summary_table(fit, statistic = "conf_int", conf_level = 95), "conf_level")
})

test_that("fit$selection_confidence is the released sentence, or says how to get it", {
  skip_if_no_python()
  fit <- inference_fit(inference = TRUE)
  sc <- fit$selection_confidence
  expect_type(sc, "character")
  expect_match(sc, "^P\\(best-scoring support released\\) in \\[")
  expect_true(grepl(glance(fit)$selection_verdict, sc, fixed = TRUE))
  err <- expect_error(inference_fit()$selection_confidence, class = "dpsubset_not_released")
  expect_match(conditionMessage(err), "inference = TRUE", fixed = TRUE)
})

test_that("a hinge fit with inference = TRUE: refused with a refit, the selection confidence without", {
  skip_if_no_python()
  set.seed(5)
  n <- 2000
  d <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1), x3 = runif(n, -1, 1))
  d$y <- factor(ifelse(d$x1 - d$x2 + rnorm(n, sd = 0.3) > 0, "b", "a"), levels = c("a", "b"))
  expect_error(dp_best_subset(y ~ ., d, eps = 8, s = 2, loss = "hinge", inference = TRUE,
                              bounds = dpsubset_bounds(x = 1), random_state = 1), "not a likelihood")
  fit <- suppressWarnings(dp_best_subset(y ~ ., d, eps = 8, s = 2, loss = "hinge", inference = TRUE,
                                         refit = FALSE, bounds = dpsubset_bounds(x = 1), random_state = 1),
                          classes = "dpsubset_low_utility")
  expect_false("std.error" %in% names(tidy(fit)))
  expect_gt(glance(fit)$eps_inference, 0)
  flat <- gsub("\\s+", " ", paste(capture.output(print(summary(fit))), collapse = " "))
  expect_match(flat, "Selection confidence: P(best-scoring support released)", fixed = TRUE)
  expect_false(grepl("none was requested", flat))
})

test_that("the privacy report and print(fit) state the selection confidence where it was released", {
  skip_if_no_python()
  fit <- inference_fit(inference = TRUE)
  expect_equal(fit$privacy$selection_confidence, fit$selection_confidence)
  flat <- gsub("\\s+", " ", paste(capture.output(print(fit$privacy)), collapse = " "))
  expect_match(flat, paste("selection confidence:", fit$selection_confidence), fixed = TRUE)
  flat <- gsub("\\s+", " ", paste(capture.output(print(fit)), collapse = " "))
  expect_match(flat, paste("Selection confidence:", fit$selection_confidence), fixed = TRUE)
  plain <- inference_fit()
  expect_null(plain$privacy$selection_confidence)
  expect_false(any(grepl("election confidence", capture.output(print(plain), print(plain$privacy)))))
})

test_that("a release on the refit's sphere says so and widens its intervals (ball_binds)", {
  skip_if_no_python()
  expect_warning(small <- inference_fit(inference = TRUE, ball = list(r_refit = 0.05)),
                 "lie on the sphere of the refit's ball",
                 fixed = TRUE)
  expect_true(glance(small)$ball_binds)
  out <- paste(capture.output(print(summary(small))), collapse = " ")
  expect_match(gsub("\\s+", " ", out), "lie on the sphere of the refit's ball", fixed = TRUE)
  expect_match(gsub("\\s+", " ", out), "pulled past 0 to the other sign", fixed = TRUE)
  # the truth may lie beyond the sphere: the intervals reach out to least squares on the
  # private moments, the standard errors are those the intervals imply, covariances unknown
  v <- vcov(small)
  ci <- confint(small)[rownames(v), , drop = FALSE]   # the refit's terms (the others are NA)
  expect_true(all(is.finite(ci)))
  expect_equal(unname(sqrt(diag(v))), unname((ci[, 2] - ci[, 1]) / (2 * qnorm(0.975))), tolerance = 1e-8)
  expect_true(all(is.na(v[upper.tri(v)])))
  # inference$truth_in_ball = TRUE: the user's statement replaces the reach beyond the ball
  trusted <- inference_fit(inference = list(truth_in_ball = TRUE), ball = list(r_refit = 0.05))
  expect_true(glance(trusted)$truth_in_ball)
  expect_false(glance(small)$truth_in_ball)
  flat <- gsub("\\s+", " ", paste(capture.output(print(summary(trusted))), collapse = " "))
  expect_match(flat, "as stated with inference = list(truth_in_ball = TRUE)", fixed = TRUE)
  expect_error(inference_fit(inference = list(truth_in_ball = "yes")), "inference$truth_in_ball must be TRUE or FALSE",
               fixed = TRUE)
  roomy <- inference_fit(inference = TRUE)
  expect_false(glance(roomy)$ball_binds)
  expect_false(grepl("lie on the sphere", gsub("\\s+", " ", paste(capture.output(print(summary(roomy))),
                                                                   collapse = " ")), fixed = TRUE))
})

test_that("dpsubset_plan() gives the Python plan from public inputs, and refuses what it cannot plan", {
  skip_if_no_python()
  pl <- dpsubset_plan(p = 8, s = 2, effect = 0.5, noise = 0.5, eps = 4, trials = 2, n_grid = c(200, 5000))
  expect_s3_class(pl, "dpsubset_plan")
  expect_equal(pl$n, c(200, 5000))
  expect_true(pl$p_true_support[2] >= 0.9 && pl$p_true_support[1] < 0.9)
  expect_equal(attr(pl, "n_needed"), 5000)
  expect_match(paste(capture.output(print(pl)), collapse = " "), "rows needed: n >= 5000", fixed = TRUE)
  # effects far outside the refit's ball: most releases bind, no finite width is promised
  wide <- dpsubset_plan(p = 8, s = 2, effect = 4, noise = 0.5, eps = 8, target_width = 10, trials = 1,
                        n_grid = 1000)
  expect_true(is.infinite(wide$median_width) && wide$p_ball_binds > 0.5)
  expect_true(is.na(attr(wide, "n_needed")))
  expect_error(dpsubset_plan(p = 8, s = 2, effect = 0.5, noise = 0.5), "give eps")
  expect_error(dpsubset_plan(p = 8, s = 2, effect = "big", eps = 1, noise = 1), "effect must be a single number")
  expect_error(dpsubset_plan(p = 8, s = 2, effect = 0.5, noise = 0.5, eps = 4, rho = 1.5), "rho must be")
  expect_error(dpsubset_plan(p = 8, s = 2, effect = 0.5, noise = 0.5, eps = 4, trials = 0), "trials must be")
})

test_that("dpsubset_plan() takes the codebook a release takes", {
  skip_if_no_python()
  args <- list(p = 6, s = 2, noise = 0.5, eps = 4, trials = 1, n_grid = c(300, 2000), random_state = 3)
  pair <- do.call(dpsubset_plan, c(args, list(effect = 0.5, bounds = c(1, 3))))
  book <- do.call(dpsubset_plan, c(args, list(effect = 0.5, bounds = dpsubset_bounds(x = 1, y = 3))))
  expect_equal(book$p_true_support, pair$p_true_support)
  # per-column intervals, the true columns named in effect
  cb <- dpsubset_bounds(x = list(age = c(0, 10), educ = c(0, 20)), y = c(0, 6))
  named <- do.call(dpsubset_plan, c(args, list(effect = c(age = 0.2, educ = 0.1), bounds = cb)))
  expect_match(attr(named, "assumptions"), "true columns: age, educ", fixed = TRUE)
  expect_error(do.call(dpsubset_plan, c(args, list(effect = c(zz = 1, educ = 0.1), bounds = cb))), "not in it: zz")
})

test_that("predict() gives confidence and prediction intervals and se.fit on an inference fit", {
  skip_if_no_python()
  # the default (centred) release: the prediction interval reads an upper confidence bound on
  # the residual sd from a release of its own (issue 37), so it is never narrower than the noise
  fit <- inference_fit(inference = TRUE)
  new <- inference_data(n = 6, seed = 9)
  point <- predict(fit, new)
  conf <- predict(fit, new, interval = "confidence", level = 0.9)
  pred <- predict(fit, new, interval = "prediction", level = 0.9)
  expect_equal(colnames(conf), c("fit", "lwr", "upr"))
  expect_equal(rownames(conf), rownames(new))
  expect_equal(unname(conf[, "fit"]), unname(point), tolerance = 1e-8)
  expect_true(all(conf[, "lwr"] < conf[, "fit"] & conf[, "fit"] < conf[, "upr"]))
  # a new observation also misses its mean by the noise (sd 1 here): wider than the mean's
  expect_true(all(pred[, "lwr"] < conf[, "lwr"] & conf[, "upr"] < pred[, "upr"]))
  expect_true(all(pred[, "upr"] - pred[, "lwr"] > 2 * 1.5 * 0.8))
  se <- predict(fit, new, se.fit = TRUE)
  expect_equal(names(se), c("fit", "se.fit"))
  expect_true(all(se$se.fit > 0))
  plain <- inference_fit()
  expect_error(predict(plain, new, interval = "confidence"), class = "dpsubset_not_released")
  expect_error(predict(fit, new, interval = "confidence", level = 2), "level must be one number")
})
