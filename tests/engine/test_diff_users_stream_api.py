"""The streaming API surfaces users write against: `stream(version="v2")` parts (every mode,
lists of modes, subgraphs, interrupts, resume, errors), `invoke(version="v2")`'s
`GraphOutput`, their async twins, `stream_events(version="v3")` / `astream_events` run
streams (values, messages with streamed text / tool calls / usage, lifecycle, subgraph
handles, interrupts, custom transformers, abandoned runs) and `stream_mode="tools"`."""

import asyncio
import operator
from collections.abc import Iterator
from typing import Annotated

import pytest
from _diff import acollect, collect
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from typing_extensions import TypedDict


class S(TypedDict):
    log: Annotated[list, operator.add]


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


class ToolCallingFake(BaseChatModel):
    """A deterministic chat model that streams text, then one tool call in two argument
    chunks, then usage — the shape of a real provider's stream."""

    text: str = "let me check"

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    def _chunks(self):
        for word in self.text.split(" "):
            yield AIMessageChunk(content=word + " ")
        yield AIMessageChunk(content="", tool_call_chunks=[
            {"name": "lookup", "args": '{"city": ', "id": "call_1", "index": 0}])
        yield AIMessageChunk(content="", tool_call_chunks=[
            {"name": None, "args": '"Paris"}', "id": None, "index": 0}])
        yield AIMessageChunk(content="", usage_metadata={
            "input_tokens": 5, "output_tokens": 7, "total_tokens": 12}, chunk_position="last")

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        msg = None
        for c in self._chunks():
            msg = c if msg is None else msg + c
        return ChatResult(generations=[ChatGeneration(message=AIMessage(
            content=msg.content, tool_calls=msg.tool_calls, usage_metadata=msg.usage_metadata))])

    def _stream(self, messages, stop=None, run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs) -> Iterator[ChatGenerationChunk]:
        for c in self._chunks():
            chunk = ChatGenerationChunk(message=c)
            if run_manager:
                run_manager.on_llm_new_token(c.content if isinstance(c.content, str) else "", chunk=chunk)
            yield chunk


def _fake(*texts):
    return GenericFakeChatModel(messages=iter([AIMessage(content=t) for t in texts]))


def _msgs_state(E):
    class M(TypedDict):
        messages: Annotated[list, E.add_messages]

    return M


def _one_node_app(E, schema, name, node, **compile_kw):
    """START -> name: the one-node graph that wraps a node or subgraph, compiled with compile_kw."""
    g = E.StateGraph(schema)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(**compile_kw)


def _part(p):
    """A v2 stream part as a comparable tuple of its keys and values (key set included)."""
    return tuple(sorted(p.keys())), p["type"], p["ns"], p["data"], p.get("interrupts", "<absent>")


# ---------------------------------------------------------------------------------------
# stream(version="v2"): part dicts
# ---------------------------------------------------------------------------------------


def _writer_graph(E, checkpointer=None):
    def a(s):
        E.get_stream_writer()({"step": "a"})
        return {"log": ["a"]}

    g = E.StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(E.START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=checkpointer)


def test_v2_parts_for_every_mode_in_one_list_with_a_checkpointer(differential):
    def scenario(E):
        app = _writer_graph(E, E.InMemorySaver())
        modes = ["values", "updates", "custom", "tasks", "checkpoints", "debug"]
        return [_part(p) for p in app.stream({"log": []}, _cfg(), stream_mode=modes, version="v2")]

    differential(scenario)


def test_v2_messages_parts_carry_chunk_and_metadata(differential):
    def scenario(E):
        model = _fake("hi there")

        def call(s):
            return {"messages": [model.invoke(s["messages"])]}

        g = E.StateGraph(_msgs_state(E))
        g.add_node("call", call)
        g.add_edge(E.START, "call")
        out = []
        for p in g.compile().stream({"messages": [HumanMessage("q", id="h")]},
                                    stream_mode=["messages", "updates"], version="v2"):
            if p["type"] == "messages":
                chunk, meta = p["data"]
                out.append(("messages", type(p["data"]).__name__, type(chunk).__name__, chunk.content,
                            meta["langgraph_node"], meta["langgraph_step"], p["ns"]))
            else:
                out.append(_part(p))
        return out

    differential(scenario)


def test_v2_interrupt_shows_on_values_and_updates_parts_then_resume_streams_on(differential):
    def scenario(E):
        def ask(s):
            answer = E.interrupt({"question": "name?"})
            return {"log": [f"hello {answer}"]}

        g = E.StateGraph(S)
        g.add_node("before", lambda s: {"log": ["before"]})
        g.add_node("ask", ask)
        g.add_edge(E.START, "before")
        g.add_edge("before", "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = [_part(p) for p in app.stream({"log": []}, _cfg(), stream_mode=["values", "updates"],
                                              version="v2")]
        second = [_part(p) for p in app.stream(E.Command(resume="Ada"), _cfg(),
                                               stream_mode=["values", "updates"], version="v2")]
        return first, second

    differential(scenario)


def test_v2_single_values_mode_interrupt_part(differential):
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt("ok?")]}

        app = _one_node_app(E, S, "ask", ask, checkpointer=E.InMemorySaver())
        return [_part(p) for p in app.stream({"log": ["in"]}, _cfg(), stream_mode="values", version="v2")]

    differential(scenario)


def test_v2_interrupt_inside_subgraph_with_subgraphs_true_and_resume(differential):
    def scenario(E):
        def review(s):
            return {"log": [E.interrupt({"draft": s["log"][-1]})]}

        sub = E.StateGraph(S)
        sub.add_node("draft", lambda s: {"log": ["draft"]})
        sub.add_node("review", review)
        sub.add_edge(E.START, "draft")
        sub.add_edge("draft", "review")
        g = E.StateGraph(S)
        g.add_node("writer", sub.compile())
        g.add_node("publish", lambda s: {"log": ["published"]})
        g.add_edge(E.START, "writer")
        g.add_edge("writer", "publish")
        app = g.compile(checkpointer=E.InMemorySaver())
        modes = ["updates", "values"]
        first = [_part(p) for p in app.stream({"log": []}, _cfg(), stream_mode=modes, subgraphs=True,
                                              version="v2")]
        second = [_part(p) for p in app.stream(E.Command(resume="approved"), _cfg(), stream_mode=modes,
                                               subgraphs=True, version="v2")]
        return first, second

    differential(scenario)


def test_v2_static_breakpoint_interrupt_before_parts(differential):
    def scenario(E):
        app = _writer_graph(E, E.InMemorySaver())
        first = [_part(p) for p in app.stream({"log": []}, _cfg(), stream_mode=["values", "updates"],
                                              interrupt_before=["b"], version="v2")]
        second = [_part(p) for p in app.stream(None, _cfg(), stream_mode=["values", "updates"],
                                               version="v2")]
        return first, second

    differential(scenario)


def test_v2_error_mid_stream_yields_earlier_parts_then_raises(differential):
    def scenario(E):
        def boom(s):
            E.get_stream_writer()("about to fail")
            raise RuntimeError("db down")

        g = E.StateGraph(S)
        g.add_node("ok", lambda s: {"log": ["ok"]})
        g.add_node("boom", boom)
        g.add_edge(E.START, "ok")
        g.add_edge("ok", "boom")
        return collect(lambda: (_part(p) for p in g.compile().stream(
            {"log": []}, stream_mode=["updates", "custom", "tasks"], version="v2")))

    differential(scenario)


def test_v2_error_inside_subgraph_with_subgraphs_true(differential):
    def scenario(E):
        def bad(s):
            raise ValueError("inner failed")

        sub = E.StateGraph(S)
        sub.add_node("fine", lambda s: {"log": ["fine"]})
        sub.add_node("bad", bad)
        sub.add_edge(E.START, "fine")
        sub.add_edge("fine", "bad")
        return collect(lambda: (_part(p) for p in _one_node_app(E, S, "sub", sub.compile()).stream(
            {"log": []}, stream_mode=["updates", "tasks"], subgraphs=True, version="v2")))

    differential(scenario)


