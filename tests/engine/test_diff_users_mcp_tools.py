"""Agents whose tools come from MCP servers (`langchain-mcp-adapters`), run on LangGraph and on lgnb.

What users write: an MCP server (here tests/engine/_mcp_server.py, FastMCP over stdio),
a `MultiServerMCPClient` and `load_mcp_tools(session, ...)` (or `client.get_tools()`,
which opens a session per call), then the tools in an agent: their own `StateGraph` with
LangGraph's `ToolNode` / `tools_condition`, or `create_react_agent` / LangChain's
`create_agent` ported with `from_langgraph`. Around the tools: `Callbacks(on_progress=...,
on_logging_message=...)` forwarding the server's notifications to the graph's custom
stream, `tool_interceptors` rewriting arguments, reading the graph's state and runtime,
returning a `Command`, or asking a human with `interrupt()` before the tool runs.

Each scenario opens one session (one server process) per engine. Observables are raw:
streams (`subgraphs=True`, every mode), states, histories, `astream_events`, what the
model was sent; only ids and timestamps are normalized (by the harness). MCP tools are
async-only, so the graphs run with `ainvoke` / `astream`. Where parallel tool calls run
as parallel tasks (the library agents send one per call), which finishes first is up to
the server, so those streams compare each step's chunks as a set; streams that must keep
their order call one tool per model turn.

Known divergence (xfail): an interceptor of a ported program returning lgnb's `Command`
breaks the adapter, which only passes `langgraph.types.Command` through.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import importlib
import sys
import warnings
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("langchain_mcp_adapters")

from _agent_scenarios import ahistory as _ahistory  # noqa: E402
from _agent_scenarios import calls as _calls  # noqa: E402
from _agent_scenarios import history as _history  # noqa: E402
from _agent_scenarios import on as _on  # noqa: E402
from _agent_scenarios import saver as _saver  # noqa: E402
from _agent_scenarios import say as _say  # noqa: E402
from _diff import (  # noqa: E402
    acollect,
    logged_warnings,
    selftest_enabled,
    snapshot_summary,
    steps_as_multisets,
)
from _scripted import Scripted  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_mcp_adapters.callbacks import Callbacks  # noqa: E402
from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: E402
from langchain_mcp_adapters.tools import load_mcp_tools  # noqa: E402

warnings.filterwarnings("ignore", message=".*create_react_agent.*")

SERVER = str(Path(__file__).with_name("_mcp_server.py"))


# --- helpers --------------------------------------------------------------------------------------


def _connections():
    return {"demo": {"command": sys.executable, "args": [SERVER], "transport": "stdio"}}


@asynccontextmanager
async def _mcp(**kwargs):
    """One session with the demo server and its tools, as users load them."""
    client = MultiServerMCPClient(_connections())
    async with client.session("demo") as session:
        yield await load_mcp_tools(session, server_name="demo", **kwargs)


def _pick(tools, *names):
    by_name = {t.name: t for t in tools}
    return [by_name[n] for n in names]


def _model(*replies):
    return Scripted(script=iter(list(replies)), seen=[])


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _hi(text="hi", mid="h1"):
    return {"messages": [HumanMessage(text, id=mid)]}


def _agent(E, model, tools, *, state=None, context_schema=None, is_async=True, **compile_kwargs):
    """The user's agent: a model node (async unless told) and LangGraph's `ToolNode` in E's
    StateGraph (of `state`, by default `MessagesState`)."""
    from langgraph.prebuilt import ToolNode, tools_condition

    async def aagent(state):
        return {"messages": [await model.ainvoke(state["messages"])]}

    def agent(state):
        return {"messages": [model.invoke(state["messages"])]}

    b = E.StateGraph(state or E.MessagesState, context_schema=context_schema)
    b.add_node("agent", aagent if is_async else agent)
    b.add_node("tools", ToolNode(tools))
    b.add_edge(E.START, "agent")
    b.add_conditional_edges("agent", tools_condition)
    b.add_edge("tools", "agent")
    return b.compile(**compile_kwargs)


def _library_agent(E, which, model, tools, **kwargs):
    if which == "create_agent":
        from langchain.agents import create_agent

        return _on(E, create_agent(model, tools, **kwargs))
    from langgraph.prebuilt import create_react_agent

    if "system_prompt" in kwargs:
        kwargs["prompt"] = kwargs.pop("system_prompt")
    return _on(E, create_react_agent(model, tools, **kwargs))


def _any_agent(E, which, model, tools, **kwargs):
    """The hand-written agent, or the library's (ported)."""
    if which == "hand-written":
        return _agent(E, model, tools, **kwargs)
    return _library_agent(E, which, model, tools, **kwargs)


def _msgs(state):
    """A state's messages as (type, content, tool name, status, artifact)."""
    return [(m.type, m.content, getattr(m, "name", None), getattr(m, "status", None),
             getattr(m, "artifact", None)) for m in state["messages"]]


# --- a hand-written agent with MCP tools ----------------------------------------------------------


