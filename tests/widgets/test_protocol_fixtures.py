"""One protocol between kernel and page (issue 12): both reducers, one behaviour.

`tests/fixtures/protocol/run_*.json` are what a run view's page received in real runs of
real graphs (recorded by `make_protocol_fixtures.py`); `edge_cases.json` holds the decided
rules on patches a healthy kernel does not send. The Python reducer (`_store.ContentStore`)
replays them here and the page's (`js/src/store.js`) under Node (`js/test/`), which this
file also runs, so the suite fails when the two sides disagree.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lgnb.widgets._store import ContentStore
from lgnb.widgets.protocol import PATCH_KINDS, PROTOCOL_VERSION, mismatch_message

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "protocol").glob("*.json"))
RECORDED = [f for f in FIXTURES if f.name.startswith("run_")]


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def replay(fixture: dict[str, Any], *, start: int = 0) -> dict[str, Any]:
    """What a page that opened at message `start` holds after the rest: the page's rules
    (store.js attachRun) with the Python reducer — the opening state's snapshot, then
    patches applied, a snapshot message loaded, a newer snapshot trait loaded."""
    store = ContentStore(caps=fixture["caps"])
    messages = fixture["messages"][start:]
    if messages and "state" in messages[0]:
        store.load(messages[0]["state"]["snapshot"])
        messages = messages[1:]
    for message in messages:
        if "state" in message:
            snap = message["state"]["snapshot"]
            if (snap.get("seq") or 0) > store.seq:
                store.load(snap)
        elif message["custom"]["kind"] == "patches":
            for patch in message["custom"]["patches"]:
                store.apply(patch)
        elif message["custom"]["kind"] == "snapshot":
            store.load(message["custom"]["snapshot"])
    return store.snapshot()


def openings(fixture: dict[str, Any]) -> list[int]:
    """Indexes where a page opening late would start: every message carrying a snapshot."""
    return [i for i, m in enumerate(fixture["messages"])
            if ("state" in m and m["state"]["snapshot"]) or m.get("custom", {}).get("kind") == "snapshot"]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_the_python_reducer_replays_each_fixture_to_the_kernels_final_content(path: Path) -> None:
    fixture = load(path)
    assert fixture["protocol"] == PROTOCOL_VERSION, f"{path.name} is of another protocol: re-run make_protocol_fixtures.py"
    assert replay(fixture) == fixture["final"]


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_a_page_opened_late_reaches_the_same_content_from_any_snapshot(path: Path) -> None:
    fixture = load(path)
    for start in openings(fixture):
        assert replay(fixture, start=start) == fixture["final"], f"page opened at message {start}"


def test_the_recorded_runs_cover_every_patch_kind_and_a_late_page() -> None:
    kinds = {p["kind"] for f in RECORDED for m in load(f)["messages"]
             for p in m.get("custom", {}).get("patches", [])}
    assert kinds == set(PATCH_KINDS)
    fixtures = [load(f) for f in RECORDED]
    assert any(m.get("custom", {}).get("kind") == "snapshot" for f in fixtures for m in f["messages"])
    assert any(f["final"]["dropped"]["log"] > 0 for f in fixtures)
    # the run with tokens 50 ms apart reached the page in many batches, not one
    agent = load(ROOT / "tests/fixtures/protocol/run_agent_tools.json")
    assert sum("custom" in m for m in agent["messages"]) >= 10


def test_unknown_kinds_and_patches_without_id_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    store = ContentStore()
    store.apply({"kind": "msg.new", "id": "m", "seq": 1, "content": "a"})
    with caplog.at_level(logging.WARNING, logger="lgnb.widgets"):
        store.apply({"kind": "msg.reaction", "id": "m", "seq": 2})
        store.apply({"kind": "log", "seq": 3, "payload": 1})
    assert [r.getMessage() for r in caplog.records] == [
        "lgnb: skipped a patch it cannot apply (kind 'msg.reaction', id 'm'): the kernel and this reader "
        "speak different protocol versions?",
        "lgnb: skipped a patch it cannot apply (kind 'log', id None): the kernel and this reader "
        "speak different protocol versions?"]
    snap = store.snapshot()
    assert snap["seq"] == 3 and snap["log"] == [] and snap["messages"][0]["content"] == "a"


def test_a_store_with_caps_that_are_not_positive_ints_says_what_to_pass() -> None:
    with pytest.raises(ValueError, match=r"caps\['log'\] must be a positive int, got 0: pass e.g. caps="):
        ContentStore(caps={"log": 0, "updates": 5})


def test_load_takes_a_snapshot_and_rebounds_its_lists_with_its_own_caps() -> None:
    big = ContentStore()
    for i in range(5):
        big.apply({"kind": "log", "id": i, "seq": i + 1, "node": "n", "ns": "", "payload": i})
    small = ContentStore(caps={"log": 2, "updates": 2})
    small.load(big.snapshot())
    assert [r["payload"] for r in small.log] == [3, 4] and small.dropped["log"] == 3 and small.seq == 5
    small.apply({"kind": "log", "id": 9, "seq": 5, "node": "n", "ns": "", "payload": "old"})  # covered by the snapshot
    assert [r["payload"] for r in small.log] == [3, 4]
    with pytest.raises(TypeError, match="ContentStore.load takes a snapshot dict"):
        small.load([])  # type: ignore[arg-type]


def test_the_page_bundle_speaks_the_kernels_protocol_version() -> None:
    source = (ROOT / "js" / "src" / "protocol.js").read_text(encoding="utf-8")
    page_version = int(re.search(r"export const PROTOCOL_VERSION = (\d+);", source).group(1))  # type: ignore[union-attr]
    assert page_version == PROTOCOL_VERSION
    kinds = re.search(r"PATCH_KINDS = Object\.freeze\(\[(.*?)\]\)", source, re.S).group(1)  # type: ignore[union-attr]
    assert tuple(re.findall(r'"([^"]+)"', kinds)) == PATCH_KINDS
    assert mismatch_message(page=PROTOCOL_VERSION + 1) == (
        f"lgnb front end v{PROTOCOL_VERSION + 1}, kernel v{PROTOCOL_VERSION}: restart the kernel / rebuild")


def test_the_node_reducer_replays_the_same_fixtures_and_checks_the_version() -> None:
    """`node --test js/test/` (what ./dev test runs): store.js on every fixture, and the
    page's version check; run here too so a bypassed dev script still runs it."""
    node = shutil.which("node")
    assert node is not None, "node is not installed: install Node.js 20+ (./dev setup needs it to build js/ too)"
    done = subprocess.run([node, "--test", "js/test/"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = re.search(r"^# pass (\d+)$", done.stdout, re.M)
    failed = re.search(r"^# fail (\d+)$", done.stdout, re.M)
    assert passed and failed and int(failed.group(1)) == 0 and int(passed.group(1)) >= len(FIXTURES) + 3, done.stdout


def test_every_view_tells_the_page_which_protocol_version_the_kernel_speaks() -> None:
    from make_protocol_fixtures import one_node, recording

    from lgnb.widgets import run, show

    with recording() as received:
        run(one_node(lambda state: {"messages": [("ai", "ok")]}), {"messages": []}, display=False).wait(timeout=30)
        show(one_node(lambda state: {}))
    opened = [d["state"] for d in received if isinstance(d, dict) and "_view_kind" in (d.get("state") or {})]
    assert sorted(s["_view_kind"] for s in opened) == ["graph", "run"]
    assert [s["_protocol"] for s in opened] == [PROTOCOL_VERSION, PROTOCOL_VERSION]


def test_a_message_of_a_kind_no_view_handles_is_logged_and_ignored(caplog: pytest.LogCaptureFixture) -> None:
    from make_protocol_fixtures import one_node, recording

    from lgnb.widgets import run

    with recording():
        r = run(one_node(lambda state: {"messages": [("ai", "ok")]}), {"messages": []}, display=False)
        r.wait(timeout=30)
        with caplog.at_level(logging.WARNING, logger="lgnb.widgets"):
            r.view._dispatch(r.view, {"kind": "from_the_future", "x": 1}, [])
    assert [rec.getMessage() for rec in caplog.records] == [
        "lgnb: RunView ignored a message of unknown kind 'from_the_future' (page and kernel of different versions?)"]
    assert r.status == "done"


def _normalized(fixture: dict[str, Any]) -> tuple[list[Any], Any]:
    """The patches a page got, in order, and the final content, with message ids (random
    per run) renamed by first appearance and send times dropped."""
    names: dict[str, str] = {}

    def rename(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (names.setdefault(v, f"msg{len(names)}") if k == "id" and isinstance(v, str) else rename(v))
                    for k, v in value.items() if k != "t"}
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    patches = [p for m in fixture["messages"] for p in m.get("custom", {}).get("patches", [])]
    return rename(patches), rename(fixture["final"])


@pytest.mark.parametrize("name", ["run_node_error", "run_resumed"])
def test_the_recorded_fixtures_are_what_the_kernel_sends_today(name: str) -> None:
    """Re-record the runs whose batches do not depend on timing (no streamed tokens) and
    compare: a kernel change to the wire shows here until the fixtures are re-recorded."""
    from make_protocol_fixtures import record

    today = record(name)
    assert _normalized(today) == _normalized(load(ROOT / "tests" / "fixtures" / "protocol" / f"{name}.json")), (
        f"the kernel now sends something else than {name}.json: if intended, re-run "
        "tests/widgets/make_protocol_fixtures.py (and bump PROTOCOL_VERSION if a page could misread it)")


# -- the recorded messages are what protocol.py says -----------------------------------
def _by_kind(union: Any) -> dict[str, type]:
    """kind -> TypedDict of a Union of TypedDicts, read from each one's `kind` Literal."""
    import typing

    out: dict[str, type] = {}
    for cls in typing.get_args(union):
        for kind in typing.get_args(typing.get_type_hints(cls)["kind"]):
            out[kind] = cls
    return out


def _conforms(value: Any, hint: Any) -> bool:
    """A structural check of a JSON value against a type hint of protocol.py."""
    import typing

    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        return any(_conforms(value, h) for h in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if isinstance(hint, type) and hasattr(hint, "__required_keys__"):
        return not _problems(value, hint)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint) and not (hint is int and isinstance(value, bool))
    return True


def _problems(value: Any, cls: type) -> list[str]:
    import typing

    if not isinstance(value, dict):
        return [f"{cls.__name__}: not an object"]
    hints = typing.get_type_hints(cls)
    required = cls.__required_keys__  # type: ignore[attr-defined]
    out = [f"{cls.__name__}: {k!r} missing" for k in required if k not in value]
    out += [f"{cls.__name__}: {k!r} not in the protocol" for k in value if k not in hints]
    out += [f"{cls.__name__}.{k} = {value[k]!r:.80} is not {hints[k]}" for k in value
            if k in hints and not _conforms(value[k], hints[k])]
    return out


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_every_recorded_message_and_patch_is_one_protocol_py_types(path: Path) -> None:
    """The TypedDicts are the contract: a message or patch a real run sent that they do not
    describe (a key added, renamed or of another type) fails here."""
    from lgnb.widgets import protocol

    messages = _by_kind(protocol.ToPage)
    patches = _by_kind(protocol.Patch)
    assert set(patches) == set(PATCH_KINDS)
    problems: list[str] = []
    kinds: set[str] = set()
    for message in load(path)["messages"]:
        custom = message.get("custom")
        if custom is None:
            continue
        kind = custom.get("kind")
        if kind not in messages:
            problems.append(f"message kind {kind!r} is not in protocol.ToPage")
            continue
        problems += _problems(custom, messages[kind])
        for patch in custom.get("patches") or ():
            kinds.add(patch["kind"])
            problems += _problems(patch, patches[patch["kind"]])
    assert problems == []
    assert kinds  # the fixture carried patches


def test_the_page_to_kernel_kinds_are_the_handlers_the_views_have() -> None:
    """Every kind protocol.ToKernel names has a `_msg_<kind>` on some view, and every
    handler a view has is named there."""
    import inspect

    from lgnb.widgets import protocol
    from lgnb.widgets._runtime import View

    handled: set[str] = set()
    for module in ("run_view", "graph_view", "history_view", "lens_view", "inbox_view"):
        mod = __import__(f"lgnb.widgets.{module}", fromlist=["_"])
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, View):
                handled |= {n[len("_msg_"):] for n in dir(cls) if n.startswith("_msg_")
                            and getattr(getattr(cls, n), "__module__", "").startswith("lgnb.")}
    assert set(_by_kind(protocol.ToKernel)) == handled