def test_v2_command_goto_and_send_map_reduce_parts(differential):
    def scenario(E):
        class St(TypedDict):
            topics: list
            jokes: Annotated[list, operator.add]

        def plan(s):
            return E.Command(update={"topics": ["cats", "dogs"]}, goto=[E.Send("joke", {"t": t}) for t in
                                                                        ["cats", "dogs"]])

        g = E.StateGraph(St)
        g.add_node("plan", plan)
        g.add_node("joke", lambda s: {"jokes": [f"joke about {s['t']}"]})
        g.add_edge(E.START, "plan")
        parts = [_part(p) for p in g.compile().stream({"topics": [], "jokes": []},
                                                       stream_mode=["updates", "values"], version="v2")]
        # the two jokes run in parallel (threads on LangGraph): their updates in either order
        at = [i for i, p in enumerate(parts) if p[1] == "updates" and "joke" in p[3]]
        for i, p in zip(at, sorted((parts[i] for i in at), key=repr)):
            parts[i] = p
        return parts

    differential(scenario)


def test_v2_output_keys_and_output_schema_shape_values_parts(differential):
    def scenario(E):
        class In(TypedDict):
            question: str

        class Out(TypedDict):
            answer: str

        class All(In, Out):
            scratch: str

        g = E.StateGraph(All, input_schema=In, output_schema=Out)
        g.add_node("think", lambda s: {"scratch": "hmm"})
        g.add_node("answer", lambda s: {"answer": s["question"].upper()})
        g.add_edge(E.START, "think")
        g.add_edge("think", "answer")
        app = g.compile()
        a = [_part(p) for p in app.stream({"question": "why"}, stream_mode=["values", "updates"], version="v2")]
        b = [_part(p) for p in app.stream({"question": "why"}, stream_mode="values", output_keys=["scratch"],
                                          version="v2")]
        return a, b

    differential(scenario)


def test_v2_functional_entrypoint_parts_with_task_and_interrupt(differential):
    def scenario(E):
        @E.func.task
        def double(x):
            return x * 2

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x):
            y = double(x).result()
            ok = E.interrupt({"y": y})
            return {"y": y, "ok": ok}

        # each part as a consumer printing it live sees it (LangGraph later pops
        # "__interrupt__" out of the dict its updates and values parts share)
        modes = ["updates", "values", "custom"]
        first = [repr(_part(p)) for p in wf.stream(3, _cfg(), stream_mode=modes, version="v2")]
        second = [repr(_part(p)) for p in wf.stream(E.Command(resume=True), _cfg(), stream_mode=modes,
                                                    version="v2")]
        return first, second

    differential(scenario)


# ---------------------------------------------------------------------------------------
# invoke(version="v2") -> GraphOutput
# ---------------------------------------------------------------------------------------


def test_invoke_v2_interrupt_then_resume_graph_outputs(differential):
    def scenario(E):
        def approve(s):
            decision = E.interrupt({"action": "send email"})
            return {"log": [decision]}

        app = _one_node_app(E, S, "approve", approve, checkpointer=E.InMemorySaver())
        first = app.invoke({"log": ["req"]}, _cfg(), version="v2")
        iid = first.interrupts[0].id
        second = app.invoke(E.Command(resume={iid: "yes"}), _cfg(), version="v2")
        v1 = app.invoke({"log": ["again"]}, _cfg("other"))
        return (first.value, [(i.value, type(i).__name__) for i in first.interrupts], second,
                v1, "__interrupt__" in first.value)

    differential(scenario)


def test_invoke_v2_two_parallel_interrupts_listed_in_graph_output(differential):
    def scenario(E):
        def ask_a(s):
            return {"log": [E.interrupt("a?")]}

        def ask_b(s):
            return {"log": [E.interrupt("b?")]}

        g = E.StateGraph(S)
        g.add_node("ask_a", ask_a)
        g.add_node("ask_b", ask_b)
        g.add_edge(E.START, "ask_a")
        g.add_edge(E.START, "ask_b")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = app.invoke({"log": []}, _cfg(), version="v2")
        values = sorted(i.value for i in out.interrupts)
        resume = {i.id: f"ans-{i.value}" for i in out.interrupts}
        done = app.invoke(E.Command(resume=resume), _cfg(), version="v2")
        return out.value, values, sorted(done.value["log"]), done.interrupts

    differential(scenario)


def test_invoke_v2_with_typed_output_schema_and_interrupt(differential):
    def scenario(E):
        class Out(TypedDict):
            answer: str

        class All(TypedDict):
            question: str
            answer: str

        def ask(s):
            return {"answer": E.interrupt(s["question"])}

        g = E.StateGraph(All, output_schema=Out)
        g.add_node("ask", ask)
        g.add_edge(E.START, "ask")
        app = g.compile(checkpointer=E.InMemorySaver())
        a = app.invoke({"question": "why?"}, _cfg(), version="v2")
        b = app.invoke(E.Command(resume="because"), _cfg(), version="v2")
        return a, b

    differential(scenario)


def test_invoke_v2_error_raises_like_v1(differential):
    def scenario(E):
        def boom(s):
            raise KeyError("missing")

        app = _one_node_app(E, S, "boom", boom)
        return (collect(lambda: [app.invoke({"log": []}, version="v2")]),
                collect(lambda: [app.invoke({"log": []})]))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# async v2 twins
# ---------------------------------------------------------------------------------------


def test_astream_v2_subgraph_interrupt_and_resume_parts(differential):
    async def scenario(E):
        async def review(s):
            return {"log": [E.interrupt("review?")]}

        sub = E.StateGraph(S)
        sub.add_node("review", review)
        sub.add_edge(E.START, "review")
        app = _one_node_app(E, S, "sub", sub.compile(), checkpointer=E.InMemorySaver())
        modes = ["updates", "values", "tasks"]
        first = [_part(p) async for p in app.astream({"log": []}, _cfg(), stream_mode=modes, subgraphs=True,
                                                     version="v2")]
        second = [_part(p) async for p in app.astream(E.Command(resume="lgtm"), _cfg(), stream_mode=modes,
                                                      subgraphs=True, version="v2")]
        final = await app.ainvoke(None, _cfg(), version="v2")
        return first, second, final

    differential(scenario)


def test_ainvoke_v2_interrupt_graph_output(differential):
    async def scenario(E):
        async def ask(s):
            return {"log": [E.interrupt({"q": 1})]}

        app = _one_node_app(E, S, "ask", ask, checkpointer=E.InMemorySaver())
        a = await app.ainvoke({"log": []}, _cfg(), version="v2")
        b = await app.ainvoke(E.Command(resume="x"), _cfg(), version="v2")
        return a, b

    differential(scenario)


