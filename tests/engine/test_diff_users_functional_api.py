"""The functional API as users write it from LangGraph's docs (`@entrypoint`, `@task`,
`entrypoint.final`, `previous`, `interrupt` in entrypoints and tasks), run on both engines:
parallel tasks through futures, tasks calling tasks, a chatbot with short-term memory,
human-in-the-loop with several interrupts, task results kept across resumes, retries and
caching, every stream mode, errors, state and history, config/runtime/store injection,
async entrypoints, and entrypoints mixed with `StateGraph`s.

No `from __future__ import annotations`: classes are defined inside scenarios.
"""

import asyncio
import operator
import threading
import time
from dataclasses import dataclass
from typing import Annotated

from _diff import Normalizer, acapture, acollect, attempt, capture, collect
from langgraph.cache.memory import InMemoryCache
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict


def _one_node_app(E, schema, name, node, **compile_kw):
    """START -> name: the one-node graph that wraps a node or subgraph, compiled with compile_kw."""
    g = E.StateGraph(schema)
    g.add_node(name, node)
    g.add_edge(E.START, name)
    return g.compile(**compile_kw)


def _cfg(tid="t"):
    return {"configurable": {"thread_id": tid}}


def _snap(s):
    return (s.values, s.next, [(t.name, t.error and repr(t.error), t.interrupts, t.result)
                               for t in s.tasks],
            s.metadata.get("source") if s.metadata else None,
            s.metadata.get("step") if s.metadata else None, s.interrupts)


def _history(graph, cfg):
    return [_snap(s) for s in graph.get_state_history(cfg)]


def _sorted(chunks):
    """Chunks emitted in completion order, sorted on their content with ids normalized."""
    return sorted(chunks, key=lambda c: repr(Normalizer()(c)))


# ---------------------------------------------------------------------------------------
# tasks and futures
# ---------------------------------------------------------------------------------------


def test_parallel_task_futures_return_results_in_call_order(differential):
    def scenario(E):
        calls = []

        @E.func.task
        def slow_add(a: int, b: int) -> int:
            time.sleep(0.02 * (3 - a))
            calls.append(a)
            return a + b

        @E.func.entrypoint()
        def wf(n: int) -> list:
            futures = [slow_add(i, n) for i in range(3)]
            return [f.result() for f in futures]

        return wf.invoke(10), sorted(calls)

    differential(scenario, expect=([10, 11, 12], [0, 1, 2]))


def test_parallel_task_updates_are_keyed_by_task_name_then_the_entrypoint(differential):
    def scenario(E):
        @E.func.task
        def fetch(topic: str) -> str:
            return f"facts about {topic}"

        @E.func.task
        def rate(text: str) -> int:
            return len(text)

        @E.func.entrypoint()
        def research(topics: list) -> dict:
            texts = [f.result() for f in [fetch(t) for t in topics]]
            scores = [rate(t).result() for t in texts]
            return dict(zip(topics, scores))

        chunks = collect(lambda: research.stream(["cats", "dogs"]))
        # fetch tasks run in parallel in a thread pool: their order is completion order
        return _sorted(chunks[:2]), chunks[2:]

    differential(scenario)


def test_a_task_calling_another_task_streams_its_updates(differential):
    def scenario(E):
        @E.func.task
        def inner(x: int) -> int:
            return x + 1

        @E.func.task
        def outer(x: int) -> int:
            return inner(x).result() * 10

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> int:
            return outer(x).result()

        cfg = _cfg()
        chunks = collect(lambda: wf.stream(1, cfg, stream_mode=["updates", "values"]))
        sub = collect(lambda: wf.stream(2, _cfg("u"), subgraphs=True))
        return chunks, sub, _snap(wf.get_state(cfg))

    differential(scenario)


def test_a_task_returning_a_large_nested_dict_is_returned_unchanged(differential):
    def scenario(E):
        @E.func.task
        def build(n: int) -> dict:
            return {f"k{i}": {"i": i, "sq": i * i, "tags": [str(i)] * (i % 3)} for i in range(n)}

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(n: int) -> dict:
            data = build(n).result()
            return {"count": len(data), "last": data[f"k{n - 1}"], "data": data}

        cfg = _cfg()
        out = wf.invoke(200, cfg)
        return out, wf.get_state(cfg).values == out

    differential(scenario)


def test_task_with_kwargs_and_custom_name(differential):
    def scenario(E):
        @E.func.task(name="greeter")
        def greet(name: str, *, punctuation: str = "!") -> str:
            return f"hello {name}{punctuation}"

        @E.func.entrypoint()
        def wf(name: str) -> str:
            return greet(name, punctuation="?").result() + greet(name).result()

        return collect(lambda: wf.stream("bob", stream_mode=["updates", "tasks"]))

    differential(scenario)


def test_calling_a_task_outside_an_entrypoint_raises(differential):
    def scenario(E):
        @E.func.task
        def t(x: int) -> int:
            return x

        return capture(lambda: t(1))

    # lgnb rewords the RuntimeError for every context helper (see test_diff_stream.py)
    differential(scenario, exc="class")


