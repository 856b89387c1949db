# How columns are packed for Python: pure R, no Python needed.
test_that("doubles travel bit for bit as little-endian float64", {
  x <- c(1.5, NA, -2, 1e300)
  enc <- dpsubset:::.encode_column(x, "x", "data")
  expect_equal(enc$kind, "double")
  back <- readBin(enc$data, "double", n = 4L, size = 8L, endian = "little")
  expect_identical(back, x)
})

test_that("integers become doubles; factors keep their levels, unused ones included", {
  expect_equal(dpsubset:::.encode_column(1:3, "i", "data")$kind, "double")
  f <- factor(c("b", NA, "b"), levels = c("a", "b", "c"))
  enc <- dpsubset:::.encode_column(f, "f", "data")
  expect_equal(enc$kind, "factor")
  expect_identical(readBin(enc$codes, "integer", n = 3L, size = 4L, endian = "little"), c(2L, NA, 2L))
  expect_identical(rawToChar(enc$levels$data), "abc")
  expect_false(enc$ordered)
})

test_that("strings travel as UTF-8 with byte lengths and an NA mask", {
  s <- c("caf\u00e9", NA, "")
  enc <- dpsubset:::.enc_strings(s)
  expect_identical(readBin(enc$lengths, "integer", n = 3L, size = 4L, endian = "little"), c(5L, 0L, 0L))
  expect_identical(enc$na, as.raw(c(0, 1, 0)))
})

test_that("columns dpsubset cannot use are refused by name", {
  df <- data.frame(y = 1:2, d = as.Date(c("2020-01-01", "2020-01-02")))
  expect_error(dpsubset:::.encode_frame(df), "column 'd' is a Date")
  expect_error(dpsubset:::.encode_frame(list(a = 1)), "must be a data.frame")
  # a formula without '.' sends only its columns, so an unused Date column is fine
  expect_length(dpsubset:::.encode_frame(df, vars = "y")$columns, 1L)
})

test_that("bounds are normalised for Python and checked in R", {
  expect_equal(dpsubset:::.bounds_plain(c(0.5, 2)), list(pair = list(0.5, 2)))
  expect_equal(dpsubset:::.bounds_plain(c(NA, 2)), list(pair = list(NULL, 2)))
  b <- dpsubset:::.bounds_plain(dpsubset_bounds(x = list(hp = c(40, 400), wt = 6), y = c(5, 50)))
  expect_equal(b$x, list(hp = list(40, 400), wt = 6))
  expect_equal(b$y, list(5, 50))
  expect_equal(dpsubset:::.bounds_plain(list(x = 1, y = 2)), list(x = 1, y = 2))
  expect_error(dpsubset:::.bounds_plain(c(1, 2, 3)), "c\\(b_x, b_y\\)")
  expect_error(dpsubset_bounds(x = list(hp = c(1, 2, 3))), "interval")
  expect_error(dpsubset:::.bounds_plain(list(z = 1)), "among x, y, default")
})
