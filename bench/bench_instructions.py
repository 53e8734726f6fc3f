"""Engine hot path in CPU instructions per node, under callgrind (steady, unlike wall time).

Why: on a shared 2-CPU machine wall time moves by tens of percent between runs, while the
number of instructions the interpreter executes for the same work is stable to ~0.1%. This
script counts them for a few graph shapes, so two versions of the engine can be compared
exactly ("nothing gets slower", issue 8).

How: for each shape the graph is built, compiled and run once (warm-up) in a child process,
then run ``K`` more times; the child runs under ``valgrind --tool=callgrind`` with ``K=0``
and with ``K=--k`` (default 10). Everything but the ``K`` runs is the same in both, so

    instructions per node = (instr(K) - instr(0)) / (K * node executions per run)

Shapes (nodes are trivial, ``x += 1``-style, so the engine's own cost dominates):

- ``chain``: 100 nodes in a row, ``invoke`` with no checkpointer.
- ``stream``: the same chain, ``stream(..., stream_mode=["updates", "custom"])`` consumed.
- ``saved``: the same chain compiled with the engine's own ``InMemorySaver``, ``invoke`` on
  a new thread each run: a step's checkpoint and its task's writes saved (durability
  ``"async"``, the default; with trivial nodes both engines save inline or as soon as the
  step ends). ``saved-lg``: the same with LangGraph's ``InMemorySaver`` under either engine
  (a saver a ported program imports from ``langgraph``, which lgnb does not own).
- ``updates``: the same chain, ``stream(...)`` with its default mode (``updates``, not
  live: the nodes run in the calling thread), consumed — how most programs stream.
- ``send``: one step of a 100-way ``Send`` fan-out to a trivial node (``invoke``).
- ``wide``: 100 nodes in a row over a 1,000-key state (all keys in the input), each node
  reading the state and writing one key.
- ``values``: the ``wide`` graph streamed with ``stream_mode="values"`` (a 1,000-key
  chunk per step), consumed; against ``wide``: what the ``values`` mode adds per step.
- ``react``: ``graphs.react(20)`` (agent with a fake tool-calling chat model <-> a tool
  node, 41 node executions), ``invoke``; the figure is per node execution.
  ``--engine floor`` runs the same node functions in a plain Python loop: an engine's own
  overhead per node is its figure minus the floor's.
- ``messages``: ``bench_messages.py``'s graph (one node whose chat model streams 1,000
  tokens, then 9,000), ``stream(..., stream_mode="messages")`` consumed; the figure is per
  *token*: (instr(9,000 tokens) - instr(1,000 tokens)) / ((K + 1) * 8,000), the warm-up
  call included. (It was 1,000 and 3,000 until 2026-12-02: a full collection of the
  cyclic GC, 15-25 M instructions, falls in one run or the other, which moved the
  figure by up to ±2.5k per token over 2,000 tokens.)
  ``--engine floor`` measures the callback floor instead (the same model invoked with one
  no-op streaming handler, no graph): an engine's own work per token is its figure minus
  the floor's. Instructions count every thread's work but not the cost of switching
  between threads (the kernel's, and the GIL hand-offs), which CPU time includes.
- ``history``: ``bench_costs.py``'s ``messages-N`` graph (``MessagesState``-like state with
  N messages in the input; one node appends an ``AIMessage`` and a conditional edge loops
  it S times), ``invoke``, at N = 100 and N = 10,000; the figure is per *step*:
  (instr(S = 100) - instr(S = 50)) / ((K + 1) * 50), the warm-up included, so the cost of
  taking in the input cancels out; the ratio of the two is printed. Instructions miss cache misses, which a 10,000-reference
  list copy has plenty of, so the CPU-time figure of ``bench_costs.py`` still matters.
- ``keys``: ``bench_costs.py``'s ``loop`` graph (one node looping on itself behind a
  conditional edge, both reading a state of N int keys, N = 20 and 20,000), ``invoke``;
  the figure is per *step*: (instr(S = 200) - instr(S = 100)) / ((k + 1) * 100), the
  warm-up included, so the O(N) work on the input and the output cancels; the ratio of
  the two is printed (issue 14's goal: ≤ 1.5). ``bench_costs.py`` measures the same in
  CPU time.

Compare two versions by pointing ``PYTHONPATH`` at a checkout of the other one::

    git worktree add /tmp/base e814a4d
    .venv/bin/python bench/bench_instructions.py                       # this tree
    PYTHONPATH=/tmp/base .venv/bin/python bench/bench_instructions.py  # base

**Layouts.** The figure moves by a few thousand instructions per node when *unrelated*
code changes: CPython's method cache (4,096 entries, indexed by a type's version tag and
the *address* of the attribute name) collides differently once objects sit elsewhere in
memory, and a colliding pair on a hot path costs a walk of the class's MRO per lookup.
Measured on ``react``: 1,259.1k-1,262.6k per node over six layouts of one tree, and a
change that removes work read 4k *higher* in one layout. ``--layouts N`` measures in N
layouts (layout i: ``PYTHONHASHSEED=i`` and ``i * 97`` small objects allocated before
anything is imported) and prints the mean and the range; compare means, not one layout.
Layout 0 is the single run of earlier sessions. The two child runs of a figure run side
by side (valgrind uses one core each).

The lgnb actually measured is printed (the engine's ``__file__`` in the child); ``--engine langgraph``
measures LangGraph on the same graphs. Needs valgrind
(``apt-get install valgrind``); each shape takes ~1 minute under callgrind.
"""