# ---------------------------------------------------------------------------------------
# short-term memory: previous and entrypoint.final
# ---------------------------------------------------------------------------------------


def test_chatbot_remembers_messages_with_previous_across_invocations(differential):
    def scenario(E):
        from langchain_core.messages import AIMessage, HumanMessage

        @E.func.task
        def call_model(messages: list) -> AIMessage:
            return AIMessage(content=f"you said {len(messages)} things; last: "
                             f"{messages[-1].content}", id=f"ai-{len(messages)}")

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def chatbot(inputs: list, *, previous=None):
            if previous:
                inputs = E.add_messages(previous, inputs)
            response = call_model(inputs).result()
            return E.func.entrypoint.final(value=response,
                                           save=E.add_messages(inputs, response))

        cfg = _cfg("chat")
        a = chatbot.invoke([HumanMessage("hi, I'm bob", id="h1")], cfg)
        b = chatbot.invoke([HumanMessage("what's my name?", id="h2")], cfg)
        other = chatbot.invoke([HumanMessage("hello", id="h3")], _cfg("other"))
        st = chatbot.get_state(cfg)
        return a, b, other, st.values, len(list(chatbot.get_state_history(cfg)))

    differential(scenario)


def test_previous_is_none_on_a_new_thread_and_the_last_return_value_after(differential):
    def scenario(E):
        seen = []

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int, *, previous=None) -> int:
            seen.append(previous)
            return x + (previous or 0)

        outs = [wf.invoke(x, _cfg("a")) for x in (1, 2, 3)]
        outs.append(wf.invoke(5, _cfg("b")))
        return outs, seen

    differential(scenario, expect=([1, 3, 6, 5], [None, 1, 3, None]))


def test_entrypoint_final_streams_value_but_saves_save(differential):
    def scenario(E):
        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int, *, previous=None) -> E.func.entrypoint.final[str, int]:
            total = (previous or 0) + x
            return E.func.entrypoint.final(value=f"total so far {total}", save=total)

        cfg = _cfg()
        a = collect(lambda: wf.stream(2, cfg, stream_mode=["values", "updates", "checkpoints"]))
        b = wf.invoke(3, cfg)
        return a, b, _snap(wf.get_state(cfg)), wf.get_output_jsonschema()

    differential(scenario)


def test_previous_without_checkpointer_is_always_none(differential):
    def scenario(E):
        @E.func.entrypoint()
        def wf(x: int, *, previous=None):
            return {"x": x, "previous": previous}

        return wf.invoke(1), wf.invoke(2)

    differential(scenario)


# ---------------------------------------------------------------------------------------
# human in the loop
# ---------------------------------------------------------------------------------------


def test_interrupt_in_entrypoint_does_not_rerun_finished_tasks_on_resume(differential):
    def scenario(E):
        side_effects = []

        @E.func.task
        def write_essay(topic: str) -> str:
            side_effects.append(("essay", topic))
            return f"An essay about {topic}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def workflow(topic: str) -> dict:
            essay = write_essay(topic).result()
            is_approved = E.interrupt({"essay": essay,
                                       "action": "Please approve/reject the essay"})
            return {"essay": essay, "is_approved": is_approved}

        cfg = _cfg()
        first = collect(lambda: workflow.stream("cat", cfg))
        paused = _snap(workflow.get_state(cfg))
        after_first = list(side_effects)
        second = collect(lambda: workflow.stream(E.Command(resume=True), cfg))
        return first, paused, after_first, second, side_effects, _history(workflow, cfg)

    differential(scenario)


def test_several_interrupts_in_sequence_each_resume_replays_earlier_answers(differential):
    def scenario(E):
        runs = []

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def form(_: str) -> dict:
            runs.append("run")
            name = E.interrupt("name?")
            age = E.interrupt(f"age of {name}?")
            city = E.interrupt("city?")
            return {"name": name, "age": age, "city": city}

        cfg = _cfg()
        out = [form.invoke("start", cfg)]
        for answer in ("ann", 33, "paris"):
            out.append(form.invoke(E.Command(resume=answer), cfg))
        return out, len(runs), _snap(form.get_state(cfg))

    differential(scenario)


def test_interrupt_inside_a_task_pauses_and_resumes_only_that_task(differential):
    def scenario(E):
        runs = []

        @E.func.task
        def prepare(x: str) -> str:
            runs.append("prepare")
            return x.upper()

        @E.func.task
        def ask_human(draft: str) -> str:
            runs.append("ask")
            feedback = E.interrupt({"draft": draft})
            return f"{draft} + {feedback}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: str) -> str:
            runs.append("entry")
            draft = prepare(x).result()
            return ask_human(draft).result()

        cfg = _cfg()
        first = collect(lambda: wf.stream("hello", cfg, stream_mode=["updates", "tasks"]))
        paused = _snap(wf.get_state(cfg))
        second = collect(lambda: wf.stream(E.Command(resume="looks good"), cfg,
                                          stream_mode=["updates", "tasks"]))
        return first, paused, second, runs, _history(wf, cfg)

    differential(scenario)


