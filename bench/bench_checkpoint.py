"""Checkpointing cost per super-step: lgnb and LangGraph, same graph, InMemorySaver.

A chain of 50 nodes (two state keys) runs with no checkpointer, then with an InMemorySaver
under each durability mode (`sync`, `async`, `exit`); printed: ms per run (best of several,
CPU time of the process) and the ratio to the run without a checkpointer. The goal for
lgnb is `async` at most 1.5x the run without a checkpointer (LangGraph: about 1.9x).

    .venv/bin/python bench/bench_checkpoint.py [--engines lgnb,langgraph] [--nodes 50]
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import time
from typing import Any

from typing_extensions import TypedDict


class State(TypedDict):
    x: int
    y: str


def build(engine: str, nodes: int, checkpointer: Any) -> Any:
    graph_mod = importlib.import_module(f"{engine}.graph")
    builder = graph_mod.StateGraph(State)

    def step(state: State) -> dict[str, int]:
        return {"x": state["x"] + 1}

    prev = graph_mod.START
    for i in range(nodes):
        builder.add_node(f"n{i}", step)
        builder.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    return builder.compile(checkpointer=checkpointer)


def best_cpu_seconds(fn: Any, *, reps: int = 5, rounds: int = 5) -> float:
    fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(reps):
            fn()
        best = min(best, (time.process_time() - start) / reps)
    return best


def measure(engine: str, nodes: int) -> dict[str, float]:
    memory = importlib.import_module(f"{engine}.checkpoint.memory")
    plain = build(engine, nodes, None)
    saved = build(engine, nodes, memory.InMemorySaver())
    threads = itertools.count()
    results = {"none": best_cpu_seconds(lambda: plain.invoke({"x": 0, "y": "v"}))}
    for durability in ("sync", "async", "exit"):
        results[durability] = best_cpu_seconds(
            lambda d=durability: saved.invoke(
                {"x": 0, "y": "v"},
                {"configurable": {"thread_id": f"t{next(threads)}"}},
                durability=d,
            )
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="lgnb,langgraph")
    parser.add_argument("--nodes", type=int, default=50)
    args = parser.parse_args()
    print(f"chain of {args.nodes} nodes, InMemorySaver; ms per run (CPU), ratio to no checkpointer")
    for engine in args.engines.split(","):
        res = measure(engine, args.nodes)
        base = res["none"]
        per_step = {k: (v - base) / (args.nodes + 1) * 1e6 for k, v in res.items() if k != "none"}
        cells = "  ".join(f"{k} {v * 1e3:7.2f} ms ({v / base:4.2f}x)" for k, v in res.items())
        steps = "  ".join(f"{k} {v:6.1f}" for k, v in per_step.items())
        print(f"{engine:10s} {cells}\n{'':10s} checkpoint cost per super-step, µs: {steps}")


if __name__ == "__main__":
    main()
