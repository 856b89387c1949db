# The DP peers of issue 40, method = "peeling" and method = "frank_wolfe", from R: the
# method as a list with the method's options reaches Python, and the report states the guarantee.
test_that("method = 'peeling' and 'frank_wolfe' run from R with their options and guarantee", {
  skip_if_no_python()
  d <- sim_data(3000)
  b <- dpsubset_bounds(x = 1, y = 2)
  fit <- dp_best_subset(y ~ ., data = d, eps = 40, s = 3, method = list(name = "peeling", iterations = 5),
                        budget = list(delta = 1e-9), bounds = b, random_state = 1)
  expect_setequal(fit$support, c("x1", "x2", "x3"))
  expect_true(fit$privacy$guarantee %in% c("pure", "approximate"))
  st <- fit$privacy$stages
  expect_true(any(grepl("peeling \\(5 iterations", st$mechanism)))
  expect_false(fit$privacy$exact_search)
  fw <- dp_best_subset(y ~ ., data = d, eps = 40, s = 3, bounds = b,
                       method = list(name = "frank_wolfe", radius = 1.5, iterations = 10), refit = FALSE,
                       random_state = 1)
  expect_setequal(fw$support, c("x1", "x2", "x3"))
  expect_equal(fw$privacy$guarantee, "pure")
  expect_true(any(grepl("radius 1.5", fw$privacy$stages$mechanism)))
  expect_error(dp_best_subset(y ~ ., data = d, eps = 4, s = 3, method = list(name = "peeling", iterations = 0),
                              bounds = b),
               "iterations", class = "dpsubset_ValueError")
})