def test_interrupts_in_parallel_tasks_surface_one_at_a_time_and_resume_by_id(differential):
    def scenario(E):
        @E.func.task
        def review(item: str) -> str:
            verdict = E.interrupt(f"review {item}")
            return f"{item}:{verdict}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(items: list) -> list:
            return [f.result() for f in [review(i) for i in items]]

        cfg = _cfg()
        first = wf.invoke(["a", "b"], cfg)
        st = wf.get_state(cfg)
        pending = sorted(st.interrupts, key=lambda i: i.value)
        answers = {i.id: i.value.replace("review ", "ok-") for i in pending}
        out = wf.invoke(E.Command(resume=answers), cfg)
        return (sorted(first["__interrupt__"], key=lambda i: i.value)
                if isinstance(first, dict) else first,
                [i.value for i in pending], out, _snap(wf.get_state(cfg)))

    differential(scenario)


def test_interrupt_in_entrypoint_without_checkpointer_raises(differential):
    def scenario(E):
        @E.func.entrypoint()
        def wf(x: int) -> int:
            return E.interrupt("need a checkpointer")

        return capture(lambda: wf.invoke(1))

    differential(scenario, exc="extends")


def test_resume_after_interrupt_then_previous_is_the_completed_return_value(differential):
    def scenario(E):
        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int, *, previous=None) -> dict:
            ok = E.interrupt({"x": x, "previous": previous})
            return {"x": x, "ok": ok}

        cfg = _cfg()
        a = wf.invoke(1, cfg)
        b = wf.invoke(E.Command(resume="yes"), cfg)
        c = wf.invoke(2, cfg)
        d = wf.invoke(E.Command(resume="no"), cfg)
        return a, b, c, d

    differential(scenario)


# ---------------------------------------------------------------------------------------
# retries and caching
# ---------------------------------------------------------------------------------------


def test_retry_policy_only_retries_listed_exceptions(differential):
    def scenario(E):
        attempts = {"net": 0, "bad": 0}

        @E.func.task(retry_policy=E.RetryPolicy(max_attempts=4, initial_interval=0.001,
                                                jitter=False, retry_on=ConnectionError))
        def flaky_net(x: int) -> int:
            attempts["net"] += 1
            if attempts["net"] < 3:
                raise ConnectionError("down")
            return x

        @E.func.task(retry_policy=E.RetryPolicy(max_attempts=4, initial_interval=0.001,
                                                jitter=False, retry_on=ConnectionError))
        def bad_input(x: int) -> int:
            attempts["bad"] += 1
            raise ValueError(f"bad {x}")

        @E.func.entrypoint()
        def wf(x: int) -> dict:
            ok = flaky_net(x).result()
            try:
                bad_input(x).result()
            except ValueError as e:
                return {"ok": ok, "err": str(e)}

        return wf.invoke(7), dict(attempts)

    differential(scenario, expect=({"ok": 7, "err": "bad 7"}, {"net": 3, "bad": 1}))


def test_retry_exhausted_error_reaches_the_caller_and_state(differential):
    def scenario(E):
        attempts = []

        @E.func.task(retry_policy=E.RetryPolicy(max_attempts=2, initial_interval=0.001,
                                                jitter=False))
        def always_fails(x: int) -> int:
            attempts.append(x)
            raise RuntimeError("boom")

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> int:
            return always_fails(x).result()

        cfg = _cfg()
        chunks = collect(lambda: wf.stream(1, cfg))
        return chunks, len(attempts), _snap(wf.get_state(cfg))

    differential(scenario)


def test_task_cache_policy_with_key_func_and_clear_cache(differential):
    def scenario(E):
        runs = []

        @E.func.task(cache_policy=E.CachePolicy(key_func=lambda q, **kw: q.lower()))
        def search(q: str) -> str:
            runs.append(q)
            return f"results for {q.lower()}"

        cache = InMemoryCache()

        @E.func.entrypoint(cache=cache)
        def wf(qs: list) -> list:
            return [search(q).result() for q in qs]

        # the first run's cache writes finish with its invoke: LangGraph writes them in
        # the background, so a hit within the same run is a race in the reference
        a = wf.invoke(["Cats", "DOGS"]), wf.invoke(["cats"])
        b = collect(lambda: wf.stream(["dogs"], stream_mode=["updates", "tasks"]))
        search.clear_cache(cache)
        c = wf.invoke(["CATS"])
        return a, b, c, runs

    ref = differential(scenario)
    assert ref[-1] == ["Cats", "DOGS", "CATS"]  # "cats" and "dogs" hit the cache by key_func


def test_entrypoint_level_retry_policy_reruns_the_whole_function(differential):
    def scenario(E):
        runs = []

        @E.func.entrypoint(retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.001,
                                                      jitter=False))
        def wf(x: int) -> int:
            runs.append(x)
            if len(runs) < 2:
                raise ConnectionError("flaky")
            return x * 2

        return wf.invoke(21), runs

    differential(scenario)


# ---------------------------------------------------------------------------------------
# streaming
# ---------------------------------------------------------------------------------------