def test_hand_written_agent_ainvoke_with_plain_structured_and_image_results(differential):
    """Plain results (`add`, `lookup_city`), structured content (`forecast`: the tool
    message's artifact) and an image block (`chart`) reach the state as on LangGraph."""
    async def scenario(E):
        model = _model(
            _calls("a1", ("add", {"a": 2, "b": 40}, "c1")),
            _calls("a2", ("forecast", {"city": "Oslo", "days": 2}, "c2")),
            _calls("a3", ("chart", {"title": "sales"}, "c3"), ("lookup_city", {"name": "Kyoto"}, "c4")),
            _say("Done.", "a4"))
        async with _mcp() as tools:
            app = _agent(E, model, tools)
            out = await app.ainvoke(_hi("go"))
        return out, model.seen

    ref = differential(scenario)
    tool_msgs = [m for m in ref[0]["messages"] if m[0] == "ToolMessage"]
    assert tool_msgs[1][1]["artifact"] == {"structured_content": {"city": "Oslo", "celsius": 16, "sky": "cloudy"}}


async def _announce(request, handler):
    """An interceptor writing each MCP call to the custom stream (the ToolNode's runtime)."""
    request.runtime.stream_writer({"mcp": request.name, "args": request.args})
    return await handler(request)


@pytest.mark.parametrize("mode", ["updates", "values", "messages", "custom", "debug",
                                  ["updates", "messages", "custom"]])
def test_hand_written_agent_astream_every_mode_with_subgraphs(differential, mode):
    """`astream(..., stream_mode=mode, subgraphs=True)` of the agent as one of its nodes
    (so the stream has a namespace), MCP tool results in every chunk; an interceptor
    announces each call on the custom stream."""
    async def scenario(E):
        model = _model(
            _calls("a1", ("lookup_city", {"name": "Lima"}, "c1")),
            _calls("a2", ("forecast", {"city": "Lima"}, "c2")),
            _say("Lima is in Peru and clear.", "a3"))
        async with _mcp(tool_interceptors=[_announce]) as tools:
            inner = _agent(E, model, tools)
            outer = E.StateGraph(E.MessagesState)
            outer.add_node("assistant", inner)
            outer.add_edge(E.START, "assistant")
            app = outer.compile(checkpointer=E.InMemorySaver())
            return await acollect(lambda: app.astream(_hi("where?"), _cfg(), stream_mode=mode,
                                                      subgraphs=True))

    ref = differential(scenario)
    assert ref, "the stream is empty"


@pytest.mark.parametrize("which", ["hand-written", "create_agent", "create_react_agent"])
def test_parallel_mcp_calls_in_one_turn_and_a_failing_tool(differential, which):
    """Three slow `fetch_page` calls and a `divide` by zero in one model turn: the calls
    run at once (one ToolNode task gathering them, or a task per call in the library
    agents), their messages land in call order, and the server's error (`isError`)
    becomes a ToolMessage with `status="error"` that the model reads and answers (the
    adapter's `handle_tool_errors=True` default). Which parallel call finishes first is
    up to the server, so each step's update chunks are compared as a set."""
    async def scenario(E):
        model = _model(
            _calls("a1", ("fetch_page", {"url": "a", "delay": 0.06}, "c1"),
                   ("fetch_page", {"url": "b", "delay": 0.02}, "c2"),
                   ("divide", {"a": 1, "b": 0}, "c3"),
                   ("fetch_page", {"url": "c"}, "c4")),
            _calls("a2", ("divide", {"a": 9, "b": 3}, "c5")),
            _say("Pages fetched; 9/3 is 3.", "a3"))
        async with _mcp() as tools:
            app = _any_agent(E, which, model, _pick(tools, "fetch_page", "divide"),
                             checkpointer=E.InMemorySaver())
            updates = await acollect(lambda: app.astream(_hi("fetch"), _cfg(), stream_mode="updates"))
            state = await app.aget_state(_cfg())
        steps = steps_as_multisets(updates, lambda c: "tools" not in c)
        return steps, _msgs(state.values), model.seen

    ref = differential(scenario)
    assert [m[2] for m in ref[1][2:6]] == ["fetch_page", "fetch_page", "divide", "fetch_page"]
    assert ref[1][4][3] == "error" and "cannot divide by zero" in str(ref[1][4][1])


@pytest.mark.parametrize("how", ["load_mcp_tools", "client.get_tools"])
def test_handle_tool_errors_false_fails_the_run_with_the_tool_exception(differential, how):
    """`handle_tool_errors=False` (the adapter's legacy behaviour): the server's error is a
    `ToolException`, which LangGraph's ToolNode default does not catch: the run fails with
    it, and the checkpoint keeps the model's call as the next step."""
    async def scenario(E):
        model = _model(_calls("a1", ("divide", {"a": 1, "b": 0}, "c1")))
        client = MultiServerMCPClient(_connections(), handle_tool_errors=False)
        if how == "client.get_tools":
            tools = await client.get_tools()
            app = _agent(E, model, tools, checkpointer=E.InMemorySaver())
            out = await acollect(lambda: app.astream(_hi(), _cfg(), stream_mode="updates"))
        else:
            async with client.session("demo") as session:
                tools = await load_mcp_tools(session, handle_tool_errors=False)
                app = _agent(E, model, tools, checkpointer=E.InMemorySaver())
                out = await acollect(lambda: app.astream(_hi(), _cfg(), stream_mode="updates"))
        state = await app.aget_state(_cfg())
        return out, snapshot_summary(state)

    ref = differential(scenario)
    assert ref[0][-1][:2] == ("raises", "_MCPToolExecutionError")  # a ToolException


