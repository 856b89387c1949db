# Two entry points a new user needs: `make demo` and `make test`.
# Both create a virtual environment in .venv and install what they need.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# R side: Debian's R and the R packages the wrapper and its tests use.
# rpy2 (in the `test` extra) builds against R, so R comes before the pip step.
# knitr knits the R vignette to Markdown; no rmarkdown or pandoc needed. tibble:
# tidy()/glance() of the R wrapper return tibbles when it is there (as broom does).
R_APT_PACKAGES := r-base-core r-cran-reticulate r-cran-testthat r-cran-generics r-cran-leaps r-cran-mass r-cran-knitr r-cran-tibble
R_NEEDED       := reticulate testthat generics leaps MASS knitr tibble
# The R wrapper is installed into a library inside .venv, found through R_LIBS.
RLIB    := $(abspath $(VENV))/R-library
RSTAMP  := $(VENV)/.r-wrapper-installed
R_ENV   := R_LIBS=$(RLIB) RETICULATE_PYTHON=$(abspath $(PY))
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test test-quick install clean bench r-system r-install test-r docs

# LaTeX: summary_table(fmt="latex") is compiled by a test (tests/results/test_results.py),
# which make test turns from a skip into a failure when pdflatex is missing.
# booktabs is in texlive-latex-recommended, threeparttable in texlive-latex-extra.
TEX_APT_PACKAGES := texlive-latex-base texlive-latex-recommended texlive-latex-extra
.PHONY: tex-system
tex-system:
	@if command -v pdflatex >/dev/null 2>&1 && kpsewhich booktabs.sty threeparttable.sty >/dev/null 2>&1; then \
	  :; \
	else \
	  echo "installing LaTeX with apt-get: $(TEX_APT_PACKAGES)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $(SUDO) apt-get install -y -qq --no-install-recommends $(TEX_APT_PACKAGES) >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends $(TEX_APT_PACKAGES) >/dev/null; }; \
	fi

r-system:
	@if command -v Rscript >/dev/null 2>&1 && Rscript -e 'quit(status = !all(vapply(strsplit("$(R_NEEDED)", " ")[[1]], requireNamespace, NA, quietly = TRUE)))' >/dev/null 2>&1; then \
	  :; \
	else \
	  echo "installing R and R packages with apt-get: $(R_APT_PACKAGES)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $(SUDO) apt-get install -y -qq --no-install-recommends $(R_APT_PACKAGES) >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends $(R_APT_PACKAGES) >/dev/null; }; \
	fi

# The package alone (enough for the demo), then the test extras (rpy2 needs R).
BASE_STAMP := $(VENV)/.installed-base

$(BASE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(BASE_STAMP)

$(STAMP): $(BASE_STAMP) pyproject.toml | r-system
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

$(RSTAMP): $(STAMP) $(shell find r-wrapper -type f -not -path '*.Rcheck*' 2>/dev/null)
	mkdir -p $(RLIB)
	R CMD INSTALL -l $(RLIB) r-wrapper >$(VENV)/r-install.log 2>&1 || { cat $(VENV)/r-install.log; exit 1; }
	touch $(RSTAMP)

r-install: $(RSTAMP)

demo: $(BASE_STAMP)
	$(PY) -m dpsubset.studies.demo

# The R testthat suite (prints "testthat: N passed, N failed, N skipped"; a skip
# is a failure here, since Python is there), then the Python suite, which
# includes the rpy2 tests (parity R wrapper vs Python API, leaps).
test-r: $(RSTAMP)
	$(R_ENV) DPSUBSET_REQUIRE_PYTHON=true Rscript r-wrapper/run-tests.R r-wrapper/tests/testthat

test: $(STAMP) test-r tex-system
	$(R_ENV) DPSUBSET_REQUIRE_R=true DPSUBSET_REQUIRE_LATEX=true $(PY) -m pytest -n 2 -q

# The quick loop while editing: the Python suite without the tests marked slow (the Monte
# Carlo coverage checks, the vignettes, the docs build; pyproject.toml), no R, no LaTeX.
test-quick: $(STAMP)
	$(PY) -m pytest -n 2 -q -m "not slow"

# The five vignettes at full size, rendered to vignettes/rendered/ (Markdown + PNG).
# Needs only matplotlib beyond the package (the `vignettes` extra, also in `test`)
# and, for the R one, knitr and the installed wrapper. vignettes/ is also a folder,
# hence .PHONY.
.PHONY: vignettes
vignettes: $(RSTAMP)
	$(PY) vignettes/render.py vignettes/01_hitters.py vignettes/02_paper_comparison.py vignettes/03_hinge_classification.py vignettes/05_real_data.py
	$(R_ENV) Rscript vignettes/render_r.R vignettes/04_dpsubset_from_r.Rmd vignettes/rendered

# The documentation site (Sphinx, MyST Markdown pages, numpydoc API reference):
# docs/ -> docs/_build/html. Warnings are errors, as in CI (.ci/run). First the
# doctest builder runs every ```{testcode} block of the pages and compares what it
# prints with the ```{testoutput} block under it, so a page whose printed numbers
# have drifted from the code fails the build (docs/conf.py); the HTML build then
# reuses the parsed pages (-d); last, tests/package/test_docs_drift.py shows on copies of
# the pages that a drifted number or an exception does fail that check.
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(BASE_STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m sphinx -W --keep-going -q -b doctest -d docs/_build/doctrees docs docs/_build/doctest \
	  || { cat docs/_build/doctest/output.txt; echo "make docs: a page's printed output no longer matches the code (above);" \
	       "if the code changed on purpose: $(PY) docs/update_outputs.py, then review git diff docs/"; exit 1; }
	$(PY) -m sphinx -W --keep-going -q -b html -d docs/_build/doctrees docs docs/_build/html
	$(PY) -m pytest -q -p no:cacheprovider tests/package/test_docs_drift.py
	@echo "docs built: docs/_build/html/index.html"

clean:
	rm -rf $(VENV) build *.egg-info docs/_build
