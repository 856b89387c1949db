# Run the testthat suite of the installed R package and print one plain line,
# "testthat: N passed, N failed, N skipped" (counting test_that() blocks), for
# `make test`. Exits non-zero when a test fails or errors, and, with
# DPSUBSET_REQUIRE_PYTHON=true, when a test was skipped (there every test must run).
# Not part of the R package (see .Rbuildignore): R CMD check runs tests/testthat.R.
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "r-wrapper/tests/testthat"
options(testthat.progress.max_fails = Inf)
res <- testthat::test_dir(dir, package = "dpsubset", load_package = "installed",
                          reporter = testthat::SummaryReporter$new(show_praise = FALSE),
                          stop_on_failure = FALSE, stop_on_warning = FALSE)
df <- as.data.frame(res)
failed <- df$failed > 0 | df$error
skipped <- !failed & df$skipped
passed <- !failed & !skipped
cat(sprintf("testthat: %d passed, %d failed, %d skipped\n", sum(passed), sum(failed), sum(skipped)))
required <- identical(Sys.getenv("DPSUBSET_REQUIRE_PYTHON"), "true")
if (any(failed) || (required && any(skipped)) || nrow(df) == 0L) {
  if (required && any(skipped)) cat("DPSUBSET_REQUIRE_PYTHON=true: skipped tests count as failures\n")
  quit(status = 1L)
}
