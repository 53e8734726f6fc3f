"""Run the same graphs on lgnb and on LangGraph in one process and print the ratios.

    .venv/bin/python bench/run.py            # full run (a few minutes)
    .venv/bin/python bench/run.py --quick    # smoke run (seconds)
    .venv/bin/python bench/run.py --engines langgraph --only chain --json out.json

For each graph (graphs.py) and engine: ``invoke`` and
``stream(..., stream_mode=["updates", "messages", "custom"])``, timed with
``time.perf_counter`` over several interleaved repetitions (median reported), plus the
"floor": the same node functions in a plain Python loop. Overhead per node execution =
(engine time - floor time) / node executions. See bench/README.md for the goals.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import engines as engines_mod  # noqa: E402
import graphs  # noqa: E402

STREAM_MODES = ["updates", "messages", "custom"]
MODES = ("invoke", "stream")

# Goals (lgnb): see bench/README.md.
GOAL_OVERHEAD_RATIO = 0.2  # lgnb overhead / LangGraph overhead
GOAL_STREAM_INVOKE = 1.3  # lgnb stream time / lgnb invoke time
GOAL_WIDE = 1.5  # per-step time, 1000-key state / 20-key state
GOAL_IMPORT = 0.5  # import lgnb / import langgraph.graph


@dataclass
class Cell:
    """One measured (graph, engine, mode)."""

    spec: str
    engine: str  # "floor", "langgraph", "lgnb"
    mode: str  # "-" for the floor
    node_execs: int
    times: list[float] = field(default_factory=list)
    events: int | None = None  # stream chunks per run
    summary: Any = None  # cheap result fingerprint, compared across engines
    error: str | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else math.nan


def _summarize(out: Any) -> Any:
    """A cheap fingerprint of a run's result: lists by length, other values as is."""
    if isinstance(out, dict):
        return {k: (len(v) if isinstance(v, list) else v) for k, v in sorted(out.items())}
    return type(out).__name__