def test_sync_invoke_of_an_agent_with_mcp_tools_fails_as_on_langgraph(differential):
    """MCP tools are async-only: a user's `graph.invoke` (a sync model node) reaches the
    tool's missing sync function and fails with LangChain's error."""
    async def scenario(E):
        model = _model(_calls("a1", ("add", {"a": 1, "b": 2}, "c1")))
        async with _mcp() as tools:
            app = _agent(E, model, tools, is_async=False)
            try:
                return app.invoke(_hi())
            except Exception as e:  # noqa: BLE001 - the observable
                return ("raises", type(e).__name__, str(e))

    ref = differential(scenario)
    assert ref[:2] == ("raises", "NotImplementedError")


# --- agents built by libraries, ported with from_langgraph ----------------------------------------


@pytest.mark.parametrize("which", ["create_agent", "create_react_agent"])
def test_library_agent_with_mcp_tools_streams_and_keeps_history(differential, which):
    """The agent a library builds around MCP tools, with the server's prompt as its system
    prompt: `astream` (updates, messages, custom; subgraphs), then the next turn on the
    thread, `aget_state` and the history."""
    async def scenario(E):
        model = _model(
            _calls("a1", ("lookup_city", {"name": "Oslo"}, "c1")),
            _calls("a1b", ("forecast", {"city": "Oslo"}, "c2")),
            _say("Oslo, Norway: clear.", "a2"),
            _calls("a3", ("divide", {"a": 10, "b": 0}, "c3")),
            _say("That division is impossible.", "a4"))
        client = MultiServerMCPClient(_connections())
        async with client.session("demo") as session:
            from langchain_mcp_adapters.prompts import load_mcp_prompt

            prompt = await load_mcp_prompt(session, "triage", arguments={"ticket": "weather"})
            tools = await load_mcp_tools(session, server_name="demo")
            app = _library_agent(E, which, model, tools, system_prompt=prompt[0].content,
                                 checkpointer=E.InMemorySaver())
            first = await acollect(lambda: app.astream(_hi("weather in Oslo?"), _cfg(),
                                                       stream_mode=["updates", "messages", "custom"],
                                                       subgraphs=True))
            second = await app.ainvoke(_hi("10/0?", "h2"), _cfg())
            state = await app.aget_state(_cfg())
            hist = [snapshot_summary(s) async for s in app.aget_state_history(_cfg())]
        return first, _msgs(second), snapshot_summary(state), len(hist), hist[-3:], model.seen

    ref = differential(scenario)
    assert ref[1][-2][3] == "error"


@pytest.mark.parametrize("which", ["hand-written", "create_agent", "create_react_agent"])
def test_astream_events_v2_around_mcp_tool_calls(differential, which):
    """`astream_events(version="v2")` of an agent calling an MCP tool, then one that
    fails: every run's events (names, tags, metadata, parents, inputs and outputs: the
    ToolMessage with its content blocks, artifact and error status) as on LangGraph."""
    async def scenario(E):
        model = _model(_calls("a1", ("add", {"a": 3, "b": 4}, "c1")),
                       _calls("a2", ("divide", {"a": 3, "b": 0}, "c2")),
                       _say("7, and no.", "a3"))
        async with _mcp() as tools:
            app = _any_agent(E, which, model, _pick(tools, "add", "divide"))
            return await acollect(lambda: app.astream_events(_hi("sums"), version="v2"))

    differential(scenario)


@pytest.mark.parametrize("which", ["hand-written", "create_agent", "create_react_agent"])
def test_astream_events_v2_tool_start_and_end_of_mcp_tools(differential, which):
    """The tool events users filter on: `on_tool_start` / `on_tool_end` with the MCP
    tool's name, its input (the model's arguments) and its output, in order."""
    async def scenario(E):
        model = _model(_calls("a1", ("forecast", {"city": "Lima", "days": 3}, "c1")),
                       _calls("a2", ("add", {"a": 3, "b": 4}, "c2")),
                       _calls("a3", ("divide", {"a": 3, "b": 0}, "c3")),
                       _say("ok", "a4"))
        async with _mcp() as tools:
            app = _any_agent(E, which, model, _pick(tools, "forecast", "add", "divide"))
            events = await acollect(lambda: app.astream_events(_hi("go"), version="v2"))
        return [(e["event"], e["name"], e["data"], e["metadata"].get("langgraph_node"))
                for e in events if e["event"].startswith("on_tool")]

    ref = differential(scenario)
    assert [(e, n) for e, n, _, _ in ref] == [
        ("on_tool_start", "forecast"), ("on_tool_end", "forecast"),
        ("on_tool_start", "add"), ("on_tool_end", "add"),
        ("on_tool_start", "divide"), ("on_tool_end", "divide")]


@pytest.mark.parametrize("which", ["create_agent", "create_react_agent"])
def test_library_agent_with_tool_name_prefix_from_client_get_tools(differential, which):
    """`MultiServerMCPClient(..., tool_name_prefix=True).get_tools()`: tools named
    `demo_<tool>`, a fresh session (a server process) per call."""
    async def scenario(E):
        model = _model(_calls("a1", ("demo_add", {"a": 1, "b": 1}, "c1")), _say("2", "a2"))
        client = MultiServerMCPClient(_connections(), tool_name_prefix=True)
        tools = await client.get_tools()
        app = _library_agent(E, which, model, _pick(tools, "demo_add"))
        out = await app.ainvoke(_hi("1+1"))
        return sorted(t.name for t in tools), _msgs(out)

    differential(scenario)


