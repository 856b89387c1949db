#' Differentially private best subset selection
#'
#' Selects the `s` best predictors of a linear model and refits their
#' coefficients, with a formal differential privacy guarantee. This is the R
#' interface to the Python function `dpsubset.dp_best_subset()`: the arguments
#' have the same names and meanings, and every computation runs in Python (see
#' [dpsubset_python] for how the Python is found). The result is an R object of
#' class `"dpsubset"` with R fields and the usual methods.
#'
#' @section Formulas:
#' The formula is not evaluated in R: it is translated to text and read by
#' formulaic in Python, where the design checks it for privacy leaks. Supported:
#' `y ~ .` (all other columns of `data`), `+`, `-` (dropping a term), `0 +` or
#' `- 1` (no intercept), `:`, `*`, `/`, `(a + b)^2`, and the functions `log`,
#' `log2`, `log10`, `log1p`, `exp`, `expm1`, `sqrt`, `abs`, `I()` (arithmetic
#' inside, e.g. `I(hp^2)`), `C(x, levels = c(...))`, `factor(x, levels = c(...))`
#' (the same as `C()`), `poly(x, d, raw = TRUE)`. `scale()`, `center()` and
#' orthogonal `poly()` are accepted but learn from the data, so the guarantee
#' is void (with a warning). Anything else (`offset()`, `ns()`, `%in%`, `|`,
#' variables that are not columns of `data`, other R functions) is an error:
#' compute such columns in R and add them to `data`.
#'
#' @section Names of the coefficients:
#' The coefficients, `support`, `candidates` and `tidy()` use the names `lm()`
#' gives the same formula: `Speciesvirginica` for a dummy, `I(wt^2)`,
#' `factor(am, levels = c(0, 1))1`, `poly(wt, 2, raw = TRUE)1`, `vsTRUE` for a
#' logical column, `hp:wt` (in R's order) for an interaction, `(Intercept)`.
#' `fit$terms_python` maps the Python package's names (formulaic's, such as
#' `Species[T.virginica]`) to them; a name that cannot be matched keeps its
#' formulaic spelling. Names in `bounds` and `keep` are data columns, or
#' terms and columns of the model as `lm()` names them (`"I(wt^2)"`,
#' `"poly(wt, 2, raw = TRUE)1"`, `"factor(cyl, levels = c(4, 6, 8))6"`,
#' `"Speciesvirginica"`) or as formulaic does (`"I(wt ** 2)"`); a codebook
#' (`bounds`) may also name data columns the formula does not use, which are
#' listed in `fit$bounds_unused`, so one codebook serves every formula of a data
#' set. (`"(Intercept)"` is never needed there.)
#'
#' @section Missing values:
#' `na.action = "fail"` (the default; `na.fail` is accepted too) is the only
#' option: a missing value in a column the formula uses is an error that names
#' the columns and counts. Dropping those rows (`na.omit`, `na.exclude`) is
#' refused because it would make n, the number of rows, depend on the data,
#' while the guarantee takes n as public: neighbouring data sets replace one
#' row, and a row that turns missing would then remove a row instead. Fill
#' missing values before the call with values fixed without looking at the
#' data (a public imputation: a value from a codebook, or a missing-indicator
#' column plus a constant), which acts on each row alone and keeps the
#' guarantee; an imputation from the data (the column mean, a model) does not.
#' Dropping rows by a rule fixed in advance makes n public only if the rule's
#' outcome is public, e.g. a study design.
#'
#' @section Factors:
#' A factor column is passed with its levels, in order and including levels
#' that do not occur, and dpsubset takes those levels as **public**: which
#' levels exist must not be learned from the data, since they decide the
#' columns of the model. `factor(x)` and `read.csv(stringsAsFactors = TRUE)`
#' learn them from the values: set them from public knowledge instead, e.g.
#' `factor(x, levels = c("A", "N"))`. A character column has no levels; dpsubset
#' then learns them from the data, warns and reports the guarantee as void.
#' Logical columns are 0/1 columns with the public bound 1. Numeric columns
#' need bounds (below). Dates and list columns are refused. Missing values in
#' the columns the formula uses are an error (rows are never dropped: that
#' would change n). R cannot tell levels fixed in advance from levels learned by
#' `factor(x)` when they are in sorted order (read from the levels alone, never
#' from which values occur): such factors get a
#' warning of class `"dpsubset_privacy_leak"` (one per call, naming the
#' columns) unless `public_levels` names them.
#'
#' @section Bounds:
#' Bounds are public: they must come from outside the data. `bounds = c(b_x, b_y)`
#' clips every predictor column to `[-b_x, b_x]` and the response to
#' `[-b_y, b_y]`, without rescaling (the setting of the paper). Per-column
#' bounds: `bounds = dpsubset_bounds(x = list(hp = c(50, 350), wt = 6), y = c(10, 35))`
#' (or the same as a plain named list), where `c(lo, hi)` is an interval (clipped
#' and mapped to `[-1, 1]` by its public midpoint and half-width) and a single
#' number `b` a symmetric bound. Missing bounds are taken from the data with a
#' warning of class `"dpsubset_privacy_leak"`, and the guarantee is void.
#'
#' @section Settings that cannot beat chance:
#' Before any work on the data, the call checks from public quantities only (n,
#' the number of candidates, `s`, the budget, the bounds and `r`) whether the
#' release can be better than chance on any data, and if not warns with class
#' `"dpsubset_low_utility"`, saying what would help (a larger `eps`, more rows,
#' tighter bounds, a smaller `r` or `s`). The privacy guarantee is not affected:
#' the warning is about usefulness. On `mtcars` (32 rows, 10 candidates) with
#' the codebook of the example below and the default radius (`r = 0.5` here),
#' `s = 3` needs `eps` of about 2.7 (0.12 of it centres the codebook's columns and sizes the ball):
#' `eps = 1` warns that about 2.72 times the selection budget would help, `eps = 3`
#' does not warn. The warning is an R
#' warning whose class says its kind; its text is the message alone.
#'
#' @section Randomness:
#' The private draws use Python's random generator. `set.seed()` does not affect
#' them: pass `random_state` (a whole number) to repeat a release exactly; the
#' same `random_state` gives the same result as the Python API on the same data.
#' With `random_state = NULL` the generator is seeded from the operating
#' system's entropy, which is what a real release should use: a seeded release
#' is private only while the seed stays secret (its privacy report says so,
#' `fit$privacy$seeded`).
#'
#' @section Option lists:
#' The settings changed most are arguments of their own; the others are grouped, as
#' in the Python package, in named lists with the fields of its option objects
#' (`dpsubset.Budget`, `Ball`, `Search`, `Method`, the losses, `Refit`, `Inference`):
#' `budget = list(select = 1, refit = 0.5)`, `ball = list(r = 0.5)`,
#' `search = list(route = "enumeration", time_limit = 60)`,
#' `method = list(name = "mistakes", gap_check = "assume")`,
#' `loss = list(name = "logistic", levels = c(-1, 1))`, `refit = list(split = TRUE)`,
#' `inference = list(truth_in_ball = TRUE)`. An argument of an older version
#' (`r`, `lam`, `eps_select`, `time_limit`, `response_levels`, `method_options`, ...)
#' is an error that names its new place.
#'
#' @param formula A two-sided formula such as `mpg ~ .` or `mpg ~ wt + hp + factor(cyl, levels = c(4, 6, 8))`
#'   (see Formulas), or the same as a string.
#' @param data A data.frame.
#' @param eps Total privacy budget of the call (every stage together), > 0.
#' @param s Number of columns to select.
#' @param bounds Public bounds: `NULL`, `c(b_x, b_y)`, or [dpsubset_bounds()] /
#'   a list with elements among `x`, `y`, `default` (see Bounds).
#' @param method `"top_r"` (default; exact top-R, pure eps-DP), `"mistakes"`
#'   (a private gap check, (eps, delta)-DP), or another selection method registered in
#'   the Python package (its comparison baselines; see `dpsubset.selection.base.METHODS`
#'   there); or a named list with its `name` and options: `R` (the length of the top-R
#'   list, fixed in advance; default `2 + (p - s) s`), `gap_check` (`"mistakes"` only:
#'   `"ptr"`, a private test of the score gap, or `"assume"`, the paper's conditional
#'   guarantee, not checked), `screen` (private screening before the selection, top-R
#'   and mistakes with least squares: `TRUE`, the defaults, keep `k = 10 s` columns with
#'   half of the selection budget; a whole number `k`; or `list(k = , share = , gamma = )`;
#'   it drops true columns whose marginal correlation with the response is weak, see the
#'   Python package's screening page), and the method's own options, e.g.
#'   `list(name = "samp_agg", blocks = 20)`.
#' @param loss `"squared"` (default), `"huber"` (regression with outliers), or a
#'   classification loss, `"logistic"` or `"hinge"`; or a named list with its `name` and
#'   fields: `h` (the Huber threshold or the hinge's smoothing, in the mapped units of the
#'   response; default the Python package's) and, for the classification losses, `levels`:
#'   the two classes as `c(class coded -1, class coded +1)`, fixed in advance, e.g.
#'   `list(name = "logistic", levels = c(-1, 1))` for a numeric response coded -1/+1, or
#'   `c("control", "case")`. Without `levels` the coding comes from the column's type
#'   only, never from the values that occur (which would differ between neighbouring data
#'   sets and break the guarantee): a two-level factor by its declared levels (first
#'   coded -1), a logical as `c(FALSE, TRUE)`, and a numeric column by the fixed coding
#'   `c(0, 1)`. For a factor response the values are its level labels (`c(0, 1)` means the
#'   levels `"0"` and `"1"`). A row whose value is neither class is an error that names
#'   the column and the number of such rows. `fit$response_levels` then names the two
#'   classes, and `predict()` gives the linear predictor (`type = "link"`, positive: the
#'   second class), the probability of the second class (`type = "response"`, logistic
#'   only) or the class (`type = "class"`).
#' @param keep Character vector of columns always in the model.
#' @param refit Fit DP coefficients on the released support (objective perturbation);
#'   `list(split = TRUE)`: select on a random half of the rows and refit (with its
#'   inference) on the other half; the split is drawn independently of the data (see the
#'   Python package's inference page for when to use it).
#' @param inference `TRUE`: release private uncertainty too, from the Python
#'   package's private inference (its page docs/guide/inference.md): standard
#'   errors and intervals of the coefficients (`loss` `"squared"` or `"huber"`),
#'   by a parametric bootstrap of the refit on privately released second moments
#'   (Ferrando, Wang and Sheldon 2022). `confint()`, `vcov()` and `tidy(fit,
#'   conf.int = TRUE)` then return them; without it they are errors of class
#'   `"dpsubset_not_released"` (see [dpsubset-not-released]). The privacy report
#'   lists the inference stages with their eps (their budget: `budget = list(inference = )`).
#'   `list(truth_in_ball = TRUE)`: you know, from outside the data, that the true
#'   coefficients lie inside the refit's ball (norm at most `r_refit` in the mapped
#'   units). By default a release whose coefficients lie on the ball's sphere gets
#'   intervals that also hold truths beyond it, which can be very wide; with it they
#'   assume the truth inside the ball, and `summary()` says so.
#' @param centre The private centring of the codebook's columns and response (Python's
#'   `centre=`): `NULL` (default) centres when the bounds hold an interval; `FALSE` turns it
#'   off; a named list sets `share`, `spreads`, `tighten`, `min_interior`, `fit_share` (the
#'   share of `eps`, on top of `share`, that releases how much of the response the best support
#'   explains, which sizes the selection's ball for least squares; default 0.02; 0: not released).
#' @param random_state `NULL` or a whole number (see Randomness).
#' @param budget How `eps` (and delta) are shared, a named list: `select`, `refit` (the
#'   selection's and the refit's budgets; default half each of what the centring and the
#'   inference leave), `inference` (the inference stages', taken off the top; default the
#'   Python package's share), `gap_test`, `delta` (budget and delta of the gap test of
#'   `"mistakes"`; default a quarter of the selection budget, and 1e-6), `refit_delta` (the
#'   Gaussian (eps, delta)-DP refit instead of the pure one).
#' @param ball The radius and ridge of each stage, a named list: `r` (the radius of the
#'   coefficient ball, in mapped units, of the scores and the refit; by default
#'   `A / sqrt(B_s)`: the largest prediction `A` equals the response bound up to
#'   `n * eps = 20000` and grows like `(n * eps / 20000)^(1/3)` above, the selection's
#'   from its eps and the refit's (`glance(fit)$r_refit`) from its own, see the Python
#'   package's docs/guide/choosing-settings.md; with a codebook and `loss = "squared"` the
#'   selection's radius follows the centring's released fit of the best support instead
#'   (the privacy report says so); for `loss = "logistic"` and `"hinge"` the
#'   largest linear predictor is 2 in the selection and 6 in the refit), `lam` (the
#'   selection's ridge, > 0; by default 1 up to `n * eps = 10000` and
#'   `max(0.01, 10000 / (n * eps))` above, for logistic and hinge
#'   `max(1, 0.01 n, 5 B_s log(choose(p, s)) / (2 eps))`), `r_select`, `r_refit` (the
#'   radius of one stage instead of `r`: the selection's sets its score sensitivity, the
#'   refit's its noise), `lam_select` (instead of `lam`), `lam_refit` (a floor under the
#'   refit's own ridge `2 lambda / eps`). `glance(fit)` has `r`, `lam`, `r_refit`,
#'   `lam_refit` (the ridge the refit used).
#' @param search The exact search: its route, `"auto"` (default), `"enumeration"`,
#'   `"branch_and_bound"`, `"outer_approximation"`, `"pyomo"` (the paper's formulation (9)
#'   for an MIQCP solver of your own, through Pyomo) or `"scip"` (the same formulation with
#'   SCIP, open source, through pyscipopt); or a named list with `route` and: `time_limit`
#'   (seconds allowed for the whole call; `NULL`: 600 s; `Inf`: no limit; if reached,
#'   nothing is released, an error; whether a call times out depends on the data, a timing
#'   side channel: fix the limit before looking at the data and do not publish that a call
#'   timed out), `memory_limit` (bytes that the exact search's growing structures may hold;
#'   `NULL`: half the machine's memory; `Inf`: no limit; past it the call stops like a
#'   timeout), `solver` and `solver_options` (with `route = "pyomo"`: the Pyomo solver name,
#'   e.g. `"gurobi_persistent"`, and a named list of its options).
#' @param verbose `NULL` (the default): a progress bar once the call has run 2 s,
#'   when R runs in a terminal (Rscript, R in a shell; not RStudio's console), with
#'   the stage and the seconds left before the time limit. `TRUE`: the bar at once,
#'   and the exact search's solves (how many, by which route): NON-PRIVATE, since
#'   they depend on the data; for your terminal only, not for publication.
#'   `FALSE`: nothing.
#' @param na.action What to do with missing values: only `"fail"` (or
#'   `na.fail`), see Missing values.
#' @param subset As for `lm()`: an expression evaluated in `data` (then in the
#'   caller's frame) that keeps rows, e.g. `subset = region == "north"`, or row
#'   numbers. The number of rows kept is the n of the release, which the guarantee
#'   takes as public (as it takes `nrow(data)`): use a subgroup whose size you
#'   could publish, such as one fixed by the study design. An `NA` in a logical
#'   subset is an error (rows are never dropped silently).
#' @param public_levels Factor columns whose levels were fixed in advance from
#'   public knowledge (a character vector, or `TRUE` for all). A factor whose
#'   levels are exactly the values that occur, sorted, is what `factor(x)` and
#'   `read.csv(stringsAsFactors = TRUE)` learn from the data; the call then warns
#'   once (class `"dpsubset_privacy_leak"`), naming those columns, unless they
#'   are listed here.
#' @param ... Not used; an error if given. The arguments after `s` are matched by
#'   their full names only, as in Python (`r = 1` is not taken for `refit`), and an
#'   argument of an older version gets an error naming its new place.
#'
#' @return An object of class `"dpsubset"`: a list with
#'   \item{support}{the released columns (character).}
#'   \item{coefficients}{DP coefficients (named numeric) over the always-in
#'     columns and all candidates, zero off the support; `NULL` when `refit = FALSE`.}
#'   \item{forced, candidates}{always-in columns and candidate columns (character).}
#'   \item{privacy}{the privacy report, a list of class `"dpsubset_privacy"`:
#'     `guarantee` (`"pure"`, `"approximate"`, `"conditional"` or `"void"`),
#'     `statement`, `eps`, `delta`, `stages` (data.frame: stage, mechanism, eps,
#'     delta), `neighbours`, `sensitivity`, `bounds_public`, `leaks`,
#'     `exact_search` (`TRUE` when the method runs an exact search; every such
#'     fit has all its solves certified, since a search that does not certify
#'     releases nothing), `gap_check_passed` (`NA` when there was no gap
#'     test), `all_certificates_closed` (`TRUE` for every fit). There is no
#'     per-solve certificate list: which solves the search needed, how many and
#'     by which route depend on the data and are not released; `verbose =
#'     TRUE` prints them on your terminal, labelled non-private.}
#'   \item{bounds_unused}{the entries of a codebook (`bounds`) for data columns
#'     this formula does not use (character; one codebook serves every formula
#'     of a data set).}
#'   \item{response_levels}{for a classification loss, the classes coded -1 and +1; else `NULL`.}
#'   \item{method, s, loss, nobs, response, formula, formula_python, refit, call}{as named.}
#'   \item{terms_python}{named character vector: the Python package's column
#'     names (names) and their R spelling (values).}
#'   It holds no data: no fitted values or residuals, which would be computed
#'   from the private data (`residuals()`, `fitted()`, `vcov()`, `confint()`,
#'   `logLik()`, `AIC()`, `anova()` ... are errors that say so; see
#'   [dpsubset-not-released]). Methods: `print`, `summary`, `coef`, `predict`,
#'   `nobs`, `formula`, [generics::tidy()], [generics::glance()],
#'   [generics::augment()] (new data only) and [summary_table()].
#' @seealso [dpsubset_python], [dpsubset_bounds()], [predict.dpsubset()], [tidy.dpsubset()]
#' @export
#' @examplesIf dpsubset_available()
#' # public bounds from what cars of the 1970s can be, not from the data
#' b <- dpsubset_bounds(x = list(cyl = c(2, 12), disp = c(50, 500), hp = c(40, 400),
#'                               drat = c(2, 5.5), wt = c(1, 6), qsec = c(12, 25),
#'                               vs = c(0, 1), am = c(0, 1), gear = c(3, 6), carb = c(1, 8)),
#'                      y = c(5, 50))
#' # a release: random_state stays NULL (a seeded release is private only while
#' # the seed is secret)
#' fit <- dp_best_subset(mpg ~ ., data = mtcars, eps = 6, s = 3, bounds = b)
#' fit
#' summary(fit)
#' coef(fit)
#' predict(fit, mtcars[1:5, ])
#' tidy(fit)
dp_best_subset <- function(formula, data, eps, s, ..., bounds = NULL, method = "top_r", loss = "squared",
                           keep = NULL, refit = TRUE, inference = FALSE, centre = NULL, random_state = NULL,
                           verbose = NULL, budget = NULL, ball = NULL, search = "auto", na.action = "fail",
                           subset = NULL, public_levels = NULL) {
  cl <- match.call()
  # do.call() puts the data.frame itself into the call: keep only a placeholder name;
  # and a formula object in the call would carry its environment (and the data in it).
  if (!is.null(cl$data) && !is.name(cl$data) && !is.call(cl$data)) cl$data <- as.name("data")
  if (inherits(cl$formula, "formula")) environment(cl$formula) <- globalenv()
  if (...length()) {
    # the names only: evaluating `...` would fail on an argument meant for data (lm's weights = w)
    dots <- names(match.call(expand.dots = FALSE)$...)
    dots <- if (is.null(dots)) rep("(unnamed)", ...length()) else ifelse(nzchar(dots), dots, "(unnamed)")
    .refuse_moved(dots)
    stop("unknown argument(s) ", paste(dots, collapse = ", "), "; see ?dp_best_subset", call. = FALSE)
  }
  if (missing(eps)) stop("eps, the total privacy budget of the call, is required", call. = FALSE)
  if (missing(s)) stop("s, the number of columns to select, is required", call. = FALSE)
  if (!is.numeric(s) || length(s) != 1L || is.na(s) || s != round(s) || s < 0) {
    stop(sprintf("s, the number of columns to select, must be a whole number such as 3; got %s",
                 paste(format(s), collapse = ", ")), call. = FALSE)
  }
  method <- .check_option(method, "method", .OPTION_FIELDS$method, name = "name")
  loss <- .check_option(loss, "loss", .OPTION_FIELDS$loss, name = "name")
  search <- .check_option(search, "search", .OPTION_FIELDS$search, name = "route")
  budget <- .check_option(budget, "budget", .OPTION_FIELDS$budget)
  ball <- .check_option(ball, "ball", .OPTION_FIELDS$ball)
  refit <- .check_option(refit, "refit", .OPTION_FIELDS$refit, flag = TRUE)
  inference <- .check_option(inference, "inference", .OPTION_FIELDS$inference, flag = TRUE)
  if (!is.data.frame(data)) {
    stop(sprintf("data must be a data.frame; got an object of class %s", class(data)[1]), call. = FALSE)
  }
  data <- .subset_rows(data, substitute(subset), parent.frame())
  .check_public_levels(public_levels, data)
  for (nm in c("eps", "s", "random_state")) .check_number(get(nm, envir = environment()), nm)
  if (is.list(method)) .check_screen(method$screen)
  if (!is.null(keep) && !is.character(keep)) stop("keep must be a character vector of column names", call. = FALSE)
  if (is.character(formula)) formula <- stats::as.formula(formula)
  if (is.list(loss) && !is.null(loss$levels)) loss$levels <- .check_response_levels(loss$levels, formula, data)
  # The formula is read as text; its environment (the caller's frame, which may hold
  # the data) must not travel with the result into saveRDS().
  environment(formula) <- globalenv()

  ftxt <- .formula_text(formula, names(data))
  .check_na_action(na.action)
  .fail_on_missing(data, if (is.null(ftxt$vars)) names(data) else ftxt$vars, "data")
  .bounds_plain(bounds)  # malformed bounds: R's error, before any work
  .warn_levels_like_data(data, if (is.null(ftxt$vars)) names(data) else ftxt$vars, public_levels)
  # Terms named as R names them (I(wt^2), poly(wt, 2, raw = TRUE)1): Python's names (names.R).
  pymap <- NULL
  keys <- .named_keys(bounds, keep)
  if (length(setdiff(keys, names(data)))) {
    pymap <- .python_name_map(ftxt, formula, data)
    bounds <- .bounds_to_python(bounds, pymap)
    if (!is.null(keep)) keep <- .to_python_names(keep, pymap)
  }
  # One codebook per data set: its entries for data columns this formula does not use
  # travel too, so that Python lists them as unused (bounds_unused), as for a Python caller.
  send <- ftxt$vars
  if (!is.null(send)) send <- union(send, intersect(keys, names(data)))
  cols <- .encode_frame(data, send)
  if (!is.null(verbose) && !(is.logical(verbose) && length(verbose) == 1L && !is.na(verbose))) {
    stop("verbose must be NULL (a progress bar when the call runs past 2 s in a terminal), TRUE or FALSE",
         call. = FALSE)
  }
  if (!is.null(centre) && !(isTRUE(centre) || isFALSE(centre) || is.list(centre))) {
    stop("centre must be TRUE, FALSE or a named list of settings, e.g. list(share = 0.2)", call. = FALSE)
  }
  if (is.list(loss) && !is.null(loss$levels)) loss$levels <- as.list(unname(loss$levels))
  # The option lists go to Python as dicts (named lists), as the fields of its option objects.
  args <- list(eps = eps, s = s, bounds = .bounds_plain(bounds), method = method, loss = loss,
               keep = if (is.null(keep)) NULL else as.list(keep), refit = refit, inference = inference,
               centre = centre, random_state = random_state, verbose = verbose, budget = budget,
               ball = ball, search = search)
  args <- args[!vapply(args, is.null, NA) | names(args) %in% c("eps", "s")]
  out <- .bridge()$fit(ftxt$text, cols, args)
  plain <- out[[2]]
  # messages name model columns in R's spelling; a name that is a data column stays
  # (a logical column 'am' is the model column amTRUE, but a message means the column)
  msg_map <- function(m) m[!(names(m) %in% names(data))]
  if (!is.null(plain$error)) {
    .replay_warnings(plain$warnings, msg_map(pymap))
    .raise_python_error(plain$error, msg_map(pymap))
  }

  state <- new.env(parent = emptyenv())
  state$result <- out[[1]]
  state$pickle <- plain$pickle
  # R's names for the model's columns (lm's spelling), matched term by term.
  py_terms <- unique(c(.chr(plain$forced), .chr(plain$candidates)))
  map <- .r_term_map(py_terms, formula, data)
  .replay_warnings(plain$warnings, msg_map(c(map, pymap[setdiff(names(pymap), names(map))])))
  privacy <- .privacy_list(plain$privacy, plain$privacy_text)
  used <- if (is.null(ftxt$vars)) names(data) else intersect(names(data), ftxt$vars)
  coefs <- NULL
  if (!is.null(plain$coef_values)) {
    coefs <- stats::setNames(as.numeric(unlist(plain$coef_values)), .rename(plain$coef_names, map))
  }
  tidy_df <- .plain_frame(plain$tidy)
  tidy_df$term <- .rename(tidy_df$term, map)
  glance_df <- .plain_frame(plain$glance)
  glance_df$formula <- .formula_string(formula)
  if (!is.null(glance_df$selection_verdict)) glance_df$selection_verdict <- .r_voice(glance_df$selection_verdict)
  structure(list(
    support = .rename(plain$support, map),
    coefficients = coefs,
    forced = .rename(plain$forced, map),
    candidates = .rename(plain$candidates, map),
    bounds_unused = .chr(plain$bounds_unused),
    bounds_derived = lapply(plain$bounds_derived, as.numeric),
    privacy = privacy,
    method = plain$method,
    s = as.integer(s),
    loss = plain$loss,
    nobs = as.integer(plain$nobs),
    response = plain$response,
    response_levels = if (is.null(plain$response_levels)) NULL else .chr(plain$response_levels),
    formula = formula,
    formula_python = ftxt$text,
    refit = !isFALSE(refit),
    call = cl,
    terms_python = map,
    # the columns' names and types, no row: what terms() and update() need to expand '.'
    .prototype = data[0L, used, drop = FALSE],
    .tidy = tidy_df,
    .glance = glance_df,
    .python = state
  ), class = "dpsubset")
}

