"""Static snapshots (issue 12): every view's output carries a script-free `text/html`
rendering of what it shows, and `to_html(path)` writes it as a standalone file.

Hostile payloads (script tags, event attributes, `javascript:` URLs, SVG markup in node
names) go through a real run on both engines; the snapshot is parsed with `html.parser`
and must hold no executable markup while showing the payloads as text.
"""

from __future__ import annotations

import html
import re
import time
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

import lgnb
from lgnb.widgets._snapshot import MAX_ROWS, run_html
from lgnb.widgets._snapshot_svg import safe_svg, svg_for_dot

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
JS_URL = "javascript:alert(3)"
SVG_NODE = "<svg onload=alert(4)>"
#: elements that can run code or load something, in HTML or SVG
DANGEROUS = {"script", "iframe", "object", "embed", "foreignobject", "a", "image", "use", "link", "meta",
             "base", "form", "img", "animate", "set", "handler", "style"}


class Markup(HTMLParser):
    """Every tag and attribute of a document (names lower-cased)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(doc: str) -> Markup:
    m = Markup()
    m.feed(doc)
    m.close()
    return m


def assert_inert(doc: str, *, allow_style: bool = True) -> Markup:
    """No element that runs or loads anything, no on* attribute, no script URL."""
    m = parse(doc)
    bad = sorted({t for t in m.tags if t in DANGEROUS - ({"style", "meta"} if allow_style else set())})
    assert not bad, bad
    handlers = [(k, v) for k, v in m.attrs if k.startswith("on")]
    assert not handlers, handlers
    urls = [(k, v) for k, v in m.attrs if "javascript:" in v.lower() or k in ("href", "src", "xlink:href")]
    assert not urls, urls
    return m


def hostile_graph(eng: SimpleNamespace) -> Any:
    """Nodes named like markup; a chat model, a custom event and an interrupt carrying payloads."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content=f"{SCRIPT} {IMG} [x]({JS_URL})")]))

    def first(state: Any) -> dict[str, Any]:
        eng.get_stream_writer()({"note": f"{SVG_NODE}{SCRIPT}", "link": JS_URL})
        return {"messages": [model.invoke(state["messages"])]}

    def second(state: Any) -> dict[str, Any]:
        answer = eng.interrupt({"question": f"{IMG} ok?", "url": JS_URL})
        return {"messages": [("ai", f"answer was {answer}")]}

    builder = eng.StateGraph(eng.MessagesState)
    builder.add_node(SCRIPT, first)
    builder.add_node(SVG_NODE, second)
    builder.add_edge(eng.START, SCRIPT)
    builder.add_edge(SCRIPT, SVG_NODE)
    builder.add_edge(SVG_NODE, eng.END)
    return builder.compile(checkpointer=eng.InMemorySaver())


def test_hostile_run_snapshot_has_no_executable_markup_and_shows_the_payloads_as_text(eng: SimpleNamespace,
                                                                                      tmp_path: Path) -> None:
    run = lgnb.run(hostile_graph(eng), {"messages": [("user", f"hi {IMG}")]}, display=False,
                   title=f"{SCRIPT} title")
    run.wait(timeout=30)
    assert run.status == "interrupted"
    paused = run.view._static_html()
    m = assert_inert(paused)
    text = "".join(m.text)
    # the payloads are there, as text: the node names, the model's reply, the event, the question
    for payload in (SCRIPT, IMG, JS_URL, SVG_NODE, f"{IMG} ok?"):
        assert payload in text, payload
    assert html.escape(SCRIPT) in paused and SCRIPT not in paused
    assert "interrupted" in text and "<svg" in paused  # status and the drawing

    run.resume(f"{SCRIPT} yes").wait(timeout=30)
    assert run.status == "done"
    done = run.view._static_html()
    text = "".join(assert_inert(done).text)
    assert f"answer was {SCRIPT} yes" in text
    assert f"{IMG} ok?" in text and "answered by code" in text  # the recorded answer to the question

    page = run.to_html(tmp_path / "run.html").read_text(encoding="utf-8")
    assert_inert(page, allow_style=True)
    assert page.startswith("<!DOCTYPE html>") and "answer was" in page
    assert parse(page).tags.count("svg") == 1


