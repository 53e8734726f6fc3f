"""Issue 12 in a real JupyterLab: a run view keeps streaming while another cell runs.

Cell "run" starts `lgnb.run(...)` of a graph whose chat model streams a token every 0.1 s
for about 4 s; the next cell is `time.sleep(3)`. While that cell is busy (its prompt says
[*]) the page is sampled every 200 ms: the streamed text must grow during the sleep, not
freeze and then jump once the kernel is idle. Then a run whose node fails while a cell
polls `run.status` from the kernel's busy main thread: the status must read "error"
within 0.3 s of the failure, and the page must show it before that cell ends.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab import Lab, open_notebook, run_all, wait_kernel_idle

pytestmark = pytest.mark.browser

SETUP = """\
import time
import lgnb
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from lgnb.graph import StateGraph, START, MessagesState

class SlowChat(BaseChatModel):
    words: list
    delay: float = 0.1
    @property
    def _llm_type(self):
        return 'slow-chat'
    def _generate(self, messages, stop=None, run_manager=None, **kw):
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=''.join(self.words)))])
    def _stream(self, messages, stop=None, run_manager=None, **kw):
        for word in self.words:
            time.sleep(self.delay)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word))
            if run_manager:
                run_manager.on_llm_new_token(word, chunk=chunk)
            yield chunk

model = SlowChat(words=[f'tok{i:02d} ' for i in range(40)])
talker = (StateGraph(MessagesState).add_node('talk', lambda s: {'messages': [model.invoke(s['messages'])]})
          .add_edge(START, 'talk').compile())
failed_at = []
def fail(s):
    time.sleep(1.0)
    failed_at.append(time.monotonic())
    raise ValueError('the node failed on purpose')
failing = StateGraph(MessagesState).add_node('fail', fail).add_edge(START, 'fail').compile()
"""

CELLS = [
    SETUP,
    "talking = lgnb.run(talker, {'messages': [('user', 'go')]}, title='slow tokens')",
    "print('sleeping', flush=True)\ntime.sleep(3)\nprint('woke', talking.status)",
    "failing_run = lgnb.run(failing, {'messages': []}, title='fails')",
    "seen_at, start = None, time.monotonic()\n"
    "while time.monotonic() - start < 3.0:\n"
    "    if seen_at is None and failing_run.status == 'error':\n"
    "        seen_at = time.monotonic()\n"
    "    time.sleep(0.005)\n"
    "print(f'status error after {(seen_at - failed_at[0]) * 1000:.0f} ms' if seen_at and failed_at else\n"
    "      f'status still {failing_run.status!r}', flush=True)",
]

SAMPLE = """() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  const prompt = (i) => (cells[i] && cells[i].querySelector('.jp-InputPrompt') || {}).textContent || '';
  const out = (i) => (cells[i] && cells[i].querySelector('.jp-OutputArea') || {}).textContent || '';
  const views = [...document.querySelectorAll('.lgnb-run')];
  const text = (v) => v ? (v.querySelector('[data-testid=messages]') || {}).textContent || '' : '';
  const status = (v) => v ? ((v.querySelector('[data-testid=status]') || {}).textContent || '').trim() : '';
  return {t: performance.now(), sleepPrompt: prompt(2), sleepOut: out(2), pollPrompt: prompt(4), pollOut: out(4),
          talkText: text(views[0]), talkStatus: status(views[0]), failStatus: status(views[1])};
}"""


def test_a_run_view_streams_while_another_cell_sleeps_and_status_is_current_from_a_busy_cell(
        lab: Lab, page: Any, artifacts: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "live_while_busy.ipynb")
    open_notebook(page, lab, "live_while_busy.ipynb")
    run_all(page)

    # -- while `time.sleep(3)` runs, sample the streamed text every 200 ms ----------------
    during: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    shot = False
    while time.monotonic() < deadline:
        s = page.evaluate(SAMPLE)
        if "woke" in s["sleepOut"]:
            break
        if "sleeping" in s["sleepOut"] and "*" in s["sleepPrompt"]:
            during.append(s)
            if not shot and len(during) >= 6:
                page.locator(".lgnb-run").first.screenshot(path=str(artifacts / "live-while-busy-sleeping.png"))
                shot = True
        time.sleep(0.2)
    assert len(during) >= 5, f"sampled the sleeping cell only {len(during)} times: {during[-1:]}"
    lengths = [len(s["talkText"]) for s in during]
    assert lengths == sorted(lengths), lengths  # never goes back
    assert lengths[-1] - lengths[0] >= 60, lengths  # ~10 tokens a second reached the page during the sleep
    assert len(set(lengths)) >= len(lengths) // 2, lengths  # a steady stream, not one jump
    assert all(s["talkStatus"] == "running" for s in during[:3]), during[:3]

    # -- a cell that polls run.status from the busy main thread ----------------------------
    polled: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        s = page.evaluate(SAMPLE)
        if "status " in s["pollOut"]:
            break
        if "*" in s["pollPrompt"] and "sleeping" not in s["pollOut"]:
            polled.append(s)
        time.sleep(0.1)
    wait_kernel_idle(page)
    final = page.evaluate(SAMPLE)
    printed = final["pollOut"]
    assert "status error after" in printed, printed
    delay_ms = int(printed.split("after ")[1].split(" ms")[0])
    assert 0 <= delay_ms <= 300, printed
    # the page showed the error while the polling cell was still busy
    assert any(s["failStatus"] == "error" for s in polled), [s["failStatus"] for s in polled]
    assert final["talkStatus"] == "done" and "tok39" in final["talkText"], final
    page.locator(".lgnb-run").nth(1).screenshot(path=str(artifacts / "live-while-busy-error.png"))
    page.screenshot(path=str(artifacts / "live-while-busy-page.png"), full_page=True)
    (artifacts / "live-while-busy.txt").write_text(
        f"text lengths during sleep (every ~200 ms): {lengths}\n{printed.strip()}\n")
    assert not page.lgnb_errors, page.lgnb_errors
