"""`import lgnb` stays light: pydantic is not imported until a graph meets a pydantic model,
and a pydantic schema defined after `import lgnb` works as it does with LangGraph. Each
check runs in a fresh interpreter, since the test process has pydantic loaded already."""

from __future__ import annotations

import json
import subprocess
import sys

_FIRST_RUN = """
import json, sys
import lgnb
lgnb.run
print(json.dumps(sorted(m for m in ("pydantic", "graphviz") if m in sys.modules)))
"""

_PYDANTIC_AFTER = """
import json, sys
import {engine}.graph as G
assert "pydantic" not in sys.modules or {engine!r} == "langgraph"
from pydantic import BaseModel

class State(BaseModel):
    n: int
    note: str = ""

def bump(state: State) -> State:
    return State(n=state.n + 1, note=f"seen {{type(state).__name__}}")

b = G.StateGraph(State)
b.add_node("bump", bump)
b.add_edge(G.START, "bump")
b.add_edge("bump", G.END)
g = b.compile()
out = {{"result": g.invoke({{"n": 1}})}}
try:
    g.invoke({{"n": "not a number"}})
except Exception as e:
    out["error"] = type(e).__name__
print(json.dumps(out, default=repr))
"""


def _run(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_lgnb_and_its_run_entry_point_load_neither_pydantic_nor_graphviz() -> None:
    assert _run(_FIRST_RUN) == []


def test_import_lgnb_outside_a_kernel_loads_nothing_of_the_views() -> None:
    code = "import json, sys, lgnb; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
    code += "('anywidget', 'ipywidgets', 'IPython') or m.startswith('lgnb.widgets'))))"
    assert _run(code) == []


def test_a_pydantic_state_defined_after_importing_lgnb_behaves_as_on_langgraph() -> None:
    ours, theirs = _run(_PYDANTIC_AFTER.format(engine="lgnb")), _run(_PYDANTIC_AFTER.format(engine="langgraph"))
    assert ours == theirs
    assert ours["result"] == {"n": 2, "note": "seen State"} and ours["error"] == "ValidationError"
