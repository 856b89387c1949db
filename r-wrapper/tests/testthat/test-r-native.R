# R as native as Python (issue 28, items 1-4): one codebook per data set, R's
# spelling of term names, no silent NULLs or ignored arguments, messages in R's voice.

mt_box <- function(...) {
  dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), ...), y = c(5, 50))
}

catch_warnings <- function(expr) {
  ws <- list()
  value <- withCallingHandlers(expr, warning = function(w) {
    ws[[length(ws) + 1L]] <<- w
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = ws)
}

test_that("a codebook with columns the formula does not use is accepted and lists them (item 1)", {
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ wt + hp, mtcars, eps = 6, s = 1, bounds = mt_box(cyl = c(2, 12)), random_state = 1)
  expect_equal(fit$bounds_unused, "cyl")
  # the unused entry changes nothing: the same release as without it
  ref <- dp_best_subset(mpg ~ wt + hp, mtcars, eps = 6, s = 1, bounds = mt_box(), random_state = 1)
  expect_equal(coef(fit), coef(ref))
  expect_length(ref$bounds_unused, 0L)
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl("Codebook entries this formula does not use: cyl", out, fixed = TRUE)))
  # the whole mtcars codebook with a small formula, and an unused column with missing values
  d <- mtcars
  d$carb[3] <- NA
  fit <- dp_best_subset(mpg ~ wt + qsec, d, eps = 6, s = 1, bounds = mtcars_bounds(), random_state = 1)
  expect_setequal(fit$bounds_unused, c("cyl", "disp", "hp", "drat", "vs", "am", "gear", "carb"))
  # a name that is nothing at all is still an error naming it
  expect_error(dp_best_subset(mpg ~ wt + hp, mtcars, eps = 6, s = 1, bounds = mt_box(cly = c(2, 12))),
               "'cly'", class = "dpsubset_error")
})

test_that("bounds and keep take R's spelling of terms and columns (item 2)", {
  skip_if_no_python()
  # an interval of its own for I(wt^2), unlike the one derived from wt's ([1, 36])
  fit <- dp_best_subset(mpg ~ wt + I(wt^2) + hp, mtcars, eps = 6, s = 1, keep = "I(wt^2)",
                        bounds = mt_box(`I(wt^2)` = c(0, 40)), random_state = 1)
  expect_true("I(wt^2)" %in% fit$forced)
  td <- tidy(fit)
  expect_equal(unlist(td[td$term == "I(wt^2)", c("clip_lo", "clip_hi")], use.names = FALSE), c(0, 40))
  # R's spacing, formulaic's spelling and the Python formula's own all name the same term
  for (key in c("I(wt ^ 2)", "I(wt ** 2)", "I(wt**2)")) {
    other <- dp_best_subset(mpg ~ wt + I(wt^2) + hp, mtcars, eps = 6, s = 1, keep = key,
                            bounds = dpsubset_bounds(x = stats::setNames(list(c(1, 6), c(40, 400), c(0, 40)),
                                                                         c("wt", "hp", key)), y = c(5, 50)),
                            random_state = 1)
    expect_equal(coef(other), coef(fit), info = key)
  }
  # columns of a raw polynomial as lm names them, in bounds and keep
  fit <- dp_best_subset(mpg ~ poly(wt, 2, raw = TRUE) + hp, mtcars, eps = 6, s = 1,
                        keep = "poly(wt, 2, raw = TRUE)1",
                        bounds = mt_box(`poly(wt, 2, raw = TRUE)2` = c(0, 50)), random_state = 1)
  expect_equal(fit$forced, c("(Intercept)", "poly(wt, 2, raw = TRUE)1"))
  td <- tidy(fit)
  expect_equal(unlist(td[td$term == "poly(wt, 2, raw = TRUE)2", c("clip_lo", "clip_hi")], use.names = FALSE),
               c(0, 50))
  # the whole term, a factor's dummy and a logical column, as lm names them
  fit <- dp_best_subset(mpg ~ poly(wt, 2, raw = TRUE) + hp + qsec, mtcars, eps = 6, s = 1,
                        keep = "poly(wt, 2, raw = TRUE)", bounds = mtcars_bounds(), random_state = 1)
  expect_equal(fit$forced, c("(Intercept)", "poly(wt, 2, raw = TRUE)1", "poly(wt, 2, raw = TRUE)2"))
  d <- mtcars
  d$manual <- d$am == 1
  fit <- dp_best_subset(mpg ~ wt + factor(cyl, levels = c(4, 6, 8)) + manual, d, eps = 6, s = 1,
                        keep = c("factor(cyl, levels = c(4, 6, 8))8", "manualTRUE"),
                        bounds = mtcars_bounds(), random_state = 1)
  expect_equal(fit$forced, c("(Intercept)", "factor(cyl, levels = c(4, 6, 8))8", "manualTRUE"))
  # an orthogonal poly(): lm numbers its columns from 1 too (the guarantee is void: a warning)
  fit <- suppressWarnings(dp_best_subset(mpg ~ poly(wt, 2) + hp, mtcars, eps = 6, s = 1, keep = "poly(wt, 2)1",
                                         bounds = mtcars_bounds(), random_state = 1))
  expect_setequal(names(coef(fit)), names(coef(lm(mpg ~ poly(wt, 2) + hp, mtcars))))
  expect_true("poly(wt, 2)1" %in% fit$forced)
})

