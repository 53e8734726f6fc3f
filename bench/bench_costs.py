"""Per-step engine costs that should stay flat: long conversations, wide state, fan-out.

    .venv/bin/python bench/bench_costs.py                  # both engines, interleaved
    .venv/bin/python bench/bench_costs.py --engines lgnb --only messages

Each figure is a *marginal* cost: the same graph run for S and for 2·S steps, the
difference divided by S, so the O(history) / O(keys) work of building the input is
excluded and only what one step costs remains. Targets run round-robin (engines
interleaved) with ``gc.collect()`` before each run; CPU time of this process
(``time.process_time``, so other jobs on a shared machine count less); medians.

- ``messages-N``: ``MessagesState`` with N messages in the input; one node appends an
  ``AIMessage`` per step and a conditional edge (which reads the state with the node's
  write applied) loops back until S steps are done. Here S = 100 against 300 steps,
  ``2·reps + 1`` rounds, and the *fastest* run of each target (a ~25 µs step is a small
  difference of two runs; others' load only ever slows a run down); the ratio
  ``10000/100`` is printed (goal: ≤ 2). ``messages-stream-N``: the same graphs streamed
  with ``stream_mode="messages"``, as a notebook's run view streams every run.
- ``wide-K``: K int keys; a chain of nodes, each reading the whole state and writing one
  key (runs of 100 and 400 steps for LangGraph, 100 and 1,000 for lgnb: at 20,000 keys
  the per-run setup, building the input and output, is large and noisy, and lgnb's
  ~10 µs steps need a long run to stand out of it); the fastest run of each, as for the
  loop, since a step is a small difference of two runs (the ``values-1000`` ratios too).
- ``loop-K``: K int keys; one node looping on itself behind a conditional edge, both
  reading the whole state (``_loop_graph``: what most graphs look like), runs of 10 and
  30 steps for LangGraph (its step at 20,000 keys takes ~60 ms), 10 and 410 for lgnb,
  the fastest of ``reps`` each; ``loop 20000/20`` is issue 14's "per-step cost at
  20,000 keys ≤ 1.5× that at 20" for it. A per-step figure is the same whatever the
  span if steps cost the same; the span only sets how far it stands above the noise.
- ``compile-20000``: ms per node to build and compile a chain over 20,000 keys (chains
  of 50 and 200 nodes, fastest of 3): anything a compiler does per node per key shows
  here (notebooks recompile on every cell run).
- ``values-1000``: ``stream_mode="values"`` time / ``invoke`` time, 1,000 keys, 100 nodes:
  ``values/invoke`` keeps every chunk (``list(graph.stream(...))``), ``consumed/invoke``
  lets each go once read (a loop that shows or logs them). Keeping 100 chunks of 1,000
  keys allocates 2.6 MB that glibc's malloc hands back to the system when the list is
  freed and faults in again on the next run: ~30 µs per chunk, against ~4 µs for the
  copy itself — the same for any engine that yields a fresh dict per step. ``kept by
  nodes/invoke`` is that floor: the same graph's ``invoke`` with each node keeping a
  ``dict`` copy of its state (101 copies, freed at the end of the run), over ``invoke``.
  ``kept copies alone/invoke``: the same 101 copies made in a tight loop with no run
  around them (whether their pages fault depends on the heap the last run left, so this
  one reads low in some processes and is not the floor). ``faults/run``: minor page
  faults per run. Whether kept chunks fault is glibc's call: freed memory at the heap's
  top goes back to the system past a trim threshold that glibc moves up after freeing
  large blocks, and 101 chunks of 26 KB sit near it; so the kept ratio jumps between
  ~1.25 and ~1.8 from one process to the next, for lgnb's chunks and for the floor's
  copies alike (``MALLOC_TRIM_THRESHOLD_=100000000`` pins it off).
- ``fanout-100`` / ``chain-100``: µs per node of a static fan-out from START to 100
  trivial nodes (one step) and of a chain of 100 (100 steps).
- ``react-20``: ``graphs.react(20)`` (``run.py``'s ReAct row) in CPU time per node, each
  engine's and the plain-loop floor's runs interleaved, the fastest of ``10·reps`` each;
  the overhead ratio ``(lgnb - floor) / (langgraph - floor)`` is printed (issue 14's
  goal: ≤ 0.10). ``run.py``'s median wall time moves by ±50% between runs on these VMs.
"""

