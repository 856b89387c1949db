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
  # formulaic numbers raw powers from 0 and an orthogonal basis from 1; lm numbers both from 1
  poly_raw <- vapply(seq_along(vars), function(i) {
    is_poly[i] && isTRUE(tryCatch(match.call(stats::poly, vars[[i]])$raw, error = function(e) FALSE))
  }, NA)
  is_logical <- vapply(vars, function(v) is.symbol(v) && is.logical(data[[as.character(v)]]), NA)
  data.frame(r = r_text, py = .norm_expr(py_text), poly = is_poly, poly_raw = poly_raw, logical = is_logical,
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
    suffix <- as.character(if (vars$poly_raw[i]) k + 1L else k)
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

# ---------------------------------------------------------------------------- R names -> Python names

# A user names terms and columns in `bounds` and `keep` as R does (`I(wt^2)`,
# `poly(wt, 2, raw = TRUE)1`, `factor(cyl, levels = c(4, 6, 8))6`, `Speciesvirginica`,
# `(Intercept)`), while the Python package reads formulaic's names. The one
# translation is the map above (.r_term_map), read backwards: the model's names are
# asked from Python (a preview of the design on a few rows), mapped to R's spelling,
# and each key that matches an R name (or formulaic's, up to spacing) becomes the
# Python name. A key that matches nothing passes unchanged, and Python's error then
# names it. Data columns need none of this, so the preview runs only when a key is
# not one.

# The names written in bounds$x and keep.
.named_keys <- function(bounds, keep) {
  x <- if (is.list(bounds) && !is.null(names(bounds))) bounds$x else NULL
  c(if (is.list(x) || (is.numeric(x) && !is.null(names(x)))) names(x), as.character(keep))
}

# Map formulaic name -> R name for the model of a formula, from a preview of its
# design on the first rows; NULL when it cannot be built (the fit then reports why).
.python_name_map <- function(ftxt, formula, data, rows = 1000L) {
  head_cols <- .encode_frame(utils::head(data, rows), ftxt$vars)
  out <- .bridge()$model_names(ftxt$text, head_cols)
  if (!is.null(out$error)) return(NULL)
  py <- unique(c(.chr(out$columns), .chr(out$terms)))
  if (!length(py)) return(NULL)
  .r_term_map(py, formula, data)
}

# Keys in R's (or formulaic's) spelling -> formulaic's names, by a map from .python_name_map.
.to_python_names <- function(keys, map) {
  if (is.null(keys)) return(keys)
  keys <- as.character(keys)
  out <- keys
  out[keys == "(Intercept)"] <- "Intercept"
  if (!length(map)) return(out)
  r_norm <- .norm_expr(unname(map))
  py_norm <- .norm_expr(names(map))
  for (i in seq_along(keys)) {
    if (keys[i] %in% names(map)) next
    k <- .norm_expr(keys[i])
    hit <- which(r_norm == k)
    if (!length(hit)) hit <- which(py_norm == k)
    if (length(hit) == 1L) out[i] <- names(map)[hit]
  }
  out
}

# bounds with the names of its x entries translated (see .to_python_names).
.bounds_to_python <- function(bounds, map) {
  if (!is.list(bounds) || is.null(names(bounds)) || is.null(bounds$x) || is.null(names(bounds$x))) {
    return(bounds)
  }
  cls <- class(bounds)
  x <- as.list(bounds$x)
  names(x) <- .to_python_names(names(x), map)
  bounds$x <- x
  class(bounds) <- cls
  bounds
}
