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


def test_the_stop_button_stops_the_cell_after_the_one_that_imports_lgnb() -> None:
    """`import lgnb` warms the notebook views after its cell ends. On the kernel's event
    loop that took about a second: the next cell started that much later, and a stop
    pressed meanwhile was dropped (ipykernel ignores an interrupt while no cell runs), so a
    graph run in it went to its end. The warm-up runs in a thread: the cell starts at once
    and the stop interrupts it."""
    import os
    import signal
    import threading

    cells = [
        "import lgnb, time",
        "time.sleep(0.2)  # any cell taking longer than the warm-up's delay",
        "t0 = time.time()\n"
        "try:\n"
        "    while time.time() - t0 < 5:\n"
        "        time.sleep(0.01)\n"
        "    print('ran to its end')\n"
        "except KeyboardInterrupt:\n"
        "    print('stopped' if time.time() - t0 < 2 else 'stopped late')",
        "print('next')",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True,
                            resources={"metadata": {"path": str(ROOT)}})
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if i == 2:  # the stop button, 0.3 s after the cell was sent
                pid = client.km.provisioner.process.pid
                threading.Timer(0.3, lambda: os.kill(pid, signal.SIGINT)).start()
            client.execute_cell(cell, i)
    printed = ["".join(o.get("text", "") for o in c.outputs if o.output_type == "stream") for c in nb.cells]
    assert printed[2:] == ["stopped\n", "next\n"]