from __future__ import annotations

import argparse
import gc
import operator
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).parent))

from engines import EngineUnavailable, load  # noqa: E402
from graphs import message_loop  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402


def _history(n: int) -> list:
    return [HumanMessage(f"m{i}", id=f"h{i}") for i in range(n)]


def _wide_graph(e: Any, keys: int, nodes: int, *, keep: list | None = None) -> Any:
    """A chain of ``nodes`` nodes over ``keys`` int keys, each writing one key.

    With ``keep``, each node also appends a ``dict`` copy of its state to that list: a
    caller keeping one fresh dict per step, as ``list(stream(stream_mode="values"))``
    does, with the copies made while the run goes on (the ``values`` floor).
    """
    schema = TypedDict(f"W{keys}", {f"k{i}": int for i in range(keys)})  # type: ignore[operator]

    def make(j: int) -> Callable:
        key = f"k{j % keys}"

        if keep is not None:
            def kept(state: dict) -> dict:
                keep.append(dict(state))
                return {key: state[key] + 1}

            return kept

        def node(state: dict) -> dict:
            return {key: state[key] + 1}

        return node

    g = e.StateGraph(schema)
    prev = e.START
    for j in range(nodes):
        g.add_node(f"n{j}", make(j))
        g.add_edge(prev, f"n{j}")
        prev = f"n{j}"
    g.add_edge(prev, e.END)
    return g.compile()


def _loop_graph(e: Any, keys: int, steps: int) -> Any:
    """One node looping on itself `steps` times over a state of `keys` int keys (and a
    counter), reading the whole state and writing a key and the counter per step, and a
    conditional edge reading the state after each: the same graph at every step count,
    so a run of 3 S steps minus one of S is 2 S steps and nothing else. The node returns
    the same keys every step, as a node usually does: a conditional edge's input has the
    node output's keys first (LangGraph's `{**output, **state}`), so other keys at each
    step would make each edge input a new dict, in any engine."""
    schema = TypedDict(f"L{keys}", {f"k{i}": int for i in range(keys)} | {"n": int})  # type: ignore[operator]

    def node(state: dict) -> dict:
        n = state["n"]
        return {"k0": state["k0"] + n, "n": n + 1}

    g = e.StateGraph(schema)
    g.add_node("step", node)
    g.add_edge(e.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < steps else e.END, ["step", e.END])
    return g.compile()


def _loop_input(keys: int) -> dict[str, int]:
    return {f"k{i}": 0 for i in range(keys)} | {"n": 0}


class _Fan(TypedDict):
    hits: Annotated[int, operator.add]


def _fanout_graph(e: Any, width: int) -> Any:
    def node(state: dict) -> dict:
        return {"hits": 1}

    g = e.StateGraph(_Fan)
    for j in range(width):
        g.add_node(f"n{j}", node)
        g.add_edge(e.START, f"n{j}")
        g.add_edge(f"n{j}", e.END)
    return g.compile()


def _chain_graph(e: Any, length: int) -> Any:
    def node(state: dict) -> dict:
        return {"hits": 1}

    g = e.StateGraph(_Fan)
    prev = e.START
    for j in range(length):
        g.add_node(f"n{j}", node)
        g.add_edge(prev, f"n{j}")
        prev = f"n{j}"
    g.add_edge(prev, e.END)
    return g.compile()