def test_custom_stream_from_get_stream_writer_and_writer_param(differential):
    def scenario(E):
        @E.func.task
        def step(x: int) -> int:
            E.get_stream_writer()({"task_progress": x})
            return x + 1

        @E.func.entrypoint()
        def wf(x: int, *, writer) -> int:
            writer("starting")
            y = step(x).result()
            writer({"got": y})
            return y

        return (collect(lambda: wf.stream(1, stream_mode="custom")),
                collect(lambda: wf.stream(1, stream_mode=["custom", "updates"])))

    differential(scenario)


def test_stream_writer_annotated_parameter_in_a_task(differential):
    def scenario(E):
        @E.func.task
        def step(x: int, writer: E.StreamWriter) -> int:
            writer(f"task sees {x}")
            return x

        @E.func.entrypoint()
        def wf(x: int) -> int:
            return step(x).result()

        return collect(lambda: wf.stream(3, stream_mode=["custom", "values"]))

    differential(scenario)


def test_messages_stream_from_a_chat_model_called_in_a_task(differential):
    def scenario(E):
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage

        model = GenericFakeChatModel(messages=iter([AIMessage(content="hello there friend")]))

        @E.func.task
        def call_model(prompt: str):
            return model.invoke(prompt)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(prompt: str) -> str:
            return call_model(prompt).result().content

        chunks = collect(lambda: wf.stream("hi", _cfg(), stream_mode="messages"))
        return [(m.content, type(m).__name__,
                 {k: meta.get(k) for k in ("langgraph_node", "langgraph_step",
                                           "langgraph_triggers", "checkpoint_ns")})
                for m, meta in chunks]

    differential(scenario)


def test_debug_stream_of_an_entrypoint_with_a_task(differential):
    def scenario(E):
        @E.func.task
        def double(x: int) -> int:
            return 2 * x

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> int:
            return double(x).result()

        return collect(lambda: wf.stream(4, _cfg(), stream_mode="debug"))

    differential(scenario)


def test_values_stream_of_an_entrypoint_returning_a_dict(differential):
    def scenario(E):
        @E.func.task
        def a(x: int) -> int:
            return x + 1

        @E.func.entrypoint()
        def wf(x: int) -> dict:
            return {"result": a(x).result(), "input": x}

        return (collect(lambda: wf.stream(1, stream_mode="values")),
                collect(lambda: wf.stream(1, stream_mode=["values", "tasks"])))

    differential(scenario)


def test_entrypoint_stream_returning_none(differential):
    def scenario(E):
        log = []

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> None:
            log.append(x)

        cfg = _cfg()
        return (collect(lambda: wf.stream(1, cfg, stream_mode=["updates", "values"])),
                wf.invoke(2, cfg), _snap(wf.get_state(cfg)), log)

    differential(scenario)


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------


def test_a_failing_task_among_parallel_tasks_raises_in_the_entrypoint(differential):
    def scenario(E):
        done = []
        third_done = threading.Event()

        @E.func.task
        def work(x: int) -> int:
            if x == 2:
                # fail once task 3 has finished: whether it starts before a failure
                # cancels it would be the machine's timing, on both engines
                third_done.wait(5)
                raise ValueError(f"cannot process {x}")
            done.append(x)
            if x == 3:
                third_done.set()
            return x

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(xs: list) -> list:
            futures = [work(x) for x in xs]
            return [f.result() for f in futures]

        cfg = _cfg()
        err = capture(lambda: wf.invoke([1, 2, 3], cfg))
        st = wf.get_state(cfg)
        return (err, sorted(done), st.values, st.next,
                sorted((t.name, repr(t.error)) for t in st.tasks))

    differential(scenario)


def test_error_in_a_task_then_rerun_on_the_thread_reuses_successful_tasks(differential):
    def scenario(E):
        runs = []
        fail = {"on": True}

        @E.func.task
        def good(x: int) -> int:
            runs.append(("good", x))
            return x

        @E.func.task
        def fragile(x: int) -> int:
            runs.append(("fragile", x))
            if fail["on"]:
                raise RuntimeError("transient")
            return x * 100

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> int:
            return good(x).result() + fragile(x).result()

        cfg = _cfg()
        first = capture(lambda: wf.invoke(1, cfg))
        fail["on"] = False
        second = wf.invoke(None, cfg)
        return first, second, runs, _snap(wf.get_state(cfg))

    differential(scenario)


def test_exception_raised_by_entrypoint_itself(differential):
    def scenario(E):
        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> int:
            raise KeyError("missing")

        cfg = _cfg()
        chunks = collect(lambda: wf.stream(1, cfg))
        st = wf.get_state(cfg)
        return chunks, st.next, [(t.name, repr(t.error)) for t in st.tasks]

    differential(scenario)


# ---------------------------------------------------------------------------------------
# state and history
# ---------------------------------------------------------------------------------------


def test_get_state_history_of_a_functional_workflow_over_two_runs(differential):
    def scenario(E):
        @E.func.task
        def inc(x: int) -> int:
            return x + 1

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int, *, previous=None) -> int:
            return inc(x).result() + (previous or 0)

        cfg = _cfg()
        wf.invoke(1, cfg)
        wf.invoke(10, cfg)
        hist = list(wf.get_state_history(cfg))
        return ([_snap(s) for s in hist],
                [(s.metadata.get("writes"), s.parent_config is None) for s in hist])

    differential(scenario)


