"""Sphinx configuration of the dpsubset documentation (built by `make docs`).

Pages are MyST Markdown (myst-parser); the API reference is generated from the
numpydoc docstrings of the package (autodoc + numpydoc). index.md orders the pages
as a learning path in explicit toctrees, without globs (Sphinx warns when a glob
matches nothing, and cannot be told not to): a new page must be listed there, and
until it is the build, with warnings as errors, names it as in no toctree.

Printed output that comes from running the package is checked, not copied: pages
show it in ```{testcode} / ```{testoutput} pairs (sphinx.ext.doctest), and
`make docs` runs the doctest builder before the HTML one, so a page whose printed
numbers no longer match the code fails the build (tests/package/test_docs_drift.py shows
it does). Numbers quoted in prose are pinned the same way by hidden pairs
(``:hide:``) next to them. Benchmark tables are measurements that take minutes to
hours; each page gives the command that made them instead.
"""
import os
import sys

# Document the checkout this file sits in, not an installed copy.
sys.path.insert(0, os.path.abspath(".."))

project = "dpsubset"
author = "dpsubset authors"
copyright = "2025-2026, dpsubset authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "numpydoc",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "README.md"]

# MyST: $...$ and $$...$$ math, ```{math} blocks, heading anchors for links
# between pages (guide/x.md#a-heading).
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# numpydoc: no autosummary tables of every method (the class pages list them),
# and no cross-reference of every type word in "Parameters" (nitpicky is off).
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()
autodoc_member_order = "bysource"
autodoc_typehints = "none"

# Pages link to source files of the repository (../dpsubset/x.py): those are not
# documents of the site, so MyST should not try to resolve them as such.
suppress_warnings = ["myst.xref_missing"]

html_theme = "alabaster"
html_title = "dpsubset"
html_theme_options = {"description": "Differentially private best subset selection",
                      "fixed_sidebar": True}

# sphinx.ext.doctest: every page's code runs in a fresh scratch directory (the quick
# start writes a CSV), from a clean namespace per page; the working directory is
# restored after each page. Only the ```{testcode} / ```{doctest} blocks of the
# pages run: ">>>" lines in docstrings are examples, not checks (the test suite
# covers the API).
doctest_global_setup = """
import os as _os, shutil as _shutil, tempfile as _tempfile
_docs_cwd = _os.getcwd()
_docs_scratch = _tempfile.mkdtemp(prefix="dpsubset-docs-")
_os.chdir(_docs_scratch)
"""
doctest_global_cleanup = """
_os.chdir(_docs_cwd)
_shutil.rmtree(_docs_scratch, ignore_errors=True)
"""
doctest_test_doctest_blocks = ""