def _timed(fn: Callable[[], Any]) -> tuple[float, int]:
    """CPU time of one run of ``fn`` (the shared VM's other jobs do not count) and the
    minor page faults it took (memory the heap had given back and takes again)."""
    gc.collect()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.process_time()
    fn()
    t = time.process_time() - t0
    return t, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults


def _round_robin(
    targets: dict[str, Callable[[], Any]],
    reps: int,
    stat: Callable[[list[float]], float] = statistics.median,
    *,
    faults: dict[str, float] | None = None,
    raw: dict[str, list[float]] | None = None,
) -> dict[str, float]:
    """Run every target ``reps`` times, interleaved; ``stat`` of each one's CPU times.

    ``faults``, when given, receives each target's median page faults per run; ``raw``
    every CPU time (for targets read with another statistic).
    """
    for fn in targets.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {k: [] for k in targets}
    flts: dict[str, list[int]] = {k: [] for k in targets}
    for _ in range(reps):
        for k, fn in targets.items():
            t, f = _timed(fn)
            times[k].append(t)
            flts[k].append(f)
    if faults is not None:
        faults.update({k: statistics.median(v) for k, v in flts.items()})
    if raw is not None:
        raw.update(times)
    return {k: stat(v) for k, v in times.items()}


def _run_messages(g: Any, hist: list, streamed: bool) -> None:
    if streamed:  # what a notebook's run view asks for: every token and returned message
        _consume(g.stream({"messages": list(hist), "n": 0}, stream_mode="messages"))
    else:
        g.invoke({"messages": list(hist), "n": 0})


def bench_messages(engines: list, reps: int, steps: int = 100) -> dict[str, float]:
    # S and 3 S steps, and the fastest run of each (not the median): a per-step figure of
    # ~25 µs is a small difference of two runs, and on a shared VM a run is only ever
    # slowed down by others, never sped up. Each graph runs with `invoke` and with
    # `stream(stream_mode="messages")` ("messages-stream-N")
    targets: dict[str, Callable[[], Any]] = {}
    kinds = (("messages", False), ("messages-stream", True))
    for e in engines:
        for kind, streamed in kinds:
            for n in (100, 1000, 10000):
                for s in (steps, 3 * steps):
                    g = message_loop(e, s)
                    hist = _history(n)
                    targets[f"{e.name}/{kind}-{n}/{s}"] = (
                        lambda g=g, hist=hist, streamed=streamed: _run_messages(g, hist, streamed)
                    )
    t = _round_robin(targets, 2 * reps + 1, min)
    out = {}
    for e in engines:
        for kind, _ in kinds:
            for n in (100, 1000, 10000):
                d = t[f"{e.name}/{kind}-{n}/{3 * steps}"] - t[f"{e.name}/{kind}-{n}/{steps}"]
                out[f"{e.name} {kind}-{n} µs/step"] = d / (2 * steps) * 1e6
            out[f"{e.name} {kind} 10000/100"] = (
                out[f"{e.name} {kind}-10000 µs/step"] / out[f"{e.name} {kind}-100 µs/step"]
            )
    return out


def _consume(chunks: Any) -> None:
    """Read each chunk and let it go, as a loop that shows or logs them does."""
    for chunk in chunks:
        del chunk


def _span(e: Any, *, langgraph: tuple[int, int], lgnb: tuple[int, int]) -> tuple[int, int]:
    """The two run lengths a marginal per-step figure is the difference of, per engine:
    short for LangGraph, whose wide steps take milliseconds, long for lgnb, whose ~10 µs
    steps would otherwise be lost in the per-run cost of a 20,000-key input."""
    return langgraph if e.name == "langgraph" else lgnb


COMPILE_SPAN = (50, 200)
"""Nodes of the two chains whose build-and-compile times give ``compile-20000 ms/node``."""


def _wide_span(e: Any) -> tuple[int, int]:
    return _span(e, langgraph=(100, 400), lgnb=(100, 1000))


