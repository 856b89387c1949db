# Moving a data.frame to Python without reticulate's numpy bridge.
#
# reticulate 1.28 cannot convert to numpy >= 2 and converting an R list element
# by element is slow (seconds per 100,000 values), so each column travels as one
# raw vector (a Python bytearray): doubles as little-endian float64, factor codes
# and logicals as little-endian int32 (R's NA_integer_ included), strings as
# their UTF-8 bytes one after another plus their byte lengths. The Python side
# (dpsubset.interfaces.r_bridge.frame_from_columns) rebuilds the pandas DataFrame. Values
# are copied bit for bit, so the R wrapper and the Python API see the same data.

.raw_int <- function(x) writeBin(as.integer(x), raw(), size = 4L, endian = "little")
.raw_dbl <- function(x) writeBin(as.double(x), raw(), size = 8L, endian = "little")

# A character vector as UTF-8 bytes + int32 byte lengths (+ a byte mask of NAs).
.enc_strings <- function(x) {
  x <- as.character(x)
  na <- is.na(x)
  x <- enc2utf8(x)
  x[na] <- ""
  out <- list(data = charToRaw(enc2utf8(paste(x, collapse = ""))),
              lengths = .raw_int(nchar(x, type = "bytes")))
  if (any(na)) out$na <- as.raw(na)
  out
}

.encode_column <- function(x, name, argname) {
  bad <- function(what) {
    stop(sprintf("%s: column '%s' is %s, which dpsubset cannot use; %s", argname, name, what,
                 "convert it to a numeric, logical, character or factor column, or leave it out of data"),
         call. = FALSE)
  }
  if (inherits(x, c("Date", "POSIXt", "difftime"))) bad(sprintf("a %s", class(x)[1]))
  if (inherits(x, "integer64")) bad("an integer64 (bit64)")
  if (!is.null(dim(x))) bad("a matrix or data frame column")
  if (inherits(x, "AsIs")) x <- unclass(x)
  if (is.factor(x)) {
    # The factor's levels travel with it, unused ones included: the design treats
    # them as the variable's public levels (see ?dp_best_subset, "Factors").
    return(list(kind = "factor", codes = .raw_int(unclass(x)), levels = .enc_strings(levels(x)),
                ordered = is.ordered(x)))
  }
  if (is.logical(x)) return(list(kind = "logical", data = .raw_int(x)))
  if (is.numeric(x)) return(list(kind = "double", data = .raw_dbl(x)))
  if (is.character(x)) return(list(kind = "character", strings = .enc_strings(x)))
  bad(sprintf("of type %s", paste(class(x), collapse = "/")))
}

# Encode the columns `vars` of a data.frame (all columns when vars is NULL).
.encode_frame <- function(data, vars = NULL, argname = "data") {
  if (!is.data.frame(data)) {
    stop(sprintf("%s must be a data.frame; got an object of class %s", argname, class(data)[1]), call. = FALSE)
  }
  nms <- names(data)
  if (anyDuplicated(nms)) {
    stop(sprintf("%s: duplicate column names %s", argname, paste(unique(nms[duplicated(nms)]), collapse = ", ")),
         call. = FALSE)
  }
  if (!is.null(vars)) nms <- nms[nms %in% vars]
  cols <- lapply(nms, function(nm) .encode_column(data[[nm]], nm, argname))
  list(names = .enc_strings(nms), columns = cols, nrow = nrow(data))
}
