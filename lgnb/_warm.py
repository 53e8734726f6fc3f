"""Warm the notebook views while the user reads: the first `lgnb.run` of a kernel starts fast.

A view needs anywidget and ipywidgets (with IPython about 0.2 s of imports) and the packed
front-end bundle. `import lgnb` leaves them out, so that scripts and engine-only users never
pay for them; but in a notebook kernel the next thing is usually a view. So when lgnb is
imported inside a running Jupyter kernel, this loads the view modules and packs the bundle
in a background thread started just after the importing cell has finished — idle time
between cells — instead of inside the cell that makes the first view.

Never on the kernel's event loop: a warm-up blocking it (about a second on a slow machine)
delayed the next cell's start by that much, and the stop button pressed meanwhile was lost
(ipykernel drops an interrupt while no cell runs), so that cell ran to its end. In a thread
the next cell starts at once; Python's import locks make a cell that imports the same
modules wait for the thread's import of them, not import them twice. Nothing happens outside
a kernel (scripts, tests, marimo).
"""

from __future__ import annotations

import sys
import threading

#: Seconds after the importing cell's code ends: past the kernel's reply to that cell.
DELAY = 0.05


def _warm() -> None:
    try:
        import graphviz  # noqa: F401  (the DOT writer every view uses)

        import lgnb._internal.node_runnable  # noqa: F401  (what get_graph() puts in a node)
        import lgnb.graph._draw  # noqa: F401
        import lgnb.widgets.run_view  # noqa: F401  (anywidget, ipywidgets, the view modules)
        from lgnb.widgets._assets import bundle_payload

        bundle_payload()
    except Exception:  # noqa: BLE001 - only an optimization: the first real view raises the same error itself
        return


def schedule_in_kernel() -> bool:
    """Schedule the warm-up when running inside a Jupyter kernel; returns whether it was."""
    ipython = sys.modules.get("IPython")  # never imported here: a kernel has it already
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    loop.call_later(DELAY, start_warming)
    return True


#: Set once the warm-up ended (done, or given up: the first view then loads what it needs).
WARMED = threading.Event()


def start_warming() -> threading.Thread:
    """Start the warm-up in a daemon thread (a kernel shutting down does not wait for it)."""
    thread = threading.Thread(target=_warmed, name="lgnb-warm-views", daemon=True)
    thread.start()
    return thread


def _warmed() -> None:
    try:
        _warm()
    finally:
        WARMED.set()