def test_node_names_reach_the_drawing_only_as_escaped_text(lg: SimpleNamespace) -> None:
    graph = hostile_graph(lg)
    svg = svg_for_dot(lgnb.show(graph).dot)
    m = assert_inert(svg)
    assert {"svg", "g", "title", "text"} <= set(m.tags)
    assert SCRIPT in m.text and SVG_NODE in m.text  # a node's <title> holds its name, as text


def test_safe_svg_drops_scripts_handlers_links_foreign_objects_and_styles() -> None:
    evil = (
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)" width="10pt">'
        '<script>alert(2)</script><foreignObject><div onclick="x()">hi</div></foreignObject>'
        '<a href="javascript:alert(3)" xlink:href="javascript:alert(4)"><text x="1">link</text></a>'
        '<g id="n1" class="node" onclick="alert(5)"><title>&lt;script&gt;alert(6)&lt;/script&gt;</title>'
        '<rect style="fill:url(javascript:alert(7))" fill="url(#x)" width="3"/>'
        '<image href="data:image/svg+xml,&lt;svg onload=alert(8)&gt;"/><use href="#n1"/>'
        '<animate attributeName="href" to="javascript:alert(9)"/><set attributeName="onclick" to="alert(10)"/>'
        '<text x="2">ok &amp; fine</text></g><style>*{background:url(//evil)}</style></svg>'
    )
    out = safe_svg(evil)
    m = assert_inert(out, allow_style=False)
    assert "alert(2)" not in out and "link" not in "".join(m.text) and "hi" not in "".join(m.text)
    assert "<script>alert(6)</script>" in m.text  # the title's text survives, escaped
    assert "&lt;script&gt;" in out
    assert "ok & fine" in m.text
    assert ("width", "3") in m.attrs and ("width", "10pt") in m.attrs  # geometry kept
    assert not any(v.startswith("url(") for _, v in m.attrs)


def test_run_snapshot_cuts_long_lists_and_texts_and_says_so() -> None:
    content = {"messages": [{"id": str(i), "type": "ai", "node": "n", "content": "x" * 10_000, "tool_calls": []}
                            for i in range(200)],
               "progress": [], "log": [{"node": "n", "payload": {"i": i}} for i in range(5_000)],
               "updates": [], "errors": []}
    out = run_html({"status": "done", "step": 3}, content, svg="")
    assert len(out) < 200_000, len(out)
    assert f"{200 - MAX_ROWS:,} earlier messages not shown" in out
    assert f"{5_000 - MAX_ROWS:,} earlier events not shown" in out
    assert "(10,000 characters)" in out
    assert "graph not drawn" in out  # no drawing: said, not silently missing


def test_every_view_output_carries_the_widget_and_the_snapshot(lg: SimpleNamespace) -> None:
    graph = hostile_graph(lg)
    run = lgnb.run(graph, {"messages": [("user", "hi")]}, display=False)
    run.wait(timeout=30)
    views = {
        "graph": lgnb.show(graph),
        "run": run.view,
        "history": lgnb.history(graph, run.config),
        "lens": lgnb.lens(graph, {"messages": [("user", "hi")]}, display=False).view,
    }
    for kind, view in views.items():
        bundle = view._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        assert "application/vnd.jupyter.widget-view+json" in data, kind
        snap = data["text/html"]
        assert f'data-lgnb-snapshot="{kind}"' in snap, kind
        assert_inert(snap)
        assert "<svg" in snap, kind
    history_text = "".join(parse(views["history"]._static_html()).text)
    assert "checkpoints" in history_text and run.config["configurable"]["thread_id"] in history_text


