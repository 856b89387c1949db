"""The documentation cannot drift from the code (issue 28, items 10 and 11).

`make docs` runs Sphinx's doctest builder before the HTML one (Makefile, docs/conf.py):
each ```{testcode} block of a page runs and what it prints is compared with the
```{testoutput} block under it. These tests show that a drifted number makes that
build fail, and check the parts of the site's navigation a new user depends on.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dpsubset

pytestmark = pytest.mark.slow  # builds or runs whole pages: `make test` runs them, `make test-quick` does not

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("numpydoc")


def _doctest_build(tmp_path, edits):
    """Run the doctest builder, as `make docs` does, on a copy of docs/ with ``edits``
    ({page: (old, new)}) applied; returns (exit status, the builder's report)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(DOCS, repo / "docs", ignore=shutil.ignore_patterns("_build"))
    # The pages include the rendered vignettes and document the package by paths
    # relative to docs/: the copy sees the same files.
    for name in ("vignettes", "dpsubset"):
        (repo / name).symlink_to(ROOT / name, target_is_directory=True)
    for page, (old, new) in edits.items():
        path = repo / "docs" / page
        text = path.read_text()
        assert text.count(old) == 1, f"{old!r} is not once on {page}: update this test"
        path.write_text(text.replace(old, new))
    out = repo / "docs" / "_build"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "doctest",
         "-d", str(out / "doctrees"), str(repo / "docs"), str(out / "doctest")],
        capture_output=True, text=True, timeout=600)
    report = (out / "doctest" / "output.txt").read_text() if (out / "doctest" / "output.txt").exists() else ""
    return proc.returncode, report + proc.stdout + proc.stderr


def test_a_drifted_number_fails_the_docs_build(tmp_path):
    # The two drifts put back: the quick start's old Delta in a printed block,
    # and r.md's old ratio in the hidden pair that pins the number quoted in its prose.
    status, report = _doctest_build(tmp_path, {
        "guide/quickstart.md": ("score sensitivity Delta = 0.0037594",
                                "score sensitivity Delta = 0.00701514"),
        "guide/r.md": ("```{testoutput}\n:hide:\n\n2.72\n```", "```{testoutput}\n:hide:\n\n5.4\n```"),
    })
    assert status != 0
    # Each failure names its page, what the page says and what the code prints.
    quick = report[report.index('File "guide/quickstart.md"'):]
    assert "Delta = 0.00701514" in quick.split("Got:")[0] and "Delta = 0.0037594" in quick
    r_page = report[report.index('File "guide/r.md"'):]
    assert re.search(r"Expected:\s+5\.4\s+Got:\s+2\.72", r_page)
    # The page left alone passes in the same build: the failures are the drifts.
    assert re.search(r"Document: guide/reading-the-report\n-+\n1 items passed all tests", report)


def test_update_outputs_writes_what_the_code_prints(tmp_path):
    # A change made on purpose: docs/update_outputs.py rewrites the drifted block
    # from the code, and leaves the page as the code prints it (the checked-in page).
    page = "guide/quickstart.md"
    original = (DOCS / page).read_text()
    copy = tmp_path / "docs"
    shutil.copytree(DOCS, copy, ignore=shutil.ignore_patterns("_build"))
    (copy / page).write_text(original.replace("Delta = 0.0037594", "Delta = 0.00701514"))
    script = [sys.executable, str(copy / "update_outputs.py")]
    check = subprocess.run(script + ["--check", page], capture_output=True, text=True, timeout=300)
    assert check.returncode == 1 and "differ: guide/quickstart.md" in check.stdout
    subprocess.run(script + [page], check=True, capture_output=True, text=True, timeout=300)
    assert (copy / page).read_text() == original


def test_make_docs_runs_the_check_before_the_site():
    target = (ROOT / "Makefile").read_text().split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert 0 <= target.index("-b doctest") < target.index("-b html")
    assert "sphinx.ext.doctest" in (DOCS / "conf.py").read_text()


def test_an_exception_in_a_page_fails_the_docs_build(tmp_path):
    status, report = _doctest_build(tmp_path, {
        "guide/reading-the-report.md": ('eps=2.0, s=5,', 'eps=-2.0, s=5,')})
    assert status != 0
    assert 'File "guide/reading-the-report.md"' in report and "Exception raised" in report


@pytest.mark.parametrize("page", ["guide/quickstart.md", "guide/reading-the-report.md"])
def test_the_first_pages_print_only_checked_output(page):
    # Every block that runs on these pages runs in the build: no plain ```python
    # block (unchecked code) and no ```text block (an output copied by hand).
    text = (DOCS / page).read_text()
    assert "```python" not in text and "```text" not in text
    assert text.count("```{testcode}") >= 3 and text.count("```{testoutput}") >= 3


def test_the_index_is_an_ordered_learning_path():
    index = (DOCS / "index.md").read_text()
    entries = re.findall(r"^(guide|methods|benchmarks|vignettes)/([\w*-]+)$", index, re.M)
    order = [f"{a}/{b}" for a, b in entries]
    # alphabetical order was the issue: the one glob is the numbered vignettes'
    assert index.count(":glob:") == 1 and [e for e in order if "*" in e] == ["vignettes/*"]
    assert order[:3] == ["guide/quickstart", "guide/reading-the-report", "guide/sample-size"]
    # settings, then R, then the methods, then the benchmarks
    first = {part: min(i for i, e in enumerate(order) if e == part or e.startswith(part + "/"))
             for part in ("guide/choosing-settings", "guide/r", "methods", "benchmarks")}
    assert (first["guide/choosing-settings"] < first["guide/r"] < first["methods"]
            < first["benchmarks"])
    # every page of the site is in a list (Sphinx -W would also fail on an orphan)
    pages = {str(p.relative_to(DOCS).with_suffix("")) for p in DOCS.rglob("*.md")
             if "_build" not in p.parts and p.name != "index.md"}
    listed = set(order) | {"guide/architecture"}
    missing = sorted(p for p in pages if not p.startswith("vignettes/") and p not in listed)
    assert not missing, (f"{missing}: in no list of docs/index.md (orphan: true hides the page "
                         "from the build's warning, not from the reader); add each where it belongs")
    assert "{doc}`API reference <api>`" in index  # a link, not plain text
    for page in ("quickstart", "reading-the-report"):
        assert "(sample-size.md)" in (DOCS / "guide" / f"{page}.md").read_text()


def test_the_vignettes_page_links_to_the_rendered_vignettes():
    text = (DOCS / "guide" / "vignettes.md").read_text()
    for rendered in sorted((ROOT / "vignettes" / "rendered").glob("*.md")):
        page = DOCS / "vignettes" / rendered.name
        assert page.exists(), (f"vignettes/rendered/{rendered.name} has no page on the site: "
                               f"copy docs/vignettes/01_hitters.md to docs/{page.relative_to(DOCS)} "
                               "with its name, and add a row to docs/guide/vignettes.md")
        assert f"../../vignettes/rendered/{rendered.name}" in page.read_text()
        assert f"(../vignettes/{rendered.name})" in text


def test_the_api_page_lists_every_public_name():
    api = (DOCS / "api.rst").read_text()
    modules = re.findall(r"^\.\. automodule:: ([\w.]+)", api, re.M)
    for name in dpsubset.__all__:
        obj = getattr(dpsubset, name)
        documented = (f"dpsubset.{name}\n" in api
                      or getattr(obj, "__module__", None) in modules)
        assert documented, f"dpsubset.{name} is not on docs/api.rst"
    for name in ("LowUtilityWarning", "NotReleasedError"):
        assert f".. autoclass:: dpsubset.{name}\n" in api
