"""Record what the kernel sends a run view's page, from real runs of real graphs.

    .venv/bin/python tests/widgets/make_protocol_fixtures.py   # rewrites tests/fixtures/protocol/run_*.json

Each scenario runs a LangGraph graph through `lgnb.widgets.run` with a comm that keeps every
message the page would receive (packed and unpacked as Jupyter does). A fixture holds the
page-bound messages that carry content — custom ``patches`` / ``snapshot`` messages and
trait updates with a ``snapshot`` — plus the ``caps`` the page was given and ``final``, the
kernel's own content (`run.content`) when the run settled. `test_protocol_fixtures.py`
replays them through the Python reducer (`_store.ContentStore`) and, under Node, the page's
(`js/src/store.js`): both must reach ``final``. Re-run this script when the protocol
changes (and bump `PROTOCOL_VERSION`); the tests check every fixture names the current one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import comm as comm_package
from comm.base_comm import BaseComm
from jupyter_client.session import Session

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "fixtures" / "protocol"
sys.path.insert(0, str(HERE))

from widget_fakes import FakeStreamingChat  # noqa: E402
from widget_graphs import _engine, agent_graph  # noqa: E402

from lgnb.widgets import run  # noqa: E402
from lgnb.widgets.protocol import PROTOCOL_VERSION  # noqa: E402

SESSION = Session()
LG = _engine("langgraph")


class _Recorder(BaseComm):
    """A widget comm that keeps what the page receives, through Jupyter's packer."""

    def __init__(self, *args: Any, received: list[dict[str, Any]], **kwargs: Any) -> None:
        self.received = received
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None,
                    **keys: Any) -> None:
        self.received.append(SESSION.unpack(SESSION.pack(data)))


@contextmanager
def recording() -> Iterator[list[dict[str, Any]]]:
    """Every comm made inside sends to the returned list (as the page gets it)."""
    received: list[dict[str, Any]] = []
    original = comm_package.create_comm
    comm_package.create_comm = lambda *a, **k: _Recorder(*a, received=received, **k)
    try:
        yield received
    finally:
        comm_package.create_comm = original


def page_messages(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The content-bearing messages, as ``{"custom": content}`` or ``{"state": {"snapshot"}}``."""
    out: list[dict[str, Any]] = []
    for data in received:
        if not isinstance(data, dict):
            continue
        if data.get("method") == "custom" and data["content"].get("kind") in ("patches", "snapshot"):
            out.append({"custom": data["content"]})
        elif "snapshot" in (data.get("state") or {}):
            out.append({"state": {"snapshot": data["state"]["snapshot"]}})
    return out


def caps_sent(received: list[dict[str, Any]]) -> dict[str, int]:
    return next(d["state"]["caps"] for d in received if isinstance(d, dict) and "caps" in (d.get("state") or {}))


def one_node(fn: Callable[[Any], Any], *, checkpointer: Any = None) -> Any:
    g = LG.StateGraph(LG.MessagesState)
    g.add_node("work", fn)
    g.add_edge(LG.START, "work")
    g.add_edge("work", LG.END)
    return g.compile(checkpointer=checkpointer)


# -- scenarios ---------------------------------------------------------------------------
def agent_tools() -> Any:
    """A streaming model calls a tool (arguments in pieces), the tool reports progress and
    a custom event, the model answers: msg.new/delta/final, tool.delta, progress, log, update."""
    replies = [{"content": "let me add these two numbers",
                "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3, "note": "<b>bold?</b>"}, "id": "call-1"},
                               {"name": "add", "args": {"a": 1, "b": 1}, "id": "call-2"}]},
               "2 + 3 = 5 and 1 + 1 = 2 \U0001f600"]
    # tokens 50 ms apart: several batches reach the page, not one coalesced at the end
    model = FakeStreamingChat(replies=replies, delay=0.05)
    r = run(agent_graph(LG, model), {"messages": [("user", "what is 2 + 3?")]}, display=False)
    r.wait(timeout=30)
    return r


def node_error() -> Any:
    """A node writes an event, then fails: the error patch and the error row."""
    def work(state: Any) -> Any:
        LG.get_stream_writer()({"about_to": "fail", "html": "<script>x</script>"})
        raise ValueError("the tool said <no>")

    r = run(one_node(work), {"messages": [("user", "go")]}, display=False)
    try:
        r.wait(timeout=30)
    except ValueError:
        pass
    return r


def bounded_log() -> Any:
    """More custom events than the page keeps: the oldest drop, and both sides count them."""
    def chatty(state: Any) -> Any:
        writer = LG.get_stream_writer()
        for i in range(520):
            writer({"i": i})
        return {"messages": [("ai", "done")]}

    r = run(one_node(chatty), {"messages": []}, display=False)
    r.wait(timeout=60)
    return r


def resumed() -> Any:
    """An interrupt, then a resume: the end of the first segment syncs a snapshot, the
    second segment's patches follow it (a page opened in between starts from the snapshot)."""
    def ask(state: Any) -> Any:
        LG.get_stream_writer()({"asking": True})
        answer = LG.interrupt("approve?")
        return {"messages": [("ai", f"you said {answer}")]}

    r = run(one_node(ask, checkpointer=LG.InMemorySaver()), {"messages": [("user", "hi")]}, display=False)
    r.wait(timeout=30)
    r.resume("yes")
    r.wait(timeout=30)
    return r


def late_hello() -> Any:
    """A page that says hello after the run: the kernel answers with a snapshot message."""
    r = agent_tools()
    r.view._dispatch(r.view, {"kind": "hello"}, [])
    return r


SCENARIOS: dict[str, Callable[[], Any]] = {
    "run_agent_tools": agent_tools, "run_node_error": node_error, "run_bounded_log": bounded_log,
    "run_resumed": resumed, "run_late_hello": late_hello,
}


def record(name: str) -> dict[str, Any]:
    """Run scenario `name` and return its fixture."""
    with recording() as received:
        r = SCENARIOS[name]()
        final = r.content
    return {"about": f"recorded by tests/widgets/make_protocol_fixtures.py ({' '.join(SCENARIOS[name].__doc__.split())})",
            "protocol": PROTOCOL_VERSION, "caps": caps_sent(received), "messages": page_messages(received),
            "final": json.loads(json.dumps(final))}


def dumps(fixture: dict[str, Any]) -> str:
    """JSON with one message (one patch, for a batch) per line: small, and diffs read well."""
    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    def message(m: dict[str, Any]) -> str:
        content = m.get("custom")
        if not content or content.get("kind") != "patches":
            return f"  {one(m)}"
        head = one({k: v for k, v in content.items() if k != "patches"})[:-1]
        patches = ",\n".join(f"   {one(p)}" for p in content["patches"])
        return f'  {{"custom": {head}, "patches": [\n{patches}]}}}}'

    top = [f" {one(k)}: {one(fixture[k])}" for k in ("about", "protocol", "caps")]
    messages = ",\n".join(message(m) for m in fixture["messages"])
    return "{\n" + ",\n".join([*top, f' "messages": [\n{messages}]', f' "final": {one(fixture["final"])}']) + "\n}\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        fixture = record(name)
        path = OUT / f"{name}.json"
        text = dumps(fixture)
        assert json.loads(text) == fixture
        path.write_text(text, encoding="utf-8")
        print(f"{path.relative_to(HERE.parent.parent)}: {len(fixture['messages'])} messages")  # noqa: T201


if __name__ == "__main__":
    main()
