# The option lists (issue 38): budget, ball, search, method, loss, refit and inference take
# the fields of the Python package's option objects as named lists, and an argument of an
# older version is an error that names its new place, before any work.

test_that("every argument of an older version names its new place, before the data are read", {
  moved <- dpsubset:::.MOVED_ARGUMENTS
  for (old in names(moved)) {
    args <- list(mpg ~ ., data = "not a data frame", eps = 1, s = 2, 1)
    names(args)[5] <- old
    err <- tryCatch(do.call(dp_best_subset, args), error = identity)
    expect_s3_class(err, "error")
    expect_match(conditionMessage(err), sprintf("%s moved: use %s", old, moved[[old]]), fixed = TRUE)
  }
  # the table is the Python package's, in R's spelling (diagnostics: Python only)
  skip_if_no_python()
  py <- reticulate::import("dpsubset.settings")$MOVED
  expect_setequal(setdiff(names(moved), "diagnostics"), setdiff(names(py), c("diagnostics", "context")))
})

test_that("the option lists reach Python as its option objects: the same release as the Python API", {
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, bounds = mtcars_bounds(), random_state = 4,
                        method = list(name = "top_r", R = 10), ball = list(r = 0.6, lam = 2),
                        budget = list(select = 3, refit = 3), search = list(route = "enumeration", time_limit = 60))
  gl <- glance(fit)
  expect_equal(c(gl$r, gl$lam, gl$eps_select, gl$eps_refit), c(0.6, 2, 3, 3))
  dps <- reticulate::import("dpsubset")
  pd_mt <- reticulate::r_to_py(mtcars)
  b <- mtcars_bounds()
  py <- dps$dp_best_subset("mpg ~ .", pd_mt, eps = 6, s = 2L, random_state = 4L,
                           bounds = dps$Bounds(x = lapply(b$x, function(v) reticulate::tuple(as.list(v))),
                                               y = reticulate::tuple(as.list(b$y))),
                           method = dps$Method("top_r", R = 10L), ball = dps$Ball(r = 0.6, lam = 2),
                           budget = dps$Budget(select = 3, refit = 3),
                           search = dps$Search(route = "enumeration", time_limit = 60))
  expect_setequal(fit$support, unlist(py$support))
})

test_that("malformed option lists are refused in R, naming the argument and its fields", {
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, ball = list(radius = 1)),
               "ball: unknown field(s) radius; it takes r, lam, r_select, r_refit, lam_select, lam_refit",
               fixed = TRUE)
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, budget = 1),
               "budget must be NULL or a named list of its fields (select, refit", fixed = TRUE)
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, method = list(R = 10)),
               "method: a list needs the method's name", fixed = TRUE)
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, refit = "yes"),
               "refit must be TRUE, FALSE or a named list of its fields (split)", fixed = TRUE)
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, search = 3),
               "search must be one string or a named list", fixed = TRUE)
})

test_that("the Python package's checks of a field come back in R's spelling", {
  skip_if_no_python()
  err <- expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, bounds = mtcars_bounds(),
                                     ball = list(r = -1)), class = "dpsubset_ValueError")
  expect_match(conditionMessage(err), "ball$r must be a finite number > 0", fixed = TRUE)
  err <- expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, bounds = mtcars_bounds(),
                                     budget = list(inference = 1)), class = "dpsubset_ValueError")
  expect_match(conditionMessage(err), "budget$inference was given but inference = FALSE", fixed = TRUE)
  err <- expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, bounds = mtcars_bounds(),
                                     method = list(name = "top_r", gap_check = "assume")),
                      class = "dpsubset_ValueError")
  expect_match(conditionMessage(err), "method$gap_check is only used with method = \"mistakes\"", fixed = TRUE)
  # refit = list(split = TRUE): the two parts' sizes in the report
  fit <- dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 2, bounds = mtcars_bounds(), random_state = 1,
                        refit = list(split = TRUE), centre = FALSE)
  expect_true(fit$refit)
  expect_true(any(grepl("refit", fit$privacy$stages$stage)))
})
