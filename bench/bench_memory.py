"""Peak memory of long runs, lgnb against LangGraph, each measurement in a fresh process.

    .venv/bin/python bench/bench_memory.py                 # every case, both engines
    .venv/bin/python bench/bench_memory.py --only steps-none,messages --engines lgnb

Cases:

- ``steps-<saver>``: a 10,000-step run of one node looping on itself (a conditional edge
  reads the state and loops until ``n`` reaches the step count) over a 20-key state; the
  node writes ``n`` and one string key. ``<saver>`` is ``none`` (no checkpointer),
  ``memory`` (``InMemorySaver``, the same class for both engines) or ``sqlite`` (each
  engine's own SQLite saver on a fresh file, both with ``synchronous=NORMAL``:
  lgnb.checkpoint.sqlite against langgraph-checkpoint-sqlite).
- ``messages``: an ``add_messages`` state whose input holds 10,000 messages; the node
  appends one ``AIMessage`` per step for 200 steps (no checkpointer). ``messages-sqlite``:
  the same run saved by each engine's SQLite saver (as ``steps-sqlite``), i.e. a long
  conversation saved at every step; ``messages-memory`` saved by each engine's own
  ``InMemorySaver`` (lgnb's is LangGraph's class subclassed: it joins a grown list's
  bytes instead of serializing it again, and stores the same bytes).

Each (case, engine) runs twice, each time in its own subprocess so peaks never mix:

- **RSS**: ``getrusage(RUSAGE_SELF).ru_maxrss`` after the run minus the RSS measured after
  imports, graph compile and building the input (``gc.collect()`` first). Before the run
  the kernel's peak-RSS mark is reset (``/proc/self/clear_refs`` ← 5), so the figure is the
  run's own peak even when importing peaked higher; where the reset is refused the figure
  is marked ``*`` (a lower bound). "kept" is the RSS still held after the run returns and
  ``gc.collect()`` (the result, the saver's checkpoints, allocator slack).
- **tracemalloc**: peak and kept Python allocations during the run (a separate process,
  since tracing slows the run and costs memory of its own).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from engines import load  # noqa: E402
from graphs import counted_loop, message_loop  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

STEPS = 10_000
HISTORY, MESSAGE_STEPS = 10_000, 200
CASES = ("steps-none", "steps-memory", "steps-sqlite", "messages", "messages-sqlite", "messages-memory")


def _steps_graph(e: Any, steps: int, saver: Any) -> Any:
    keys: dict[str, Any] = {"n": int, "last": str}
    keys.update({f"k{i}": str for i in range(18)})
    schema = TypedDict("Wide20", keys)  # type: ignore[operator]

    def node(state: dict) -> dict:
        n = state["n"] + 1
        return {"n": n, "last": f"step {n}"}

    return counted_loop(e, schema, node, steps, saver=saver)


@contextmanager
def _saver(engine: str, kind: str) -> Iterator[Any]:
    if kind == "none":
        yield None
    elif kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif kind == "memory-own":
        module = "lgnb.checkpoint.memory" if engine == "lgnb" else "langgraph.checkpoint.memory"
        yield __import__(module, fromlist=["InMemorySaver"]).InMemorySaver()
    elif engine == "lgnb":
        from lgnb.checkpoint.sqlite import SqliteSaver

        with tempfile.TemporaryDirectory() as d:
            with SqliteSaver.from_conn_string(Path(d) / "mem.db", synchronous="NORMAL") as s:
                yield s
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver as LgSqliteSaver

        with tempfile.TemporaryDirectory() as d:
            with LgSqliteSaver.from_conn_string(str(Path(d) / "mem.db")) as s:
                s.setup()
                s.conn.execute("PRAGMA synchronous = NORMAL")
                yield s


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def child(case: str, engine: str, trace: bool) -> dict[str, Any]:
    """One measurement in this (fresh) process; returns figures in bytes."""
    e = load(engine)
    config: dict[str, Any] = {"configurable": {"thread_id": "mem"}}
    messages = case.startswith("messages")
    if messages:
        from langchain_core.messages import HumanMessage

        kinds = {"messages-sqlite": "sqlite", "messages-memory": "memory-own"}
        ctx: Any = _saver(engine, kinds[case]) if case in kinds else nullcontext(None)
        history = [HumanMessage(f"m{i}", id=f"h{i}") for i in range(HISTORY)]
        inp: dict[str, Any] = {"messages": history, "n": 0}
        config["recursion_limit"] = MESSAGE_STEPS + 10
    else:
        ctx = _saver(engine, case.split("-", 1)[1])
        inp = {"n": 0, "last": ""} | {f"k{i}": f"value of k{i}" for i in range(18)}
        config["recursion_limit"] = STEPS + 10
    with ctx as saver:
        graph = (
            message_loop(e, MESSAGE_STEPS, saver=saver) if messages else _steps_graph(e, STEPS, saver)
        )
        gc.collect()
        base = _rss()
        reset = _reset_peak()
        if trace:
            tracemalloc.start()
        t0 = time.process_time()
        out = graph.invoke(inp, config)
        cpu = time.process_time() - t0
        expect = MESSAGE_STEPS if messages else STEPS
        if out["n"] != expect:
            raise SystemExit(f"{engine} {case}: the run stopped at n={out['n']}, not {expect}")
        gc.collect()
        result: dict[str, Any] = {"cpu_s": cpu}
        if trace:
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            result |= {"trace_peak": peak, "trace_kept": current}
        else:
            peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            result |= {"rss_peak": peak_rss - base, "rss_kept": _rss() - base, "reset": reset}
        del out
    return result


def _measure(case: str, engine: str, trace: bool) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", case, engine] + (["--trace"] if trace else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{engine} {case} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _mb(n: float) -> str:
    return f"{n / 2**20:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--engines", default="langgraph,lgnb")
    ap.add_argument("--only", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--child", nargs=2, metavar=("CASE", "ENGINE"), help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.trace)))
        return 0
    print("| case | engine | peak RSS (MB) | RSS kept (MB) | tracemalloc peak (MB) | kept (MB) | CPU (s) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for case in (c.strip() for c in args.only.split(",")):
        if case not in CASES:
            raise SystemExit(f"unknown case {case!r}: choose from {', '.join(CASES)}")
        for engine in (n.strip() for n in args.engines.split(",")):
            rss = _measure(case, engine, trace=False)
            tr = _measure(case, engine, trace=True)
            mark = "" if rss["reset"] else "*"
            print(
                f"| {case} | {engine} | {_mb(rss['rss_peak'])}{mark} | {_mb(rss['rss_kept'])} "
                f"| {_mb(tr['trace_peak'])} | {_mb(tr['trace_kept'])} | {rss['cpu_s']:.2f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