def test_astream_v2_messages_from_async_model_and_error_after(differential):
    async def scenario(E):
        model = _fake("alpha beta")

        async def call(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        async def fail(s):
            raise RuntimeError("after model")

        g = E.StateGraph(_msgs_state(E))
        g.add_node("call", call)
        g.add_node("fail", fail)
        g.add_edge(E.START, "call")
        g.add_edge("call", "fail")

        async def run():
            async for p in g.compile().astream({"messages": [HumanMessage("q", id="h")]},
                                               stream_mode=["messages", "updates"], version="v2"):
                if p["type"] == "messages":
                    chunk, meta = p["data"]
                    yield ("messages", chunk.content, meta["langgraph_node"])
                else:
                    yield _part(p)

        return await acollect(run)

    differential(scenario)


# ---------------------------------------------------------------------------------------
# stream_events(version="v3")
# ---------------------------------------------------------------------------------------


def _chat_graph(E, model, checkpointer=None):
    def agent(s):
        return {"messages": [model.invoke(s["messages"])]}

    g = E.StateGraph(_msgs_state(E))
    g.add_node("agent", agent)
    g.add_edge(E.START, "agent")
    return g.compile(checkpointer=checkpointer)


def test_v3_messages_stream_text_tool_calls_and_usage(differential):
    def scenario(E):
        run = _chat_graph(E, ToolCallingFake()).stream_events(
            {"messages": [HumanMessage("weather?", id="h")]}, version="v3")
        out = []
        for stream in run.messages:
            deltas = list(stream.text)
            calls = list(stream.tool_calls)
            final = stream.output
            out.append((stream.node, deltas, calls, final.tool_calls, final.usage_metadata, final.content))
        return out, run.output["messages"][-1].tool_calls

    differential(scenario)


def test_v3_messages_from_two_nodes_and_a_node_returning_a_plain_ai_message(differential):
    def scenario(E):
        m1, m2 = _fake("first answer"), _fake("second answer")

        g = E.StateGraph(_msgs_state(E))
        g.add_node("one", lambda s: {"messages": [m1.invoke(s["messages"])]})
        g.add_node("canned", lambda s: {"messages": [AIMessage("canned reply", id="canned")]})
        g.add_node("two", lambda s: {"messages": [m2.invoke(s["messages"])]})
        g.add_edge(E.START, "one")
        g.add_edge("one", "canned")
        g.add_edge("canned", "two")
        run = g.compile().stream_events({"messages": [HumanMessage("q", id="h")]}, version="v3")
        return [(s.node, str(s.text), s.message_id == "canned") for s in run.messages]

    differential(scenario)


def test_v3_text_read_as_str_after_the_run(differential):
    def scenario(E):
        run = _chat_graph(E, _fake("one two three")).stream_events(
            {"messages": [HumanMessage("q", id="h")]}, version="v3")
        streams = list(run.messages)
        return [(str(s.text), s.done, s.output.content) for s in streams], run.output is not None

    differential(scenario)


def test_v3_interleave_values_and_messages_in_arrival_order(differential):
    def scenario(E):
        run = _chat_graph(E, _fake("a b")).stream_events({"messages": [HumanMessage("q", id="h")]},
                                                         version="v3")
        out = []
        for name, item in run.interleave("values", "messages", "lifecycle"):
            if name == "messages":
                out.append((name, item.node, str(item.text)))
            elif name == "values":
                out.append((name, [m.content for m in item["messages"]]))
            else:
                out.append((name, item))
        return out

    differential(scenario)


def test_v3_model_tokens_in_subgraph_reach_the_subgraph_handle_not_the_root(differential):
    def scenario(E):
        M = _msgs_state(E)
        model = _fake("inner words")
        sub = E.StateGraph(M)
        sub.add_node("think", lambda s: {"messages": [model.invoke(s["messages"])]})
        sub.add_edge(E.START, "think")
        run = _one_node_app(E, M, "researcher", sub.compile()).stream_events({"messages": [HumanMessage("q", id="h")]}, version="v3")
        handles = []
        for h in run.subgraphs:
            handles.append((h.graph_name, h.path[0].split(":")[0],
                            [(m.node, str(m.text)) for m in h.messages]))
            handles.append(("status", h.status))
        root_msgs = [m.node for m in run.messages]
        return handles, root_msgs

    differential(scenario)


def test_v3_raw_event_log_of_a_model_node(differential):
    def scenario(E):
        run = _chat_graph(E, _fake("x y")).stream_events({"messages": [HumanMessage("q", id="h")]},
                                                         version="v3")
        out = []
        for ev in run:
            p = ev["params"]
            data = p["data"]
            if ev["method"] == "messages":
                payload, meta = data
                data = (payload, meta.get("langgraph_node"))
            elif ev["method"] == "values":
                data = [m.content for m in data["messages"]]
            out.append((ev["type"], ev["method"], p["namespace"], data, "interrupts" in p))
        return out

    differential(scenario)


def test_v3_lifecycle_for_nested_subgraphs_with_failure(differential):
    def scenario(E):
        def bad(s):
            raise ValueError("leaf failed")

        leaf = E.StateGraph(S)
        leaf.add_node("bad", bad)
        leaf.add_edge(E.START, "bad")
        mid = E.StateGraph(S)
        mid.add_node("ok", lambda s: {"log": ["ok"]})
        mid.add_node("leaf", leaf.compile())
        mid.add_edge(E.START, "ok")
        mid.add_edge("ok", "leaf")
        run = _one_node_app(E, S, "mid", mid.compile()).stream_events({"log": []}, version="v3")
        seen = []
        try:
            for ev in run.lifecycle:
                seen.append({k: v for k, v in ev.items()})
        except ValueError as e:
            seen.append(("raised", str(e)))
        return seen

    differential(scenario)


def test_v3_interrupt_in_subgraph_marks_handle_and_run_then_resume(differential):
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt({"need": "approval"})]}

        sub = E.StateGraph(S)
        sub.add_node("ask", ask)
        sub.add_edge(E.START, "ask")
        g = E.StateGraph(S)
        g.add_node("approval", sub.compile())
        g.add_node("after", lambda s: {"log": ["after"]})
        g.add_edge(E.START, "approval")
        g.add_edge("approval", "after")
        app = g.compile(checkpointer=E.InMemorySaver())
        run = app.stream_events({"log": []}, _cfg(), version="v3")
        lifecycle = list(run.lifecycle)
        first = (run.interrupted, [i.value for i in run.interrupts], run.output, lifecycle)
        resumed = app.stream_events(E.Command(resume="granted"), _cfg(), version="v3")
        values = list(resumed.values)
        return first, values, resumed.interrupted, resumed.output, app.get_state(_cfg()).next

    differential(scenario)


def test_v3_interrupt_before_kwarg_and_resume_with_none(differential):
    def scenario(E):
        app = _writer_graph(E, E.InMemorySaver())
        run = app.stream_events({"log": []}, _cfg(), version="v3", interrupt_before=["b"])
        vals = list(run.values)
        first = (vals, run.interrupted, run.interrupts, app.get_state(_cfg()).next)
        again = app.stream_events(None, _cfg(), version="v3")
        return first, list(again.values), again.output

    differential(scenario)


def test_v3_custom_transformer_counting_events_and_collecting_custom_data(differential):
    def scenario(E):
        st = E.module("stream")

        class Progress(st.StreamTransformer):
            required_stream_modes = ("custom",)

            def __init__(self, scope=()):
                super().__init__(scope)
                self.channel = st.StreamChannel()

            def init(self):
                return {"progress": self.channel}

            def process(self, event):
                if event["method"] == "custom" and event["params"]["namespace"] == list(self.scope):
                    self.channel.push(event["params"]["data"]["step"])
                return True

        app = _writer_graph(E)
        run = app.stream_events({"log": []}, version="v3", transformers=[Progress])
        progress = list(run.extensions["progress"])
        return progress, run.output, sorted(run.extensions)

    differential(scenario)


def test_v3_custom_transformer_suppressing_events_from_the_main_log(differential):
    def scenario(E):
        st = E.module("stream")

        class DropValues(st.StreamTransformer):
            required_stream_modes = ("updates",)

            def init(self):
                return {}

            def process(self, event):
                return event["method"] != "values"

        run = _writer_graph(E).stream_events({"log": []}, version="v3", transformers=[DropValues])
        methods = [ev["method"] for ev in run]
        return methods, run.output

    differential(scenario)


def test_v3_projection_is_single_consumer_and_tee_gives_two_cursors(differential):
    def scenario(E):
        run = _writer_graph(E).stream_events({"log": []}, version="v3")
        it = iter(run.values)
        try:
            iter(run.values)
            second = "ok"
        except Exception as e:
            second = (type(e).__name__, str(e))
        first = list(it)
        run2 = _writer_graph(E).stream_events({"log": []}, version="v3")
        a, b = run2.values.tee(2)
        return second, first, list(a), list(b)

    differential(scenario)


def test_v3_missing_projection_attribute_error(differential):
    def scenario(E):
        run = _writer_graph(E).stream_events({"log": []}, version="v3")
        try:
            return ("ok", run.updates)
        except AttributeError as e:
            return str(e)

    differential(scenario)


