"""How long `lgnb.inbox` takes to show a page when a LangGraph server holds many
interrupted threads (the inbox reads one page per request: limit + offset).

    .venv/bin/python bench/inbox_page.py [N]      # N interrupted threads (default 1000)

Starts `langgraph dev` on tests/remote/app (needs langgraph-cli[inmem]), makes N threads
paused at the `slow` graph's question, then times the first page, a page deep in the
list, and the same request made by the SDK alone.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))


def main(n: int) -> None:
    from langgraph_sdk import get_sync_client

    import lgnb
    from lgnb.server import start_dev_server

    with start_dev_server(ROOT / "tests" / "remote" / "app", jobs=8) as server:
        sdk = get_sync_client(url=server.url, api_key=None)
        t0 = time.monotonic()
        for _ in range(n):
            tid = sdk.threads.create(metadata={"bench": "inbox"})["thread_id"]
            sdk.runs.create(tid, "slow", input={"steps": 0, "pause": 0})
        while (interrupted := sdk.threads.count(status="interrupted", metadata={"bench": "inbox"})) < n:
            time.sleep(0.5)
        made = time.monotonic() - t0
        print(f"{interrupted} interrupted threads made in {made:.1f} s")

        t = time.monotonic()
        box = lgnb.inbox(server.url, "slow", page_size=20)
        first = time.monotonic() - t
        t = time.monotonic()
        box = lgnb.inbox(server.url, "slow", page_size=20)
        again = time.monotonic() - t
        t = time.monotonic()
        box.page = n // 20 - 1
        deep = box.refresh()
        deep_s = time.monotonic() - t
        t = time.monotonic()
        sdk.threads.search(status="interrupted", limit=21, offset=0)
        raw = time.monotonic() - t
        print(f"lgnb.inbox first page (first use: imports the views; connect + graph check + 20 rows): {first * 1000:.0f} ms")
        print(f"lgnb.inbox again (modules loaded): {again * 1000:.0f} ms")
        print(f"page {box.page + 1} ({len(deep)} rows): {deep_s * 1000:.0f} ms")
        print(f"the SDK's threads.search alone (21 rows): {raw * 1000:.0f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
