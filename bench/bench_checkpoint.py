"""Checkpointing cost per super-step by durability: lgnb and LangGraph, same graph.

A chain of N nodes (two state keys) runs with no checkpointer, then with a saver under
each durability mode (`sync`, `async`, `exit`). Printed per engine and saver: ms per run
(wall time, best of several rounds; CPU time of the process beside it) and the ratio to
the run without a checkpointer.

`--work US` makes each node wait US microseconds without holding the GIL (`time.sleep`,
standing for the I/O of a real node: a model or tool call). That is where `async`
durability earns its keep: the save of step N is written while step N+1 waits. With
trivial nodes (`--work 0`) there is nothing to overlap with, and the saver's own work
sets the pace whatever the durability.

Savers: `memory` (each engine's InMemorySaver), `sqlite` (each engine's own SQLite saver
on a fresh file in a temporary directory, both in WAL mode with `synchronous=NORMAL`, so
neither pays an fsync per commit).

`--api ainvoke` / `--api astream` (stream mode "updates") run the same chains from an
event loop, `sqlite` then being each engine's `AsyncSqliteSaver` (aiosqlite: its calls
suspend the loop, as a real database's do): the async driver's saving of each task's
writes and checkpoints, where the sync savers' figures say nothing.

    .venv/bin/python bench/bench_checkpoint.py [--engines lgnb,langgraph] [--nodes 50]
        [--savers memory,sqlite] [--work 0,1000] [--api invoke|ainvoke|astream]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import itertools
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict


class State(TypedDict):
    x: int
    y: str


def build(engine: str, nodes: int, checkpointer: Any, work_us: int) -> Any:
    graph_mod = importlib.import_module(f"{engine}.graph")
    builder = graph_mod.StateGraph(State)
    pause = work_us / 1e6

    def step(state: State) -> dict[str, int]:
        if pause:
            time.sleep(pause)
        return {"x": state["x"] + 1}

    prev = graph_mod.START
    for i in range(nodes):
        builder.add_node(f"n{i}", step)
        builder.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    return builder.compile(checkpointer=checkpointer)


def make_saver(engine: str, kind: str, folder: Path) -> Any:
    if kind == "memory":
        return importlib.import_module(f"{engine}.checkpoint.memory").InMemorySaver()
    path = folder / f"{engine}.sqlite"
    if engine == "lgnb":
        from lgnb.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(path, synchronous="NORMAL")
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return LangGraphSqliteSaver(conn)


def measure_async(engine: str, saver: str, nodes: int, work_us: int, reps: int, rounds: int,
                  folder: Path, api: str) -> dict[str, tuple[float, float]]:
    """`measure` for `ainvoke` / `astream` in one event loop, async savers."""

    async def run() -> dict[str, tuple[float, float]]:
        threads = itertools.count()
        async with contextlib.AsyncExitStack() as stack:
            graphs: dict[str, tuple[Any, str | None]] = {"none": (build(engine, nodes, None, work_us), None)}
            for durability in ("sync", "async", "exit"):
                if saver == "memory":
                    cp = importlib.import_module(f"{engine}.checkpoint.memory").InMemorySaver()
                else:
                    aio = importlib.import_module(f"{engine}.checkpoint.sqlite.aio")
                    path = folder / durability / f"{engine}-async.sqlite"
                    path.parent.mkdir(exist_ok=True)
                    cp = await stack.enter_async_context(aio.AsyncSqliteSaver.from_conn_string(str(path)))
                graphs[durability] = (build(engine, nodes, cp, work_us), durability)

            async def once(graph: Any, durability: str | None) -> None:
                cfg = {"configurable": {"thread_id": f"t{next(threads)}"}}
                kw = {} if durability is None else {"durability": durability}
                if api == "ainvoke":
                    await graph.ainvoke({"x": 0, "y": "v"}, cfg, **kw)
                else:
                    async for _ in graph.astream({"x": 0, "y": "v"}, cfg, stream_mode="updates", **kw):
                        pass

            best = {k: (float("inf"), float("inf")) for k in graphs}
            for graph, durability in graphs.values():
                await once(graph, durability)
            for _ in range(rounds):
                for name, (graph, durability) in graphs.items():
                    gc.collect()
                    w0, c0 = time.perf_counter(), time.process_time()
                    for _ in range(reps):
                        await once(graph, durability)
                    wall, cpu = (time.perf_counter() - w0) / reps, (time.process_time() - c0) / reps
                    best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
            return best

    return asyncio.run(run())


def measure(engine: str, saver: str, nodes: int, work_us: int, reps: int, rounds: int,
            folder: Path) -> dict[str, tuple[float, float]]:
    """(wall, cpu) seconds per run for each target, each the best round's mean. Every
    durability gets a saver of its own (a fresh file: SQLite's WAL checkpoints hit
    whoever grows the file) and the targets run round-robin, so drift hits all alike."""
    threads = itertools.count()
    targets: dict[str, Any] = {}
    plain = build(engine, nodes, None, work_us)
    targets["none"] = lambda: plain.invoke({"x": 0, "y": "v"})
    for durability in ("sync", "async", "exit"):
        sub = folder / durability
        sub.mkdir(exist_ok=True)
        graph = build(engine, nodes, make_saver(engine, saver, sub), work_us)
        targets[durability] = lambda g=graph, d=durability: g.invoke(
            {"x": 0, "y": "v"}, {"configurable": {"thread_id": f"t{next(threads)}"}}, durability=d
        )
    best = {k: (float("inf"), float("inf")) for k in targets}
    for fn in targets.values():
        fn()  # warm-up: first runs teach the engine which nodes are slow
    for _ in range(rounds):
        for name, fn in targets.items():
            gc.collect()
            w0, c0 = time.perf_counter(), time.process_time()
            for _ in range(reps):
                fn()
            wall, cpu = (time.perf_counter() - w0) / reps, (time.process_time() - c0) / reps
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="lgnb,langgraph")
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--savers", default="memory,sqlite")
    parser.add_argument("--work", default="0,1000", help="µs each node waits (GIL released), comma-separated")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--api", default="invoke", choices=("invoke", "ainvoke", "astream"))
    args = parser.parse_args()
    print(f"chain of {args.nodes} nodes, {args.api}; ms per run: wall (cpu), and wall / no checkpointer")
    with tempfile.TemporaryDirectory() as tmp:
        for work in (int(w) for w in args.work.split(",")):
            for saver in args.savers.split(","):
                print(f"\n-- saver {saver}, node work {work} µs")
                for engine in args.engines.split(","):
                    folder = Path(tmp) / f"{saver}-{work}"
                    folder.mkdir(exist_ok=True)
                    if args.api == "invoke":
                        res = measure(engine, saver, args.nodes, work, args.reps, args.rounds, folder)
                    else:
                        res = measure_async(engine, saver, args.nodes, work, args.reps, args.rounds,
                                            folder, args.api)
                    base = res["none"][0]
                    cells = "  ".join(
                        f"{k} {w * 1e3:7.2f} ({c * 1e3:6.2f}) {w / base:5.2f}x" for k, (w, c) in res.items()
                    )
                    per_step = "  ".join(
                        f"{k} {(w - base) / (args.nodes + 1) * 1e6:6.1f}"
                        for k, (w, _c) in res.items() if k != "none"
                    )
                    print(f"{engine:10s} {cells}\n{'':10s} wall cost of saving per super-step, µs: {per_step}")


if __name__ == "__main__":
    main()