#' Public bounds for dp_best_subset
#'
#' Bounds must be fixed without looking at the data (from the measurement
#' scale, a codebook, the design of the study). See the Bounds section of
#' [dp_best_subset()].
#'
#' @param x `NULL`, one number `b` for every predictor column (clip to
#'   `[-b, b]`, no rescaling; dummy and logical columns keep their bound 1), or
#'   a named list of per-column bounds, each a number `b` or an interval
#'   `c(lo, hi)`. Names are model-matrix column names or data variables.
#' @param y Bound of the response: a number or an interval `c(lo, hi)`.
#' @param default Bound for predictor columns that `x` does not name.
#' @return A list of class `"dpsubset_bounds"`.
#' @export
#' @examples
#' dpsubset_bounds(x = list(hp = c(50, 350), wt = c(1, 6)), y = c(10, 35), default = 10)
dpsubset_bounds <- function(x = NULL, y = NULL, default = NULL) {
  b <- list(x = x, y = y, default = default)
  .bounds_plain(b)  # validate now, where the mistake is made
  structure(b, class = "dpsubset_bounds")
}

#' @export
print.dpsubset_bounds <- function(x, ...) {
  fmt <- function(v) if (is.null(v)) "none" else if (length(v) == 2L) sprintf("[%g, %g]", v[1], v[2]) else format(v)
  cat("Public bounds for dpsubset\n")
  if (is.list(x$x)) {
    for (nm in names(x$x)) cat(sprintf("  x %-12s %s\n", nm, fmt(x$x[[nm]])))
  } else {
    cat(sprintf("  x (all columns) %s\n", fmt(x$x)))
  }
  cat(sprintf("  y               %s\n  default         %s\n", fmt(x$y), fmt(x$default)))
  invisible(x)
}

