"""Checkpoint-saver benchmark: LangGraph's SqliteSaver vs lgnb's, on wide and narrow state.

    .venv/bin/python bench/bench_saver.py [--engines langgraph,lgnb] [--runs 5] [--steps 10]
    .venv/bin/python bench/bench_saver.py --scale [--steps 1000] [--history 10000]

`--scale` runs issue 14's figures instead (see `saver_scale.py`): µs per checkpoint at
matched fsync, file size after 1,000 steps, first page of a 10,000-checkpoint history.

The same graph — a chain of `--steps` nodes, each changing one or two state keys — runs
with each saver on a fresh SQLite file: one unmeasured run fills a thread with the full
state, then `--runs` measured runs continue that thread, each with a one-key input,
`durability="sync"` (every checkpoint is written before the next step starts). Two
state shapes:

* wide-20k / wide-100k: 15 keys holding large values (~20 KB or ~100 KB strings and
  lists of small records); LangGraph's saver re-writes all of them at every checkpoint,
  lgnb's writes only the 1-2 that changed;
* narrow: 3 keys holding small values.

Printed per (engine, shape, saver): end-to-end ms per checkpoint, ms per checkpoint
spent inside the saver (`put` + `put_writes`, timed around the calls), database size,
and the LangGraph/lgnb ratios. The graph builder takes the engine's `graph` module as
an argument (`langgraph.graph` or `lgnb.graph`), so the lgnb engine runs the same
graph once it is importable.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypedDict

# Run from a checkout without installing: make `lgnb` importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WIDE_KEYS = [f"k{i:02d}" for i in range(15)]
NARROW_KEYS = ["a", "b", "c"]
SHAPES: dict[str, int] = {"wide-20k": 20_000, "wide-100k": 100_000, "narrow": 0}
"""State shapes: wide ones map to the size of each of their 15 values."""


class WideState(TypedDict, total=False):
    k00: Any
    k01: Any
    k02: Any
    k03: Any
    k04: Any
    k05: Any
    k06: Any
    k07: Any
    k08: Any
    k09: Any
    k10: Any
    k11: Any
    k12: Any
    k13: Any
    k14: Any


class NarrowState(TypedDict, total=False):
    a: Any
    b: Any
    c: Any


@functools.lru_cache(maxsize=None)
def _large_value(key: str, salt: int, size: int) -> Any:
    """~20 KB: odd keys hold a string, even keys a list of small records (documents,
    tool results, ... the lists agent state tends to carry).

    Cached, so nodes cost next to nothing and the timings are the engine's and saver's.
    """
    if int(key[1:]) % 2:
        return (f"{key}:{salt}:" * (size // 6))[:size]
    return [
        {"id": i, "source": f"{key}-{salt}", "score": i / 7, "text": "lorem ipsum " * 3}
        for i in range(size // 80)
    ]


def wide_input(size: int) -> dict[str, Any]:
    return {k: _large_value(k, 0, size) for k in WIDE_KEYS}


def wide_update(run: int, size: int) -> dict[str, Any]:
    """A follow-up input on a filled thread: one large key changes."""
    return {"k00": _large_value("k00", 1000 + run, size)}


def narrow_update(run: int, size: int = 0) -> dict[str, Any]:
    return {"b": f"run {run}"}


def narrow_input(size: int = 0) -> dict[str, Any]:
    return {"a": 0, "b": "start", "c": []}


def _wide_node(step: int, size: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    changed = [WIDE_KEYS[step % 15]] + ([WIDE_KEYS[(step + 7) % 15]] if step % 2 else [])

    def node(state: dict[str, Any]) -> dict[str, Any]:
        return {k: _large_value(k, step + 1, size) for k in changed}

    return node


def _narrow_node(step: int, size: int = 0) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def node(state: dict[str, Any]) -> dict[str, Any]:
        update: dict[str, Any] = {"a": state["a"] + 1}
        if step % 2:
            update["b"] = f"step {step}"
        return update

    return node


def build_graph(graph_module: ModuleType, *, shape: str, steps: int, checkpointer: Any) -> Any:
    """The benchmark graph on any engine: `graph_module` is `langgraph.graph` or `lgnb.graph`."""
    size = SHAPES[shape]
    state, make_node = (WideState, _wide_node) if size else (NarrowState, _narrow_node)
    builder = graph_module.StateGraph(state)
    names = [f"step_{i}" for i in range(steps)]
    for i, name in enumerate(names):
        builder.add_node(name, make_node(i, size))
    builder.add_edge(graph_module.START, names[0])
    for left, right in zip(names, names[1:]):
        builder.add_edge(left, right)
    builder.add_edge(names[-1], graph_module.END)
    return builder.compile(checkpointer=checkpointer)


# --- savers ---


@contextmanager
def langgraph_sqlite(path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


@contextmanager
def lgnb_sqlite(path: Path) -> Iterator[Any]:
    from lgnb.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(path) as saver:
        yield saver


SAVERS: dict[str, Callable[[Path], Any]] = {
    "langgraph.SqliteSaver": langgraph_sqlite,
    "lgnb.SqliteSaver": lgnb_sqlite,
}


class SaverTimer:
    """Wraps a saver instance's `put`/`put_writes` to add up the time spent in them.

    The engine may call the saver from several threads at once (a checkpoint and the
    previous step's writes); the timer runs the calls one at a time under its own
    lock, so overlapping calls are not counted twice and lock waits inside the saver
    are not counted at all. Both savers serialize their calls internally anyway.
    """

    def __init__(self, saver: Any) -> None:
        self.seconds = 0.0
        self.puts = 0
        self._lock = threading.Lock()
        for name in ("put", "put_writes"):
            setattr(saver, name, self._timed(getattr(saver, name), count=name == "put"))

    def _timed(self, fn: Callable[..., Any], *, count: bool) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                start = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - start
                    self.puts += count

        return timed


@dataclass
class Result:
    engine: str
    shape: str
    saver: str
    ms_per_checkpoint: float
    saver_ms_per_checkpoint: float
    checkpoints: int
    db_bytes: int


def _db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def run_one(engine: str, shape: str, saver_name: str, *, runs: int, steps: int) -> Result:
    """Fill one thread with the full state (not measured), then time `runs` invocations
    on that thread, each with a one-key input and `steps` nodes changing 1-2 keys."""
    graph_module = importlib.import_module(f"{engine}.graph")
    size = SHAPES[shape]
    full, small = (wide_input, wide_update) if size else (narrow_input, narrow_update)
    thread_id = str(uuid.uuid4())
    with tempfile.TemporaryDirectory(prefix="bench-saver-") as tmp:
        path = Path(tmp) / "threads.sqlite"
        with SAVERS[saver_name](path) as saver:
            timer = SaverTimer(saver)
            graph = build_graph(graph_module, shape=shape, steps=steps, checkpointer=saver)
            _invoke(graph, full(size), thread_id)
            timer.seconds, timer.puts = 0.0, 0
            elapsed = 0.0
            for run in range(runs):
                inputs = small(run, size)
                start = time.perf_counter()
                _invoke(graph, inputs, thread_id)
                elapsed += time.perf_counter() - start
            checkpoints = timer.puts
            saver_seconds = timer.seconds
        size = _db_bytes(path)
    return Result(
        engine=engine,
        shape=shape,
        saver=saver_name,
        ms_per_checkpoint=1000 * elapsed / checkpoints,
        saver_ms_per_checkpoint=1000 * saver_seconds / checkpoints,
        checkpoints=checkpoints,
        db_bytes=size,
    )


def _invoke(graph: Any, inputs: dict[str, Any], thread_id: str) -> Any:
    config = {"configurable": {"thread_id": thread_id}}
    try:
        return graph.invoke(inputs, config, durability="sync")
    except TypeError as exc:  # an engine without the durability option
        if "durability" not in str(exc):
            raise
        return graph.invoke(inputs, config)


def _available(engine: str) -> bool:
    try:
        module = importlib.import_module(f"{engine}.graph")
        module.StateGraph, module.START, module.END  # noqa: B018 - probe the API
    except Exception as exc:  # noqa: BLE001 - any import problem means "skip it"
        print(f"# engine {engine}: not available ({type(exc).__name__}: {exc})")
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="langgraph,lgnb")
    parser.add_argument("--runs", type=int, default=10, help="measured runs per case")
    parser.add_argument("--steps", type=int, default=10, help="nodes in the chain")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--scale", action="store_true", help="issue 14's figures (saver_scale.py)")
    parser.add_argument("--history", type=int, default=10_000, help="--scale: history length")
    parser.add_argument("--rounds", type=int, default=3, help="--scale: interleaved rounds")
    args = parser.parse_args(argv)
    if args.scale:
        import saver_scale

        saver_scale.main(steps=args.steps if args.steps != 10 else 1000, history=args.history,
                         rounds=args.rounds)
        return 0
    shapes = [s for s in args.shapes.split(",") if s]
    print(f"# {args.runs} runs x {args.steps} steps per case, durability='sync'")

    engines = [e for e in args.engines.split(",") if e and _available(e)]
    results: list[Result] = []
    header = f"{'engine':<10} {'shape':<9} {'saver':<22} {'ms/ckpt':>8} {'saver ms':>9} {'ckpts':>6} {'db KB':>8}"
    print(header)
    print("-" * len(header))
    for engine in engines:
        for shape in shapes:
            for saver_name in SAVERS:
                try:
                    r = run_one(engine, shape, saver_name, runs=args.runs, steps=args.steps)
                except Exception as exc:  # noqa: BLE001 - report and keep benchmarking
                    print(f"{engine:<10} {shape:<9} {saver_name:<22} failed: {type(exc).__name__}: {exc}")
                    continue
                results.append(r)
                print(
                    f"{r.engine:<10} {r.shape:<9} {r.saver:<22} {r.ms_per_checkpoint:8.3f} "
                    f"{r.saver_ms_per_checkpoint:9.3f} {r.checkpoints:6d} {r.db_bytes / 1024:8.0f}"
                )
    print()
    by_key = {(r.engine, r.shape, r.saver): r for r in results}
    for engine in engines:
        for shape in shapes:
            theirs = by_key.get((engine, shape, "langgraph.SqliteSaver"))
            ours = by_key.get((engine, shape, "lgnb.SqliteSaver"))
            if theirs and ours:
                print(
                    f"{engine} {shape}: langgraph/lgnb = "
                    f"{theirs.ms_per_checkpoint / ours.ms_per_checkpoint:.1f}x end-to-end, "
                    f"{theirs.saver_ms_per_checkpoint / ours.saver_ms_per_checkpoint:.1f}x in the saver"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
