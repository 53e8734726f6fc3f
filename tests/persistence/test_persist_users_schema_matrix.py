"""State schemas users write, crossed with the state APIs of a checkpointed thread.

Each schema (TypedDicts with and without `total=False`/`NotRequired`, reducers `operator.add`
/ `add_messages` / custom ones, a `MessagesState` subclass, a dataclass with defaults, pydantic
models with validators, nested models, `Field(default_factory=...)` and `Optional`, separate
input/output schemas, private state passed between nodes, a reducer list reset by `Overwrite`)
backs the same two-node program `a -> b`. Each operation (`invoke` and its value type,
`get_state`, `update_state` plain / `as_node` / with a `Command`, `bulk_update_state`, the
history, a fork of an old checkpoint, `stream_mode="values"/"updates"`, `interrupt()` with the
state changed before the resume, `get_state(subgraphs=True)` with a subgraph of another
schema) runs on InMemorySaver and on SQLite on a file (LangGraph's SqliteSaver under
LangGraph, lgnb's under lgnb), and every cell is compared with LangGraph. Why a matrix: each
schema suite so far checked one API at a time, and each API suite used one TypedDict.

Dataclass and pydantic states are module-level classes (a checkpoint on SQLite stores them by
import path); schemas using `add_messages` / `MessagesState` / `Overwrite` are built from the
engine namespace inside the scenario. No `from __future__ import annotations`.
"""

import operator
from dataclasses import dataclass, field
from importlib import import_module
from typing import Annotated, Optional

import pydantic
import pytest
from _diff import capture, collect
from _savers import thread
from typing_extensions import NotRequired, TypedDict

# --- module-level state classes -------------------------------------------------------------


@dataclass
class DCState:
    topic: str = "none"
    n: int = 0
    tags: list = field(default_factory=list)
    log: Annotated[list, operator.add] = field(default_factory=list)


class Meta(pydantic.BaseModel):
    score: float = 0.0
    label: str = ""


class PydState(pydantic.BaseModel):
    topic: str = "none"
    n: int = 0
    meta: Meta = Meta()
    log: Annotated[list[str], operator.add] = []

    @pydantic.field_validator("topic")
    @classmethod
    def _clean(cls, v: str) -> str:
        return v.strip().lower()


class PydFactoryState(pydantic.BaseModel):
    topic: str
    items: list[str] = pydantic.Field(default_factory=list)
    owner: Optional[str] = None
    n: int = 0


class TDTotal(TypedDict):
    topic: str
    n: int
    log: Annotated[list, operator.add]


class TDPartial(TypedDict, total=False):
    topic: str
    n: int
    log: Annotated[list, operator.add]


class TDNotRequired(TypedDict):
    topic: str
    n: NotRequired[int]
    log: NotRequired[Annotated[list, operator.add]]


def merge_dicts(old: dict, new: dict) -> dict:
    return {**(old or {}), **(new or {})}


def union(old: Optional[list], new: list) -> list:
    return sorted(set(old or []) | set(new))


class IOIn(TypedDict):
    topic: str


class IOOut(TypedDict):
    answer: str


class IOState(TypedDict, total=False):
    topic: str
    answer: str
    n: int
    log: Annotated[list, operator.add]


class PrivState(TypedDict, total=False):
    topic: str
    n: int
    log: Annotated[list, operator.add]


class Scratch(TypedDict):
    scratch: str


class SubState(TypedDict, total=False):
    q: str
    replies: Annotated[list, operator.add]


# --- the schemas -------------------------------------------------------------------------------


def _get(s, k, default=None):
    return s.get(k, default) if isinstance(s, dict) else getattr(s, k, default)


class Spec:
    """One schema: the state class, the input, nodes `a` and `b` (b gets the human's answer or
    None), a patch for `update_state`, and StateGraph kwargs."""

    def __init__(self, state, inp, a, b, patch, graph_kw=None, b_input=None):
        self.state, self.inp, self.a, self.b, self.patch = state, inp, a, b, patch
        self.graph_kw, self.b_input = graph_kw or {}, b_input


