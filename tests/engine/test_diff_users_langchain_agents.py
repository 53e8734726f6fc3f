"""LangChain 1.x agents (`langchain.agents.create_agent`) and their middleware, run on lgnb.

Programs from LangChain's agent docs: the built-in middleware (human in the loop, call
limits, summarization, fallbacks, retries, to-dos, context editing, PII, tool errors),
custom middleware written with the decorators (`@before_model`, `@after_model`,
`@wrap_model_call`, `@wrap_tool_call`, `@dynamic_prompt`, jumps), state and context
schemas, structured output, tools reading `ToolRuntime` / injected state and store,
checkpoints, interrupts and streams. The reference runs the graph `create_agent` returned
on LangGraph; the candidate runs `lgnb.graph.from_langgraph(graph)` (or the agent as a node
of an lgnb graph, which rebuilds it by itself).

The chat models are scripted fakes whose `bind_tools` returns themselves.
No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import dataclasses
import json
import operator
from typing import Annotated, Any

from _diff import capture, collect
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from pydantic import BaseModel
from typing_extensions import NotRequired, TypedDict


class ListModel(FakeMessagesListChatModel):
    """Replies in order; records what it was sent; `bind_tools` returns itself."""

    seen: list = []

    def bind_tools(self, tools, **kwargs):
        self.seen.append(("tools", sorted(t.get("name") or t.get("title") if isinstance(t, dict) else t.name
                                          for t in tools)))
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(("call", [(type(m).__name__, m.content) for m in messages]))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


class StreamModel(ListModel):
    """Streams its replies word by word, then its tool calls as chunks."""

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        msg = self._generate(messages, stop=stop, **kwargs).generations[0].message
        words = msg.content.split(" ") if msg.content else []
        for i, word in enumerate(words):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word if i == 0 else " " + word))
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk
        if msg.tool_calls:
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                for i, c in enumerate(msg.tool_calls)]))


def _streaming(*replies):
    return StreamModel(responses=list(replies), seen=[])


class FailingModel(FakeMessagesListChatModel):
    """Raises `failures` times, then replies."""

    failures: int = 1
    calls: int = 0

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(f"provider down ({self.calls})")
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def _model(*replies):
    return ListModel(responses=list(replies), seen=[])


def _call(name, args, cid, content=""):
    return AIMessage(content=content, tool_calls=[{"name": name, "args": args, "id": cid}])


def _calls(*calls, content=""):
    return AIMessage(content=content, tool_calls=[
        {"name": n, "args": a, "id": c} for n, a, c in calls])


def _cfg(t="t"):
    return {"configurable": {"thread_id": t}}


def _on(E, graph):
    """The library's graph on engine E: itself on LangGraph, rebuilt on lgnb."""
    if E.root == "lgnb":
        from lgnb.graph import from_langgraph

        return from_langgraph(graph)
    return graph


def _m(m):
    return (type(m).__name__, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", None) or []]
            or None, getattr(m, "tool_call_id", None), getattr(m, "status", None))


def _msgs(values):
    return [_m(m) for m in values["messages"]]


def _updates(chunks):
    out = []
    for chunk in chunks:
        if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], tuple):
            ns, chunk = chunk
            ns = tuple(s.split(":")[0] for s in ns)
        else:
            ns = ()
        if not isinstance(chunk, dict):
            out.append((ns, chunk))
            continue
        for node, update in chunk.items():
            if node == "__interrupt__":
                out.append((ns, node, [i.value for i in update]))
            elif isinstance(update, dict) and "messages" in update:
                rest = {k: v for k, v in update.items() if k != "messages"}
                out.append((ns, node, [_m(m) for m in update["messages"]], rest or None))
            else:
                out.append((ns, node, update))
    return out


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _agent(model, tools=(add, mul), **kwargs):
    from langchain.agents import create_agent

    return create_agent(model, list(tools), **kwargs)


def _hi(text="go"):
    return {"messages": [HumanMessage(text, id="h")]}


# --- human in the loop --------------------------------------------------------------------


def _hitl(E, model, interrupt_on, tools=(add, mul), **kw):
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    return _on(E, _agent(model, tools, middleware=[HumanInTheLoopMiddleware(interrupt_on, **kw)],
                         checkpointer=E.InMemorySaver()))


def test_hitl_reviews_three_calls_at_once_with_approve_edit_and_reject(differential):
    def scenario(E):
        model = _model(_calls(("add", {"a": 1, "b": 2}, "c1"), ("mul", {"a": 3, "b": 4}, "c2"),
                              ("add", {"a": 5, "b": 6}, "c3")), AIMessage(content="done"))
        agent = _hitl(E, model, {"add": True, "mul": True})
        first = agent.invoke(_hi("three"), _cfg())
        request = [i.value for i in first["__interrupt__"]]
        out = agent.invoke(E.Command(resume={"decisions": [
            {"type": "approve"},
            {"type": "edit", "edited_action": {"name": "mul", "args": {"a": 10, "b": 10}}},
            {"type": "reject", "message": "no more adding"}]}), _cfg())
        return request, _msgs(out), agent.get_state(_cfg()).next

    differential(scenario)


def test_hitl_respond_decision_answers_in_place_of_the_tool(differential):
    def scenario(E):
        @tool
        def ask_user(question: str) -> str:
            """Ask the user a question."""
            raise AssertionError("a human answers this one")

        model = _model(_call("ask_user", {"question": "colour?"}, "q1"), AIMessage(content="blue it is"))
        agent = _hitl(E, model, {"ask_user": True}, tools=(ask_user,))
        agent.invoke(_hi("pick"), _cfg())
        out = agent.invoke(E.Command(resume={"decisions": [{"type": "respond", "message": "blue"}]}),
                           _cfg())
        return _msgs(out)

    differential(scenario)


def test_hitl_only_gates_the_configured_tools(differential):
    def scenario(E):
        model = _model(_calls(("add", {"a": 1, "b": 1}, "c1"), ("mul", {"a": 2, "b": 2}, "c2")),
                       AIMessage(content="ok"))
        agent = _hitl(E, model, {"add": False, "mul": {"allowed_decisions": ["approve", "reject"]}})
        first = agent.invoke(_hi(), _cfg())
        state = agent.get_state(_cfg())
        out = agent.invoke(E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg())
        return ([i.value for i in first["__interrupt__"]], state.next,
                [i.value["review_configs"] for i in state.interrupts], _msgs(out))

    differential(scenario)


def test_hitl_decision_the_tool_does_not_allow_fails_the_resume(differential):
    def scenario(E):
        model = _model(_call("add", {"a": 1, "b": 1}, "c1"), AIMessage(content="ok"))
        agent = _hitl(E, model, {"add": {"allowed_decisions": ["approve"]}})
        agent.invoke(_hi(), _cfg())
        bad = capture(lambda: agent.invoke(
            E.Command(resume={"decisions": [{"type": "reject", "message": "x"}]}), _cfg()))
        state = agent.get_state(_cfg())
        return bad, state.next, len(state.interrupts)

    differential(scenario)


def test_hitl_wrong_number_of_decisions_fails_the_resume(differential):
    def scenario(E):
        model = _model(_calls(("add", {"a": 1, "b": 1}, "c1"), ("add", {"a": 2, "b": 2}, "c2")),
                       AIMessage(content="ok"))
        agent = _hitl(E, model, {"add": True})
        agent.invoke(_hi(), _cfg())
        return capture(lambda: agent.invoke(
            E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg()))

    differential(scenario)