def _loop_span(e: Any) -> tuple[int, int]:
    return _span(e, langgraph=(10, 30), lgnb=(10, 410))


def bench_wide(engines: list, reps: int, nodes: int = 100) -> dict[str, float]:
    targets: dict[str, Callable[[], Any]] = {}
    for e in engines:
        for k in (20, 20000):
            inp = {f"k{i}": i for i in range(k)}
            for n in _wide_span(e):
                g = _wide_graph(e, k, n)
                targets[f"{e.name}/wide-{k}/{n}"] = lambda g=g, inp=inp: g.invoke(inp)
        g = _wide_graph(e, 1000, nodes)
        inp1000 = {f"k{i}": i for i in range(1000)}
        targets[f"{e.name}/values-1000/invoke"] = lambda g=g, i=inp1000: g.invoke(i)
        targets[f"{e.name}/values-1000/values"] = lambda g=g, i=inp1000: list(
            g.stream(i, stream_mode="values")
        )
        targets[f"{e.name}/values-1000/consumed"] = lambda g=g, i=inp1000: _consume(
            g.stream(i, stream_mode="values")
        )
        # the floor of kept chunks for any engine: the same run, each node keeping a copy
        # of its state (nodes + 1 copies with the input's), all freed at the end
        keep: list = []
        g = _wide_graph(e, 1000, nodes, keep=keep)
        targets[f"{e.name}/values-1000/kept by nodes"] = lambda g=g, i=inp1000, keep=keep: (
            keep.clear(), g.invoke(i), keep.append(dict(i)), keep.clear()
        )
    # the same copies made alone, in a tight loop, with no run around them
    targets["values-1000/kept copies"] = lambda i=inp1000: [dict(i) for _ in range(nodes + 1)]
    faults: dict[str, float] = {}
    times: dict[str, list[float]] = {}
    t = _round_robin(targets, reps, faults=faults, raw=times)
    # the fastest run of each, as for the loop: a run on a shared VM is only ever slowed
    # down by others, and a wide per-step figure is a small difference of two runs (the
    # medians, beside LangGraph's runs of seconds at 20,000 keys, once gave a negative
    # step, and moved every values-1000 ratio by 0.3 between two runs of the same code)
    t = {k: min(v) for k, v in times.items()}
    # the loop: the fastest run of each (a per-step figure of ~15 µs is a small difference
    # of two runs that each take in 20,000 keys)
    loops: dict[str, Callable[[], Any]] = {}
    for e in engines:
        for k in (20, 20000):
            for s in _loop_span(e):
                g, inp = _loop_graph(e, k, s), _loop_input(k)
                loops[f"{e.name}/loop-{k}/{s}"] = lambda g=g, inp=inp: g.invoke(inp)
    t.update(_round_robin(loops, reps, min))
    # compiling: the builder and compile() of a chain over 20,000 keys, fastest of 3
    builds = {
        f"{e.name}/compile-20000/{n}": lambda e=e, n=n: _wide_graph(e, 20000, n)
        for e in engines
        for n in COMPILE_SPAN
    }
    t.update(_round_robin(builds, 3, min))
    out = {}
    for e in engines:
        (w0, w1), (l0, l1) = _wide_span(e), _loop_span(e)
        for k in (20, 20000):
            d = t[f"{e.name}/wide-{k}/{w1}"] - t[f"{e.name}/wide-{k}/{w0}"]
            out[f"{e.name} wide-{k} µs/step"] = d / (w1 - w0) * 1e6
        for k in (20, 20000):
            d = t[f"{e.name}/loop-{k}/{l1}"] - t[f"{e.name}/loop-{k}/{l0}"]
            out[f"{e.name} loop-{k} µs/step"] = d / (l1 - l0) * 1e6
        c0, c1 = COMPILE_SPAN
        d = t[f"{e.name}/compile-20000/{c1}"] - t[f"{e.name}/compile-20000/{c0}"]
        out[f"{e.name} compile-20000 ms/node"] = d / (c1 - c0) * 1e3
        out[f"{e.name} loop 20000/20"] = out[f"{e.name} loop-20000 µs/step"] / out[f"{e.name} loop-20 µs/step"]
        out[f"{e.name} values-1000 values/invoke"] = (
            t[f"{e.name}/values-1000/values"] / t[f"{e.name}/values-1000/invoke"]
        )
        out[f"{e.name} values-1000 consumed/invoke"] = (
            t[f"{e.name}/values-1000/consumed"] / t[f"{e.name}/values-1000/invoke"]
        )
        out[f"{e.name} values-1000 kept copies alone/invoke"] = (
            t["values-1000/kept copies"] / t[f"{e.name}/values-1000/invoke"]
        )
        out[f"{e.name} values-1000 kept by nodes/invoke"] = (
            t[f"{e.name}/values-1000/kept by nodes"] / t[f"{e.name}/values-1000/invoke"]
        )
        for what in ("values", "kept by nodes"):
            out[f"{e.name} values-1000 {what} faults/run"] = faults[f"{e.name}/values-1000/{what}"]
    return out


