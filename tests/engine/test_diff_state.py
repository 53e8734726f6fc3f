"""State schemas, channels and reducers: same graph on LangGraph and lgnb, same observable.

No `from __future__ import annotations` here: state classes are defined inside scenarios
and their (local) annotations must be real objects for `get_type_hints`.
"""

import operator
from dataclasses import dataclass, field
from typing import Annotated, Optional

import pydantic
from typing_extensions import NotRequired, TypedDict

from _diff import attempt, capture, collect


def _linear(E, State, *nodes, **kw):
    """START -> nodes[0] -> ... -> END, nodes given as (name, fn)."""
    g = E.StateGraph(State, **kw)
    prev = E.START
    for name, fn in nodes:
        g.add_node(name, fn)
        g.add_edge(prev, name)
        prev = name
    g.add_edge(prev, E.END)
    return g.compile()


# --- TypedDict ---------------------------------------------------------------------------


def test_typeddict_plain_fields_are_last_value_and_annotated_fields_reduce(differential):
    def scenario(E):
        class State(TypedDict):
            name: str
            log: Annotated[list, operator.add]
            total: Annotated[int, operator.add]

        app = _linear(
            E,
            State,
            ("a", lambda s: {"name": "from-a", "log": ["a"], "total": 1}),
            ("b", lambda s: {"name": s["name"] + "+b", "log": ["b"], "total": 10}),
        )
        return app.invoke({"name": "in", "log": ["start"], "total": 100})

    differential(
        scenario, expect={"name": "from-a+b", "log": ["start", "a", "b"], "total": 111}
    )


def test_typeddict_missing_input_keys_are_absent_from_state_seen_by_nodes(differential):
    def scenario(E):
        class State(TypedDict):
            a: str
            b: NotRequired[str]
            c: Annotated[list, operator.add]

        seen = []

        def node(s):
            seen.append(dict(s))
            return {"b": "set"}

        out = _linear(E, State, ("n", node)).invoke({"a": "x"})
        return seen, out

    differential(scenario)


def test_node_returning_none_writes_nothing(differential):
    def scenario(E):
        class State(TypedDict):
            a: int

        app = _linear(E, State, ("noop", lambda s: None), ("inc", lambda s: {"a": s["a"] + 1}))
        return app.invoke({"a": 1}), list(app.stream({"a": 1}, stream_mode="updates"))

    differential(scenario)


def test_node_returning_empty_dict_emits_empty_update(differential):
    def scenario(E):
        class State(TypedDict):
            a: int

        app = _linear(E, State, ("empty", lambda s: {}))
        return list(app.stream({"a": 1}, stream_mode=["updates", "values"]))

    differential(scenario)


def test_node_update_with_key_not_in_schema(differential):
    def scenario(E):
        class State(TypedDict):
            a: int

        app = _linear(E, State, ("n", lambda s: {"a": 2, "zzz": 3}))
        return capture(lambda: app.invoke({"a": 1}))

    differential(scenario)


def test_input_with_key_not_in_schema_is_ignored(differential):
    def scenario(E):
        class State(TypedDict):
            a: int

        seen = []
        app = _linear(E, State, ("n", lambda s: seen.append(dict(s)) or {"a": s["a"] + 1}))
        return capture(lambda: app.invoke({"a": 1, "other": 5})), seen

    differential(scenario)


# --- dataclass ---------------------------------------------------------------------------


def test_dataclass_state_nodes_receive_instances_output_is_dict(differential):
    def scenario(E):
        @dataclass
        class State:
            query: str
            hits: Annotated[list, operator.add] = field(default_factory=list)
            note: str = "default-note"

        seen = []

        def search(s):
            seen.append((type(s).__name__, s.query, list(s.hits), s.note))
            return {"hits": [s.query.upper()]}

        def annotate(s):
            seen.append((type(s).__name__, s.query, list(s.hits), s.note))
            return {"note": f"{len(s.hits)} hit(s)"}

        app = _linear(E, State, ("search", search), ("annotate", annotate))
        out = app.invoke({"query": "cats"})
        return seen, out, list(app.stream({"query": "dogs"}, stream_mode="values"))

    differential(scenario)