test_that("a name that matches nothing is an error in R's spelling, without Python containers (items 2, 4)", {
  skip_if_no_python()
  err <- expect_error(dp_best_subset(mpg ~ poly(wt, 2, raw = TRUE) + hp, mtcars, eps = 6, s = 1, keep = "poly3",
                                     bounds = mtcars_bounds()), class = "dpsubset_error")
  msg <- conditionMessage(err)
  expect_match(msg, "'poly(wt, 2, raw = TRUE)1'", fixed = TRUE)
  expect_false(grepl("[0]", msg, fixed = TRUE))
  expect_false(grepl("['", msg, fixed = TRUE))
  expect_false(grepl("raw=True", msg, fixed = TRUE))
})

test_that("lm's fields and accessors are errors that say why, never NULL (item 3)", {
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ wt + hp, mtcars, eps = 6, s = 1, bounds = mt_box(), random_state = 1)
  nd <- mtcars[1:3, ]
  calls <- list(
    `fit$residuals` = function() fit$residuals, `fit$resid` = function() fit$resid,
    `fit$fitted.values` = function() fit$fitted.values, `fit$df.residual` = function() fit$df.residual,
    `fit$model` = function() fit$model, `fit$qr` = function() fit$qr,
    `summary(fit)$r.squared` = function() summary(fit)$r.squared,
    `summary(fit)$adj.r.squared` = function() summary(fit)$adj.r.squared,
    `summary(fit)$sigma` = function() summary(fit)$sigma,
    `summary(fit)$fstatistic` = function() summary(fit)$fstatistic,
    `summary(fit)$residuals` = function() summary(fit)$residuals,
    `predict(interval = "confidence")` = function() predict(fit, nd, interval = "confidence"),
    `predict(interval = "prediction")` = function() predict(fit, nd, interval = "prediction"),
    `predict(se.fit = TRUE)` = function() predict(fit, nd, se.fit = TRUE),
    `tidy(conf.int = TRUE)` = function() tidy(fit, conf.int = TRUE),
    `sigma()` = function() sigma(fit), `df.residual()` = function() df.residual(fit),
    `confint()` = function() confint(fit), `vcov()` = function() vcov(fit),
    `logLik()` = function() logLik(fit), `AIC()` = function() AIC(fit))
  for (nm in names(calls)) {
    err <- expect_error(calls[[nm]](), class = "dpsubset_not_released", info = nm)
    msg <- conditionMessage(err)
    expect_match(msg, "is not released for a dpsubset fit: ", fixed = TRUE, info = nm)
    expect_match(msg, sub("^fit\\$resid$", "fit$residuals", nm), fixed = TRUE, info = nm)  # names what was asked
    expect_false(grepl("res\\.|True|None", msg), info = nm)                               # R's voice
  }
  # what a fit holds works as for a list, partial matching included
  expect_equal(fit$coefficients, coef(fit))
  expect_equal(fit$coef, coef(fit))
  expect_equal(nobs(fit), 32L)
  expect_equal(summary(fit)$nobs, 32L)
  expect_null(fit$no_such_field)
  # arguments a method does not use are errors, not silently ignored
  expect_error(predict(fit, nd, weights = 1), "predict\\(\\): unknown argument\\(s\\) weights")
  expect_error(tidy(fit, exponentiate = TRUE), "tidy\\(\\): unknown argument\\(s\\) exponentiate")
  expect_equal(unname(predict(fit, nd, interval = "none")), unname(predict(fit, nd)))
})

