"""The persistence fast paths, attacked with programs users write, against LangGraph's own savers.

lgnb's savers take shortcuts LangGraph's do not:

* a list channel that only grew is serialized by joining bytes (`lgnb.checkpoint._grown`),
  and on SQLite stored as the items it appended on top of an earlier version
  (`lgnb.checkpoint.sqlite._appends`), a chain of at most 32 links for small values;
* a checkpoint's channel-version map is stored on SQLite as a delta on its parent's
  (`lgnb.checkpoint.sqlite._refs`, a full map at least every 64 rows);
* a large value is stored once by content hash (`lgnb_values`), a small one inline.

Each scenario runs as LangGraph + its saver of one kind and lgnb + lgnb's saver of the same
kind (`kind`): `memory` (InMemorySaver), `sqlite` (each engine's SqliteSaver on a file),
`postgres` (each engine's PostgresSaver; needs ``LGNB_TEST_POSTGRES_URL``). Where LangGraph's
SqliteSaver differs from its other savers by design (it saves every channel's current value
in every checkpoint; lgnb's, like InMemorySaver, a channel's value per version: those
scenarios are xfail on `sqlite`), `sqlite-vs-memory` also runs lgnb's SqliteSaver against
LangGraph's InMemorySaver, so its appends are still checked. Observables are
what users read through the public API: `invoke` results, `get_state` (also of every past
checkpoint by id), `get_state_history` (values, next, metadata, tasks, parent config),
with `before`/`limit`; ids and timestamps are normalized by the harness.

The attacks: lists edited in place (an earlier item's content changed, an item replaced,
the list reversed / sorted / truncated, `del lst[0]`), returned or not; a channel
overwritten with a shorter list and grown again; `Overwrite`; forks with `update_state`
on old checkpoints and replays; two threads; runs of 40 and 70 steps (beyond both chain
limits); a saver reopened on the same file; subgraph namespaces; durability `exit` and
`async`; identical large values in two channels and two threads, one thread deleted.
"""


import dataclasses
import operator
import time
from contextlib import contextmanager
from typing import Annotated, Any

import _diff
import pytest
from _savers import thread
from pydantic import BaseModel, field_validator
from typing_extensions import TypedDict

KINDS = ["memory", "sqlite", "postgres"]
R = {"recursion_limit": 500}


def _thread(name: str = "t") -> dict:
    """A new thread's config (unique id, normalized by the harness), loops allowed 500 steps."""
    return {**thread(name), **R}


class _Sync:
    """A compiled graph whose `invoke` defaults to durability="sync": a node that edits a
    list in place races LangGraph's background save of the step before under the default
    "async" (the reference itself would vary), so every scenario saves each step first."""

    def __init__(self, app):
        self._app = app

    def __getattr__(self, name):
        return getattr(self._app, name)

    def invoke(self, input, config=None, **kw):
        kw.setdefault("durability", "sync")
        return self._app.invoke(input, config, **kw)


@pytest.fixture
def differential():
    """The suite's `differential`, refusing a scenario whose reference run raised: every
    scenario here is a program that works on LangGraph."""
    import _pdiff

    def run(scenario, **kw):
        ref = _pdiff.differential(scenario, **kw)
        assert not (isinstance(ref, tuple) and ref and ref[0] == "raises"), f"the reference raised: {ref}"
        return ref

    return run


# --- savers ----------------------------------------------------------------------------------


def _path(E, tmp_path, name):
    return str(tmp_path / f"{E.root}-{name}.sqlite")


@contextmanager
def _saver(E, kind, tmp_path, name, request=None):
    """Each engine's own saver of `kind` (the same file on every open of `name`)."""
    if kind == "memory":
        yield E.InMemorySaver()
    elif kind == "sqlite":
        if E.root == "lgnb":
            from lgnb.checkpoint.sqlite import SqliteSaver
        else:
            from langgraph.checkpoint.sqlite import SqliteSaver
        with SqliteSaver.from_conn_string(_path(E, tmp_path, name)) as s:
            yield s
    elif kind == "postgres":
        url = request.getfixturevalue("postgres_url")
        if E.root == "lgnb":
            from lgnb.checkpoint.postgres import PostgresSaver
        else:
            from langgraph.checkpoint.postgres import PostgresSaver
        with PostgresSaver.from_conn_string(url) as s:
            s.setup()
            yield s
    else:
        raise ValueError(kind)


def _everything(app, cfg, **kw):
    """The whole history, and `get_state` of every checkpoint in it by id."""
    hist = list(app.get_state_history(cfg, **kw))
    return hist, [app.get_state(s.config) for s in hist]


def _settled(snapshots):
    """`snapshots` with each task's `result` left out. Within one run, LangGraph saves a
    finished task's writes in the background, even with durability "sync" (it waits for
    the checkpoint, not the writes), so when the next step edits in place the list that
    task returned, the result LangGraph saved varies from run to run (either side of the
    edit). The channel values of every checkpoint, which it does save before the next
    step, are compared whole; used only for runs that edit in place mid-run."""
    out = []
    for s in snapshots:
        if isinstance(s, (list, tuple)) and not hasattr(s, "_replace"):
            out.append(_settled(s))
        elif hasattr(s, "tasks"):
            out.append(s._replace(tasks=tuple(t._replace(result="<not compared>") for t in s.tasks)))
        else:
            out.append(s)
    return type(snapshots)(out) if isinstance(snapshots, tuple) else out


def _everything_settled(app, cfg, **kw):
    return _settled(_everything(app, cfg, **kw))


# --- values ----------------------------------------------------------------------------------


def _text(tag: str, size: int = 400) -> str:
    return f"{tag}|" + ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]


def _item(n: int, size: int = 400) -> dict:
    return {"n": n, "text": _text(f"item{n}", size), "tags": [f"t{n}"]}


# --- a list channel driven by a plan of operations ---------------------------------------


class Work(TypedDict, total=False):
    items: list  # LastValue: the node decides the whole list
    log: Annotated[list, operator.add]
    plan: list
    i: int
    note: str


def _apply(E, op: str, s: dict, k: int) -> dict:
    """One user's edit of `items` (a list of dicts) and `log` (an operator.add list)."""
    items = s.get("items") or []
    log = s.get("log") or []
    new = _item(k)
    if op == "grow":  # a new list, earlier items the same objects
        return {"items": items + [new], "log": [_text(f"log{k}")]}
    if op == "grow-in-place":  # the same list object, appended to and returned
        items.append(new)
        return {"items": items, "log": [_text(f"log{k}")]}
    if op == "grow-silent":  # appended in place, not returned
        items.append(new)
        log.append(_text(f"silent-log{k}"))
        return {"note": f"silent{k}"}
    if op == "edit-first":  # an earlier item's content changed in place, list grown
        items[0]["text"] = f"edited at {k}"
        return {"items": items + [new]}
    if op == "edit-first-silent":  # changed in place, nothing returned
        items[0]["text"] = f"silently edited at {k}"
        return {"note": f"edit{k}"}
    if op == "edit-nested":  # an entry of a nested container of an earlier item
        items[1]["tags"].append(f"nested{k}")
        return {"items": items + [new]}
    if op == "edit-log-silent":  # an earlier log entry replaced in place, log grown
        log[0] = f"replaced at {k}"
        return {"log": [_text(f"log{k}")]}
    if op == "replace":  # an item replaced by another object
        items[1] = new
        return {"items": items}
    if op == "replace-equal":  # an item replaced by an equal copy: same value
        items[0] = dict(items[0])
        return {"items": items + [new]}
    if op == "reverse":
        items.reverse()
        return {"items": items}
    if op == "sort":
        items.sort(key=lambda d: -d["n"])
        return {"items": items}
    if op == "del0":
        del items[0]
        return {"items": items}
    if op == "truncate":
        del items[3:]
        return {"items": items}
    if op == "pop-push":  # last item popped and appended again: the same list
        items.append(items.pop())
        return {"items": items}
    if op == "shorter":  # overwritten with a shorter (new) list
        return {"items": items[:2]}
    if op == "clear":
        items.clear()
        return {"items": items}
    if op == "overwrite-log":
        return {"log": E.Overwrite(log[:1])}
    if op == "overwrite-log-same":  # Overwrite with the same (grown in place) list
        log.append(_text(f"ow{k}"))
        return {"log": E.Overwrite(log)}
    raise ValueError(op)


def _work_app(E, saver, **compile_kw):
    """START -> work (one op of `plan` per step, looping until the plan is done)."""

    def work(s):
        i = s.get("i", 0)
        out = _apply(E, s["plan"][i], s, 100 + i)
        out["i"] = i + 1
        return out

    def route(s):
        return "work" if s["i"] < len(s["plan"]) else E.END

    g = E.StateGraph(Work)
    g.add_node("work", work)
    g.add_edge(E.START, "work")
    g.add_conditional_edges("work", route, ["work", E.END])
    return _Sync(g.compile(checkpointer=saver, **compile_kw))


