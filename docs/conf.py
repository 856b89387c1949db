"""Sphinx configuration of the dpsubset documentation (built by `make docs`).

Pages are MyST Markdown (myst-parser); the API reference is generated from the
numpydoc docstrings of the package (autodoc + numpydoc). The toctrees of index.md
glob guide/, methods/ and benchmarks/, so a new page there needs no index edit.
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