test_that("a quantity the Python result releases flows through to R (item 3)", {
  # what r_bridge.released() sends for a released data frame / vector / number
  frame <- list(frame = list(names = list("0", "1"),
                             columns = list(list(kind = "double", values = list(1, 2)),
                                            list(kind = "double", values = list(3, 4)))),
                index = list("Intercept", "I(wt ** 2)"))
  df <- dpsubset:::.py_value(frame, c(Intercept = "(Intercept)", `I(wt ** 2)` = "I(wt^2)"))
  expect_equal(rownames(df), c("(Intercept)", "I(wt^2)"))
  expect_equal(df[["1"]], c(3, 4))
  v <- dpsubset:::.py_value(list(values = list(0.5, NULL), names = list("Intercept", "wt")),
                            c(Intercept = "(Intercept)"))
  expect_equal(v, c(`(Intercept)` = 0.5, wt = NA))
  expect_equal(dpsubset:::.py_value(list(value = 2.5)), 2.5)
  # Python's reason, in R's voice, without the Python attribute
  expect_equal(dpsubset:::.python_reason("res.bse is not released: pass inference=True to dp_best_subset."),
               "pass inference = TRUE to dp_best_subset.")
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ wt + hp, mtcars, eps = 6, s = 1, bounds = mt_box(), random_state = 1)
  # the accessors ask Python: an attribute it does not have at all gets R's own reason
  err <- expect_error(anova(fit), class = "dpsubset_not_released")
  expect_match(conditionMessage(err), "no standard errors")
  out <- dpsubset:::.bridge()$released(dpsubset:::.python_result(fit), "params", NULL)
  expect_equal(unname(dpsubset:::.py_value(out, fit$terms_python)), unname(coef(fit)))
})

test_that("messages reach R in R's voice (item 4)", {
  skip_if_no_python()
  b <- dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), qsec = c(12, 25), drat = c(2, 5.5)), y = c(5, 50))
  got <- catch_warnings(dp_best_subset(mpg ~ wt + hp + qsec + drat, mtcars, eps = 0.5, s = 3, bounds = b,
                                       random_state = 1))
  low <- Filter(function(w) inherits(w, "dpsubset_low_utility"), got$warnings)
  expect_length(low, 1L)
  msg <- conditionMessage(low[[1]])
  expect_false(grepl("Warning:", msg, fixed = TRUE))
  expect_match(msg, "^these settings make the selection no better than chance")
  expect_match(msg, "choose(4, 3) = 4 supports", fixed = TRUE)
  expect_s3_class(low[[1]], "dpsubset_warning")
  # a privacy warning: its class, no Python class name in the text
  got <- catch_warnings(dp_best_subset(mpg ~ wt + hp, mtcars, eps = 6, s = 1, random_state = 1))
  leak <- Filter(function(w) inherits(w, "dpsubset_privacy_leak"), got$warnings)
  expect_length(leak, 1L)
  expect_false(grepl("PrivacyLeakWarning", conditionMessage(leak[[1]]), fixed = TRUE))
  # bounds from the data: Delta is not shown, never "NaN"
  out <- c(capture.output(print(got$value$privacy)), capture.output(print(summary(got$value))))
  expect_false(any(grepl("NaN", out, fixed = TRUE)))
  expect_true(any(grepl("Delta = not shown (bounds from data)", out, fixed = TRUE)))
  # a Python tuple of choices becomes an R vector
  err <- expect_error(dp_best_subset(mpg ~ wt + hp, mtcars, eps = 1, s = 1, method = "nope", bounds = mt_box()),
                      class = "dpsubset_error")
  expect_match(conditionMessage(err), "one of c('top_r', 'mistakes'", fixed = TRUE)
  expect_false(grepl("[^c]\\('top_r'", conditionMessage(err)))
})