from __future__ import annotations

import argparse
import importlib
import operator
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

PRELOAD = ""  # --preload: imported by the child (and passed on to it) before anything else
SHAPES = ("chain", "stream", "updates", "send", "wide", "values", "messages", "react", "history", "keys",
          "saved", "saved-lg")
NODES = 100
WIDE_KEYS = 1000
REACT_TURNS = 20
HISTORY = (100, 10000)
"""Messages already in the ``history`` shape's state: it runs with each; the goal is that a
step at the larger costs at most twice a step at the smaller."""
HISTORY_STEPS = 50
KEYS = (20, 20000)
"""State keys of the ``keys`` shape: it runs with each; the goal is that a step at the larger
costs at most 1.5 times a step at the smaller."""
KEYS_STEPS = 100
TOKENS = (1000, 9000)
"""Tokens per model call in the ``messages`` shape: it runs with each, and the difference
divided by the extra tokens is the figure, per token (per-call costs cancel out)."""


_PAD: list = []
"""Objects allocated before anything is imported, to move the layout (see ``--layouts``)."""


class _Chain(TypedDict):
    x: int


class _Fan(TypedDict):
    out: Annotated[list, operator.add]


def _build(shape: str, engine: str, tokens: int = TOKENS[0]) -> Callable[[], Any]:
    """Return a zero-argument runner for ``shape`` built on ``engine`` ("lgnb"/"langgraph")."""
    if shape == "messages":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_messages

        if engine == "floor":
            return bench_messages.floor_target(tokens)
        return bench_messages.engine_target(engine, tokens)
    if shape == "history":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_costs
        import engines

        size, steps = divmod(tokens, 1000)  # packed by main(): N * 1000 + steps
        g = bench_costs.message_loop(engines.load(engine), steps)
        hist = bench_costs._history(size)
        return lambda: g.invoke({"messages": list(hist), "n": 0})
    if shape == "keys":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_costs
        import engines

        keys, steps = divmod(tokens, 1000)  # packed by main(): K * 1000 + steps
        g = bench_costs._loop_graph(engines.load(engine), keys, steps)
        inp = bench_costs._loop_input(keys)
        cfg = {"recursion_limit": steps + 10}
        return lambda: g.invoke(dict(inp), cfg)
    if shape == "react":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import engines
        import graphs

        spec = graphs.react(REACT_TURNS)
        if engine == "floor":
            return spec.floor()
        built = spec.build(engines.load(engine))
        return lambda: built.graph.invoke(built.make_input(), built.config)
    graph = importlib.import_module(f"{engine}.graph")
    StateGraph, START, END = graph.StateGraph, graph.START, graph.END
    Send = importlib.import_module(f"{engine}.types").Send

    if shape in ("chain", "stream", "updates", "saved", "saved-lg"):
        b = StateGraph(_Chain)
        for i in range(NODES):
            b.add_node(f"n{i}", lambda s: {"x": s["x"] + 1})
            b.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
        b.add_edge(f"n{NODES - 1}", END)
        cfg = {"recursion_limit": NODES + 10}
        if shape.startswith("saved"):
            owner = "langgraph" if shape == "saved-lg" else engine
            saver = importlib.import_module(f"{owner}.checkpoint.memory").InMemorySaver()
            saved = b.compile(checkpointer=saver)
            threads = iter(range(10**9))
            return lambda: saved.invoke(
                {"x": 0}, {**cfg, "configurable": {"thread_id": str(next(threads))}}
            )
        g = b.compile()
        if shape == "chain":
            return lambda: g.invoke({"x": 0}, cfg)
        if shape == "updates":  # `stream()` as most programs call it: not live
            return lambda: sum(1 for _ in g.stream({"x": 0}, cfg))
        modes = ["updates", "custom"]
        return lambda: sum(1 for _ in g.stream({"x": 0}, cfg, stream_mode=modes))
    if shape == "send":
        b = StateGraph(_Fan)
        b.add_node("work", lambda s: {"out": [s["i"] + 1]})
        b.add_conditional_edges(START, lambda s: [Send("work", {"i": i}) for i in range(NODES)])
        b.add_edge("work", END)
        g = b.compile()
        return lambda: g.invoke({"out": []})
    if shape in ("wide", "values"):
        schema = TypedDict("Wide", {f"k{i}": int for i in range(WIDE_KEYS)})  # type: ignore[misc]
        b = StateGraph(schema)

        def make(j: int) -> Callable[[dict], dict]:
            key = f"k{j}"
            return lambda s: {key: s[key] + 1}

        for j in range(NODES):
            b.add_node(f"w{j}", make(j))
            b.add_edge(START if j == 0 else f"w{j - 1}", f"w{j}")
        b.add_edge(f"w{NODES - 1}", END)
        g = b.compile()
        inp = {f"k{i}": 0 for i in range(WIDE_KEYS)}
        cfg = {"recursion_limit": NODES + 10}
        if shape == "values":  # each chunk a fresh 1,000-key dict, consumed and dropped
            return lambda: sum(1 for _ in g.stream(dict(inp), cfg, stream_mode="values"))
        return lambda: g.invoke(dict(inp), cfg)
    raise SystemExit(f"unknown shape {shape!r}: choose from {', '.join(SHAPES)}")