# (LangGraph on both sides under LGNB_DIFF_SELFTEST=1: no divergence to expect)
_LGNB = not _diff.selftest_enabled()
UNRETURNED_EDIT = pytest.mark.xfail(_LGNB, strict=True, reason=(
    "a list edited in place by a node that does not return it: LangGraph's SqliteSaver saves "
    "every channel's current value in every checkpoint (the edit shows from that step on); "
    "lgnb's SqliteSaver saves a channel only when its version changes (the edit is lost)"))


NOT_IN_SCHEMA = pytest.mark.xfail(_LGNB, strict=True, reason=(
    "a channel the running graph's schema lacks: LangGraph's SqliteSaver's checkpoints written by that graph "
    "hold only its channels (the value is gone for a graph that has it); lgnb's SqliteSaver carries the "
    "channel's version on, so the value is read back in them"))


def _cases(plans, xfail_on_sqlite=()):
    """(kind, plan) parameters; the plans in `xfail_on_sqlite` marked UNRETURNED_EDIT on sqlite
    and also run as "sqlite-vs-memory" (lgnb's SqliteSaver against LangGraph's InMemorySaver)."""
    return [pytest.param(k, p, id=f"{k}-{p}", marks=UNRETURNED_EDIT if k == "sqlite" and p in xfail_on_sqlite else ())
            for k in KINDS for p in plans] + [pytest.param("sqlite-vs-memory", p, id=f"sqlite-vs-memory-{p}")
                                              for p in plans if p in xfail_on_sqlite]


GROW4 = ["grow"] * 4

PLANS = {
    "edit-first": GROW4 + ["edit-first", "grow", "grow"],
    "edit-first-silent": GROW4 + ["edit-first-silent", "grow", "grow"],
    "edit-nested": GROW4 + ["edit-nested", "grow", "grow"],
    "edit-log-silent": GROW4 + ["edit-log-silent", "grow", "grow"],
    "grow-in-place": GROW4 + ["grow-in-place"] * 3 + ["grow"],
    "grow-silent": GROW4 + ["grow-silent", "grow", "grow-silent", "grow-silent", "grow"],
    "replace": GROW4 + ["replace", "grow", "grow"],
    "replace-equal": GROW4 + ["replace-equal", "grow", "grow"],
    "reverse": GROW4 + ["reverse", "grow", "grow", "reverse", "grow"],
    "sort": GROW4 + ["sort", "grow", "grow"],
    "del0": GROW4 + ["del0", "grow", "del0", "grow", "grow"],
    "truncate": GROW4 + ["truncate", "grow", "grow", "grow"],
    "pop-push": GROW4 + ["pop-push", "grow", "grow"],
    "shorter-then-grow": GROW4 + ["shorter", "grow", "grow", "grow", "grow"],
    "clear-then-grow": GROW4 + ["clear", "grow", "grow", "grow", "grow"],
    "overwrite-log": GROW4 + ["overwrite-log", "grow", "grow", "grow"],
    "overwrite-log-same": GROW4 + ["overwrite-log-same", "grow", "grow"],
    "everything": GROW4 + ["edit-first", "grow", "reverse", "grow", "grow", "del0", "grow-in-place",
                           "edit-first-silent", "grow-silent", "grow", "shorter", "grow", "grow", "grow",
                           "edit-nested", "grow", "overwrite-log", "grow", "grow"],
}


@pytest.mark.parametrize(("kind", "plan"), _cases(sorted(PLANS), ("edit-first-silent", "grow-silent", "everything")))
def test_a_list_edited_in_place_mid_run_is_saved_as_the_reference_saves_it(differential, tmp_path, request,
                                                                             kind, plan):
    """A loop whose node grows a list channel for a few steps, then edits it as the plan
    says (in place, returned or not; shorter; Overwrite), then grows it again: the run's
    result and every checkpoint read back, by history and by id (task results: `_settled`)."""

    def scenario(E):
        with (_versioned(E, tmp_path, "xplan") if kind == "sqlite-vs-memory"
              else _saver(E, kind, tmp_path, "plan", request)) as saver:
            app, cfg = _work_app(E, saver), _thread()
            out = app.invoke({"items": [], "log": [], "plan": PLANS[plan], "i": 0}, cfg)
            return out, app.get_state(cfg), _everything_settled(app, cfg)

    differential(scenario)


@pytest.mark.parametrize(("kind", "plan"), _cases(
    ["edit-first", "reverse", "del0", "grow-silent", "edit-first-silent", "shorter-then-grow", "overwrite-log-same"],
    ("grow-silent", "edit-first-silent")))
def test_a_list_edited_between_turns_is_saved_as_the_reference_saves_it(differential, tmp_path, request,
                                                                         kind, plan):
    """The same edits, one per `invoke` (a chat turn per cell): each turn starts from the
    list read back from the saver, so the read-back list is what the turn joins to."""

    def scenario(E):
        with (_versioned(E, tmp_path, "xturns") if kind == "sqlite-vs-memory"
              else _saver(E, kind, tmp_path, "turns", request)) as saver:
            app, cfg = _work_app(E, saver), _thread()
            outs = []
            steps = PLANS[plan]
            app.invoke({"items": [], "log": [], "plan": steps[:1], "i": 0}, cfg)
            for n in range(1, len(steps)):
                outs.append(app.invoke({"plan": steps[: n + 1]}, cfg))
            return outs, _everything(app, cfg)

    differential(scenario)


# --- messages -------------------------------------------------------------------------------


def _chat_app(E, saver, **compile_kw):
    from langchain_core.messages import AIMessage, RemoveMessage

    class ChatS(TypedDict, total=False):
        messages: Annotated[list, E.add_messages]
        cmd: str

    def bot(s):
        msgs = s["messages"]
        cmd = s.get("cmd", "")
        n = len(msgs)
        reply = AIMessage(content=_text(f"reply{n}"), id=f"ai-{n}")
        if cmd == "edit-return":  # an earlier message edited in place and returned (same id)
            msgs[1].content = f"edited at {n}"
            return {"messages": [msgs[1], reply]}
        if cmd == "edit-silent":  # edited in place, not returned
            msgs[0].content = f"silently edited at {n}"
            return {"messages": [reply]}
        if cmd == "kwargs-silent":  # an entry of a message's dict changed in place
            msgs[2].additional_kwargs["flag"] = n
            return {"messages": [reply]}
        if cmd == "attr-silent":  # a field set on a message (name)
            msgs[1].name = f"renamed{n}"
            return {"messages": [reply]}
        if cmd == "replace-by-id":  # a new message with an earlier one's id
            return {"messages": [AIMessage(content=f"replacement {n}", id=msgs[1].id), reply]}
        if cmd == "remove":
            return {"messages": [RemoveMessage(id=msgs[0].id), reply]}
        if cmd == "remove-all":
            return {"messages": [RemoveMessage(id=E.REMOVE_ALL_MESSAGES), reply]}
        if cmd == "overwrite":
            return {"messages": E.Overwrite(msgs[-2:] + [reply])}
        return {"messages": [reply]}

    g = E.StateGraph(ChatS)
    g.add_node("bot", bot)
    g.add_edge(E.START, "bot")
    return _Sync(g.compile(checkpointer=saver, **compile_kw))


def _human(n):
    from langchain_core.messages import HumanMessage

    return HumanMessage(content=_text(f"human{n}"), id=f"h-{n}")


CHAT_CMDS = {
    "edit-return": ["", "", "", "", "edit-return", "", ""],
    "edit-silent": ["", "", "", "", "edit-silent", "", ""],
    "kwargs-silent": ["", "", "", "", "kwargs-silent", "", ""],
    "attr-silent": ["", "", "", "", "attr-silent", "", ""],
    "replace-by-id": ["", "", "", "", "replace-by-id", "", ""],
    "remove": ["", "", "", "", "remove", "", "", "remove", ""],
    "remove-all": ["", "", "", "", "remove-all", "", "", ""],
    "overwrite": ["", "", "", "", "overwrite", "", "", ""],
}


