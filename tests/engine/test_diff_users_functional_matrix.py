"""The functional API (`@entrypoint`, `@task`) crossed with every way of running it.

Each program is one users write from LangGraph's functional-API docs: tasks run in parallel
through futures, a task calling a task, `interrupt()` inside a task and inside the
entrypoint, `entrypoint.final(value=, save=)` with `previous` over several turns, a task
with a `RetryPolicy` that fails once, a task with a `CachePolicy`, a task streaming a chat
model's tokens, custom events from tasks, an entrypoint invoking a `StateGraph`, an async
entrypoint gathering async tasks, and an entrypoint with `context_schema` and a `store`.
Each runs through `invoke`, `stream` (every mode, with and without subgraphs), `ainvoke`,
`astream` and `astream_events(version="v2")`, with and without a checkpointer (programs that
`interrupt()` need one), for several turns on one thread: the resume turn
(`Command(resume=...)`) goes through the same API. Then `get_state` and `get_state_history`
of the thread. Every cell is compared with LangGraph (test_diff_users_call_matrix.py does
the same for what a StateGraph node calls).

Ordering: sync tasks started together run in LangGraph's thread pool and report in
completion order, so for the programs that start tasks in parallel (`PARALLEL`) each
super-step's chunks (between `values`/`checkpoints` chunks) and the traced events are
compared as multisets; everything else is compared in order.

No `from __future__ import annotations`: classes are defined inside scenarios.
"""

import asyncio
import copy
from dataclasses import dataclass

import pytest
from _diff import Normalizer, acollect, capture, collect, steps_as_multisets
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.cache.memory import InMemoryCache
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

ALL_MODES = ["updates", "custom", "messages", "values", "tasks", "checkpoints"]
SYNC_APIS = ("invoke", "stream", "stream_subgraphs")
ASYNC_APIS = ("ainvoke", "astream", "astream_subgraphs", "astream_events")

SYNC_PROGRAMS = ("parallel", "nested", "task_interrupt", "entry_interrupt", "final_previous",
                 "retry", "cache", "chat_model", "custom", "subgraph", "context_store")
ASYNC_PROGRAMS = ("async_gather", "async_interrupt")
# programs that pause: they need a checkpointer
ASKING = {"task_interrupt", "entry_interrupt", "async_interrupt"}
# programs whose sync tasks start together (thread pool: completion order)
PARALLEL = {"parallel", "cache", "async_gather"}


@dataclass
class Ctx:
    user: str


class Program:
    """An entrypoint, the inputs of its turns on one thread, and the run kwargs."""

    def __init__(self, app, turns, **kwargs):
        self.app, self.turns, self.kwargs = app, turns, kwargs