def _child(shape: str, k: int, engine: str, tokens: int, layout: int) -> None:
    # layout 0 allocates nothing: the figures of earlier sessions stay comparable
    _PAD.extend(bytes(8 * (i % 16)) for i in range(layout * 97))
    run = _build(shape, engine, tokens)
    run()  # warm-up: first-run caches, lazy imports
    for _ in range(k):
        run()
    print("langchain-core only" if engine == "floor" else importlib.import_module(f"{engine}.graph").__file__)


def _instructions(shape: str, k: int, engine: str, tokens: int = TOKENS[0], layout: int = 0
                  ) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, PYTHONHASHSEED=str(layout))
        proc = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                shape,
                "--k",
                str(k),
                "--engine",
                engine,
                "--tokens",
                str(tokens),
                "--layout",
                str(layout),
                *(["--preload", PRELOAD] if PRELOAD else []),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        with open(out) as f:
            text = f.read()
    m = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if m is None:
        raise RuntimeError(f"no instruction total in callgrind output for {shape}")
    return int(m.group(1)), proc.stdout.strip()


def _pair(shape: str, engine: str, layout: int, first: tuple[int, int], second: tuple[int, int]
          ) -> tuple[int, int, str]:
    """Instructions of two child runs, ``(k, tokens)`` each, run side by side (one core each)."""
    with ThreadPoolExecutor(2) as pool:
        a = pool.submit(_instructions, shape, first[0], engine, first[1], layout)
        b = pool.submit(_instructions, shape, second[0], engine, second[1], layout)
        (base, where), (more, _) = a.result(), b.result()
    return base, more, where


