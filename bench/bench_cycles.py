"""What runs leave for Python's cyclic garbage collector, lgnb and LangGraph side by side.

Why: an object in a reference cycle is freed only when the cyclic GC collects it, not when
the run lets go of it. A run that makes a cycle per task makes the collector run every few
steps (work no plain loop does, ~12k instructions per ReAct node in lgnb until the
twenty-sixth session), and whatever the cycle reaches (a node's input state, the messages
it wrote, a large local) stays in memory until then; once those objects are old, until a
full collection.

For each engine, in a fresh interpreter each:

- ``react``: ``graphs.react(20)`` (``invoke``, no checkpointer): the collections of each
  generation per run (100 runs after 3 warm-up runs; the floor, the same node functions
  in a plain loop, for reference) and the objects one run leaves in cycles;
- ``interrupt``: a node that holds ~50 MB in a local when it calls ``interrupt()``
  (InMemorySaver): the memory still held (tracemalloc) once ``invoke`` has returned, and
  after a ``gc.collect()``.

    .venv/bin/python bench/bench_cycles.py
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tracemalloc
from typing import Any, TypedDict

HERE = os.path.dirname(os.path.abspath(__file__))


def _react(engine: str) -> dict[str, Any]:
    sys.path.insert(0, HERE)
    import engines
    import graphs

    spec = graphs.react(20)
    if engine == "floor":
        run = spec.floor()
    else:
        built = spec.build(engines.load(engine))
        run = lambda: built.graph.invoke(built.make_input(), built.config)  # noqa: E731
    for _ in range(3):
        run()
    counts = [0, 0, 0]

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            counts[info["generation"]] += 1

    gc.collect()
    gc.callbacks.append(count)
    runs = 100
    for _ in range(runs):
        run()
    gc.callbacks.remove(count)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    run()
    left = gc.collect()
    gc.set_debug(0)
    gc.garbage.clear()
    gc.enable()
    return {"collections per run (gen 0, 1, 2)": [c / runs for c in counts], "left in cycles per run": left}


class _Review(TypedDict):
    doc: str
    verdict: str


def _interrupt(engine: str) -> dict[str, Any]:
    graph = __import__(f"{engine}.graph", fromlist=["StateGraph"])
    types = __import__(f"{engine}.types", fromlist=["interrupt"])
    memory = __import__(f"{engine}.checkpoint.memory", fromlist=["InMemorySaver"])

    def review(state: _Review) -> dict:
        pages = [("x" * 1000) + str(i) for i in range(50_000)]  # held while it asks
        return {"verdict": types.interrupt({"pages": len(pages)})}

    b = graph.StateGraph(_Review)
    b.add_node("review", review)
    b.add_edge(graph.START, "review")
    g = b.compile(checkpointer=memory.InMemorySaver())
    g.invoke({"doc": "d", "verdict": ""}, {"configurable": {"thread_id": "warm-up"}})
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    g.invoke({"doc": "d", "verdict": ""}, {"configurable": {"thread_id": "review"}})
    held = tracemalloc.get_traced_memory()[0] - before
    gc.collect()
    after_gc = tracemalloc.get_traced_memory()[0] - before
    return {"MB held after invoke": round(held / 1e6, 1), "MB after gc.collect()": round(after_gc / 1e6, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", nargs=2, metavar=("CASE", "ENGINE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        case, engine = args.child
        print(json.dumps((_react if case == "react" else _interrupt)(engine)))
        return
    for case, names in (("react", ("floor", "lgnb", "langgraph")), ("interrupt", ("lgnb", "langgraph"))):
        for engine in names:
            out = subprocess.run([sys.executable, __file__, "--child", case, engine],
                                 capture_output=True, text=True, check=True)
            print(f"{case:9s} {engine:9s} {out.stdout.strip()}", flush=True)


if __name__ == "__main__":
    main()