@pytest.mark.parametrize("cmds", sorted(CHAT_CMDS))
@pytest.mark.parametrize("kind", KINDS)
def test_chat_turns_with_messages_edited_in_place_read_back_as_saved(differential, tmp_path, request,
                                                                      kind, cmds):
    """A chatbot (add_messages) over several turns, one turn editing the conversation:
    an earlier message's content, additional_kwargs or name changed in place (returned or
    not), replaced by id, removed, all removed, or the conversation overwritten."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "chat", request) as saver:
            app, cfg = _chat_app(E, saver), _thread()
            outs = [app.invoke({"messages": [_human(t)], "cmd": c}, cfg) for t, c in enumerate(CHAT_CMDS[cmds])]
            return outs, _everything(app, cfg)

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_a_message_of_get_state_edited_by_the_caller_is_not_saved(differential, tmp_path, request, kind):
    """A notebook reads `get_state`, edits a message of the snapshot in place (and appends to
    the snapshot's list), then runs more turns: what the saver holds is unaffected, and
    update_state with the edited list saves the edit."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "caller", request) as saver:
            app, cfg = _chat_app(E, saver), _thread()
            for t in range(5):
                app.invoke({"messages": [_human(t)]}, cfg)
            st = app.get_state(cfg)
            st.values["messages"][0].content = "caller edit"
            st.values["messages"].append(_human(99))
            outs = [app.invoke({"messages": [_human(t)]}, cfg) for t in range(5, 8)]
            st2 = app.get_state(cfg)
            msgs = st2.values["messages"]
            msgs[1].content = "caller edit, saved by update_state"
            app.update_state(cfg, {"messages": [msgs[1]]})
            outs.append(app.invoke({"messages": [_human(8)]}, cfg))
            return outs, _everything(app, cfg)

    differential(scenario)


# --- forks, replays, two threads ---------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_forks_of_a_growing_list_and_replays_keep_every_branch(differential, tmp_path, request, kind):
    """A chat of 8 turns; `update_state` on the checkpoint of turn 3 (as the bot, a new
    message), a run from the fork; a replay from turn 5's checkpoint and a turn after
    it; then the main line continued: every checkpoint of the tree read back."""

    def scenario(E):
        from langchain_core.messages import AIMessage

        with _saver(E, kind, tmp_path, "forks", request) as saver:
            app, cfg = _chat_app(E, saver), _thread()
            for t in range(8):
                app.invoke({"messages": [_human(t)]}, cfg)
            turns = [s for s in reversed(list(app.get_state_history(cfg))) if not s.next]
            at3, at5 = turns[3], turns[5]
            fork = app.update_state(at3.config, {"messages": [AIMessage(content=_text("forked"), id="fork-1")]},
                                    as_node="bot")
            a = app.invoke({"messages": [_human(50)]}, fork)
            b = app.invoke({"messages": [_human(51)]}, cfg)
            replay = app.invoke(None, at5.config)
            c = app.invoke({"messages": [_human(52)]}, at5.config)
            d = [app.invoke({"messages": [_human(t)]}, cfg) for t in range(60, 63)]
            fork2 = app.update_state(at3.config, {"messages": [_human(70)]})
            e = app.invoke(None, fork2)
            return a, b, replay, c, d, e, _everything(app, cfg)

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_a_fork_that_edits_an_old_list_in_place_then_grows(differential, tmp_path, request, kind):
    """The plan loop run to the end; then `update_state` on an old checkpoint whose `items`
    the caller took from that checkpoint's snapshot, reversed in place and grown, and a
    run from the fork with a plan that grows and edits it again."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "forkedit", request) as saver:
            app, cfg = _work_app(E, saver), _thread()
            app.invoke({"items": [], "log": [], "plan": ["grow"] * 8, "i": 0}, cfg)
            old = next(s for s in app.get_state_history(cfg) if s.values.get("i") == 5)
            items = old.values["items"]
            items.reverse()
            items.append(_item(500))
            fork = app.update_state(old.config, {"items": items, "plan": ["grow"] * 5 + ["edit-first", "grow", "grow"]},
                                    as_node="work")
            out = app.invoke(None, {**fork, **R})
            again = app.update_state(old.config, {"log": [_text("again")]}, as_node="work")
            out2 = app.invoke(None, {**again, **R})
            return out, out2, _everything_settled(app, cfg)

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_two_threads_interleaved_grow_the_same_lists(differential, tmp_path, request, kind):
    """Two threads fed the same items (the same objects) turn by turn, one editing an
    item in place midway: each thread reads back its own values."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "two", request) as saver:
            app = _work_app(E, saver)
            c1, c2 = _thread("one"), _thread("two")
            shared = [_item(k) for k in range(6)]
            app.invoke({"items": shared, "log": [], "plan": ["grow"], "i": 0}, c1)
            app.invoke({"items": shared, "log": [], "plan": ["grow"], "i": 0}, c2)
            for n in range(2, 8):
                app.invoke({"plan": ["grow"] * n}, c1)
                app.invoke({"plan": ["grow"] * (n - 1) + (["edit-first"] if n == 5 else ["grow"])}, c2)
            return _everything(app, c1), _everything(app, c2)

    differential(scenario)


# --- long runs, beyond the chain limits, and a reopened file ------------------------------


@pytest.mark.parametrize("steps", [40, 70])
@pytest.mark.parametrize("kind", KINDS)
def test_long_loop_history_reads_every_value_back(differential, tmp_path, request, kind, steps):
    """A loop of 40 / 70 steps growing two lists (beyond 32 appends and 64 version
    deltas), with an edit in place every 13 steps: full values at every checkpoint, by
    history, by id, and pages of `before=`/`limit=`."""

    def scenario(E):
        plan = ["edit-first" if k % 13 == 12 else "grow" for k in range(steps)]
        with _saver(E, kind, tmp_path, f"long{steps}", request) as saver:
            app, cfg = _work_app(E, saver), _thread()
            out = app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, cfg)
            hist, states = _everything_settled(app, cfg)
            pages = []
            for mid in (hist[3], hist[len(hist) // 2], hist[-5]):
                pages.append(_settled(list(app.get_state_history(cfg, before=mid.config, limit=4))))
            return out, hist, states, pages

    differential(scenario)


def test_a_sqlite_file_reopened_by_a_new_saver_reads_every_checkpoint_back(differential, tmp_path):
    """A 70-step loop, a fork and a second thread on one SQLite file; the file reopened by a
    new saver instance, which reads every checkpoint back and continues both branches."""

    def scenario(E):
        plan = ["edit-first" if k % 17 == 16 else "grow" for k in range(70)]
        cfg, cfg2 = _thread("main"), _thread("other")
        with _saver(E, "sqlite", tmp_path, "reopen") as saver:
            app = _work_app(E, saver)
            app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, cfg)
            app.invoke({"items": [], "log": [], "plan": ["grow"] * 35, "i": 0}, cfg2)
            old = next(s for s in app.get_state_history(cfg) if s.values.get("i") == 40)
            fork = app.update_state(old.config, {"plan": plan[:40] + ["grow"] * 6}, as_node="work")
            app.invoke(None, {**fork, **R})
            first = _everything_settled(app, cfg)
        with _saver(E, "sqlite", tmp_path, "reopen") as saver:
            app = _work_app(E, saver)
            again = _everything_settled(app, cfg)
            other = _everything(app, cfg2)
            app.invoke({"plan": plan + ["grow"] * 3}, cfg)
            app.invoke({"plan": ["grow"] * 38}, cfg2)
            after = _everything_settled(app, cfg), _everything(app, cfg2)
        return first, again, other, after

    differential(scenario)


# --- version maps: update_state(as_node), keys removed, durability ---------------------------


class Wide(TypedDict, total=False):
    a: str
    b: list
    c: Annotated[list, operator.add]
    d: int
    e: dict


def _wide_app(E, saver, **compile_kw):
    """x -> y -> z, each writing a different subset of five channels."""

    def x(s):
        return {"a": _text(f"a{s.get('d', 0)}"), "c": [_text("cx")], "d": s.get("d", 0) + 1}

    def y(s):
        return {"b": (s.get("b") or []) + [_item(s["d"])], "c": [_text("cy")]}

    def z(s):
        return {"e": {"k": _text("e"), "n": s["d"]}, "d": s["d"] + 1}

    g = E.StateGraph(Wide)
    for n, f in (("x", x), ("y", y), ("z", z)):
        g.add_node(n, f)
    g.add_edge(E.START, "x")
    g.add_edge("x", "y")
    g.add_edge("y", "z")
    return _Sync(g.compile(checkpointer=saver, **compile_kw))


@pytest.mark.parametrize("kind", KINDS)
def test_update_state_as_each_node_on_old_checkpoints_and_reading_them_by_id(differential, tmp_path, request,
                                                                             kind):
    """Five runs of a three-node graph writing different channels; update_state as x, y, z
    and with no as_node on checkpoints of the first runs, runs from those forks; every
    checkpoint by id, and `before`/`limit` pages from both branches."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "wide", request) as saver:
            app, cfg = _wide_app(E, saver), _thread()
            outs = [app.invoke({"d": r}, cfg) for r in range(5)]
            hist = list(app.get_state_history(cfg))
            olds = [s for s in hist if s.next][-6:]
            for n, (s, node) in enumerate(zip(olds, ["x", "y", "z", None, "y", "x"])):
                upd = {"b": [_item(900 + n)], "c": [f"upd{n}"], "d": 50 + n}
                fork = app.update_state(s.config, upd, as_node=node) if node else app.update_state(s.config, upd)
                outs.append(app.invoke(None, fork))
            hist, states = _everything(app, cfg)
            pages = [list(app.get_state_history(cfg, before=s.config, limit=3)) for s in hist[::7]]
            return outs, hist, states, pages

    differential(scenario)


@pytest.mark.parametrize("kind", ["memory", pytest.param("sqlite", marks=NOT_IN_SCHEMA), "postgres",
                                  "sqlite-vs-memory"])
def test_a_key_dropped_from_the_schema_and_a_thread_continued_by_the_new_graph(differential, tmp_path, request,
                                                                               kind):
    """A thread saved by a graph with five keys, continued by a new version of the graph
    whose schema dropped two of them (a notebook cell re-run): history of old and new
    checkpoints, and a fork of an old checkpoint run by the new graph."""

    class Narrow(TypedDict, total=False):
        a: str
        c: Annotated[list, operator.add]
        d: int

    def scenario(E):
        with (_versioned(E, tmp_path, "xnarrow") if kind == "sqlite-vs-memory"
              else _saver(E, kind, tmp_path, "narrow", request)) as saver:
            app, cfg = _wide_app(E, saver), _thread()
            for r in range(4):
                app.invoke({"d": r}, cfg)
            old_hist = list(app.get_state_history(cfg))

            g = E.StateGraph(Narrow)
            g.add_node("x", lambda s: {"c": [_text("new-x")], "d": s.get("d", 0) + 10})
            g.add_edge(E.START, "x")
            app2 = _Sync(g.compile(checkpointer=saver))
            outs = [app2.invoke(None, cfg), app2.invoke({"a": "A"}, cfg)]
            fork = app2.update_state(old_hist[5].config, {"c": ["fork"]}, as_node="x")
            outs.append(app2.invoke(None, fork))
            return outs, _everything(app2, cfg), _everything(app, cfg)

    differential(scenario)


@pytest.mark.parametrize("durability", ["exit", "async", "sync"])
@pytest.mark.parametrize("kind", KINDS)
def test_durability_modes_with_a_growing_and_edited_list(differential, tmp_path, request, kind, durability):
    """Turns of the plan loop run with durability exit / async / sync (the list grown,
    reversed, an earlier item edited, grown again; under async, made shorter, overwritten
    instead): history and every checkpoint by id."""

    def scenario(E):
        with _saver(E, kind, tmp_path, f"dur-{durability}", request) as saver:
            app, cfg = _work_app(E, saver), _thread()
            if durability == "async":  # no edit in place: it would race the background save
                plan = ["grow"] * 6 + ["shorter", "grow", "overwrite-log", "grow", "shorter", "grow", "grow"]
            else:
                plan = ["grow"] * 6 + ["reverse", "grow", "edit-first", "grow", "del0", "grow", "grow"]
            outs = [app.invoke({"items": [], "log": [], "plan": plan[:5], "i": 0}, cfg, durability=durability)]
            for n in range(6, len(plan) + 1):
                outs.append(app.invoke({"plan": plan[:n]}, cfg, durability=durability))
            outs.append(app.invoke({"plan": plan + ["grow"] * 30}, cfg, durability=durability))
            return outs, _everything(app, cfg)

    differential(scenario)


# --- values stored once by content -------------------------------------------------------


class Twin(TypedDict, total=False):
    a: Any
    b: Any
    small: str


@pytest.mark.parametrize("kind", KINDS)
def test_identical_large_values_in_two_channels_and_threads_survive_deleting_one(differential, tmp_path,
                                                                                  request, kind):
    """The same large value (string, list, dict) in two channels of two threads; one
    thread deleted, then rewritten: the other thread's checkpoints read back whole."""

    def scenario(E):
        big = _text("shared", 5000)
        blist = [_item(k) for k in range(12)]

        def n1(s):
            return {"a": big, "b": big, "small": "s"}

        def n2(s):
            return {"a": list(blist), "b": {"v": list(blist)}}

        with _saver(E, kind, tmp_path, "twin", request) as saver:
            g = E.StateGraph(Twin)
            g.add_node("n1", n1)
            g.add_node("n2", n2)
            g.add_edge(E.START, "n1")
            g.add_edge("n1", "n2")
            app = _Sync(g.compile(checkpointer=saver))
            t1, t2 = _thread("keep"), _thread("gone")
            app.invoke({"a": big}, t1)
            app.invoke({"a": big}, t2)
            saver.delete_thread(t2["configurable"]["thread_id"])
            kept = _everything(app, t1)
            gone = app.get_state(t2), list(app.get_state_history(t2))
            app.invoke({"b": big}, t2)
            app.invoke({"b": big + "!"}, t1)
            saver.delete_thread(t2["configurable"]["thread_id"])
            return kept, gone, _everything(app, t1), _everything(app, t2)

    differential(scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_a_deleted_thread_whose_lists_were_joined_is_rebuilt_from_scratch(differential, tmp_path, request,
                                                                          kind):
    """Two threads grow the same items; one is deleted mid-way and the same thread id run
    again from the start (a "reset chat" button), then both grow on."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "reset", request) as saver:
            app = _work_app(E, saver)
            c1, c2 = _thread("a"), _thread("b")
            for c in (c1, c2):
                app.invoke({"items": [], "log": [], "plan": ["grow"] * 6, "i": 0}, c)
            saver.delete_thread(c1["configurable"]["thread_id"])
            app.invoke({"items": [_item(1)], "log": [], "plan": ["grow"] * 6, "i": 0}, c1)
            app.invoke({"plan": ["grow"] * 9}, c1)
            app.invoke({"plan": ["grow"] * 9}, c2)
            return _everything(app, c1), _everything(app, c2)

    differential(scenario)


# --- subgraph namespaces -------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_subgraph_growing_its_own_list_across_an_interrupt(differential, tmp_path, request, kind):
    """A parent whose subgraph node loops, growing and editing its own list over several
    steps, pauses at an interrupt, resumes, and runs again in a later turn: the parent's
    history, state with subgraphs, and the subgraph's own checkpoints."""

    class Sub(TypedDict, total=False):
        items: list
        log: Annotated[list, operator.add]
        plan: list
        i: int
        note: str
        answer: str

    def scenario(E):
        def work(s):
            i = s.get("i", 0)
            out = _apply(E, s["plan"][i], s, 300 + i)
            out["i"] = i + 1
            return out

        def ask(s):
            return {"answer": E.interrupt({"size": len(s["items"])})}

        def route(s):
            return "work" if s["i"] < len(s["plan"]) else "ask"

        sg = E.StateGraph(Sub)
        sg.add_node("work", work)
        sg.add_node("ask", ask)
        sg.add_edge(E.START, "work")
        sg.add_conditional_edges("work", route, ["work", "ask"])
        sub = sg.compile()

        def after(s):
            return {"log": [_text("after")], "items": s["items"] + [_item(999)]}

        g = E.StateGraph(Sub)
        g.add_node("sub", sub)
        g.add_node("after", after)
        g.add_edge(E.START, "sub")
        g.add_edge("sub", "after")
        with _saver(E, kind, tmp_path, "sub", request) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            plan = ["grow"] * 5 + ["edit-first", "grow", "reverse", "grow"]
            a = app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, cfg)
            paused = app.get_state(cfg, subgraphs=True)
            sub_hist = _settled(list(app.get_state_history(paused.tasks[0].state.config)))
            b = app.invoke(E.Command(resume="yes"), cfg)
            c = app.invoke({"plan": plan + ["grow", "del0", "grow"], "i": 0}, cfg)
            paused2 = app.get_state(cfg, subgraphs=True)
            sub_hist2 = _settled(list(app.get_state_history(paused2.tasks[0].state.config)))
            d = app.invoke(E.Command(resume="again"), cfg)
            return a, paused, sub_hist, b, c, paused2, sub_hist2, d, _everything(app, cfg)

    differential(scenario)


# --- parallel writers to one list ---------------------------------------------------------


class Fan(TypedDict, total=False):
    results: Annotated[list, operator.add]
    round: int


@pytest.mark.parametrize("kind", ["memory", pytest.param("sqlite", marks=UNRETURNED_EDIT), "postgres",
                                  "sqlite-vs-memory"])
def test_send_fan_out_rounds_append_to_one_list_and_edit_it(differential, tmp_path, request, kind):
    """Map-reduce rounds: each round Sends four workers that append to one list; the
    reducer node edits an earlier result in place every other round."""

    def scenario(E):
        def plan(s):
            return {"round": s.get("round", 0) + 1}

        def work(arg):
            return {"results": [{"r": arg["r"], "w": arg["w"], "text": _text(f"r{arg['r']}w{arg['w']}", 200)}]}

        def reduce_(s):
            if s["round"] % 2 == 0 and s["results"]:
                s["results"][0]["text"] = f"edited in round {s['round']}"
            return {}

        g = E.StateGraph(Fan)
        g.add_node("plan", plan)
        g.add_node("work", work)
        g.add_node("reduce", reduce_)
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", lambda s: [E.Send("work", {"r": s["round"], "w": w}) for w in range(4)],
                                ["work"])
        g.add_edge("work", "reduce")
        g.add_conditional_edges("reduce", lambda s: "plan" if s["round"] < 8 else E.END, ["plan", E.END])
        with (_versioned(E, tmp_path, "xfan") if kind == "sqlite-vs-memory"
              else _saver(E, kind, tmp_path, "fan", request)) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            out = app.invoke({"results": []}, cfg)
            return out, _everything(app, cfg)

    differential(scenario)


