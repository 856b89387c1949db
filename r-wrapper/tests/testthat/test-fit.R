# End to end through Python: the fit, its fields and its methods.
# eps = 6 on mtcars (n = 32, s = 3 of 10): with a smaller budget the settings cannot
# beat chance and every fit raises a LowUtilityWarning (tested on its own below).
fit_mtcars <- function(...) {
  dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(), random_state = 1, ...)
}

test_that("a fit has R-native fields", {
  skip_if_no_python()
  fit <- fit_mtcars()
  expect_s3_class(fit, "dpsubset")
  expect_type(fit$support, "character")
  expect_length(fit$support, 3L)
  expect_true(all(fit$support %in% names(mtcars)))
  expect_equal(fit$candidates, setdiff(names(mtcars), "mpg"))
  expect_equal(fit$forced, "(Intercept)")
  expect_type(fit$coefficients, "double")
  expect_named(fit$coefficients, c("(Intercept)", fit$candidates))
  expect_true(all(fit$coefficients[setdiff(fit$candidates, fit$support)] == 0))
  expect_equal(nobs(fit), 32L)
  p <- fit$privacy
  expect_type(p, "list")
  expect_equal(p$guarantee, "pure")
  expect_equal(p$eps, 6)
  expect_equal(p$delta, 0)
  expect_s3_class(p$stages, "data.frame")
  # the codebook's columns are centred first (0.1 eps for the means and spreads, 0.02 eps more
  # for how much of the response the best support explains), then the selection and the refit
  expect_equal(p$stages$stage, c("centring", "centring", "selection", "refit"))
  expect_equal(sum(p$stages$eps[p$stages$stage == "centring"]), 0.72)  # 0.1 eps, and 0.02 eps for the fit
  expect_true(p$all_certificates_closed)
  expect_true(is.na(p$gap_check_passed))
})

test_that("the privacy report says the search was certified, never how many solves it needed", {
  skip_if_no_python()
  fit <- fit_mtcars()
  p <- fit$privacy
  # which solves the search needed (and how many, by which route) depends on the data
  expect_null(p$certificates)
  expect_true(p$exact_search)
  expect_true(p$all_certificates_closed)
  printed <- c(capture.output(print(fit)), capture.output(print(p)), capture.output(print(summary(fit))),
               p$text)
  expect_true(any(grepl("exact search: all solves certified optimal", printed, fixed = TRUE)))
  expect_false(any(grepl("exact solves|of [0-9]+ certified|closed \\(", printed)))
  expect_false("n_certificates" %in% names(glance(fit)))
  expect_true(glance(fit)$certificates_closed)
  # a method without an exact search says so, in the same words for every fit
  d <- sim_data(400)
  fit2 <- suppressWarnings(dp_best_subset(y ~ ., data = d, eps = 4, s = 3, method = "dp_sis",
                                          bounds = dpsubset_bounds(x = 1, y = 2), random_state = 1))
  expect_false(fit2$privacy$exact_search)
  expect_true(any(grepl("exact search: not used by this method", capture.output(print(fit2$privacy)),
                        fixed = TRUE)))
})

test_that("the same random_state gives the same release; s may be a double", {
  skip_if_no_python()
  a <- fit_mtcars()
  b <- dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3L, bounds = mtcars_bounds(), random_state = 1L)
  expect_identical(a$support, b$support)
  expect_identical(a$coefficients, b$coefficients)
})

