"""Small graphs for the lens tests and the lens browser notebook (either engine)."""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Annotated, Any

from typing_extensions import TypedDict


class Diamond(TypedDict):
    log: Annotated[list, operator.add]
    last: str


def diamond(eng: SimpleNamespace, *, checkpointer: Any = None) -> Any:
    """a → (b, c) → d: b and c run in one super-step; d waits for both."""

    def node(name: str) -> Any:
        def run(state: Diamond) -> dict[str, Any]:
            return {"log": [name], "last": name} if name != "c" else {"log": [name]}
        run.__name__ = name
        return run

    g = eng.StateGraph(Diamond)
    for name in "abcd":
        g.add_node(name, node(name))
    g.add_edge(eng.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    g.add_edge("d", eng.END)
    return g.compile(checkpointer=checkpointer)


class FanOut(TypedDict):
    items: list
    done: Annotated[list, operator.add]


def fan_out(eng: SimpleNamespace, Send: Any) -> Any:
    """plan → Send("work", item) per item (3) → summary."""

    def plan(state: FanOut) -> dict[str, Any]:
        return {}

    def work(arg: Any) -> dict[str, Any]:
        return {"done": [arg["item"] * 10]}

    def summary(state: FanOut) -> dict[str, Any]:
        return {}

    g = eng.StateGraph(FanOut)
    g.add_node("plan", plan)
    g.add_node("work", work)
    g.add_node("summary", summary)
    g.add_edge(eng.START, "plan")
    g.add_conditional_edges("plan", lambda s: [Send("work", {"item": i}) for i in s["items"]], ["work"])
    g.add_edge("work", "summary")
    g.add_edge("summary", eng.END)
    return g.compile()


class Plain(TypedDict):
    value: str


def conflict(eng: SimpleNamespace) -> Any:
    """two parallel nodes write one LastValue key: InvalidUpdateError at the barrier."""
    g = eng.StateGraph(Plain)
    g.add_node("left", lambda s: {"value": "left"})
    g.add_node("right", lambda s: {"value": "right"})
    g.add_edge(eng.START, "left")
    g.add_edge(eng.START, "right")
    return g.compile()


def asking(eng: SimpleNamespace) -> Any:
    """ask (interrupt) → answer."""

    def ask(state: Plain) -> dict[str, Any]:
        return {"value": str(eng.interrupt({"question": "ok?"}))}

    g = eng.StateGraph(Plain)
    g.add_node("ask", ask)
    g.add_edge(eng.START, "ask")
    g.add_edge("ask", eng.END)
    return g.compile(checkpointer=eng.InMemorySaver())
