"""Per-token cost of `stream_mode="messages"`: lgnb vs LangGraph vs the bare chat model.

    .venv/bin/python bench/bench_messages.py                 # N=5,000 tokens, 9 rounds
    .venv/bin/python bench/bench_messages.py --tokens 20000 --reps 15

The same graph (START -> chat -> END on MessagesState; the node calls `model.invoke(...)` with
no config) runs on each engine with `stream(..., stream_mode="messages")`, every chunk
consumed. The model is a fake streaming `BaseChatModel` whose `_stream` yields N one-token
`AIMessageChunk`s. Baseline: the same model streamed with no graph at all (`model.stream`),
which is langchain-core's own per-token cost (callback manager, chunk aggregation).

    engine share per token = (engine time - bare model time) / N

and the ratio lgnb share / LangGraph share (goal: <= 1/3).

For information, a second baseline, "callback floor": `model.invoke(...)` with one no-op
streaming callback handler and no graph. That is what any engine whose `messages` mode rides
LangChain callbacks cannot avoid (invoke switches to `_stream`, LangChain stamps each chunk
and dispatches `on_llm_new_token` through its callback manager); the part of each engine's
time above it is the engine's own work per token.

Timing: `time.process_time` (CPU time of the whole process, all threads: insensitive to
other jobs on a shared machine, and it counts a worker thread's work too), one warm-up per
target, then rounds in which every target runs once (round-robin, `gc.collect()` before
each run), so drift hits all targets alike. Medians are printed. Standalone: needs only
langchain-core, langgraph and (optionally) lgnb.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import sys
import time
from collections.abc import Iterator
from typing import Any, Callable

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult


class TokenModel(BaseChatModel):
    """Streams `n` one-token chunks; `_generate` (unused when streaming) returns them joined."""

    n: int = 5000

    @property
    def _llm_type(self) -> str:
        return "bench-token-model"

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any
                ) -> Iterator[ChatGenerationChunk]:
        for i in range(self.n):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content="t"))
            if run_manager:
                run_manager.on_llm_new_token("t", chunk=chunk)
            yield chunk

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage("t" * self.n))])


INPUT_MESSAGES = [HumanMessage("hi", id="h1")]

try:
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError:  # pragma: no cover - older langchain-core
    _StreamingCallbackHandler = object  # type: ignore[assignment,misc]


class NoopStreamingHandler(BaseCallbackHandler, _StreamingCallbackHandler):  # type: ignore[misc]
    """Makes `invoke` stream (like an engine's messages handler) and does nothing per token."""

    run_inline = True

    def tap_output_iter(self, run_id: Any, output: Any) -> Any:
        return output

    def tap_output_aiter(self, run_id: Any, output: Any) -> Any:
        return output

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        pass


def bare_target(n: int) -> Callable[[], int]:
    model = TokenModel(n=n)

    def run() -> int:
        count = 0
        for _ in model.stream(INPUT_MESSAGES):
            count += 1
        return count

    return run


def floor_target(n: int) -> Callable[[], int]:
    model = TokenModel(n=n)
    config = {"callbacks": [NoopStreamingHandler()]}

    def run() -> int:
        msg = model.invoke(INPUT_MESSAGES, config)
        return len(msg.content) + 1  # one chunk per token, plus LangChain's closing chunk

    return run


def engine_target(root: str, n: int) -> Callable[[], int]:
    graph_mod = importlib.import_module(f"{root}.graph")
    model = TokenModel(n=n)

    def chat(state: dict) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    g = graph_mod.StateGraph(graph_mod.MessagesState)
    g.add_node("chat", chat)
    g.add_edge(graph_mod.START, "chat")
    app = g.compile()

    def run() -> int:
        count = 0
        for _ in app.stream({"messages": INPUT_MESSAGES}, stream_mode="messages"):
            count += 1
        return count

    return run


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    gc.collect()
    t0 = time.process_time()
    count = fn()
    return time.process_time() - t0, count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=5000, help="tokens per model call (default 5000)")
    ap.add_argument("--reps", type=int, default=9, help="timed rounds (default 9)")
    ap.add_argument("--engines", default="langgraph,lgnb")
    args = ap.parse_args(argv)
    n = args.tokens

    targets: dict[str, Callable[[], int]] = {"bare model": bare_target(n),
                                             "cb floor": floor_target(n)}
    for root in [e.strip() for e in args.engines.split(",") if e.strip()]:
        try:
            targets[root] = engine_target(root, n)
        except Exception as e:  # an engine that does not import is reported, the rest runs
            print(f"{root}: not available ({type(e).__name__}: {e})")

    counts: dict[str, int] = {}
    for name, fn in targets.items():  # warm-up (imports, caches), and the chunk counts
        counts[name] = fn()
    times: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(args.reps):
        for name, fn in targets.items():
            t, c = timed(fn)
            if c != counts[name]:
                raise SystemExit(f"{name}: {c} chunks this run, {counts[name]} in the warm-up")
            times[name].append(t)

    med = {name: statistics.median(ts) for name, ts in times.items()}
    per_tok = {name: med[name] / n * 1e6 for name in targets}
    bare = per_tok["bare model"]
    print(f"\nmessages stream, one node, {n:,} tokens per call; process_time, "
          f"median of {args.reps} rounds (min..max in brackets)\n")
    print(f"{'target':<12} {'chunks':>7} {'us/token':>9} {'engine share us/token':>22}   spread")
    for name in targets:
        share = "" if name in ("bare model", "cb floor") else f"{per_tok[name] - bare:22.2f}"
        lo, hi = min(times[name]) / n * 1e6, max(times[name]) / n * 1e6
        print(f"{name:<12} {counts[name]:>7} {per_tok[name]:>9.2f} {share:>22}   [{lo:.2f}..{hi:.2f}]")

    if "langgraph" in per_tok and "lgnb" in per_tok:
        lg_share = per_tok["langgraph"] - bare
        lgnb_share = per_tok["lgnb"] - bare
        if lg_share > 0:
            ratio = lgnb_share / lg_share
            verdict = "meets" if ratio <= 1 / 3 else "misses"
            print(f"\nlgnb share / LangGraph share = {lgnb_share:.2f} / {lg_share:.2f} = {ratio:.3f}"
                  f"  ({verdict} the goal <= 0.333)")
        else:
            print("\nLangGraph share <= 0 on this machine: ratio undefined (too noisy; raise --reps)")
        floor = per_tok["cb floor"]
        lg_own, lgnb_own = per_tok["langgraph"] - floor, per_tok["lgnb"] - floor
        if lg_own > 0:
            print(f"(info) above the callback floor: lgnb {lgnb_own:.2f} / LangGraph {lg_own:.2f} "
                  f"us/token = {lgnb_own / lg_own:.3f}")
        if counts["lgnb"] != counts["langgraph"]:
            print(f"WARNING: chunk counts differ: langgraph {counts['langgraph']}, lgnb {counts['lgnb']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