# ---------------------------------------------------------------------------- helpers

.chr <- function(x) as.character(unlist(x))

# A frame sent by dpsubset.interfaces.r_bridge.frame_to_plain as a data.frame (None -> NA).
.plain_frame <- function(pf) {
  nms <- .chr(pf$names)
  cols <- lapply(pf$columns, function(col) {
    v <- lapply(col$values, function(x) if (is.null(x)) NA else x)
    conv <- switch(col$kind, logical = as.logical, integer = as.integer, double = as.numeric,
                   as.character)
    conv(unlist(v))
  })
  if (!length(nms)) return(data.frame())
  n <- length(pf$columns[[1]]$values)
  cols <- lapply(cols, function(v) if (length(v)) v else rep(NA, n))
  as.data.frame(stats::setNames(cols, nms), stringsAsFactors = FALSE, optional = TRUE)
}

# response_levels: two classes given as an R vector. A factor response reaches Python
# as a Categorical whose categories are the level labels (strings), so the classes of
# a factor are compared as strings: c(0, 1) names the levels "0" and "1".
.check_response_levels <- function(response_levels, formula, data) {
  if (is.null(response_levels)) return(NULL)
  if (is.factor(response_levels)) response_levels <- as.character(response_levels)
  if (!(is.numeric(response_levels) || is.character(response_levels) || is.logical(response_levels)) ||
      length(response_levels) != 2L || anyNA(response_levels)) {
    stop("response_levels must be two values, c(class coded -1, class coded +1), fixed in advance, ",
         "e.g. c(-1, 1) or c(\"control\", \"case\")", call. = FALSE)
  }
  if (response_levels[1] == response_levels[2]) {
    stop("response_levels must name two different classes", call. = FALSE)
  }
  lhs <- if (is.call(formula) && length(formula) == 3L) all.vars(formula[[2L]]) else character()
  if (length(lhs) == 1L && is.factor(data[[lhs]])) response_levels <- as.character(response_levels)
  response_levels
}