# --- history snapshots are independent objects ---------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_values_of_one_history_snapshot_mutated_leave_the_others_alone(differential, tmp_path, request, kind):
    """A notebook walks the history and mutates each snapshot's list (appends, edits the
    first item): the other snapshots, and a second walk, show what was saved."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "snap", request) as saver:
            app, cfg = _work_app(E, saver), _thread()
            app.invoke({"items": [], "log": [], "plan": ["grow"] * 10, "i": 0}, cfg)
            hist = list(app.get_state_history(cfg))
            seen = []
            for s in hist:
                items = s.values.get("items")
                if items:
                    items.append("caller")
                    items[0]["text"] = "caller edit"
                seen.append(s.values)
            out = app.invoke({"plan": ["grow"] * 12}, cfg)
            return seen, out, _everything(app, cfg)

    differential(scenario)


# --- lgnb's SqliteSaver against LangGraph's InMemorySaver ------------------------------------


@contextmanager
def _versioned(E, tmp_path, name):
    """LangGraph's InMemorySaver (stores each channel by version, as lgnb's SqliteSaver
    does) for LangGraph; lgnb's SqliteSaver for lgnb."""
    if E.root == "lgnb":
        with _saver(E, "sqlite", tmp_path, name) as s:
            yield s
    else:
        yield E.InMemorySaver()


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_lgnb_sqlite_appends_match_langgraph_in_memory_for_every_edit(differential, tmp_path, plan):
    """The plan loop of `test_a_list_edited_in_place_mid_run_...`, lgnb's SqliteSaver against
    LangGraph's InMemorySaver (which, like it, saves a channel only when its version
    changes): the appends chain must rebuild exactly the value saved at each version."""

    def scenario(E):
        with _versioned(E, tmp_path, "xplan") as saver:
            app, cfg = _work_app(E, saver), _thread()
            out = app.invoke({"items": [], "log": [], "plan": PLANS[plan], "i": 0}, cfg)
            return out, app.get_state(cfg), _everything_settled(app, cfg)

    differential(scenario)


