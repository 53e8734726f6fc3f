"""State schemas as users write them: pydantic models with validators and config, dataclasses,
TypedDicts with `total=False` / `Required`, input/output schemas, private node schemas,
custom reducers and `Overwrite`, on both engines.

Covers what the other state tests leave out: where pydantic validation runs (input, a node's
read, never the final output), validators that transform values, `extra=forbid/allow`,
`get_state` / `update_state` / `Command(update=...)` with model and dataclass instances,
reducers that see `None` or a missing first value, and the error a user sees for each
misuse.

No `from __future__ import annotations`: state classes are defined inside scenarios.
"""

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional

import pydantic
from _diff import Engine, attempt, capture, collect
from typing_extensions import NotRequired, Required, TypedDict


def _chain(E, State, *nodes, **kw):
    """START -> nodes[0] -> ... -> END, nodes given as (name, fn); kw go to compile()."""
    schema_kw = {k: kw.pop(k) for k in ("input_schema", "output_schema") if k in kw}
    g = E.StateGraph(State, **schema_kw)
    prev = E.START
    for name, fn in nodes:
        g.add_node(name, fn)
        g.add_edge(prev, name)
        prev = name
    g.add_edge(prev, E.END)
    return g.compile(**kw)


def _patched_before_b(E, State, a, b, patch):
    """a -> b paused before b; update_state(patch()) and resume: the attempt, the values at the
    pause, the output."""
    app = _chain(E, State, ("a", a), ("b", b), checkpointer=E.InMemorySaver(), interrupt_before=["b"])
    app.invoke({"n": 1}, _cfg())
    r = attempt(lambda: app.update_state(_cfg(), patch()))
    mid = _vals(app.get_state(_cfg()))
    return r, mid, app.invoke(None, _cfg())


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _vals(snapshot):
    v = snapshot.values
    return type(v).__name__, v


# --- pydantic: validators -------------------------------------------------------------------


