"""The package's layout rules (docs/guide/architecture.md): one subpackage per stage of
the data flow, no import cycle, no module over 800 lines, no function body over 120
lines (docstring excluded), at most eight modules flat in ``dpsubset/``."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2] / "dpsubset"
FILES = sorted(ROOT.rglob("*.py"))
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120
MAX_FLAT_MODULES = 8


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(f): f for f in FILES}


def import_graph():
    """module -> the package modules it imports (at module level or inside functions)."""
    graph = {}
    for name, path in MODULES.items():
        is_init = path.name == "__init__.py"
        package = name.split(".") if is_init else name.split(".")[:-1]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else [])) if node.level \
                    else (node.module or "")
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
                deps.update(subs if len(subs) == len(node.names) else [target, *subs])
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in MODULES and d != name}
    return graph


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_and_function_sizes(path):
    src = path.read_text()
    assert len(src.splitlines()) <= MAX_MODULE_LINES, f"{path.name}: split it"
    long = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (len(body) > 1 and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
                body = body[1:]
            if node.end_lineno - body[0].lineno + 1 > MAX_FUNCTION_LINES:
                long.append(node.name)
    assert long == []


def test_few_modules_flat_in_the_package():
    flat = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(flat) <= MAX_FLAT_MODULES, flat


def test_architecture_page_names_every_module():
    page = (ROOT.parent / "docs" / "guide" / "architecture.md").read_text()
    missing = [str(p.relative_to(ROOT.parent)) for p in FILES
               if p.name != "__init__.py" and str(p.relative_to(ROOT.parent)) not in page]
    assert missing == []


def private_gram_reads(files=None):
    """Modules outside dpsubset/scores/ that read a scorer's private Gram matrix
    (``._gram``) instead of its public ``gram`` (issue 38)."""
    import re
    hits = []
    for path in (FILES if files is None else files):
        if "scores" in path.parts:
            continue
        if re.search(r"\w\._gram\b", path.read_text()):
            hits.append(path.name)
    return hits


def test_the_search_reads_the_scorers_public_gram():
    assert private_gram_reads() == []


def test_the_gram_check_finds_a_private_read(tmp_path):
    bad = tmp_path / "search" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("def f(scorer):\n    return scorer._gram\n")
    assert private_gram_reads([bad]) == ["bad.py"]


def private_imports_across_subpackages(graph_files=None):
    """``from dpsubset.<a>... import _name`` inside dpsubset/<b>/ (or a flat module) with
    a != b: a stage reaching into another's private names (issue 38)."""
    hits = []
    for path in (FILES if graph_files is None else graph_files):
        rel = path.relative_to(ROOT) if graph_files is None else pathlib.Path(*path.parts[-2:])
        sub = rel.parts[0] if len(rel.parts) > 1 else None
        pkg = ["dpsubset", *rel.parts[:-1]]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = (".".join(pkg[:len(pkg) - node.level + 1] + ([node.module] if node.module else []))
                      if node.level else (node.module or ""))
            tparts = target.split(".")
            if tparts[0] != "dpsubset":
                continue
            tsub = tparts[1] if len(tparts) > 1 else None
            hits += [f"{rel}: {a.name}" for a in node.names if a.name.startswith("_") and tsub != sub]
    return hits


def test_no_stage_imports_another_stages_private_names():
    assert private_imports_across_subpackages() == []


def test_the_private_import_check_finds_one(tmp_path):
    bad = tmp_path / "inference" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("from ..refit.objective import _calibrate\nfrom .bootstrap import _ok_inside\n")
    assert private_imports_across_subpackages([bad]) == ["inference/bad.py: _calibrate"]


#: The stages in the order data flow through them (docs/guide/architecture.md). A unit may
#: import only the units before it (and itself). The foundation comes first: the losses,
#: the parameter rules, privacy's vocabulary (guarantees, the budget, the sensitivity),
#: the call's runtime (deadline, progress), the defaults, and ``mechanisms.noise``, the one
#: module every random draw goes through (a rule of its own, tests/mechanisms/), which the
#: design's centring and the search's heuristics draw from.
STAGE_ORDER = ["losses", "_validation", "privacy", "runtime", "defaults", "mechanisms.noise", "design",
               "search", "scores", "mechanisms", "selection", "refit", "inference", "results", "settings",
               "nonprivate", "api", "studies", "interfaces", "__main__", ""]


def _unit(module):
    """The stage a module belongs to: ``dpsubset.search.exact`` -> "search"; the package's
    ``__init__`` -> "" (last: it gathers everything)."""
    parts = module.split(".")[1:]
    if parts[:2] == ["mechanisms", "noise"]:
        return "mechanisms.noise"
    return parts[0] if parts else ""


def imports_against_the_stage_order(graph):
    """``(importer, imported)`` pairs where a module imports a later stage's module."""
    rank = {u: k for k, u in enumerate(STAGE_ORDER)}
    bad = []
    for module, deps in graph.items():
        for dep in deps:
            a, b = _unit(module), _unit(dep)
            # the units after the API (studies, the entry points) use the package as a user
            # would, ``import dpsubset``; no stage of a release may
            user = b == "" and rank[a] > rank["api"]
            if a != b and rank[b] > rank[a] and not user:
                bad.append((module, dep))
    return sorted(bad)


def test_every_unit_has_a_place_in_the_stage_order():
    assert {_unit(m) for m in MODULES} <= set(STAGE_ORDER)


def test_no_stage_imports_a_later_stage():
    assert imports_against_the_stage_order(import_graph()) == []


def test_the_stage_order_check_finds_a_backward_import():
    graph = {"dpsubset.scores.two_swap": {"dpsubset.search.enumeration"},       # search before scores: fine
             "dpsubset.design.build": {"dpsubset.refit.objective"},             # design -> refit: against
             "dpsubset.search.heuristics": {"dpsubset.mechanisms.noise"},       # the noise: foundation
             "dpsubset.search.exact": {"dpsubset.mechanisms.top_r"}}            # search -> a mechanism: against
    assert imports_against_the_stage_order(graph) == [("dpsubset.design.build", "dpsubset.refit.objective"),
                                                      ("dpsubset.search.exact", "dpsubset.mechanisms.top_r")]


def test_every_public_name_exists():
    """``__all__`` of every module names only what the module has (a star import works): a
    name moved to another module must leave the list it was in (issue 38 moved several)."""
    import importlib
    missing = {}
    for name in MODULES:
        if name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        gone = [n for n in getattr(module, "__all__", []) if not hasattr(module, n)]
        if gone:
            missing[name] = gone
    assert missing == {}
