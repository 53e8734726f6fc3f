"""The title a view shows in its header: the caller's `title=`, else the graph's name.

LangGraph (and lgnb) name every graph compiled without `name=` "LangGraph", so a notebook
with three graphs would show three views all titled "LangGraph". For such an unnamed graph
the title is, in order:

1. the name of the builder's state schema (`StateGraph(EssayState)` → "EssayState"), unless
   it is one of the names nearly every tutorial uses (`State`, `MessagesState`, ...), which
   would tell graphs apart no better than "LangGraph";
2. for a functional-API graph (`@entrypoint()`: no builder, one node named after the
   decorated function), that function's name;
3. "graph".

A graph compiled with `name="support bot"` is titled "support bot", whatever its schema.
"""

from __future__ import annotations

from typing import Any

#: The name LangGraph and lgnb give a graph compiled without `name=`.
UNNAMED = "LangGraph"

#: State schema names too common to tell one graph from another.
GENERIC_SCHEMAS = frozenset({"dict", "State", "GraphState", "MessagesState", "AgentState", "TypedDict", "BaseModel",
                             "StateSchema"})  # (the schema LangChain's `create_agent` generates)

#: The last resort: what every view is when nothing better is known.
FALLBACK = "graph"


def graph_title(graph: Any) -> str:
    """The default title of a view of `graph` (see the module docstring for the rule)."""
    name = getattr(graph, "name", None)
    if isinstance(name, str) and name.strip() and name != UNNAMED:
        return name
    builder = getattr(graph, "builder", None)
    schema = getattr(builder, "state_schema", None)
    schema_name = getattr(schema, "__name__", None)
    if isinstance(schema_name, str) and schema_name and schema_name not in GENERIC_SCHEMAS:
        return schema_name
    nodes = getattr(graph, "nodes", None)
    if builder is None and isinstance(nodes, dict) and len(nodes) == 1:
        (only,) = nodes
        if isinstance(only, str) and only:
            return only
    return FALLBACK


def view_title(graph: Any, title: str | None, *, what: str, detail: str = "") -> str:
    """`title` when the caller gave one, else :func:`graph_title` (followed by `detail`, as
    in "EssayState · thread 7", when given); `what` names the entry point (``"lgnb.run"``)
    in the error for a title that is not a string."""
    if title is None:
        return f"{graph_title(graph)} · {detail}" if detail else graph_title(graph)
    if not isinstance(title, str):
        raise TypeError(f"{what}: title must be a string (the view's header), got {type(title).__name__}: "
                        f"pass title=str(...) or leave it out to use the graph's name")
    return title