# --- progress notifications and log messages: Callbacks -> the custom stream -----------------------


def _forwarding_callbacks(E, seen):
    """The user's callbacks: every progress notification and log message of the server,
    noted and written to the graph's custom stream (what a progress bar shows)."""
    async def on_progress(progress, total, message, context):
        seen.append(("progress", progress, total, message, context.server_name, context.tool_name))
        E.get_stream_writer()({"tool": context.tool_name, "progress": progress, "total": total,
                               "message": message})

    async def on_logging_message(params, context):
        seen.append(("log", params.level, params.data, context.tool_name))
        E.get_stream_writer()({"log": params.level, "data": params.data})

    return Callbacks(on_progress=on_progress, on_logging_message=on_logging_message)


def test_progress_and_logs_of_a_per_call_session_reach_the_custom_stream(differential):
    """`client.get_tools()` opens a session inside each tool call, so the server's
    notifications are handled in the tool's context: `get_stream_writer()` in the
    callbacks writes to the graph's custom stream, between the model's and the tool's
    updates, with the subgraph's namespace."""
    async def scenario(E):
        seen = []
        client = MultiServerMCPClient(_connections(), callbacks=_forwarding_callbacks(E, seen))
        tools = await client.get_tools()
        model = _model(_calls("a1", ("index_documents", {"folder": "docs", "count": 3}, "c1")),
                       _say("Indexed.", "a2"))
        inner = _agent(E, model, _pick(tools, "index_documents"))
        outer = E.StateGraph(E.MessagesState)
        outer.add_node("assistant", inner)
        outer.add_edge(E.START, "assistant")
        app = outer.compile()
        chunks = await acollect(lambda: app.astream(_hi("index docs"), stream_mode=["custom", "updates"],
                                                    subgraphs=True))
        return chunks, seen

    ref = differential(scenario)
    custom = [c[2] for c in ref[0] if c[1] == "custom"]
    assert custom == [
        {"log": "info", "data": "indexing docs"},
        {"tool": "index_documents", "progress": 1.0, "total": 3.0, "message": "docs/doc1"},
        {"tool": "index_documents", "progress": 2.0, "total": 3.0, "message": "docs/doc2"},
        {"tool": "index_documents", "progress": 3.0, "total": 3.0, "message": "docs/doc3"},
        {"log": "warning", "data": "docs: 1 document skipped"}]


def test_progress_of_a_long_lived_session_is_handled_outside_the_graph(differential):
    """With `client.session(...)` opened before the graph runs, MCP handles notifications
    in the session's own task, outside any node: `get_stream_writer()` in the callbacks
    raises there (on LangGraph too), the MCP SDK logs the callbacks' errors and goes on,
    the tool's result still arrives and the custom stream stays empty. (lgnb's error adds
    a line saying where the call works; its first line is LangGraph's message.)"""
    async def scenario(E):
        seen = []
        callbacks = _forwarding_callbacks(E, seen)
        client = MultiServerMCPClient(_connections(), callbacks=callbacks)
        model = _model(_calls("a1", ("index_documents", {"folder": "notes", "count": 2}, "c1")),
                       _say("Indexed.", "a2"))
        with logged_warnings() as logged:
            async with client.session("demo") as session:
                tools = await load_mcp_tools(session, callbacks=callbacks, server_name="demo")
                app = _agent(E, model, _pick(tools, "index_documents"))
                chunks = await acollect(lambda: app.astream(_hi("index"), stream_mode=["custom", "updates"]))
        # each log line up to the error's first line (lgnb adds a line of help to it)
        return chunks, seen, [line.split(". Message was:")[0].splitlines()[0] for line in logged]

    ref = differential(scenario)
    assert not [c for c in ref[0] if c[0] == "custom"]
    outside = "Called get_config outside of a runnable context"
    assert ref[2] == [f"Failed to validate notification: {outside}",
                      f"Progress callback raised an exception: {outside}",
                      f"Progress callback raised an exception: {outside}",
                      f"Failed to validate notification: {outside}"]


# --- tool interceptors ------------------------------------------------------------------------------


def _interceptors(seen):
    """Interceptors as users write them (first is outermost): one noting what the tool
    call sees of the graph (`request.runtime`: the ToolNode's `ToolRuntime` with the
    state, context, store, config and tool call id) and writing to the custom stream
    through it; one answering `lookup_city` from a cache without calling the server; one
    filling the `user` argument from the run's context; one retrying a failed `divide`
    with a safe divisor."""
    cache = {"Oslo": "Oslo is in Norway (cached)"}

    async def observe(request, handler):
        rt = request.runtime
        item = rt.store.get(("users",), rt.context["user"]) if rt.store is not None else None
        seen.append({"tool": request.name, "args": request.args, "server": request.server_name,
                     "runtime": type(rt).__name__, "tool_call_id": rt.tool_call_id,
                     "messages": [m.content for m in rt.state["messages"]], "context": rt.context,
                     "thread": rt.config["configurable"].get("thread_id"),
                     "node": rt.config["metadata"].get("langgraph_node"),
                     "stored": item.value if item else None})
        rt.stream_writer({"calling": request.name})
        result = await handler(request)
        rt.stream_writer({"called": request.name})
        return result

    async def cached(request, handler):
        from langchain_core.messages import ToolMessage

        if request.name == "lookup_city" and request.args.get("name") in cache:
            return ToolMessage(cache[request.args["name"]], tool_call_id=request.runtime.tool_call_id,
                               name=request.name)
        return await handler(request)

    async def fill_user(request, handler):
        if request.name == "echo_args":
            request = request.override(args={**request.args, "user": request.runtime.context["user"],
                                             "times": 2})
        return await handler(request)

    async def retry(request, handler):
        result = await handler(request)
        if getattr(result, "isError", False) and request.name == "divide":
            seen.append(("retrying", request.name, [c.text for c in result.content]))
            return await handler(request.override(args={**request.args, "b": 1}))
        return result

    return [observe, cached, fill_user, retry]