test_that("print, summary, coef, predict, tidy and glance read naturally", {
  skip_if_no_python()
  fit <- fit_mtcars()
  out <- capture.output(print(fit))
  expect_match(out[1], "Differentially private best subset selection")
  expect_true(any(grepl("Selected:", out)))
  expect_true(any(grepl("pure eps-differential privacy", out)))
  s <- summary(fit)
  expect_s3_class(s, "summary.dpsubset")
  so <- capture.output(print(s))
  expect_true(any(grepl("Privacy budget", so)))
  expect_true(any(grepl("No standard errors", so)))
  expect_equal(s$coefficients$term, c("(Intercept)", fit$support))
  expect_equal(names(coef(fit, complete = FALSE)), c("(Intercept)", fit$support))
  pr <- predict(fit, mtcars[1:5, ])
  expect_named(pr, rownames(mtcars)[1:5])
  expect_true(all(is.finite(pr)))
  # predictions are the clipped, mapped design times the DP coefficients: with
  # these wide bounds nothing is clipped, so they are a linear combination in R too
  X <- cbind(1, as.matrix(mtcars[1:5, fit$support]))
  expect_equal(unname(pr), unname(drop(X %*% coef(fit, complete = FALSE))), tolerance = 1e-10)
  td <- generics::tidy(fit)
  expect_s3_class(td, "data.frame")
  expect_true(all(c("term", "estimate", "selected", "forced") %in% names(td)))
  expect_equal(td$term[td$selected], fit$support)
  gl <- generics::glance(fit)
  expect_equal(nrow(gl), 1L)
  expect_equal(gl$nobs, 32L)
  expect_equal(gl$guarantee, "pure")
  expect_identical(tidy(fit), td)  # re-exported generic
})

test_that("predict needs newdata and the columns of the formula", {
  skip_if_no_python()
  fit <- fit_mtcars()
  expect_error(predict(fit), "releases no fitted values")
  expect_error(predict(fit, mtcars[1:3, c("mpg", "cyl")]), "newdata")
})

test_that("a saved fit predicts after readRDS (the Python result is pickled inside)", {
  skip_if_no_python()
  fit <- fit_mtcars()
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  back$.python$result <- NULL  # as in a new session, where the Python pointer is gone
  expect_equal(predict(back, mtcars[6:8, ]), predict(fit, mtcars[6:8, ]))
})

test_that("missing bounds warn with class dpsubset_privacy_leak and void the guarantee", {
  skip_if_no_python()
  expect_warning(fit <- dp_best_subset(mpg ~ wt + hp + qsec, data = mtcars, eps = 1, s = 1, random_state = 2),
                 class = "dpsubset_privacy_leak")
  expect_equal(fit$privacy$guarantee, "void")
  expect_false(fit$privacy$bounds_public)
  expect_true(length(fit$privacy$leaks) > 0)
  expect_output(print(fit), "NO differential privacy guarantee")
})

test_that("settings that cannot beat chance warn with class dpsubset_low_utility, naming settings only", {
  skip_if_no_python()
  # the settings of the first version of ?dp_best_subset's example: scalar bounds and a
  # large r make the score sensitivity huge; the warning comes from public settings alone
  ws <- list()
  withCallingHandlers(dp_best_subset(mpg ~ ., data = mtcars, eps = 1, s = 3, bounds = c(500, 40), ball = list(r = 50)),
                      warning = function(w) {
                        ws[[length(ws) + 1L]] <<- w
                        invokeRestart("muffleWarning")
                      })
  expect_length(ws, 2L)   # the selection and the refit, each on its own
  for (w in ws) {
    expect_s3_class(w, "dpsubset_low_utility")
    expect_s3_class(w, "dpsubset_warning")
  }
  msgs <- vapply(ws, conditionMessage, "")
  expect_match(msgs[1], "no better than chance")
  expect_match(msgs[1], "eps_select = 0.5, n = 32, s = 3", fixed = TRUE)
  expect_match(msgs[2], "refit noise")
  expect_match(msgs[2], "eps_refit = 0.5, n = 32, r = 50", fixed = TRUE)
  expect_true(all(grepl("What would help", msgs)))
  # no value of the data: none of mtcars' fractional mpg values is in the text
  for (v in unique(mtcars$mpg[mtcars$mpg %% 1 != 0])) expect_false(grepl(format(v), paste(msgs, collapse = " "), fixed = TRUE))
  # the same budget on a codebook's bounds and r = 1 still cannot: at eps = 6 it can
  expect_warning(dp_best_subset(mpg ~ ., data = mtcars, eps = 1, s = 3, bounds = mtcars_bounds()),
                 class = "dpsubset_low_utility")
  expect_no_warning(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds()))
  # the warning says nothing about privacy: the fit is released and pure
  fit <- suppressWarnings(dp_best_subset(mpg ~ ., data = mtcars, eps = 1, s = 3, bounds = mtcars_bounds()))
  expect_equal(fit$privacy$guarantee, "pure")
})

