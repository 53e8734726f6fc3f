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
    for (const r of records) {
      const node = r.type === 'characterData' ? r.target : null;
      if (node && node.parentElement && node.parentElement.closest('.lgnb-bubble.lgnb-ai')) {
        window.__bench.push([now, node.data.length]);
      }
    }
  });
  obs.observe(document.body, { subtree: true, characterData: true });
}"""


def cells(n: int, mode: str, rate: float) -> list[str]:
    finish = "await run" if mode == "await" else "run.wait()"
    return [
        SETUP,
        f"model, graph = make({n}, {rate})\nt0 = time.time()\nrun = lgnb.run(graph, {{'messages': [('user', 'go')]}})",
        f"{finish}\nelapsed = time.time() - t0\n"
        "json.dump({'stamps': model.stamps, 'stats': run.stats, 'elapsed': elapsed, 'status': run.status,"
        " 'run_seconds': run.elapsed}, open('bench.json', 'w'))",
    ]


def measure(page, lab, n: int, mode: str, rate: float = 0.0) -> dict[str, float]:  # type: ignore[no-untyped-def]
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
    transit = sorted(x * 1000 for x in page.evaluate("() => (globalThis.__lgnb_stats || {latencies: []}).latencies"))
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
    stats = data["stats"]
    run_seconds = max(data["run_seconds"], 1e-6)
    return {
        "tokens": n,
        "model_tokens_per_s": n / max(stamps[-1] - stamps[0], 1e-6),
        "page_tokens_per_s": n / max(page_span, 1e-6),
        "comm_messages": stats["messages"],
        "patch_batches": stats["batches"],
        "run_seconds": run_seconds,
        "messages_per_s": stats["messages"] / run_seconds,
        "dom_updates": len(seen),
        "latency_ms_median": statistics.median(lat),
        "latency_ms_p95": lat[int(0.95 * (len(lat) - 1))],
        "latency_ms_max": lat[-1],
        "steady_latency_ms_median": statistics.median(steady),
        "steady_latency_ms_p95": steady[int(0.95 * (len(steady) - 1))],
        "send_to_page_ms_median": statistics.median(transit) if transit else float("nan"),
        "send_to_page_ms_p95": transit[int(0.95 * (len(transit) - 1))] if transit else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--mode", choices=["await", "wait", "both"], default="both")
    parser.add_argument("--paced", type=float, default=1000.0,
                        help="also run 5,000 tokens at this many tokens/s (a fast real model); 0 to skip")
    parser.add_argument("--chromium", default=os.environ.get("LGNB_CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args()
    require_bundle()
    modes = ["await", "wait"] if args.mode == "both" else [args.mode]
    results = {}
    with jupyter_lab(Path(tempfile.mkdtemp(prefix="lgnb-bench-"))) as lab, chromium_page(args.chromium) as page:
        for mode in modes:
            results[mode] = measure(page, lab, args.tokens, mode)
        if args.paced:
            results["paced"] = measure(page, lab, 5000, "await", args.paced)
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