def test_replay_from_an_earlier_checkpoint_of_an_entrypoint(differential):
    def scenario(E):
        runs = []

        @E.func.task
        def step(x: int) -> int:
            runs.append(x)
            return x * 3

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> int:
            y = step(x).result()
            return y + E.interrupt("add?")

        cfg = _cfg()
        wf.invoke(2, cfg)
        wf.invoke(E.Command(resume=1), cfg)
        hist = list(wf.get_state_history(cfg))
        paused = next(s for s in hist if s.next == ("wf",) and s.tasks and s.tasks[0].interrupts)
        forked = wf.invoke(E.Command(resume=100), paused.config)
        return forked, runs, _snap(wf.get_state(cfg))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# injection: config, runtime, store
# ---------------------------------------------------------------------------------------


def test_config_parameter_reaches_entrypoint_and_task(differential):
    def scenario(E):
        @E.func.task
        def who(x: int, config) -> str:
            return f"{config['configurable'].get('user')}:{x}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int, *, config) -> dict:
            c = config["configurable"]
            return {"thread": c["thread_id"], "user": c.get("user"), "task": who(x).result(),
                    "tags": config.get("tags")}

        return wf.invoke(1, {"configurable": {"thread_id": "t1", "user": "ann"},
                             "tags": ["x"]})

    differential(scenario)


def test_runtime_context_schema_reaches_entrypoint_and_tasks(differential):
    def scenario(E):
        @dataclass
        class Ctx:
            user_id: str
            greeting: str = "hi"

        @E.func.task
        def greet(name: str) -> str:
            ctx = E.get_runtime(Ctx).context
            return f"{ctx.greeting} {name} from {ctx.user_id}"

        @E.func.entrypoint(context_schema=Ctx)
        def wf(name: str, *, runtime: E.Runtime[Ctx]) -> dict:
            return {"direct": runtime.context.user_id, "task": greet(name).result()}

        return (wf.invoke("bob", context=Ctx(user_id="u1")),
                wf.invoke("amy", context=Ctx(user_id="u2", greeting="yo")))

    differential(scenario)


def test_store_injected_into_entrypoint_and_task_persists_across_threads(differential):
    def scenario(E):
        store = InMemoryStore()

        @E.func.task
        def remember(user: str, fact: str, store) -> None:
            store.put(("memories", user), fact, {"fact": fact})

        @E.func.entrypoint(checkpointer=E.InMemorySaver(), store=store)
        def wf(inp: dict, *, store, previous=None) -> list:
            remember(inp["user"], inp["fact"]).result()
            items = store.search(("memories", inp["user"]))
            return sorted(i.value["fact"] for i in items)

        a = wf.invoke({"user": "u1", "fact": "likes tea"}, _cfg("1"))
        b = wf.invoke({"user": "u1", "fact": "lives in rome"}, _cfg("2"))
        c = wf.invoke({"user": "u2", "fact": "likes coffee"}, _cfg("3"))
        return a, b, c

    differential(scenario)


def test_runtime_store_and_previous_on_runtime_object(differential):
    def scenario(E):
        store = InMemoryStore()
        store.put(("cfg",), "k", {"v": 42})

        @E.func.entrypoint(checkpointer=E.InMemorySaver(), store=store)
        def wf(x: int, *, runtime: E.Runtime) -> dict:
            return {"stored": runtime.store.get(("cfg",), "k").value,
                    "previous": runtime.previous, "x": x}

        cfg = _cfg()
        return wf.invoke(1, cfg), wf.invoke(2, cfg)

    differential(scenario)


# ---------------------------------------------------------------------------------------
# async
# ---------------------------------------------------------------------------------------


def test_async_entrypoint_with_interrupt_and_gathered_async_tasks(differential):
    async def scenario(E):
        runs = []

        @E.func.task
        async def fetch(i: int) -> str:
            await asyncio.sleep(0.001 * (3 - i))
            runs.append(i)
            return f"doc{i}"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        async def wf(n: int) -> dict:
            docs = await asyncio.gather(*[fetch(i) for i in range(n)])
            answer = E.interrupt({"docs": docs})
            return {"docs": docs, "answer": answer}

        cfg = _cfg()
        first = await wf.ainvoke(3, cfg)
        st = await wf.aget_state(cfg)
        second = await acollect(lambda: wf.astream(E.Command(resume="ok"), cfg,
                                                   stream_mode=["updates", "values"]))
        return first, _snap(st), second, sorted(runs)

    differential(scenario)


def test_async_entrypoint_calling_a_sync_task(differential):
    async def scenario(E):
        @E.func.task
        def sync_double(x: int) -> int:
            return 2 * x

        @E.func.entrypoint()
        async def wf(x: int) -> int:
            return await sync_double(x) + sync_double(x + 1).result()

        return await wf.ainvoke(5)

    differential(scenario)


