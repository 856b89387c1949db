# R names for the columns of the model.
#
# The Python package names model-matrix columns as formulaic does
# (`Species[T.virginica]`, `I(wt ** 2)`, `C(am, levels=[0, 1])[T.1]`,
# `poly(wt, 2, raw=True)[0]`); an R user expects the names lm() gives
# (`Speciesvirginica`, `I(wt^2)`, `factor(am, levels = c(0, 1))1`,
# `poly(wt, 2, raw = TRUE)1`). Each formulaic name is a ":"-separated product
# of factors, each factor an expression of the formula plus, for a categorical
# or a multi-column transform, a bracketed suffix. The R formula's own terms()
# give the same expressions in R's spelling; .py_expr() (formula.R) translates
# each of them to the text formulaic sees, so the two are matched expression by
# expression, never by position. A name that cannot be matched keeps its
# formulaic spelling, so the mapping can make names nicer but never wrong.

# Split at the top-level ":" (not inside brackets, parentheses or quotes).
.split_colon <- function(x) {
  chars <- strsplit(x, "", fixed = TRUE)[[1]]
  depth <- 0L
  quote <- ""
  parts <- character()
  cur <- character()
  for (ch in chars) {
    if (nzchar(quote)) {
      if (ch == quote) quote <- ""
    } else if (ch %in% c("'", "\"", "`")) {
      quote <- ch
    } else if (ch %in% c("(", "[", "{")) {
      depth <- depth + 1L
    } else if (ch %in% c(")", "]", "}")) {
      depth <- depth - 1L
    } else if (ch == ":" && depth == 0L) {
      parts <- c(parts, paste(cur, collapse = ""))
      cur <- character()
      next
    }
    cur <- c(cur, ch)
  }
  c(parts, paste(cur, collapse = ""))
}

# Text compared without spacing or backticks (formulaic may respace an expression).
.norm_expr <- function(x) gsub("[[:space:]`]", "", x)

# The variables of an R formula as R spells them (lm's column prefixes) and as
# formulaic text, in the order R uses for interaction labels.
.formula_variables <- function(formula, data) {
  tt <- tryCatch(stats::terms(formula, data = data), error = function(e) NULL)
  if (is.null(tt)) return(NULL)
  vars <- as.list(attr(tt, "variables"))[-1]
  resp <- attr(tt, "response")
  if (resp > 0) vars <- vars[-resp]
  r_text <- vapply(vars, function(v) paste(deparse(v, width.cutoff = 500L), collapse = " "), "")
  py_text <- vapply(vars, function(v) tryCatch(.py_expr(v, FALSE), error = function(e) NA_character_), "")
  is_poly <- vapply(vars, function(v) is.call(v) && identical(v[[1]], as.name("poly")), NA)
  is_logical <- vapply(vars, function(v) is.symbol(v) && is.logical(data[[as.character(v)]]), NA)
  data.frame(r = r_text, py = .norm_expr(py_text), poly = is_poly, logical = is_logical,
             stringsAsFactors = FALSE)
}

# One factor of a formulaic column name -> list(index of the variable, R text), or NULL.
.map_factor <- function(part, vars) {
  p <- .norm_expr(part)
  hit <- which(vars$py == p)
  if (length(hit)) {
    i <- hit[1]
    return(list(i = i, r = paste0(vars$r[i], if (vars$logical[i]) "TRUE" else "")))
  }
  # expression + "[suffix]": the longest variable that is a prefix
  cand <- which(!is.na(vars$py) & startsWith(p, paste0(vars$py, "[")) & endsWith(p, "]"))
  if (!length(cand)) return(NULL)
  i <- cand[which.max(nchar(vars$py[cand]))]
  # the suffix from the original text (levels may contain spaces)
  pos <- regexpr("\\[[^][]*\\]$", part)
  if (pos < 0) return(NULL)
  suffix <- substr(part, pos + 1L, nchar(part) - 1L)
  if (vars$poly[i]) {
    k <- suppressWarnings(as.integer(suffix))
    if (is.na(k)) return(NULL)
    suffix <- as.character(k + 1L)   # formulaic counts powers from 0, R from 1
  } else if (startsWith(suffix, "T.")) {
    suffix <- substring(suffix, 3L)  # treatment contrast: R writes the level alone
  }
  list(i = i, r = paste0(vars$r[i], suffix))
}

# Named character vector: formulaic column name -> R column name.
.r_term_map <- function(py_names, formula, data) {
  py_names <- as.character(py_names)
  out <- stats::setNames(py_names, py_names)
  out[py_names == "Intercept"] <- "(Intercept)"
  vars <- tryCatch(.formula_variables(formula, data), error = function(e) NULL)
  if (is.null(vars) || !nrow(vars)) return(out)
  for (k in seq_along(py_names)) {
    nm <- py_names[k]
    if (nm == "Intercept") next
    parts <- lapply(.split_colon(nm), .map_factor, vars = vars)
    if (any(vapply(parts, is.null, NA))) next
    idx <- vapply(parts, `[[`, 0L, "i")
    txt <- vapply(parts, `[[`, "", "r")
    out[k] <- paste(txt[order(idx)], collapse = ":")   # R orders by the variables' order
  }
  if (anyDuplicated(out)) {  # never merge two columns under one name
    out <- stats::setNames(py_names, py_names)
    out[py_names == "Intercept"] <- "(Intercept)"
  }
  out
}

# Apply a map to a vector of names (unknown names unchanged).
.rename <- function(x, map) {
  x <- as.character(x)
  hit <- x %in% names(map)
  x[hit] <- unname(map[x[hit]])
  x
}
