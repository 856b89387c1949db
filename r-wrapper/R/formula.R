# R formula -> the formulaic text the Python package reads.
#
# Nothing in the formula is evaluated in R: the transforms run in Python, in
# formulaic, where the privacy lint of the design can see them. This file
# rewrites R syntax to formulaic's (names that are not Python identifiers get
# backticks, c(...) becomes a list, TRUE becomes True, ^ inside a function
# becomes **) and refuses, with a clear message, what has no faithful
# counterpart.

# Functions that may appear in a formula, with the name formulaic knows them by.
# All act row by row except scale/center and orthogonal poly(), which the Python
# design flags (they learn from the data, so the guarantee is void).
.formula_functions <- c(
  log = "log", log2 = "log2", log10 = "log10", log1p = "log1p", exp = "exp", expm1 = "expm1",
  sqrt = "sqrt", abs = "abs", I = "I", C = "C", factor = "C", poly = "poly",
  scale = "scale", center = "center"
)

.py_keywords <- c("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
                  "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
                  "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
                  "try", "while", "with", "yield")

.formula_error <- function(...) stop(paste0("formula: ", ...), call. = FALSE)

.py_name <- function(nm) {
  if (grepl("^[A-Za-z_][A-Za-z0-9_]*$", nm) && !(nm %in% .py_keywords)) return(nm)
  if (grepl("`", nm, fixed = TRUE)) .formula_error("the column name '", nm, "' contains a backtick; rename it")
  paste0("`", nm, "`")
}

.py_literal <- function(x) {
  if (length(x) != 1L) .formula_error("only single constants can appear in a formula")
  if (is.na(x)) .formula_error("NA cannot appear in a formula")
  if (is.logical(x)) return(if (x) "True" else "False")
  if (is.character(x)) {
    s <- gsub("\\\\", "\\\\\\\\", enc2utf8(x))
    return(paste0("'", gsub("'", "\\\\'", s), "'"))
  }
  if (is.numeric(x)) {
    if (!is.finite(x)) .formula_error("non-finite number ", x, " in the formula")
    return(as.character(x))
  }
  .formula_error("cannot translate the constant ", deparse(x))
}

# Formula-level operators (terms) and the Python operators used inside calls.
.term_ops <- c("+", "-", ":", "*", "/", "^")
.expr_ops <- c("+" = "+", "-" = "-", "*" = "*", "/" = "/", "^" = "**", "%%" = "%", "%/%" = "//",
               "==" = "==", "!=" = "!=", "<" = "<", ">" = ">", "<=" = "<=", ">=" = ">=", "&" = "&",
               "|" = "|")

# Translate one node. `inside` is TRUE within a function call (Python expression
# syntax) and FALSE at the level of terms (formula syntax).
.py_expr <- function(e, inside = FALSE) {
  if (is.symbol(e)) {
    nm <- as.character(e)
    if (nm == ".") {
      if (inside) .formula_error("'.' can only stand for all other columns, not inside a function")
      return(".")
    }
    return(.py_name(nm))
  }
  if (!is.call(e)) {
    if (is.null(e)) return("None")
    return(.py_literal(e))
  }
  fn <- e[[1]]
  if (!is.symbol(fn)) .formula_error("cannot translate the call ", paste(deparse(e), collapse = ""))
  f <- as.character(fn)
  args <- as.list(e)[-1]
  if (f == "(") return(paste0("(", .py_expr(args[[1]], inside), ")"))
  if (!inside && f %in% .term_ops) {
    if (length(args) == 1L) {
      if (f %in% c("-", "+")) return(paste0(f, .py_expr(args[[1]], FALSE)))
      .formula_error("unary '", f, "' is not a formula operator")
    }
    op <- if (f == "^") "**" else f
    return(paste(.py_expr(args[[1]], FALSE), op, .py_expr(args[[2]], FALSE)))
  }
  if (inside && f %in% names(.expr_ops)) {
    if (length(args) == 1L) {
      if (f %in% c("-", "+")) return(paste0(f, .py_expr(args[[1]], TRUE)))
      .formula_error("unary '", f, "' is not supported")
    }
    return(paste(.py_expr(args[[1]], TRUE), .expr_ops[[f]], .py_expr(args[[2]], TRUE)))
  }
  if (f == "!" && inside) return(paste0("~", .py_expr(args[[1]], TRUE)))
  if (f == "c") {
    if (!inside) .formula_error("c(...) can only appear as an argument, e.g. C(x, levels = c(\"a\", \"b\"))")
    return(paste0("[", paste(vapply(args, .py_expr, "", inside = TRUE), collapse = ", "), "]"))
  }
  if (f %in% c("%in%", "|", "||", "&&", "offset", "Error", "strata", "s", "te", "ns", "bs")) {
    .formula_error("'", f, "' is not supported by dpsubset (the formula is read by formulaic in Python, ",
                   "with linear terms only)")
  }
  if (!(f %in% names(.formula_functions))) {
    .formula_error("the R function ", f, "() cannot be used in a dpsubset formula: formulas are evaluated ",
                   "by formulaic in Python, not by R. Supported functions: ",
                   paste(names(.formula_functions), collapse = ", "),
                   ". Otherwise compute the column in R and add it to data.")
  }
  if (f == "factor") {
    extra <- setdiff(names(args)[-1], c("", "levels"))
    if (length(extra)) .formula_error("factor() in a formula takes only levels = c(...); got ", extra[1])
  }
  if (f == "I" && length(args) == 1L) {
    return(paste0("I(", .py_expr(args[[1]], TRUE), ")"))
  }
  nms <- names(args)
  if (is.null(nms)) nms <- rep("", length(args))
  parts <- vapply(seq_along(args), function(i) {
    v <- .py_expr(args[[i]], TRUE)
    if (nzchar(nms[i])) paste0(nms[i], "=", v) else v
  }, "")
  paste0(.formula_functions[[f]], "(", paste(parts, collapse = ", "), ")")
}

# The formula as formulaic text, plus the data columns it names (NULL when it
# uses '.', which stands for all columns).
.formula_text <- function(formula, data_names) {
  if (is.character(formula) && length(formula) == 1L) {
    formula <- tryCatch(stats::as.formula(formula), error = function(e) {
      .formula_error("could not parse '", formula, "' as an R formula: ", conditionMessage(e))
    })
  }
  if (!inherits(formula, "formula")) {
    .formula_error("expected an R formula such as mpg ~ . or mpg ~ wt + hp; got an object of class ",
                   class(formula)[1])
  }
  if (length(formula) != 3L) .formula_error("the formula needs a response on the left of ~, e.g. mpg ~ .")
  vars <- all.vars(formula)
  unknown <- setdiff(vars, c(".", data_names))
  if (length(unknown)) {
    .formula_error("variable(s) ", paste(unknown, collapse = ", "), " are not columns of data; ",
                   "dpsubset uses only the columns of data (not objects in the R session), so that they are ",
                   "clipped and checked with the rest: add them to data")
  }
  text <- paste(.py_expr(formula[[2]], FALSE), "~", .py_expr(formula[[3]], FALSE))
  list(text = text, vars = if ("." %in% vars) NULL else vars)
}