def _program(E, kind, saver):  # noqa: C901 - one program per branch
    ckpt = {"checkpointer": E.InMemorySaver()} if saver else {}
    entrypoint, task = E.func.entrypoint, E.func.task

    if kind == "parallel":
        @task
        def fetch(topic: str) -> str:
            return f"facts about {topic}"

        @entrypoint(**ckpt)
        def research(topics: list) -> dict:
            futures = [fetch(t) for t in topics]
            texts = [f.result() for f in futures]
            return {"texts": texts, "n": len(texts)}

        return Program(research, [["cats", "dogs", "owls"], ["eels"]])

    if kind == "nested":
        @task
        def inner(x: int) -> int:
            return x + 1

        @task
        def outer(x: int) -> int:
            return inner(x).result() * 10

        @entrypoint(**ckpt)
        def wf(x: int) -> int:
            return outer(x).result()

        return Program(wf, [1, 5])

    if kind == "task_interrupt":
        @task
        def write(topic: str) -> str:
            return f"essay on {topic}"

        @task
        def review(essay: str) -> dict:
            answer = E.interrupt({"essay": essay, "action": "approve?"})
            return {"essay": essay, "approved": answer}

        @entrypoint(**ckpt)
        def wf(topic: str) -> dict:
            return review(write(topic).result()).result()

        return Program(wf, ["cats", E.Command(resume=True)])

    if kind == "entry_interrupt":
        runs = []

        @task
        def draft(x: str) -> str:
            runs.append(x)
            return x.upper()

        @task
        def publish(text: str) -> str:
            return f"published {text}"

        @entrypoint(**ckpt)
        def wf(x: str) -> dict:
            text = draft(x).result()
            edited = E.interrupt({"draft": text})
            return {"out": publish(edited).result(), "drafts": len(runs)}

        return Program(wf, ["hello", E.Command(resume="HELLO!")])

    if kind == "final_previous":
        @task
        def add(a: int, b: int) -> int:
            return a + b

        @entrypoint(**ckpt)
        def counter(n: int, *, previous=None):
            total = add(previous or 0, n).result()
            return entrypoint.final(value={"was": previous, "now": total}, save=total)

        return Program(counter, [1, 2, 3])

    if kind == "retry":
        attempts = []

        @task(retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False,
                                          retry_on=ValueError))
        def flaky(x: int) -> int:
            attempts.append(x)
            if len(attempts) % 2:
                raise ValueError(f"flaky {x}")
            return x * 10

        @entrypoint(**ckpt)
        def wf(x: int) -> dict:
            return {"value": flaky(x).result(), "attempts": len(attempts)}

        return Program(wf, [1, 2])

    if kind == "cache":
        runs = []

        @task(cache_policy=E.CachePolicy())
        def square(x: int) -> int:
            runs.append(x)
            return x * x

        @entrypoint(cache=InMemoryCache(), **ckpt)
        def wf(xs: list) -> dict:
            return {"squares": [f.result() for f in [square(x) for x in xs]],
                    "computed": len(runs)}

        return Program(wf, [[2, 3], [3, 4]])

    if kind == "chat_model":
        model = GenericFakeChatModel(messages=iter(
            [AIMessage(content="hello there friend", id="ai-1"),
             AIMessage(content="second answer here", id="ai-2")]))

        @task
        def call_model(prompt: str) -> dict:
            reply = model.invoke(prompt)
            return {"content": reply.content, "id": reply.id}

        @entrypoint(**ckpt)
        def chat(prompt: str) -> dict:
            return call_model(prompt).result()

        return Program(chat, ["hi", "again"])

    if kind == "custom":
        @task
        def work(x: int, writer: E.StreamWriter) -> int:
            writer({"progress": f"task {x} started"})
            E.get_stream_writer()({"progress": f"task {x} done"})
            return x * 2

        @entrypoint(**ckpt)
        def wf(x: int) -> int:
            E.get_stream_writer()({"phase": "start"})
            out = work(x).result()
            E.get_stream_writer()({"phase": "end"})
            return out

        return Program(wf, [3, 4])

    if kind == "subgraph":
        class S(TypedDict):
            text: str
            steps: int

        def upper(s: S) -> dict:
            E.get_stream_writer()({"inner": s["text"]})
            return {"text": s["text"].upper(), "steps": s["steps"] + 1}

        def exclaim(s: S) -> dict:
            return {"text": s["text"] + "!", "steps": s["steps"] + 1}

        b = E.StateGraph(S)
        b.add_node("upper", upper)
        b.add_node("exclaim", exclaim)
        b.add_edge(E.START, "upper")
        b.add_edge("upper", "exclaim")
        sub = b.compile(name="shout")

        @task
        def tidy(text: str) -> str:
            return text.strip()

        @entrypoint(**ckpt)
        def wf(text: str) -> dict:
            return sub.invoke({"text": tidy(text).result(), "steps": 0})

        return Program(wf, [" hi ", "yo"])

    if kind == "context_store":
        store = InMemoryStore()

        @task
        def remember(fact: str) -> int:
            user = E.get_runtime(Ctx).context.user
            s = E.get_store()
            s.put(("facts", user), fact, {"fact": fact})
            return len(s.search(("facts", user)))

        @entrypoint(context_schema=Ctx, store=store, **ckpt)
        def wf(fact: str, *, runtime: E.Runtime[Ctx]) -> dict:
            n = remember(fact).result()
            return {"user": runtime.context.user, "facts": n,
                    "stored": sorted(i.key for i in runtime.store.search(
                        ("facts", runtime.context.user)))}

        return Program(wf, ["likes tea", "lives in rome"], context=Ctx(user="ann"))

    if kind == "async_gather":
        @task
        async def double(x: int) -> int:
            await asyncio.sleep(0)
            E.get_stream_writer()({"doubling": x})
            return 2 * x

        @entrypoint(**ckpt)
        async def wf(xs: list) -> dict:
            values = await asyncio.gather(*[double(x) for x in xs])
            return {"values": list(values), "total": sum(values)}

        return Program(wf, [[1, 2, 3], [5]])

    assert kind == "async_interrupt"

    @task
    async def plan(goal: str) -> list:
        return [f"{goal}-{i}" for i in range(2)]

    @task
    async def execute(step: str) -> str:
        return f"done {step}"

    @entrypoint(**ckpt)
    async def wf(goal: str) -> dict:
        steps = await plan(goal)
        ok = E.interrupt({"plan": steps})
        if not ok:
            return {"cancelled": steps}
        return {"results": list(await asyncio.gather(*[execute(s) for s in steps]))}

    return Program(wf, ["trip", E.Command(resume=True)])


