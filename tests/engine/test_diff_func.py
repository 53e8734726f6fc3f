"""The functional API (`@entrypoint`, `@task`) and node caching, against LangGraph:
stream output, results, state and history must match."""

import asyncio
import operator
import time
from typing import Annotated

from langgraph.cache.memory import InMemoryCache
from typing_extensions import TypedDict

from _diff import collect


def _history(graph, config):
    return [
        (s.values, s.next, s.metadata.get("source"), s.metadata.get("step"),
         [(t.name, t.result, t.interrupts) for t in s.tasks])
        for s in graph.get_state_history(config)
    ]


def test_entrypoint_tasks_interrupt_resume(differential):
    def scenario(E):
        calls = []

        @E.func.task()
        def mapper(x: int) -> str:
            calls.append(x)
            time.sleep(x / 50)
            return str(x) * 2

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def graph(xs: list[int]) -> list[str]:
            mapped = [f.result() for f in [mapper(x) for x in xs]]
            answer = E.interrupt("question")
            return [m + answer for m in mapped]

        cfg = {"configurable": {"thread_id": "1"}}
        first = collect(lambda: graph.stream([0, 1], cfg))
        state = graph.get_state(cfg)
        second = collect(lambda: graph.stream(E.Command(resume="a"), cfg))
        return (first, state.next, [t.name for t in state.tasks], second, sorted(calls),
                _history(graph, cfg), graph.get_input_jsonschema(),
                graph.get_output_jsonschema())

    differential(scenario)


def test_entrypoint_final_and_previous(differential):
    def scenario(E):
        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        def counter(n: int, *, previous=None):
            total = (previous or 0) + n
            return E.func.entrypoint.final(value=previous, save=total)

        cfg = {"configurable": {"thread_id": "t"}}
        outs = [counter.invoke(n, cfg) for n in (1, 2, 3)]
        return outs, collect(lambda: counter.stream(4, cfg, stream_mode=["updates", "values"]))

    differential(scenario)


def test_task_error_caught_and_retried(differential):
    def scenario(E):
        attempts = []

        @E.func.task(retry_policy=E.RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False))
        def flaky(x: int) -> int:
            attempts.append(x)
            if len(attempts) < 3:
                raise ValueError("not yet")
            return x * 10

        @E.func.task
        def broken(x: int) -> int:
            raise KeyError(x)

        @E.func.entrypoint()
        def wf(x: int) -> dict:
            try:
                broken(x).result()
                caught = None
            except KeyError as e:
                caught = repr(e)
            return {"flaky": flaky(x).result(), "caught": caught}

        return collect(lambda: wf.stream(2)), len(attempts)

    differential(scenario)


def test_async_entrypoint_gathers_tasks(differential):
    async def scenario(E):
        @E.func.task
        async def double(x: int) -> int:
            await asyncio.sleep(x / 100)
            return 2 * x

        @E.func.entrypoint(checkpointer=E.InMemorySaver())
        async def wf(xs: list[int]) -> int:
            return sum(await asyncio.gather(*[double(x) for x in xs]))

        cfg = {"configurable": {"thread_id": "a"}}
        chunks = [c async for c in wf.astream([1, 2, 3], cfg)]
        return chunks, (await wf.aget_state(cfg)).values

    differential(scenario)


def test_task_called_from_state_graph_node(differential):
    def scenario(E):
        class S(TypedDict):
            log: Annotated[list, operator.add]

        @E.func.task
        def shout(word: str) -> str:
            return word.upper()

        def node(state: S) -> dict:
            return {"log": [shout("hi").result()]}

        g = E.StateGraph(S)
        g.add_node("node", node)
        g.add_edge(E.START, "node")
        graph = g.compile()
        return collect(lambda: graph.stream({"log": []}, stream_mode=["updates", "values"]))

    differential(scenario)


def test_node_cache_replays_writes(differential):
    def scenario(E):
        class S(TypedDict):
            n: int

        runs = []

        def inc(state: S) -> dict:
            runs.append(state["n"])
            return {"n": state["n"] + 1}

        g = E.StateGraph(S)
        g.add_node("inc", inc, cache_policy=E.CachePolicy())
        g.add_edge(E.START, "inc")
        graph = g.compile(cache=InMemoryCache())
        first = collect(lambda: graph.stream({"n": 1}))
        second = collect(lambda: graph.stream({"n": 1}, stream_mode=["updates", "tasks"]))
        graph.clear_cache()
        third = collect(lambda: graph.stream({"n": 1}))
        return first, second, third, runs

    differential(scenario)


def test_task_cache_across_threads(differential):
    def scenario(E):
        runs = []

        @E.func.task(cache_policy=E.CachePolicy())
        def square(x: int) -> int:
            runs.append(x)
            return x * x

        @E.func.entrypoint(checkpointer=E.InMemorySaver(), cache=InMemoryCache())
        def wf(xs: list[int]) -> list[int]:
            return [square(x).result() for x in xs]

        outs = [
            collect(lambda t=t: wf.stream([1, 2, 1], {"configurable": {"thread_id": t}}))
            for t in ("1", "2")
        ]
        return outs, runs

    differential(scenario)
