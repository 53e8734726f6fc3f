"""Ordinary LangGraph programs typed into a notebook cell, run in a real kernel (nbclient).

A cell runs inside the kernel's event loop: `asyncio.get_running_loop()` answers there,
and `asyncio.run(...)` refuses to start. LangGraph's sync runs do not care (its `@task`
calls and the tasks of a step with several run in its pool threads); lgnb must not either,
on the first run and on every run after, once its nodes are known to be quick.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).parents[2]


def _run_cells(cells: list[str]) -> list[str]:
    """What each cell printed, run in order in a fresh kernel."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream") for cell in nb.cells]


def test_a_functional_api_program_runs_in_a_cell() -> None:
    printed = _run_cells([
        "from lgnb.func import entrypoint, task\n"
        "@task\n"
        "def double(x: int) -> int:\n"
        "    return 2 * x\n"
        "@entrypoint()\n"
        "def main(xs: list) -> list:\n"
        "    return [double(x).result() for x in xs]\n"
        "for _ in range(3):\n"
        "    print(main.invoke([1, 2, 3]))",
    ])
    assert printed == ["[2, 4, 6]\n" * 3]


def test_parallel_nodes_and_tasks_calling_asyncio_run_run_in_a_cell() -> None:
    printed = _run_cells([
        "import asyncio, operator\n"
        "from typing import Annotated\n"
        "from typing_extensions import TypedDict\n"
        "from lgnb.func import entrypoint, task\n"
        "from lgnb.graph import START, StateGraph\n"
        "from lgnb.types import Send\n"
        "async def fetch(i):\n"
        "    return 10 * i\n"
        "class S(TypedDict):\n"
        "    items: list\n"
        "    out: Annotated[list, operator.add]\n"
        "b = StateGraph(S)\n"
        "b.add_node('work', lambda s: {'out': [asyncio.run(fetch(s['i']))]})\n"
        "b.add_conditional_edges(START, lambda s: [Send('work', {'i': i}) for i in s['items']])\n"
        "graph = b.compile()\n"
        "@task\n"
        "def get(i: int) -> int:\n"
        "    return asyncio.run(fetch(i))\n"
        "@entrypoint()\n"
        "def main(xs: list) -> list:\n"
        "    return [get(x).result() for x in xs]\n"
        "for _ in range(3):  # the nodes are known to be quick after the first run\n"
        "    print(graph.invoke({'items': [1, 2, 3]})['out'], main.invoke([1, 2]))",
    ])
    assert printed == ["[10, 20, 30] [10, 20]\n" * 3]


def test_an_entrypoint_calling_asyncio_run_runs_in_a_cell() -> None:
    printed = _run_cells([
        "import asyncio\n"
        "from lgnb.func import entrypoint\n"
        "async def double(x):\n"
        "    return 2 * x\n"
        "@entrypoint()\n"
        "def main(xs: list) -> list:\n"
        "    return [asyncio.run(double(x)) for x in xs]\n"
        "for _ in range(2):\n"
        "    print(main.invoke([1, 2]))",
    ])
    assert printed == ["[2, 4]\n" * 2]
