"""Static snapshots of the views: what a saved notebook shows without a kernel.

Each view's output carries, beside the widget, a `text/html` rendering of the view's
kernel-side state: the graph's SVG, the transcript, progress, updates, status, forms and
their answers, the timeline. nbconvert, GitHub and a notebook whose kernel is gone show
it; a live page shows the widget instead. The functions here are pure: plain state in,
an HTML string out. Every value from a user or a model goes through `html.escape`, the
SVG through `_snapshot_svg.safe_svg`; the HTML has no script, no event attribute, no link
and no external resource. Long lists and texts are cut (and say so) so a snapshot stays
small.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from typing import Any

#: caps that keep a snapshot small whatever the run did
MAX_TEXT = 2_000
MAX_ROWS = 40
MAX_JSON = 600

STYLE = """<style>
.lgnb-snap{font:13px/1.4 system-ui,sans-serif;color:#1a202c;border:1px solid #d5dae3;border-radius:6px;padding:8px 10px;max-width:100%;overflow:auto}
.lgnb-snap h4{margin:0 0 6px;font-size:14px}.lgnb-snap h5{margin:8px 0 4px;font-size:12px;color:#4a5568;text-transform:uppercase}
.lgnb-snap .lgnb-snap-status{font-weight:600}.lgnb-snap pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12px monospace}
.lgnb-snap .lgnb-snap-msg{border-left:3px solid #a0aec0;padding:2px 6px;margin:4px 0}
.lgnb-snap .lgnb-snap-error{color:#9b2c2c}.lgnb-snap svg{max-width:100%;height:auto}
.lgnb-snap .lgnb-snap-note{color:#718096;font-size:12px}
.lgnb-snap .lgnb-snap-visited>path,.lgnb-snap .lgnb-snap-visited>polygon,.lgnb-snap .lgnb-snap-visited>ellipse{stroke:#2f855a;stroke-width:2}
.lgnb-snap .lgnb-snap-taken>path,.lgnb-snap .lgnb-snap-taken>polygon{stroke:#2f855a;stroke-width:2}
</style>"""


def esc(value: Any) -> str:
    """`value` as escaped text (strings as they are, other values as compact JSON), cut to `MAX_TEXT`."""
    text = value if isinstance(value, str) else _json(value, MAX_TEXT)
    if len(text) > MAX_TEXT:
        text = f"{text[:MAX_TEXT]}… ({len(text):,} characters)"
    return html.escape(text, quote=True)


def _json(value: Any, limit: int) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _rows(items: list[Any], render: Any, *, what: str) -> str:
    shown = items[-MAX_ROWS:]
    head = f'<div class="lgnb-snap-note">{len(items) - len(shown):,} earlier {what} not shown</div>' \
        if len(items) > len(shown) else ""
    return head + "".join(render(i) for i in shown)


def _section(title: str, body: str) -> str:
    return f"<h5>{html.escape(title)}</h5>{body}" if body else ""


def _drawing(svg: str) -> str:
    if svg:
        return f'<div class="lgnb-snap-graph">{svg}</div>'
    return '<div class="lgnb-snap-note">(graph not drawn: Graphviz\'s dot was not found)</div>'


def _frame(kind: str, title: str, body: str) -> str:
    return (f'<div class="lgnb-snap lgnb-snap-{kind}" data-lgnb-snapshot="{kind}">{STYLE}'
            f"<h4>{esc(title)}</h4>{body}</div>")


def _status_line(state: Mapping[str, Any]) -> str:
    parts = [f'<span class="lgnb-snap-status" data-testid="snap-status">{esc(state.get("status", ""))}</span>']
    if state.get("step") is not None:
        parts.append(f"step {esc(state.get('step'))}")
    if state.get("elapsed"):
        parts.append(f"{float(state['elapsed']):.1f} s")
    if state.get("thread"):
        parts.append(f"thread {esc(state['thread'])}")
    return f'<div>{" · ".join(parts)}</div>'


def _message(m: Mapping[str, Any]) -> str:
    who = m.get("name") or m.get("type") or "message"
    # as the live view labels a message: by the task that wrote it, else its node; the
    # messages a run was given or a thread held before (node "input") have none
    node = m.get("task") or (m.get("node") if m.get("node") != "input" else "")
    where = f" in {esc(node)}" if node else ""
    calls = "".join(f"<pre>→ {esc(c.get('name') or 'tool')}({esc(c.get('args') or '')})</pre>"
                    for c in m.get("tool_calls") or [] if isinstance(c, Mapping))
    return (f'<div class="lgnb-snap-msg"><b>{esc(who)}</b>{where}'
            f"<pre>{esc(m.get('content') or '')}</pre>{calls}</div>")


def _progress(p: Mapping[str, Any]) -> str:
    value = p.get("value")
    pct = f"{float(value) * 100:.0f}%" if isinstance(value, (int, float)) else ""
    label = p.get("label") or p.get("stage") or p.get("node") or ""
    return f"<div>{esc(label)} {esc(pct)}</div>"


def _log(entry: Mapping[str, Any]) -> str:
    where = entry.get("task") or entry.get("node") or ""  # "worker #2": one of a node's tasks
    if not where and isinstance(entry.get("step"), int):  # the writer is unknown: namespace and step
        where = " · ".join(p for p in (str(entry.get("ns") or ""), f"step {entry['step']}") if p)
    return f"<pre>{esc(where)}: {esc(_json(entry.get('payload'), MAX_JSON))}</pre>"


def _update(u: Mapping[str, Any]) -> str:
    return f"<pre>step {esc(u.get('step', ''))} {esc(u.get('node') or '')}: {esc(_json(u.get('delta'), MAX_JSON))}</pre>"


def _error(e: Mapping[str, Any]) -> str:
    where = f" in {esc(e['node'])}" if e.get("node") else ""
    return f'<pre class="lgnb-snap-error">{esc(e.get("type") or "Error")}{where}: {esc(e.get("message") or "")}</pre>'


def _form(f: Mapping[str, Any]) -> str:
    asked = f.get("value", f)
    # a NodeInterrupt (its id the placeholder every raised one shares: `_forms.RAISED_ID`) asks nothing
    raised = f.get("id") == "placeholder-id"
    waits = "stopped by NodeInterrupt (no answer to give) in" if raised else "waiting for an answer in"
    return (f'<div class="lgnb-snap-msg">{waits} {esc(f.get("node") or "?")}: '
            f"<pre>{esc(asked if isinstance(asked, str) else _json(asked, MAX_JSON))}</pre></div>")


def _answer(a: Mapping[str, Any]) -> str:
    asked = f"“{esc(a.get('asked'))}” " if a.get("asked") else ""
    return (f"<div>{asked}answered by {esc(a.get('by') or '')} at {esc(a.get('at') or '')} "
            f"in {esc(a.get('node') or '')}: <b>{esc(a.get('summary') or '')}</b></div>")


def _names(title: str, names: Iterable[Any]) -> str:
    names = list(names)
    return f"<div>{html.escape(title)}: {esc(', '.join(str(n) for n in names))}</div>" if names else ""


def run_html(state: Mapping[str, Any], content: Mapping[str, Any], *, svg: str) -> str:
    """A run view: status, graph, path, transcript, progress, events, updates, errors,
    pending interrupts (what each form asks) and recorded answers.

    `state`: the run view's traits (status, step, elapsed, thread, title, notice, error,
    visited, interrupts, answers); `content`: `ContentStore.snapshot()`."""
    error = state.get("error") or {}
    forms = state.get("interrupts") or []
    body = [
        _status_line(state),
        f'<div class="lgnb-snap-note">{esc(state["notice"])}</div>' if state.get("notice") else "",
        _error(error) if error else "",
        _drawing(svg),
        _names("visited", state.get("visited") or []),
        _section("messages", _rows(list(content.get("messages") or []), _message, what="messages")),
        _section("progress", "".join(_progress(p) for p in list(content.get("progress") or [])[:MAX_ROWS])),
        _section("waiting", "".join(_form(f) for f in forms[:MAX_ROWS])),
        _section("answers", _rows(list(state.get("answers") or []), _answer, what="answers")),
        _section("events", _rows(list(content.get("log") or []), _log, what="events")),
        _section("updates", _rows(list(content.get("updates") or []), _update, what="updates")),
        _section("errors", "".join(_error(e) for e in list(content.get("errors") or [])[:MAX_ROWS])),
    ]
    return _frame("run", state.get("title") or "run", "".join(body))


def graph_html(state: Mapping[str, Any], *, svg: str) -> str:
    """A graph view: its title and the drawing."""
    return _frame("graph", state.get("title") or "graph", _drawing(svg))


def _checkpoint(c: Mapping[str, Any]) -> str:
    nxt = ", ".join(str(n) for n in c.get("next") or [])
    return (f"<div>step {esc(c.get('step', ''))} · {esc(c.get('source') or '')} · "
            f"{esc(c.get('id') or '')}{' → ' + esc(nxt) if nxt else ''}</div>")


def history_html(state: Mapping[str, Any], *, svg: str) -> str:
    """A history view: thread, the timeline's drawing and its checkpoints, newest last."""
    timeline = state.get("timeline") or {}
    body = [
        _status_line({"status": f"{len(timeline.get('checkpoints') or [])} checkpoints", "thread": state.get("thread")}),
        f'<div class="lgnb-snap-error">{esc(state["error"])}</div>' if state.get("error") else "",
        _drawing(svg),
        _section("checkpoints", _rows(list(timeline.get("checkpoints") or []), _checkpoint, what="checkpoints")),
    ]
    return _frame("history", state.get("title") or "history", "".join(body))


def _step_row(s: Mapping[str, Any]) -> str:
    return f"<pre>{esc(_json(s, MAX_JSON))}</pre>"


def lens_html(state: Mapping[str, Any], *, svg: str) -> str:
    """A lens: status, the graph, a line per step so far, pending interrupts."""
    error = state.get("error") or {}
    body = [
        _status_line({"status": state.get("status"), "thread": state.get("thread")}),
        _error(error) if error else "",
        _drawing(svg),
        _names("visited", state.get("visited") or []),
        _section("steps", _rows(list(state.get("summary") or []), _step_row, what="steps")),
        _section("waiting", "".join(_form(f) for f in list(state.get("interrupts") or [])[:MAX_ROWS])),
    ]
    return _frame("lens", state.get("title") or "lens", "".join(body))


def standalone(fragment: str, *, title: str) -> str:
    """A whole HTML document around a snapshot: no script, no network."""
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{esc(title)}</title></head><body>{fragment}</body></html>\n")