@pytest.mark.parametrize("which", ["hand-written", "create_agent"])
def test_interceptors_rewrite_args_read_the_runtime_short_circuit_and_retry(differential, which):
    """The interceptors above around an agent run with a context, a store and a thread:
    what each saw, the custom stream they wrote, the tools' results in the state."""
    async def scenario(E):
        from langgraph.store.memory import InMemoryStore
        from typing_extensions import TypedDict

        class Ctx(TypedDict):
            user: str

        store = InMemoryStore()
        store.put(("users",), "ada", {"plan": "pro"})
        seen = []
        model = _model(
            _calls("a1", ("echo_args", {"text": "ab"}, "c1")),
            _calls("a2", ("lookup_city", {"name": "Oslo"}, "c2")),
            _calls("a3", ("divide", {"a": 6, "b": 0}, "c3")),
            _calls("a4", ("lookup_city", {"name": "Lima"}, "c4")),
            _say("All done.", "a5"))
        async with _mcp(tool_interceptors=_interceptors(seen)) as tools:
            tools = _pick(tools, "echo_args", "lookup_city", "divide")
            if which == "hand-written":
                app = _agent(E, model, tools, context_schema=Ctx, store=store,
                             checkpointer=E.InMemorySaver())
            else:
                from langchain.agents import create_agent

                app = _on(E, create_agent(model, tools, context_schema=Ctx, store=store,
                                          checkpointer=E.InMemorySaver()))
            chunks = await acollect(lambda: app.astream(_hi("go"), _cfg("t1"), context={"user": "ada"},
                                                        stream_mode=["custom", "updates"]))
        return chunks, seen

    ref = differential(scenario)
    custom = [c[1] for c in ref[0] if c[0] == "custom"]
    assert {"calling": "echo_args"} in custom and {"called": "divide"} in custom
    assert ("retrying", "divide", ["Error executing tool divide: cannot divide by zero"]) in ref[1]


# --- an interceptor returning a Command -------------------------------------------------------------


def _routing_graph(E, model, tools):
    """A hand-written agent whose state has a `city` key and a `report` node an
    interceptor's `Command` can route to."""
    from langgraph.prebuilt import ToolNode, tools_condition

    class S(E.MessagesState):
        city: str

    async def agent(state):
        return {"messages": [await model.ainvoke(state["messages"])]}

    def report(state):
        return {"messages": [("ai", f"report on {state['city']}")]}

    b = E.StateGraph(S)
    b.add_node("agent", agent)
    b.add_node("tools", ToolNode(tools))
    b.add_node("report", report)
    b.add_edge(E.START, "agent")
    b.add_conditional_edges("agent", tools_condition)
    b.add_edge("tools", "agent")
    return b.compile(checkpointer=E.InMemorySaver())


def _commanding(command_cls):
    """An interceptor turning `lookup_city`'s result into a `Command` that records the
    city in the state and routes to `report` (the adapter passes a Command through as the
    tool's result)."""
    async def to_report(request, handler):
        from langchain_core.messages import ToolMessage

        if request.name != "lookup_city":
            return await handler(request)
        result = await handler(request)
        return command_cls(update={"city": request.args["name"], "messages": [ToolMessage(
            result.content[0].text, tool_call_id=request.runtime.tool_call_id, name=request.name)]},
            goto="report")

    return to_report


async def _command_scenario(E, command_cls):
    model = _model(_calls("a1", ("lookup_city", {"name": "Oslo"}, "c1")), _say("Anything else?", "a2"))
    async with _mcp(tool_interceptors=[_commanding(command_cls)]) as tools:
        app = _routing_graph(E, model, _pick(tools, "lookup_city"))
        chunks = await acollect(lambda: app.astream(_hi("where is Oslo?"), _cfg(), stream_mode="updates"))
        state = await app.aget_state(_cfg())
    # the last step runs `report` beside the agent's next turn: their updates in either order
    return [*chunks[:-2], *sorted(chunks[-2:], key=repr)], snapshot_summary(state)


def test_interceptor_returning_langgraphs_command_updates_state_and_routes(differential):
    """The adapter's documented way: the interceptor returns `langgraph.types.Command`
    (the class `MCPToolCallResult` names). In the lgnb graph the ToolNode's Command is
    taken as lgnb's: `city` is set, `report` runs beside the agent's next turn."""
    async def scenario(E):
        from langgraph.types import Command

        return await _command_scenario(E, Command)

    ref = differential(scenario)
    assert ref[1]["values"]["city"] == "Oslo"
    assert {"report": {"messages": [("ai", "report on Oslo")]}} in ref[0]


