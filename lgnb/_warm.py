"""Warm the notebook views while the user reads: the first `lgnb.run` of a kernel starts fast.

A view needs anywidget and ipywidgets (with IPython about 0.2 s of imports) and the packed
front-end bundle. `import lgnb` leaves them out, so that scripts and engine-only users never
pay for them; but in a notebook kernel the next thing is usually a view. So when lgnb is
imported inside a running Jupyter kernel, this loads the view modules and packs the bundle
on the kernel's event loop just after the importing cell has finished — idle time between
cells — instead of inside the cell that makes the first view. Nothing happens outside a
kernel (scripts, tests, marimo). A cell started while the warm-up runs waits at most for
the warm-up itself, which it would otherwise have paid in full.
"""

from __future__ import annotations

import sys

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
    loop.call_later(DELAY, _warm)
    return True