def test_hitl_per_call_mode_pauses_once_per_call_and_resumes_by_interrupt_id(differential):
    def scenario(E):
        model = _model(_calls(("add", {"a": 1, "b": 2}, "c1"), ("mul", {"a": 3, "b": 4}, "c2")),
                       AIMessage(content="done"))
        agent = _hitl(E, model, {"add": True, "mul": {"allowed_decisions": ["approve", "reject"]}},
                      interrupt_mode="per_call")
        first = agent.invoke(_hi(), _cfg(), version="v2")
        pending = sorted(first.interrupts, key=lambda i: i.value["name"])
        answers = {i.id: ({"type": "approve"} if i.value["name"] == "add"
                          else {"type": "reject", "message": "no"}) for i in pending}
        out = agent.invoke(E.Command(resume=answers), _cfg(), version="v2")
        return ([(i.value, i.response_schema is not None) for i in pending],
                _msgs(out.value), out.interrupts)

    differential(scenario)


def test_hitl_per_call_answer_outside_the_response_schema_is_refused(differential):
    def scenario(E):
        model = _model(_call("mul", {"a": 3, "b": 4}, "c2"), AIMessage(content="done"))
        agent = _hitl(E, model, {"mul": {"allowed_decisions": ["approve"]}},
                      interrupt_mode="per_call")
        first = agent.invoke(_hi(), _cfg(), version="v2")
        (pending,) = first.interrupts
        bad = capture(lambda: agent.invoke(
            E.Command(resume={pending.id: {"type": "reject"}}), _cfg(), version="v2"))
        state = agent.get_state(_cfg())
        return bad, state.next, [i.value["name"] for i in state.interrupts]

    differential(scenario)


def test_hitl_pause_history_and_update_state_before_resuming(differential):
    def scenario(E):
        model = _model(_call("add", {"a": 1, "b": 2}, "c1"), AIMessage(content="after note"))
        agent = _hitl(E, model, {"add": True})
        agent.invoke(_hi(), _cfg())
        agent.update_state(_cfg(), {"messages": [HumanMessage("note from ops", id="n")]})
        state = agent.get_state(_cfg())
        out = agent.invoke(E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg())
        hist = [(s.next, s.metadata["source"], s.metadata["step"], len(s.values.get("messages", [])),
                 [t.name for t in s.tasks]) for s in agent.get_state_history(_cfg())]
        return state.next, [i.value for i in state.interrupts], _msgs(out), hist

    differential(scenario)


# --- call limits --------------------------------------------------------------------------


def _looping(n, name="add"):
    return [_call(name, {"a": i, "b": 1}, f"c{i}") for i in range(n)]