def test_async_custom_stream_and_error_in_async_task(differential):
    async def scenario(E):
        @E.func.task
        async def explode(x: int) -> int:
            E.get_stream_writer()({"about_to_fail": x})
            raise ValueError("async boom")

        @E.func.entrypoint()
        async def wf(x: int) -> int:
            return await explode(x)

        return await acollect(lambda: wf.astream(1, stream_mode=["custom", "updates"]))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# entrypoints and graphs together
# ---------------------------------------------------------------------------------------


def test_entrypoint_invokes_a_compiled_state_graph(differential):
    def scenario(E):
        class S(TypedDict):
            text: str
            steps: Annotated[list, operator.add]

        g = E.StateGraph(S)
        g.add_node("upper", lambda s: {"text": s["text"].upper(), "steps": ["upper"]})
        g.add_node("exclaim", lambda s: {"text": s["text"] + "!", "steps": ["exclaim"]})
        g.add_edge(E.START, "upper")
        g.add_edge("upper", "exclaim")
        graph = g.compile()

        @E.func.task
        def run_graph(text: str) -> dict:
            return graph.invoke({"text": text, "steps": []})

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(text: str) -> dict:
            direct = graph.invoke({"text": text, "steps": []})
            via_task = run_graph(text + "2").result()
            return {"direct": direct, "via_task": via_task}

        cfg = _cfg()
        out = collect(lambda: wf.stream("hey", cfg, stream_mode="updates", subgraphs=True))
        return out, wf.get_state(cfg).values

    differential(scenario)


def test_state_graph_node_invokes_an_entrypoint(differential):
    def scenario(E):
        @E.func.task
        def add_one(x: int) -> int:
            return x + 1

        @E.func.entrypoint()
        def inner(x: int) -> int:
            return add_one(x).result() * 2

        class S(TypedDict):
            x: int
            y: int

        def node(s: S) -> dict:
            return {"y": inner.invoke(s["x"])}

        app = _one_node_app(E, S, "node", node, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        chunks = collect(lambda: app.stream({"x": 3}, cfg, stream_mode=["updates", "values"],
                                            subgraphs=True))
        return chunks, app.get_state(cfg).values

    differential(scenario)


def test_entrypoint_added_as_a_node_of_a_state_graph(differential):
    def scenario(E):
        @E.func.task
        def shout(s: str) -> str:
            return s.upper()

        @E.func.entrypoint()
        def sub(state: dict) -> dict:
            return {"out": shout(state["inp"]).result()}

        class S(TypedDict):
            inp: str
            out: str

        app = _one_node_app(E, S, "sub", sub)
        return (app.invoke({"inp": "quiet"}),
                collect(lambda: app.stream({"inp": "x"}, stream_mode="updates", subgraphs=True)))

    differential(scenario)


def test_interrupt_in_a_graph_invoked_by_a_task_pauses_the_entrypoint(differential):
    def scenario(E):
        class S(TypedDict):
            q: str
            a: str

        def ask(s):
            return {"a": E.interrupt(s["q"])}

        graph = _one_node_app(E, S, "ask", ask)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(q: str) -> str:
            return graph.invoke({"q": q})["a"]

        cfg = _cfg()
        first = wf.invoke("color?", cfg)
        st = _snap(wf.get_state(cfg))
        second = wf.invoke(E.Command(resume="blue"), cfg)
        return first, st, second

    differential(scenario)


def test_durability_exit_saves_only_the_final_checkpoint(differential):
    def scenario(E):
        @E.func.task
        def t(x: int) -> int:
            return x + 1

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> int:
            return t(t(x).result()).result()

        cfg = _cfg()
        out = wf.invoke(1, cfg, durability="exit")
        return out, _history(wf, cfg)

    differential(scenario)


def test_generator_entrypoint_is_rejected(differential):
    def scenario(E):
        def gen(x: int):
            yield x

        return attempt(lambda: E.func.entrypoint()(gen))

    differential(scenario)


# ---------------------------------------------------------------------------------------
# more user programs
# ---------------------------------------------------------------------------------------


def test_task_invoking_a_graph_that_interrupts_pauses_and_resumes(differential):
    def scenario(E):
        class S(TypedDict):
            q: str
            a: str

        def ask(s):
            return {"a": E.interrupt(s["q"])}

        graph = _one_node_app(E, S, "ask", ask)

        @E.func.task
        def ask_task(q: str) -> str:
            return graph.invoke({"q": q})["a"]

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(q: str) -> str:
            return ask_task(q).result()

        cfg = _cfg()
        first = collect(lambda: wf.stream("color?", cfg, subgraphs=True))
        st = _snap(wf.get_state(cfg))
        second = collect(lambda: wf.stream(E.Command(resume="blue"), cfg, subgraphs=True))
        return first, st, second

    differential(scenario)


def test_messages_stream_from_a_chat_model_called_in_the_entrypoint(differential):
    def scenario(E):
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage

        model = GenericFakeChatModel(messages=iter([AIMessage(content="short answer")]))

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(prompt: str, *, previous=None):
            reply = model.invoke(prompt)
            return E.func.entrypoint.final(value=reply.content, save=[reply.content])

        chunks = collect(lambda: wf.stream("hi", _cfg(), stream_mode=["messages", "updates"]))
        return [(mode, (c[0].content, c[1].get("langgraph_node"), c[1].get("checkpoint_ns"))
                 if mode == "messages" else c) for mode, c in chunks]

    differential(scenario)


def test_invoke_version_v2_returns_graph_output_with_interrupts(differential):
    def scenario(E):
        @E.func.task
        def draft(x: str) -> str:
            return x + " draft"

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: str) -> str:
            d = draft(x).result()
            return d + " " + E.interrupt({"review": d})

        cfg = _cfg()
        a = wf.invoke("doc", cfg, version="v2")
        b = wf.invoke(E.Command(resume="ok"), cfg, version="v2")
        # one mode per stream: with ["updates", "values"] LangGraph's v2 values part pops
        # `__interrupt__` from the dict the updates part already yielded (shared object)
        return (a, b,
                collect(lambda: wf.stream("x", _cfg("u"), version="v2", stream_mode="updates")),
                collect(lambda: wf.stream("x", _cfg("v"), version="v2", stream_mode="values")))

    differential(scenario)


