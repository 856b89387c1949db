"""Render a percent-format vignette (``# %%`` cells) to Markdown by executing it.

    python vignettes/render.py vignettes/01_hitters.py [more.py ...] [--out vignettes/rendered]

Why a small renderer and not jupytext + nbconvert: the vignettes are plain
Python scripts in jupytext's "percent" format (so jupytext, VS Code or Spyder
open them as notebooks), but executing and converting them the Jupyter way needs
a kernel (ipykernel, pyzmq, tornado, jupyter_client, ...) and nbconvert with its
own dependency tree, some forty packages for what is, here, "run the cells in
order and write down what they print". This file does exactly that with the
standard library and matplotlib, and nothing more:

* a cell starts at a line ``# %%``; ``# %% [markdown]`` starts a Markdown cell,
  whose lines lose their leading ``# `` (text before the first marker is a code cell);
* code cells run in order, in one namespace, as ``python vignette.py`` would run
  them (``__name__ == "__main__"``); what they print (stdout, stderr and warnings)
  is shown under the cell. A bare expression at the end of a cell is **not**
  displayed (plain ``python`` would not show it either): vignettes ``print``;
* after each code cell every open matplotlib figure is saved as a PNG next to the
  Markdown file (``<name>_files/``), linked under the cell, and closed;
* an exception stops the rendering with the traceback and exit status 1;
* the end of the page says how long the run took and whether
  ``DPSUBSET_VIGNETTE_QUICK`` was set.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import re
import sys
import time
import traceback
import warnings
from datetime import datetime, timezone
from pathlib import Path

QUICK_VAR = "DPSUBSET_VIGNETTE_QUICK"
_MARKER = re.compile(r"^# %%(.*)$")


def parse_cells(text):
    """[(kind, source)] with kind "code" or "markdown", in file order; empty cells dropped."""
    cells, kind, lines = [], "code", []

    def flush():
        src = "\n".join(lines).strip("\n")
        if src.strip():
            cells.append((kind, src))

    for line in text.splitlines():
        m = _MARKER.match(line)
        if m:
            flush()
            kind, lines = ("markdown" if "[markdown]" in m.group(1) else "code"), []
            continue
        if kind == "markdown":
            line = line[2:] if line.startswith("# ") else line.lstrip("#")
        lines.append(line)
    flush()
    return cells


class _Tee(io.TextIOBase):
    """Collects what a cell writes (stdout and stderr interleaved, in order)."""

    def __init__(self):
        self.parts = []

    def write(self, s):
        self.parts.append(s)
        return len(s)

    def getvalue(self):
        return "".join(self.parts)


def _fence(text, lang=""):
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}\n"


def render(path, out_dir):
    """Execute the vignette at ``path``; write ``out_dir/<stem>.md`` and its figures.

    Returns (markdown path, seconds). Raises RuntimeError (with the cell's
    traceback) when a cell fails.
    """
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path, out_dir = Path(path).resolve(), Path(out_dir).resolve()
    stem = path.stem
    fig_dir_name = f"{stem}_files"
    fig_dir = out_dir / fig_dir_name
    fig_dir.mkdir(parents=True, exist_ok=True)
    for old in fig_dir.glob("*.png"):
        old.unlink()
    namespace = {"__name__": "__main__", "__file__": str(path), "__builtins__": __builtins__}
    md, n_fig = [], 0
    t_start = time.perf_counter()
    sys.path.insert(0, str(path.parent))
    try:
        for i, (kind, src) in enumerate(parse_cells(path.read_text())):
            if kind == "markdown":
                md.append(src.rstrip() + "\n")
                continue
            md.append(_fence(src, "python"))
            tee = _Tee()
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(tee), contextlib.redirect_stderr(tee), \
                    warnings.catch_warnings():
                warnings.simplefilter("default")
                warnings.showwarning = lambda msg, cat, fn, ln, file=None, line=None: tee.write(
                    f"{cat.__name__}: {msg}\n")
                try:
                    exec(compile(src, f"{path.name} [cell {i + 1}]", "exec"), namespace)
                except Exception:
                    raise RuntimeError(f"{path.name}: cell {i + 1} failed:\n{src}\n\n"
                                       f"{tee.getvalue()}{traceback.format_exc()}") from None
            sys.stdout.write(f"  cell {i + 1}: {time.perf_counter() - t0:.1f} s\n")
            out = tee.getvalue()
            if out.strip():
                md.append(_fence(out))
            for num in plt.get_fignums():
                n_fig += 1
                name = f"fig-{n_fig}.png"
                plt.figure(num).savefig(fig_dir / name, dpi=110, bbox_inches="tight")
                md.append(f"![figure {n_fig}]({fig_dir_name}/{name})\n")
            plt.close("all")
    finally:
        sys.path.remove(str(path.parent))
    seconds = time.perf_counter() - t_start
    quick = os.environ.get(QUICK_VAR) == "1"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md.append("---\n")
    md.append(f"*Rendered by `vignettes/render.py` from `vignettes/{path.name}` on {stamp}: "
              f"{seconds:.0f} s of wall time, {'quick mode (' + QUICK_VAR + '=1)' if quick else 'full size'}, "
              f"Python {platform.python_version()}, {os.cpu_count()} CPUs.*\n")
    if n_fig == 0 and not any(fig_dir.iterdir()):
        fig_dir.rmdir()
    target = out_dir / f"{stem}.md"
    target.write_text("\n".join(md))
    return target, seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vignettes", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "rendered")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    status = 0
    for v in args.vignettes:
        print(f"rendering {v}", flush=True)
        try:
            target, seconds = render(v, args.out)
        except RuntimeError as exc:
            print(exc, file=sys.stderr)
            status = 1
            continue
        print(f"wrote {target} ({seconds:.1f} s)", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