@pytest.mark.xfail(
    not selftest_enabled(), strict=True, raises=AssertionError,
    reason="a ported program's interceptor returning lgnb's `Command` (from lgnb.types) fails "
           "the tool call on lgnb with AttributeError: 'Command' object has no attribute "
           "'content' (langchain_mcp_adapters.tools._convert_call_tool_result checks "
           "isinstance(result, langgraph.types.Command), else reads result.content), so the "
           "run raises; the same program on LangGraph updates `city` and routes to `report`")
def test_interceptor_returning_the_engines_command_updates_state_and_routes(differential):
    """The same program with its imports ported (`from lgnb.types import Command` in
    the interceptor)."""
    async def scenario(E):
        return await _command_scenario(E, E.Command)

    differential(scenario)


# --- human approval before an MCP tool runs ---------------------------------------------------------


@asynccontextmanager
async def _asaver(E, kind, tmp_path):
    """The engine's own checkpointer for async runs: in memory, or its `AsyncSqliteSaver`
    in a file of its own (the one `_agent_scenarios.saver` opens with the sync saver)."""
    if kind == "memory":
        yield E.InMemorySaver()
        return
    aio = importlib.import_module(f"{E.root}.checkpoint.sqlite.aio")
    async with aio.AsyncSqliteSaver.from_conn_string(str(tmp_path / f"{E.label}.db")) as saver:
        yield saver


def _approval(E):
    """An interceptor asking a human before `divide` or `fetch_page` runs: `interrupt()`
    with the call; "yes" runs it, an edit dict runs it with those arguments, anything
    else answers the model with the refusal instead of calling the server."""
    async def approve(request, handler):
        from langchain_core.messages import ToolMessage

        if request.name not in ("divide", "fetch_page"):
            return await handler(request)
        answer = E.interrupt({"tool": request.name, "args": request.args, "server": request.server_name})
        if answer == "yes":
            return await handler(request)
        if isinstance(answer, dict):
            return await handler(request.override(args=answer))
        return ToolMessage(f"the user refused: {answer}", tool_call_id=request.runtime.tool_call_id,
                           name=request.name, status="error")

    return approve




@pytest.mark.parametrize(("which", "kind"), [("hand-written", "memory"), ("hand-written", "sqlite"),
                                           ("create_agent", "sqlite"), ("create_react_agent", "memory")])
def test_interceptor_interrupts_for_approval_and_resumes(differential, which, kind, tmp_path):
    """The approval interceptor in an agent on a checkpointer: the run pauses
    with the call as the interrupt's value, `aget_state` shows the pending `tools` task
    and its interrupt; resumed with "yes" the tool runs; the next call is refused; one
    more is edited before it runs. Streams, states and the whole history as on LangGraph."""
    async def scenario(E):
        model = _model(
            _calls("a1", ("divide", {"a": 8, "b": 2}, "c1")),
            _calls("a2", ("divide", {"a": 1, "b": 0}, "c2")),
            _calls("a3", ("fetch_page", {"url": "http://x", "delay": 0}, "c3")),
            _say("Done.", "a4"))
        out = []
        async with _asaver(E, kind, tmp_path) as saver, _mcp(tool_interceptors=[_approval(E)]) as tools:
            app = _any_agent(E, which, model, _pick(tools, "divide", "fetch_page"), checkpointer=saver)
            out.append(await acollect(lambda: app.astream(_hi("8/2"), _cfg(), stream_mode="updates")))
            paused = await app.aget_state(_cfg())
            out.append(snapshot_summary(paused))
            for answer in ("yes", "no division by zero", {"url": "http://y", "delay": 0}):
                out.append(await acollect(lambda answer=answer: app.astream(
                    E.Command(resume=answer), _cfg(), stream_mode=["updates", "values"])))
                out.append(snapshot_summary(await app.aget_state(_cfg())))
            out.append(await _ahistory(app, _cfg()))
        if kind == "sqlite":  # later, a sync program reads the thread from the file
            with _saver(E, "sqlite", tmp_path) as sync_saver:
                app = _any_agent(E, which, model, _pick(tools, "divide", "fetch_page"),
                                 checkpointer=sync_saver)
                out.append(_history(app, _cfg()) == out[-1])
        return out

    ref = differential(scenario)
    if kind == "sqlite":
        assert ref[-1] is True
    assert ref[0][-1] == {"__interrupt__": (("Interrupt", {"tool": "divide", "args": {"a": 8, "b": 2},
                                                             "server": "demo"}, "<id1>"),)}
    assert ref[1]["next"] == ("tools",)