def _plain(State, patch=None):
    return Spec(
        State, {"topic": "cats", "n": 1, "log": []},
        lambda s: {"n": _get(s, "n", 0) + 1, "log": ["a"]},
        lambda s, ans: {"n": _get(s, "n", 0) * 10, "log": [f"b:{_get(s, 'topic')}:{ans}"]},
        patch or {"topic": "dogs", "log": ["human"]})


def spec(E, name):  # noqa: C901 - one table of schemas
    if name == "typeddict":
        return _plain(TDTotal)
    if name == "typeddict_total_false":
        sp = _plain(TDPartial)
        sp.inp = {"topic": "cats"}
        return sp
    if name == "typeddict_not_required":
        sp = _plain(TDNotRequired)
        sp.inp = {"topic": "cats"}
        return sp
    if name == "reducers":
        class Reduced(TypedDict):
            topic: str
            log: Annotated[list, operator.add]
            messages: Annotated[list, E.add_messages]
            seen: Annotated[list, union]
            meta: Annotated[dict, merge_dicts]

        return Spec(
            Reduced, {"topic": "cats", "log": [], "messages": [("user", "hi")], "seen": ["x"],
                      "meta": {"k": 1}},
            lambda s: {"log": ["a"], "messages": [{"role": "ai", "content": "hello", "id": "m-a"}],
                       "seen": ["a", "x"], "meta": {"a": 1}},
            lambda s, ans: {"log": [f"b:{len(s['messages'])}:{ans}"], "seen": ["b"],
                            "messages": [("ai", f"bye {ans}")], "meta": {"k": 2}},
            {"messages": [{"role": "user", "content": "edited", "id": "m-a"}], "seen": ["h"],
             "meta": {"h": True}, "log": ["human"]})
    if name == "messages_state":
        class Chat(E.MessagesState):
            summary: str
            turns: int

        return Spec(
            Chat, {"messages": [("user", "hi")], "turns": 0},
            lambda s: {"messages": [("ai", "hello")], "turns": s.get("turns", 0) + 1},
            lambda s, ans: {"messages": [("ai", f"{len(s['messages'])} so far, {ans}")],
                            "summary": f"turns={s['turns']}"},
            {"messages": [("user", "one more thing")], "summary": "edited"})
    if name == "dataclass":
        return Spec(
            DCState, {"topic": "cats"},
            lambda s: {"n": s.n + 1, "tags": [*s.tags, "a"], "log": ["a"]},
            lambda s, ans: {"n": s.n * 10, "log": [f"b:{s.topic}:{len(s.tags)}:{ans}"]},
            {"topic": "dogs", "tags": ["h"], "log": ["human"]})
    if name == "pydantic":
        return Spec(
            PydState, {"topic": "  Cats "},
            lambda s: {"n": s.n + 1, "meta": {"score": 0.5, "label": "a"}, "log": ["a"]},
            lambda s, ans: {"n": s.n * 10,
                            "log": [f"b:{s.topic}:{type(s.meta).__name__}:{s.meta.label}:{ans}"]},
            {"topic": " DOGS", "meta": {"score": 1.0, "label": "human"}, "log": ["human"]})
    if name == "pydantic_factory_optional":
        return Spec(
            PydFactoryState, {"topic": "cats"},
            lambda s: {"items": [*s.items, "a"], "n": s.n + 1},
            lambda s, ans: {"owner": f"{s.owner}->b:{ans}", "items": [*s.items, f"b{len(s.items)}"]},
            {"owner": "human", "items": ["h"]})
    if name == "input_output":
        return Spec(
            IOState, {"topic": "cats"},
            lambda s: {"n": 1, "log": ["a"]},
            lambda s, ans: {"answer": f"{s['topic']}:{s.get('n')}:{ans}", "log": ["b"]},
            {"topic": "dogs", "log": ["human"]},
            graph_kw={"input_schema": IOIn, "output_schema": IOOut})
    if name == "private":
        sp = Spec(
            PrivState, {"topic": "cats"},
            lambda s: {"scratch": f"secret of {s['topic']}"},
            lambda s, ans: {"log": [f"{s['scratch']}:{ans}"]},
            {"scratch": "edited secret"}, b_input=Scratch)
        return sp
    if name == "overwrite":
        class Ow(TypedDict):
            topic: str
            log: Annotated[list, operator.add]

        return Spec(
            Ow, {"topic": "cats", "log": ["start"]},
            lambda s: {"log": E.Overwrite(["reset-by-a"])},
            lambda s, ans: {"log": [f"b:{len(s['log'])}:{ans}"]},
            {"log": E.Overwrite(["reset-by-human"])})
    raise AssertionError(name)