def test_two_interrupts_in_one_task_resumed_one_after_the_other(differential):
    def scenario(E):
        runs = []

        @E.func.task
        def survey(user: str) -> dict:
            runs.append("survey")
            a = E.interrupt(f"{user}: favourite color?")
            b = E.interrupt(f"{user}: favourite food?")
            return {"color": a, "food": b}

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(user: str) -> dict:
            runs.append("entry")
            return survey(user).result()

        cfg = _cfg()
        outs = [collect(lambda: wf.stream("ann", cfg, stream_mode=["updates", "tasks"]))]
        for answer in ("red", "pizza"):
            outs.append(collect(lambda a=answer: wf.stream(E.Command(resume=a), cfg,
                                                           stream_mode=["updates", "tasks"])))
        return outs, runs, _snap(wf.get_state(cfg))

    differential(scenario)


def test_sync_entrypoint_run_with_ainvoke_and_astream(differential):
    async def scenario(E):
        @E.func.task
        def inc(x: int) -> int:
            return x + 1

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int, *, previous=None) -> int:
            return inc(x).result() + (previous or 0)

        cfg = _cfg()
        a = await wf.ainvoke(1, cfg)
        b = await acollect(lambda: wf.astream(2, cfg, stream_mode=["updates", "values"]))
        return a, b, (await wf.aget_state(cfg)).values

    differential(scenario)


def test_entrypoint_batch_runs_each_input(differential):
    def scenario(E):
        @E.func.task
        def square(x: int) -> int:
            return x * x

        @E.func.entrypoint()
        def wf(x: int) -> int:
            return square(x).result()

        return wf.batch([1, 2, 3]), capture(lambda: wf.batch([4, "x"], return_exceptions=True))

    differential(scenario)


def test_entrypoint_with_a_dataclass_input_and_typed_dict_output(differential):
    def scenario(E):
        @dataclass
        class Request:
            text: str
            times: int = 1

        class Out(TypedDict):
            echoed: str

        @E.func.task
        def repeat(req: Request) -> str:
            return " ".join([req.text] * req.times)

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(req: Request) -> Out:
            return {"echoed": repeat(req).result()}

        cfg = _cfg()
        out = wf.invoke(Request("hi", 3), cfg)
        return (out, wf.get_input_jsonschema(), wf.get_output_jsonschema(),
                wf.get_state(cfg).values)

    differential(scenario)


def test_entrypoint_graph_structure_and_name(differential):
    def scenario(E):
        @E.func.task
        def t(x: int) -> int:
            return x

        @E.func.entrypoint()
        def my_workflow(x: int) -> int:
            return t(x).result()

        gr = my_workflow.get_graph()
        # (as drawn: the node order, and the end edge dotted, conditional)
        return (my_workflow.name, list(gr.nodes),
                [(e.source, e.target, e.conditional) for e in gr.edges], gr.to_json(), gr.draw_mermaid(),
                list(my_workflow.stream_channels) if isinstance(
                    my_workflow.stream_channels, (list, tuple)) else my_workflow.stream_channels)

    differential(scenario)


def test_task_cache_ttl_and_entrypoint_retry_in_async_workflow(differential):
    async def scenario(E):
        runs = []

        @E.func.task(cache_policy=E.CachePolicy(ttl=60))
        async def embed(text: str) -> list:
            runs.append(text)
            return [len(text), text.count("a")]

        @E.func.entrypoint(cache=InMemoryCache())
        async def wf(texts: list) -> list:
            return await asyncio.gather(*[embed(t) for t in texts])

        a = await wf.ainvoke(["banana", "apple"])
        b = await acollect(lambda: wf.astream(["apple", "cherry"],
                                              stream_mode=["updates", "tasks"]))
        return a, _sorted(b), sorted(runs)

    differential(scenario)