test_that("the R-voice rules turn Python containers into R's", {
  v <- dpsubset:::.r_voice
  expect_equal(v("which: expected one of ('mean', 'linear', 'class'); got 'x'"),
               "which: expected one of c('mean', 'linear', 'class'); got 'x'")
  expect_equal(v("valid names: ['poly(wt, 2)[1]', 'hp']"), "valid names: c('poly(wt, 2)[1]', 'hp')")
  expect_equal(v("e.g. {'log(wt)': (lo, hi)}"), "e.g. list(`log(wt)` = c(lo, hi))")
  expect_equal(v("chance among C(10, 3) = 120 supports"), "chance among choose(10, 3) = 120 supports")
  # a call's arguments are not a tuple
  expect_equal(v("write C(g, levels=['a', 'b'])"), "write factor(g, levels = c('a', 'b'))")
})

test_that("private intervals, where the fit asked for them, flow through confint(), vcov() and tidy() (item 3)", {
  skip_if_no_python()
  set.seed(3)
  n <- 1000
  d <- data.frame(wt = runif(n, 1, 6), hp = runif(n, 40, 400), qsec = runif(n, 12, 25))
  d$mpg <- pmin(pmax(40 - 4 * d$wt + rnorm(n), 5), 50)
  b <- dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), qsec = c(12, 25)), y = c(5, 50))
  fit <- tryCatch(dp_best_subset(mpg ~ wt + I(wt^2) + hp + qsec, d, eps = 6, s = 1, bounds = b,
                                 inference = TRUE, random_state = 1),
                  dpsubset_error = function(e) e)
  if (inherits(fit, "error")) {
    # a Python package without private inference: the argument reaches it and it says so
    expect_match(conditionMessage(fit), "inference")
    return(invisible())
  }
  ci <- confint(fit, level = 0.9)
  expect_equal(colnames(ci), c("5 %", "95 %"))
  expect_equal(rownames(ci), names(coef(fit)))       # R's names: (Intercept), I(wt^2)
  sel <- c("(Intercept)", fit$support)
  expect_true(all(ci[sel, 1] < coef(fit)[sel] & coef(fit)[sel] < ci[sel, 2]))
  expect_equal(confint(fit, "(Intercept)", level = 0.9), ci["(Intercept)", , drop = FALSE])
  td <- tidy(fit, conf.int = TRUE, conf.level = 0.9)
  expect_equal(td$conf.low, unname(ci[td$term, 1]))
  expect_equal(td$conf.high, unname(ci[td$term, 2]))
  v <- vcov(fit)
  expect_true(all(diag(v) > 0))
  expect_true(all(rownames(v) %in% names(coef(fit))))
  expect_equal(colnames(v), rownames(v))
  # still not released: what inference does not give
  expect_error(residuals(fit), class = "dpsubset_not_released")
  pr <- predict(fit, d[1:2, ], interval = "prediction")   # issue 37: released with inference = TRUE
  expect_equal(colnames(pr), c("fit", "lwr", "upr"))
  expect_true(all(pr[, "lwr"] < pr[, "fit"] & pr[, "fit"] < pr[, "upr"]))
  # without inference = TRUE, Python's reason names the way to get them
  plain <- dp_best_subset(mpg ~ wt + I(wt^2) + hp + qsec, d, eps = 6, s = 1, bounds = b, random_state = 1)
  err <- expect_error(confint(plain), class = "dpsubset_not_released")
  expect_match(conditionMessage(err), "inference = TRUE", fixed = TRUE)
})

