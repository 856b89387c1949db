# Python's error messages, in R's voice.
#
# The substance of a message (which argument, which column, which count, what
# to do) comes from the one Python implementation; this file only rewrites the
# Python idioms in it into their R counterparts (TRUE/NULL, c(), list(),
# factor levels, predict(fit, newdata), dpsubset_bounds()) and drops advice
# that only makes sense in Python. The error is an R condition of class
# "dpsubset_error" (plus "dpsubset_<PythonType>", e.g. "dpsubset_SearchTimeout",
# for code that needs to tell them apart).

# Regular expression -> replacement, applied in order (perl = TRUE).
.r_voice_rules <- list(
  # the option objects (dpsubset/settings.py) are named lists in R: Ball.r -> ball$r,
  # Refit(split=True) -> refit = list(split = TRUE), Logistic(levels=(-1, 1)) -> loss = list(...)
  c("\\b(?:loss=)?(Logistic|Hinge)\\(levels=\\(([^()]*)\\)\\)",
    "loss = list(name = \"\\L\\1\\E\", levels = c(\\2))"),
  c("\\b(Hinge|Logistic)\\(levels=\\.\\.\\.\\)", "loss = list(name = \"\\L\\1\\E\", levels = ...)"),
  c("\\b(?:(?:budget|ball|search|refit|inference)=)?(Budget|Ball|Search|Refit|Inference)\\((\\w+)=([^()]*)\\)",
    "\\L\\1\\E = list(\\2 = \\3)"),
  c("\\b(Budget|Ball|Search|Refit|Inference)\\.(\\w+)", "\\L\\1\\E$\\2"),
  c("\\bMethod\\.(\\w+)", "method$\\1"),
  c("\\bMethod\\('(\\w+)'\\)", "method = \"\\1\""),
  c("\\b(Huber|Hinge|Logistic)\\.(\\w+)", "loss$\\2"),
  # pandas / numpy advice for missing or infinite values
  c("Remove or impute them first, e\\.g\\. [^;]*?\\.dropna\\([^)]*\\)",
    "Remove or impute them first, with public values (see na.action in ?dp_best_subset)"),
  c("wrap arrays as pd\\.DataFrame\\([^)]*\\)", "use a data.frame"),
  c("(a )?pandas DataFrame( \\(or a dict of columns\\))?", "a data.frame"),
  c("data\\['([^']+)'\\] = pd\\.Categorical\\(data\\['[^']+'\\], categories=\\[([^]]*)\\]\\)",
    "data$\\1 <- factor(data$\\1, levels = c(\\2))"),
  c("with its categories known in advance", "with its levels set in advance"),
  c("a factor with explicit categories", "a factor with its levels set in advance"),
  c("\\(dtype category\\)", "(a factor)"),
  c("has dtype (str|object|string)\\b", "is a character column"),
  c("make (\\S+) a pandas Categorical with explicit categories",
    "make \\1 a factor with its levels set in advance"),
  c("a pandas Categorical", "a factor"),
  c("the Categorical's categories", "the factor's levels"),
  c("Categorical", "factor"),
  # formula idioms
  c("C\\(([^,()]+), levels=\\[([^]]*)\\]\\)", "factor(\\1, levels = c(\\2))"),
  c("levels=\\[\\.\\.\\.\\]", "levels = c(...)"),
  c("C\\(\\.\\.\\.\\)", "factor(...)"),
  c("np\\.(log|log1p|sqrt|exp|expm1|abs)\\(", "\\1("),
  c("\\*\\*", "^"),
  c("raw=True", "raw = TRUE"),
  # results methods
  c("terms are named as in res\\.terms \\(e\\.g\\..*$", "terms are named as in names(coef(fit))"),
  c("res\\.get_prediction\\(newdata\\)", "predict(fit, newdata, interval = \"confidence\")"),
  c("res\\.predict\\(newdata\\)", "predict(fit, newdata)"),
  c("res\\.summary\\(\\)", "summary(fit)"),
  c("res\\.tidy\\(\\)", "tidy(fit)"),
  c("res\\.glance\\(\\)", "glance(fit)"),
  c("res\\.privacy", "fit$privacy"),
  c("predict needs coefficients: fit with refit=True", "predict() needs coefficients: fit with refit = TRUE"),
  # bounds
  c("a Bounds\\b", "a dpsubset_bounds()"),
  c("a pair \\(b_x, b_y\\)", "a pair c(b_x, b_y)"),
  c("Bounds\\(", "dpsubset_bounds("),
  c("\\{'([A-Za-z.][A-Za-z0-9._]*)': \\(([^()]*)\\)(, \\.\\.\\.)?\\}", "list(\\1 = c(\\2)\\3)"),
  c("\\{'([^']+)': \\(([^()]*)\\)(, \\.\\.\\.)?\\}", "list(`\\1` = c(\\2)\\3)"),
  c("\\{'([A-Za-z.][A-Za-z0-9._]*)': ", "list(\\1 = "),
  c("\\{'([^']+)': ", "list(`\\1` = "),
  c("=\\(([^()]*)\\)", " = c(\\1)"),
  c("bounds=\\(b_x, b_y\\)", "bounds = c(b_x, b_y)"),
  c("pass bounds=\\.\\.\\.", "pass bounds = ..."),
  # the Python package's functions and pages, as an R user finds them
  c("\\bdps\\.plan\\b(\\(\\))?", "dpsubset_plan()"),
  c("\\bdps\\.dp_best_subset\\b(\\(\\))?", "dp_best_subset()"),
  c("\\((see )?docs/(guide|methods)/([A-Za-z0-9_-]+)\\.md(, ['\"][^'\"]+['\"])?\\)",
    "(the dpsubset documentation, page '\\3'\\4)"),
  c("\\bdocs/(guide|methods)/([A-Za-z0-9_-]+)\\.md", "the dpsubset documentation's page '\\2'"),
  c("\\bdrop (\\w+)=(?=$|[^\\w])", "leave out \\1"),
  c("\\b([a-z][a-z0-9_]*)= ?(?!=)", "\\1 = "),
  c("\\b(\\w+) = '([^']*)'", "\\1 = \"\\2\""),
  # Python constants and containers
  # whole numbers as R prints them: 1, not 1.0
  c("(?<![\\w.])(-?[0-9]+)\\.0(?![0-9.])", "\\1"),
  # an entry of a dict: x['wt'] -> x$wt
  c("\\b(\\w+)\\['([A-Za-z.][A-Za-z0-9._]*)'\\]", "\\1$\\2"),
  c("\\b(\\w+)\\['([^']*)'\\]", "\\1[[\"\\2\"]]"),
  # a tuple or list of strings (the quoted names may hold brackets: 'poly(x, 2)[1]')
  c("(?<![\\w.)\\]])\\(('[^']*'(?:, '[^']*')+),?\\)", "c(\\1)"),
  c("(?<![\\w.)\\]])\\(('[^']*'),\\)", "c(\\1)"),
  c("(?<![\\w.)\\]])\\[('[^']*'(?:, '[^']*')*)\\]", "c(\\1)"),
  c("(?<![\\w.)\\]])\\[(c\\([^()]*\\)(?:, c\\([^()]*\\))*)\\]", "list(\\1)"),
  # an interval or a pair of numbers: (lo, hi) -> c(lo, hi)
  c("(\\binterval|=) \\((-?[0-9.e+]+|lo|[+-]?inf), (-?[0-9.e+]+|hi|[+-]?inf)\\)", "\\1 c(\\2, \\3)"),
  c("'Intercept'", "'(Intercept)'"),
  c("got an unexpected keyword argument '([^']*)'", "has no argument '\\1'"),
  # the number of supports: choose(p, s) in R
  c("\\bC\\(([0-9]+), ([0-9]+)\\)", "choose(\\1, \\2)"),
  c("\\bTrue\\b", "TRUE"),
  c("\\bFalse\\b", "FALSE"),
  c("\\bNone\\b", "NULL"),
  c("\\bdict\\b", "named list"),
  c("Python API", "Python package")
)

.r_voice <- function(msg) {
  for (rule in .r_voice_rules) msg <- gsub(rule[1], rule[2], msg, perl = TRUE)
  msg
}

# A Python message in R's voice, with the model's columns in R's spelling: names in
# quotes are mapped first (formulaic's spelling, before the rules respace it).
.r_message <- function(msg, map = NULL) {
  if (length(map)) {
    for (py in names(map)[names(map) != map]) {
      msg <- gsub(paste0("'", py, "'"), paste0("'", map[[py]], "'"), msg, fixed = TRUE)
    }
  }
  .r_voice(msg)
}

.raise_python_error <- function(err, map = NULL) {
  msg <- .r_message(err$message, map)
  type <- if (is.null(err$type)) "Error" else err$type
  cond <- structure(class = c(paste0("dpsubset_", type), "dpsubset_error", "error", "condition"),
                    list(message = msg, call = NULL))
  stop(cond)
}