test_that("factors carry their levels; character columns learn theirs and warn", {
  skip_if_no_python()
  d <- sim_data(120)
  d$g <- factor(rep(c("u", "v"), 60), levels = c("u", "v", "w"))
  b <- dpsubset_bounds(x = 1, y = 2)
  fit <- dp_best_subset(y ~ ., data = d, eps = 2, s = 2, bounds = b, random_state = 3)
  expect_true(all(c("gv", "gw") %in% fit$candidates))  # as lm names them
  expect_equal(fit$privacy$guarantee, "pure")
  d$g <- as.character(d$g)
  expect_warning(fit2 <- dp_best_subset(y ~ ., data = d, eps = 2, s = 2, bounds = b, random_state = 3),
                 class = "dpsubset_privacy_leak")
  expect_equal(fit2$privacy$guarantee, "void")
})

test_that("arguments map to the Python function: bounds pair, keep, method, refit", {
  skip_if_no_python()
  d <- sim_data()
  fit <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = c(1, 2), keep = "x8", random_state = 4)
  expect_equal(fit$forced, c("(Intercept)", "x8"))
  fit <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = c(1, 2), method = "mistakes", random_state = 4)
  expect_equal(fit$privacy$guarantee, "approximate")
  expect_false(is.na(fit$privacy$gap_check_passed))
  fit <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = c(1, 2), refit = FALSE, random_state = 4)
  expect_null(coef(fit))
  expect_true(all(is.na(generics::tidy(fit)$estimate)))
  expect_error(predict(fit, d), "refit = TRUE")
  fit <- dp_best_subset(y ~ log1p(abs(x1)) + I(x2^2) + x3, data = d, eps = 4, s = 1,
                        bounds = dpsubset_bounds(default = 1, y = 2), random_state = 4)
  expect_equal(fit$candidates, c("log1p(abs(x1))", "I(x2^2)", "x3"))
  expect_equal(names(fit$terms_python), c("Intercept", "log1p(abs(x1))", "I(x2 ** 2)", "x3"))
})

test_that("Python's errors arrive as R errors with the Python message, in R's voice", {
  skip_if_no_python()
  err <- expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = -1, s = 3, bounds = mtcars_bounds()),
                      "eps must be a finite number > 0", class = "dpsubset_ValueError")
  expect_s3_class(err, "dpsubset_error")
  expect_false(grepl("Python", conditionMessage(err)))
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 1, s = 30, bounds = mtcars_bounds()),
               "larger than the number of candidate columns")
  d <- mtcars
  d$wt[3] <- NA
  expect_error(dp_best_subset(mpg ~ ., data = d, eps = 1, s = 3, bounds = mtcars_bounds()), "'wt' \\(1 row\\)")
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = c(1, 2), s = 3), "single number")
  expect_error(dp_best_subset(mpg ~ ., data = as.matrix(mtcars), eps = 1, s = 3), "data.frame")
})

test_that("the wrapper reports the Python it uses", {
  skip_if_no_python()
  expect_true(file.exists(dpsubset_python()))
  expect_match(dpsubset:::.no_python_message("No module named 'dpsubset'"), "RETICULATE_PYTHON")
  expect_match(dpsubset:::.no_python_message("x"), "install_dpsubset")
})

test_that("a classification loss takes a two-level factor response", {
  skip_if_no_python()
  d <- sim_data(160)
  d$y <- factor(ifelse(d$y > 0, "up", "down"), levels = c("down", "up"))
  fit <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, loss = "logistic", bounds = dpsubset_bounds(x = 1),
                        random_state = 6)
  expect_equal(fit$loss, "logistic")
  expect_equal(fit$response_levels, c("down", "up"))
  expect_output(print(fit), "Classes: down \\(coded -1\\), up \\(coded \\+1\\)")
  expect_length(predict(fit, d[1:4, ]), 4L)
  expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 2, loss = "nope"), "loss must be one of")
})