def test_run_snapshot_draws_the_path_the_run_took(lg: SimpleNamespace) -> None:
    """Visited nodes and taken edges are marked in the drawing, the others are not."""
    def a(state: Any) -> dict[str, Any]:
        return {"messages": [("ai", "a")]}

    builder = lg.StateGraph(lg.MessagesState)
    builder.add_node("a", a)
    builder.add_node("b", a)
    builder.add_edge(lg.START, "a")
    builder.add_conditional_edges("a", lambda state: "__end__", ["b", "__end__"])
    builder.add_edge("b", lg.END)
    run = lgnb.run(builder.compile(), {"messages": []}, display=False)
    run.wait(timeout=30)
    svg = run.view._static_html()
    groups = {}
    for start in svg.split("<g ")[1:]:
        head = start.split(">", 1)[0]
        title = start.split("<title>", 1)[1].split("</title>", 1)[0] if "<title>" in start else ""
        groups[html.unescape(title)] = head
    dot = {n.key: n.dot_id.replace("-", "_") for n in run.view._drawing.nodes}  # a node's <title> is its DOT id
    marked = {t for t, head in groups.items() if "lgnb-snap-visited" in head}
    taken = {t for t, head in groups.items() if "lgnb-snap-taken" in head}
    assert marked == {dot["__start__"], dot["a"], dot["__end__"]}, groups
    assert taken == {f"{dot['__start__']}->{dot['a']}", f"{dot['a']}->{dot['__end__']}"}, groups
    assert f"{dot['a']}->{dot['b']}" in groups and dot["b"] in groups  # drawn, not marked
    assert_inert(svg)


def test_the_saved_snapshot_of_a_finished_run_shows_its_final_step(lg: SimpleNamespace, monkeypatch: Any) -> None:
    """The notebook saved after a run holds the snapshot published when the run settled:
    it shows the run's last step with its final status, not the step before it (the
    status and the step change in one trait sync; the snapshot waits for both)."""
    import IPython.display

    published: list[str] = []
    monkeypatch.setattr(IPython.display, "update_display",
                        lambda data, **_: published.append(data["text/html"]))

    def node(name: str) -> Any:
        return lambda state: {"messages": [("ai", name)]}

    builder = lg.StateGraph(lg.MessagesState)
    names = [f"n{i}" for i in range(40)]  # quick steps: the last ones reach the page with the status
    for name in names:
        builder.add_node(name, node(name))
    for a, b in zip([lg.START, *names], names):
        builder.add_edge(a, b)
    run = lgnb.run(builder.compile(), {"messages": []}, display=False)
    run.view._snapshot_displayed = True  # as `_ipython_display_` leaves it in a notebook

    def status_line(snapshot: str) -> tuple[str, str]:
        found = re.search(r'data-testid="snap-status">([^<]*)</span>(?: · step (\d+))?', snapshot)
        assert found is not None, snapshot
        return found.group(1), found.group(2)

    deadline = time.monotonic() + 30  # the cell returned (no `wait()`); the run settles on its own
    while not (published and status_line(published[-1])[0] == "done") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert run.status == "done" and run.view.step == 40
    assert status_line(published[-1]) == ("done", "40")


def test_run_snapshot_labels_messages_as_the_live_view_does() -> None:
    """By the task that wrote them, else the node; the input and a thread's saved history
    (an attached thread's AI draft) are not said to come from a node named "input"."""
    content = {"messages": [{"id": "1", "type": "ai", "node": "input", "content": "saved draft", "tool_calls": []},
                            {"id": "2", "type": "ai", "node": "worker", "task": "worker #2", "content": "x",
                             "tool_calls": []},
                            {"id": "3", "type": "ai", "node": "chat", "content": "y", "tool_calls": []}],
               "progress": [], "log": [], "updates": [], "errors": []}
    out = run_html({"status": "done", "step": 3}, content, svg="")
    assert " in input" not in out
    assert "</b> in worker #2<pre>x" in out and "</b> in chat<pre>y" in out
