# Two entry points a new user needs: `make demo` and `make test`.
# Both create a virtual environment in .venv and install what they need.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m dpsubset.demo

test: $(STAMP)
	$(PY) -m pytest -n 2 -q

clean:
	rm -rf $(VENV) build *.egg-info
