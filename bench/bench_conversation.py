"""A saved conversation: what a step and a turn cost as the thread grows, on both engines.

    .venv/bin/python bench/bench_conversation.py [--reps 5] [--sizes 100,1000,10000]
        [--saver sqlite|memory|postgres] [--postgres URL]

The notebook's default: a conversation (``messages`` with ``add_messages``) compiled with each engine's own
``SqliteSaver`` on a fresh file, ``durability="sync"``. ``--saver memory`` uses each
engine's ``InMemorySaver`` instead (the one most LangGraph tutorials compile with),
``--saver postgres`` each engine's ``PostgresSaver`` on a database made for the run
(on the server of ``--postgres``, default ``$LGNB_TEST_POSTGRES_URL`` or the local one). A thread is first filled with N
messages (one unmeasured ``invoke``), then:

- ``step-N``: the marginal CPU cost of one step *inside* a run: one ``invoke`` of a graph
  whose node appends an ``AIMessage`` and loops back S times, timed for S and 3·S steps
  (S = 20), the difference divided by 2·S. This is what saving the conversation at every
  step costs, without the turn's one-off reading of the thread.
- ``turn-N``: one chat turn as a notebook cell runs it: ``invoke`` with one
  ``HumanMessage`` on a one-node graph (read the thread, two checkpoints).

Each repetition uses a new thread in the same file (so N does not drift), engines
interleaved, the fastest of ``reps`` runs of each target (CPU time of this process,
``time.process_time``). Printed: µs per step or turn, the ratio lgnb/LangGraph, the
``10000/100`` growth of each engine, and (SQLite) each file's size after the runs.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engines import load  # noqa: E402
from graphs import message_loop  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402

STEPS = 20
_threads = itertools.count()


def _saver(root: str, kind: str, path: str, stack: ExitStack) -> Any:
    """Each engine's own saver of `kind`, open on `path` (a file or a database URL) until
    `stack` closes."""
    package = "langgraph" if root == "langgraph" else "lgnb"
    if kind == "memory":
        return __import__(f"{package}.checkpoint.memory", fromlist=["x"]).InMemorySaver()
    if kind == "postgres":
        saver = stack.enter_context(
            __import__(f"{package}.checkpoint.postgres", fromlist=["x"]).PostgresSaver.from_conn_string(path))
        saver.setup()
        return saver
    return stack.enter_context(
        __import__(f"{package}.checkpoint.sqlite", fromlist=["x"]).SqliteSaver.from_conn_string(path))


def _postgres_database(server: str, stack: ExitStack) -> str:
    """A new database on `server` for this run, dropped when `stack` closes; its URL."""
    import psycopg

    name = f"bench_conversation_{os.getpid()}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")

    def drop() -> None:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    stack.callback(drop)
    return server.rsplit("/", 1)[0] + "/" + name


def _graph(root: str, saver: Any, steps: int) -> Any:
    """`graphs.message_loop`: one reply of 20 words per step, `steps` of them (1: a turn)."""
    return message_loop(load(root), steps, saver=saver, words=20)


def _history(n: int) -> list:
    return [
        HumanMessage(f"question {i} " + "word " * 20, id=f"h{i}") if i % 2 == 0
        else AIMessage(f"answer {i} " + "word " * 20, id=f"a{i}")
        for i in range(n)
    ]


def _filled(root: str, saver: Any, n: int) -> dict:
    """A new thread of `saver` holding `n` messages (saved by one unmeasured invoke)."""
    config = {"configurable": {"thread_id": f"{root}-{next(_threads)}"}}
    _graph(root, saver, 1).invoke({"messages": _history(n), "n": 0}, config, durability="sync")
    return config


def _timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--engines", default="langgraph,lgnb")
    ap.add_argument("--saver", choices=("sqlite", "memory", "postgres"), default="sqlite")
    ap.add_argument("--postgres", default=os.environ.get(
        "LGNB_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    roots = [r.strip() for r in args.engines.split(",")]
    work = tempfile.mkdtemp(prefix="bench-conversation-")
    paths = {root: os.path.join(work, f"{root}.db") for root in roots}
    stack = ExitStack()
    if args.saver == "postgres":
        url = _postgres_database(args.postgres, stack)
        paths = dict.fromkeys(roots, url)  # one database: the engines' threads differ
    savers = {root: _saver(root, args.saver, paths[root], stack) for root in roots}
    graphs = {(root, s): _graph(root, savers[root], s) for root in roots for s in (1, STEPS, 3 * STEPS)}
    best: dict[tuple[str, str, int, int], float] = {}
    for _rep in range(args.reps):
        for n in sizes:
            for root in roots:  # engines interleaved
                for s in (STEPS, 3 * STEPS, 1):
                    config = _filled(root, savers[root], n)
                    g = graphs[(root, s)]
                    turn = {"messages": [HumanMessage("next question", id=f"q{next(_threads)}")],
                            "n": 0}
                    t = _timed(lambda g=g, turn=turn, config=config: g.invoke(turn, config, durability="sync"))
                    key = (root, "turn" if s == 1 else "run", n, s)
                    best[key] = min(best.get(key, t), t)
                    if args.saver == "memory":  # gigabytes otherwise: a version is 2.4 MB
                        savers[root].delete_thread(config["configurable"]["thread_id"])
    stack.close()
    out: dict[str, float] = {}
    for root in roots:
        for n in sizes:
            step = (best[(root, "run", n, 3 * STEPS)] - best[(root, "run", n, STEPS)]) / (2 * STEPS)
            out[f"{root} step-{n} µs"] = step * 1e6
            out[f"{root} turn-{n} µs"] = best[(root, "turn", n, 1)] * 1e6
        for kind in ("step", "turn"):
            out[f"{root} {kind} {sizes[-1]}/{sizes[0]}"] = (
                out[f"{root} {kind}-{sizes[-1]} µs"] / out[f"{root} {kind}-{sizes[0]} µs"]
            )
        if args.saver == "sqlite":
            out[f"{root} file KB"] = os.path.getsize(paths[root]) / 1024
    if len(roots) == 2:
        a, b = roots
        for n in sizes:
            for kind in ("step", "turn"):
                out[f"ratio {b}/{a} {kind}-{n}"] = out[f"{b} {kind}-{n} µs"] / out[f"{a} {kind}-{n} µs"]
    for label, value in out.items():
        print(f"{label:34s} {value:12.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