# The option lists: their fields, as the Python package's option objects have them
# (dpsubset/settings.py); the values are checked there, and its errors come back in R's voice.
.OPTION_FIELDS <- list(
  budget = c("select", "refit", "inference", "gap_test", "delta", "refit_delta"),
  ball = c("r", "lam", "r_select", "r_refit", "lam_select", "lam_refit"),
  search = c("route", "time_limit", "memory_limit", "solver", "solver_options"),
  method = NULL,  # a method's own options are its own: Python checks them
  loss = c("name", "h", "levels"),
  refit = "split",
  inference = "truth_in_ball"
)

# An option: NULL, one string (its name or route, where `name` says which field), TRUE/FALSE
# (`flag`), or a named list of its fields. Returns it as the Python side takes it.
.check_option <- function(x, arg, fields, name = NULL, flag = FALSE) {
  if (is.null(x)) return(NULL)
  if (flag && (isTRUE(x) || isFALSE(x))) return(x)
  if (!is.null(name) && is.character(x) && length(x) == 1L && !is.na(x)) return(x)
  if (is.list(x) && length(x) && !is.null(names(x)) && all(nzchar(names(x)))) {
    extra <- if (is.null(fields)) character() else setdiff(names(x), fields)
    if (length(extra)) {
      stop(sprintf("%s: unknown field(s) %s; it takes %s", arg, paste(extra, collapse = ", "),
                   paste(fields, collapse = ", ")), call. = FALSE)
    }
    if (identical(name, "name") && is.null(x$name)) {
      stop(sprintf("%s: a list needs the %s's name, e.g. list(name = \"%s\", ...)", arg, arg,
                   if (arg == "method") "mistakes" else "logistic"), call. = FALSE)
    }
    return(x)
  }
  what <- c(if (flag) "TRUE, FALSE" else if (!is.null(name)) "one string" else "NULL",
            sprintf("a named list of its fields (%s)",
                    if (is.null(fields)) "name, R, gap_check, screen and the method's options"
                    else paste(fields, collapse = ", ")))
  stop(sprintf("%s must be %s", arg, paste(what, collapse = " or ")), call. = FALSE)
}

