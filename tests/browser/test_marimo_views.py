"""lgnb views in marimo (`marimo run --headless`), opened in Debian's Chromium.

marimo renders each anywidget inside its own shadow root and creates a widget's front-end
model only when it is displayed. So the views must carry their styles inside their own
element (rules in `document.head` never reach a shadow root) and must load the front-end
bundle without help from a view that is not displayed. The app below makes a graph view
that it never shows (the one that carries the bundle in its state) before the two it shows.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab import BUNDLE, ROOT

pytestmark = pytest.mark.browser

WIDGETS = ROOT / "tests" / "widgets"

APP = f'''import marimo

app = marimo.App()


@app.cell
def _():
    import sys
    sys.path.insert(0, {str(WIDGETS)!r})
    import lgnb
    import marimo as mo
    from widget_graphs import agent_graph, _engine
    from widget_fakes import FakeStreamingChat
    eng = _engine("lgnb")
    def model():
        return FakeStreamingChat(replies=[{{"content": "let me add", "tool_calls": [{{"name": "add", "args": {{"a": 1}}, "id": "c1"}}]}}, "all <b>done</b>"])
    return agent_graph, eng, lgnb, mo, model


@app.cell
def _(agent_graph, eng, lgnb, model):
    never_shown = lgnb.show(agent_graph(eng, model()), title="never shown")
    lgnb.show(agent_graph(eng, model()), title="shown graph")
    return


@app.cell
def _(agent_graph, eng, lgnb, mo, model):
    r = lgnb.run(agent_graph(eng, model()), {{"messages": [("user", "hi")]}}, display=False)
    mo.ui.anywidget(r.view)
    return


if __name__ == "__main__":
    app.run()
'''

#: Per shadow root that holds an lgnb view: its state, measured by the page itself.
PROBE = """() => {
  const hosts = Array.from(document.querySelectorAll('*')).filter((e) => e.shadowRoot);
  return hosts.map((h) => h.shadowRoot).filter((r) => r.querySelector('.lgnb-root')).map((r) => {
    const root = r.querySelector('.lgnb-root');
    const css = getComputedStyle(root);
    const status = r.querySelector('.lgnb-status');
    const svg = r.querySelector('svg.lgnb-svg');
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    return {
      title: (r.querySelector('.lgnb-title') || {}).textContent || '',
      border: `${css.borderTopWidth} ${css.borderTopStyle} ${css.borderTopLeftRadius}`,
      padding: css.paddingTop,
      status: status ? status.textContent : null,
      statusBg: status ? getComputedStyle(status).backgroundColor : null,
      nodes: Array.from(r.querySelectorAll('g.node title')).map((t) => t.textContent).sort(),
      svg: [Math.round(box.width), Math.round(box.height)],
      bubbles: Array.from(r.querySelectorAll('.lgnb-bubble .lgnb-text')).map((t) => t.textContent),
      boldInjected: r.querySelectorAll('.lgnb-bubble b').length,
    };
  });
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def marimo_app(tmp_path: Path) -> Iterator[str]:
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE} is missing: run ./dev setup (it builds the front end)", pytrace=False)
    (tmp_path / "app.py").write_text(APP)
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    marimo = Path(sys.executable).with_name("marimo")
    log = tmp_path / "marimo.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(marimo), "run", "--headless", "--no-token", "--host", "127.0.0.1",
                                 "--port", str(port), "app.py"], cwd=tmp_path, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"marimo did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_marimo_views_are_styled_in_their_shadow_roots_and_draw_without_the_hidden_carrier(
        marimo_app: str, page: Any, artifacts: Path) -> None:
    page.goto(marimo_app)
    # the app's cells import and build in marimo's kernel first: wait for the views' shadow roots
    page.wait_for_function("""() => Array.from(document.querySelectorAll('*'))
        .filter((e) => e.shadowRoot && e.shadowRoot.querySelector('.lgnb-root, div')).length >= 2""",
                           timeout=90_000, polling=50)
    appeared = time.monotonic()
    page.wait_for_function(f"() => ({PROBE})().filter((v) => v.nodes.length >= 4).length === 2",
                           timeout=10_000, polling=50)
    drawn = time.monotonic() - appeared
    page.wait_for_function(f"() => ({PROBE})().some((v) => v.status === 'done' && v.bubbles.length === 4)",
                           timeout=30_000, polling=100)
    views = sorted(page.evaluate(PROBE), key=lambda v: v["title"])
    page.screenshot(path=str(artifacts / "marimo-views.png"), full_page=True)

    assert [v["title"] for v in views] == ["graph", "shown graph"]  # the run view's title is the graph's name
    for v in views:
        assert v["border"] == "1px solid 8px" and v["padding"] == "8px", v  # .lgnb-root's rules reached the shadow root
        assert v["nodes"] == ["__end__", "__start__", "agent", "tools"], v
        assert v["svg"][0] > 100 and v["svg"][1] > 100, v  # the graph is drawn at a visible size
    run = views[0]
    assert run["status"] == "done" and run["statusBg"] == "rgb(209, 250, 229)"  # .lgnb-status-done
    assert run["bubbles"] == ["hi", "let me add", "5", "all <b>done</b>"] and run["boldInjected"] == 0
    assert drawn < 3.0, f"views took {drawn:.2f} s from appearing to a drawn graph"
    # nothing of lgnb's was put in the document's head: each view styles itself
    assert page.evaluate("() => document.head.innerHTML.includes('lgnb-root')") is False
    assert page.lgnb_errors == []