# --- branches written in turn, saver instances in turn -------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_two_branches_of_one_thread_grown_in_turn(differential, tmp_path, request, kind):
    """A fork of turn 4 and the main line, each given a turn in turn (a user comparing two
    answers): the list of each branch grows on a different base at every save; every
    checkpoint of both branches by history and by id, and pages of `before`/`limit`."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "branches", request) as saver:
            app, cfg = _work_app(E, saver), _thread()
            app.invoke({"items": [], "log": [], "plan": ["grow"] * 4, "i": 0}, cfg)
            for n in range(5, 8):
                app.invoke({"plan": ["grow"] * n}, cfg)
            turns = [s for s in reversed(list(app.get_state_history(cfg))) if not s.next]
            tip = app.update_state(turns[1].config, {"log": [_text("fork")]}, as_node="work")
            main = app.get_state(cfg).config
            outs = []
            for n in range(8, 14):
                op = "edit-first" if n == 11 else "grow"
                tip = app.update_state(tip, {"plan": ["grow"] * (n - 1) + [op]}, as_node="work")
                outs.append(app.invoke(None, {**tip, **R}))
                tip = app.get_state(tip).config
                main = app.update_state(main, {"plan": ["grow"] * (n - 1) + ["grow"]}, as_node="work")
                outs.append(app.invoke(None, {**main, **R}))
                main = app.get_state(main).config
            # turn 11 edits the first item in place: results as `_settled` says
            hist, states = _everything_settled(app, cfg)
            pages = [_settled(list(app.get_state_history(cfg, before=s.config, limit=5))) for s in hist[::6]]
            return outs, hist, states, pages, app.get_state(tip), app.get_state(main)

    differential(scenario)


def test_two_sqlite_saver_instances_take_turns_on_one_thread(differential, tmp_path):
    """Two saver instances on one file (two notebooks, or a server and a notebook) run
    turns of one thread in turn; one deletes the thread and starts it again; the other
    continues it: every checkpoint read back by both."""

    def scenario(E):
        cfg = _thread()
        with _saver(E, "sqlite", tmp_path, "pair") as s1, _saver(E, "sqlite", tmp_path, "pair") as s2:
            a, b = _work_app(E, s1), _work_app(E, s2)
            a.invoke({"items": [], "log": [], "plan": ["grow"] * 5, "i": 0}, cfg)
            for n in range(6, 14):
                app = a if n % 2 else b
                app.invoke({"plan": ["grow"] * (n - 1) + (["reverse"] if n == 9 else ["grow"])}, cfg)
            first = _everything(a, cfg), _everything(b, cfg)
            s2.delete_thread(cfg["configurable"]["thread_id"])
            b.invoke({"items": [_item(7)], "log": [], "plan": ["grow"] * 3, "i": 0}, cfg)
            a.invoke({"plan": ["grow"] * 6}, cfg)
            b.invoke({"plan": ["grow"] * 8}, cfg)
            a.invoke({"plan": ["grow"] * 10}, cfg)
            return first, _everything(a, cfg), _everything(b, cfg)

    differential(scenario)


# --- a persistent subgraph namespace ---------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_checkpointer_true_subgraph_grows_its_list_across_parent_turns(differential, tmp_path, request,
                                                                         kind):
    """A subgraph compiled with checkpointer=True keeps its own thread of state under one
    namespace across the parent's turns (an agent with memory inside a supervisor); its
    list grows and is edited in place from turn to turn."""

    class Inner(TypedDict, total=False):
        items: list
        n: int

    class Outer(TypedDict, total=False):
        n: int
        seen: Annotated[list, operator.add]

    def scenario(E):
        def grow(s):
            items = s.get("items") or []
            n = s.get("n", 0)
            if n == 5:
                items[0]["text"] = "edited inside the subgraph"
                return {"items": items + [_item(n)], "n": n + 1}
            if n == 7:
                items.reverse()
                return {"items": items, "n": n + 1}
            return {"items": items + [_item(n)], "n": n + 1}

        sg = E.StateGraph(Inner)
        sg.add_node("grow", grow)
        sg.add_edge(E.START, "grow")
        sub = sg.compile(checkpointer=True)

        def call(s):
            out = sub.invoke({"n": s["n"]})
            return {"seen": [[d["n"] for d in out["items"]]]}

        g = E.StateGraph(Outer)
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        with _saver(E, kind, tmp_path, "inner", request) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            outs = [app.invoke({"n": n}, cfg) for n in range(10)]
            st = app.get_state(cfg, subgraphs=True)
            return outs, st, _everything(app, cfg)

    differential(scenario)


# --- large items: appended tails stored by content, shared by threads ------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_large_item_appended_in_two_threads_then_one_deleted(differential, tmp_path, request, kind):
    """Two threads append the same 20 KB document at every step (identical appended bytes,
    stored once by content), and their lists exceed 128 KB (longer chains); one thread
    is deleted: the other reads every checkpoint back, grows on and is reopened."""

    class Docs(TypedDict, total=False):
        docs: Annotated[list, operator.add]
        i: int

    def scenario(E):
        doc = _text("document", 20000)

        def step(s):
            i = s.get("i", 0)
            return {"docs": [doc] if i % 3 else [doc, {"i": i, "doc": doc}], "i": i + 1}

        g = E.StateGraph(Docs)
        g.add_node("step", step)
        g.add_edge(E.START, "step")
        g.add_conditional_edges("step", lambda s: "step" if s["i"] % 12 else E.END, ["step", E.END])
        with _saver(E, kind, tmp_path, "docs", request) as saver:
            app = _Sync(g.compile(checkpointer=saver))
            c1, c2 = _thread("keep"), _thread("gone")
            for turn in range(3):  # steps 1-11, 13-23, 25-35 (a turn ends at a multiple of 12)
                app.invoke({"i": 12 * turn + 1}, c1)
                app.invoke({"i": 12 * turn + 1}, c2)
            saver.delete_thread(c2["configurable"]["thread_id"])
            kept = [[len(s.values.get("docs", [])) for s in app.get_state_history(c1)],
                    [s.values == app.get_state(s.config).values for s in app.get_state_history(c1)]]
            app.invoke({"i": 37}, c1)
            hist = list(app.get_state_history(c1))
            return (kept, [len(s.values.get("docs", [])) for s in hist], hist[0].values, hist[-3].values,
                    hist[len(hist) // 2].values, list(app.get_state_history(c2)))

    differential(scenario)


# --- async savers ----------------------------------------------------------------------------


def _async_saver(E, kind, tmp_path, name, request=None):
    if kind == "async_postgres":
        url = request.getfixturevalue("postgres_url")
        from contextlib import asynccontextmanager

        if E.root == "lgnb":
            from lgnb.checkpoint.postgres.aio import AsyncPostgresSaver
        else:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        @asynccontextmanager
        async def pg():
            async with AsyncPostgresSaver.from_conn_string(url) as s:
                await s.setup()
                yield s

        return pg()
    if kind == "memory":
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def mem():
            yield E.InMemorySaver()

        return mem()
    if E.root == "lgnb":
        from lgnb.checkpoint.sqlite.aio import AsyncSqliteSaver
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    return AsyncSqliteSaver.from_conn_string(_path(E, tmp_path, name))


@pytest.mark.parametrize("durability", ["async", "sync", "exit"])
@pytest.mark.parametrize("kind", ["memory", "async_sqlite", "async_postgres"])
async def test_async_chat_turns_and_a_fork_on_the_async_savers(differential, tmp_path, request, kind, durability):
    """The chatbot run with `ainvoke` on each engine's async saver: turns (one removing a
    message, one replacing one by id), a fork of turn 3 with `aupdate_state(as_node=)`,
    and the whole history read with `aget_state_history` and `aget_state` by id."""

    def scenario(E):
        async def run():
            from langchain_core.messages import AIMessage

            cmds = ["", "", "", "", "replace-by-id", "", "remove", "", ""]
            async with _async_saver(E, kind, tmp_path, f"achat-{durability}", request) as saver:
                app, cfg = _chat_app(E, saver)._app, _thread()
                outs = [await app.ainvoke({"messages": [_human(t)], "cmd": c}, cfg, durability=durability)
                        for t, c in enumerate(cmds)]
                turns = [s async for s in app.aget_state_history(cfg) if not s.next]
                fork = await app.aupdate_state(turns[-4].config, {"messages": [AIMessage(content=_text("f"), id="f1")]},
                                               as_node="bot")
                outs.append(await app.ainvoke({"messages": [_human(40)]}, fork, durability=durability))
                outs.append(await app.ainvoke({"messages": [_human(41)]}, cfg, durability=durability))
                hist = [s async for s in app.aget_state_history(cfg)]
                states = [await app.aget_state(s.config) for s in hist]
                return outs, hist, states

        return run()

    differential(scenario)


# --- items whose classes change data when loaded; messages in a plain list ------------------


class Stamped(BaseModel):
    """A pydantic item whose validator changes what it loads (counts its loads)."""

    text: str
    loads: int = 0

    @field_validator("loads", mode="before")
    @classmethod
    def _count(cls, v):
        return int(v) + 1


@dataclasses.dataclass
class Note:
    """A dataclass item whose __post_init__ changes its data (normalizes the title)."""

    title: str
    body: str

    def __post_init__(self):
        self.title = self.title.strip().upper()


class Typed(TypedDict, total=False):
    stamped: list[Stamped]
    notes: list[Note]
    n: int


@pytest.mark.parametrize("kind", ["memory", pytest.param("sqlite", marks=pytest.mark.xfail(_LGNB, strict=True, reason=(
    "LangGraph's SqliteSaver serializes every channel again at every checkpoint (a turn's input checkpoint "
    "too), so a value whose class changes data when loaded is saved changed once more per turn; lgnb's "
    "SqliteSaver keeps the bytes of the channel's version"))), "postgres", "sqlite-vs-memory"])
def test_items_whose_classes_change_data_when_loaded_grow_over_turns(differential, tmp_path, request, kind):
    """Lists of a pydantic model whose validator changes data on load and of a dataclass
    whose __post_init__ does, grown turn after turn (each turn reads them back), one item
    edited in place midway: every checkpoint as LangGraph's saver reads it."""

    def scenario(E):
        def grow(s):
            n = s.get("n", 0)
            stamped, notes = s.get("stamped") or [], s.get("notes") or []
            if n == 5:
                stamped[0].text = "edited"
                notes[1].body = "edited body"
            return {"stamped": stamped + [Stamped(text=_text(f"s{n}"))],
                    "notes": notes + [Note(title=f"  note {n} ", body=_text(f"n{n}"))], "n": n + 1}

        g = E.StateGraph(Typed)
        g.add_node("grow", grow)
        g.add_edge(E.START, "grow")
        with (_versioned(E, tmp_path, "xtyped") if kind == "sqlite-vs-memory"
              else _saver(E, kind, tmp_path, "typed", request)) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            outs = [app.invoke({"n": 0} if t == 0 else {}, cfg) for t in range(9)]
            return outs, _everything(app, cfg)

    differential(scenario)