def _figure(shape: str, k: int, engine: str, layout: int) -> tuple[float, str, str]:
    """The shape's figure (instructions per node, or per token) in one layout."""
    if shape == "messages":
        base, more, where = _pair(shape, engine, layout, (k, TOKENS[0]), (k, TOKENS[1]))
        # the warm-up call streams its tokens too: k + 1 calls at each size
        return (more - base) / ((k + 1) * (TOKENS[1] - TOKENS[0])), "token", where
    base, more, where = _pair(shape, engine, layout, (0, TOKENS[0]), (k, TOKENS[0]))
    per = 2 * REACT_TURNS + 1 if shape == "react" else NODES
    return (more - base) / (k * per), "node", where


def _per_step_pair(shape: str, engine: str, k: int) -> None:
    """Print a per-step shape's figure at its two sizes and their ratio. Per-run costs
    (taking in the input) cancel: runs of S steps against runs of 2 S steps."""
    sizes, steps, unit = (HISTORY, HISTORY_STEPS, "messages") if shape == "history" \
        else (KEYS, KEYS_STEPS, "keys")
    figures = []
    for n in sizes:
        base, more, where = _pair(shape, engine, 0, (k, n * 1000 + steps), (k, n * 1000 + 2 * steps))
        figures.append((more - base) / ((k + 1) * steps))
        print(f"{shape}-{n:<6d} {figures[-1] / 1000:8.1f}k instr/step   ({where})", flush=True)
    print(f"{shape:8s} x{figures[-1] / figures[0]:.2f} per step from {sizes[0]} to {sizes[-1]} {unit}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(SHAPES), help="comma-separated shapes")
    ap.add_argument("--k", type=int, default=10, help="measured runs after the warm-up")
    ap.add_argument("--engine", default="lgnb", choices=("lgnb", "langgraph", "floor"),
                    help="floor: the messages shape's callback floor (no engine)")
    ap.add_argument("--layouts", type=int, default=1,
                    help="measure in this many memory layouts and print the mean and range")
    ap.add_argument("--first-layout", type=int, default=0,
                    help="the first layout measured (to add layouts to an earlier run's)")
    ap.add_argument("--preload", default="",
                    help="a module the child imports first, e.g. langgraph.pregel.main: lgnb "
                         "in a notebook that has LangGraph loaded (LangChain's agents, "
                         "deepagents), where a task's config carries LangGraph's keys too")
    ap.add_argument("--child", metavar="SHAPE", help=argparse.SUPPRESS)
    ap.add_argument("--tokens", type=int, default=TOKENS[0], help=argparse.SUPPRESS)
    ap.add_argument("--layout", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    global PRELOAD
    PRELOAD = args.preload
    if PRELOAD and args.child:
        importlib.import_module(PRELOAD)
    if args.child:
        _child(args.child, args.k, args.engine, args.tokens, args.layout)
        return
    for shape in args.only.split(","):
        if shape not in SHAPES:
            raise SystemExit(f"unknown shape {shape!r}: choose from {', '.join(SHAPES)}")
        if args.engine == "floor" and shape not in ("messages", "react"):
            continue  # only these two shapes have a floor
        if shape in ("history", "keys"):
            _per_step_pair(shape, args.engine, args.k)
            continue
        figures = []
        for layout in range(args.first_layout, args.first_layout + args.layouts):
            value, unit, where = _figure(shape, args.k, args.engine, layout)
            figures.append(value)
            if args.layouts > 1:
                print(f"  layout {layout}: {value / 1000:.2f}k", flush=True)
        mean = sum(figures) / len(figures)
        spread = f"   range {min(figures) / 1000:.1f}k-{max(figures) / 1000:.1f}k over {len(figures)} layouts" \
            if len(figures) > 1 else ""
        print(f"{shape:8s} {mean / 1000:8.1f}k instr/{unit}{spread}   ({where})", flush=True)


if __name__ == "__main__":
    main()