@pytest.mark.parametrize("which", ["hand-written", "create_agent"])
def test_two_parallel_calls_each_asking_for_approval(differential, which):
    """Two `fetch_page` calls in one turn, each interceptor asking. In the hand-written
    agent both calls run in the one ToolNode task: the run pauses on the first call's
    question, the resume answers it and pauses on the second. `create_agent` runs a task
    per call: both questions are pending at once. Answered by interrupt id, both pages
    are fetched, their messages in call order."""
    async def scenario(E):
        model = _model(_calls("a1", ("fetch_page", {"url": "a", "delay": 0}, "c1"),
                              ("fetch_page", {"url": "b", "delay": 0}, "c2")),
                       _say("Both fetched.", "a2"))
        out = []
        async with _mcp(tool_interceptors=[_approval(E)]) as tools:
            app = _any_agent(E, which, model, _pick(tools, "fetch_page"), checkpointer=E.InMemorySaver())
            first = await app.ainvoke(_hi("fetch a and b"), _cfg())
            out.append(first["__interrupt__"])
            while True:
                state = await app.aget_state(_cfg())
                if not state.interrupts:
                    break
                out.append(snapshot_summary(state))
                result = await app.ainvoke(E.Command(resume={i.id: "yes" for i in state.interrupts}), _cfg())
                out.append(result.get("__interrupt__"))
            out.append(_msgs(state.values))
        return out

    ref = differential(scenario)
    asked = [[i["args"]["url"] for i in s["interrupts"]] for s in ref[1:-1:2]]
    assert asked == ([["a"], ["b"]] if which == "hand-written" else [["a", "b"]])
    assert [m[1][0]["text"] for m in ref[-1] if m[0] == "tool"] == ["<html>a</html>", "<html>b</html>"]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_create_agent_hitl_middleware_reviews_mcp_tool_calls(differential, kind, tmp_path):
    """LangChain's `HumanInTheLoopMiddleware` gating MCP tools in `create_agent`: the
    review request lists the calls, the decisions approve one, edit one and reject one;
    only the approved and edited calls reach the server."""
    async def scenario(E):
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware

        model = _model(_calls("a1", ("add", {"a": 1, "b": 2}, "c1"), ("divide", {"a": 1, "b": 0}, "c2"),
                              ("lookup_city", {"name": "Lima"}, "c3")),
                       _say("Reviewed.", "a2"))
        async with _asaver(E, kind, tmp_path) as saver, _mcp() as tools:
            agent = _on(E, create_agent(model, _pick(tools, "add", "divide", "lookup_city"),
                                        middleware=[HumanInTheLoopMiddleware(
                                            {"add": True, "divide": True, "lookup_city": False})],
                                        checkpointer=saver))
            first = await agent.ainvoke(_hi("three"), _cfg())
            request = [i.value for i in first["__interrupt__"]]
            paused = snapshot_summary(await agent.aget_state(_cfg()))
            out = await agent.ainvoke(E.Command(resume={"decisions": [
                {"type": "approve"},
                {"type": "edit", "edited_action": {"name": "divide", "args": {"a": 1, "b": 4}}}]}),
                _cfg())
            hist = await _ahistory(agent, _cfg())
        return request, paused, _msgs(out), hist

    ref = differential(scenario)
    assert [m[2] for m in ref[2] if m[0] == "tool"] == ["add", "divide", "lookup_city"]


def test_approval_inside_a_subgraph_pauses_the_parent(differential):
    """The approving agent as a node of the user's outer graph: the pause shows in the
    parent's stream with the subgraph's namespace and in `aget_state(subgraphs=True)`;
    the resume given to the parent reaches the interceptor, the server is called."""
    async def scenario(E):
        model = _model(_calls("a1", ("divide", {"a": 9, "b": 3}, "c1")), _say("3.", "a2"))
        async with _mcp(tool_interceptors=[_approval(E)]) as tools:
            inner = _agent(E, model, _pick(tools, "divide"))
            outer = E.StateGraph(E.MessagesState)
            outer.add_node("assistant", inner)
            outer.add_edge(E.START, "assistant")
            app = outer.compile(checkpointer=E.InMemorySaver())
            paused = await acollect(lambda: app.astream(_hi("9/3"), _cfg(), stream_mode="updates",
                                                        subgraphs=True))
            state = snapshot_summary(await app.aget_state(_cfg(), subgraphs=True))
            resumed = await acollect(lambda: app.astream(E.Command(resume="yes"), _cfg(),
                                                         stream_mode="updates", subgraphs=True))
            final = await app.aget_state(_cfg())
        return paused, state, resumed, _msgs(final.values)

    ref = differential(scenario)
    assert ref[1]["tasks"][0][4]["interrupts"] == [{"tool": "divide", "args": {"a": 9, "b": 3}, "server": "demo"}]
    assert ref[3][-1][1] == "3."


# --- more of what users write around MCP tools ------------------------------------------------------


def test_tools_stream_mode_reports_mcp_tool_calls(differential):
    """`stream_mode=["tools", "updates"]` (LangGraph 1.2): `tool-started` and
    `tool-finished` for each MCP call with its input and output, a failed call as the
    ToolMessage its error handler made."""
    async def scenario(E):
        model = _model(_calls("a1", ("lookup_city", {"name": "Kyoto"}, "c1")),
                       _calls("a2", ("divide", {"a": 2, "b": 0}, "c2")),
                       _say("ok", "a3"))
        async with _mcp() as tools:
            app = _agent(E, model, _pick(tools, "lookup_city", "divide"))
            return await acollect(lambda: app.astream(_hi(), stream_mode=["tools", "updates"], subgraphs=True))

    ref = differential(scenario)
    assert [c[2]["event"] for c in ref if c[1] == "tools"] == [
        "tool-started", "tool-finished", "tool-started", "tool-finished"]


