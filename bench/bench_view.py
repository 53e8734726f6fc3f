"""Live view throughput: 20,000 tokens from a fake model into a run view in a real browser.

Starts a throwaway JupyterLab, runs a one-node graph whose fake chat model streams N
fixed-width tokens (no delay) through `lgnb.run`, and measures in Chromium, by observing
the bubble's text node (MutationObserver, nothing in the product is instrumented):

  * tokens/s reaching the page (first to last token seen in the DOM),
  * comm messages the view sent (trait syncs + patch batches, counted by the kernel) and
    their rate over the run,
  * latency model → page per token (the kernel stamps each token as the model yields it;
    the page stamps when the DOM text first contains it): median, p95, max.

Goals: ≥ 5,000 tokens/s, < 30 messages/s, < 100 ms latency.

Two ways of waiting are measured: `await run` (the kernel loop is free: the normal
interactive case) and `run.wait()` (the cell blocks and pumps the run itself).

    .venv/bin/python bench/bench_view.py [--tokens 20000] [--mode await|wait|both]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from lab import chromium_page, jupyter_lab, open_notebook, require_bundle, run_all  # noqa: E402

TOKEN_WIDTH = 7  # "t00042 "

SETUP = '''
import json, time
import lgnb
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from lgnb.graph import StateGraph, START, END, MessagesState

class TimedChat(BaseChatModel):
    n: int
    rate: float = 0.0
    stamps: list = []

    @property
    def _llm_type(self):
        return "timed"

    def _generate(self, messages, stop=None, run_manager=None, **kw):
        text = "".join(c.message.content for c in self._stream(messages, stop, run_manager))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(self, messages, stop=None, run_manager=None, **kw):
        start = time.monotonic()
        for i in range(self.n):
            if self.rate:
                wait = start + i / self.rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            piece = f"t{i:05d} "
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            self.stamps.append(time.time())
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

# Diagnostics only (not in the latency path's product code): when the run's loop received
# each delivery of chunks, as [time, chunks delivered so far].
from lgnb.widgets import run_view as _rv
_deliveries = []
_rv.Run._bench_on_chunks = getattr(_rv.Run, "_bench_on_chunks", _rv.Run._on_chunks)  # the kernel may be reused
def _timed_on_chunks(self, chunks, pump):
    _deliveries.append([time.time(), self.stats["chunks"] + len(chunks)])
    return _rv.Run._bench_on_chunks(self, chunks, pump)
_rv.Run._on_chunks = _timed_on_chunks
# ... and the garbage collector's pauses (they stop every thread of the kernel): [start, ms]
import gc
_gc_pauses, _gc_t = [], [0.0]
def _gc_watch(phase, info):
    if phase == "start":
        _gc_t[0] = time.time()
    elif time.time() - _gc_t[0] > 0.005:
        _gc_pauses.append([_gc_t[0], (time.time() - _gc_t[0]) * 1000])
if not any(getattr(cb, "__name__", "") == "_gc_watch" for cb in gc.callbacks):
    gc.callbacks.append(_gc_watch)

def make(n, rate=0.0):
    model = TimedChat(n=n, rate=rate, stamps=[])
    b = StateGraph(MessagesState)
    b.add_node("model", lambda s: {"messages": [model.invoke(s["messages"])]})
    b.add_edge(START, "model")
    return model, b.compile()
'''

OBSERVE = """() => {
  window.__bench = [];
  const obs = new MutationObserver((records) => {
    const now = Date.now();
    const seen = new Set();
    for (const r of records) {
      const el = r.type === 'characterData' ? r.target.parentElement : r.target;
      const text = el && el.closest ? el.closest('.lgnb-bubble.lgnb-ai .lgnb-text') : null;
      if (text && !seen.has(text)) {
        seen.add(text);
        window.__bench.push([now, text.textContent.length]);
      }
    }
  });
  obs.observe(document.body, { subtree: true, characterData: true, childList: true });
}"""


def cells(n: int, mode: str, rate: float) -> list[str]:
    finish = "await run" if mode == "await" else "run.wait()"
    return [
        SETUP,
        f"model, graph = make({n}, {rate})\nt0 = time.time()\nrun = lgnb.run(graph, {{'messages': [('user', 'go')]}})",
        f"{finish}\nelapsed = time.time() - t0\n"
        "json.dump({'stamps': model.stamps, 'stats': run.stats, 'deliveries': _deliveries, 'gc': [p for p in _gc_pauses if p[0] >= t0], 'elapsed': elapsed, 'status': run.status,"
        " 'run_seconds': run.elapsed}, open('bench.json', 'w'))",
    ]


def measure(page, lab, n: int, mode: str, rate: float = 0.0, dump: str = "") -> dict[str, float]:  # type: ignore[no-untyped-def]
    import nbformat

    name = f"bench-{mode}.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells(n, mode, rate)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / name)
    out = lab.root / "bench.json"
    out.unlink(missing_ok=True)
    open_notebook(page, lab, name)
    page.evaluate(OBSERVE)
    run_all(page)
    deadline = time.monotonic() + 180
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # let the last batch land
    data = json.loads(out.read_text())
    seen = page.evaluate("() => window.__bench")
    batches = page.evaluate("() => (globalThis.__lgnb_stats || {log: []}).log")  # [sent, received, chars]
    total_chars = n * TOKEN_WIDTH
    assert data["status"] == "done", data["status"]
    assert seen and seen[-1][1] == total_chars, (seen[-1:] if seen else None, total_chars)
    stamps = data["stamps"]
    # first time each token is fully in the DOM
    arrival: list[float] = []
    j = 0
    for t_ms, length in seen:
        while j < n and (j + 1) * TOKEN_WIDTH <= length:
            arrival.append(t_ms / 1000)
            j += 1
    lat = sorted((a - s) * 1000 for a, s in zip(arrival, stamps))
    # steady state: tokens the model yielded after the view had shown its first token
    steady = sorted((a - s) * 1000 for a, s in zip(arrival, stamps) if s >= arrival[0]) or [float("nan")]
    page_span = arrival[-1] - arrival[0]
    # Where the time goes, per token: model → the run's loop has it (kernel, pump wake-up),
    # loop → batch sent (kernel, flush cadence + reducing), sent → page received (iopub,
    # server, websocket), received → in the DOM (page).
    pumped, sent, received = [], [], []
    deliveries = data["deliveries"]
    offset = data["stats"]["chunks"] - n  # chunks that are not tokens (tasks, values, updates)
    d = b = 0
    for i in range(n):
        while d < len(deliveries) - 1 and deliveries[d][1] < i + 1 + offset // 2:
            d += 1
        pumped.append(deliveries[d][0])
        while b < len(batches) - 1 and batches[b][2] < (i + 1) * TOKEN_WIDTH:
            b += 1
        sent.append(batches[b][0])
        received.append(batches[b][1])
    parts = {
        "to_loop": [(p - s) * 1000 for p, s in zip(pumped, stamps)],
        "loop_to_send": [(t - p) * 1000 for t, p in zip(sent, pumped)],
        "transit": [(r - t) * 1000 for r, t in zip(received, sent)],
        "page": [(a - r) * 1000 for a, r in zip(arrival, received)],
    }
    stats = data["stats"]
    run_seconds = max(data["run_seconds"], 1e-6)
    if dump:
        Path(dump).write_text(json.dumps({"stamps": stamps, "arrival": arrival, "batches": batches,
                                          "deliveries": deliveries, "stats": stats}))
    return {
        "tokens": n,
        "model_tokens_per_s": n / max(stamps[-1] - stamps[0], 1e-6),
        "page_tokens_per_s": n / max(page_span, 1e-6),
        "comm_messages": stats["messages"],
        "patch_batches": stats["batches"],
        "run_seconds": run_seconds,
        "messages_per_s": stats["messages"] / run_seconds,
        "dom_updates": len(seen),
        "gc_pauses_over_5ms": len(data["gc"]),
        "gc_pause_ms_total": sum(ms for _, ms in data["gc"]),
        "gc_pause_ms_max": max((ms for _, ms in data["gc"]), default=0.0),
        "latency_ms_median": statistics.median(lat),
        "latency_ms_p95": lat[int(0.95 * (len(lat) - 1))],
        "latency_ms_max": lat[-1],
        "steady_latency_ms_median": statistics.median(steady),
        "steady_latency_ms_p95": steady[int(0.95 * (len(steady) - 1))],
        **{f"{k}_ms_median": statistics.median(v) for k, v in parts.items()},
        **{f"{k}_ms_p95": sorted(v)[int(0.95 * (len(v) - 1))] for k, v in parts.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--mode", choices=["await", "wait", "both"], default="both")
    parser.add_argument("--paced", type=float, default=1000.0,
                        help="also run 5,000 tokens at this many tokens/s (a fast real model); 0 to skip")
    parser.add_argument("--dump", default="", help="write each run's raw timings to DUMP-<mode>.json")
    parser.add_argument("--chromium", default=os.environ.get("LGNB_CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args()
    require_bundle()
    modes = ["await", "wait"] if args.mode == "both" else [args.mode]
    results = {}
    with jupyter_lab(Path(tempfile.mkdtemp(prefix="lgnb-bench-"))) as lab, chromium_page(args.chromium) as page:
        for mode in modes:
            results[mode] = measure(page, lab, args.tokens, mode, dump=args.dump and f"{args.dump}-{mode}.json")
        if args.paced:
            results["paced"] = measure(page, lab, 5000, "await", args.paced, dump=args.dump and f"{args.dump}-paced.json")
    goals = {"page_tokens_per_s": (">=", 5000), "messages_per_s": ("<", 30), "latency_ms_median": ("<", 100),
             "steady_latency_ms_median": ("<", 100)}
    for mode, r in results.items():
        how = {"await": "`await run`", "wait": "`run.wait()`", "paced": f"`await run`, model paced at {args.paced:.0f} tokens/s"}[mode]
        print(f"\n== {r['tokens']} tokens, {how}")
        for key, value in r.items():
            goal = None if (mode == "paced" and key == "page_tokens_per_s") else goals.get(key)
            mark = ""
            if goal:
                ok = value >= goal[1] if goal[0] == ">=" else value < goal[1]
                mark = f"   goal {goal[0]} {goal[1]}: {'ok' if ok else 'MISSED'}"
            print(f"  {key:22} {value:12.1f}{mark}" if isinstance(value, float) else f"  {key:22} {value:12}{mark}")
    print("\nJSON " + json.dumps(results))


if __name__ == "__main__":
    main()