test_that("numbers, intervals, dict entries and nested lists read as R", {
  v <- dpsubset:::.r_voice
  expect_equal(v("bounds x['wt']: interval (6.0, 1.0) must have lo < hi"),
               "bounds x$wt: interval c(6, 1) must have lo < hi")
  expect_equal(v("bounds x['log(wt)']: bad"), "bounds x[[\"log(wt)\"]]: bad")
  expect_equal(v("eps_select + eps_refit must be positive parts of eps = 1.0; got 2 + -1.0"),
               "eps_select + eps_refit must be positive parts of eps = 1; got 2 + -1")
  expect_equal(v("eps0 (2.0) must be smaller than the selection budget (0.5)"),
               "eps0 (2) must be smaller than the selection budget (0.5)")
  expect_equal(v("its coding (class coded -1, class coded +1) = (-1, 1); recode"),
               "its coding (class coded -1, class coded +1) = c(-1, 1); recode")
  expect_equal(v("write [['x1'], ['x1', 'x2']], not ['x1', 'x2']"),
               "write list(c('x1'), c('x1', 'x2')), not c('x1', 'x2')")
  expect_equal(v("'f' is not numeric (dtype category): declare the levels (or a factor with explicit categories)"),
               "'f' is not numeric (a factor): declare the levels (or a factor with its levels set in advance)")
  expect_equal(v("summary_table() got an unexpected keyword argument 'foo'"), "summary_table() has no argument 'foo'")
  expect_equal(v("choose k < 3 or drop screen="), "choose k < 3 or leave out screen")
  expect_equal(v("model columns: ['Intercept', 'wt']"), "model columns: c('(Intercept)', 'wt')")
  # numbers that are not whole stay as they are
  expect_equal(v("r = 0.5, n = 10.25, version 1.05"), "r = 0.5, n = 10.25, version 1.05")
})

test_that("the example of docs/guide/r.md (Formulas and names) prints what the page says", {
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ wt + I(wt^2) + poly(hp, 2, raw = TRUE), data = mtcars, eps = 6, s = 1,
                        keep = c("I(wt^2)", "poly(hp, 2, raw = TRUE)1"),
                        bounds = dpsubset_bounds(x = list(wt = c(1, 6), hp = c(40, 400), cyl = c(2, 12),
                                                          `I(wt^2)` = c(0, 40)), y = c(5, 50)))
  expect_equal(fit$forced, c("(Intercept)", "I(wt^2)", "poly(hp, 2, raw = TRUE)1"))
  expect_equal(fit$bounds_unused, "cyl")
})

test_that("the numbers ?dp_best_subset quotes for settings that cannot beat chance are the code's", {
  skip_if_no_python()
  low <- function(eps) {
    msg <- NULL
    withCallingHandlers(dp_best_subset(mpg ~ ., mtcars, eps = eps, s = 3, bounds = mtcars_bounds(), random_state = 1),
                        dpsubset_low_utility = function(w) {
                          msg <<- conditionMessage(w)
                          invokeRestart("muffleWarning")
                        })
    msg
  }
  msg <- low(1)
  expect_match(msg, "r = 0.5)", fixed = TRUE)
  expect_match(msg, "about 2.72 times the selection budget", fixed = TRUE)
  expect_null(low(3))
  # the installed help page quotes the same numbers
  rd <- tools::Rd_db("dpsubset")[["dp_best_subset.Rd"]]
  txt <- gsub("\\s+", " ", paste(utils::capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))),
                                 collapse = " "))
  txt <- gsub("'", "", txt, fixed = TRUE)   # Rd2txt quotes code
  expect_match(txt, "default radius (r = 0.5 here)", fixed = TRUE)
  expect_match(txt, "eps = 1 warns that about 2.72 times the selection budget would help, eps = 3 does not warn",
               fixed = TRUE)
})

test_that("influence measures are refused with the reason, and terms() is the formula's", {
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ wt + hp, mtcars, eps = 6, s = 1, bounds = mt_box(), random_state = 1)
  for (f in list(hatvalues, cooks.distance, rstandard, rstudent, model.frame, model.matrix)) {
    err <- expect_error(f(fit), class = "dpsubset_not_released")
    expect_match(conditionMessage(err), "private (training) data", fixed = TRUE)
  }
  expect_equal(attr(terms(fit), "term.labels"), c("wt", "hp"))
  expect_equal(attr(fit$terms, "term.labels"), c("wt", "hp"))
})
