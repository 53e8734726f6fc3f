"""Output shapes of the `messages` stream: v1 tuples and v2 typed parts, alone and mixed
with updates / custom / values / tasks, with `subgraphs=True`, sync and async, and with a
user callback handler in the config at the same time."""

from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.messages import AIMessage

from _diff import acollect, collect
from _models import HI, TOOL_CALL_TURN, ScriptedStreamingModel, chain, fake, one_node


def _app(E, *, text="tok one two"):
    model = fake(text)

    def chat(s):
        E.get_stream_writer()({"progress": "calling model"})
        msg = model.invoke(s["messages"])
        E.get_stream_writer()({"progress": "done"})
        return {"messages": [msg]}

    return chain(E, ("chat", chat), ("after", lambda s: {"messages": [AIMessage("after", id="af")]}))


def _sub_app(E):
    return one_node(E, _app(E), name="child")


def test_v1_messages_alone_yields_message_metadata_tuples(differential):
    def scenario(E):
        return list(_app(E).stream(HI, stream_mode="messages"))

    ref = differential(scenario)
    assert all(isinstance(c, tuple) and len(c) == 2 for c in ref)


def test_v1_messages_in_a_list_yields_mode_tuples(differential):
    def scenario(E):
        return list(_app(E).stream(HI, stream_mode=["messages"]))

    differential(scenario)


def test_v1_messages_mixed_with_updates_custom_values(differential):
    def scenario(E):
        return list(_app(E).stream(HI, stream_mode=["messages", "updates", "custom", "values"]))

    differential(scenario)


def test_v1_messages_mixed_with_tasks_and_debug(differential):
    def scenario(E):
        return list(_app(E).stream(HI, stream_mode=["tasks", "messages", "debug"]))

    differential(scenario)


def test_v1_messages_with_subgraphs_yields_namespace_tuples(differential):
    def scenario(E):
        return (list(_sub_app(E).stream(HI, stream_mode="messages", subgraphs=True)),
                list(_sub_app(E).stream(HI, stream_mode=["messages", "updates", "custom"], subgraphs=True)))

    differential(scenario)


def test_v2_messages_alone_yields_typed_parts(differential):
    def scenario(E):
        return list(_app(E).stream(HI, stream_mode="messages", version="v2"))

    ref = differential(scenario)
    assert all(set(p) >= {"type", "ns", "data"} and p["type"] == "messages" for p in ref)


def test_v2_messages_mixed_with_updates_custom_values(differential):
    def scenario(E):
        return list(_app(E).stream(HI, stream_mode=["values", "messages", "updates", "custom"], version="v2"))

    differential(scenario)


def test_v2_messages_with_subgraphs(differential):
    def scenario(E):
        return (list(_sub_app(E).stream(HI, stream_mode="messages", subgraphs=True, version="v2")),
                list(_sub_app(E).stream(HI, stream_mode=["messages", "updates"], subgraphs=True, version="v2")),
                list(_sub_app(E).stream(HI, stream_mode=["messages", "updates"], version="v2")))

    differential(scenario)


def test_v2_tool_call_chunks_pass_through_intact(differential):
    def scenario(E):
        model = ScriptedStreamingModel(script=[TOOL_CALL_TURN])
        app = one_node(E, lambda s: {"messages": [model.invoke(s["messages"])]})
        return list(app.stream(HI, stream_mode=["messages", "updates"], version="v2"))

    differential(scenario)


def test_invoke_v2_with_messages_stream_mode(differential):
    def scenario(E):
        return _app(E).invoke(HI, stream_mode="messages", version="v2")

    differential(scenario)


def test_astream_v1_and_v2_messages_mixed(differential):
    async def scenario(E):
        a = await acollect(lambda: _app(E).astream(HI, stream_mode=["messages", "updates", "custom"]))
        b = await acollect(lambda: _app(E).astream(HI, stream_mode=["messages", "values"], version="v2"))
        c = await acollect(lambda: _sub_app(E).astream(HI, stream_mode="messages", subgraphs=True, version="v2"))
        return a, b, c

    differential(scenario)


def test_astream_with_async_model_v2(differential):
    async def scenario(E):
        model = fake("async v2 parts")

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        return await acollect(lambda: one_node(E, chat).astream(HI, stream_mode=["messages", "updates"],
                                                                version="v2"))

    differential(scenario)


def test_messages_then_error_in_a_later_node_v2(differential):
    def scenario(E):
        model = fake("before the crash")

        def boom(s):
            raise RuntimeError("crash")

        app = chain(E, ("chat", lambda s: {"messages": [model.invoke(s["messages"])]}), ("boom", boom))
        return collect(lambda: app.stream(HI, stream_mode=["messages", "updates"], version="v2"))

    differential(scenario)


# --- user callbacks in the config at the same time -----------------------------------------


class Recorder(BaseCallbackHandler):
    """Records what a user's handler sees of the chat model (not of the engine's chains)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, tags=None,
                            metadata=None, **kw):
        self.events.append(("chat_model_start", sorted(tags or []), dict(metadata or {})))

    def on_llm_new_token(self, token, *, chunk=None, run_id, **kw):
        self.events.append(("token", token))

    def on_llm_end(self, response, *, run_id, **kw):
        self.events.append(("llm_end", response.generations[0][0].message.content))


class AsyncRecorder(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.events: list[Any] = []

    async def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None,
                                  tags=None, metadata=None, **kw):
        self.events.append(("chat_model_start", sorted(tags or []), dict(metadata or {})))

    async def on_llm_new_token(self, token, *, chunk=None, run_id, **kw):
        self.events.append(("token", token))


def test_user_callback_in_config_leaves_the_messages_stream_identical(differential):
    def scenario(E):
        rec = Recorder()
        out = list(_app(E).stream(HI, {"callbacks": [rec]}, stream_mode=["messages", "updates", "custom"]))
        return out

    differential(scenario)


def test_user_callback_sees_the_same_model_events(differential):
    def scenario(E):
        rec = Recorder()
        list(_app(E).stream(HI, {"callbacks": [rec], "tags": ["user"]}, stream_mode="messages"))
        return rec.events

    differential(scenario)


def test_user_callback_with_v2_and_subgraphs(differential):
    def scenario(E):
        rec = Recorder()
        out = list(_sub_app(E).stream(HI, {"callbacks": [rec]}, stream_mode=["messages", "updates"],
                                      subgraphs=True, version="v2"))
        return out, rec.events

    differential(scenario)


def test_user_callback_without_messages_mode_model_does_not_stream(differential):
    # no streaming handler: the model is called through _generate, no tokens reach the user
    def scenario(E):
        rec = Recorder()
        out = list(_app(E).stream(HI, {"callbacks": [rec]}, stream_mode="updates"))
        return out, rec.events

    differential(scenario)


def test_async_user_callback_with_astream_messages(differential):
    async def scenario(E):
        rec = AsyncRecorder()
        model = fake("async callback words")

        async def chat(s):
            return {"messages": [await model.ainvoke(s["messages"])]}

        out = await acollect(lambda: one_node(E, chat).astream(HI, {"callbacks": [rec]},
                                                               stream_mode="messages"))
        return out, rec.events

    differential(scenario)


def test_callback_manager_in_config_leaves_the_stream_identical(differential):
    def scenario(E):
        from langchain_core.callbacks import CallbackManager

        rec = Recorder()
        out = list(_app(E).stream(HI, {"callbacks": CallbackManager([rec])}, stream_mode="messages"))
        return out, rec.events

    differential(scenario)
