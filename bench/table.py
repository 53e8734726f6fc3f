"""Render the Markdown results tables of bench/README.md from a ``run.py --json`` file.

    .venv/bin/python bench/run.py --json bench/out/full.json
    .venv/bin/python bench/table.py bench/out/full.json     # paste into bench/README.md
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

GOALS = {"overhead": 0.2, "stream_invoke": 1.3, "wide": 1.5, "import": 0.5}


def _num(x, nd=2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:,.{nd}f}"


def _mark(x, goal, nd=2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{_num(x, nd)} {'✓' if x <= goal else '✗'}"


def render(data: dict) -> str:
    cells = {(c["graph"], c["engine"], c["mode"]): c for c in data["cells"]}
    graphs = list(dict.fromkeys(c["graph"] for c in data["cells"]))
    engines = [e for e in ("langgraph", "lgnb") if any(k[1] == e for k in cells)]
    ratios = data.get("ratios", {})
    out = []
    w = out.append

    def cell(g, e, m):
        c = cells.get((g, e, m))
        if not c:
            return ""
        if c.get("error"):
            return "error"
        return f"{_num(c['median_s'] * 1e3, 1)} ({_num(c['overhead_us_per_node'], 0)})"

    w("| graph | floor ms | " + " | ".join(
        f"{e} {m} ms (overhead µs/node)" for e in engines for m in ("invoke", "stream")) + " |")
    w("|---|---:|" + "---:|" * (2 * len(engines)))
    for g in graphs:
        floor = cells[(g, "floor", "-")]["median_s"] * 1e3
        w(f"| {g} | {_num(floor)} | " + " | ".join(
            cell(g, e, m) for e in engines for m in ("invoke", "stream")) + " |")
    w("")
    w("| graph | overhead lgnb/LangGraph, invoke (≤ 0.2) | same, stream (≤ 0.2) "
      "| stream/invoke LangGraph | stream/invoke lgnb (≤ 1.3) |")
    w("|---|---:|---:|---:|---:|")
    for g in graphs:
        w(f"| {g} | {_mark(ratios.get(f'overhead/{g}/invoke'), GOALS['overhead'], 3)} "
          f"| {_mark(ratios.get(f'overhead/{g}/stream'), GOALS['overhead'], 3)} "
          f"| {_num(ratios.get(f'stream_invoke/{g}/langgraph'))} "
          f"| {_mark(ratios.get(f'stream_invoke/{g}/lgnb'), GOALS['stream_invoke'])} |")
    wide = sorted(k for k in ratios if k.startswith("wide/"))
    if wide:
        w("")
        w("| wide state, time per step vs 20 keys | LangGraph | lgnb (≤ 1.5 at 1000 keys) |")
        w("|---|---:|---:|")
        for k in [k for k in wide if k.endswith("/langgraph")]:
            _, size, mode, _ = k.split("/")
            lg = ratios.get(k)
            mine = ratios.get(k.replace("/langgraph", "/lgnb"))
            shown = _mark(mine, GOALS["wide"]) if size.startswith("1000") else _num(mine)
            w(f"| {size.replace('vs', ' vs ')} keys, {mode} | {_num(lg)} | {shown} |")
    marg = sorted(k for k in ratios if k.startswith("wide_marginal/") and k.endswith("/langgraph"))
    if marg:
        w("")
        w("| wide state, marginal time of one step (longer graph − base) | LangGraph | lgnb |")
        w("|---|---:|---:|")
        for k in marg:
            _, size, mode, _ = k.split("/")
            w(f"| {size.replace('vs', ' vs ')} keys, {mode} | {_num(ratios.get(k))} "
              f"| {_num(ratios.get(k.replace('/langgraph', '/lgnb')))} |")
    imports = data.get("imports") or {}
    if imports:
        w("")
        w("| import (fresh interpreter, median) | ms | ratio to `langgraph.graph` |")
        w("|---|---:|---:|")
        base = imports.get("langgraph.graph")
        for mod, v in imports.items():
            if isinstance(v, str):
                w(f"| `import {mod}` | error | |")
                continue
            r = v / base if isinstance(base, float) and base else math.nan
            w(f"| `import {mod}` | {_num(v * 1e3, 0)} | "
              f"{_mark(r, GOALS['import']) if mod == 'lgnb' else _num(r)} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print(render(json.loads(Path(argv[1]).read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