SCHEMAS = ("typeddict", "typeddict_total_false", "typeddict_not_required", "reducers",
           "messages_state", "dataclass", "pydantic", "pydantic_factory_optional",
           "input_output", "private", "overwrite")


# --- the program --------------------------------------------------------------------------------


class _Saver:
    """The thread's checkpointer: InMemorySaver, or SQLite on a file (the engine's own)."""

    def __init__(self, kind, tmp_path):
        self.kind, self.tmp_path, self.stack = kind, tmp_path, []

    def __call__(self, E):
        if self.kind == "memory":
            return E.InMemorySaver()
        mod = "langgraph.checkpoint.sqlite" if E.root == "langgraph" else "lgnb.checkpoint.sqlite"
        cm = import_module(mod).SqliteSaver.from_conn_string(
            str(self.tmp_path / f"{E.root}-{len(self.stack)}.sqlite"))
        self.stack.append(cm)
        return cm.__enter__()

    def close(self):
        while self.stack:
            self.stack.pop().__exit__(None, None, None)


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    s = _Saver(request.param, tmp_path)
    yield s
    s.close()


def build(E, sp, checkpointer, *, ask=False, sub=False, **compile_kw):
    """START -> a -> b -> END on `sp`'s schema. `ask`: b asks a human first (`interrupt`).
    `sub`: b first runs a subgraph of another schema that asks the human."""
    subgraph = None
    if sub:
        def ask_sub(s):
            return {"replies": [f"{s['q']}? {E.interrupt({'q': s['q']})}"]}

        sg = E.StateGraph(SubState)
        sg.add_node("ask_sub", ask_sub)
        sg.add_edge(E.START, "ask_sub")
        subgraph = sg.compile()

    def b(s):
        ans = None
        if ask:
            ans = E.interrupt({"question": "ok?"})
        if subgraph is not None:
            ans = subgraph.invoke({"q": "sure", "replies": []})["replies"][-1]
        return sp.b(s, ans)

    g = E.StateGraph(sp.state, **sp.graph_kw)
    g.add_node("a", sp.a)
    if sp.b_input is not None:
        g.add_node("b", b, input_schema=sp.b_input)
    else:
        g.add_node("b", b)
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", E.END)
    return g.compile(checkpointer=checkpointer, **compile_kw)


def typed(v):
    return type(v).__name__, v


def snap(st):
    """What a user reads from a snapshot: the values (and their type), next, the source/step."""
    return typed(st.values), st.next, st.metadata.get("source"), st.metadata.get("step")


def history(app, cfg):
    return [snap(s) for s in app.get_state_history(cfg)]


# --- the matrix -------------------------------------------------------------------------------


@pytest.mark.parametrize("schema", SCHEMAS)
def test_invoke_returns_the_output_and_get_state_the_saved_values(differential, saver, schema):
    """`invoke` returns the output schema's dict, and `get_state().values` (type and content)
    is the full state as the nodes left it, with `next` empty."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E))
        out = app.invoke(sp.inp, cfg)
        return typed(out), snap(app.get_state(cfg))

    differential(scenario)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_update_state_while_paused_before_b_is_what_b_reads(differential, saver, schema):
    """Paused before `b`, `update_state(values)` goes through the reducers as if `a` wrote it,
    `b` still runs next, and `b` reads the patched state when the run resumes."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E), interrupt_before=["b"])
        app.invoke(sp.inp, cfg)
        res = capture(lambda: app.update_state(cfg, sp.patch))
        mid = app.get_state(cfg)
        return res == mid.config, snap(mid), typed(app.invoke(None, cfg)), snap(app.get_state(cfg))

    differential(scenario)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_update_state_as_node_decides_what_runs_next(differential, saver, schema):
    """After a finished run, `update_state(values, as_node="a")` makes `b` run again on the
    patched state; `as_node="b"` patches the state and leaves nothing to run."""
    def scenario(E):
        out = {}
        for as_node in ("a", "b"):
            sp, cfg = spec(E, schema), thread()
            app = build(E, sp, saver(E))
            app.invoke(sp.inp, cfg)
            app.update_state(cfg, sp.patch, as_node=as_node)
            mid = app.get_state(cfg)
            out[as_node] = snap(mid), typed(app.invoke(None, cfg)), snap(app.get_state(cfg))
        return out

    ref = differential(scenario)
    assert ref["a"][0][1] == ("b",) and ref["b"][0][1] == ()


