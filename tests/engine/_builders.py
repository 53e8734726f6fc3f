"""Small graphs the differential tests build again and again: a chain of nodes, a
conversation loop (agent -> router -> tools -> agent), a two-node messages graph, and the
state and thread config the fast-path tests share (`test_diff_users_state_views.py`,
`test_diff_users_plain_steps.py`, `test_diff_users_messages_index.py`; their `views`
fixture is in `conftest.py`).

No `from __future__ import annotations`: the state classes are read at run time.
"""

import operator
import uuid
from typing import Annotated

from typing_extensions import TypedDict


def _cfg():
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


class S(TypedDict, total=False):
    items: list
    d: dict
    count: int
    note: str
    log: Annotated[list, operator.add]


def _chain(E, State, *fns, **compile_kw):
    """START -> n0 -> n1 -> ... -> END, node `n<i>` running `fns[i]`, compiled."""
    g = E.StateGraph(State)
    prev = E.START
    for i, fn in enumerate(fns):
        g.add_node(f"n{i}", fn)
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, E.END)
    return g.compile(**compile_kw)


def _hist_values(app, cfg):
    return [(s.next, s.values, s.metadata.get("step")) for s in app.get_state_history(cfg)]


def _msgs_graph(E, *fns, checkpointer=None):
    class M(TypedDict):
        messages: Annotated[list, E.add_messages]

    return _chain(E, M, *fns, checkpointer=checkpointer)


def _ids(msgs):
    return [(type(m).__name__, m.id, m.content) for m in msgs]


def _routed_loop(E, State, first, route, second, *, names=("a", "b")):
    """START -> `first`; after it the conditional edge `route` picks `second` or END;
    `second` hands back to `first`. Nodes are named `names`; compiled."""
    a, b = names
    g = E.StateGraph(State)
    g.add_node(a, first)
    g.add_node(b, second)
    g.add_edge(E.START, a)
    g.add_conditional_edges(a, route, [b, E.END])
    g.add_edge(b, a)
    return g.compile()


def _conversation_loop(E, route, tools):
    """A `{messages, turn}` state; `agent` adds `AIMessage("t<turn>", id="ai<turn>")` and
    counts the turn, `route` (a conditional edge) picks "tools" or END, `tools` runs and
    hands back to `agent`: the ReAct loop's shape, with the router and tools under test."""

    class M(TypedDict):
        messages: Annotated[list, E.add_messages]
        turn: int

    def agent(s):
        from langchain_core.messages import AIMessage

        t = s.get("turn", 0)
        return {"messages": [AIMessage(f"t{t}", id=f"ai{t}")], "turn": t + 1}

    return _routed_loop(E, M, agent, route, tools, names=("agent", "tools"))