# ---------------------------------------------------------------------------------------
# running one turn through one API
# ---------------------------------------------------------------------------------------


def _event(ev):
    md = ev.get("metadata", {})
    data = ev.get("data", {})
    extra = None
    if ev["event"] == "on_chat_model_stream":
        extra = data["chunk"].content
    elif ev["event"] == "on_chain_end" and not ev.get("parent_ids"):
        extra = data.get("output")
    elif ev["event"] == "on_chain_stream" and not ev.get("parent_ids"):
        extra = data.get("chunk")  # what the graph streamed
    return (ev["event"], ev["name"], len(ev.get("parent_ids", [])), md.get("langgraph_node"),
            sorted(t for t in ev.get("tags", []) if not t.startswith("seq:")), extra)


def _turn(prog, api, inp, cfg):
    app, kw = prog.app, dict(prog.kwargs)
    sub = api.endswith("_subgraphs")
    if api == "invoke":
        return capture(lambda: app.invoke(inp, cfg, **kw))
    if api.startswith("stream"):
        return collect(lambda: app.stream(inp, cfg, stream_mode=ALL_MODES, subgraphs=sub, **kw))

    async def run():
        if api == "ainvoke":
            return await app.ainvoke(inp, cfg, **kw)
        if api.startswith("astream_events"):
            return await acollect(lambda: _events(app.astream_events(inp, cfg, version="v2",
                                                                      **kw)))
        return await acollect(lambda: app.astream(inp, cfg, stream_mode=ALL_MODES,
                                                  subgraphs=sub, **kw))

    try:
        return asyncio.run(run())
    except Exception as e:
        return ("raises", type(e).__name__, str(e))


async def _events(aiter):
    """Traced events in order, except the root run's `on_chain_stream` events: LangGraph
    emits them from the graph's loop while the entrypoint's own events come from its worker
    thread, so their interleaving is racy on LangGraph itself; they are yielded last, in
    their own order."""
    root_streams = []
    async for ev in aiter:
        if ev["event"] == "on_chain_stream" and not ev.get("parent_ids"):
            root_streams.append(_event(ev))
        else:
            yield _event(ev)
    for ev in root_streams:
        yield ev


def _mode_of(chunk):
    if isinstance(chunk, tuple) and len(chunk) == 3:
        return chunk[1]
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], str):
        return chunk[0]
    return None


def _ordered(out, kind, api):
    """Where LangGraph reports in completion order, compare per-step multisets."""
    if kind not in PARALLEL or not isinstance(out, list):
        return out
    if api.endswith("astream_events"):
        return sorted(out, key=lambda c: repr(Normalizer()(c)))
    return steps_as_multisets(out, lambda c: _mode_of(c) in ("values", "checkpoints"))


def _snap(s):
    md = s.metadata or {}
    return (s.values, s.next, [(t.name, t.path, [i.value for i in t.interrupts], t.result)
                               for t in s.tasks],
            [i.value for i in s.interrupts], md.get("source"), md.get("step"))


