# The translation of R formulas to formulaic text: pure R, no Python needed.
ftext <- function(f, cols = c("y", "a", "b", "Infant.Mortality", "cyl", "f")) {
  dpsubset:::.formula_text(f, cols)$text
}

test_that("plain terms and intercept handling translate as written", {
  expect_equal(ftext(y ~ .), "y ~ .")
  expect_equal(ftext(y ~ a + b), "y ~ a + b")
  expect_equal(ftext(y ~ 0 + a), "y ~ 0 + a")
  expect_equal(ftext(y ~ a - 1), "y ~ a - 1")
  expect_equal(ftext(y ~ . - b), "y ~ . - b")
  expect_equal(ftext(y ~ a * b), "y ~ a * b")
  expect_equal(ftext(y ~ a:b), "y ~ a : b")
  expect_equal(ftext(y ~ (a + b)^2), "y ~ (a + b) ** 2")
  expect_equal(ftext("y ~ a"), "y ~ a")
})

test_that("names that are not Python identifiers get backticks", {
  expect_equal(ftext(y ~ Infant.Mortality), "y ~ `Infant.Mortality`")
  expect_equal(ftext(y ~ log(Infant.Mortality)), "y ~ log(`Infant.Mortality`)")
})

test_that("functions, constants and levels translate to Python syntax", {
  expect_equal(ftext(y ~ I(a^2) + log(b)), "y ~ I(a ** 2) + log(b)")
  expect_equal(ftext(log(y) ~ sqrt(abs(a))), "log(y) ~ sqrt(abs(a))")
  expect_equal(ftext(y ~ factor(cyl, levels = c(4, 6, 8))), "y ~ C(cyl, levels=[4, 6, 8])")
  expect_equal(ftext(y ~ C(f, levels = c("a", "b's"))), "y ~ C(f, levels=['a', 'b\\'s'])")
  expect_equal(ftext(y ~ poly(a, 2, raw = TRUE)), "y ~ poly(a, 2, raw=True)")
  expect_equal(ftext(y ~ I(a %% 2 == 0)), "y ~ I(a % 2 == 0)")
})

test_that("the variables of a formula without '.' are the only columns sent", {
  expect_equal(dpsubset:::.formula_text(y ~ log(a) + b, c("y", "a", "b", "z"))$vars, c("y", "a", "b"))
  expect_null(dpsubset:::.formula_text(y ~ ., c("y", "a"))$vars)
})

test_that("what has no faithful translation is an error that says why", {
  expect_error(ftext(y ~ a + z), "not columns of data")
  expect_error(ftext(y ~ ns(a, 3)), "not supported")
  expect_error(ftext(y ~ offset(a)), "not supported")
  expect_error(ftext(y ~ a %in% b), "not supported")
  expect_error(ftext(y ~ pnorm(a)), "cannot be used in a dpsubset formula")
  expect_error(ftext(~ a), "response")
  expect_error(ftext(y ~ factor(a, labels = c("u", "v"))), "levels")
  expect_error(ftext(42), "expected an R formula")
})