class Msgs(TypedDict, total=False):
    msgs: list  # a plain list of messages, no reducer
    n: int


@pytest.mark.parametrize("kind", KINDS)
def test_messages_in_a_plain_list_edited_in_place_and_returned(differential, tmp_path, request, kind):
    """A hand-rolled agent keeping its messages in a plain list it appends to and returns:
    midway it edits an earlier AIMessage's tool call arguments, a content block of a
    multimodal message, and response_metadata, in place, and returns the same list."""

    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        def agent(s):
            msgs, n = s.get("msgs") or [], s.get("n", 0)
            if n == 0:
                msgs.append(HumanMessage(content=[{"type": "text", "text": _text("block")}], id="h0"))
            call = {"name": "search", "args": {"q": f"q{n}", "page": n}, "id": f"call{n}", "type": "tool_call"}
            msgs.append(AIMessage(content=_text(f"ai{n}"), tool_calls=[call], id=f"ai{n}",
                                  response_metadata={"tokens": n}))
            msgs.append(ToolMessage(content=_text(f"tool{n}"), tool_call_id=f"call{n}", id=f"tool{n}"))
            if n == 4:
                msgs[1].tool_calls[0]["args"]["q"] = "rewritten"
            if n == 6:
                msgs[0].content[0]["text"] = "block edited"
            if n == 7:
                msgs[3].response_metadata["tokens"] = 999
            return {"msgs": msgs, "n": n + 1}

        g = E.StateGraph(Msgs)
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: "agent" if s["n"] % 5 else E.END, ["agent", E.END])
        with _saver(E, kind, tmp_path, "msgs", request) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            outs = [app.invoke({"n": 0}, cfg), app.invoke({"n": 1 + app.get_state(cfg).values["n"]}, cfg)]
            return outs, _everything_settled(app, cfg)  # the returned list grows in place

    differential(scenario)


# --- update_state with values read back, bulk updates ---------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_update_state_with_a_list_read_back_edited_and_grown(differential, tmp_path, request, kind):
    """A reviewer reads `get_state`, edits an item of the list in place and appends one, and
    saves it with `update_state(as_node=...)`; then with the list of an old checkpoint
    reversed; then `bulk_update_state` grows it twice in two supersteps; then a run."""

    def scenario(E):
        with _saver(E, kind, tmp_path, "review", request) as saver:
            app, cfg = _work_app(E, saver), _thread()
            app.invoke({"items": [], "log": [], "plan": ["grow"] * 6, "i": 0}, cfg)
            st = app.get_state(cfg)
            items = st.values["items"]
            items[2]["text"] = "reviewed"
            items.append(_item(700))
            app.update_state(cfg, {"items": items}, as_node="work")
            old = [s for s in app.get_state_history(cfg)][4]
            back = old.values["items"]
            back.reverse()
            app.update_state(cfg, {"items": back + [_item(701)]}, as_node="work")
            cur = app.get_state(cfg).values["items"]
            app.bulk_update_state(cfg, [[E.types.StateUpdate({"items": cur + [_item(702)]}, "work")],
                                        [E.types.StateUpdate({"items": cur + [_item(702), _item(703)]}, "work")]])
            out = app.invoke({"plan": ["grow"] * 9}, cfg)
            return out, _everything(app, cfg)

    differential(scenario)


