"""What the fast-path differential tests share (`test_diff_users_state_views.py`,
`test_diff_users_plain_steps.py`, `test_diff_users_messages_index.py`): a state, a chain
builder, a messages graph. Their `views` fixture (a state-view scenario run with lgnb's
default threshold and with sharing forced for every size) is in `conftest.py`.

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