test_that("response_levels fixes the coding of a two-class response in advance (issue 17)", {
  skip_if_no_python()
  d <- sim_data(160)
  d$y <- ifelse(d$y > 0, 1, -1)   # a numeric response coded -1/+1
  n_neg <- sum(d$y == -1)
  # without loss$levels a numeric response has the fixed coding c(0, 1), whatever
  # values occur: the -1 rows are outside it, and the error counts them, naming no value
  err <- expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 2, loss = "logistic",
                                     bounds = dpsubset_bounds(x = 1)),
                      class = "dpsubset_ValueError")
  msg <- conditionMessage(err)
  expect_match(msg, "'y'", fixed = TRUE)
  expect_match(msg, sprintf("%d rows outside its coding", n_neg), fixed = TRUE)
  expect_match(msg, "loss = list(name = \"logistic\", levels = c(-1, 1))", fixed = TRUE)
  expect_false(grepl("pd\\.|Categorical|\\[", msg))
  fit <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, loss = list(name = "logistic", levels = c(-1, 1)),
                        bounds = dpsubset_bounds(x = 1), random_state = 6)
  expect_identical(fit$response_levels, c("-1", "1"))   # as written, not "-1.0"
  expect_equal(fit$privacy$guarantee, "pure")
  cl <- predict(fit, d[1:10, ], type = "class")
  expect_equal(levels(cl), c("-1", "1"))
  expect_equal(as.numeric(as.character(cl)), unname(ifelse(predict(fit, d[1:10, ]) > 0, 1, -1)))
  # the same coding as a factor with the levels c(-1, 1) declared: the same release
  df <- d
  df$y <- factor(df$y, levels = c(-1, 1))
  ff <- dp_best_subset(y ~ ., data = df, eps = 4, s = 2, loss = "logistic", bounds = dpsubset_bounds(x = 1),
                       random_state = 6)
  expect_identical(ff$response_levels, c("-1", "1"))
  expect_identical(ff$coefficients, fit$coefficients)
  # a value that is neither class: the column and the count, never the value
  d$y[3] <- 0.424242
  err <- expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 2,
                                     loss = list(name = "logistic", levels = c(-1, 1)),
                                     bounds = dpsubset_bounds(x = 1)),
                      "'y' has 1 row outside its coding")
  expect_false(grepl("0.42", conditionMessage(err), fixed = TRUE))
  expect_match(conditionMessage(err), "factor(data$y, levels = c(", fixed = TRUE)
  # a factor keeps working through its declared levels; loss$levels may reorder them
  d$y <- factor(ifelse(d$y > 0, "up", "down"), levels = c("down", "up"))
  expect_equal(dp_best_subset(y ~ ., data = d, eps = 4, s = 2, loss = "logistic", bounds = dpsubset_bounds(x = 1),
                              random_state = 6)$response_levels, c("down", "up"))
  fit <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, loss = list(name = "logistic", levels = c("up", "down")),
                        bounds = dpsubset_bounds(x = 1), random_state = 6)
  expect_equal(fit$response_levels, c("up", "down"))
  # a factor's classes are its level labels: c(0, 1) names the levels "0" and "1"
  d$y01 <- factor(as.integer(d$y == "up"), levels = c(0, 1))
  fit <- dp_best_subset(y01 ~ x1 + x2 + x3, data = d, eps = 4, s = 2, loss = list(name = "hinge", levels = c(0, 1)),
                        bounds = dpsubset_bounds(x = 1), random_state = 6)
  expect_equal(fit$response_levels, c("0", "1"))
  fit_s <- dp_best_subset("y01 ~ x1 + x2 + x3", data = d, eps = 4, s = 2,   # formula as a string
                          loss = list(name = "hinge", levels = c(0, 1)), bounds = dpsubset_bounds(x = 1),
                          random_state = 6)
  expect_identical(fit_s$coefficients, fit$coefficients)
  # bad values are refused in R, before any work
  for (bad in list(1, c(1, 2, 3), c(NA, 1), c(1, 1), list(0, 1))) {
    expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 2, loss = list(name = "logistic", levels = bad)),
                 "response_levels must")
  }
  expect_error(dp_best_subset(y01 ~ x1, data = d, eps = 4, s = 1, bounds = c(1, 1),
                              loss = list(name = "squared", levels = c(0, 1))),
               "unknown field(s) c('levels'); dpsubset.Squared takes no fields", fixed = TRUE)
})