def test_failing_task_among_gathered_async_tasks(differential):
    async def scenario(E):
        done = []

        @E.func.task
        async def work(x: int) -> int:
            await asyncio.sleep(0.001 * x)
            if x == 2:
                raise ValueError(f"cannot process {x}")
            done.append(x)
            return x

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        async def wf(xs: list) -> list:
            return await asyncio.gather(*[work(x) for x in xs])

        cfg = _cfg()
        err = await acapture(lambda: wf.ainvoke([1, 2, 3], cfg))
        st = await wf.aget_state(cfg)
        return (err, st.next, sorted((t.name, repr(t.error), t.result) for t in st.tasks))

    differential(scenario)


def test_rerun_after_failure_with_invoke_none_in_a_node_calling_tasks(differential):
    def scenario(E):
        runs = []
        fail = {"on": True}

        @E.func.task
        def fetch(i: int) -> int:
            runs.append(("fetch", i))
            if i == 1 and fail["on"]:
                raise TimeoutError("slow api")
            return i * 10

        class S(TypedDict):
            ids: list
            total: int

        def node(s: S) -> dict:
            return {"total": sum(f.result() for f in [fetch(i) for i in s["ids"]])}

        app = _one_node_app(E, S, "node", node, checkpointer=E.InMemorySaver())
        cfg = _cfg()
        err = capture(lambda: app.invoke({"ids": [0, 1, 2]}, cfg))
        fail["on"] = False
        out = app.invoke(None, cfg)
        return err, out, sorted(runs)

    differential(scenario)


def test_custom_events_written_in_tasks_carry_the_callers_namespace(differential):
    """A progress event a `@task` writes is labelled with the calling entrypoint's (or
    task's) namespace under `subgraphs=True`, as LangGraph labels it, and still reaches
    a stream without `subgraphs`."""
    def scenario(E):
        @E.func.task
        def inner(x: int) -> int:
            E.get_stream_writer()({"inner": x})
            return x + 1

        @E.func.task
        def outer(x: int) -> int:
            E.get_stream_writer()({"outer": x})
            return inner(x).result() * 2

        @E.func.entrypoint()
        def flow(x: int) -> int:
            E.get_stream_writer()({"flow": x})
            return outer(x).result()

        modes = ["custom", "updates"]
        return (collect(lambda: flow.stream(1, stream_mode=modes, subgraphs=True)),
                collect(lambda: flow.stream(1, stream_mode=modes)))

    ref = differential(scenario)
    assert len([c for c in ref[0] if c[1] == "custom"]) == 3


def test_a_v2_checkpoint_chunk_streamed_before_an_entrypoint_pauses_keeps_its_values(differential):
    """The chunks a user collects are what was streamed: the pause's `values` chunk does not
    add `__interrupt__` to the returned dict an earlier `checkpoints` chunk holds."""
    def scenario(E):
        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def wf(x: int) -> dict:
            if x == 2:
                E.interrupt("q")
            return {"x": x}

        cfg = _cfg()
        wf.invoke(1, cfg)
        parts = list(wf.stream(2, cfg, stream_mode=["checkpoints", "values"], version="v2"))
        return [(p["type"], sorted(p["data"]["values"]) if p["type"] == "checkpoints" else sorted(p["data"]))
                for p in parts]

    differential(scenario)


def test_a_v1_checkpoint_chunk_streamed_before_an_entrypoint_pauses_keeps_its_values():
    """As in v2 (LangGraph's v1 adds the key to the earlier chunk afterwards: not copied)."""
    from lgnb.checkpoint.memory import InMemorySaver
    from lgnb.func import entrypoint
    from lgnb.types import interrupt

    @entrypoint(checkpointer=InMemorySaver())
    def wf(x: int) -> dict:
        if x == 2:
            interrupt("q")
        return {"x": x}

    cfg = _cfg()
    wf.invoke(1, cfg)
    parts = list(wf.stream(2, cfg, stream_mode=["checkpoints", "values"]))
    assert parts[0][0] == "checkpoints" and parts[0][1]["values"] == {"x": 1}
    assert "__interrupt__" in parts[-1][1]
    assert wf.get_state(cfg).values == {"x": 1}


def test_a_graph_a_task_call_runs_saves_its_callers_namespaces_as_parents(differential):
    """A compiled graph invoked inside a `@task` that a node calls: its checkpoints' metadata
    `parents` and its configs' `checkpoint_map` name the node's namespace too, as LangGraph's."""
    def scenario(E):
        class S(TypedDict):
            x: int

        b = E.StateGraph(S)
        b.add_node("n", lambda s: {"x": s["x"] + 1})
        b.add_edge(E.START, "n")
        sub = b.compile()

        @E.func.task
        def t(x: int) -> dict:
            return sub.invoke({"x": x})

        p = E.StateGraph(S)
        p.add_node("node", lambda s: {"x": t(s["x"]).result()["x"]})
        p.add_edge(E.START, "node")
        g = p.compile(checkpointer=E.InMemorySaver())
        cfg = _cfg()
        g.invoke({"x": 1}, cfg)
        return sorted({(tup.config["configurable"]["checkpoint_ns"].count("|"),
                        tuple(k.split(":")[0] for k in tup.metadata["parents"]),
                        tuple(k.split(":")[0] for k in tup.config["configurable"].get("checkpoint_map", {})))
                       for tup in g.checkpointer.list(cfg)})

    differential(scenario)