# --- human in the loop: interrupts inside a growing loop -----------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_interrupts_in_a_loop_resumed_with_edits(differential, tmp_path, request, kind):
    """A drafting loop that pauses for approval at each step (interrupt) and grows its list
    with the answer; one resume edits an earlier item in place inside the node after the
    interrupt returns, one replays an earlier pause with a different answer."""

    def scenario(E):
        def draft(s):
            items = s.get("items") or []
            answer = E.interrupt({"have": len(items)})
            if answer == "edit":
                items[0]["text"] = "edited after approval"
            return {"items": items + [_item(len(items))], "log": [str(answer)], "i": s.get("i", 0) + 1}

        g = E.StateGraph(Work)
        g.add_node("draft", draft)
        g.add_edge(E.START, "draft")
        g.add_conditional_edges("draft", lambda s: "draft" if s["i"] < 9 else E.END, ["draft", E.END])
        with _saver(E, kind, tmp_path, "hitl", request) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            outs = [app.invoke({"items": [], "log": [], "i": 0}, cfg)]
            for k in range(9):
                outs.append(app.invoke(E.Command(resume="edit" if k == 5 else f"ok{k}"), cfg))
            pauses = [s for s in app.get_state_history(cfg) if s.next == ("draft",) and s.tasks and s.tasks[0].interrupts]
            outs.append(app.invoke(E.Command(resume="again"), pauses[3].config))
            return outs, _everything(app, cfg)

    differential(scenario)


# --- threads run at once on one saver ----------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_four_threads_run_at_once_on_one_saver(differential, tmp_path, request, kind):
    """A server handling four conversations at once on one saver (two worker threads):
    each grows its own list, edits it in place and forks; each thread's history is what
    it would be alone."""

    def scenario(E):
        from concurrent.futures import ThreadPoolExecutor

        plan = ["grow"] * 5 + ["edit-first", "grow", "reverse", "grow", "grow", "del0", "grow"] + ["grow"] * 4

        with _saver(E, kind, tmp_path, "par", request) as saver:
            app = _work_app(E, saver)

            def one(name):
                cfg = _thread(name)
                app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, cfg)
                old = next(s for s in app.get_state_history(cfg) if s.values.get("i") == 9)
                fork = app.update_state(old.config, {"plan": plan[:9] + ["grow", "sort", "grow"]}, as_node="work")
                app.invoke(None, {**fork, **R})
                app.invoke({"plan": plan + ["grow"] * 3}, cfg)
                return cfg

            with ThreadPoolExecutor(2) as ex:
                cfgs = list(ex.map(one, ["a", "b", "c", "d"]))
            return [_everything_settled(app, c) for c in cfgs]

    differential(scenario)


# --- a parallel sibling edits the list another node just returned -----------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_sibling_edits_items_of_the_list_another_node_returned(differential, tmp_path, request, kind):
    """Two parallel nodes each turn: `writer` returns the grown list (its write saved as soon
    as it finishes), `fixer` waits for it and a little more, then edits an earlier item in
    place (the same object the returned list holds) without returning the list. The
    checkpoint holds the list as the step ended, edit included; the writer's task result
    in the history shows its write as saved when it finished."""

    def scenario(E):
        import threading

        done = threading.Event()

        def writer(s):
            out = {"items": (s.get("items") or []) + [_item(s.get("i", 0))]}
            done.set()
            return out

        def fixer(s):
            done.wait(2)
            done.clear()
            time.sleep(0.2)  # the writer's write is saved by then, on both engines
            i = s.get("i", 0)
            if i in (4, 6) and s.get("items"):
                s["items"][0]["text"] = f"fixed at {i}"
            return {"i": i + 1}

        g = E.StateGraph(Work)
        g.add_node("writer", writer)
        g.add_node("fixer", fixer)
        g.add_edge(E.START, "writer")
        g.add_edge(E.START, "fixer")
        with _saver(E, kind, tmp_path, "sibling", request) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            outs = [app.invoke({"i": 0} if t == 0 else {}, cfg) for t in range(9)]
            return outs, _everything(app, cfg)

    differential(scenario)


# --- long histories read in pages, filtered ----------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_long_history_read_in_pages_and_filtered(differential, tmp_path, request, kind):
    """A 90-step run with a fork at step 30 and a second run: `get_state_history` with
    limits around its page sizes (10, 64), `before` at many checkpoints of both branches,
    and metadata filters (source, step), as a history browser pages through a thread."""

    def scenario(E):
        plan = ["edit-first" if k % 29 == 28 else "grow" for k in range(90)]
        with _saver(E, kind, tmp_path, "pages", request) as saver:
            app, cfg = _work_app(E, saver), _thread()
            app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, cfg)
            old = next(s for s in app.get_state_history(cfg) if s.values.get("i") == 30)
            fork = app.update_state(old.config, {"plan": plan[:30] + ["grow"] * 5}, as_node="work")
            app.invoke(None, {**fork, **R})
            hist = list(app.get_state_history(cfg))
            out = [len(hist)]
            for limit in (1, 9, 10, 11, 63, 64, 65, 75):
                out.append([s.values.get("i") for s in app.get_state_history(cfg, limit=limit)])
            for s in hist[::9]:
                page = list(app.get_state_history(cfg, before=s.config, limit=12))
                out.append((s.values.get("i"), [p.values.get("i") for p in page], _settled(page[-1:])))
            out.append([s.values.get("i") for s in app.get_state_history(cfg, filter={"source": "update"})])
            out.append(_settled(list(app.get_state_history(cfg, filter={"source": "loop", "step": 40}))))
            out.append([s.values for s in app.get_state_history(cfg, before=hist[20].config, limit=2,
                                                                filter={"source": "loop"})])
            return out

    differential(scenario)


# --- a long conversation of large messages (chains longer than 32) --------------------------


def _digest_msgs(msgs):
    import hashlib

    return [(type(m).__name__, m.id, m.name, hashlib.sha1(repr((m.content, m.additional_kwargs)).encode()).hexdigest())
            for m in msgs]


def _digest_history(app, cfg):
    return [(s.metadata["source"], s.metadata["step"], s.next, _digest_msgs(s.values.get("messages", [])),
             s.values.get("cmd"), (s.parent_config or {}).get("configurable", {}).get("checkpoint_id") is None)
            for s in app.get_state_history(cfg)]


@pytest.mark.parametrize("kind", KINDS + ["sqlite-reopened"])
def test_a_long_conversation_of_large_messages_forked_and_edited(differential, tmp_path, request, kind):
    """70 turns of 2 KB messages (a 280 KB conversation: chains past 32 links), an
    earlier message edited in place at turn 30, one removed at turn 45; a fork at turn
    20 run 15 turns; every checkpoint digested (types, ids, contents), by history and by
    id, the SQLite file also read back by a new saver instance."""

    def scenario(E):
        from langchain_core.messages import HumanMessage

        def big_human(t):
            return HumanMessage(content=_text(f"human{t}", 2000), id=f"h-{t}")

        cmds = {30: "edit-silent", 45: "remove"}
        name = "longchat"
        with _saver(E, "sqlite" if kind == "sqlite-reopened" else kind, tmp_path, name, request) as saver:
            app, cfg = _chat_app(E, saver), _thread()
            for t in range(70):
                app.invoke({"messages": [big_human(t)], "cmd": cmds.get(t, "")}, cfg)
            turns = [s for s in reversed(list(app.get_state_history(cfg))) if not s.next]
            for t in range(100, 115):  # from turn 20, then from the fork's newest checkpoint (the thread's)
                app.invoke({"messages": [big_human(t)], "cmd": "edit-return" if t == 107 else ""},
                           turns[20].config if t == 100 else cfg)
            first = _digest_history(app, cfg)
            by_id = [_digest_msgs(app.get_state(s.config).values.get("messages", []))
                     for s in list(app.get_state_history(cfg))[::5]]
        if kind != "sqlite-reopened":
            return first, by_id
        with _saver(E, "sqlite", tmp_path, name) as saver:
            app = _chat_app(E, saver)
            return first, by_id, _digest_history(app, cfg)

    differential(scenario)