def test_dataclass_state_input_missing_required_field(differential):
    def scenario(E):
        @dataclass
        class State:
            query: str
            n: int = 0

        app = _linear(E, State, ("n", lambda s: {"n": s.n + 1}))
        return capture(lambda: app.invoke({"n": 3}))

    # wording of the constructor error may differ; the class must match
    differential(scenario, exc="class")


# --- pydantic ----------------------------------------------------------------------------


def test_pydantic_state_nodes_receive_models_with_defaults(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            question: str
            answers: Annotated[list[str], operator.add] = []
            score: float = 0.5

        seen = []

        def node(s):
            seen.append((type(s).__name__, s.model_dump()))
            return {"answers": [s.question[::-1]], "score": s.score * 2}

        app = _linear(E, State, ("a", node), ("b", node))
        return seen, app.invoke({"question": "abc"})

    differential(scenario)


def test_pydantic_state_invalid_input_raises_validation_error(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            count: int

        app = _linear(E, State, ("n", lambda s: {"count": s.count + 1}))
        return capture(lambda: app.invoke({"count": "not-a-number"}))

    # pydantic's own ValidationError: wording comes from pydantic on both sides
    differential(scenario)


def test_pydantic_state_coerces_input_types(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            count: int
            tags: list[str] = []

        seen = []

        def node(s):
            seen.append((s.count, type(s.count).__name__, s.tags))
            return {"count": s.count + 1}

        return _linear(E, State, ("n", node)).invoke({"count": "41"}), seen

    differential(scenario)


# --- input / output schemas ----------------------------------------------------------------


def test_input_schema_and_output_schema_filter_io(differential):
    def scenario(E):
        class In(TypedDict):
            question: str

        class Out(TypedDict):
            answer: str

        class State(In, Out):
            scratch: str

        def think(s):
            return {"scratch": "thinking about " + s["question"]}

        def answer(s):
            return {"answer": s["scratch"].upper()}

        app = _linear(
            E, State, ("think", think), ("answer", answer), input_schema=In, output_schema=Out
        )
        return (
            app.invoke({"question": "life", "scratch": "ignored?"}),
            list(app.stream({"question": "q"}, stream_mode=["values", "updates"])),
        )

    differential(scenario)


def test_output_schema_only(differential):
    def scenario(E):
        class State(TypedDict):
            a: int
            b: int

        class Out(TypedDict):
            b: int

        app = _linear(E, State, ("n", lambda s: {"b": s["a"] * 2}), output_schema=Out)
        return app.invoke({"a": 21})

    differential(scenario, expect={"b": 42})


def test_node_input_schema_narrows_what_the_node_sees(differential):
    def scenario(E):
        class State(TypedDict):
            a: int
            b: int
            private: NotRequired[str]

        class PrivateIn(TypedDict):
            private: str

        seen = []

        def first(s):
            seen.append(("first", dict(s)))
            return {"private": "secret", "a": s["a"] + 1}

        def second(s: PrivateIn):
            seen.append(("second", dict(s)))
            return {"b": len(s["private"])}

        g = E.StateGraph(State)
        g.add_node("first", first)
        g.add_node("second", second, input_schema=PrivateIn)
        g.add_edge(E.START, "first")
        g.add_edge("first", "second")
        out = g.compile().invoke({"a": 1, "b": 0})
        return seen, out

    differential(scenario)


def test_node_input_schema_inferred_from_type_hint(differential):
    def scenario(E):
        class State(TypedDict):
            a: int
            extra: NotRequired[str]

        class Narrow(TypedDict):
            a: int

        seen = []

        def node(s: Narrow):
            seen.append(dict(s))
            return {"a": s["a"] + 1}

        g = E.StateGraph(State)
        g.add_node("n", node)
        g.add_edge(E.START, "n")
        return g.compile().invoke({"a": 1, "extra": "x"}), seen

    differential(scenario)


def test_private_state_channel_written_by_node_with_other_output_keys(differential):
    def scenario(E):
        class State(TypedDict):
            public: str

        class Private(TypedDict):
            hidden: str

        def writer(s) -> Private:
            return {"hidden": s["public"] + "!"}

        def reader(s: Private):
            return {"public": s["hidden"] * 2}

        g = E.StateGraph(State)
        g.add_node("writer", writer)
        g.add_node("reader", reader)
        g.add_edge(E.START, "writer")
        g.add_edge("writer", "reader")
        app = g.compile()
        return app.invoke({"public": "hi"}), list(app.stream({"public": "x"}, stream_mode="updates"))

    differential(scenario)


# --- context / runtime -------------------------------------------------------------------


def test_context_schema_runtime_injected_into_node(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            user: str
            lang: str = "en"

        class State(TypedDict):
            greeting: str

        def greet(state, runtime: E.Runtime[Ctx]):
            return {"greeting": f"hello {runtime.context.user} ({runtime.context.lang})"}

        g = E.StateGraph(State, context_schema=Ctx)
        g.add_node("greet", greet)
        g.add_edge(E.START, "greet")
        app = g.compile()
        return app.invoke({"greeting": ""}, context=Ctx(user="ada"))

    differential(scenario, expect={"greeting": "hello ada (en)"})


def test_context_as_typeddict(differential):
    def scenario(E):
        class Ctx(TypedDict):
            model: str

        class State(TypedDict):
            out: str

        def node(state, runtime: E.Runtime[Ctx]):
            return {"out": runtime.context["model"]}

        g = E.StateGraph(State, context_schema=Ctx)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return g.compile().invoke({"out": ""}, context={"model": "m-1"})

    differential(scenario)


def test_runtime_without_context_has_none_context_and_stream_writer(differential):
    def scenario(E):
        class State(TypedDict):
            out: str

        def node(state, runtime: E.Runtime):
            runtime.stream_writer({"ctx": runtime.context})
            return {"out": repr(runtime.context)}

        g = E.StateGraph(State)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        return list(g.compile().stream({"out": ""}, stream_mode=["custom", "updates"]))

    differential(scenario)


# --- Overwrite ---------------------------------------------------------------------------


def test_overwrite_bypasses_reducer(differential):
    def scenario(E):
        class State(TypedDict):
            items: Annotated[list, operator.add]

        app = _linear(
            E,
            State,
            ("a", lambda s: {"items": ["a"]}),
            ("b", lambda s: {"items": E.Overwrite(["b"])}),
            ("c", lambda s: {"items": ["c"]}),
        )
        return app.invoke({"items": ["start"]}), list(app.stream({"items": []}, stream_mode="updates"))

    differential(scenario)


def test_overwrite_keyword_value(differential):
    def scenario(E):
        class State(TypedDict):
            items: Annotated[list, operator.add]

        app = _linear(E, State, ("b", lambda s: {"items": E.Overwrite(value=["only"])}))
        return app.invoke({"items": ["x", "y"]})

    differential(scenario, expect={"items": ["only"]})


def test_two_overwrites_of_one_channel_in_one_step_raise_invalid_update(differential):
    def scenario(E):
        class State(TypedDict):
            items: Annotated[list, operator.add]

        g = E.StateGraph(State)
        g.add_node("a", lambda s: {"items": E.Overwrite(["a"])})
        g.add_node("b", lambda s: {"items": E.Overwrite(["b"])})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        return capture(lambda: g.compile().invoke({"items": []}))

    # lgnb adds help to LangGraph's message and keeps its text: compare with exc="extends"
    differential(scenario, exc="extends")


def test_overwrite_and_plain_update_in_same_step(differential):
    def scenario(E):
        class State(TypedDict):
            items: Annotated[list, operator.add]

        g = E.StateGraph(State)
        g.add_node("a", lambda s: {"items": ["plain"]})
        g.add_node("b", lambda s: {"items": E.Overwrite(["over"])})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        return capture(lambda: g.compile().invoke({"items": ["start"]}))

    differential(scenario)


def test_overwrite_on_last_value_field(differential):
    def scenario(E):
        class State(TypedDict):
            x: int

        return capture(lambda: _linear(E, State, ("a", lambda s: {"x": E.Overwrite(5)})).invoke({"x": 1}))

    differential(scenario)


# --- explicit channels in annotations ----------------------------------------------------


def test_annotated_topic_channel_class_accumulates_within_step_only(differential):
    def scenario(E):
        class State(TypedDict):
            events: Annotated[list, E.channels.Topic]
            out: NotRequired[list]

        g = E.StateGraph(State)
        g.add_node("a", lambda s: {"events": "a"})
        g.add_node("b", lambda s: {"events": "b"})
        g.add_node("c", lambda s: {"out": sorted(s["events"])})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        g.add_edge(["a", "b"], "c")
        return g.compile().invoke({"events": "in"})

    differential(scenario)


def test_annotated_topic_channel_instance_with_accumulate(differential):
    def scenario(E):
        class State(TypedDict):
            events: Annotated[list, E.channels.Topic(str, accumulate=True)]

        app = _linear(
            E,
            State,
            ("a", lambda s: {"events": ["a1", "a2"]}),
            ("b", lambda s: {"events": "b"}),
        )
        return app.invoke({"events": "start"}), list(app.stream({"events": []}, stream_mode="values"))

    differential(scenario)


def test_annotated_ephemeral_value_is_cleared_after_the_step_it_was_read(differential):
    def scenario(E):
        class State(TypedDict):
            flash: Annotated[str, E.channels.EphemeralValue]
            seen: Annotated[list, operator.add]

        app = _linear(
            E,
            State,
            ("a", lambda s: {"seen": [s.get("flash")], "flash": "from-a"}),
            ("b", lambda s: {"seen": [s.get("flash")]}),
            ("c", lambda s: {"seen": [s.get("flash")]}),
        )
        return app.invoke({"flash": "input", "seen": []}), list(
            app.stream({"flash": "input", "seen": []}, stream_mode="values")
        )

    differential(scenario)


def test_annotated_untracked_value(differential):
    def scenario(E):
        class State(TypedDict):
            cache: Annotated[str, E.channels.UntrackedValue]
            n: int

        app = _linear(
            E,
            State,
            ("a", lambda s: {"cache": "c-a", "n": s["n"] + 1}),
            ("b", lambda s: {"n": s["n"] + (10 if s.get("cache") == "c-a" else 100)}),
        )
        return app.invoke({"n": 0})

    differential(scenario)


def test_annotated_binary_operator_aggregate_instance(differential):
    def scenario(E):
        class State(TypedDict):
            best: Annotated[int, E.channels.BinaryOperatorAggregate(int, max)]

        g = E.StateGraph(State)
        for name, val in (("x", 3), ("y", 7), ("z", 5)):
            g.add_node(name, lambda s, v=val: {"best": v})
            g.add_edge(E.START, name)
        return g.compile().invoke({"best": 4})

    differential(scenario, expect={"best": 7})


def test_reducer_with_wrong_arity_is_rejected_at_graph_construction(differential):
    def scenario(E):
        def bad(a):
            return a

        class State(TypedDict):
            x: Annotated[list, bad]

        return attempt(lambda: E.StateGraph(State))

    # lgnb rewords the message to name the state key ("... for state key 'x' ..."): class only
    differential(scenario, exc="class")


def test_custom_reducer_function_receives_current_and_update(differential):
    def scenario(E):
        calls = []

        def merge(cur, new):
            calls.append((cur, new))
            return {**(cur or {}), **new}

        class State(TypedDict):
            d: Annotated[dict, merge]

        app = _linear(E, State, ("a", lambda s: {"d": {"a": 1}}), ("b", lambda s: {"d": {"b": 2}}))
        return app.invoke({"d": {"in": 0}}), calls

    differential(scenario)


def test_reducer_applies_to_input_as_well(differential):
    def scenario(E):
        class State(TypedDict):
            xs: Annotated[list, operator.add]

        app = _linear(E, State, ("a", lambda s: {"xs": [len(s["xs"])]}))
        return [app.invoke({"xs": [1, 2]}), list(app.stream({"xs": ["q"]}, stream_mode="values"))]

    differential(scenario)


def test_parallel_reducer_writes_are_applied_in_deterministic_task_order(differential):
    # LangGraph applies writes sorted by task path (node name for pull tasks), so the
    # final list order is deterministic even though the branches run concurrently.
    def scenario(E):
        class State(TypedDict):
            xs: Annotated[list, operator.add]

        g = E.StateGraph(State)
        for name in ("zeta", "alpha", "mid"):
            g.add_node(name, lambda s, n=name: {"xs": [n]})
            g.add_edge(E.START, name)
        app = g.compile()
        return [app.invoke({"xs": []}) for _ in range(3)]

    differential(scenario)


# --- add_messages ------------------------------------------------------------------------


def test_messages_state_appends_and_replaces_by_id(differential):
    from langchain_core.messages import AIMessage, HumanMessage

    def scenario(E):
        def reply(s):
            return {"messages": [AIMessage(content="draft", id="ai-1")]}

        def revise(s):
            return {"messages": [AIMessage(content="final", id="ai-1"), AIMessage(content="ps", id="ai-2")]}

        app = _linear(E, E.MessagesState, ("reply", reply), ("revise", revise))
        out = app.invoke({"messages": [HumanMessage(content="hi", id="h-1")]})
        return out

    differential(scenario)


def test_add_messages_coerces_tuples_and_dicts_and_assigns_ids(differential):
    def scenario(E):
        def node(s):
            return {"messages": [("ai", "tuple msg"), {"role": "user", "content": "dict msg"}]}

        out = _linear(E, E.MessagesState, ("n", node)).invoke({"messages": "plain string"})
        # ids are uuid4s; the normalizer maps each distinct id to a placeholder
        return [(type(m).__name__, m.content, bool(m.id)) for m in out["messages"]], out

    differential(scenario)


def test_remove_message_and_remove_all_messages(differential):
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

    def scenario(E):
        def drop_one(s):
            return {"messages": [RemoveMessage(id="2")]}

        def wipe(s):
            return {"messages": [RemoveMessage(id=E.REMOVE_ALL_MESSAGES), AIMessage(content="fresh", id="9")]}

        app = _linear(E, E.MessagesState, ("drop_one", drop_one))
        first = app.invoke({"messages": [HumanMessage("a", id="1"), AIMessage("b", id="2")]})
        app2 = _linear(E, E.MessagesState, ("wipe", wipe))
        second = app2.invoke({"messages": [HumanMessage("a", id="1")]})
        return first, second

    differential(scenario)


def test_remove_message_with_unknown_id_raises(differential):
    from langchain_core.messages import HumanMessage, RemoveMessage

    def scenario(E):
        app = _linear(E, E.MessagesState, ("n", lambda s: {"messages": [RemoveMessage(id="nope")]}))
        return capture(lambda: app.invoke({"messages": [HumanMessage("a", id="1")]}))

    # lgnb adds help to LangGraph's message and keeps its text: compare with exc="extends"
    differential(scenario, exc="extends")


def test_add_messages_function_directly(differential):
    from langchain_core.messages import AIMessage, HumanMessage

    def scenario(E):
        left = [HumanMessage("a", id="1")]
        return E.add_messages(left, [AIMessage("b", id="2"), HumanMessage("a2", id="1")])

    differential(scenario)


def test_messages_state_subclass_with_extra_field(differential):
    from langchain_core.messages import HumanMessage

    def scenario(E):
        class State(E.MessagesState):
            turns: int

        def node(s):
            return {"messages": [("ai", f"turn {s['turns']}")], "turns": s["turns"] + 1}

        out = _linear(E, State, ("n", node)).invoke({"messages": [HumanMessage("q", id="q")], "turns": 0})
        return out["turns"], [(m.type, m.content) for m in out["messages"]]

    differential(scenario, expect=(1, [("human", "q"), ("ai", "turn 0")]))


# --- conflicting writes ------------------------------------------------------------------


def test_two_writes_to_last_value_in_one_step_raise_invalid_update_error(differential):
    def scenario(E):
        class State(TypedDict):
            x: str

        g = E.StateGraph(State)
        g.add_node("a", lambda s: {"x": "a"})
        g.add_node("b", lambda s: {"x": "b"})
        g.add_edge(E.START, "a")
        g.add_edge(E.START, "b")
        app = g.compile()
        return capture(lambda: app.invoke({"x": ""})), collect(
            lambda: app.stream({"x": ""}, stream_mode="values")
        )

    differential(scenario)


def test_node_returning_non_dict_raises_invalid_update_error(differential):
    def scenario(E):
        class State(TypedDict):
            x: str

        results = []
        for bad in ("a string", 42, ["x", "y"]):
            app = _linear(E, State, ("bad", lambda s, b=bad: b))
            results.append(capture(lambda: app.invoke({"x": ""})))
        return results

    # lgnb adds help to LangGraph's message and keeps its text: compare with exc="extends"
    differential(scenario, exc="extends")


def test_optional_field_none_roundtrip(differential):
    def scenario(E):
        class State(TypedDict):
            maybe: Optional[str]
            n: int

        app = _linear(E, State, ("a", lambda s: {"maybe": None, "n": s["n"] + 1}))
        return app.invoke({"maybe": "x", "n": 0})

    differential(scenario, expect={"maybe": None, "n": 1})