# Arguments of an older version and their new places (Python's dpsubset.settings.MOVED, in R).
.MOVED_ARGUMENTS <- c(
  r = "ball = list(r = ...)", lam = "ball = list(lam = ...)", r_select = "ball = list(r_select = ...)",
  r_refit = "ball = list(r_refit = ...)", lam_select = "ball = list(lam_select = ...)",
  lam_refit = "ball = list(lam_refit = ...)",
  eps_select = "budget = list(select = ...)", eps_refit = "budget = list(refit = ...)",
  eps_inference = "budget = list(inference = ...)", eps0 = "budget = list(gap_test = ...)",
  delta = "budget = list(delta = ...)", refit_delta = "budget = list(refit_delta = ...)",
  R = "method = list(name = \"top_r\", R = ...)",
  gap_check = "method = list(name = \"mistakes\", gap_check = ...)",
  screen = "method = list(name = \"top_r\", screen = ...)",
  method_options = "method = list(name = ..., <option> = ...)",
  huber_h = "loss = list(name = \"huber\", h = ...)", hinge_h = "loss = list(name = \"hinge\", h = ...)",
  response_levels = "loss = list(name = \"logistic\", levels = c(...)) (or name = \"hinge\")",
  split = "refit = list(split = TRUE)", truth_in_ball = "inference = list(truth_in_ball = TRUE)",
  time_limit = "search = list(time_limit = ...)", memory_limit = "search = list(memory_limit = ...)",
  solver = "search = list(route = \"pyomo\", solver = ...)",
  solver_options = "search = list(route = ..., solver_options = list(...))",
  diagnostics = "nothing: the non-private diagnostics are for the Python API only"
)