def test_pydantic_field_validator_transforms_input_and_every_node_read(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            name: str
            history: Annotated[list[str], operator.add] = []

            @pydantic.field_validator("name")
            @classmethod
            def _normalize(cls, v):
                return v.strip().lower()

        seen = []

        def rename(s):
            seen.append(("rename", s.name))
            return {"name": "  BOB  ", "history": [s.name]}

        def greet(s):
            seen.append(("greet", s.name))
            return {"history": [f"hi {s.name}"]}

        app = _chain(E, State, ("rename", rename), ("greet", greet))
        out = app.invoke({"name": "  ALICE "})
        return seen, out

    differential(scenario)


def test_pydantic_field_validator_result_is_not_applied_to_the_final_output(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            name: str = ""

            @pydantic.field_validator("name")
            @classmethod
            def _upper(cls, v):
                return v.upper()

        app = _chain(E, State, ("set", lambda s: {"name": "last write"}))
        return app.invoke({"name": "first"}), list(app.stream({"name": "x"}, stream_mode="values"))

    differential(scenario)


def test_pydantic_field_validator_rejecting_input_raises_validation_error(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            age: int

            @pydantic.field_validator("age")
            @classmethod
            def _positive(cls, v):
                if v < 0:
                    raise ValueError("age must be positive")
                return v

        calls = []
        app = _chain(E, State, ("n", lambda s: calls.append(s.age) or {"age": s.age + 1}))
        return capture(lambda: app.invoke({"age": -3})), calls

    differential(scenario)


def test_pydantic_field_validator_rejecting_a_node_update_fails_the_next_node(differential):
    """The run fails building the next node's input, as LangGraph's. Deliberate: LangGraph's
    get_state then raises the same error (it builds that input again); lgnb's state reads
    build no node input, so get_state shows what was saved and the next node."""

    def scenario(E, read=False):
        class State(pydantic.BaseModel):
            age: int = 0
            log: Annotated[list[str], operator.add] = []

            @pydantic.field_validator("age")
            @classmethod
            def _positive(cls, v):
                if v < 0:
                    raise ValueError("age must be positive")
                return v

        app = _chain(
            E,
            State,
            ("bad", lambda s: {"age": -1, "log": ["bad"]}),
            ("after", lambda s: {"log": ["after"]}),
            checkpointer=E.InMemorySaver(),
        )
        cfg = _cfg()
        err = capture(lambda: app.invoke({"age": 1}, cfg))
        if not read:
            return err
        snap = app.get_state(cfg)
        return snap.values, snap.next

    differential(scenario)
    assert scenario(Engine("lgnb"), read=True) == ({"age": -1, "log": ["bad"]}, ("after",))


def test_pydantic_model_validator_after_checks_fields_together(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            low: int = 0
            high: int = 10

            @pydantic.model_validator(mode="after")
            def _ordered(self):
                if self.low > self.high:
                    raise ValueError(f"low {self.low} > high {self.high}")
                return self

        app = _chain(
            E, State,
            ("raise_low", lambda s: {"low": s.low + 20}),
            ("read", lambda s: {"high": s.high + 1}),
        )
        return (
            capture(lambda: app.invoke({"low": 1, "high": 5})),
            capture(lambda: app.invoke({"low": 9, "high": 1})),
        )

    differential(scenario)


def test_pydantic_model_validator_before_fills_a_derived_field(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            text: str
            words: int = 0

            @pydantic.model_validator(mode="before")
            @classmethod
            def _count(cls, data):
                if isinstance(data, dict) and "text" in data:
                    data = {**data, "words": len(str(data["text"]).split())}
                return data

        seen = []

        def edit(s):
            seen.append(("edit", s.text, s.words))
            return {"text": s.text + " and more words"}

        def read(s):
            seen.append(("read", s.text, s.words))
            return {}

        app = _chain(E, State, ("edit", edit), ("read", read))
        return app.invoke({"text": "one two"}), seen

    differential(scenario)


# --- pydantic: config, optional, nested, literal ---------------------------------------------


def test_pydantic_extra_forbid_does_not_see_unknown_input_keys(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(extra="forbid")
            q: str

        app = _chain(E, State, ("n", lambda s: {"q": s.q + "!"}))
        return capture(lambda: app.invoke({"q": "x", "typo": 1})), capture(lambda: app.invoke({"q": "y"}))

    differential(scenario)


def test_pydantic_extra_allow_keeps_unknown_keys_out_of_the_state(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(extra="allow")
            q: str

        seen = []

        def n(s):
            seen.append((s.q, dict(s.model_extra or {})))
            return {"q": s.q + "!", "bonus": 1}

        app = _chain(E, State, ("n", n))
        return capture(lambda: app.invoke({"q": "x", "extra_in": 2})), seen

    differential(scenario)


def test_pydantic_optional_field_without_default_is_required_on_input(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            user: Optional[str]
            result: Optional[str] = None

        app = _chain(E, State, ("n", lambda s: {"result": f"user={s.user}"}))
        return capture(lambda: app.invoke({"result": "x"})), app.invoke({"user": None})

    differential(scenario)


def test_pydantic_optional_fields_read_as_none_until_written(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            question: str
            plan: Optional[str] = None
            answer: Optional[str] = None

        seen = []

        def planner(s):
            seen.append(("planner", s.plan, s.answer))
            return {"plan": "look it up"}

        def answerer(s):
            seen.append(("answerer", s.plan, s.answer))
            return {"answer": s.plan.upper()}

        app = _chain(E, State, ("planner", planner), ("answerer", answerer))
        return app.invoke({"question": "q"}), seen

    differential(scenario)


def test_pydantic_nested_model_updated_with_a_dict_is_coerced_on_the_next_read(differential):
    def scenario(E):
        class Address(pydantic.BaseModel):
            city: str
            zip: str = "00000"

        class State(pydantic.BaseModel):
            address: Address
            visited: Annotated[list[str], operator.add] = []

        seen = []

        def move(s):
            seen.append(("move", type(s.address).__name__, s.address.city))
            return {"address": {"city": "Paris"}}

        def look(s):
            seen.append(("look", type(s.address).__name__, s.address.city, s.address.zip))
            return {"visited": [s.address.city]}

        app = _chain(E, State, ("move", move), ("look", look))
        out = app.invoke({"address": {"city": "Rome", "zip": "00100"}})
        return out, seen

    differential(scenario)


def test_pydantic_literal_field_rejects_a_bad_route_when_the_router_reads_state(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            route: Literal["search", "answer"] = "search"
            log: Annotated[list[str], operator.add] = []

        def classify(s):
            return {"route": "unknown-route", "log": ["classify"]}

        g = E.StateGraph(State)
        g.add_node("classify", classify)
        g.add_node("search", lambda s: {"log": ["search"]})
        g.add_node("answer", lambda s: {"log": ["answer"]})
        g.add_edge(E.START, "classify")
        g.add_conditional_edges("classify", lambda s: s.route, ["search", "answer"])
        return capture(lambda: g.compile().invoke({}))

    differential(scenario)


def test_pydantic_field_default_factory_and_field_metadata_with_a_reducer(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            docs: Annotated[list[str], operator.add] = pydantic.Field(default_factory=list)
            counts: Annotated[dict[str, int], lambda a, b: {**a, **b}] = pydantic.Field(
                default_factory=dict, description="per-source counts"
            )
            steps: Annotated[int, operator.add] = pydantic.Field(default=0, ge=0)

        def fetch(source):
            def node(s):
                return {"docs": [f"{source}-doc"], "counts": {source: len(s.docs) + 1}, "steps": 1}
            return node

        app = _chain(E, State, ("web", fetch("web")), ("db", fetch("db")))
        return app.invoke({}), app.invoke({"docs": ["given"], "steps": 5})

    differential(scenario)


def test_pydantic_state_with_computed_property_and_methods_used_by_nodes(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            items: Annotated[list[int], operator.add] = []
            target: int = 10

            @property
            def total(self) -> int:
                return sum(self.items)

            def done(self) -> bool:
                return self.total >= self.target

        def add(s):
            return {"items": [s.total + 1]}

        g = E.StateGraph(State)
        g.add_node("add", add)
        g.add_edge(E.START, "add")
        g.add_conditional_edges("add", lambda s: E.END if s.done() else "add")
        return g.compile().invoke({"items": [1]})

    differential(scenario)


def test_pydantic_node_returning_a_copy_of_its_input_reapplies_reducers(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            a: int = 0
            b: str = "default"
            log: Annotated[list[str], operator.add] = []

        def n(s):
            s2 = s.model_copy(update={"a": s.a + 1})
            return s2

        app = _chain(E, State, ("n", n), checkpointer=E.InMemorySaver())
        out = capture(lambda: app.invoke({"b": "given", "log": ["in"]}, _cfg()))
        return out, _vals(app.get_state(_cfg()))

    differential(scenario)


def test_pydantic_node_returning_another_model_class_updates_matching_keys(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            a: int = 0

        class Other(pydantic.BaseModel):
            a: int = 5

        app = _chain(E, State, ("n", lambda s: Other()))
        return capture(lambda: app.invoke({"a": 1}))

    differential(scenario, exc="extends")


def test_pydantic_update_with_an_unknown_key_ignores_that_key(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            a: int = 0

        app = _chain(E, State, ("n", lambda s: {"a": 2, "not_a_field": 3}))
        return capture(lambda: app.invoke({"a": 1}))

    differential(scenario, exc="extends")


# --- pydantic / dataclass: get_state, update_state, Command ---------------------------------


def test_pydantic_state_get_state_values_type_and_history(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            n: int = 0
            tags: Annotated[list[str], operator.add] = []

        app = _chain(
            E, State,
            ("a", lambda s: {"n": s.n + 1, "tags": ["a"]}),
            ("b", lambda s: {"n": s.n * 10}),
            checkpointer=E.InMemorySaver(),
        )
        out = app.invoke({"n": 1}, _cfg())
        hist = [(type(h.values).__name__, h.values, h.next) for h in app.get_state_history(_cfg())]
        return out, _vals(app.get_state(_cfg())), hist

    differential(scenario)


def test_update_state_with_a_pydantic_instance(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            n: int = 0
            note: str = "none"
            tags: Annotated[list[str], operator.add] = []

        seen = []

        def a(s):
            seen.append(("a", s.n, s.note, list(s.tags)))
            return {"n": s.n + 1, "tags": ["a"]}

        def b(s):
            seen.append(("b", s.n, s.note, list(s.tags)))
            return {"tags": ["b"]}

        return (*_patched_before_b(E, State, a, b, lambda: State(n=100, tags=["patched"])), seen)

    differential(scenario)


def test_update_state_with_an_invalid_value_is_accepted_and_fails_the_resume(differential):
    """Deliberate: LangGraph's get_state raises here too (it prepares the next task, whose
    input is the invalid model); lgnb's state reads build no node input, so get_state shows
    the invalid value, which another update_state can then fix."""

    def scenario(E, read=False):
        class State(pydantic.BaseModel):
            n: int = 0

        app = _chain(E, State, ("a", lambda s: {"n": s.n + 1}), ("b", lambda s: {"n": s.n + 1}),
                     checkpointer=E.InMemorySaver(), interrupt_before=["b"])
        app.invoke({"n": 1}, _cfg())
        r = attempt(lambda: app.update_state(_cfg(), {"n": "many"}))
        if read:
            snap = app.get_state(_cfg())
            app.update_state(_cfg(), {"n": 5})
            return snap.values, snap.next, app.invoke(None, _cfg())
        return r, capture(lambda: app.invoke(None, _cfg()))

    differential(scenario)
    assert scenario(Engine("lgnb"), read=True) == ({"n": "many"}, ("b",), {"n": 6})


def test_update_state_with_a_dataclass_instance(differential):
    def scenario(E):
        @dataclass
        class State:
            n: int = 0
            tags: Annotated[list, operator.add] = field(default_factory=list)

        seen = []

        def a(s):
            return {"n": s.n + 1, "tags": ["a"]}

        def b(s):
            seen.append((type(s).__name__, s.n, list(s.tags)))
            return {"tags": ["b"]}

        return (*_patched_before_b(E, State, a, b, lambda: State(n=7, tags=["patched"])), seen)

    differential(scenario)


def test_command_update_as_a_list_of_tuples_on_a_pydantic_state(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            n: int = 0
            log: Annotated[list[str], operator.add] = []

        g = E.StateGraph(State)
        g.add_node("a", lambda s: E.Command(update=[("n", 5), ("log", ["a1"]), ("log", ["a2"])], goto="b"))
        g.add_node("b", lambda s: {"log": [f"b saw {s.n}"]})
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({}))

    differential(scenario)


def test_dataclass_command_update_with_a_dataclass_instance(differential):
    def scenario(E):
        @dataclass
        class State:
            n: int = 0
            log: Annotated[list, operator.add] = field(default_factory=list)

        seen = []

        g = E.StateGraph(State)
        g.add_node("a", lambda s: E.Command(update=State(n=9, log=["from-a"]), goto="b"))
        g.add_node("b", lambda s: seen.append((s.n, list(s.log))) or {})
        g.add_edge(E.START, "a")
        return capture(lambda: g.compile().invoke({"n": 1, "log": ["in"]})), seen

    differential(scenario)


# --- dataclass states ------------------------------------------------------------------------


def test_frozen_dataclass_state_nodes_read_and_return_updates(differential):
    def scenario(E):
        @dataclass(frozen=True)
        class State:
            x: int
            seen: Annotated[tuple, operator.add] = ()

        def n(s):
            mutated = attempt(lambda: setattr(s, "x", 99))
            return {"x": s.x + 1, "seen": (mutated[1] if isinstance(mutated, tuple) else mutated,)}

        app = _chain(E, State, ("n1", n), ("n2", n))
        return app.invoke({"x": 1}), list(app.stream({"x": 5}, stream_mode="values"))

    differential(scenario)


def test_dataclass_with_post_init_and_derived_default(differential):
    def scenario(E):
        @dataclass
        class State:
            text: str
            length: int = -1

            def __post_init__(self):
                if self.length < 0:
                    self.length = len(self.text)

        seen = []

        def shout(s):
            seen.append(("shout", s.text, s.length))
            return {"text": s.text.upper() + "!!!"}

        def read(s):
            seen.append(("read", s.text, s.length))
            return {}

        app = _chain(E, State, ("shout", shout), ("read", read))
        return app.invoke({"text": "hey"}), seen

    differential(scenario)


def test_dataclass_state_output_omits_defaults_never_written(differential):
    def scenario(E):
        @dataclass
        class State:
            q: str
            answer: str = ""
            sources: Annotated[list, operator.add] = field(default_factory=list)
            meta: dict = field(default_factory=dict)

        app = _chain(E, State, ("n", lambda s: {"answer": s.q * 2}))
        return app.invoke({"q": "ab"}), app.invoke({"q": "c", "meta": {"k": 1}})

    differential(scenario)


# --- TypedDict variants ----------------------------------------------------------------------


def test_typeddict_total_false_and_required_keys(differential):
    def scenario(E):
        class State(TypedDict, total=False):
            query: Required[str]
            draft: str
            final: str

        seen = []

        def write(s):
            seen.append(("write", sorted(s)))
            return {"draft": s["query"] + " draft"}

        def polish(s):
            seen.append(("polish", sorted(s)))
            return {"final": s.get("draft", "?").title()}

        app = _chain(E, State, ("write", write), ("polish", polish))
        return app.invoke({"query": "q"}), capture(lambda: app.invoke({})), seen

    differential(scenario)


def test_typeddict_inheritance_overrides_and_adds_reducers(differential):
    def scenario(E):
        class Base(TypedDict):
            log: list
            n: int

        class State(Base):
            log: Annotated[list, operator.add]
            extra: NotRequired[Annotated[int, operator.add]]

        app = _chain(
            E, State,
            ("a", lambda s: {"log": ["a"], "n": s["n"] + 1, "extra": 1}),
            ("b", lambda s: {"log": ["b"], "extra": 2}),
        )
        return app.invoke({"log": ["in"], "n": 0})

    differential(scenario)


def test_functional_typeddict_syntax_with_reducers(differential):
    def scenario(E):
        State = TypedDict("State", {"in-put": str, "items": Annotated[list, operator.add]})

        app = _chain(E, State, ("n", lambda s: {"items": [s["in-put"]] * 2}))
        return app.invoke({"in-put": "x", "items": []})

    differential(scenario)


# --- input / output schemas ------------------------------------------------------------------


def test_pydantic_input_schema_neither_validates_nor_defaults_a_typeddict_state(differential):
    def scenario(E):
        class In(pydantic.BaseModel):
            question: str
            top_k: int = 3

        class State(TypedDict):
            question: str
            top_k: int
            answer: str

        seen = []

        def n(s):
            seen.append(dict(s))
            return {"answer": f"{s['question']} x{s['top_k']}"}

        app = _chain(E, State, ("n", n), input_schema=In)
        return (
            capture(lambda: app.invoke({"question": "why", "top_k": "5"})),
            capture(lambda: app.invoke({"question": "why"})),
            capture(lambda: app.invoke({"top_k": 1})),
            seen,
        )

    differential(scenario)


def test_output_schema_pydantic_on_a_typeddict_state_invoke_stream_and_get_state(differential):
    def scenario(E):
        class State(TypedDict):
            question: str
            scratch: str
            answer: str

        class Out(pydantic.BaseModel):
            answer: str

        app = _chain(
            E, State,
            ("think", lambda s: {"scratch": s["question"] * 2}),
            ("answer", lambda s: {"answer": s["scratch"].upper()}),
            output_schema=Out,
            checkpointer=E.InMemorySaver(),
        )
        out = app.invoke({"question": "ab"}, _cfg())
        v2 = app.invoke({"question": "cd"}, _cfg("t2"), version="v2")
        values = list(app.stream({"question": "ef"}, _cfg("t3"), stream_mode="values"))
        return out, v2, values, _vals(app.get_state(_cfg()))

    differential(scenario)


def test_output_schema_dataclass_shapes_invoke_output(differential):
    def scenario(E):
        class State(TypedDict):
            a: int
            b: int

        @dataclass
        class Out:
            b: int

        app = _chain(E, State, ("n", lambda s: {"b": s["a"] + 1}), output_schema=Out)
        return app.invoke({"a": 1}), app.invoke({"a": 2}, version="v2")

    differential(scenario)


def test_input_schema_keys_not_in_the_state_reach_no_node(differential):
    def scenario(E):
        class In(TypedDict):
            question: str
            debug: bool

        class State(TypedDict):
            question: str
            answer: str

        seen = []

        def n(s):
            seen.append(dict(s))
            return {"answer": s["question"]}

        app = _chain(E, State, ("n", n), input_schema=In)
        return capture(lambda: app.invoke({"question": "q", "debug": True})), seen

    differential(scenario)


def test_private_node_schema_keys_written_by_one_node_read_by_another(differential):
    def scenario(E):
        class Public(TypedDict):
            question: str
            answer: str

        class Scratch(TypedDict):
            question: str
            notes: list
            confidence: float

        seen = []

        def research(s: Public) -> Scratch:
            return {"question": s["question"], "notes": ["n1", "n2"], "confidence": 0.5}

        def write(s: Scratch) -> Public:
            seen.append(dict(s))
            return {"answer": f"{s['question']}: {len(s['notes'])} notes @ {s['confidence']}"}

        g = E.StateGraph(Public)
        g.add_node("research", research)
        g.add_node("write", write)
        g.add_edge(E.START, "research")
        g.add_edge("research", "write")
        app = g.compile(checkpointer=E.InMemorySaver())
        out = app.invoke({"question": "why"}, _cfg())
        snap = app.get_state(_cfg())
        return out, seen, snap.values, list(app.stream({"question": "w2"}, _cfg("t2"), stream_mode="values"))

    differential(scenario)


def test_node_with_a_pydantic_input_schema_on_a_typeddict_graph(differential):
    def scenario(E):
        class State(TypedDict):
            query: str
            limit: NotRequired[int]
            results: Annotated[list, operator.add]

        class SearchIn(pydantic.BaseModel):
            query: str
            limit: int = 2

        seen = []

        def search(s: SearchIn):
            seen.append((type(s).__name__, s.query, s.limit))
            return {"results": [f"{s.query}-{i}" for i in range(s.limit)]}

        g = E.StateGraph(State)
        g.add_node("search", search)
        g.add_edge(E.START, "search")
        app = g.compile()
        return app.invoke({"query": "x", "results": []}), app.invoke({"query": "y", "limit": 1, "results": []}), seen

    differential(scenario)


# --- reducers ---------------------------------------------------------------------------------


def _merge(a: dict, b: dict) -> dict:
    return {**a, **b}


def _union(a: set, b) -> set:
    return a | set(b)


def test_custom_reducers_dict_merge_set_union_and_max_across_parallel_nodes(differential):
    def scenario(E):
        class State(TypedDict):
            meta: Annotated[dict, _merge]
            tags: Annotated[set, _union]
            best: Annotated[int, lambda a, b: max(a, b)]

        g = E.StateGraph(State)
        g.add_node("x", lambda s: {"meta": {"x": 1, "shared": "x"}, "tags": {"a", "b"}, "best": 3})
        g.add_node("y", lambda s: {"meta": {"y": 2}, "tags": ["b", "c"], "best": 7})
        g.add_node("z", lambda s: {"meta": {"shared": "z"}, "best": 5})
        for n in "xyz":
            g.add_edge(E.START, n)
        return g.compile().invoke({"meta": {"in": 0}, "tags": set(), "best": 4})

    differential(scenario)


def test_builtin_max_as_a_reducer_is_rejected_when_the_graph_is_built(differential):
    def scenario(E):
        class State(TypedDict):
            best: Annotated[int, max]

        return capture(lambda: E.StateGraph(State))

    differential(scenario, exc="extends")


def test_reducer_receives_none_when_a_node_writes_none(differential):
    def scenario(E):
        calls = []

        def keep_or_reset(a, b):
            calls.append((a, b))
            return [] if b is None else a + b

        class State(TypedDict):
            items: Annotated[list, keep_or_reset]
            plain: Annotated[list, operator.add]

        app = _chain(E, State, ("add", lambda s: {"items": ["x"]}), ("reset", lambda s: {"items": None}))
        ok = app.invoke({"items": ["in"]})
        bad = _chain(E, State, ("n", lambda s: {"plain": None}))
        return ok, calls, capture(lambda: bad.invoke({"plain": ["in"]}))

    differential(scenario)


def test_reducer_on_a_type_without_a_default_takes_the_first_write_as_is(differential):
    def scenario(E):
        calls = []

        def pick_max(a, b):
            calls.append((a, b))
            return b if a is None else max(a, b)

        class State(TypedDict):
            best: Annotated[Optional[int], pick_max]
            log: Annotated[list, operator.add]

        app = _chain(
            E, State,
            ("a", lambda s: {"best": 3, "log": [s.get("best")]}),
            ("b", lambda s: {"best": 1, "log": [s.get("best")]}),
        )
        return app.invoke({"log": []}), calls

    differential(scenario)


def test_reducer_with_any_annotation_on_a_pydantic_state(differential):
    def scenario(E):
        def last_non_empty(a, b):
            return b or a

        class State(pydantic.BaseModel):
            status: Annotated[Any, last_non_empty] = None
            n: int = 0

        app = _chain(
            E, State,
            ("a", lambda s: {"status": "running", "n": 1}),
            ("b", lambda s: {"status": "", "n": 2}),
            ("c", lambda s: {"n": 3 if s.status == "running" else -1}),
        )
        return app.invoke({})

    differential(scenario)


def test_two_parallel_nodes_writing_a_pydantic_field_without_reducer(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            answer: str = ""

        g = E.StateGraph(State)
        g.add_node("x", lambda s: {"answer": "x"})
        g.add_node("y", lambda s: {"answer": "y"})
        g.add_edge(E.START, "x")
        g.add_edge(E.START, "y")
        return capture(lambda: g.compile().invoke({}))

    differential(scenario, exc="extends")


def test_overwrite_on_a_pydantic_reducer_field_resets_the_list(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            history: Annotated[list[str], operator.add] = []
            turns: int = 0

        seen = []

        def chat(s):
            return {"history": [f"turn{s.turns}"], "turns": s.turns + 1}

        def summarize(s):
            seen.append(list(s.history))
            return {"history": E.Overwrite([f"summary of {len(s.history)}"])}

        def after(s):
            seen.append(list(s.history))
            return {"history": ["after"]}

        app = _chain(E, State, ("c1", chat), ("c2", chat), ("summarize", summarize), ("after", after))
        return app.invoke({"history": ["start"]}), seen

    differential(scenario)


def test_overwrite_as_graph_input_and_in_update_state_on_a_reducer_key(differential):
    def scenario(E):
        class State(TypedDict):
            log: Annotated[list, operator.add]

        app = _chain(E, State, ("n", lambda s: {"log": ["n"]}), checkpointer=E.InMemorySaver())
        first = app.invoke({"log": ["a"]}, _cfg())
        second = app.invoke({"log": E.Overwrite(["reset"])}, _cfg())
        r = attempt(lambda: app.update_state(_cfg(), {"log": E.Overwrite(["patched"])}))
        return first, second, r, app.get_state(_cfg()).values

    differential(scenario)


def test_parallel_overwrite_and_append_on_a_dict_merge_reducer(differential):
    def scenario(E):
        class State(TypedDict):
            cfg: Annotated[dict, _merge]

        g = E.StateGraph(State)
        g.add_node("reset", lambda s: {"cfg": E.Overwrite({"only": 1})})
        g.add_node("merge", lambda s: {"cfg": {"also": 2}})
        g.add_node("join", lambda s: {"cfg": {"seen": sorted(s["cfg"])}})
        g.add_edge(E.START, "reset")
        g.add_edge(E.START, "merge")
        g.add_edge(["reset", "merge"], "join")
        return capture(lambda: g.compile().invoke({"cfg": {"old": 0}}))

    differential(scenario)


# --- where the reducer is found in Annotated metadata ------------------------------------------


def test_reducer_must_be_the_last_annotated_metadata_item(differential):
    def scenario(E):
        class State(TypedDict):
            doc_first: Annotated[list, "a list of steps", operator.add]
            doc_last: Annotated[list, operator.add, "a list of steps"]

        app = _chain(E, State, ("a", lambda s: {"doc_first": ["a"], "doc_last": ["a"]}))
        return capture(lambda: app.invoke({"doc_first": ["in"], "doc_last": ["in"]}))

    differential(scenario)


def test_pydantic_field_inside_annotated_with_a_reducer(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            before: Annotated[list[str], pydantic.Field(default_factory=list), operator.add]
            after: Annotated[list[str], operator.add, pydantic.Field(default_factory=list)]

        seen = []

        def n(s):
            seen.append((list(s.before), list(s.after)))
            return {"before": ["n"], "after": ["n"]}

        app = _chain(E, State, ("n1", n), ("n2", n))
        return capture(lambda: app.invoke({"before": ["in"], "after": ["in"]})), seen

    differential(scenario)


def test_reducer_inside_optional_is_not_a_reducer(differential):
    def scenario(E):
        class State(TypedDict):
            log: Optional[Annotated[list, operator.add]]

        app = _chain(E, State, ("a", lambda s: {"log": ["a"]}), ("b", lambda s: {"log": ["b"]}))
        return capture(lambda: app.invoke({"log": ["in"]}))

    differential(scenario)


def test_callable_object_and_partial_as_reducers(differential):
    import functools

    class KeepLast:
        def __init__(self, n):
            self.n = n

        def __call__(self, a, b):
            return (a + b)[-self.n:]

    def bounded(a, b, limit):
        return (a + b)[:limit]

    def scenario(E):
        class State(TypedDict):
            recent: Annotated[list, KeepLast(2)]
            first: Annotated[list, functools.partial(bounded, limit=2)]

        def writer(i):
            return lambda s: {"recent": [i], "first": [i]}

        app = _chain(E, State, *[(f"n{i}", writer(i)) for i in range(3)])
        return capture(lambda: app.invoke({"recent": [], "first": []}))

    differential(scenario)


# --- pydantic and dataclass: more config ------------------------------------------------------


def test_pydantic_field_alias_keys_of_the_state(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(populate_by_name=True)
            user_name: str = pydantic.Field(default="anon", alias="userName")
            n: int = 0

        seen = []

        def n(s):
            seen.append((s.user_name, s.n))
            return {"n": s.n + 1}

        app = _chain(E, State, ("n", n))
        return (
            capture(lambda: app.invoke({"user_name": "ann"})),
            capture(lambda: app.invoke({"userName": "bob"})),
            seen,
        )

    differential(scenario)


def test_pydantic_validate_assignment_in_a_node_is_not_an_update(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(validate_assignment=True)
            n: int = 0

        def n(s):
            r = attempt(lambda: setattr(s, "n", "bad"))
            s.n = 41
            return {"n": s.n + 1} if r != "ok" else {}

        def read(s):
            return {"n": s.n * 10}

        return capture(lambda: _chain(E, State, ("n", n), ("read", read)).invoke({"n": 1}))

    differential(scenario)


def test_pydantic_frozen_model_state(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(frozen=True)
            n: int = 0
            log: Annotated[tuple[str, ...], operator.add] = ()

        def n(s):
            r = attempt(lambda: setattr(s, "n", 5))
            return {"n": s.n + 1, "log": (r[1] if isinstance(r, tuple) else r,)}

        return capture(lambda: _chain(E, State, ("a", n), ("b", n)).invoke({"n": 1}))

    differential(scenario)


def test_pydantic_classvar_and_private_attr_names_are_writable_state_keys(differential):
    from typing import ClassVar

    def scenario(E):
        class State(pydantic.BaseModel):
            LIMIT: ClassVar[int] = 2
            _cache: dict = pydantic.PrivateAttr(default_factory=dict)
            n: int = 0

        def n(s):
            s._cache["seen"] = s.n
            return {"n": min(s.n + 5, State.LIMIT * 10), "LIMIT": 99, "_cache": {"x": 1}}

        app = _chain(E, State, ("n", n))
        return capture(lambda: app.invoke({"n": 1})), sorted(app.get_input_jsonschema()["properties"])

    differential(scenario)


def test_dataclass_init_false_field_written_by_a_node_fails_the_next_read(differential):
    from typing import ClassVar

    def scenario(E):
        @dataclass
        class State:
            KIND: ClassVar[str] = "demo"
            text: str = ""
            count: int = field(default=0, init=False)

            def __post_init__(self):
                self.count = len(self.text)

        seen = []

        def n(s):
            seen.append((s.text, s.count))
            return {"text": s.text + "!", "count": 100}

        app = _chain(E, State, ("n", n), ("m", n))
        return capture(lambda: app.invoke({"text": "ab"})), seen

    differential(scenario)


def test_dataclass_kw_only_state_with_required_fields(differential):
    def scenario(E):
        @dataclass(kw_only=True)
        class State:
            items: Annotated[list, operator.add] = field(default_factory=list)
            topic: str

        app = _chain(E, State, ("n", lambda s: {"items": [s.topic]}))
        return capture(lambda: app.invoke({"topic": "t"})), capture(lambda: app.invoke({"items": [1]}))

    differential(scenario)


def test_pydantic_state_inheritance_adds_fields_and_overrides_defaults(differential):
    def scenario(E):
        class Base(pydantic.BaseModel):
            messages: Annotated[list[str], operator.add] = []
            mode: str = "base"

        class State(Base):
            mode: str = "child"
            step: int = 0

        seen = []

        def n(s):
            seen.append((s.mode, s.step, list(s.messages)))
            return {"messages": [f"{s.mode}-{s.step}"], "step": s.step + 1}

        return _chain(E, State, ("a", n), ("b", n)).invoke({"messages": ["hi"]}), seen

    differential(scenario)


def test_pydantic_enum_and_secret_fields(differential):
    import enum

    def scenario(E):
        class Mode(str, enum.Enum):
            FAST = "fast"
            SLOW = "slow"

        class State(pydantic.BaseModel):
            mode: Mode = Mode.FAST
            key: pydantic.SecretStr = pydantic.SecretStr("")

        seen = []

        def n(s):
            seen.append((type(s.mode).__name__, s.mode.value, s.key.get_secret_value()))
            return {"mode": "slow"}

        def m(s):
            seen.append((type(s.mode).__name__, s.mode.value))
            return {}

        out = _chain(E, State, ("n", n), ("m", m)).invoke({"mode": "fast", "key": "sk-1"})
        return {k: (type(v).__name__, str(v)) for k, v in out.items()}, seen

    differential(scenario)


# --- streams and updates with model instances -------------------------------------------------


def test_updates_and_tasks_streams_when_a_node_returns_a_model_instance(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            a: int = 0
            b: str = "x"

        g = E.StateGraph(State)
        g.add_node("n", lambda s: State(a=s.a + 1, b="set"))
        g.add_edge(E.START, "n")
        app = g.compile()
        return collect(lambda: app.stream({"a": 1}, stream_mode=["updates", "tasks", "values"]))

    differential(scenario)


def test_dataclass_node_returning_an_instance_streams_updates(differential):
    def scenario(E):
        @dataclass
        class State:
            a: int = 0
            b: str = "x"

        g = E.StateGraph(State)
        g.add_node("n", lambda s: State(a=s.a + 1))
        g.add_edge(E.START, "n")
        app = g.compile()
        return collect(lambda: app.stream({"a": 1, "b": "in"}, stream_mode=["updates", "values"], version="v2"))

    differential(scenario)


def test_output_schema_with_a_key_not_in_the_state(differential):
    def scenario(E):
        class State(TypedDict):
            q: str

        class Out(TypedDict):
            q: str
            summary: str

        def n(s):
            return {"summary": s["q"].upper()}

        app = _chain(E, State, ("n", n), output_schema=Out, checkpointer=E.InMemorySaver())
        out = capture(lambda: app.invoke({"q": "hi"}, _cfg()))
        return out, capture(lambda: app.get_state(_cfg()).values)

    differential(scenario)


def test_input_only_key_is_kept_in_checkpointed_state(differential):
    def scenario(E):
        class In(TypedDict):
            question: str
            debug: bool

        class State(TypedDict):
            question: str
            answer: str

        class Sees(TypedDict):
            question: str
            debug: bool

        seen = []

        def n(s: Sees):
            seen.append(dict(s))
            return {"answer": s["question"] + ("?" if s.get("debug") else "")}

        app = _chain(E, State, ("n", n), input_schema=In, checkpointer=E.InMemorySaver())
        out = capture(lambda: app.invoke({"question": "q", "debug": True}, _cfg()))
        return out, seen, app.get_state(_cfg()).values

    differential(scenario)


def test_pydantic_input_schema_instance_as_input(differential):
    def scenario(E):
        class In(pydantic.BaseModel):
            question: str
            top_k: int = 3

        class State(pydantic.BaseModel):
            question: str
            top_k: int = 1
            answer: str = ""

        seen = []

        def n(s):
            seen.append((s.question, s.top_k))
            return {"answer": s.question * s.top_k}

        app = _chain(E, State, ("n", n), input_schema=In)
        return capture(lambda: app.invoke(In(question="ab"))), capture(lambda: app.invoke({"question": "c"})), seen

    differential(scenario)


def test_managed_remaining_steps_in_a_pydantic_state(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            n: int = 0
            remaining_steps: E.RemainingSteps = 10

        seen = []

        def loop(s):
            seen.append(s.remaining_steps)
            return {"n": s.n + 1}

        g = E.StateGraph(State)
        g.add_node("loop", loop)
        g.add_edge(E.START, "loop")
        g.add_conditional_edges("loop", lambda s: E.END if s.remaining_steps <= 2 else "loop")
        return capture(lambda: g.compile().invoke({"n": 0}, {"recursion_limit": 6})), seen

    differential(scenario)


def test_node_returning_a_list_or_string_on_a_pydantic_state(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            a: int = 0

        out = []
        for bad in (["a", 1], "a=1", 5):
            app = _chain(E, State, ("n", lambda s, bad=bad: bad))
            out.append(capture(lambda app=app: app.invoke({"a": 1})))
        return out

    differential(scenario, exc="extends")


def test_plain_annotated_class_as_state_schema(differential):
    def scenario(E):
        class State:
            a: int
            log: Annotated[list, operator.add]

        seen = []

        def n(s):
            seen.append(type(s).__name__)
            return {"a": 2, "log": ["n"]}

        return capture(lambda: _chain(E, State, ("n", n)).invoke({"a": 1, "log": []})), seen

    differential(scenario)


# --- managed values declared as optional fields ---------------------------------------------


def test_optional_remaining_steps_in_a_typeddict_state_is_still_managed(differential):
    def scenario(E):
        class State(TypedDict):
            n: int
            remaining_steps: Optional[E.RemainingSteps]

        seen = []

        def loop(s):
            seen.append(s.get("remaining_steps"))
            return {"n": s["n"] + 1}

        g = E.StateGraph(State)
        g.add_node("loop", loop)
        g.add_edge(E.START, "loop")
        g.add_conditional_edges("loop", lambda s: E.END if s["remaining_steps"] <= 2 else "loop")
        return capture(lambda: g.compile().invoke({"n": 0}, {"recursion_limit": 6})), seen

    differential(scenario)


def test_pydantic_state_with_is_last_step_or_none_stops_the_agent_loop(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            n: int = 0
            is_last_step: E.IsLastStep | None = None
            remaining_steps: E.RemainingSteps | None = None

        seen = []

        def agent(s):
            seen.append((s.is_last_step, s.remaining_steps))
            return {"n": s.n + 1}

        g = E.StateGraph(State)
        g.add_node("agent", agent)
        g.add_edge(E.START, "agent")
        g.add_conditional_edges("agent", lambda s: E.END if s.is_last_step else "agent")
        return capture(lambda: g.compile().invoke({}, {"recursion_limit": 4})), seen

    differential(scenario)


def test_not_required_optional_remaining_steps_is_still_managed(differential):
    def scenario(E):
        class State(TypedDict):
            n: int
            remaining_steps: NotRequired[Optional[E.RemainingSteps]]

        seen = []

        def n(s):
            seen.append(s.get("remaining_steps"))
            return {"n": s["n"] + 1}

        return _chain(E, State, ("a", n), ("b", n)).invoke({"n": 0}, {"recursion_limit": 5}), seen

    differential(scenario)


# --- updates from other annotated classes -------------------------------------------------------


def test_node_returning_a_named_tuple_update(differential):
    from typing import NamedTuple

    def scenario(E):
        class State(TypedDict):
            a: int
            b: int

        class Update(NamedTuple):
            a: int

        app = _chain(E, State, ("n", lambda s: Update(a=s["a"] + 4)))
        return capture(lambda: app.invoke({"a": 1, "b": 2}))

    differential(scenario, exc="extends")


def test_node_returning_a_tuple_by_a_trailing_comma_is_an_invalid_update(differential):
    def scenario(E):
        class State(TypedDict):
            a: int

        def n(s):
            return {"a": s["a"] + 1},  # the classic slip: a one-element tuple

        return capture(lambda: _chain(E, State, ("n", n)).invoke({"a": 1}))

    differential(scenario, exc="extends")


def test_pydantic_model_update_on_a_typeddict_state_skips_unset_none_fields(differential):
    def scenario(E):
        class State(TypedDict):
            a: int
            b: Optional[int]
            c: Optional[int]

        class Patch(pydantic.BaseModel):
            a: int = 3
            b: Optional[int] = None
            c: Optional[int] = None

        app = _chain(E, State, ("n", lambda s: Patch(c=None)))
        return app.invoke({"a": 1, "b": 2, "c": 5}), list(app.stream({"a": 1, "b": 2, "c": 5}, stream_mode="updates"))

    differential(scenario)


# --- version="v2" outputs and validation of the final state -----------------------------------


def test_v2_stream_values_with_a_pydantic_output_schema_missing_a_required_field(differential):
    def scenario(E):
        class State(TypedDict):
            q: str
            answer: str

        class Out(pydantic.BaseModel):
            answer: str

        app = _chain(E, State, ("n", lambda s: {"answer": s["q"] * 2}), output_schema=Out)
        return (
            collect(lambda: app.stream({"q": "x"}, stream_mode="values", version="v2")),
            capture(lambda: app.invoke({"q": "y"}, version="v2")),
            capture(lambda: app.invoke({"q": "z"})),
        )

    differential(scenario)


def test_v2_output_of_a_pydantic_state_is_validated_but_v1_output_is_not(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            q: str
            n: int = 0

        app = _chain(E, State, ("n", lambda s: {"n": "not an int"}))
        return (
            capture(lambda: app.invoke({"q": "y"})),
            capture(lambda: app.invoke({"q": "y"}, version="v2")),
            collect(lambda: app.stream({"q": "y"}, stream_mode="values", version="v2")),
        )

    differential(scenario)


def test_v2_output_of_a_dataclass_state_is_built_without_type_checks(differential):
    def scenario(E):
        @dataclass
        class State:
            q: str
            n: int = 0

        app = _chain(E, State, ("n", lambda s: {"n": "not an int"}))
        return capture(lambda: app.invoke({"q": "y"}, version="v2"))

    differential(scenario)


def test_v2_interrupt_with_a_pydantic_state_and_resume(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            q: str
            a: str = ""

        def ask(s):
            return {"a": E.interrupt({"ask": s.q})}

        app = _chain(E, State, ("ask", ask), checkpointer=E.InMemorySaver())
        first = app.invoke({"q": "name?"}, _cfg(), version="v2")
        snap = app.get_state(_cfg())
        second = app.invoke(E.Command(resume="ann"), _cfg(), version="v2")
        return first, _vals(snap), snap.interrupts, second

    differential(scenario)


# --- values after a checkpoint round trip -----------------------------------------------------


class _Doc(pydantic.BaseModel):
    title: str
    score: float = 0.0


@dataclass
class _Hit:
    url: str
    rank: int


def test_nested_models_dataclasses_sets_and_tuples_after_a_checkpoint(differential):
    def scenario(E):
        class State(TypedDict):
            doc: _Doc
            hit: _Hit
            tags: set
            pair: tuple

        seen = []

        def write(s):
            return {"doc": _Doc(title="t"), "hit": _Hit("u", 1), "tags": {"x"}, "pair": (1, 2)}

        def read(s):
            seen.append({k: type(v).__name__ for k, v in s.items()})
            return {}

        app = _chain(E, State, ("write", write), ("read", read),
                     checkpointer=E.InMemorySaver(), interrupt_before=["read"])
        app.invoke({}, _cfg())
        paused = {k: type(v).__name__ for k, v in app.get_state(_cfg()).values.items()}
        final = app.invoke(None, _cfg())
        return paused, seen, final

    differential(scenario)


def test_pydantic_state_nested_values_after_a_checkpoint(differential):
    def scenario(E):
        class State(pydantic.BaseModel):
            docs: list[_Doc] = []
            hit: Optional[_Hit] = None

        seen = []

        def write(s):
            return {"docs": [_Doc(title="t")], "hit": {"url": "u", "rank": 2}}

        def read(s):
            seen.append((type(s.docs[0]).__name__, type(s.hit).__name__))
            return {}

        app = _chain(E, State, ("write", write), ("read", read),
                     checkpointer=E.InMemorySaver(), interrupt_before=["read"])
        app.invoke({}, _cfg())
        paused = _vals(app.get_state(_cfg()))
        app.invoke(None, _cfg())
        return paused, seen

    differential(scenario)


# --- the same key declared by the state and by a node's own schema ------------------------------


def test_node_schema_redeclaring_a_reducer_key_with_a_lambda_is_accepted(differential):
    def scenario(E):
        class State(TypedDict):
            q: str
            docs: Annotated[list, operator.add]

        class SearchView(TypedDict):
            q: str
            docs: Annotated[list, lambda a, b: a + b]

        def search(s: SearchView):
            return {"docs": [f"{s['q']}-{len(s['docs'])}"]}

        def build():
            g = E.StateGraph(State)
            g.add_node("search", search)
            g.add_node("again", search)
            g.add_edge(E.START, "search")
            g.add_edge("search", "again")
            return g.compile().invoke({"q": "x", "docs": ["seed"]})

        return capture(build)

    differential(scenario, exc="extends")


def test_node_schema_redeclaring_a_key_with_another_named_reducer_is_rejected(differential):
    def scenario(E):
        def add_unique(a, b):
            return a + [x for x in b if x not in a]

        class State(TypedDict):
            q: str
            docs: Annotated[list, operator.add]

        class SearchView(TypedDict):
            q: str
            docs: Annotated[list, add_unique]

        def build():
            g = E.StateGraph(State)
            g.add_node("search", lambda s: {"docs": ["d"]}, input_schema=SearchView)
            g.add_edge(E.START, "search")
            return g.compile().invoke({"q": "x", "docs": []})

        return capture(build)

    differential(scenario, exc="extends")


def _view_with_its_own_merge():
    def merge(a, b):  # same name and module as the state's reducer, another function
        return {**a, **b}

    class View(TypedDict):
        meta: Annotated[dict, merge]

    return View


def test_node_schema_with_a_same_named_but_different_reducer_is_rejected(differential):
    def scenario(E):
        def merge(a, b):
            return {**b, **a}

        class State(TypedDict):
            meta: Annotated[dict, merge]

        def build():
            g = E.StateGraph(State)
            g.add_node("n", lambda s: {"meta": {"k": 1}}, input_schema=_view_with_its_own_merge())
            g.add_edge(E.START, "n")
            return g.compile().invoke({"meta": {"k": 0}})

        return capture(build)

    differential(scenario, exc="extends")