# --- two subgraph runs in parallel, each pausing ----------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_parallel_subgraph_runs_grow_their_lists_and_pause(differential, tmp_path, request, kind):
    """A supervisor Sends two research tasks to one subgraph (two namespaces at once); each
    loops growing its own notes (one edits an earlier note in place), pauses for review,
    and is resumed by interrupt id; the parent's history, the state with subgraphs and
    each subgraph's own history, before and after."""

    class Research(TypedDict, total=False):
        topic: str
        notes: list
        k: int
        verdict: str

    class Boss(TypedDict, total=False):
        topics: list
        reports: Annotated[list, operator.add]

    def scenario(E):
        def take_note(s):
            k = s.get("k", 0)
            notes = s.get("notes") or []
            if k == 5 and s["topic"] == "owls":
                notes[0]["text"] = "owls: corrected"
                return {"notes": notes + [_item(k)], "k": k + 1}
            return {"notes": notes + [_item(k)], "k": k + 1}

        def review(s):
            return {"verdict": E.interrupt({"topic": s["topic"], "notes": len(s["notes"])})}

        sg = E.StateGraph(Research)
        sg.add_node("take_note", take_note)
        sg.add_node("review", review)
        sg.add_edge(E.START, "take_note")
        sg.add_conditional_edges("take_note", lambda s: "take_note" if s["k"] < 8 else "review",
                                 ["take_note", "review"])
        sub = sg.compile()

        def research(s):
            out = sub.invoke({"topic": s["topic"]})
            return {"reports": [(s["topic"], out["verdict"], len(out["notes"]), out["notes"][0]["text"][:20])]}

        g = E.StateGraph(Boss)
        g.add_node("plan", lambda s: {})
        g.add_node("research", research)
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", lambda s: [E.Send("research", {"topic": t}) for t in s["topics"]],
                                ["research"])
        with _saver(E, kind, tmp_path, "par-sub", request) as saver:
            app, cfg = _Sync(g.compile(checkpointer=saver)), _thread()
            first = app.invoke({"topics": ["cats", "owls"]}, cfg)
            # (listed in the order the two tasks paused: a race on either engine)
            first["__interrupt__"] = sorted(first["__interrupt__"], key=lambda i: i.value["topic"])
            st = app.get_state(cfg, subgraphs=True)
            subs = [_settled(list(app.get_state_history(t.state.config))) for t in st.tasks]
            ids = {i.value["topic"]: i.id for t in st.tasks for i in t.interrupts}
            done = app.invoke(E.Command(resume={ids["cats"]: "ok", ids["owls"]: "fine"}), cfg)
            return first, st, subs, done, _everything(app, cfg)

    differential(scenario)


@pytest.mark.parametrize("durability", ["async", "sync"])
@pytest.mark.parametrize("kind", ["memory", "async_sqlite", "async_postgres"])
async def test_async_long_loop_fork_and_second_turn_on_the_async_savers(differential, tmp_path, request, kind,
                                                                        durability):
    """The plan loop run with `ainvoke` for 45 steps (grown, made shorter, Overwrite-n: no
    edit in place, so background saves cannot race), a fork at step 20 with
    `aupdate_state`, and a second turn: every checkpoint by `aget_state_history` and by id."""

    def scenario(E):
        async def run():
            plan = ["shorter" if k % 19 == 18 else "overwrite-log" if k % 23 == 22 else "grow" for k in range(45)]
            async with _async_saver(E, kind, tmp_path, f"aloop-{durability}", request) as saver:
                app, cfg = _work_app(E, saver)._app, _thread()
                out = await app.ainvoke({"items": [], "log": [], "plan": plan, "i": 0}, cfg, durability=durability)
                old = [s async for s in app.aget_state_history(cfg) if s.values.get("i") == 20][0]
                fork = await app.aupdate_state(old.config, {"plan": plan[:20] + ["grow"] * 6}, as_node="work")
                out2 = await app.ainvoke(None, {**fork, **R}, durability=durability)
                out3 = await app.ainvoke({"plan": plan[:20] + ["grow"] * 9}, cfg, durability=durability)
                hist = [s async for s in app.aget_state_history(cfg)]
                states = [await app.aget_state(s.config) for s in hist]
                return out, out2, out3, hist, states

        return run()

    differential(scenario)


# --- one saver, two graphs (different schemas) on one thread, a reset ------------------------


@pytest.mark.parametrize("kind", ["memory", pytest.param("sqlite", marks=NOT_IN_SCHEMA), "postgres",
                                  "sqlite-vs-memory"])
def test_two_graphs_share_a_thread_and_a_reset_reuses_the_last_output(differential, tmp_path, request, kind):
    """Two graphs compiled on one saver (a typed one: pydantic items; a plain one) take turns
    on one thread; the thread is deleted and started again from the last output's list
    plus one item (a "reset, keep the notes" button), then both go on."""

    class Mixed(TypedDict, total=False):
        items: list
        stamped: list[Stamped]
        n: int

    def scenario(E):
        def typed(s):
            n = s.get("n", 0)
            return {"items": (s.get("items") or []) + [_item(n)],
                    "stamped": (s.get("stamped") or []) + [Stamped(text=_text(f"s{n}"))], "n": n + 1}

        def plain(s):
            n = s.get("n", 0)
            return {"items": (s.get("items") or []) + [_item(100 + n)], "n": n + 1}

        with (_versioned(E, tmp_path, "xtwo-graphs") if kind == "sqlite-vs-memory"
              else _saver(E, kind, tmp_path, "two-graphs", request)) as saver:
            ga = E.StateGraph(Mixed)
            ga.add_node("typed", typed)
            ga.add_edge(E.START, "typed")
            gb = E.StateGraph(Work)
            gb.add_node("plain", plain)
            gb.add_edge(E.START, "plain")
            a, b = _Sync(ga.compile(checkpointer=saver)), _Sync(gb.compile(checkpointer=saver))
            cfg = _thread()
            outs = []
            for t in range(8):
                outs.append((a if t % 3 else b).invoke({}, cfg))
            last = outs[-1]
            saver.delete_thread(cfg["configurable"]["thread_id"])
            outs.append(a.invoke({"items": last["items"] + [_item(999)], "n": 50}, cfg))
            for t in range(5):
                outs.append((b if t % 2 else a).invoke({}, cfg))
            return outs, _everything(a, cfg), _everything(b, cfg)

    differential(scenario)


# --- prune: LangGraph's PostgresSaver has it; lgnb's SqliteSaver against it ----------------------


@contextmanager
def _prunable(E, kind, tmp_path, request):
    """`postgres`: each engine's PostgresSaver; `sqlite-vs-postgres`: LangGraph's PostgresSaver
    (the only LangGraph saver with `prune`) against lgnb's SqliteSaver."""
    if kind == "sqlite-vs-postgres" and E.root == "lgnb":
        with _saver(E, "sqlite", tmp_path, "prune") as s:
            yield s
    else:
        with _saver(E, "postgres", tmp_path, "prune", request) as s:
            yield s


@pytest.mark.parametrize("kind", ["postgres", "sqlite-vs-postgres"])
def test_prune_keep_latest_of_long_chains_then_the_threads_go_on(differential, tmp_path, request, kind):
    """Two threads of a 40-step loop (appended lists, version deltas), one with a fork;
    `prune(keep_latest)` of the forked one: its latest state, history and a 30-step run
    after it; the other thread untouched; then `prune(delete)` of the other."""

    def scenario(E):
        plan = ["edit-first" if k % 13 == 12 else "grow" for k in range(40)]
        with _prunable(E, kind, tmp_path, request) as saver:
            app = _work_app(E, saver)
            c1, c2 = _thread("pruned"), _thread("kept")
            app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, c1)
            app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, c2)
            old = next(s for s in app.get_state_history(c1) if s.values.get("i") == 25)
            fork = app.update_state(old.config, {"plan": plan[:25] + ["grow"] * 4}, as_node="work")
            app.invoke(None, {**fork, **R})
            before = app.get_state(c1)
            saver.prune([c1["configurable"]["thread_id"]], strategy="keep_latest")
            after = app.get_state(c1), _settled(list(app.get_state_history(c1)))
            app.invoke({"plan": plan[:29] + ["grow"] * 30}, c1)
            grown = _everything_settled(app, c1)
            other = _everything_settled(app, c2)
            saver.prune([c2["configurable"]["thread_id"]], strategy="delete")
            gone = app.get_state(c2), list(app.get_state_history(c2))
            return before, after, grown, other, gone

    differential(scenario)


@pytest.mark.parametrize("kind", ["postgres", "sqlite-vs-postgres"])
def test_a_maintenance_job_prunes_a_thread_while_its_run_goes_on(differential, tmp_path, request, kind):
    """A 45-step run whose list chain grows while a maintenance job (a second saver on the
    same database) prunes the thread to its latest checkpoint at step 20 and again at 33:
    the run's next saves cannot build on what was deleted. The result, the history and
    a later turn."""

    def scenario(E):
        plan = ["edit-first" if k % 11 == 10 else "grow" for k in range(45)]
        with _prunable(E, kind, tmp_path, request) as saver, _prunable(E, kind, tmp_path, request) as job:
            cfg = _thread()

            def work(s):
                i = s.get("i", 0)
                if i in (20, 33):
                    job.prune([cfg["configurable"]["thread_id"]], strategy="keep_latest")
                out = _apply(E, s["plan"][i], s, 100 + i)
                out["i"] = i + 1
                return out

            g = E.StateGraph(Work)
            g.add_node("work", work)
            g.add_edge(E.START, "work")
            g.add_conditional_edges("work", lambda s: "work" if s["i"] < len(s["plan"]) else E.END, ["work", E.END])
            app = _Sync(g.compile(checkpointer=saver))
            out = app.invoke({"items": [], "log": [], "plan": plan, "i": 0}, cfg)
            first = _everything_settled(app, cfg)
            out2 = app.invoke({"plan": plan + ["grow"] * 5}, cfg)
            return out, first, out2, _everything_settled(app, cfg)

    differential(scenario)
