"""Rewrite the printed outputs of the documentation from the code, for a change made on purpose.

`make docs` fails when a ```{testoutput} block of a page no longer matches what the
```{testcode} blocks before it print (docs/conf.py). When the code changed on purpose
(a new column, a new default), this script runs each page's blocks in order, as the
doctest builder does (a fresh namespace per page, in a scratch directory), and writes
what they print now into the page's ```{testoutput} blocks. Review the change with
`git diff docs/` before committing it: a number that moved is a finding, not noise.

Usage::

    .venv/bin/python docs/update_outputs.py                 # every page with checked output
    .venv/bin/python docs/update_outputs.py guide/quickstart.md
    .venv/bin/python docs/update_outputs.py --check         # say which pages differ, write nothing
"""
import argparse
import contextlib
import io
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path

DOCS = Path(__file__).resolve().parent
# A fenced directive block of sphinx.ext.doctest (indented too, as in a list item): its
# indentation, its kind, and its body (option lines, then the content).
BLOCK = re.compile(r"^([ \t]*)```\{(testsetup|testcode|testoutput|testcleanup)\}[^\n]*\n(.*?)^\1```[ \t]*$",
                   re.S | re.M)


def _split_options(body, indent):
    """(option lines with the blank line after them, content without the indentation)
    of a MyST directive body."""
    lines = body.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i][len(indent):].startswith(":"):
        i += 1
    if i and i < len(lines) and not lines[i].strip():
        i += 1
    content = "".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i:])
    return "".join(lines[:i]), content


def _run(code, namespace, page):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{page} (testcode)", "exec"), namespace)
    except Exception:
        raise SystemExit(f"{page}: a block raised, so its output cannot be written:\n"
                         f"{traceback.format_exc()}")
    return "\n".join(line.rstrip() for line in out.getvalue().rstrip("\n").splitlines())


def updated(page):
    """The text of ``page`` with every ```{testoutput} body replaced by what the code prints."""
    text = (DOCS / page).read_text()
    namespace = {"__name__": "__main__"}
    pieces, last, printed = [], 0, None
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="dpsubset-docs-") as scratch:
        os.chdir(scratch)
        try:
            for m in BLOCK.finditer(text):
                indent, kind, body = m.group(1), m.group(2), m.group(3)
                options, content = _split_options(body, indent)
                if kind == "testoutput":
                    if printed is None:
                        raise SystemExit(f"{page}: a testoutput block follows no testcode block")
                    start = m.start(3) + len(options)
                    pieces.append(text[last:start])
                    pieces.append("".join(f"{indent}{line}\n" if line else "\n"
                                          for line in printed.split("\n")) if printed else "")
                    last, printed = m.end(3), None
                else:
                    if printed:
                        raise SystemExit(f"{page}: a testcode block prints output that no "
                                         f"testoutput block shows:\n{printed}")
                    printed = _run(content, namespace, page)
        finally:
            os.chdir(cwd)
    if printed:
        raise SystemExit(f"{page}: the last testcode block prints output that no testoutput "
                         f"block shows:\n{printed}")
    pieces.append(text[last:])
    return "".join(pieces)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", help="pages relative to docs/ (default: all with testcode)")
    parser.add_argument("--check", action="store_true", help="only name the pages that differ")
    args = parser.parse_args(argv)
    pages = args.pages or sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")
                                 if "_build" not in p.parts and "{testcode}" in p.read_text())
    sys.path.insert(0, str(DOCS.parent))  # the checkout's package, as docs/conf.py does
    differ = []
    for page in pages:
        new = updated(page)
        if new != (DOCS / page).read_text():
            differ.append(page)
            if not args.check:
                (DOCS / page).write_text(new)
    verb = "differ" if args.check else "rewritten"
    print(f"{verb}: {', '.join(differ) if differ else 'none'}")
    return 1 if (args.check and differ) else 0


if __name__ == "__main__":
    sys.exit(main())
