"""Memory and time of opening `lgnb.history` on a thread with one big value (issue 11, item 6).

A real SQLite file holds a thread whose state carries a VALUE_MB string set once by the
input, then STEPS super-steps that each bump a counter: every checkpoint refers to the
same stored version of the big value. In a fresh interpreter this script opens
``lgnb.history(graph, config, limit=None)`` and reports

  * tracemalloc peak while opening (Python allocations),
  * peak RSS growth (VmHWM from /proc/self/status, before and after),
  * the wall time to open, and the same three for clicking one checkpoint.

    .venv/bin/python bench/history_memory.py [--value-mb 5] [--steps 200] [--json]
    .venv/bin/python bench/history_memory.py --postgres postgresql://postgres@127.0.0.1:5432/test

With ``--postgres URL`` the thread lives in that database (lgnb's PostgresSaver, LangGraph's
tables: a string is stored inline in every checkpoint's JSONB) and is deleted afterwards.

Run it against another checkout (e.g. the commit before a change) with
``PYTHONPATH=/path/to/checkout``; the script imports whatever `lgnb` comes first.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

CFG = {"configurable": {"thread_id": "big"}}


def build_graph(checkpointer: Any) -> Any:
    from typing_extensions import TypedDict

    from lgnb.graph import END, START, StateGraph

    class Big(TypedDict):
        big: str
        n: int

    def tick(state: Big) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    def more(state: Big) -> str:
        return "tick" if state["n"] < STEPS_LIMIT["steps"] else END

    b = StateGraph(Big)
    b.add_node("tick", tick)
    b.add_edge(START, "tick")
    b.add_conditional_edges("tick", more, ["tick", END])
    return b.compile(checkpointer=checkpointer)


STEPS_LIMIT = {"steps": 200}


def _saver(target: str) -> Any:
    """A context manager of the saver at `target`: a PostgreSQL URL or a SQLite path."""
    if target.startswith("postgres"):
        from lgnb.checkpoint.postgres import PostgresSaver

        return PostgresSaver.from_conn_string(target)
    from lgnb.checkpoint.sqlite import SqliteSaver

    return SqliteSaver.from_conn_string(target)


def fill(target: str, *, value_mb: float, steps: int) -> None:
    """Write the thread: the big value once, then `steps` super-steps."""
    STEPS_LIMIT["steps"] = steps
    with _saver(target) as saver:
        if hasattr(saver, "setup"):
            saver.setup()
        saver.delete_thread(CFG["configurable"]["thread_id"])
        g = build_graph(saver)
        g.invoke({"big": "x" * int(value_mb * 1024 * 1024), "n": 0}, {**CFG, "recursion_limit": steps + 10})


def _hwm_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def measure(target: str) -> dict[str, Any]:
    """Open the history view on the filled thread and measure (run in a fresh interpreter)."""
    import lgnb

    with _saver(target) as saver:
        return _measure(lgnb, build_graph(saver))


def _measure(lgnb: Any, g: Any) -> dict[str, Any]:
    gc.collect()
    hwm0 = _hwm_kb()
    tracemalloc.start()
    t0 = time.perf_counter()
    view = lgnb.history(g, CFG, limit=None)
    opened = time.perf_counter() - t0
    _, peak_open = tracemalloc.get_traced_memory()
    hwm1 = _hwm_kb()
    tracemalloc.reset_peak()
    middle = view.model.checkpoints[len(view.model.checkpoints) // 2].id
    t1 = time.perf_counter()
    view._msg_select({"id": middle})
    clicked = time.perf_counter() - t1
    _, peak_click = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    hwm2 = _hwm_kb()
    shown = view.details.get("values", {}).get("big")
    return {
        "lgnb": str(Path(lgnb.__file__).parent),
        "checkpoints": len(view.model.checkpoints),
        "open_s": round(opened, 3),
        "open_tracemalloc_peak_mb": round(peak_open / 2**20, 1),
        "open_rss_growth_mb": round((hwm1 - hwm0) / 1024, 1),
        "click_s": round(clicked, 3),
        "click_tracemalloc_peak_mb": round(peak_click / 2**20, 1),
        "click_rss_growth_mb": round((hwm2 - hwm1) / 1024, 1),
        "clicked_value_shown_chars": len(shown) if isinstance(shown, str) else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--value-mb", type=float, default=5.0)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--postgres", metavar="URL", help="keep the thread in this PostgreSQL database")
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # internal: the fresh interpreter
    args = ap.parse_args()
    if args.measure:
        STEPS_LIMIT["steps"] = args.steps
        print(json.dumps(measure(args.measure)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        target = args.postgres or str(Path(tmp) / "threads.sqlite")
        fill(target, value_mb=args.value_mb, steps=args.steps)
        try:
            out = subprocess.run([sys.executable, __file__, "--measure", target, "--steps", str(args.steps)],
                                 check=True, capture_output=True, text=True)
        finally:
            if args.postgres:
                with _saver(target) as saver:
                    saver.delete_thread(CFG["configurable"]["thread_id"])
        result = {"saver": "postgres" if args.postgres else "sqlite", "value_mb": args.value_mb,
                  "steps": args.steps, **json.loads(out.stdout.strip().splitlines()[-1])}
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:28} {value}")


if __name__ == "__main__":
    main()
