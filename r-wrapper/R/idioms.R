# lm's arguments and habits that dp_best_subset() takes over: `subset =`, and a word
# on factor levels that look learned from the data.

# Rows kept by `subset =`, evaluated in `data` as lm() does (then in the caller's
# frame). The number of rows kept becomes the public n of the release.
.subset_rows <- function(data, expr, env) {
  if (is.null(expr)) return(data)
  keep <- tryCatch(eval(expr, data, env), error = function(e) {
    stop(sprintf("subset: could not evaluate %s in data: %s", paste(deparse(expr), collapse = " "),
                 conditionMessage(e)), call. = FALSE)
  })
  if (is.logical(keep) && length(keep) == nrow(data)) {
    if (anyNA(keep)) {
      stop(sprintf(paste0("subset: %s is NA in %d row(s); dpsubset does not drop rows silently (n must be ",
                          "public): say which rows to keep with TRUE or FALSE, e.g. subset = !is.na(x) & x > 0"),
                   paste(deparse(expr), collapse = " "), sum(is.na(keep))), call. = FALSE)
    }
    return(data[keep, , drop = FALSE])
  }
  if (is.numeric(keep) && !anyNA(keep) && all(keep == round(keep)) && all(abs(keep) <= nrow(data))) {
    return(data[keep, , drop = FALSE])
  }
  stop("subset: give a logical vector with one value per row of data (e.g. subset = region == \"north\") ",
       "or row numbers", call. = FALSE)
}

.check_public_levels <- function(public_levels, data) {
  if (is.null(public_levels) || isTRUE(public_levels)) return(invisible())
  if (!is.character(public_levels) || anyNA(public_levels)) {
    stop("public_levels must be NULL, TRUE or the names of factor columns whose levels were fixed in advance",
         call. = FALSE)
  }
  bad <- setdiff(public_levels, names(data)[vapply(data, is.factor, NA)])
  if (length(bad)) {
    stop(sprintf("public_levels: %s %s not factor column(s) of data", paste0("'", bad, "'", collapse = ", "),
                 if (length(bad) == 1L) "is" else "are"), call. = FALSE)
  }
  invisible()
}

# Factor columns whose levels are in sorted order: what factor(x) and
# read.csv(stringsAsFactors = TRUE) produce when they learn the levels from the data. The
# test reads the levels attribute only (which the privacy report takes as public), never
# which values occur: whether the warning appears must not depend on the rows. The R side
# cannot tell such levels from sorted levels fixed in advance, so it warns (once, naming
# every such column) unless public_levels vouches for them; the warning names columns,
# never levels.
.warn_levels_like_data <- function(data, vars, public_levels) {
  if (isTRUE(public_levels)) return(invisible())
  vars <- setdiff(intersect(vars, names(data)), public_levels)
  like <- vars[vapply(vars, function(v) {
    x <- data[[v]]
    is.factor(x) && !is.ordered(x) && identical(levels(x), sort(levels(x)))
  }, NA)]
  if (!length(like)) return(invisible())
  cols <- paste0("'", like, "'", collapse = ", ")
  msg <- sprintf(paste0(
    "factor column(s) %s: the levels are in sorted order, as factor(x) and ",
    "read.csv(stringsAsFactors = TRUE) give them when they learn them from the data. The privacy report takes factor levels as ",
    "public; if these were learned from the data, the result is not differentially private (which levels ",
    "occur is a function of the data, and they decide the columns of the model). Fix: set the levels from ",
    "public knowledge, e.g. data$%s <- factor(data$%s, levels = c(...)), and then say so with ",
    "public_levels = c(%s)"), cols, like[1], like[1], paste0("\"", like, "\"", collapse = ", "))
  warning(structure(class = c("dpsubset_privacy_leak", "dpsubset_warning", "warning", "condition"),
                    list(message = msg, call = NULL)))
  invisible(like)
}