.refuse_moved <- function(args) {
  old <- intersect(args, names(.MOVED_ARGUMENTS))
  if (!length(old)) return(invisible())
  more <- if (length(old) > 1L) sprintf(" (and %s)", paste(old[-1], collapse = ", ")) else ""
  stop(sprintf("dp_best_subset(): %s moved: use %s%s; see the section \"Option lists\" in ?dp_best_subset",
               old[1], .MOVED_ARGUMENTS[[old[1]]], more), call. = FALSE)
}

# na.action: only "fail" is private (see the section "Missing values" of ?dp_best_subset).
.check_screen <- function(screen) {
  if (is.null(screen) || isTRUE(screen) || isFALSE(screen)) return(invisible())
  whole <- function(v) is.numeric(v) && length(v) == 1L && !is.na(v) && v == round(v)
  if (whole(screen)) return(invisible())
  if (is.list(screen) && !is.null(names(screen)) && all(names(screen) %in% c("k", "share", "gamma")) &&
      (is.null(screen$k) || whole(screen$k))) {
    return(invisible())
  }
  stop("method$screen must be NULL, TRUE, a whole number k (columns kept), or ",
       "list(k = , share = , gamma = ); see ?dp_best_subset", call. = FALSE)
}

.check_na_action <- function(na.action) {
  if (is.function(na.action) && identical(na.action, stats::na.fail)) return(invisible())
  if (is.character(na.action) && length(na.action) == 1L && na.action %in% c("fail", "na.fail")) {
    return(invisible())
  }
  what <- if (is.function(na.action)) {
    hit <- Filter(function(f) identical(na.action, get(f, envir = asNamespace("stats"))),
                  c("na.omit", "na.exclude", "na.pass"))
    if (length(hit)) hit else "this function"
  } else if (is.character(na.action)) na.action[1] else class(na.action)[1]
  stop(sprintf(paste0(
    "na.action = %s is not available: dropping the rows with missing values would make n, the number ",
    "of rows, depend on the data, while the privacy guarantee takes n as public (neighbouring data ",
    "sets replace one row). Use na.action = \"fail\" (the default) and fill the missing values before ",
    "the call with values fixed without looking at the data (a public imputation, e.g. a value from a ",
    "codebook, or a missing-indicator column), or drop rows by a public rule before the call ",
    "(see \"Missing values\" in ?dp_best_subset)"), what), call. = FALSE)
}

