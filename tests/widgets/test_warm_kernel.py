"""In a Jupyter kernel, the view modules and the packed bundle are loaded in the idle time
after the cell that imported lgnb, so the first `lgnb.run` does not pay for them; outside a
kernel `import lgnb` loads nothing of the views (tests/engine/test_import_cost.py).

The warm-up imports in a thread, and two threads importing modules that import each other
can be handed a half-initialized module: so it never runs beside a cell (a graph run right
after `import lgnb` failed with "partially initialized module 'langchain_core.runnables.config'")."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _kernels import running_kernel

ROOT = Path(__file__).resolve().parents[2]

CHECK = ("import sys\n"
         "from lgnb.widgets import _assets\n"
         "print(sorted(m for m in ('anywidget', 'lgnb.widgets.run_view') if m in sys.modules), _assets._cache is not None)")

# what a cell sees as its first line runs: is the warm-up thread running beside it?
BESIDE = ("import threading\n"
          "print([t.name for t in threading.enumerate() if t.name == 'lgnb-warm-views'])")


@contextmanager
def kernel() -> Iterator[Any]:
    with running_kernel(cwd=str(ROOT)) as (km, kc):
        kc.manager = km  # (the stop button: `kc.manager.interrupt_kernel()`)
        yield kc


def run(kc: Any, code: str) -> str:
    """Execute `code` as a cell; its stdout (an error in the cell fails the test)."""
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            out.append(msg["content"]["text"])

    reply = kc.execute_interactive(code, output_hook=hook, timeout=120)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(out).strip()


def test_the_views_are_ready_once_the_kernel_is_idle_after_import_lgnb() -> None:
    with kernel() as kc:
        run(kc, "import lgnb")
        time.sleep(1.5)  # the user reads: the kernel is idle, the warm-up runs
        assert run(kc, CHECK) == "['anywidget', 'lgnb.widgets.run_view'] True"


def test_the_cell_that_imports_lgnb_does_not_load_the_views_itself() -> None:
    with kernel() as kc:
        assert run(kc, "import lgnb\n" + CHECK) == "[] False"


@pytest.mark.parametrize("idle", [0.0, 0.06, 0.1, 0.3])
def test_a_cell_never_runs_beside_the_warm_up_however_soon_it_follows_import_lgnb(idle: float) -> None:
    with kernel() as kc:
        run(kc, "import lgnb")
        time.sleep(idle)
        assert run(kc, BESIDE) == "[]"


def test_a_cell_that_awaits_after_import_lgnb_is_not_joined_by_the_warm_up() -> None:
    # awaiting hands the kernel's event loop the warm-up's timer; it waits for the cell's end
    with kernel() as kc:
        out = run(kc, "import asyncio\nimport lgnb\nfrom lgnb._warm import WARMED\n"
                      "await asyncio.sleep(0.4)\n" + BESIDE + "\nprint(WARMED.is_set())")
        assert out == "[]\nFalse"
        time.sleep(1.5)
        assert run(kc, CHECK) == "['anywidget', 'lgnb.widgets.run_view'] True"


def test_a_graph_run_right_after_import_lgnb_meets_no_half_imported_module() -> None:
    # what failed in CI: the reducers lesson's parallel step, in the cell after the imports
    cell = ("import operator, time\nfrom typing import Annotated\nfrom typing_extensions import TypedDict\n"
            "from lgnb.graph import START, StateGraph\n"
            "class Log(TypedDict):\n    log: Annotated[list[str], operator.add]\n"
            "def node(v, s):\n    def run(state):\n        time.sleep(s)\n        return {'log': [v]}\n    return run\n"
            "b = StateGraph(Log)\n"
            "for name, s in (('zeta', 0.0), ('alpha', 0.04), ('mid', 0.02)):\n"
            "    b.add_node(name, node(name, s)); b.add_edge(START, name)\n"
            "print(b.compile().invoke({'log': []}))")
    for idle in (0.06, 0.09, 0.12):
        with kernel() as kc:
            run(kc, "import lgnb")
            time.sleep(idle)
            assert run(kc, cell) == "{'log': ['alpha', 'mid', 'zeta']}"  # (plan order: by node name)


def stop_during(kc: Any, code: str, after: float) -> tuple[dict[str, Any], list[str]]:
    """Run `code` as a cell, press stop `after` seconds in; its reply and what it showed,
    once the kernel is idle again (as a notebook waits before it sends the next cell: a
    cell sent while the kernel still handles the error is aborted, not run)."""
    msg_id = kc.execute(code)
    time.sleep(after)
    kc.manager.interrupt_kernel()
    shown: list[str] = []
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        content = msg["content"]
        if msg["msg_type"] == "stream":
            shown.append(content["text"])
        elif msg["msg_type"] == "error":
            shown.append(content["ename"])
        elif msg["msg_type"] == "status" and content["execution_state"] == "idle":
            break
    reply = kc.get_shell_msg(timeout=30)
    assert reply["parent_header"]["msg_id"] == msg_id
    time.sleep(0.2)  # (ipykernel aborts the requests that reach it while it handles the error)
    return reply, shown


def test_the_stop_button_pressed_while_a_cell_waits_for_the_warm_up_stops_that_cell() -> None:
    # IPython runs a cell whose event hook raised: the cell itself must raise KeyboardInterrupt
    with kernel() as kc:
        run(kc, "import lgnb")
        time.sleep(0.1)  # the warm-up starts; the next cell waits for it (a fraction of a second)
        reply, shown = stop_during(kc, "import time\ntime.sleep(3)\nprint('the cell ran to its end')", 0.1)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
        assert shown == ["KeyboardInterrupt"], shown  # no "Error in callback", nothing of the cell ran
        assert run(kc, "print('the kernel goes on')") == "the kernel goes on"


def test_after_a_stop_during_the_wait_the_next_cell_still_waits_for_the_warm_up() -> None:
    # a join cut short by KeyboardInterrupt marks the thread ended while it still runs: the
    # next cell must wait all the same (the warm-up made slow, as on a loaded machine)
    with kernel() as kc:
        run(kc, "import lgnb, time, lgnb._warm as warm\n"
                "_warm = warm._warm\n"
                "def _slow():\n    time.sleep(1.5)\n    _warm()\n"
                "warm._warm = _slow")
        time.sleep(0.3)  # the warm-up runs
        reply, _ = stop_during(kc, "print('the cell ran')", 0.3)
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        assert run(kc, BESIDE) == "[]"