def _history(app, cfg):
    return [_snap(s) for s in app.get_state_history(cfg)]


def _cell(E, kind, api, saver):
    prog = _program(E, kind, saver)
    cfg = {"configurable": {"thread_id": f"{kind}-{api}"}} if saver else None
    turns, states = [], []
    for inp in prog.turns:
        turns.append(_ordered(_turn(prog, api, inp, cfg), kind, api))
        if saver:  # what the thread looks like after each turn (paused, then answered)
            states.append(_snap(prog.app.get_state(cfg)))
    if not saver:
        return turns
    history = _history(prog.app, cfg)
    if kind in PARALLEL:  # tasks listed in the order LangGraph's thread pool finished them
        history = [(v, n, sorted(t, key=repr), *rest) for v, n, t, *rest in history]
    return turns, states, history


def _cells():
    out = []
    for kind in SYNC_PROGRAMS + ASYNC_PROGRAMS:
        apis = ASYNC_APIS if kind in ASYNC_PROGRAMS else SYNC_APIS + ASYNC_APIS
        for api in apis:
            for saver in (True, False):
                if saver or kind not in ASKING:
                    out.append((kind, api, saver))
    return out


CELLS = _cells()


@pytest.mark.parametrize(("program", "api", "saver"), CELLS,
                         ids=[f"{k}-{a}-{'saver' if s else 'nosaver'}" for k, a, s in CELLS])
def test_a_functional_program_runs_the_same_through_every_api(differential, program, api, saver):
    """Every turn's result, stream chunk (all modes, namespaces, message tokens, custom
    events, task and checkpoint payloads) and traced event matches LangGraph's; with a
    checkpointer the resume turn answers the question and the thread's state and history
    match."""
    def scenario(E):
        return _cell(E, program, api, saver)

    ref = differential(scenario)
    turns = ref[0] if saver else ref
    assert len(turns) >= 2 and all(t for t in turns), "every turn produced output"
    assert not any(isinstance(t, tuple) and t and t[0] == "raises" for t in turns), turns
    if saver:
        assert ref[2], "the thread has a history"
    if program in ASKING:
        assert "__interrupt__" in repr(turns[0]) or api.endswith("events"), "the run paused"
        assert ref[1][0][3] and ref[1][0][1], "the first turn left the thread paused"
        assert ref[1][-1][1] == (), "the resume turn finished the run"


# ---------------------------------------------------------------------------------------
# the same programs under the other run options users pass
# ---------------------------------------------------------------------------------------

OPTIONS = ("debug", "stream_v2", "astream_v2", "durability_exit", "durability_sync_astream")


def _turn_with(prog, option, inp, cfg):
    app, kw = prog.app, dict(prog.kwargs)
    if option == "debug":
        return collect(lambda: app.stream(inp, cfg, stream_mode="debug", **kw))
    if option == "stream_v2":  # each part as the loop sees it when it arrives (see below)
        return collect(lambda: map(copy.deepcopy, app.stream(
            inp, cfg, stream_mode=["updates", "custom", "values"], subgraphs=True,
            version="v2", **kw)))
    if option == "durability_exit":
        return capture(lambda: app.invoke(inp, cfg, durability="exit", **kw))

    async def run():
        if option == "astream_v2":
            return await acollect(lambda: _copies(app.astream(
                inp, cfg, stream_mode=["updates", "messages", "values"], version="v2", **kw)))
        return await acollect(lambda: app.astream(inp, cfg, durability="sync", **kw))

    return asyncio.run(run())


async def _copies(aiter):
    async for part in aiter:
        yield copy.deepcopy(part)


def _barrier(c):
    """The end of a super-step in a stream: a values, checkpoints or debug checkpoint chunk."""
    if isinstance(c, dict):  # a v2 stream part or a debug event
        return c.get("type") in ("values", "checkpoints", "checkpoint")
    return _mode_of(c) in ("values", "checkpoints")


OPTION_CELLS = [(k, o) for k in SYNC_PROGRAMS + ASYNC_PROGRAMS for o in OPTIONS
                if not (k in ASYNC_PROGRAMS and o in ("debug", "stream_v2", "durability_exit"))]