# Missing values in the columns a call uses: an error that names the columns and counts.
.fail_on_missing <- function(data, vars, argname) {
  vars <- intersect(vars, names(data))
  counts <- vapply(vars, function(v) {
    x <- data[[v]]
    if (is.list(x) || !is.null(dim(x))) return(0L)
    sum(is.na(x))
  }, 0L)
  counts <- counts[counts > 0L]
  if (!length(counts)) return(invisible())
  stop(sprintf(paste0(
    "%s has missing values in %s. dpsubset does not drop rows: that would make n, the number of rows, ",
    "depend on the data, while the privacy guarantee takes n as public. Fill them before the call with ",
    "values fixed without looking at the data (a public imputation: a codebook value, or a ",
    "missing-indicator column plus a constant), or drop rows by a public rule; see \"Missing values\" ",
    "in ?dp_best_subset"), argname,
    paste(sprintf("'%s' (%d row%s)", names(counts), counts, ifelse(counts == 1L, "", "s")), collapse = ", ")),
    call. = FALSE)
}

.check_number <- function(v, name) {
  if (is.null(v)) return(invisible())
  if (!is.numeric(v) || length(v) != 1L || is.na(v)) {
    stop(sprintf("%s must be a single number%s", name,
                 if (name == "random_state") " or NULL" else ""),
         call. = FALSE)
  }
  invisible()
}

