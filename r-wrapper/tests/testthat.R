# R CMD check runs this file. Tests that need the Python package skip when it
# cannot be loaded (see tests/testthat/helper-dpsubset.R).
library(testthat)
library(dpsubset)

test_check("dpsubset")