@pytest.mark.parametrize(("program", "option"), OPTION_CELLS,
                         ids=[f"{k}-{o}" for k, o in OPTION_CELLS])
def test_a_functional_program_under_each_run_option(differential, program, option):
    """`stream_mode="debug"`, v2 stream parts, and `durability="exit"`/`"sync"` give the
    same chunks, results, states and checkpoint history as LangGraph over every turn."""
    def scenario(E):
        prog = _program(E, program, True)
        cfg = {"configurable": {"thread_id": f"{program}-{option}"}}
        turns = []
        for inp in prog.turns:
            out = _turn_with(prog, option, inp, cfg)
            if program in PARALLEL and isinstance(out, list):
                out = steps_as_multisets(out, _barrier)
            turns.append((out, _snap(prog.app.get_state(cfg))))
        history = _history(prog.app, cfg)
        return turns, [(v, n, sorted(t, key=repr), *rest) for v, n, t, *rest in history]

    ref = differential(scenario)
    assert all(t[0] for t in ref[0]), "every turn produced output"
    assert ref[0][-1][1][1] == (), "the last turn finished the run"


def test_v2_stream_parts_collected_in_a_list_keep_the_interrupt_update():
    """lgnb only: a user who collects v2 parts (`list(app.stream(..., version="v2"))`) still
    sees the `__interrupt__` update. LangGraph 1.2 yields the updates part and the values
    part with the same dict and then pops `__interrupt__` from it for the values part, so
    the updates part already handed out turns into `{}` (its parts compare equal only as
    they arrive: the matrix above copies each part then). lgnb does not copy that aliasing."""
    from lgnb.checkpoint.memory import InMemorySaver
    from lgnb.func import entrypoint, task
    from lgnb.types import interrupt

    @task
    def draft(x: str) -> str:
        return x.upper()

    @entrypoint(checkpointer=InMemorySaver())
    def wf(x: str) -> dict:
        return {"out": interrupt({"draft": draft(x).result()})}

    parts = list(wf.stream("hi", {"configurable": {"thread_id": "1"}},
                           stream_mode=["updates", "values"], version="v2"))
    assert [p["type"] for p in parts] == ["updates", "updates", "values"]
    assert [i.value for i in parts[1]["data"]["__interrupt__"]] == [{"draft": "HI"}]
    assert parts[2]["data"] == {}
    assert [i.value for i in parts[2]["interrupts"]] == [{"draft": "HI"}]


# ---------------------------------------------------------------------------------------
# questions asked deeper down, answered through every API
# ---------------------------------------------------------------------------------------

DEEP = ("subgraph_asks", "parallel_tasks_ask")


def _deep_program(E, kind):
    if kind == "subgraph_asks":
        class S(TypedDict):
            text: str
            ok: bool

        def check(s: S) -> dict:
            return {"ok": E.interrupt({"check": s["text"]}) == "yes"}

        b = E.StateGraph(S)
        b.add_node("check", check)
        b.add_edge(E.START, "check")
        sub = b.compile(name="checker")

        @E.func.task
        def prepare(text: str) -> str:
            return text.title()

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(text: str) -> dict:
            return sub.invoke({"text": prepare(text).result(), "ok": False})

        return wf, "hello world", lambda ints: E.Command(resume="yes")

    @E.func.task
    def ask(who: str) -> str:
        return f"{who}: {E.interrupt({'who': who})}"

    @E.func.entrypoint(checkpointer=E.InMemorySaver())
    def wf(people: list) -> list:
        return [f.result() for f in [ask(p) for p in people]]

    # every pending question answered at once, by interrupt id
    return wf, ["ann", "bob"], lambda ints: E.Command(
        resume={i.id: f"hi {i.value['who']}" for i in ints})


def _deep_state(app, cfg):
    st = app.get_state(cfg, subgraphs=True)
    return (st.values, st.next, sorted([i.value for i in st.interrupts], key=repr),
            sorted([(t.name, [i.value for i in t.interrupts],
                     t.state.values if t.state is not None and hasattr(t.state, "values")
                     else None) for t in st.tasks], key=repr))


