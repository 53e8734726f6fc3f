"""A notebook's run view over a long conversation: CPU per step at 100 and 10,000 messages.

Why: `lgnb.run` streams every run with `values`, `updates`, `messages`, `custom` and `tasks`
and folds each chunk into the view's content, so whatever it does per message per step
makes a long conversation slow in the notebook even when the engine's own step is flat
(issue 14: per-step cost at 10,000 messages ≤ 2× that at 100).

The graph is `bench_costs.py`'s ``messages-N`` (``MessagesState`` with N messages in the
input; one node appends an ``AIMessage`` per step behind a conditional edge), built on each
engine and run by ``lgnb.run(..., display=False)`` (the view without a browser: its
reducer, content store and state panel, its trait syncs to no front end). Per step = the
marginal CPU (``process_time``: the run's worker thread counts) between runs of 100 and
300 steps, the fastest of ``--reps`` runs each.

    .venv/bin/python bench/bench_run_view.py [--reps 3] [--engines lgnb,langgraph]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_costs import _history  # noqa: E402
from graphs import message_loop  # noqa: E402
from engines import load  # noqa: E402


def _run_cpu(engine: object, messages: int, steps: int, reps: int) -> float:
    from lgnb.widgets import run

    best = float("inf")
    for _ in range(reps):
        graph = message_loop(engine, steps)
        history = _history(messages)
        began = time.process_time()
        run(graph, {"messages": history, "n": 0}, {"recursion_limit": steps + 10}, display=False).wait(timeout=600)
        best = min(best, time.process_time() - began)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--engines", default="lgnb,langgraph")
    args = ap.parse_args()
    for name in args.engines.split(","):
        engine = load(name.strip())
        _run_cpu(engine, 100, 10, 1)  # warm-up: imports, the view's first build
        per = {}
        for n in (100, 10000):
            per[n] = (_run_cpu(engine, n, 300, args.reps) - _run_cpu(engine, n, 100, args.reps)) / 200 * 1e6
            print(f"run view, {name} engine, {n:>6,} messages: {per[n]:8.0f} µs/step (CPU)", flush=True)
        print(f"run view, {name} engine, 10,000 / 100: {per[10000] / per[100]:.2f}")


if __name__ == "__main__":
    main()