.bound_entry <- function(v, where) {
  if (!is.numeric(v) || !(length(v) %in% 1:2) || anyNA(v)) {
    stop(sprintf("bounds %s: give a number b or an interval c(lo, hi)", where), call. = FALSE)
  }
  if (length(v) == 2L) as.list(unname(as.numeric(v))) else unname(as.numeric(v))
}

# Bounds as plain values for the Python side (see dpsubset.interfaces.r_bridge._bounds_from_r).
.bounds_plain <- function(bounds) {
  if (is.null(bounds)) return(NULL)
  if (is.numeric(bounds) && is.null(names(bounds))) {
    if (length(bounds) != 2L) {
      stop("bounds: give c(b_x, b_y), or dpsubset_bounds(x = ..., y = ...) for per-column bounds", call. = FALSE)
    }
    return(list(pair = lapply(bounds, function(v) if (is.na(v)) NULL else as.numeric(v))))
  }
  if (is.numeric(bounds)) bounds <- as.list(bounds)
  if (!is.list(bounds)) stop("bounds: give c(b_x, b_y) or dpsubset_bounds(x = ..., y = ...)", call. = FALSE)
  bounds <- unclass(bounds)
  extra <- setdiff(names(bounds), c("x", "y", "default"))
  if (is.null(names(bounds)) || length(extra)) {
    stop("bounds: a list must have elements named among x, y, default", call. = FALSE)
  }
  out <- list()
  x <- bounds$x
  if (!is.null(x)) {
    if (is.numeric(x) && is.null(names(x))) {
      if (length(x) != 1L) {
        stop("bounds x: one number for all columns, or a named list such as list(hp = c(50, 350))", call. = FALSE)
      }
      out$x <- as.numeric(x)
    } else {
      x <- as.list(x)
      if (is.null(names(x)) || any(!nzchar(names(x)))) stop("bounds x: every entry must be named", call. = FALSE)
      out$x <- stats::setNames(lapply(names(x), function(nm) .bound_entry(x[[nm]], sprintf("x[\"%s\"]", nm))),
                               names(x))
    }
  }
  if (!is.null(bounds$y)) out$y <- .bound_entry(bounds$y, "y")
  if (!is.null(bounds$default)) out$default <- .bound_entry(bounds$default, "default")
  out
}

.rows_df <- function(rows, cols) {
  if (!length(rows)) {
    return(as.data.frame(stats::setNames(lapply(cols, function(t) vector(t, 0L)), names(cols)),
                         stringsAsFactors = FALSE))
  }
  df <- lapply(names(cols), function(nm) {
    v <- lapply(rows, function(r) r[[nm]])
    conv <- switch(cols[[nm]], character = as.character, numeric = as.numeric, logical = as.logical)
    conv(unlist(v))
  })
  as.data.frame(stats::setNames(df, names(cols)), stringsAsFactors = FALSE)
}

.privacy_list <- function(p, text) {
  structure(list(
    guarantee = p$guarantee,
    statement = .r_voice(p$statement),
    eps = p$eps,
    delta = p$delta,
    stages = .rows_df(p$stages, c(stage = "character", mechanism = "character", eps = "numeric",
                                  delta = "numeric")),
    neighbours = p$neighbours,
    sensitivity = p$sensitivity,
    seeded = isTRUE(p$seeded),
    bounds_public = p$bounds_public,
    leaks = .r_voice(.chr(p$leaks)),
    exact_search = isTRUE(p$exact_search),
    gap_check_passed = if (is.null(p$gap_check_passed)) NA else p$gap_check_passed,
    all_certificates_closed = p$all_certificates_closed,
    # NULL unless inference = TRUE released one; its advice in R's spelling
    selection_confidence = if (!is.null(p$selection_confidence)) .r_voice(p$selection_confidence),
    text = text
  ), class = "dpsubset_privacy")
}
