# Each stage's radius and ridge (issue 27 item 2): r_select, r_refit, lam_select and
# lam_refit pass through to Python; r sets both stages; a stage set twice is refused.

test_that("r_select, r_refit, lam_select and lam_refit reach Python, each for its own stage", {
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(), random_state = 1,
                        r_select = 0.4, r_refit = 0.9, lam_select = 2, lam_refit = 5)
  gl <- glance(fit)
  expect_equal(gl$r, 0.4)
  expect_equal(gl$r_refit, 0.9)
  expect_equal(gl$lam, 2)
  expect_gte(gl$lam_refit, 5)   # the refit's ridge is max(lam_refit, its own minimum)
  both <- glance(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                                random_state = 1, r = 0.7))
  expect_equal(c(both$r, both$r_refit), c(0.7, 0.7))
})

test_that("a stage set twice, or a malformed stage setting, is refused naming the argument", {
  skip_if_no_python()
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                              r = 1, r_select = 1), "r_select")
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                              lam_refit = 1, refit = FALSE), "lam_refit")
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                              r_refit = "big"), "r_refit must be a single number or NULL")
})