@pytest.mark.parametrize("schema", SCHEMAS)
def test_update_state_with_a_command_updates_and_routes(differential, saver, schema):
    """`update_state(Command(update=..., goto="b"))` on a finished thread patches the state and
    schedules `b`, which then runs on the patched values."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E))
        app.invoke(sp.inp, cfg)
        res = capture(lambda: app.update_state(cfg, E.Command(update=sp.patch, goto="b"), as_node="a"))
        mid = app.get_state(cfg)
        return res == mid.config, snap(mid), typed(app.invoke(None, cfg)), history(app, cfg)

    differential(scenario)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_bulk_update_state_writes_one_checkpoint_per_step(differential, saver, schema):
    """`bulk_update_state` applies each super-step's updates in turn, one checkpoint each,
    and the history shows the values after every one."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E))
        app.invoke(sp.inp, cfg)
        StateUpdate = import_module(f"{E.root}.types").StateUpdate
        app.bulk_update_state(cfg, [[StateUpdate(sp.patch, "a")], [StateUpdate(sp.patch, "b")]])
        return history(app, cfg)

    differential(scenario)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_history_values_at_every_checkpoint(differential, saver, schema):
    """`get_state_history` lists input, a, b checkpoints newest first with the values (and
    their type) the state had at each one."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E))
        app.invoke(sp.inp, cfg)
        return history(app, cfg)

    ref = differential(scenario)
    assert len(ref) == 4


@pytest.mark.parametrize("schema", SCHEMAS)
def test_fork_an_old_checkpoint_and_continue(differential, saver, schema):
    """Patching the checkpoint taken after `a` forks the thread: `b` runs again on the
    patched values, the new branch's parent is the old checkpoint, the original is kept."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E))
        app.invoke(sp.inp, cfg)
        after_a = next(s for s in app.get_state_history(cfg) if s.next == ("b",))
        fork_cfg = app.update_state(after_a.config, sp.patch)
        forked = app.get_state(fork_cfg)
        out = app.invoke(None, fork_cfg)
        return (snap(forked), forked.parent_config == after_a.config, typed(out),
                snap(app.get_state(cfg)), history(app, cfg), snap(app.get_state(after_a.config)))

    differential(scenario)