def _time(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _runner(built: graphs.Built, mode: str) -> Callable[[], Any]:
    g, make_input, config = built.graph, built.make_input, built.config
    if mode == "invoke":
        return lambda: g.invoke(make_input(), config)

    def stream() -> int:
        n = 0
        for _ in g.stream(make_input(), config, stream_mode=STREAM_MODES):
            n += 1
        return n

    return stream


def _targets(spec: graphs.Spec, engines: list) -> list[tuple[Cell, Callable[[], Any] | None]]:
    targets: list[tuple[Cell, Callable[[], Any] | None]] = []
    targets.append((Cell(spec.name, "floor", "-", spec.node_execs), spec.floor()))
    for eng in engines:
        try:
            built = spec.build(eng)
        except Exception as e:  # noqa: BLE001 - a broken engine must not stop the bench
            for mode in MODES:
                c = Cell(spec.name, eng.name, mode, spec.node_execs, error=_err(e))
                targets.append((c, None))
            continue
        for mode in MODES:
            targets.append((Cell(spec.name, eng.name, mode, spec.node_execs), _runner(built, mode)))
    return targets


def measure(specs: list[graphs.Spec], engines: list, args) -> list[Cell]:
    """Warm up every target once, then run them round-robin so drift hits all alike.

    ``specs`` measured together are compared with each other (the wide states), so they
    share the round-robin too."""
    targets = [t for spec in specs for t in _targets(spec, engines)]

    slowest = 0.0
    for cell, fn in targets:
        if fn is None:
            continue
        try:
            dt, out = _time(fn)  # warm-up, not recorded
        except Exception as e:  # noqa: BLE001
            cell.error = _err(e)
            continue
        if cell.mode == "stream":
            cell.events = out
        else:
            cell.summary = _summarize(out)
        slowest = max(slowest, dt)

    reps = args.reps or max(args.min_reps, min(args.max_reps, int(args.budget / max(slowest, 1e-6))))
    for _ in range(reps):
        for cell, fn in targets:
            if fn is None or cell.error:
                continue
            try:
                dt, _out = _time(fn)
            except Exception as e:  # noqa: BLE001
                cell.error = _err(e)
                continue
            cell.times.append(dt)
    return [c for c, _ in targets]


def _err(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" ({tb[-1].filename.split('/')[-1]}:{tb[-1].lineno})" if tb else ""
    msg = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {msg[:120]}{where}"


# --------------------------------------------------------------- imports --
IMPORT_SNIPPET = "{setup}import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"

#: what is timed for a target of `measure_imports` that is not a plain module: (setup, stmt)
IMPORT_TARGETS = {
    # the notebook path: `lgnb.run` loads the views (anywidget, ipywidgets, IPython) on first use
    "lgnb; lgnb.run": ("", "import lgnb; lgnb.run"),
    # the same in a kernel, where IPython and ipykernel are already imported (not timed)
    "lgnb.run in a kernel": ("import ipykernel.ipkernel; ", "import lgnb; lgnb.run"),
}


def _bytecode_env() -> dict[str, str]:
    """The environment for timed imports: bytecode may be written and read.

    Packages installed by pip load from the `.pyc` files pip compiled at install time;
    lgnb, installed editable from this checkout, has them only once an import wrote them.
    Where `PYTHONDONTWRITEBYTECODE` is set (these machines set it), every interpreter
    would compile lgnb's sources again (~100 ms) while LangGraph loads bytecode, which is
    neither a fair comparison nor what a user's second import costs."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure_imports(mods: list[str], reps: int) -> dict[str, float | str]:
    """Median import time of each module (or `IMPORT_TARGETS` entry), each measured in a
    fresh interpreter, every module loaded from bytecode (`_bytecode_env`: one untimed
    run per target first writes what is missing)."""
    times: dict[str, list[float]] = {m: [] for m in mods}
    errors: dict[str, str] = {}
    env = _bytecode_env()
    for rep in range(reps + 1):
        for m in mods:
            if m in errors:
                continue
            setup, stmt = IMPORT_TARGETS.get(m, ("", f"import {m}"))
            p = subprocess.run(
                [sys.executable, "-c", IMPORT_SNIPPET.format(setup=setup, stmt=stmt)],
                capture_output=True,
                text=True,
                cwd=str(HERE.parent),
                env=env,
            )
            if p.returncode != 0:
                last = (p.stderr.strip().splitlines() or ["?"])[-1]
                errors[m] = last[:120]
                continue
            if rep:  # the first run only writes bytecode
                times[m].append(float(p.stdout.strip().splitlines()[-1]))
    return {m: (errors[m] if m in errors else statistics.median(times[m])) for m in mods}


# ---------------------------------------------------------------- report --
def _fmt(x: float, nd: int = 1) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{nd}f}"


def _verdict(value: float, goal: float) -> str:
    if value is None or math.isnan(value):
        return ""
    return "ok" if value <= goal else "MISS"


def _ratio(a: float, b: float) -> float:
    if a is None or b is None or math.isnan(a) or math.isnan(b) or b <= 0:
        return math.nan
    return a / b


def report(cells: list[Cell], imports: dict, engine_names: list[str], out=sys.stdout) -> dict:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    by = {(c.spec, c.engine, c.mode): c for c in cells}
    specs = list(dict.fromkeys(c.spec for c in cells))
    floor_of = {s: by[(s, "floor", "-")].median for s in specs}

    p("")
    p(f"{'graph':<14} {'engine':<10} {'mode':<7} {'total ms':>10} {'µs/node':>9} "
      f"{'overhead µs/node':>17} {'runs':>5} {'events':>7}")
    p("-" * 86)
    results: dict = {"cells": [], "ratios": {}}
    for s in specs:
        for c in [x for x in cells if x.spec == s]:
            med = c.median
            ov = (med - floor_of[s]) / c.node_execs if c.engine != "floor" else math.nan
            results["cells"].append({
                "graph": s, "engine": c.engine, "mode": c.mode, "node_execs": c.node_execs,
                "median_s": med, "times_s": c.times, "overhead_us_per_node": ov * 1e6,
                "events": c.events, "error": c.error,
            })
            if c.error:
                p(f"{s:<14} {c.engine:<10} {c.mode:<7} error: {c.error}")
                continue
            p(f"{s:<14} {c.engine:<10} {c.mode:<7} {_fmt(med * 1e3, 2):>10} "
              f"{_fmt(med / c.node_execs * 1e6):>9} {_fmt(ov * 1e6):>17} {len(c.times):>5} "
              f"{'' if c.events is None else c.events:>7}")
        p("")

    # Same result and same number of stream chunks on every engine?
    mismatches = []
    for s in specs:
        ref = by.get((s, "langgraph", "invoke"))
        for e in engine_names:
            if e == "langgraph":
                continue
            inv, st = by.get((s, e, "invoke")), by.get((s, e, "stream"))
            ref_st = by.get((s, "langgraph", "stream"))
            if ref and inv and not inv.error and not ref.error and inv.summary != ref.summary:
                mismatches.append(f"{s}: {e} invoke result {inv.summary} != langgraph {ref.summary}")
            if ref_st and st and not st.error and not ref_st.error and st.events != ref_st.events:
                mismatches.append(f"{s}: {e} stream chunks {st.events} != langgraph {ref_st.events}")
    if mismatches:
        p("Result mismatches (the timing comparison is meaningless for these):")
        for m in mismatches:
            p(f"  ! {m}")
        p("")

    def ov(s: str, e: str, m: str) -> float:
        c = by.get((s, e, m))
        if not c or c.error:
            return math.nan
        return (c.median - floor_of[s]) / c.node_execs

    def med(s: str, e: str, m: str) -> float:
        c = by.get((s, e, m))
        return math.nan if not c or c.error else c.median

    has_lgnb = "lgnb" in engine_names
    p(f"Ratios (goals are for lgnb){'' if has_lgnb else ' -- lgnb: not available'}")
    p("")
    if has_lgnb and "langgraph" in engine_names:
        p(f"  overhead per node, lgnb / LangGraph (goal <= {GOAL_OVERHEAD_RATIO})")
        p(f"    {'graph':<14} {'invoke':>8}       {'stream':>8}")
        for s in specs:
            row = []
            for m in MODES:
                r = _ratio(ov(s, "lgnb", m), ov(s, "langgraph", m))
                results["ratios"][f"overhead/{s}/{m}"] = r
                row.append(f"{_fmt(r, 3):>8} {_verdict(r, GOAL_OVERHEAD_RATIO):<4}")
            p(f"    {s:<14} " + " ".join(row))
        p("")
    p(f"  stream / invoke time (goal lgnb <= {GOAL_STREAM_INVOKE})")
    p(f"    {'graph':<14} " + " ".join(f"{e:>10}" for e in engine_names))
    for s in specs:
        row = []
        for e in engine_names:
            r = _ratio(med(s, e, "stream"), med(s, e, "invoke"))
            results["ratios"][f"stream_invoke/{s}/{e}"] = r
            row.append(f"{_fmt(r, 2):>10}")
        lg = results["ratios"].get(f"stream_invoke/{s}/lgnb", math.nan)
        p(f"    {s:<14} " + " ".join(row) + f"  {_verdict(lg, GOAL_STREAM_INVOKE)}")
    p("")
    wides = sorted({int(m.group(1)) for s in specs if (m := re.fullmatch(r"wide-(\d+)", s))})
    if len(wides) >= 2:
        narrow = wides[0]
        p(f"  wide state, time per step vs the {narrow}-key state (goal lgnb <= {GOAL_WIDE} at 1000 keys)")
        for k in wides[1:]:
            for m in MODES:
                row = []
                for e in engine_names:
                    r = _ratio(med(f"wide-{k}", e, m), med(f"wide-{narrow}", e, m))
                    results["ratios"][f"wide/{k}vs{narrow}/{m}/{e}"] = r
                    row.append(f"{e} {_fmt(r, 2):>6}")
                lg = results["ratios"].get(f"wide/{k}vs{narrow}/{m}/lgnb", math.nan)
                verdict = _verdict(lg, GOAL_WIDE) if k >= 1000 else ""
                p(f"    {k:>5} keys {m:<7} " + "   ".join(row) + f"  {verdict}")
        # Marginal cost of one step: longer variant minus base, per extra node.
        longs = [(int(m.group(1)), int(m.group(2)), s) for s in specs
                 if (m := re.fullmatch(r"wide-(\d+)-n(\d+)", s))]
        marg: dict[tuple[int, str, str], float] = {}
        for k, n, s in longs:
            base = by.get((f"wide-{k}", "floor", "-"))
            if not base:
                continue
            for e in engine_names:
                for m in MODES:
                    marg[(k, e, m)] = (med(s, e, m) - med(f"wide-{k}", e, m)) / (n - base.node_execs)
        ks = sorted({k for k, _, _ in marg})
        if len(ks) >= 2:
            lo, hi = ks[0], ks[-1]
            p(f"  wide state, marginal time of one step (longer graph minus base), {hi} vs {lo} keys")
            for m in MODES:
                row = []
                for e in engine_names:
                    r = _ratio(marg.get((hi, e, m), math.nan), marg.get((lo, e, m), math.nan))
                    results["ratios"][f"wide_marginal/{hi}vs{lo}/{m}/{e}"] = r
                    us = marg.get((hi, e, m), math.nan) * 1e6
                    row.append(f"{e} {_fmt(r, 2):>6} ({_fmt(us, 0)} µs/step)")
                p(f"    {m:<7} " + "   ".join(row))
        p("")
    if imports:
        p(f"  import time, fresh interpreter, from bytecode, median (goal import lgnb / import langgraph.graph <= {GOAL_IMPORT})")
        base = imports.get("langgraph.graph")
        for mod, v in imports.items():
            if isinstance(v, str):
                p(f"    import {mod:<16} error: {v}")
                continue
            r = _ratio(v, base) if isinstance(base, float) else math.nan
            results["ratios"][f"import/{mod}"] = r
            verdict = _verdict(r, GOAL_IMPORT) if mod in ("lgnb", "lgnb; lgnb.run", "lgnb.run in a kernel") else ""
            p(f"    import {mod:<22} {v * 1e3:8.1f} ms   ratio {_fmt(r, 2):>6}  {verdict}")
        p("")
    results["imports"] = imports
    return results


# ------------------------------------------------------------------ main --
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small graphs, few runs: a smoke test")
    ap.add_argument("--engines", default="langgraph,lgnb", help="comma-separated (default: langgraph,lgnb)")
    ap.add_argument("--only", default="", help="run only graphs whose name contains this (comma-separated)")
    ap.add_argument("--reps", type=int, default=0, help="fixed number of timed runs per cell")
    ap.add_argument("--budget", type=float, default=None, help="seconds per target per graph (adaptive reps)")
    ap.add_argument("--min-reps", type=int, default=None)
    ap.add_argument("--max-reps", type=int, default=None)
    ap.add_argument("--no-imports", action="store_true", help="skip the import-time measurement")
    ap.add_argument("--json", type=Path, help="also write the results as JSON here")
    a = ap.parse_args(argv)
    if a.budget is None:
        a.budget = 0.2 if a.quick else 2.0
    if a.min_reps is None:
        a.min_reps = 1 if a.quick else 5
    if a.max_reps is None:
        a.max_reps = 3 if a.quick else 25
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.json:  # before the run, not after it: bench/out/ is not in a fresh clone
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SystemExit(f"--json {args.json}: cannot create its folder ({e})") from e
    wanted = [e.strip() for e in args.engines.split(",") if e.strip()]
    loaded = []
    print(f"lgnb bench: Python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cpus{' (quick)' if args.quick else ''}")
    for name in wanted:
        try:
            eng = engines_mod.load(name)
        except engines_mod.EngineUnavailable as e:
            print(f"{name}: not available ({e})")
            continue
        loaded.append(eng)
        print(f"{name}: {eng.version}")
    if not loaded:
        print("no engine available")
        return 1
    if loaded[0].name != "langgraph" and any(e.name == "langgraph" for e in loaded):
        loaded.sort(key=lambda e: e.name != "langgraph")

    specs = graphs.suite(quick=args.quick)
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        specs = [s for s in specs if any(k in s.name for k in keys)]

    # Graphs of the "wide" group are compared with each other: measure them together.
    batches: list[list[graphs.Spec]] = []
    for spec in specs:
        if spec.group == "wide" and batches and batches[-1][0].group == "wide":
            batches[-1].append(spec)
        else:
            batches.append([spec])
    cells: list[Cell] = []
    t0 = time.perf_counter()
    for batch in batches:
        names = ", ".join(f"{s.name} ({s.node_execs} node executions)" for s in batch)
        print(f"  {names} ...", flush=True)
        cells += measure(batch, loaded, args)

    imports = {}
    if not args.no_imports:
        mods = ["langgraph.graph"]
        if any(e.name == "lgnb" for e in loaded):
            mods += ["lgnb", "lgnb.graph", "lgnb; lgnb.run", "lgnb.run in a kernel"]
        imports = measure_imports(mods, reps=3 if args.quick else 9)

    results = report(cells, imports, [e.name for e in loaded])
    print(f"total bench time {time.perf_counter() - t0:.1f} s")
    if args.json:
        results["meta"] = {"python": platform.python_version(), "quick": args.quick,
                           "engines": {e.name: e.version for e in loaded}}
        args.json.write_text(json.dumps(results, indent=1, default=str))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
