# Each stage's radius and ridge (issue 27 item 2): ball$r_select, r_refit, lam_select and
# lam_refit pass through to Python; ball$r sets both stages; a stage set twice is refused.

test_that("ball's r_select, r_refit, lam_select and lam_refit reach Python, each for its own stage", {
  skip_if_no_python()
  fit <- dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(), random_state = 1,
                        ball = list(r_select = 0.4, r_refit = 0.9, lam_select = 2, lam_refit = 5))
  gl <- glance(fit)
  expect_equal(gl$r, 0.4)
  expect_equal(gl$r_refit, 0.9)
  expect_equal(gl$lam, 2)
  expect_gte(gl$lam_refit, 5)   # the refit's ridge is max(lam_refit, its own minimum)
  both <- glance(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                                random_state = 1, ball = list(r = 0.7)))
  expect_equal(c(both$r, both$r_refit), c(0.7, 0.7))
})

test_that("a stage set twice, or a malformed stage setting, is refused naming the argument", {
  skip_if_no_python()
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                              ball = list(r = 1, r_select = 1)), "r_select")
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                              ball = list(lam_refit = 1), refit = FALSE), "ball$lam_refit was given", fixed = TRUE)
  expect_error(dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = mtcars_bounds(),
                              ball = list(r_refit = "big")), "ball$r_refit must be a finite number > 0",
               fixed = TRUE)
})