def test_v3_abandoning_the_run_stops_later_nodes(differential):
    def scenario(E):
        ran = []

        def step(name):
            def node(s):
                ran.append(name)
                return {"log": [name]}
            return node

        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, step(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        app = g.compile(checkpointer=E.InMemorySaver())
        with app.stream_events({"log": []}, _cfg(), version="v3") as run:
            for v in run.values:
                if v["log"] == ["a"]:
                    break
        after_with = list(ran)
        state = app.get_state(_cfg())
        return after_with, state.values, state.next

    differential(scenario)


def test_v3_abort_is_idempotent_and_output_after_abort(differential):
    def scenario(E):
        run = _writer_graph(E).stream_events({"log": []}, version="v3")
        first = next(iter(run.values))
        run.abort()
        run.abort()
        return first, run.output, run.interrupted

    differential(scenario)


def test_v3_error_surfaces_on_output_and_raw_iteration(differential):
    def scenario(E):
        def boom(s):
            raise RuntimeError("kaput")

        g = E.StateGraph(S)
        g.add_node("ok", lambda s: {"log": ["ok"]})
        g.add_node("boom", boom)
        g.add_edge(E.START, "ok")
        g.add_edge("ok", "boom")
        app = g.compile()
        out = [collect(lambda: [app.stream_events({"log": []}, version="v3").output])]
        out.append(collect(lambda: [e["method"] for e in app.stream_events({"log": []}, version="v3")]))
        out.append(collect(lambda: [app.stream_events({"log": []}, version="v3").interrupted]))
        return out

    differential(scenario)


def test_v3_context_and_config_kwargs_reach_nodes(differential):
    def scenario(E):
        class Ctx(TypedDict):
            user: str

        def greet(s, runtime: E.Runtime[Ctx]):
            return {"log": [f"hi {runtime.context['user']} {E.get_config()['configurable']['tag']}"]}

        g = E.StateGraph(S, context_schema=Ctx)
        g.add_node("greet", greet)
        g.add_edge(E.START, "greet")
        run = g.compile().stream_events({"log": []}, {"configurable": {"tag": "T"}}, version="v3",
                                        context={"user": "ada"})
        return list(run.values), run.output

    differential(scenario)


def test_v3_functional_entrypoint_values_and_messages(differential):
    def scenario(E):
        model = _fake("from a task")

        @E.func.task
        def ask_model(q):
            return model.invoke(q)

        @E.func.entrypoint()
        def wf(q):
            return ask_model(q).result().content

        run = wf.stream_events("question", version="v3")
        return [(m.node, str(m.text)) for m in run.messages], run.output

    differential(scenario)


# ---------------------------------------------------------------------------------------
# astream_events(version="v3")
# ---------------------------------------------------------------------------------------


def test_av3_messages_text_awaited_and_async_iterated(differential):
    async def scenario(E):
        model = ToolCallingFake(text="async tokens here")

        async def agent(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        g = E.StateGraph(_msgs_state(E))
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        run = await g.compile().astream_events({"messages": [HumanMessage("q", id="h")]}, version="v3")
        out = []
        async for stream in run.messages:
            deltas = [d async for d in stream.text]
            calls = [c async for c in stream.tool_calls]
            msg = await stream
            out.append((stream.node, deltas, calls, msg.tool_calls, msg.usage_metadata))
        return out, (await run.output())["messages"][-1].content

    differential(scenario)


def test_av3_subgraph_handles_and_lifecycle_async(differential):
    async def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", lambda s: {"log": ["inner"]})
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("first", sub.compile())
        g.add_node("second", sub.compile())
        g.add_edge(E.START, "first")
        g.add_edge("first", "second")
        run = await g.compile().astream_events({"log": []}, version="v3")
        seen = []
        async for h in run.subgraphs:
            seen.append((h.graph_name, [v async for v in h.values], await h.output()))
            seen.append(h.status)
        return seen, await run.output()

    differential(scenario)


def test_av3_interrupt_and_resume(differential):
    async def scenario(E):
        async def ask(s):
            return {"log": [E.interrupt("sure?")]}

        app = _one_node_app(E, S, "ask", ask, checkpointer=E.InMemorySaver())
        run = await app.astream_events({"log": []}, _cfg(), version="v3")
        first = (await run.interrupted(), [i.value for i in await run.interrupts()], await run.output())
        run2 = await app.astream_events(E.Command(resume="yes"), _cfg(), version="v3")
        return first, [v async for v in run2.values], await run2.interrupted()

    differential(scenario)


def test_av3_abandon_with_async_context_manager_stops_later_nodes(differential):
    async def scenario(E):
        ran = []

        def step(name):
            async def node(s):
                ran.append(name)
                return {"log": [name]}
            return node

        g = E.StateGraph(S)
        for n in ("a", "b", "c"):
            g.add_node(n, step(n))
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        app = g.compile(checkpointer=E.InMemorySaver())
        async with await app.astream_events({"log": []}, _cfg(), version="v3") as run:
            async for v in run.values:
                if v["log"] == ["a"]:
                    break
        state = await app.aget_state(_cfg())
        return list(ran), state.values, state.next

    differential(scenario)


def test_av3_error_in_async_node(differential):
    async def scenario(E):
        async def boom(s):
            raise ValueError("async kaput")

        run = await _one_node_app(E, S, "boom", boom).astream_events({"log": []}, version="v3")
        vals = []
        try:
            async for v in run.values:
                vals.append(v)
        except ValueError as e:
            vals.append(("raised", str(e)))
        return vals

    differential(scenario)


# ---------------------------------------------------------------------------------------
# stream_mode="tools"
# ---------------------------------------------------------------------------------------


def _tool_graph(E, calls, handle_tool_errors=True):
    from langgraph.prebuilt import ToolNode

    @tool
    def lookup(city: str) -> str:
        """Weather for a city."""
        return f"sunny in {city}"

    @tool
    def explode(reason: str) -> str:
        """Always fails."""
        raise ValueError(f"exploded: {reason}")

    def caller(s):
        return {"messages": [AIMessage(content="", tool_calls=calls, id="ai1")]}

    g = E.StateGraph(_msgs_state(E))
    g.add_node("caller", caller)
    g.add_node("tools", ToolNode([lookup, explode], handle_tool_errors=handle_tool_errors))
    g.add_edge(E.START, "caller")
    g.add_edge("caller", "tools")
    return g.compile()


def _tools_view(payload):
    out = dict(payload)
    if "output" in out:
        o = out["output"]
        out["output"] = (type(o).__name__, getattr(o, "content", o), getattr(o, "status", None),
                         getattr(o, "tool_call_id", None))
    return out


def test_tools_mode_v2_parts_for_two_calls_one_failing_handled(differential):
    def scenario(E):
        calls = [{"name": "lookup", "args": {"city": "Oslo"}, "id": "c1"},
                 {"name": "explode", "args": {"reason": "x"}, "id": "c2"}]
        parts = list(_tool_graph(E, calls).stream({"messages": []}, stream_mode="tools", version="v2"))
        events = [(p["type"], p["ns"], _tools_view(p["data"])) for p in parts]
        return sorted(events, key=repr)  # parallel tool calls finish in thread order

    differential(scenario)


def test_tools_mode_with_unhandled_tool_error(differential):
    def scenario(E):
        calls = [{"name": "explode", "args": {"reason": "boom"}, "id": "c9"}]
        app = _tool_graph(E, calls, handle_tool_errors=False)
        return collect(lambda: ((mode, _tools_view(data)) for mode, data in app.stream(
            {"messages": []}, stream_mode=["tools", "updates"]) if mode == "tools"))

    differential(scenario)


def test_tools_mode_v1_single_mode_yields_payloads(differential):
    def scenario(E):
        calls = [{"name": "lookup", "args": {"city": "Rome"}, "id": "c1"}]
        return [_tools_view(d) for d in _tool_graph(E, calls).stream({"messages": []}, stream_mode="tools")]

    differential(scenario)


def test_tools_mode_async(differential):
    async def scenario(E):
        calls = [{"name": "lookup", "args": {"city": "Lima"}, "id": "c1"}]
        app = _tool_graph(E, calls)
        return [(p["type"], _tools_view(p["data"])) async for p in
                app.astream({"messages": []}, stream_mode=["tools"], version="v2")]

    differential(scenario)


# ---------------------------------------------------------------------------------------
# more v2 parts: typed states, messages in subgraphs, debug with interrupts, drain
# ---------------------------------------------------------------------------------------


def test_v2_values_and_checkpoints_parts_coerced_to_pydantic_state(differential):
    import pydantic

    def scenario(E):
        class St(pydantic.BaseModel):
            topic: str
            notes: Annotated[list, operator.add] = []

        app = _one_node_app(E, St, "research", lambda s: {"notes": [f"about {s.topic}"]}, checkpointer=E.InMemorySaver())
        out = []
        for p in app.stream({"topic": "owls"}, _cfg(), stream_mode=["values", "checkpoints", "updates"],
                            version="v2"):
            d = p["data"]
            if p["type"] == "checkpoints":
                d = (type(d["values"]).__name__, d["values"], d["next"])
            out.append((p["type"], type(d).__name__, d, p.get("interrupts")))
        return out

    differential(scenario)


def test_v2_values_parts_coerced_to_dataclass_state_with_interrupt(differential):
    import dataclasses

    def scenario(E):
        @dataclasses.dataclass
        class St:
            q: str
            a: str = ""

        def ask(s):
            return {"a": E.interrupt(s.q)}

        app = _one_node_app(E, St, "ask", ask, checkpointer=E.InMemorySaver())
        first = [(p["type"], type(p["data"]).__name__, p["data"], p["interrupts"])
                 for p in app.stream({"q": "why"}, _cfg(), stream_mode="values", version="v2")]
        second = app.invoke(E.Command(resume="because"), _cfg(), version="v2")
        return first, second, type(second.value).__name__

    differential(scenario)


def test_v2_messages_parts_from_subgraph_carry_namespace_and_checkpoint_ns(differential):
    def scenario(E):
        M = _msgs_state(E)
        model = _fake("deep reply")
        sub = E.StateGraph(M)
        sub.add_node("llm", lambda s: {"messages": [model.invoke(s["messages"])]})
        sub.add_edge(E.START, "llm")
        g = E.StateGraph(M)
        g.add_node("team", sub.compile())
        g.add_edge(E.START, "team")
        out = []
        for p in g.compile().stream({"messages": [HumanMessage("q", id="h")]}, stream_mode="messages",
                                    subgraphs=True, version="v2"):
            chunk, meta = p["data"]
            out.append((p["ns"], chunk.content, meta["langgraph_node"], meta["langgraph_checkpoint_ns"],
                        meta.get("checkpoint_ns")))
        return out

    differential(scenario)


def test_v2_debug_parts_with_interrupt_show_task_interrupts(differential):
    def scenario(E):
        def ask(s):
            return {"log": [E.interrupt("continue?")]}

        app = _one_node_app(E, S, "ask", ask, checkpointer=E.InMemorySaver())
        return [_part(p) for p in app.stream({"log": []}, _cfg(), stream_mode="debug", version="v2")]

    differential(scenario)


def test_v2_consumer_requesting_drain_stops_at_step_boundary_and_resumes(differential):
    def scenario(E):
        ctl = E.runtime.RunControl()
        app = _writer_graph(E, E.InMemorySaver())
        seen = []

        def run():
            for p in app.stream({"log": []}, _cfg(), stream_mode=["updates"], version="v2", control=ctl):
                seen.append(p)
                ctl.request_drain("deploy")
                yield p

        parts = collect(run)
        state = app.get_state(_cfg())
        rest = list(app.stream(None, _cfg(), stream_mode="updates", version="v2"))
        return parts, state.next, state.values, rest, (ctl.drain_requested, ctl.drain_reason)

    differential(scenario)


def test_invoke_with_drain_requested_before_the_run(differential):
    def scenario(E):
        ctl = E.runtime.RunControl()
        ctl.request_drain()
        app = _writer_graph(E, E.InMemorySaver())
        try:
            app.invoke({"log": []}, _cfg(), control=ctl, version="v2")
            out = "ok"
        except E.errors.GraphDrained as e:
            out = ("GraphDrained", str(e), e.reason, isinstance(e, E.errors.GraphBubbleUp))
        return out, app.get_state(_cfg()).next

    differential(scenario)


# ---------------------------------------------------------------------------------------
# more v3: transformers registered at compile time, named channels, ordering traps
# ---------------------------------------------------------------------------------------


def test_v3_compile_time_transformers_give_updates_custom_tasks_projections(differential):
    def scenario(E):
        st = E.module("stream")
        sub = E.StateGraph(S)

        def inner(s):
            E.get_stream_writer()("inner-progress")
            return {"log": ["inner"]}

        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")

        def outer(s):
            E.get_stream_writer()("outer-progress")
            return {"log": ["outer"]}

        g = E.StateGraph(S)
        g.add_node("outer", outer)
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "outer")
        g.add_edge("outer", "sub")
        app = g.compile(transformers=[st.UpdatesTransformer, st.CustomTransformer, st.TasksTransformer])
        run = app.stream_events({"log": []}, version="v3")
        got = list(run.interleave("updates", "custom", "tasks", "values"))
        return got, sorted(run.extensions)

    differential(scenario)


def test_v3_subgraph_handle_has_the_extra_projections_too(differential):
    def scenario(E):
        st = E.module("stream")
        sub = E.StateGraph(S)

        def inner(s):
            E.get_stream_writer()({"pct": 50})
            return {"log": ["inner"]}

        sub.add_node("inner", inner)
        sub.add_edge(E.START, "inner")
        run = _one_node_app(E, S, "sub", sub.compile()).stream_events({"log": []}, version="v3",
                                        transformers=[st.UpdatesTransformer, st.CustomTransformer])
        out = []
        for h in run.subgraphs:
            out.append((h.graph_name, list(h.interleave("updates", "custom")), sorted(h.extensions)))
        return out, run.output

    differential(scenario)


def test_v3_named_channel_of_a_custom_transformer_is_forwarded_to_the_event_log(differential):
    def scenario(E):
        st = E.module("stream")

        class StepNames(st.StreamTransformer):
            required_stream_modes = ("updates",)

            def __init__(self, scope=()):
                super().__init__(scope)
                self.names = st.StreamChannel("step_names")

            def init(self):
                return {"step_names": self.names}

            def process(self, event):
                if event["method"] == "updates":
                    for name in event["params"]["data"]:
                        self.names.push(name)
                return True

        run = _writer_graph(E).stream_events({"log": []}, version="v3", transformers=[StepNames])
        return [(ev["method"], ev["params"]["namespace"], ev["params"]["data"]) for ev in run]

    differential(scenario)


def test_v3_before_builtins_transformer_redacts_streamed_text(differential):
    def scenario(E):
        st = E.module("stream")

        class Redact(st.StreamTransformer):
            before_builtins = True
            required_stream_modes = ("messages",)

            def init(self):
                return {}

            def process(self, event):
                if event["method"] == "messages":
                    payload, _meta = event["params"]["data"]
                    if isinstance(payload, dict) and payload.get("event") == "content-block-delta":
                        delta = payload.get("delta", {})
                        if delta.get("type") == "text-delta":
                            delta["text"] = delta["text"].replace("secret", "******")
                return True

        run = _chat_graph(E, _fake("the secret code")).stream_events(
            {"messages": [HumanMessage("q", id="h")]}, version="v3", transformers=[Redact])
        return [list(m.text) for m in run.messages]

    differential(scenario)


def test_v3_async_only_transformer_refused_on_the_sync_run(differential):
    def scenario(E):
        st = E.module("stream")

        class Slow(st.StreamTransformer):
            def init(self):
                return {}

            async def aprocess(self, event):
                return True

        try:
            run = _writer_graph(E).stream_events({"log": []}, version="v3", transformers=[Slow])
            return ("created", run.output)
        except Exception as e:
            return (type(e).__name__, str(e))

    differential(scenario)


def test_av3_async_transformer_with_aprocess_and_schedule(differential):
    async def scenario(E):
        st = E.module("stream")

        class Scores(st.StreamTransformer):
            required_stream_modes = ("updates",)

            def __init__(self, scope=()):
                super().__init__(scope)
                self.scores = st.StreamChannel()

            def init(self):
                return {"scores": self.scores}

            async def aprocess(self, event):
                if event["method"] == "updates":
                    for name in event["params"]["data"]:
                        async def score(n=name):
                            await asyncio.sleep(0)
                            self.scores.push((n, len(n)))
                        self.schedule(score())
                return True

        run = await _writer_graph(E).astream_events({"log": []}, version="v3", transformers=[Scores])
        scores = [s async for s in run.extensions["scores"]]
        return scores, await run.output()

    differential(scenario)


def test_v3_projection_read_after_output_is_empty(differential):
    def scenario(E):
        run = _writer_graph(E).stream_events({"log": []}, version="v3")
        out = run.output
        late_values = list(run.values)
        late_events = [e["method"] for e in run]
        return out, late_values, late_events

    differential(scenario)


def test_v3_interleave_unknown_projection_and_busy_channel(differential):
    def scenario(E):
        run = _writer_graph(E).stream_events({"log": []}, version="v3")
        out = []
        try:
            list(run.interleave("values", "updates"))
        except KeyError as e:
            out.append(("KeyError", str(e)))
        it = iter(run.values)
        try:
            list(run.interleave("values"))
        except RuntimeError as e:
            out.append(("RuntimeError", str(e)))
        out.append(list(it))
        return out

    differential(scenario)


def test_v3_nested_subgraph_handles_drill_down(differential):
    def scenario(E):
        leaf = E.StateGraph(S)
        leaf.add_node("l", lambda s: {"log": ["leaf"]})
        leaf.add_edge(E.START, "l")
        mid = E.StateGraph(S)
        mid.add_node("m", lambda s: {"log": ["mid"]})
        mid.add_node("leaf", leaf.compile())
        mid.add_edge(E.START, "m")
        mid.add_edge("m", "leaf")
        run = _one_node_app(E, S, "mid", mid.compile()).stream_events({"log": []}, version="v3")
        out = []
        for h in run.subgraphs:
            for gh in h.subgraphs:
                out.append(("grandchild", gh.graph_name, len(gh.path), list(gh.values), gh.status))
            out.append(("child", h.graph_name, len(h.path), h.status, h.output))
        return out, run.output

    differential(scenario)


def test_v3_stream_events_called_inside_a_node_sees_its_own_level(differential):
    def scenario(E):
        inner = E.StateGraph(S)
        inner.add_node("x", lambda s: {"log": ["x"]})
        inner.add_node("y", lambda s: {"log": ["y"]})
        inner.add_edge(E.START, "x")
        inner.add_edge("x", "y")
        inner_app = inner.compile()

        def wrapper(s):
            run = inner_app.stream_events({"log": ["start"]}, version="v3")
            snaps = [v["log"] for v in run.values]
            return {"log": [f"snaps={snaps}"]}

        return _one_node_app(E, S, "wrapper", wrapper).invoke({"log": []})

    differential(scenario)


def test_v3_agent_loop_with_tool_node_streams_only_model_messages(differential):
    def scenario(E):
        from langgraph.prebuilt import ToolNode

        @tool
        def lookup(city: str) -> str:
            """Weather for a city."""
            return f"rain in {city}"

        first = ToolCallingFake(text="checking")
        final = _fake("It rains in Paris.")
        calls = {"n": 0}

        def agent(s):
            calls["n"] += 1
            model = first if calls["n"] == 1 else final
            return {"messages": [model.invoke(s["messages"])]}

        def route(s):
            return "tools" if s["messages"][-1].tool_calls else E.END

        g = E.StateGraph(_msgs_state(E))
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([lookup]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route, ["tools", E.END])
        g.add_edge("tools", "agent")
        run = g.compile().stream_events({"messages": [HumanMessage("weather in Paris?", id="h")]},
                                        version="v3")
        streams = [(m.node, str(m.text), [c["name"] for c in m.output.tool_calls]) for m in run.messages]
        final_msgs = [(type(m).__name__, m.text if hasattr(m, "text") else m.content)
                      for m in run.output["messages"]]
        return streams, final_msgs

    differential(scenario)


def test_v3_drain_marks_lifecycle_and_raises(differential):
    def scenario(E):
        ctl = E.runtime.RunControl()
        sub = E.StateGraph(S)
        sub.add_node("s1", lambda s: {"log": ["s1"]})

        def s2(s):
            ctl.request_drain("maintenance")
            return {"log": ["s2"]}

        sub.add_node("s2", s2)
        sub.add_node("s3", lambda s: {"log": ["s3"]})
        sub.add_edge(E.START, "s1")
        sub.add_edge("s1", "s2")
        sub.add_edge("s2", "s3")
        app = _one_node_app(E, S, "sub", sub.compile(), checkpointer=E.InMemorySaver())
        run = app.stream_events({"log": []}, _cfg(), version="v3", control=ctl)
        seen = []
        try:
            for ev in run.lifecycle:
                seen.append(ev)
        except Exception as e:
            seen.append(("raised", type(e).__name__, str(e)))
        return seen, app.get_state(_cfg()).next

    differential(scenario)


def test_sync_stream_events_v2_is_not_implemented(differential):
    def scenario(E):
        try:
            list(_writer_graph(E).stream_events({"log": []}, version="v2"))
            return "ok"
        except NotImplementedError as e:
            return ("NotImplementedError", str(e))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# more tools mode
# ---------------------------------------------------------------------------------------


def test_tools_mode_inside_a_subgraph_with_custom_writes_from_the_tool(differential):
    def scenario(E):
        from langgraph.prebuilt import ToolNode

        @tool
        def fetch(url: str) -> str:
            """Fetch a url."""
            E.get_stream_writer()({"fetching": url})
            return f"<html>{url}</html>"

        M = _msgs_state(E)
        sub = E.StateGraph(M)
        sub.add_node("call", lambda s: {"messages": [AIMessage("", tool_calls=[
            {"name": "fetch", "args": {"url": "a.com"}, "id": "f1"}], id="ai")]})
        sub.add_node("tools", ToolNode([fetch]))
        sub.add_edge(E.START, "call")
        sub.add_edge("call", "tools")
        g = E.StateGraph(M)
        g.add_node("browser", sub.compile())
        g.add_edge(E.START, "browser")
        return [(p["type"], p["ns"], _tools_view(p["data"]) if p["type"] == "tools" else p["data"])
                for p in g.compile().stream({"messages": []}, stream_mode=["tools", "custom"], subgraphs=True,
                                            version="v2")]

    differential(scenario)


def test_tools_mode_tool_returning_command(differential):
    def scenario(E):
        from langchain_core.messages import ToolMessage
        from langchain_core.tools import InjectedToolCallId
        from langgraph.prebuilt import ToolNode

        class St(TypedDict):
            messages: Annotated[list, E.add_messages]
            user: str

        @tool
        def set_user(name: str, tool_call_id: Annotated[str, InjectedToolCallId]):
            """Remember the user."""
            return E.Command(update={"user": name, "messages": [
                ToolMessage(f"user is {name}", tool_call_id=tool_call_id)]})

        g = E.StateGraph(St)
        g.add_node("call", lambda s: {"messages": [AIMessage("", tool_calls=[
            {"name": "set_user", "args": {"name": "Ada"}, "id": "u1"}], id="ai")]})
        g.add_node("tools", ToolNode([set_user]))
        g.add_edge(E.START, "call")
        g.add_edge("call", "tools")
        out = []
        for p in g.compile().stream({"messages": [], "user": ""}, stream_mode=["tools", "updates"],
                                    version="v2"):
            if p["type"] == "tools":
                d = dict(p["data"])
                if "output" in d:
                    d["output"] = repr(d["output"]) if not isinstance(d["output"], ToolMessage) else d["output"].content
                out.append(("tools", d))
            else:
                out.append(("updates", p["data"]))
        return out

    differential(scenario)


def test_tools_mode_tool_that_interrupts(differential):
    def scenario(E):
        from langgraph.prebuilt import ToolNode

        @tool
        def book(hotel: str) -> str:
            """Book a hotel after confirmation."""
            ok = E.interrupt({"confirm": hotel})
            return f"booked {hotel}" if ok else "cancelled"

        g = E.StateGraph(_msgs_state(E))
        g.add_node("call", lambda s: {"messages": [AIMessage("", tool_calls=[
            {"name": "book", "args": {"hotel": "Ritz"}, "id": "b1"}], id="ai")]})
        g.add_node("tools", ToolNode([book]))
        g.add_edge(E.START, "call")
        g.add_edge("call", "tools")
        app = g.compile(checkpointer=E.InMemorySaver())
        first = [(p["type"], _tools_view(p["data"]) if p["type"] == "tools" else p["data"])
                 for p in app.stream({"messages": []}, _cfg(), stream_mode=["tools", "updates"], version="v2")]
        second = [(p["type"], _tools_view(p["data"]) if p["type"] == "tools" else p["data"])
                  for p in app.stream(E.Command(resume=True), _cfg(), stream_mode=["tools", "updates"],
                                      version="v2")]
        return first, second

    differential(scenario)


# ---------------------------------------------------------------------------------------
# task metadata in tasks / debug parts, and named agents in the v3 lifecycle
# ---------------------------------------------------------------------------------------


def test_v2_tasks_and_debug_parts_carry_run_metadata_and_tags(differential):
    def scenario(E):
        sub = E.StateGraph(S)
        sub.add_node("inner", lambda s: {"log": ["inner"]})
        sub.add_edge(E.START, "inner")
        g = E.StateGraph(S)
        g.add_node("a", lambda s: {"log": ["a"]}, metadata={"kind": "first"})
        g.add_node("sub", sub.compile())
        g.add_edge(E.START, "a")
        g.add_edge("a", "sub")
        cfg = {"metadata": {"user_id": "u1"}, "tags": ["run-tag"]}
        out = []
        for p in g.compile().stream({"log": []}, cfg, stream_mode=["tasks", "debug"], subgraphs=True,
                                    version="v2"):
            d = p["data"]
            if p["type"] == "debug":
                if d["type"] != "task":
                    continue
                d = d["payload"]
            if "input" in d:
                out.append((p["type"], p["ns"], d["name"], d.get("metadata", "<no metadata>")))
        return out

    differential(scenario)


def test_v3_lifecycle_names_a_subagent_by_its_lc_agent_name(differential):
    def scenario(E):
        researcher = _one_node_app(E, S, "research", lambda s: {"log": ["found"]}).with_config({"metadata": {"lc_agent_name": "researcher"}})

        def delegate(s):
            return {"log": researcher.invoke({"log": []})["log"]}

        run = _one_node_app(E, S, "delegate", delegate).stream_events({"log": []}, version="v3")
        return list(run.lifecycle), run.output

    differential(scenario)


def test_v3_lifecycle_cause_links_a_subagent_to_the_tool_call_that_started_it(differential):
    def scenario(E):
        from langgraph.prebuilt import ToolNode

        researcher = _one_node_app(E, S, "research", lambda s: {"log": ["found"]}).with_config({"metadata": {"lc_agent_name": "researcher"}})

        @tool
        def ask_researcher(topic: str) -> str:
            """Delegate research."""
            return " ".join(researcher.invoke({"log": []})["log"]) + f" on {topic}"

        def agent(s):
            return {"messages": [AIMessage("", tool_calls=[
                {"name": "ask_researcher", "args": {"topic": "owls"}, "id": "call_r"}], id="ai")]}

        def route(s):
            return [E.Send("tools", {"__type": "tool_call_with_context", "tool_call": tc, "state": s})
                    for tc in s["messages"][-1].tool_calls]

        g = E.StateGraph(_msgs_state(E))
        g.add_node("agent", agent)
        g.add_node("tools", ToolNode([ask_researcher]))
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", route, ["tools"])
        run = g.compile().stream_events({"messages": []}, version="v3")
        lifecycle = list(run.lifecycle)
        return lifecycle, [m.content for m in run.output["messages"]]

    differential(scenario)


# ---------------------------------------------------------------------------------------
# more v3 messages: returned non-AI messages, failing models, reasoning, concurrency
# ---------------------------------------------------------------------------------------


class FailingMidStream(BaseChatModel):
    """Streams two tokens, then the provider connection drops."""

    @property
    def _llm_type(self) -> str:
        return "failing-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        raise ConnectionError("dropped")

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        for w in ("partial", " answer"):
            yield ChatGenerationChunk(message=AIMessageChunk(content=w))
        raise ConnectionError("dropped")


class Reasoner(BaseChatModel):
    """Streams reasoning blocks, then text."""

    @property
    def _llm_type(self) -> str:
        return "reasoner-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        raise NotImplementedError

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        yield ChatGenerationChunk(message=AIMessageChunk(content=[
            {"type": "reasoning", "reasoning": "think ", "index": 0}]))
        yield ChatGenerationChunk(message=AIMessageChunk(content=[
            {"type": "reasoning", "reasoning": "hard", "index": 0}]))
        yield ChatGenerationChunk(message=AIMessageChunk(content=[
            {"type": "text", "text": "42", "index": 1}]))


def test_v3_messages_for_human_tool_and_ai_messages_returned_by_nodes(differential):
    def scenario(E):
        from langchain_core.messages import SystemMessage, ToolMessage

        g = E.StateGraph(_msgs_state(E))
        g.add_node("human", lambda s: {"messages": [HumanMessage("follow-up", id="hm")]})
        g.add_node("tool", lambda s: {"messages": [ToolMessage("42", tool_call_id="c1", id="tm")]})
        g.add_node("sys", lambda s: {"messages": [SystemMessage("be brief", id="sm")]})
        g.add_node("ai", lambda s: {"messages": [AIMessage("", id="am", tool_calls=[
            {"name": "calc", "args": {"x": 1}, "id": "c2"}])]})
        g.add_edge(E.START, "human")
        g.add_edge("human", "tool")
        g.add_edge("tool", "sys")
        g.add_edge("sys", "ai")
        run = g.compile().stream_events({"messages": []}, version="v3")
        out = []
        for m in run.messages:
            out.append((m.node, m.message_id, str(m.text), list(m.tool_calls), type(m.output).__name__,
                        m.output.tool_calls))
        return out

    differential(scenario)


def test_v3_model_failing_mid_stream_fails_its_message_stream_and_the_run(differential):
    def scenario(E):
        run = _chat_graph(E, FailingMidStream()).stream_events({"messages": [HumanMessage("q", id="h")]},
                                                               version="v3")
        out = []
        try:
            for m in run.messages:
                deltas = []
                try:
                    for d in m.text:
                        deltas.append(d)
                except ConnectionError as e:
                    deltas.append(("text raised", str(e)))
                out.append((m.node, deltas, m.done))
        except ConnectionError as e:
            out.append(("messages raised", str(e)))
        out.append(collect(lambda: [run.output]))
        return out

    differential(scenario)


def test_v3_reasoning_and_text_projections(differential):
    def scenario(E):
        run = _chat_graph(E, Reasoner()).stream_events({"messages": [HumanMessage("q", id="h")]},
                                                       version="v3")
        out = []
        for m in run.messages:
            out.append((list(m.reasoning), list(m.text), m.output.content))
        return out

    differential(scenario)


def test_v3_model_stream_called_explicitly_in_node(differential):
    def scenario(E):
        model = _fake("s1 s2")

        def node(s):
            full = None
            for chunk in model.stream(s["messages"]):
                full = chunk if full is None else full + chunk
            return {"messages": [AIMessage(full.content, id="final")]}

        g = E.StateGraph(_msgs_state(E))
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        run = g.compile().stream_events({"messages": [HumanMessage("q", id="h")]}, version="v3")
        return [(m.node, m.message_id == "final", list(m.text)) for m in run.messages]

    differential(scenario)


def test_av3_values_and_messages_consumed_concurrently(differential):
    async def scenario(E):
        model = _fake("con cur rent")

        async def agent(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        g = E.StateGraph(_msgs_state(E))
        g.add_node("agent", agent)
        g.add_node("after", lambda s: {"messages": [AIMessage("done", id="d")]})
        g.add_edge(E.START, "agent")
        g.add_edge("agent", "after")
        run = await g.compile().astream_events({"messages": [HumanMessage("q", id="h")]}, version="v3")

        async def values():
            return [len(v["messages"]) async for v in run.values]

        async def messages():
            out = []
            async for m in run.messages:
                out.append((m.node, await m.text))
            return out

        v, m = await asyncio.gather(values(), messages())
        return v, m

    differential(scenario)


def test_av3_message_stream_async_context_and_await_output(differential):
    async def scenario(E):
        run = await _chat_graph(E, _fake("ctx managed")).astream_events(
            {"messages": [HumanMessage("q", id="h")]}, version="v3")
        out = []
        async for m in run.messages:
            async with m as stream:
                msg = await stream.output
                out.append((stream.node, msg.content, await stream.text, stream.done))
        return out, await run.interrupted()

    differential(scenario)


def test_v3_durability_and_output_keys_kwargs(differential):
    def scenario(E):
        class St(TypedDict):
            log: Annotated[list, operator.add]
            secret: str

        g = E.StateGraph(St)
        g.add_node("a", lambda s: {"log": ["a"], "secret": "x"})
        g.add_node("b", lambda s: {"log": ["b"]})
        g.add_edge(E.START, "a")
        g.add_edge("a", "b")
        saver = E.InMemorySaver()
        app = g.compile(checkpointer=saver)
        run = app.stream_events({"log": []}, _cfg(), version="v3", durability="exit", output_keys=["log"])
        vals = list(run.values)
        history = [s.metadata["step"] for s in app.get_state_history(_cfg())]
        return vals, run.output, history

    differential(scenario)


def test_v3_nostream_tagged_model_is_left_out_of_messages(differential):
    def scenario(E):
        quiet = _fake("hidden").with_config(tags=["nostream"])
        loud = _fake("shown")

        def node(s):
            a = quiet.invoke(s["messages"])
            b = loud.invoke(s["messages"])
            return {"messages": [AIMessage(a.text + "|" + b.text, id="merged")]}

        g = E.StateGraph(_msgs_state(E))
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        run = g.compile().stream_events({"messages": [HumanMessage("q", id="h")]}, version="v3")
        return [(m.node, str(m.text)) for m in run.messages]

    differential(scenario)


# ---------------------------------------------------------------------------------------
# laziness, breakpoints with invoke v2, print_mode, fan-out handles
# ---------------------------------------------------------------------------------------


def test_v3_run_that_is_never_consumed_runs_nothing(differential):
    def scenario(E):
        ran = []

        def a(s):
            ran.append("a")
            return {"log": ["a"]}

        app = _one_node_app(E, S, "a", a, checkpointer=E.InMemorySaver())
        app.stream_events({"log": []}, _cfg(), version="v3")
        return ran, app.get_state(_cfg()).values

    differential(scenario)


def test_invoke_v2_stopping_at_a_static_breakpoint(differential):
    def scenario(E):
        app = _writer_graph(E, E.InMemorySaver())
        first = app.invoke({"log": []}, _cfg(), interrupt_after=["a"], version="v2")
        second = app.invoke(None, _cfg(), version="v2")
        return first, second

    differential(scenario)


def test_v2_print_mode_prints_parts_while_streaming_others(differential):
    import contextlib
    import io

    def scenario(E):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            parts = [_part(p) for p in _writer_graph(E).stream({"log": []}, stream_mode="values",
                                                              print_mode=["updates", "custom"], version="v2")]
        return parts, buf.getvalue().splitlines()

    differential(scenario)


@pytest.mark.parametrize("how", ["print_mode", "debug", "debug_compiled"])
def test_invoke_of_a_graph_with_a_subgraph_printing_its_steps_returns_the_values(differential, how):
    """`invoke(..., subgraphs=True)` with `print_mode=` or `debug=True` (on the call or
    compiled in), the usual way to watch a subgraph run: the subgraph's chunks are printed
    with their namespace, and `invoke` returns the root's final values."""
    import contextlib
    import io
    import re

    def scenario(E):
        class X(TypedDict):
            x: int

        inner = E.StateGraph(X)
        inner.add_node("inner", lambda s: {"x": s["x"] + 1})
        inner.add_edge(E.START, "inner")
        g = E.StateGraph(X)
        g.add_node("sub", inner.compile())
        g.add_edge(E.START, "sub")
        app = g.compile(debug=how == "debug_compiled")
        kw = {"print_mode": "updates"} if how == "print_mode" else {"debug": True} if how == "debug" else {}
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            out = app.invoke({"x": 0}, subgraphs=True, **kw)
        printed = [re.sub(r"sub:[0-9a-f-]{36}", "sub:<id>", line) for line in buf.getvalue().splitlines()]
        return out, printed

    ref = differential(scenario)
    assert ref[0] == {"x": 1} and any("[graph=('sub:<id>',)]" in line for line in ref[1])


def test_v3_send_fanout_into_a_subgraph_gives_one_handle_per_task(differential):
    def scenario(E):
        class Item(TypedDict):
            log: Annotated[list, operator.add]
            item: str

        worker = E.StateGraph(Item)
        worker.add_node("work", lambda s: {"log": [f"did {s['item']}"]})
        worker.add_edge(E.START, "work")

        class St(TypedDict):
            log: Annotated[list, operator.add]

        g = E.StateGraph(St)
        g.add_node("worker", worker.compile())
        g.add_conditional_edges(E.START, lambda s: [E.Send("worker", {"item": i, "log": []}) for i in "xyz"],
                                ["worker"])
        run = g.compile().stream_events({"log": []}, version="v3")
        handles = list(run.subgraphs)  # sync parallel branches: compare as a multiset
        final = sorted(run.output["log"])
        return sorted((h.graph_name, h.status, len(h.path)) for h in handles), final

    differential(scenario)


@pytest.mark.parametrize("call", ["invoke", "invoke_str", "stream", "stream_updates"])
def test_an_output_key_the_graph_has_not_is_refused_before_any_node_runs(differential, call):
    """`output_keys` naming a key the state has not: a ValueError naming it, and no node
    has run (its side effects did not happen)."""
    def scenario(E):
        class A(TypedDict):
            a: str

        ran = []
        g = E.StateGraph(A)
        g.add_node("n1", lambda s: ran.append("n1") or {"a": "A"})
        g.add_edge(E.START, "n1")
        app = g.compile()
        try:
            if call == "invoke":
                app.invoke({"a": ""}, output_keys=["zzz"])
            elif call == "invoke_str":
                app.invoke({"a": ""}, output_keys="zzz")
            elif call == "stream":
                list(app.stream({"a": ""}, output_keys=["zzz"]))
            else:
                list(app.stream({"a": ""}, output_keys=["a", "zzz"], stream_mode="updates"))
        except ValueError as exc:
            return "refused", str(exc).startswith("Key zzz not in channels"), ran
        return "ran", ran

    differential(scenario, expect=("refused", True, []))