def test_model_call_run_limit_ends_the_run_with_a_limit_message(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelCallLimitMiddleware

        agent = _on(E, _agent(_model(*_looping(6)),
                              middleware=[ModelCallLimitMiddleware(run_limit=2)]))
        return _updates(collect(lambda: agent.stream(_hi(), stream_mode="updates")))

    differential(scenario)


def test_model_call_thread_limit_counts_across_runs_of_a_thread(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelCallLimitMiddleware

        agent = _on(E, _agent(_model(AIMessage(content="one"), AIMessage(content="two"),
                                     AIMessage(content="three")),
                              middleware=[ModelCallLimitMiddleware(thread_limit=2, run_limit=5)],
                              checkpointer=E.InMemorySaver()))
        outs = [_msgs(agent.invoke({"messages": [HumanMessage(f"q{i}", id=f"h{i}")]}, _cfg()))[-1]
                for i in range(3)]
        values = agent.get_state(_cfg()).values
        return outs, {k: v for k, v in values.items() if k != "messages"}

    differential(scenario)


def test_model_call_limit_with_error_behaviour_raises(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelCallLimitMiddleware

        agent = _on(E, _agent(_model(*_looping(4)),
                              middleware=[ModelCallLimitMiddleware(run_limit=1, exit_behavior="error")]))
        return capture(lambda: agent.invoke(_hi()))

    differential(scenario)


def test_tool_call_limit_per_tool_blocks_the_extra_call_and_continues(differential):
    def scenario(E):
        from langchain.agents.middleware import ToolCallLimitMiddleware

        agent = _on(E, _agent(
            _model(_call("add", {"a": 1, "b": 1}, "c1"), _call("add", {"a": 2, "b": 2}, "c2"),
                   _call("mul", {"a": 2, "b": 3}, "c3"), AIMessage(content="end")),
            middleware=[ToolCallLimitMiddleware(tool_name="add", run_limit=1)]))
        return _msgs(agent.invoke(_hi()))

    differential(scenario)


def test_tool_call_limit_end_behaviour_and_the_saved_counts(differential):
    def scenario(E):
        from langchain.agents.middleware import ToolCallLimitMiddleware

        agent = _on(E, _agent(
            _model(*_looping(5)),
            middleware=[ToolCallLimitMiddleware(thread_limit=2, exit_behavior="end")],
            checkpointer=E.InMemorySaver()))
        out = agent.invoke(_hi(), _cfg())
        values = agent.get_state(_cfg()).values
        return _msgs(out), {k: v for k, v in values.items() if k != "messages"}

    differential(scenario)


def test_tool_call_limit_error_behaviour_raises(differential):
    def scenario(E):
        from langchain.agents.middleware import ToolCallLimitMiddleware

        agent = _on(E, _agent(_model(*_looping(4)),
                              middleware=[ToolCallLimitMiddleware(run_limit=1, exit_behavior="error")]))
        return capture(lambda: agent.invoke(_hi()))

    differential(scenario)


# --- summarization, fallback, retries -----------------------------------------------------


def test_summarization_replaces_old_messages_with_a_summary(differential):
    def scenario(E):
        from langchain.agents.middleware import SummarizationMiddleware

        summarizer = _model(AIMessage(content="SUMMARY: user asked about sums"))
        model = _model(AIMessage(content="answer one"), AIMessage(content="answer two"))
        agent = _on(E, _agent(model, middleware=[SummarizationMiddleware(
            summarizer, trigger=("messages", 3), keep=("messages", 1))],
            checkpointer=E.InMemorySaver()))
        agent.invoke({"messages": [HumanMessage("q1", id="h1")]}, _cfg())
        second = _updates(collect(lambda: agent.stream(
            {"messages": [HumanMessage("q2", id="h2")]}, _cfg(), stream_mode="updates")))
        return second, _msgs(agent.get_state(_cfg()).values), model.seen

    differential(scenario)


def test_model_fallback_answers_when_the_primary_model_fails(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelFallbackMiddleware

        primary = FailingModel(responses=[AIMessage(content="never")], failures=99)
        backup = _model(AIMessage(content="from backup"))
        agent = _on(E, _agent(primary, middleware=[ModelFallbackMiddleware(backup)]))
        return _msgs(agent.invoke(_hi())), primary.calls

    differential(scenario)


def test_model_retry_retries_a_failing_model_call(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelRetryMiddleware

        flaky = FailingModel(responses=[AIMessage(content="third time lucky")], failures=2)
        agent = _on(E, _agent(flaky, middleware=[ModelRetryMiddleware(
            max_retries=2, initial_delay=0, jitter=False)]))
        return _msgs(agent.invoke(_hi())), flaky.calls

    differential(scenario)


def test_model_retry_gives_up_with_an_error_message(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelRetryMiddleware

        broken = FailingModel(responses=[AIMessage(content="x")], failures=99)
        agent = _on(E, _agent(broken, middleware=[ModelRetryMiddleware(
            max_retries=1, initial_delay=0, jitter=False)]))
        raising = _on(E, _agent(FailingModel(responses=[AIMessage(content="x")], failures=99),
                                middleware=[ModelRetryMiddleware(
                                    max_retries=1, initial_delay=0, jitter=False,
                                    on_failure="error")]))
        return _msgs(agent.invoke(_hi())), capture(lambda: raising.invoke(_hi()))

    differential(scenario)


def test_tool_retry_retries_a_flaky_tool_then_reports_a_broken_one(differential):
    def scenario(E):
        from langchain.agents.middleware import ToolRetryMiddleware

        tries = {"flaky": 0, "broken": 0}

        @tool
        def flaky(x: int) -> str:
            """Works on the second try."""
            tries["flaky"] += 1
            if tries["flaky"] < 2:
                raise ValueError("timeout")
            return f"ok {x}"

        @tool
        def broken(x: int) -> str:
            """Never works."""
            tries["broken"] += 1
            raise ValueError("down")

        model = _model(_call("flaky", {"x": 1}, "f1"), _call("broken", {"x": 2}, "b1"),
                       AIMessage(content="reported"))
        agent = _on(E, _agent(model, (flaky, broken), middleware=[ToolRetryMiddleware(
            max_retries=2, initial_delay=0, jitter=False)]))
        return _msgs(agent.invoke(_hi())), tries

    differential(scenario)


# --- to-dos, context editing, PII, tool errors ----------------------------------------------


def test_todo_list_tool_writes_the_todos_key_with_a_command(differential):
    def scenario(E):
        from langchain.agents.middleware import TodoListMiddleware

        todos = [{"content": "plan", "status": "completed"}, {"content": "do", "status": "in_progress"}]
        model = _model(_call("write_todos", {"todos": todos}, "t1"), AIMessage(content="planned"))
        agent = _on(E, _agent(model, (), middleware=[TodoListMiddleware()],
                              checkpointer=E.InMemorySaver()))
        chunks = _updates(collect(lambda: agent.stream(_hi(), _cfg(), stream_mode="updates")))
        values = agent.get_state(_cfg()).values
        return chunks, values["todos"], model.seen[0]

    differential(scenario)


def test_context_editing_clears_old_tool_results_the_model_sees(differential):
    def scenario(E):
        from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

        model = _model(_call("add", {"a": 1, "b": 2}, "c1"), _call("mul", {"a": 3, "b": 4}, "c2"),
                       AIMessage(content="done"))
        agent = _on(E, _agent(model, middleware=[ContextEditingMiddleware(
            edits=[ClearToolUsesEdit(trigger=10, keep=1, placeholder="[cleared]")])]))
        out = agent.invoke(_hi())
        return _msgs(out), [s for s in model.seen if s[0] == "call"]

    differential(scenario)


def test_pii_middleware_redacts_input_and_masks_output(differential):
    def scenario(E):
        from langchain.agents.middleware import PIIMiddleware

        model = _model(AIMessage(content="card 4532015112830366 noted", id="a1"))
        agent = _on(E, _agent(model, middleware=[
            PIIMiddleware("email", strategy="redact"),
            PIIMiddleware("credit_card", strategy="mask", apply_to_output=True)]))
        out = agent.invoke({"messages": [HumanMessage("mail me at ann@example.com", id="h")]})
        return _msgs(out), [s for s in model.seen if s[0] == "call"]

    differential(scenario)


def test_pii_middleware_block_strategy_raises(differential):
    def scenario(E):
        from langchain.agents.middleware import PIIMiddleware

        agent = _on(E, _agent(_model(AIMessage(content="x")),
                              middleware=[PIIMiddleware("email", strategy="block")]))
        return capture(lambda: agent.invoke(
            {"messages": [HumanMessage("ann@example.com", id="h")]}))

    differential(scenario)


def test_tool_error_middleware_turns_a_tool_exception_into_a_message(differential):
    def scenario(E):
        from langchain.agents.middleware import ToolErrorMiddleware

        @tool
        def divide(a: int, b: int) -> float:
            """Divide a by b."""
            return a / b

        def on_error(exc, request):
            if isinstance(exc, ZeroDivisionError):
                return f"{request.tool_call['name']} failed: {exc}"
            return None

        model = _model(_call("divide", {"a": 1, "b": 0}, "d1"), _call("divide", {"a": "x", "b": 1}, "d2"),
                       AIMessage(content="cannot"))
        agent = _on(E, _agent(model, (divide,), middleware=[ToolErrorMiddleware(on_error)]))
        return _msgs(agent.invoke(_hi()))

    differential(scenario)


def test_tool_emulator_answers_tool_calls_with_a_model(differential):
    def scenario(E):
        from langchain.agents.middleware import LLMToolEmulator

        emulator = _model(AIMessage(content="emulated: 42"))
        model = _model(_call("add", {"a": 40, "b": 2}, "c1"), AIMessage(content="it is 42"))
        agent = _on(E, _agent(model, middleware=[LLMToolEmulator(tools=["add"], model=emulator)]))
        return _msgs(agent.invoke(_hi()))

    differential(scenario)


# --- custom middleware ----------------------------------------------------------------------


def test_before_model_hook_jumps_to_end_with_its_own_answer(differential):
    def scenario(E):
        from langchain.agents.middleware import before_model

        @before_model(can_jump_to=["end"])
        def guard(state, runtime):
            if "forbidden" in state["messages"][-1].content:
                return {"messages": [AIMessage(content="I can't help with that", id="g")],
                        "jump_to": "end"}
            return None

        model = _model(AIMessage(content="sure"))
        agent = _on(E, _agent(model, middleware=[guard]))
        blocked = _updates(collect(lambda: agent.stream(_hi("forbidden topic"), stream_mode="updates")))
        allowed = _msgs(agent.invoke(_hi("fine topic")))
        return blocked, allowed

    differential(scenario)


def test_after_model_hook_sends_the_agent_back_to_the_model(differential):
    def scenario(E):
        from langchain.agents.middleware import AgentState, after_model

        class RetryState(AgentState):
            retries: NotRequired[int]

        @after_model(state_schema=RetryState, can_jump_to=["model"])
        def insist(state, runtime):
            last = state["messages"][-1]
            if last.content == "maybe" and state.get("retries", 0) < 2:
                return {"messages": [HumanMessage("be decisive", id=f"r{state.get('retries', 0)}")],
                        "retries": state.get("retries", 0) + 1, "jump_to": "model"}
            return None

        agent = _on(E, _agent(_model(AIMessage(content="maybe"), AIMessage(content="maybe"),
                                     AIMessage(content="yes")), middleware=[insist]))
        out = agent.invoke(_hi())
        return _msgs(out), out.get("retries")

    differential(scenario)


def test_after_model_hook_jumps_to_tools_and_end(differential):
    def scenario(E):
        from langchain.agents.middleware import after_model

        @after_model(can_jump_to=["end", "tools"])
        def stop_on_mul(state, runtime):
            last = state["messages"][-1]
            if any(c["name"] == "mul" for c in last.tool_calls):
                return {"jump_to": "end"}
            return None

        agent = _on(E, _agent(_model(_call("add", {"a": 1, "b": 1}, "c1"),
                                     _call("mul", {"a": 2, "b": 2}, "c2"), AIMessage(content="x")),
                              middleware=[stop_on_mul]))
        return _updates(collect(lambda: agent.stream(_hi(), stream_mode="updates")))

    differential(scenario)


def test_wrap_model_call_swaps_the_model_and_trims_messages(differential):
    def scenario(E):
        from langchain.agents.middleware import wrap_model_call

        big = _model(AIMessage(content="from big"))
        small = _model(AIMessage(content="from small"), AIMessage(content="small again"))

        @wrap_model_call
        def route(request, handler):
            use = big if len(request.messages) > 2 else small
            return handler(request.override(model=use, messages=request.messages[-1:]))

        agent = _on(E, _agent(small, middleware=[route], checkpointer=E.InMemorySaver()))
        first = _msgs(agent.invoke({"messages": [HumanMessage("a", id="h1")]}, _cfg()))
        second = _msgs(agent.invoke({"messages": [HumanMessage("b", id="h2")]}, _cfg()))
        return first, second, big.seen, small.seen

    differential(scenario)


def test_wrap_model_call_retries_and_rewrites_the_response(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelResponse, wrap_model_call

        @wrap_model_call
        def retry_then_tag(request, handler):
            for attempt in range(3):
                try:
                    resp = handler(request)
                    break
                except RuntimeError:
                    if attempt == 2:
                        raise
            msg = resp.result[0]
            return ModelResponse(result=[AIMessage(content=msg.content.upper(), id="tagged")])

        flaky = FailingModel(responses=[AIMessage(content="quiet")], failures=2)
        agent = _on(E, _agent(flaky, middleware=[retry_then_tag]))
        return _msgs(agent.invoke(_hi())), flaky.calls

    differential(scenario)


def test_wrap_tool_call_short_circuits_and_wraps_results(differential):
    def scenario(E):
        from langchain.agents.middleware import wrap_tool_call

        @wrap_tool_call
        def cache(request, handler):
            if request.tool_call["args"].get("a") == 0:
                return ToolMessage(content="cached zero", tool_call_id=request.tool_call["id"])
            result = handler(request)
            result.content = f"[{result.content}]"
            return result

        model = _model(_calls(("add", {"a": 0, "b": 5}, "c1"), ("mul", {"a": 2, "b": 5}, "c2")),
                       AIMessage(content="done"))
        agent = _on(E, _agent(model, middleware=[cache]))
        return _msgs(agent.invoke(_hi()))

    differential(scenario)


def test_wrap_tool_call_returning_a_command_updates_custom_state(differential):
    def scenario(E):
        from langchain.agents.middleware import AgentMiddleware, AgentState
        from langgraph.types import Command

        class Audit(AgentState):
            audit: NotRequired[Annotated[list, operator.add]]

        class Auditor(AgentMiddleware):
            state_schema = Audit

            def wrap_tool_call(self, request, handler):
                result = handler(request)
                return Command(update={"messages": [result],
                                       "audit": [f"{request.tool_call['name']}={result.content}"]})

        model = _model(_calls(("add", {"a": 1, "b": 2}, "c1"), ("mul", {"a": 2, "b": 5}, "c2")),
                       _call("add", {"a": 3, "b": 3}, "c3"), AIMessage(content="done"))
        agent = _on(E, _agent(model, middleware=[Auditor()]))
        out = agent.invoke(_hi())
        return _msgs(out), out["audit"]

    differential(scenario)


def test_dynamic_prompt_reads_the_runtime_context(differential):
    def scenario(E):
        from langchain.agents.middleware import dynamic_prompt

        @dataclasses.dataclass
        class Ctx:
            user_name: str
            expert: bool = False

        @dynamic_prompt
        def prompt(request):
            ctx = request.runtime.context
            level = "expert" if ctx.expert else "beginner"
            return f"Talk to {ctx.user_name}, a {level}. {len(request.messages)} messages so far."

        model = _model(AIMessage(content="hi ann"), AIMessage(content="hi bob"))
        agent = _on(E, _agent(model, middleware=[prompt], context_schema=Ctx,
                              system_prompt="ignored when dynamic"))
        agent.invoke(_hi(), context=Ctx("ann"))
        agent.invoke(_hi(), context=Ctx("bob", expert=True))
        return [s for s in model.seen if s[0] == "call"]

    differential(scenario)


def test_system_prompt_is_sent_first_and_not_saved(differential):
    def scenario(E):
        model = _model(AIMessage(content="ok"))
        agent = _on(E, _agent(model, system_prompt=SystemMessage("You are terse.")))
        out = agent.invoke(_hi())
        return _msgs(out), [s for s in model.seen if s[0] == "call"]

    differential(scenario)


def test_class_middleware_with_agent_hooks_state_and_its_own_tool(differential):
    def scenario(E):
        from langchain.agents.middleware import AgentMiddleware, AgentState

        @tool
        def lookup(key: str) -> str:
            """Look a key up."""
            return key.upper()

        class Trace(AgentState):
            trace: NotRequired[Annotated[list, operator.add]]

        class Tracer(AgentMiddleware):
            state_schema = Trace
            tools = [lookup]

            def before_agent(self, state, runtime):
                return {"trace": ["start"]}

            def before_model(self, state, runtime):
                return {"trace": [f"model@{len(state['messages'])}"]}

            def after_model(self, state, runtime):
                return {"trace": ["after_model"]}

            def after_agent(self, state, runtime):
                return {"trace": ["end"]}

        model = _model(_call("lookup", {"key": "k"}, "l1"), AIMessage(content="K"))
        agent = _on(E, _agent(model, (), middleware=[Tracer()]))
        chunks = _updates(collect(lambda: agent.stream(_hi(), stream_mode="updates")))
        return chunks, sorted(agent.get_graph().nodes), model.seen[0]

    differential(scenario)


def test_middleware_hooks_run_in_order_and_reverse_order(differential):
    def scenario(E):
        from langchain.agents.middleware import AgentMiddleware, AgentState

        class Log(AgentState):
            log: NotRequired[Annotated[list, operator.add]]

        def make(tag):
            class M(AgentMiddleware):
                state_schema = Log
                name = f"M{tag}"

                def before_model(self, state, runtime):
                    return {"log": [f"before {tag}"]}

                def after_model(self, state, runtime):
                    return {"log": [f"after {tag}"]}

                def wrap_model_call(self, request, handler):
                    resp = handler(request)
                    resp.result[0].content += f" <{tag}>"
                    return resp

            return M()

        agent = _on(E, _agent(_model(AIMessage(content="x")), middleware=[make(1), make(2), make(3)]))
        out = agent.invoke(_hi())
        return out["log"], _msgs(out)

    differential(scenario)


def test_middleware_hook_that_interrupts_pauses_and_resumes(differential):
    def scenario(E):
        from langchain.agents.middleware import before_model
        from langgraph.types import interrupt

        @before_model
        def confirm_budget(state, runtime):
            if len(state["messages"]) == 1:
                answer = interrupt({"budget?": state["messages"][-1].content})
                return {"messages": [HumanMessage(f"budget is {answer}", id="b")]}
            return None

        agent = _on(E, _agent(_model(AIMessage(content="planned")), middleware=[confirm_budget],
                              checkpointer=E.InMemorySaver()))
        first = _updates(collect(lambda: agent.stream(_hi("plan trip"), _cfg(), stream_mode="updates")))
        state = agent.get_state(_cfg())
        rest = _updates(collect(lambda: agent.stream(E.Command(resume=500), _cfg(), stream_mode="updates")))
        return first, state.next, [t.name for t in state.tasks], rest

    differential(scenario)


# --- schemas, structured output, runtime ----------------------------------------------------


def test_custom_state_schema_keys_flow_in_and_out(differential):
    def scenario(E):
        from langchain.agents import AgentState
        from langchain.agents.middleware import before_model

        class CustomState(AgentState):
            user_id: str
            visits: NotRequired[int]

        @before_model
        def count(state, runtime):
            return {"visits": state.get("visits", 0) + 1}

        agent = _on(E, _agent(_model(_call("add", {"a": 1, "b": 1}, "c1"), AIMessage(content="2")),
                              state_schema=CustomState, middleware=[count]))
        out = agent.invoke({"messages": [HumanMessage("q", id="h")], "user_id": "u7"})
        return {k: v for k, v in out.items() if k != "messages"}, _msgs(out)

    differential(scenario)


def test_structured_output_with_tool_strategy(differential):
    def scenario(E):
        from langchain.agents.structured_output import ToolStrategy

        class Weather(BaseModel):
            city: str
            degrees: int

        model = _model(_call("add", {"a": 20, "b": 1}, "c1"),
                       _call("Weather", {"city": "Oslo", "degrees": 21}, "w1"))
        agent = _on(E, _agent(model, response_format=ToolStrategy(Weather)))
        out = agent.invoke(_hi())
        return out["structured_response"], _msgs(out)

    differential(scenario)


def test_structured_output_validation_error_is_fed_back_for_a_retry(differential):
    def scenario(E):
        class Contact(BaseModel):
            name: str
            age: int

        model = _model(_call("Contact", {"name": "Ann", "age": "old"}, "x1"),
                       _call("Contact", {"name": "Ann", "age": 40}, "x2"))
        agent = _on(E, _agent(model, (), response_format=Contact))
        chunks = _updates(collect(lambda: agent.stream(_hi(), stream_mode="updates")))
        return chunks

    differential(scenario)


def test_structured_output_with_two_schema_calls_at_once_asks_again(differential):
    def scenario(E):
        from langchain.agents.structured_output import ToolStrategy

        class A(BaseModel):
            x: int

        class B(BaseModel):
            y: int

        model = _model(_calls(("A", {"x": 1}, "a1"), ("B", {"y": 2}, "b1")),
                       _call("B", {"y": 3}, "b2"))
        agent = _on(E, _agent(model, (), response_format=ToolStrategy(A | B)))
        out = agent.invoke(_hi())
        return out["structured_response"], _msgs(out)

    differential(scenario)


def test_tools_read_state_context_store_and_write_stream_events(differential):
    def scenario(E):
        from langchain.tools import ToolRuntime
        from langgraph.store.memory import InMemoryStore

        @dataclasses.dataclass
        class Ctx:
            user_id: str

        @tool
        def remember(fact: str, runtime: ToolRuntime[Ctx]) -> str:
            """Remember a fact about the user."""
            uid = runtime.context.user_id
            runtime.store.put(("facts", uid), fact, {"fact": fact})
            runtime.stream_writer({"saved": fact, "messages_so_far": len(runtime.state["messages"])})
            return f"saved for {uid} (call {runtime.tool_call_id})"

        @tool
        def recall(runtime: ToolRuntime[Ctx]) -> str:
            """Recall facts about the user."""
            items = runtime.store.search(("facts", runtime.context.user_id))
            return ", ".join(sorted(i.value["fact"] for i in items))

        store = InMemoryStore()
        model = _model(_call("remember", {"fact": "likes tea"}, "r1"), _call("recall", {}, "r2"),
                       AIMessage(content="you like tea"))
        agent = _on(E, _agent(model, (remember, recall), context_schema=Ctx, store=store))
        chunks = collect(lambda: agent.stream(_hi(), stream_mode=["custom", "updates"],
                                              context=Ctx("u1")))
        custom = [c for mode, c in chunks if mode == "custom"]
        updates = [_updates([c]) for mode, c in chunks if mode == "updates"]
        saved = [(i.namespace, i.key, i.value) for i in store.search(("facts", "u1"))]
        return custom, updates, saved

    differential(scenario)


def test_tools_with_injected_state_and_store(differential):
    def scenario(E):
        from langchain.agents import AgentState
        from langgraph.prebuilt import InjectedState, InjectedStore
        from langgraph.store.memory import InMemoryStore

        class S(AgentState):
            plan: str

        @tool
        def status(state: Annotated[dict, InjectedState], plan: Annotated[str, InjectedState("plan")]) -> str:
            """Report the plan status."""
            return f"{plan} after {len(state['messages'])} messages"

        @tool
        def note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
            """Write a note."""
            store.put(("notes",), "n", {"text": text})
            return "noted"

        store = InMemoryStore()
        model = _model(_calls(("status", {}, "s1"), ("note", {"text": "hi"}, "n1")),
                       AIMessage(content="ok"))
        agent = _on(E, _agent(model, (status, note), state_schema=S, store=store))
        out = agent.invoke({"messages": [HumanMessage("q", id="h")], "plan": "gold"})
        return _msgs(out), store.get(("notes",), "n").value

    differential(scenario)


def test_tool_returning_a_command_updates_custom_state_and_messages(differential):
    def scenario(E):
        from langchain.agents import AgentState
        from langchain.tools import ToolRuntime
        from langgraph.types import Command

        class S(AgentState):
            cart: NotRequired[Annotated[list, operator.add]]

        @tool
        def add_to_cart(item: str, runtime: ToolRuntime) -> Command:
            """Put an item in the cart."""
            return Command(update={
                "cart": [item],
                "messages": [ToolMessage(f"added {item}", tool_call_id=runtime.tool_call_id)]})

        model = _model(_calls(("add_to_cart", {"item": "pen"}, "a1"),
                              ("add_to_cart", {"item": "ink"}, "a2")), AIMessage(content="2 items"))
        agent = _on(E, _agent(model, (add_to_cart,), state_schema=S))
        out = agent.invoke(_hi())
        return _msgs(out), sorted(out["cart"])

    differential(scenario)


# --- streams, nesting, async ----------------------------------------------------------------


def test_agent_streams_tokens_with_node_metadata(differential):
    def scenario(E):
        model = _streaming(_call("add", {"a": 1, "b": 2}, "c1", content="adding"),
                                           AIMessage(content="the sum is 3"))
        agent = _on(E, _agent(model))
        out = []
        for chunk, meta in agent.stream(_hi(), stream_mode="messages"):
            out.append((type(chunk).__name__, chunk.content, meta["langgraph_node"],
                        meta["langgraph_step"], meta["langgraph_triggers"],
                        meta.get("langgraph_checkpoint_ns", "").split(":")[0]))
        return out

    differential(scenario)


def test_agent_streams_values_and_debug_events(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelCallLimitMiddleware

        agent = _on(E, _agent(_model(_call("add", {"a": 1, "b": 2}, "c1"), AIMessage(content="3")),
                              middleware=[ModelCallLimitMiddleware(run_limit=3)]))
        values = [(len(v["messages"]), sorted(v)) for v in agent.stream(_hi(), stream_mode="values")]
        tasks = [(c["name"], "result" in c, c.get("triggers"))
                 for c in agent.stream(_hi(), stream_mode="tasks")]
        return values, tasks

    differential(scenario)


def _parent(E, agent, checkpointer=None):
    g = E.StateGraph(E.MessagesState)
    g.add_node("prep", lambda s: {"messages": [HumanMessage("prepared", id="p")]})
    g.add_node("assistant", agent)
    g.add_node("after", lambda s: {"messages": [AIMessage(content="after", id="af")]})
    g.add_edge(E.START, "prep")
    g.add_edge("prep", "assistant")
    g.add_edge("assistant", "after")
    return g.compile(checkpointer=checkpointer)


def test_agent_as_a_node_streams_updates_and_tokens_as_a_subgraph(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelCallLimitMiddleware

        model = _streaming(_call("add", {"a": 1, "b": 2}, "c1", content="hm"),
                                           AIMessage(content="three"))
        agent = _agent(model, middleware=[ModelCallLimitMiddleware(run_limit=3)])
        app = _parent(E, agent)
        out = []
        for ns, mode, chunk in app.stream(_hi(), stream_mode=["updates", "messages"], subgraphs=True):
            ns = tuple(s.split(":")[0] for s in ns)
            if mode == "messages":
                msg, meta = chunk
                out.append((ns, mode, msg.content, meta["langgraph_node"],
                            tuple(meta["langgraph_checkpoint_ns"].split("|")[0].split(":")[:1])))
            else:
                out.append(_updates([(ns, chunk)]))
        return out

    differential(scenario)


def test_agent_node_with_hitl_pauses_parent_and_exposes_the_subgraph_state(differential):
    def scenario(E):
        from langchain.agents.middleware import HumanInTheLoopMiddleware

        agent = _agent(_model(_call("mul", {"a": 6, "b": 7}, "c1"), AIMessage(content="42")),
                       middleware=[HumanInTheLoopMiddleware({"mul": True})])
        app = _parent(E, agent, checkpointer=E.InMemorySaver())
        first = app.invoke(_hi(), _cfg())
        state = app.get_state(_cfg(), subgraphs=True)
        inner = state.tasks[0].state
        out = app.invoke(E.Command(resume={"decisions": [
            {"type": "edit", "edited_action": {"name": "mul", "args": {"a": 6, "b": 6}}}]}), _cfg())
        hist = [(s.next, s.metadata["step"]) for s in app.get_state_history(_cfg())]
        return ([i.value for i in first["__interrupt__"]], state.next, inner.next,
                _msgs(inner.values), _msgs(out), hist)

    differential(scenario)


def test_agent_called_inside_a_tool_of_another_agent(differential):
    def scenario(E):
        inner = _agent(_model(AIMessage(content="inner says 5")), name="researcher")

        @tool
        def research(question: str) -> str:
            """Ask the research agent."""
            result = inner.invoke({"messages": [HumanMessage(question, id="iq")]})
            return result["messages"][-1].content

        outer = _on(E, _agent(_model(_call("research", {"question": "2+3?"}, "r1"),
                                     AIMessage(content="it is 5")), (research,)))
        chunks = collect(lambda: outer.stream(_hi(), stream_mode="updates", subgraphs=True))
        return _updates(chunks)

    differential(scenario)


def test_agent_runs_async_with_async_middleware_and_tools(differential):
    async def scenario(E):
        from langchain.agents.middleware import after_model, wrap_model_call, wrap_tool_call

        @tool
        async def slow_add(a: int, b: int) -> int:
            """Add asynchronously."""
            return a + b

        @wrap_model_call
        async def tag(request, handler):
            resp = await handler(request)
            resp.result[0].content = f"<{resp.result[0].content}>"
            return resp

        @wrap_tool_call
        async def double(request, handler):
            res = await handler(request)
            res.content = res.content * 2
            return res

        @after_model
        async def note(state, runtime):
            return None

        def build():
            return _on(E, _agent(_model(_call("slow_add", {"a": 1, "b": 2}, "c1"),
                                        AIMessage(content="3")),
                                 (slow_add,), middleware=[tag, double, note]))

        chunks = _updates([c async for c in build().astream(_hi(), stream_mode="updates")])
        out = await build().ainvoke(_hi())
        return chunks, _msgs(out)

    differential(scenario)


def test_async_hitl_per_call_pauses_and_resumes(differential):
    async def scenario(E):
        model = _model(_calls(("add", {"a": 1, "b": 2}, "c1"), ("mul", {"a": 3, "b": 4}, "c2")),
                       AIMessage(content="done"))
        agent = _hitl(E, model, {"add": True, "mul": True}, interrupt_mode="per_call")
        first = await agent.ainvoke(_hi(), _cfg(), version="v2")
        pending = sorted(first.interrupts, key=lambda i: i.value["name"])
        out = await agent.ainvoke(E.Command(resume={i.id: {"type": "approve"} for i in pending}),
                                  _cfg(), version="v2")
        return [i.value["name"] for i in pending], _msgs(out.value)

    differential(scenario)


def test_subagent_with_review_called_inside_a_tool_pauses_the_outer_agent(differential):
    """The deepagents pattern: a tool invokes another agent; that agent's review pause
    pauses the whole run, and the resume reaches it."""

    def scenario(E):
        from langchain.agents.middleware import HumanInTheLoopMiddleware

        inner = _agent(_model(_call("mul", {"a": 2, "b": 3}, "m1"), AIMessage(content="inner: 6")),
                       middleware=[HumanInTheLoopMiddleware({"mul": True})], name="worker")

        @tool
        def delegate(task: str) -> str:
            """Delegate a task to the worker agent."""
            result = inner.invoke({"messages": [HumanMessage(task, id="t")]})
            return result["messages"][-1].content

        outer = _on(E, _agent(_model(_call("delegate", {"task": "multiply"}, "d1"),
                                     AIMessage(content="outer done")), (delegate,),
                              checkpointer=E.InMemorySaver()))
        first = outer.invoke(_hi(), _cfg())
        paused = outer.get_state(_cfg())
        out = capture(lambda: _msgs(outer.invoke(
            E.Command(resume={"decisions": [{"type": "approve"}]}), _cfg())))
        return ([i.value for i in first.get("__interrupt__", [])], _msgs(first), paused.next, out)

    differential(scenario)


def test_tool_selector_narrows_the_tools_the_model_sees(differential):
    def scenario(E):
        from langchain.agents.middleware import LLMToolSelectorMiddleware

        @tool
        def search(q: str) -> str:
            """Search the web."""
            return "found"

        selector = _model(_call("ToolSelectionResponse", {"tools": ["mul", "add"]}, "s1"))
        model = _model(_call("mul", {"a": 2, "b": 4}, "c1"), AIMessage(content="8"))
        agent = _on(E, _agent(model, (add, mul, search), middleware=[
            LLMToolSelectorMiddleware(model=selector, max_tools=1, always_include=["search"])]))
        out = agent.invoke(_hi("multiply"))
        return _msgs(out), [s for s in model.seen if s[0] == "tools"], selector.seen[1:2]

    differential(scenario)


def test_parallel_tools_that_interrupt_are_resumed_by_interrupt_id(differential):
    def scenario(E):
        from langgraph.types import interrupt

        @tool
        def confirm(item: str) -> str:
            """Confirm an item with a human."""
            return f"{item}: {interrupt({'confirm': item})}"

        model = _model(_calls(("confirm", {"item": "a"}, "k1"), ("confirm", {"item": "b"}, "k2")),
                       AIMessage(content="both confirmed"))
        agent = _on(E, _agent(model, (confirm,), checkpointer=E.InMemorySaver()))
        first = agent.invoke(_hi(), _cfg())
        pending = sorted(first["__interrupt__"], key=lambda i: i.value["confirm"])
        state = agent.get_state(_cfg())
        out = agent.invoke(E.Command(resume={i.id: f"ok-{i.value['confirm']}" for i in pending}), _cfg())
        return ([i.value for i in pending], state.next, sorted(t.name for t in state.tasks),
                _msgs(out))

    differential(scenario)


def test_tool_exception_without_error_middleware_fails_the_run_and_is_saved(differential):
    def scenario(E):
        @tool
        def explode(x: int) -> str:
            """Always fails."""
            raise KeyError(f"missing {x}")

        agent = _on(E, _agent(_model(_call("explode", {"x": 1}, "e1"), AIMessage(content="x")),
                              (explode,), checkpointer=E.InMemorySaver()))
        err = capture(lambda: agent.invoke(_hi(), _cfg()))
        state = agent.get_state(_cfg())
        return err, state.next, [(t.name, repr(t.error)) for t in state.tasks]

    differential(scenario)


def test_invalid_tool_arguments_come_back_as_an_error_message(differential):
    def scenario(E):
        model = _model(_call("add", {"a": "one", "b": 2}, "c1"), _call("nope", {}, "c2"),
                       AIMessage(content="gave up"))
        agent = _on(E, _agent(model))
        return _msgs(agent.invoke(_hi()))

    differential(scenario)


def test_recursion_limit_stops_a_looping_agent(differential):
    def scenario(E):
        agent = _on(E, _agent(_model(*_looping(20))))
        err = capture(lambda: agent.invoke(_hi(), {"recursion_limit": 5}))
        return err

    differential(scenario)


def test_time_travel_replays_and_forks_an_agent_thread(differential):
    def scenario(E):
        model = _model(_call("add", {"a": 1, "b": 2}, "c1"), AIMessage(content="three"),
                       AIMessage(content="replayed answer"), AIMessage(content="forked answer"))
        agent = _on(E, _agent(model, checkpointer=E.InMemorySaver()))
        agent.invoke(_hi(), _cfg())
        history = list(agent.get_state_history(_cfg()))
        before_model = next(s for s in history if s.next == ("model",) and len(s.values["messages"]) == 3)
        replay = _msgs(agent.invoke(None, before_model.config))
        fork = agent.update_state(before_model.config,
                                  {"messages": [HumanMessage("actually, skip it", id="fk")]},
                                  as_node="tools")
        out = agent.invoke(None, fork)
        return ([(s.next, s.metadata["step"]) for s in history], replay, _msgs(out),
                [(s.next, s.metadata["source"]) for s in agent.get_state_history(_cfg())])

    differential(scenario)


def test_fork_without_as_node_after_the_tools_step_is_refused_by_the_router(differential):
    """With no `as_node`, LangGraph attributes the update to `model` (the last writer):
    the agent's router after `model` refuses the state (no pending tool call, no answer)."""

    def scenario(E):
        model = _model(_call("add", {"a": 1, "b": 2}, "c1"), AIMessage(content="three"),
                       AIMessage(content="forked"))
        agent = _on(E, _agent(model, checkpointer=E.InMemorySaver()))
        agent.invoke(_hi(), _cfg())
        target = next(s for s in agent.get_state_history(_cfg())
                      if s.next == ("model",) and len(s.values["messages"]) == 3)
        return capture(lambda: agent.update_state(
            target.config, {"messages": [HumanMessage("x", id="fk")]})), len(list(
                agent.get_state_history(_cfg())))

    differential(scenario, exc="extends")


def test_before_agent_hook_can_end_the_run_immediately(differential):
    def scenario(E):
        from langchain.agents.middleware import AgentMiddleware, hook_config

        class Closed(AgentMiddleware):
            @hook_config(can_jump_to=["end"])
            def before_agent(self, state, runtime):
                return {"messages": [AIMessage(content="we are closed", id="cl")], "jump_to": "end"}

            def after_agent(self, state, runtime):
                return {"messages": [AIMessage(content="bye", id="by")]}

        model = _model(AIMessage(content="never"))
        agent = _on(E, _agent(model, middleware=[Closed()]))
        chunks = _updates(collect(lambda: agent.stream(_hi(), stream_mode="updates")))
        return chunks, model.seen

    differential(scenario)


def test_structured_output_agent_as_a_node_hands_its_response_to_the_parent(differential):
    def scenario(E):
        class Verdict(BaseModel):
            ok: bool
            reason: str

        class S(TypedDict):
            messages: Annotated[list, E.add_messages]
            structured_response: Any
            final: str

        agent = _agent(_model(_call("Verdict", {"ok": True, "reason": "fine"}, "v1")), (),
                       response_format=Verdict)
        g = E.StateGraph(S)
        g.add_node("judge", agent)
        g.add_node("report", lambda s: {"final": f"{s['structured_response'].ok}/{s['structured_response'].reason}"})
        g.add_edge(E.START, "judge")
        g.add_edge("judge", "report")
        app = g.compile()
        chunks = _updates(collect(lambda: app.stream(_hi(), stream_mode="updates", subgraphs=True)))
        return chunks

    differential(scenario)


def test_astream_events_reports_the_agent_nodes_and_the_chat_model(differential):
    async def scenario(E):
        agent = _on(E, _agent(_streaming(
            _call("add", {"a": 1, "b": 2}, "c1", content="x"), AIMessage(content="done"))))
        out = []
        async for ev in agent.astream_events(_hi(), version="v2"):
            if ev["event"] in ("on_chain_start", "on_chain_end", "on_chat_model_start",
                               "on_chat_model_end", "on_tool_start", "on_tool_end"):
                out.append((ev["event"], ev["name"], ev["metadata"].get("langgraph_node")))
        return out

    differential(scenario)


def test_agent_messages_stream_async_with_tokens(differential):
    async def scenario(E):
        agent = _on(E, _agent(_streaming(
            _call("add", {"a": 2, "b": 2}, "c1", content="let me add"), AIMessage(content="four it is"))))
        out = []
        async for chunk, meta in agent.astream(_hi(), stream_mode="messages"):
            out.append((type(chunk).__name__, chunk.content, meta["langgraph_node"], meta["langgraph_step"]))
        return out

    differential(scenario)


def test_middleware_writes_custom_events_seen_through_the_parent_stream(differential):
    def scenario(E):
        from langchain.agents.middleware import before_model, wrap_tool_call
        from langgraph.config import get_stream_writer

        @before_model
        def progress(state, runtime):
            runtime.stream_writer({"phase": "thinking", "n": len(state["messages"])})
            return None

        @wrap_tool_call
        def announce(request, handler):
            get_stream_writer()({"phase": "tool", "name": request.tool_call["name"]})
            return handler(request)

        agent = _agent(_model(_call("add", {"a": 1, "b": 1}, "c1"), AIMessage(content="2")),
                       middleware=[progress, announce])
        app = _parent(E, agent)
        return [(tuple(s.split(":")[0] for s in ns), mode, chunk if mode == "custom" else sorted(chunk))
                for ns, mode, chunk in app.stream(_hi(), stream_mode=["custom", "updates"],
                                                  subgraphs=True)]

    differential(scenario)


def test_agent_interrupt_before_and_after_named_nodes(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelCallLimitMiddleware

        agent = _on(E, _agent(_model(_call("add", {"a": 1, "b": 1}, "c1"), AIMessage(content="2")),
                              middleware=[ModelCallLimitMiddleware(run_limit=5)],
                              checkpointer=E.InMemorySaver(), interrupt_before=["tools"],
                              interrupt_after=["ModelCallLimitMiddleware.before_model"]))
        stops = []
        payload = _hi()
        for _ in range(6):
            agent.invoke(payload, _cfg())
            payload = None
            state = agent.get_state(_cfg())
            stops.append((state.next, len(state.values["messages"])))
            if not state.next:
                break
        return stops

    differential(scenario)


def test_two_agents_fanned_out_with_send_write_back_to_the_parent(differential):
    def scenario(E):
        class S(TypedDict):
            topics: list
            messages: Annotated[list, E.add_messages]

        def agent_for(topic):
            return _agent(_model(AIMessage(content=f"report on {topic}", id=f"r-{topic}")), ())

        writers = {t: agent_for(t) for t in ("cats", "dogs")}

        def fan_out(state):
            return [E.Send(f"write_{t}", {"messages": [HumanMessage(t, id=f"q-{t}")]})
                    for t in state["topics"]]

        g = E.StateGraph(S)
        g.add_node("plan", lambda s: {})
        for t, a in writers.items():
            g.add_node(f"write_{t}", a)
        g.add_edge(E.START, "plan")
        g.add_conditional_edges("plan", fan_out, [f"write_{t}" for t in writers])
        app = g.compile()
        out = app.invoke({"topics": ["cats", "dogs"], "messages": []})
        return sorted(m.content for m in out["messages"])

    differential(scenario)


def test_agent_node_state_is_checkpointed_under_the_parent_thread(differential):
    def scenario(E):
        from langchain.agents.middleware import ModelCallLimitMiddleware

        agent = _agent(_model(AIMessage(content="a1"), AIMessage(content="a2"), AIMessage(content="a3")),
                       middleware=[ModelCallLimitMiddleware(thread_limit=1)])
        app = _parent(E, agent, checkpointer=E.InMemorySaver())
        first = _msgs(app.invoke(_hi(), _cfg()))
        second = _msgs(app.invoke({"messages": [HumanMessage("again", id="h2")]}, _cfg()))
        hist = [(s.next, s.metadata["step"], s.metadata["source"]) for s in app.get_state_history(_cfg())]
        return first, second, hist

    differential(scenario)


def test_agent_with_a_custom_state_key_as_a_node_of_a_parent_sharing_it(differential):
    def scenario(E):
        from langchain.agents import AgentState
        from langchain.tools import ToolRuntime
        from langgraph.types import Command

        class Shared(AgentState):
            budget: int

        @tool
        def spend(amount: int, runtime: ToolRuntime) -> Command:
            """Spend from the budget."""
            left = runtime.state["budget"] - amount
            return Command(update={"budget": left, "messages": [
                ToolMessage(f"left {left}", tool_call_id=runtime.tool_call_id)]})

        class P(TypedDict):
            messages: Annotated[list, E.add_messages]
            budget: int

        agent = _agent(_model(_call("spend", {"amount": 30}, "s1"), AIMessage(content="spent")),
                       (spend,), state_schema=Shared)
        g = E.StateGraph(P)
        g.add_node("shopper", agent)
        g.add_node("audit", lambda s: {"messages": [AIMessage(content=f"budget {s['budget']}", id="au")]})
        g.add_edge(E.START, "shopper")
        g.add_edge("shopper", "audit")
        out = g.compile().invoke({"messages": [HumanMessage("buy", id="h")], "budget": 100})
        return out["budget"], _msgs(out)

    differential(scenario)


# --- the engine's signals through middleware that catches errors -----------------------------


def _asking_tool(E, asked):
    @tool
    def ask_human(question: str) -> str:
        """Ask a person."""
        asked.append(question)
        return f"human said {E.interrupt(question)}"

    return ask_human


def test_a_tool_that_asks_a_human_pauses_an_agent_with_retry_and_error_middleware(differential):
    """A tool calling the engine's `interrupt()` inside `ToolRetryMiddleware` and
    `ToolErrorMiddleware` (both catch `Exception`, and let LangGraph's `GraphBubbleUp`
    through): the agent pauses with the question, it is not retried nor turned into an
    error message, and the resume answers it."""
    def scenario(E):
        from langchain.agents.middleware import ToolErrorMiddleware, ToolRetryMiddleware

        asked = []
        model = _model(_call("ask_human", {"question": "ship it?"}, "q1"), AIMessage(content="shipped"))
        agent = _on(E, _agent(model, (_asking_tool(E, asked),), checkpointer=E.InMemorySaver(), middleware=[
            ToolRetryMiddleware(max_retries=3, initial_delay=0, jitter=False),
            ToolErrorMiddleware(lambda exc, request: f"failed: {exc!r}")]))
        first = agent.invoke(_hi(), _cfg())
        paused = ([i.value for i in first["__interrupt__"]], _msgs(first), list(asked))
        done = agent.invoke(E.Command(resume="yes"), _cfg())
        return paused, _msgs(done), asked

    ref = differential(scenario)
    assert ref[0][0] == ["ship it?"] and ref[0][2] == ["ship it?"]


def test_a_model_middleware_that_retries_lets_an_interrupting_subagent_pause_the_caller(differential):
    """`ModelRetryMiddleware` around a model call whose wrapped handler raises the
    engine's `GraphInterrupt` (a sub-graph called inside it paused): the run pauses,
    no retry."""
    def scenario(E):
        from langchain.agents.middleware import ModelRetryMiddleware, wrap_model_call

        calls = []

        @wrap_model_call
        def ask_first(request, handler):
            calls.append("ask")
            answer = E.interrupt("which model?")
            return handler(request.override(system_message=SystemMessage(f"use {answer}")))

        model = _model(AIMessage(content="done"))
        agent = _on(E, _agent(model, (), checkpointer=E.InMemorySaver(), middleware=[
            ModelRetryMiddleware(max_retries=3, initial_delay=0, jitter=False), ask_first]))
        first = agent.invoke(_hi(), _cfg())
        done = agent.invoke(E.Command(resume="small"), _cfg())
        return [i.value for i in first["__interrupt__"]], _msgs(done), calls

    ref = differential(scenario)
    assert ref[2] == ["ask", "ask"]


def test_the_v3_stream_of_an_agent_has_its_tool_calls_and_subagents_projections(differential):
    """`stream_events(version="v3")` on an agent: the projections `create_agent`
    registers (`tool_calls`, `subagents`, written against LangGraph's stream classes) run
    on lgnb's stream; a sub-agent called from a tool is surfaced under its own name."""
    def scenario(E):
        inner = _on(E, _agent(_model(AIMessage(content="sunny")), (), name="weather_agent"))

        @tool
        def call_weather(city: str) -> str:
            """Ask the weather agent."""
            return inner.invoke({"messages": [HumanMessage(f"weather in {city}")]})["messages"][-1].content

        outer = _on(E, _agent(_model(_call("call_weather", {"city": "SF"}, "w1"), AIMessage(content="it is sunny")),
                              (call_weather,), name="supervisor"))
        run = outer.stream_events(_hi(), version="v3")
        out = []
        for handle in run.subagents:
            out.append((handle.name, handle.cause))
            for _ in handle:
                pass
        run = outer.stream_events(_hi(), version="v3")
        calls = [(c.tool_name, c.tool_call_id) for c in run.tool_calls]
        return out, calls, _msgs(run.output)

    ref = differential(scenario)
    assert ref[0] == [("weather_agent", {"type": "toolCall", "tool_call_id": "w1"})]
    assert ref[1] == [("call_weather", "w1")]