@pytest.mark.parametrize("mode", ["values", "updates"])
@pytest.mark.parametrize("schema", SCHEMAS)
def test_stream_chunks_and_their_types(differential, saver, schema, mode):
    """`stream_mode="values"` yields the (output-schema) state after each step and
    `"updates"` each node's write, as the same types on a fresh and a resumed thread."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E), interrupt_before=["b"])
        first = collect(lambda: app.stream(sp.inp, cfg, stream_mode=mode))
        app.update_state(cfg, sp.patch)
        second = collect(lambda: app.stream(None, cfg, stream_mode=mode))
        return [typed(c) for c in first], [typed(c) for c in second]

    differential(scenario)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_interrupt_then_resume_with_the_state_changed_in_between(differential, saver, schema):
    """`b` asks a human; while it waits the user patches the state; `Command(resume=...)`
    re-runs `b` on the patched state with the answer."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E), ask=True)
        first = app.invoke(sp.inp, cfg)
        paused = app.get_state(cfg)
        app.update_state(cfg, sp.patch)
        patched = app.get_state(cfg)
        out = app.invoke(E.Command(resume="yes"), cfg)
        return (typed(first), snap(paused), [i.value for i in paused.interrupts], snap(patched),
                [i.value for i in patched.interrupts], typed(out), snap(app.get_state(cfg)))

    ref = differential(scenario)
    assert ref[2] == [{"question": "ok?"}]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_get_state_with_subgraphs_shows_a_subgraph_of_another_schema(differential, saver, schema):
    """`b` runs a subgraph with its own schema that asks a human: `get_state(subgraphs=True)`
    shows the parent's values and, on `b`'s task, the subgraph's own state; the resume
    finishes both."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E), sub=True)
        app.invoke(sp.inp, cfg)
        st = app.get_state(cfg, subgraphs=True)
        sub_st = st.tasks[0].state
        out = app.invoke(E.Command(resume="yes"), cfg)
        return (snap(st), [(t.name, [i.value for i in t.interrupts]) for t in st.tasks],
                snap(sub_st), sub_st.tasks, typed(out), snap(app.get_state(cfg, subgraphs=True)))

    ref = differential(scenario)
    assert ref[2][0] == ("dict", {"q": "sure", "replies": []})


@pytest.mark.parametrize("schema", SCHEMAS)
def test_update_state_with_a_key_the_schema_lacks_changes_nothing(differential, saver, schema):
    """A mistyped key in `update_state` is dropped (as LangGraph): the values and what runs
    next stay as they were, and the resume is unaffected."""
    def scenario(E):
        sp, cfg = spec(E, schema), thread()
        app = build(E, sp, saver(E), interrupt_before=["b"])
        app.invoke(sp.inp, cfg)
        before = app.get_state(cfg).values
        app.update_state(cfg, {"not_a_key": 1})
        after = app.get_state(cfg)
        return after.values == before, snap(after), typed(app.invoke(None, cfg))

    ref = differential(scenario)
    assert ref[0] is True


# --- user mistakes: lgnb's errors say what went wrong ----------------------------------------


def test_a_wrong_type_put_into_a_pydantic_state_fails_the_next_node_with_a_note(differential, saver):
    """`update_state({"n": "abc"})` on a pydantic state is accepted (as LangGraph) and the next
    node's read raises pydantic's ValidationError (same class and message). On lgnb only, the
    error also carries a note naming the node and the thread and pointing at `update_state`,
    where LangGraph leaves the user with a bare validation error far from its cause. (The
    paused state is not compared: LangGraph's `get_state` raises here too, lgnb's shows the
    bad value by design; see test_diff_users_schemas.py.)"""
    def scenario(E):
        sp, cfg = spec(E, "pydantic"), thread()
        app = build(E, sp, saver(E), interrupt_before=["b"])
        app.invoke(sp.inp, cfg)
        app.update_state(cfg, {"n": "abc"})
        err = None
        try:
            app.invoke(None, cfg)
        except pydantic.ValidationError as e:
            err = e
        assert err is not None
        scenario.notes = getattr(err, "__notes__", [])
        return "raises", type(err).__name__, str(err)

    differential(scenario)
    from _diff import Engine

    scenario(Engine("lgnb"))
    note = " ".join(scenario.notes)
    assert "Node 'b'" in note and "update_state" in note, note


BAD_BULK = {
    "a_dict_as_a_super_step": lambda SU: [{"n": 5}],
    "state_updates_not_grouped_in_super_steps": lambda SU: [SU({"n": 5}, "a"), SU({"n": 6}, "b")],
    "plain_dicts_instead_of_state_updates": lambda SU: [[{"n": 5}]],
    "a_bare_dict": lambda SU: {"n": 5},
}


@pytest.mark.parametrize("shape", list(BAD_BULK))
def test_bulk_update_state_with_a_wrong_shape_says_what_shape_it_wants(saver, shape):
    """lgnb only: `bulk_update_state` given a dict, a flat list of StateUpdates or plain dicts
    raises InvalidUpdateError showing the expected `[[StateUpdate(values, as_node)]]` shape
    and leaves the thread as it was. LangGraph fails deep inside with a bare `KeyError: 0`,
    `TypeError: unhashable type: 'slice'` or an unpacking ValueError."""
    from _diff import Engine

    E = Engine("lgnb")
    sp, cfg = spec(E, "typeddict"), thread()
    app = build(E, sp, saver(E))
    app.invoke(sp.inp, cfg)
    before = app.get_state(cfg)
    SU = import_module("lgnb.types").StateUpdate
    with pytest.raises(E.errors.InvalidUpdateError, match=r"\[\[StateUpdate\(\{'key': \.\.\.\}, 'node'\)\]\]"):
        app.bulk_update_state(cfg, BAD_BULK[shape](SU))
    assert app.get_state(cfg) == before