test_that("search = \"pyomo\" goes through with a solver, and releases what the default search does", {
  skip_if_no_python()
  ok <- tryCatch({
    reticulate::import("dpsubset.search.pyomo_search")$check_solver("gurobi_persistent")
    TRUE
  }, error = function(e) FALSE)
  skip_if_not(ok, "no Pyomo MIQCP solver in this Python")
  a <- fit_mtcars(search = list(route = "pyomo", solver = "gurobi_persistent"))
  b <- fit_mtcars()
  expect_identical(a$support, b$support)
  expect_true(a$privacy$all_certificates_closed)
})

test_that("solver arguments are checked", {
  skip_if_no_python()
  expect_error(fit_mtcars(search = list(route = "pyomo", solver = 1)), "Pyomo solver name")
  expect_error(fit_mtcars(search = list(route = "pyomo", solver_options = 3)),
               "search$solver_options must be a named list", fixed = TRUE)
  expect_error(fit_mtcars(search = list(solver = "gurobi_persistent")), "only used with search = \"pyomo\"")
})

test_that("the result holds no data: not in its call, not in its formula's environment (issue 17)", {
  skip_if_no_python()
  sentinel <- 1234.56789
  d <- mtcars
  d$wt[1] <- 6 - 1e-9 * sentinel  # inside the public bounds
  fit_in <- function(dd) dp_best_subset(mpg ~ ., data = dd, eps = 6, s = 3, bounds = mtcars_bounds())
  fit <- fit_in(d)
  expect_identical(environment(fit$formula), globalenv())
  fit2 <- do.call(dp_best_subset, list(mpg ~ ., data = d, eps = 6, s = 3, bounds = mtcars_bounds()))
  expect_identical(fit2$call$data, as.name("data"))
  expect_true(fit2$privacy$seeded == FALSE)
  expect_true(fit_mtcars()$privacy$seeded)
  marker <- writeBin(d$wt[1], raw(), size = 8L, endian = "big")  # serialize() writes XDR (big-endian)
  for (f in list(fit, fit2)) {
    f$.python <- NULL  # the Python result: checked on the Python side (tests/privacy/test_privacy_leaks.py)
    expect_length(grepRaw(marker, serialize(f, NULL), fixed = TRUE), 0L)
  }
})

test_that("screen= runs a private screen before top-R and the report counts both stages", {
  skip_if_no_python()
  d <- sim_data(400)
  b <- dpsubset_bounds(x = 1, y = 3)
  fit <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = b, method = list(name = "top_r", screen = 4),
                        random_state = 1)
  stages <- fit$privacy$stages
  expect_true(any(grepl("screen", stages$stage)))
  expect_equal(sum(stages$eps), 4)
  expect_length(fit$support, 2)
  fit2 <- dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = b,
                         method = list(name = "top_r", screen = list(k = 4, share = 0.25)), random_state = 1)
  st2 <- fit2$privacy$stages
  expect_equal(st2$eps[grepl("screen", st2$stage)], 0.25 * sum(st2$eps[grepl("select|screen", st2$stage)]))
  scr <- function(v) list(name = "top_r", screen = v)
  expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = b, method = scr("yes")),
               "method$screen must be NULL, TRUE, a whole number k", fixed = TRUE)
  expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = b, method = scr(1.5)),
               "method$screen must be NULL, TRUE, a whole number k", fixed = TRUE)
  expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 2, bounds = b, method = scr(2)),
               "larger than s", class = "dpsubset_ValueError")
})

test_that("verbose defaults to NULL: Python's automatic bar (terminal only), TRUE and FALSE as before", {
  skip_if_no_python()
  expect_null(formals(dp_best_subset)$verbose)
  d <- data.frame(y = c(1, 2, 3, 4, 5, 6, 7, 9), a = c(1, 3, 2, 5, 4, 6, 8, 7), b = c(2, 1, 2, 1, 2, 1, 2, 1))
  b <- dpsubset_bounds(x = list(a = c(0, 10), b = c(0, 3)), y = c(0, 10))
  # a quick call under testthat (no terminal) prints nothing with the default
  out <- capture.output(fit <- suppressWarnings(
    dp_best_subset(y ~ a + b, data = d, eps = 4, s = 1, bounds = b, random_state = 1)), type = "message")
  expect_identical(out, character(0))
  expect_s3_class(fit, "dpsubset")
  expect_error(dp_best_subset(y ~ a + b, data = d, eps = 4, s = 1, bounds = b, verbose = "yes"))
})