def bench_fanout(engines: list, reps: int, width: int = 100) -> dict[str, float]:
    targets: dict[str, Callable[[], Any]] = {}
    for e in engines:
        fan, chain = _fanout_graph(e, width), _chain_graph(e, width)
        targets[f"{e.name}/fanout"] = lambda g=fan: g.invoke({"hits": 0})
        targets[f"{e.name}/chain"] = lambda g=chain: g.invoke({"hits": 0})
    t = _round_robin(targets, reps)
    out = {}
    for e in engines:
        out[f"{e.name} fanout-{width} µs/node"] = t[f"{e.name}/fanout"] / width * 1e6
        out[f"{e.name} chain-{width} µs/node"] = t[f"{e.name}/chain"] / width * 1e6
    return out


def bench_react(engines: list, reps: int, turns: int = 20) -> dict[str, float]:
    # run.py's react row in CPU time, robust to a shared VM: the floor and each engine
    # interleaved run by run, the fastest of many runs each (a run is only ever slowed
    # down by others' load), so the difference of two ~200 µs figures is not noise
    import graphs

    spec = graphs.react(turns)
    targets: dict[str, Callable[[], Any]] = {"floor": spec.floor()}
    for e in engines:
        built = spec.build(e)
        targets[e.name] = lambda b=built: b.graph.invoke(b.make_input(), b.config)
    t = _round_robin(targets, 10 * reps, min)
    per = {k: v / spec.node_execs * 1e6 for k, v in t.items()}
    out = {"floor react-20 µs/node": per["floor"]}
    for e in engines:
        out[f"{e.name} react-20 µs/node"] = per[e.name]
        out[f"{e.name} react-20 overhead µs/node"] = per[e.name] - per["floor"]
    if "lgnb" in per and "langgraph" in per:
        out["react-20 overhead lgnb/langgraph"] = (
            (per["lgnb"] - per["floor"]) / (per["langgraph"] - per["floor"])
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="langgraph,lgnb")
    ap.add_argument("--only", default="messages,wide,fanout,react")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args(argv)
    engines = []
    for name in args.engines.split(","):
        try:
            engines.append(load(name.strip()))
        except EngineUnavailable as exc:
            print(f"{name}: not available ({exc})")
    benches = {"messages": bench_messages, "wide": bench_wide, "fanout": bench_fanout,
               "react": bench_react}
    names = [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in benches]
    if unknown:
        raise SystemExit(
            f"--only {','.join(unknown)}: no such bench; choose from {', '.join(benches)} "
            "(the values/invoke ratio is part of 'wide')"
        )
    for name in names:
        for label, value in benches[name](engines, args.reps).items():
            print(f"{label:40s} {value:10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