def test_create_agent_v3_stream_tool_calls_projection(differential):
    """`astream_events(version="v3")` on `create_agent` with MCP tools: its `tool_calls`
    projection yields a handle per MCP call with name, id, input, then output or error."""
    async def scenario(E):
        from langchain.agents import create_agent

        model = _model(_calls("a1", ("add", {"a": 20, "b": 22}, "c1")),
                       _calls("a2", ("divide", {"a": 2, "b": 0}, "c2")),
                       _say("42, and no.", "a3"))
        async with _mcp() as tools:
            app = _on(E, create_agent(model, _pick(tools, "add", "divide")))
            run = await app.astream_events(_hi("sums"), version="v3")
            handles = [c async for c in run.tool_calls]
            output = await run.output()
        return ([(c.tool_name, c.tool_call_id, c.input, c.output, c.error, c.completed) for c in handles],
                _msgs(output))

    ref = differential(scenario)
    assert [(name, cid) for name, cid, *_ in ref[0]] == [("add", "c1"), ("divide", "c2")]


def test_functional_api_agent_calls_mcp_tools_in_tasks(differential):
    """The functional API agent of LangGraph's docs with MCP tools: an `@entrypoint`
    calling the model and one `@task` per tool call (started together, awaited in order),
    saved on a checkpointer; a second turn on the thread continues from `previous`."""
    async def scenario(E):
        from langchain_core.messages import ToolMessage

        model = _model(
            _calls("a1", ("add", {"a": 1, "b": 2}, "c1"), ("lookup_city", {"name": "Lima"}, "c2")),
            _say("3, and Lima is in Peru.", "a2"),
            _calls("a3", ("divide", {"a": 1, "b": 0}, "c3")),
            _say("Cannot.", "a4"))
        async with _mcp() as tools:
            by_name = {t.name: t for t in tools}

            @E.func.task
            async def call_model(messages):
                return await model.ainvoke(messages)

            @E.func.task
            async def call_tool(tool_call):
                return await by_name[tool_call["name"]].ainvoke(tool_call)

            @E.func.entrypoint(checkpointer=E.InMemorySaver())
            async def agent(messages, *, previous=None):
                messages = E.add_messages(previous or [], messages)
                reply = await call_model(messages)
                while reply.tool_calls:
                    results = [call_tool(tc) for tc in reply.tool_calls]
                    done = [await r for r in results]
                    assert all(isinstance(m, ToolMessage) for m in done)
                    messages = E.add_messages(messages, [reply, *done])
                    reply = await call_model(messages)
                messages = E.add_messages(messages, reply)
                return E.func.entrypoint.final(value=reply, save=messages)

            first = await acollect(lambda: agent.astream([HumanMessage("sum and city", id="h1")], _cfg(),
                                                         stream_mode="updates"))
            second = await agent.ainvoke([HumanMessage("1/0?", id="h2")], _cfg())
            state = await agent.aget_state(_cfg())
        return (steps_as_multisets(first, lambda c: "call_model" in c or "agent" in c),
                second, state.values, model.seen)

    ref = differential(scenario)
    assert ref[1][1]["content"] == "Cannot."
    # the second turn's first model call saw the first turn, saved as `previous`
    assert [t for t, _ in ref[3][2]] == ["human", "ai", "tool", "tool", "ai", "human"]


def test_nodes_calling_mcp_tools_prompts_and_resources_directly(differential):
    """No model: nodes of the user's graph read an MCP resource and a prompt over the
    open session and call an MCP tool directly (`await tool.ainvoke(args)`: the content
    blocks; with a tool call dict: the ToolMessage with its artifact). An interceptor sees
    no runtime there (`request.runtime` is None: not called by a ToolNode)."""
    async def scenario(E):
        from langchain_mcp_adapters.prompts import load_mcp_prompt
        from langchain_mcp_adapters.resources import load_mcp_resources
        from typing_extensions import TypedDict

        class S(TypedDict, total=False):
            notes: str
            prompt: list
            sum: list
            forecast: object

        runtimes = []

        async def note_runtime(request, handler):
            runtimes.append((request.name, request.runtime))
            return await handler(request)

        client = MultiServerMCPClient(_connections())
        async with client.session("demo") as session:
            tools = {t.name: t for t in await load_mcp_tools(session, tool_interceptors=[note_runtime])}

            async def read_notes(state):
                blobs = await load_mcp_resources(session, uris=["notes://team"])
                return {"notes": blobs[0].as_string()}

            async def build_prompt(state):
                msgs = await load_mcp_prompt(session, "triage", arguments={"ticket": state["notes"]})
                return {"prompt": [(m.type, m.content) for m in msgs]}

            async def compute(state):
                return {"sum": await tools["add"].ainvoke({"a": 5, "b": 6}),
                        "forecast": await tools["forecast"].ainvoke(
                            {"name": "forecast", "args": {"city": "Rome"}, "id": "f1", "type": "tool_call"})}

            b = E.StateGraph(S)
            for node in (read_notes, build_prompt, compute):
                b.add_node(node)
            b.add_edge(E.START, "read_notes")
            b.add_edge("read_notes", "build_prompt")
            b.add_edge("build_prompt", "compute")
            app = b.compile()
            chunks = await acollect(lambda: app.astream({}, stream_mode="updates"))
        return chunks, runtimes

    ref = differential(scenario)
    assert ref[1] == [("add", None), ("forecast", None)]
