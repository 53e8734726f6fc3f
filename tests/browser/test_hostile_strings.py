"""Strings Jupyter cannot send, and floods, in real JupyterLab (issue 11.1 and 11.7).

A lone UTF-16 surrogate (half an emoji, as a provider splits one across tokens) in a
token, a custom event and a state value, then 20,000 custom events and 520 super-steps:
the run view reaches "done", shows U+FFFD where the surrogates were, and its event and
update lists stay at the kernel's caps, saying how many older rows were dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

EVENTS = 20_000
STEPS = 520  # super-steps of the counting loop: one update row each

CELLS = [
    "import time\n"
    "from typing import Annotated, TypedDict\n"
    "import lgnb\n"
    "from lgnb.graph import StateGraph, START, END\n"
    "from lgnb.graph.message import add_messages\n"
    "from lgnb.config import get_stream_writer\n"
    "from langchain_core.language_models.fake_chat_models import GenericFakeChatModel\n"
    "from langchain_core.messages import AIMessage\n"
    "class State(TypedDict):\n"
    "    messages: Annotated[list, add_messages]\n"
    "    n: int\n"
    "model = GenericFakeChatModel(messages=iter([AIMessage(content='half \\ud83d emoji', id='reply')]))\n"
    "def talk(state):\n"
    "    writer = get_stream_writer()\n"
    f"    for i in range({EVENTS}):\n"
    "        writer({'i': i})\n"
    "        if i % 2000 == 0:\n"
    "            time.sleep(0.05)  # spread over many batches: the page bounds as they arrive\n"
    "    writer({'note': 'event \\ude00'})\n"
    "    return {'messages': [model.invoke(state['messages'])]}\n"
    "def count(state):\n"
    "    return {'n': state['n'] + 1}\n"
    "b = StateGraph(State)\n"
    "b.add_node('talk', talk); b.add_node('count', count)\n"
    "b.add_edge(START, 'talk'); b.add_edge('talk', 'count')\n"
    f"b.add_conditional_edges('count', lambda s: 'count' if s['n'] < {STEPS} else END, ['count', END])\n"
    "graph = b.compile()",
    "run = lgnb.run(graph, {'messages': [('user', 'state \\udfff')], 'n': 0}, config={'recursion_limit': 2000})",
]


# Largest number of event rows the page ever held at once (checked after every DOM change).
WATCH_ROWS = """() => {
  window.__lgnb_max_rows = 0;
  new MutationObserver(() => {
    const n = document.querySelectorAll('.lgnb-run [data-testid=events] .lgnb-row').length;
    if (n > window.__lgnb_max_rows) window.__lgnb_max_rows = n;
  }).observe(document.body, { childList: true, subtree: true });
}"""


def test_surrogates_and_floods_settle_show_replacement_and_stay_at_the_caps(lab: Lab, page: Any,
                                                                          artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "hostile_strings.ipynb")
    open_notebook(page, lab, "hostile_strings.ipynb")
    page.evaluate(WATCH_ROWS)
    run_all(page)
    run = page.locator(".lgnb-run").first
    run.locator("[data-testid=status]", has_text="done").wait_for(timeout=180_000)
    wait_kernel_idle(page)
    page.wait_for_timeout(500)

    texts = run.locator(".lgnb-bubble .lgnb-text").all_text_contents()
    assert texts == ["state \ufffd", "half \ufffd emoji"]  # the user's message and the streamed reply

    events = run.locator("[data-testid=events]")
    events.locator("summary").click()
    rows = events.locator(".lgnb-row")
    total = EVENTS + 1
    assert rows.count() == 500  # the kernel's cap (CAPS["log"]), not 20,001 rows
    assert '"note": "event \ufffd"' in (rows.last.text_content() or "")
    assert '"i": 19999' in (rows.nth(498).text_content() or "")
    assert events.locator("summary").text_content() == f"events ({total:,}, the latest 500 shown)"
    assert events.locator("[data-testid=log-dropped]").text_content() == (
        f"{total - 500:,} older events dropped: the kernel and this page keep the latest 500.")

    updates = run.locator("[data-testid=updates]")
    updates.locator("summary").click()
    assert updates.locator(".lgnb-row").count() == 500
    assert updates.locator("[data-testid=updates-dropped]").text_content() == (
        f"{STEPS + 1 - 500} older updates dropped: the kernel and this page keep the latest 500.")
    assert f"step {STEPS + 1} · count" in (updates.locator(".lgnb-row").last.text_content() or "")

    # the rows arrived as live patches (not one final snapshot), and the list never grew past the cap
    assert page.evaluate("() => globalThis.__lgnb_stats.patches") > EVENTS
    assert page.evaluate("() => window.__lgnb_max_rows") == 500
    assert not page.lgnb_errors, page.lgnb_errors
    header = run.locator(".lgnb-header")
    header.scroll_into_view_if_needed()
    header.screenshot(path=str(artifacts / "hostile-strings-header.png"))
    main = run.locator(".lgnb-run-main")
    main.scroll_into_view_if_needed()
    main.screenshot(path=str(artifacts / "hostile-strings-messages.png"))
    events.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "hostile-strings-lists.png"))