DEEP_CELLS = [(k, a) for k in DEEP for a in SYNC_APIS + ASYNC_APIS]


@pytest.mark.parametrize(("program", "api"), DEEP_CELLS, ids=[f"{k}-{a}" for k, a in DEEP_CELLS])
def test_a_question_asked_deeper_down_is_answered_through_every_api(differential, program, api):
    """A question asked in a StateGraph the entrypoint invokes, or by tasks running in
    parallel, pauses the entrypoint; `get_state(subgraphs=True)` shows it on its task, and
    `Command(resume=...)` (a map by interrupt id for several) through the same API answers."""
    def scenario(E):
        app, first, answer = _deep_program(E, program)
        cfg = {"configurable": {"thread_id": f"{program}-{api}"}}
        prog = Program(app, [])
        turns = [(_ordered(_turn(prog, api, first, cfg), "parallel", api),
                  _deep_state(app, cfg))]
        # answer what is pending until the run ends (LangGraph surfaces the questions of
        # parallel tasks one at a time)
        while (pending := app.get_state(cfg).interrupts) and len(turns) < 4:
            turns.append((_ordered(_turn(prog, api, answer(pending), cfg), "parallel", api),
                          _deep_state(app, cfg)))
        history = [(v, n, sorted(t, key=repr), sorted(i, key=repr), *rest)
                   for v, n, t, i, *rest in _history(app, cfg)]
        return turns, history

    ref = differential(scenario)
    turns = ref[0]
    assert turns[0][1][2], "the first run paused with the question"
    values, nxt = turns[-1][1][0], turns[-1][1][1]
    assert nxt == () and values in ({"text": "Hello World", "ok": True},
                                    ["ann: hi ann", "bob: hi bob"]), turns[-1]


# ---------------------------------------------------------------------------------------
# what a tracer sees of a retried task
# ---------------------------------------------------------------------------------------

RETRY_CELLS = [(k, a) for k in ("task", "node") for a in ("invoke", "ainvoke", "astream_events")]


@pytest.mark.parametrize(("where", "api"), RETRY_CELLS, ids=[f"{k}-{a}" for k, a in RETRY_CELLS])
def test_each_attempt_of_a_retried_task_is_a_run_of_its_own(differential, where, api):
    """A tracer (a callback handler passed in the config) sees each attempt of a retried
    `@task` or StateGraph node as its own run: the failed attempt starts and errors, the
    next one starts and ends, as LangSmith shows them on LangGraph."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Recorder(BaseCallbackHandler):
        def __init__(self):
            self.events = []

        def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
            self.events.append(("start", kw.get("name"), str(run_id)))

        def on_chain_end(self, outputs, *, run_id, **kw):
            self.events.append(("end", str(run_id)))

        def on_chain_error(self, error, *, run_id, **kw):
            self.events.append(("error", repr(error), str(run_id)))

    def scenario(E):
        attempts = []
        policy = E.RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False)

        def flaky(x: int) -> int:
            attempts.append(x)
            if len(attempts) < 2:
                raise ConnectionError("try again")  # retried by the default `retry_on`
            return x + 1

        if where == "task":
            step = E.func.task(retry_policy=policy)(flaky)

            @E.func.entrypoint()
            def app(x: int) -> int:
                return step(x).result()
        else:
            class S(TypedDict):
                x: int

            b = E.StateGraph(S)
            b.add_node("flaky", lambda s: {"x": flaky(s["x"])}, retry_policy=policy)
            b.add_edge(E.START, "flaky")
            app = b.compile()
        inp = 1 if where == "task" else {"x": 1}
        rec = Recorder()
        cfg = {"callbacks": [rec]}
        if api == "invoke":
            out = app.invoke(inp, cfg)
        elif api == "ainvoke":
            out = asyncio.run(app.ainvoke(inp, cfg))
        else:
            out = asyncio.run(acollect(lambda: _events(app.astream_events(inp, cfg,
                                                                          version="v2"))))
        return out, rec.events, len(attempts)

    ref = differential(scenario)
    names = [e[1] for e in ref[1] if e[0] == "start"]
    assert names.count("flaky") == 2 and ref[2] == 2, ref
