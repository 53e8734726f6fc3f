"""Warm the notebook views while the user reads: the first `lgnb.run` of a kernel starts fast.

A view needs anywidget and ipywidgets (with IPython about 0.2 s of imports) and the packed
front-end bundle. `import lgnb` leaves them out, so that scripts and engine-only users never
pay for them; but in a notebook kernel the next thing is usually a view. So when lgnb is
imported inside a running Jupyter kernel, this loads the view modules and packs the bundle
in a background thread, in the idle time after the importing cell — instead of inside the
cell that makes the first view.

Never on the kernel's event loop: a warm-up blocking it (about a second on a slow machine)
delayed the next cell's start by that much, and the stop button pressed meanwhile was lost
(ipykernel drops an interrupt while no cell runs), so that cell ran to its end.

Never while code of the user runs either. Two threads importing modules that import each
other (langchain-core has such cycles) can be handed a half-initialized module by Python's
import deadlock detection: a graph run in the cell right after `import lgnb` failed with
"partially initialized module 'langchain_core.runnables.config' has no attribute ...". So
the warm-up runs only between executions: it starts `DELAY` after the last one ended
(IPython's `post_execute`, which also ends a comm message's handling), not at all while one
runs (a cell that awaits hands the event loop the timer, which then waits for the cell's
end), and an execution that starts while it runs first waits for it to end (`pre_execute`;
it takes a fraction of a second; the stop button pressed meanwhile stops that cell, before
its first line). Nothing happens outside a kernel (scripts, tests, marimo).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

#: Seconds after an execution ends before the warm-up starts: past the kernel's reply.
DELAY = 0.05

#: Set once the warm-up ended (done, or given up: the first view then loads what it needs).
WARMED = threading.Event()


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


def _warmed() -> None:
    try:
        _warm()
    finally:
        WARMED.set()


def start_warming() -> threading.Thread:
    """Start the warm-up in a daemon thread (a kernel shutting down does not wait for it)."""
    thread = threading.Thread(target=_warmed, name="lgnb-warm-views", daemon=True)
    thread.start()
    return thread


class _Scheduler:
    """The warm-up's place between a kernel's executions (cells, comm messages), driven by
    IPython's `pre_execute` / `post_execute` events: on the kernel's main thread, and on a
    subshell's thread for that subshell's cells (ipykernel 7), which count as executions too."""

    def __init__(self, shell: Any, loop: Any) -> None:
        self.shell = shell
        self.loop = loop
        self.running = 1  # executions under way on the main thread: `import lgnb` runs inside one
        self.elsewhere = 0  # ... on other threads (subshells)
        self.lock = threading.Lock()  # (for `elsewhere`)
        self.timer: Any = None
        self.thread: threading.Thread | None = None
        self.stopped = False  # the stop button was pressed while an execution waited for the warm-up
        self.stopper: Any = None  # the AST transformer that stops the cell that waited
        shell.events.register("pre_execute", self.pre_execute)
        shell.events.register("pre_run_cell", self.pre_run_cell)
        shell.events.register("post_execute", self.post_execute)

    def pre_execute(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            with self.lock:
                self.elsewhere += 1
            if self.thread is not None:  # (a subshell's cell: it waits; a stop is IPython's to report)
                WARMED.wait()
            return
        self.running += 1
        if self.timer is not None:
            self.timer.cancel()  # re-armed when this execution ends
            self.timer = None
        if self.thread is not None:
            try:
                # (an Event, not `Thread.join`: a join a KeyboardInterrupt cuts short marks
                # the thread ended while it still runs, and the next cell would not wait)
                WARMED.wait()
            except KeyboardInterrupt:
                # IPython reports an error in an event hook and runs the cell anyway: the
                # cell itself is made to raise it (`pre_run_cell`), as if stopped as it began
                self.stopped = True
                return
            self._done()

    def pre_run_cell(self, info: Any = None) -> None:
        if self.stopped and self.stopper is None and threading.current_thread() is threading.main_thread():
            self.stopper = _StopFirst()
            self.shell.ast_transformers.append(self.stopper)

    def post_execute(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            with self.lock:
                self.elsewhere = max(0, self.elsewhere - 1)
                idle = not self.elsewhere
            if idle:
                self.loop.call_soon_threadsafe(self._arm)
            return
        self.stopped = False
        if self.stopper is not None:
            if self.stopper in self.shell.ast_transformers:
                self.shell.ast_transformers.remove(self.stopper)
            self.stopper = None
        self.running = max(0, self.running - 1)
        self._arm()

    def _busy(self) -> bool:
        with self.lock:
            return bool(self.running or self.elsewhere)

    def _arm(self) -> None:
        """Start the warm-up `DELAY` from now, unless something runs or it has started."""
        if not self._busy() and self.thread is None and self.timer is None and not WARMED.is_set():
            self.timer = self.loop.call_later(DELAY, self._fire)

    def _fire(self) -> None:
        self.timer = None
        if self._busy() or self.thread is not None:
            return  # (a cell that awaited handed the loop this timer: its end re-arms it)
        if "lgnb.widgets.run_view" in sys.modules:
            # a view was made already: its modules are loaded, and a run it started may
            # import lazily on this thread between executions, so nothing is imported beside it
            WARMED.set()
            self._done()
            return
        self.thread = start_warming()

    def _done(self) -> None:
        for event, hook in (("pre_execute", self.pre_execute), ("pre_run_cell", self.pre_run_cell),
                            ("post_execute", self.post_execute)):
            try:
                self.shell.events.unregister(event, hook)
            except ValueError:
                pass
        global _scheduler
        _scheduler = None


class _StopFirst:
    """An IPython AST transformer making a cell raise KeyboardInterrupt before its first line."""

    def visit(self, node: Any) -> Any:
        import ast

        stop = ast.Raise(exc=ast.Name(id="KeyboardInterrupt", ctx=ast.Load()), cause=None)
        node.body.insert(0, ast.copy_location(stop, node.body[0]) if node.body else stop)
        return ast.fix_missing_locations(node)


_scheduler: _Scheduler | None = None


def schedule_in_kernel() -> bool:
    """Schedule the warm-up when running inside a Jupyter kernel; returns whether it was."""
    global _scheduler
    ipython = sys.modules.get("IPython")  # never imported here: a kernel has it already
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "kernel", None) is None or getattr(shell, "events", None) is None:
        return False
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    if _scheduler is None and not WARMED.is_set():
        _scheduler = _Scheduler(shell, loop)
    return True
