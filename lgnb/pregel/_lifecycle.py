"""Graph lifecycle callbacks: tell `GraphCallbackHandler`s a run resumed or paused.

A (sub)graph run that continues a saved checkpoint (`invoke(None)`, `Command(resume=...)`)
sends `on_resume` once its input is applied; the root run that stops on interrupts (or a
breakpoint) sends `on_interrupt` after its last checkpoint is saved. Only handlers that
subclass `GraphCallbackHandler` are called; a handler that raises is logged and ignored
unless it sets `raise_error = True` (LangChain's rule for callbacks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from lgnb._internal.constants import NS_SEP

if TYPE_CHECKING:
    from lgnb.callbacks import GraphLifecycleStatus
    from lgnb.pregel._loop import Loop

__all__ = ("wants_lifecycle", "on_resume", "aon_resume", "on_interrupt", "aon_interrupt")


def _handlers(loop: Loop) -> list[Any]:
    callbacks = loop.run.callbacks
    if not callbacks:
        return []
    from lgnb.callbacks import GraphCallbackHandler

    handlers = callbacks.handlers if hasattr(callbacks, "handlers") else list(callbacks)
    return [h for h in handlers if isinstance(h, GraphCallbackHandler)]


def wants_lifecycle(loop: Loop) -> bool:
    """Whether any lifecycle handler listens to this run (cheap: no events otherwise)."""
    return bool(loop.run.callbacks) and bool(_handlers(loop))


def _ns(loop: Loop) -> tuple[str, ...]:
    return tuple(loop.ns.split(NS_SEP)) if loop.ns else ()


def _run_id(loop: Loop) -> Any:
    manager = getattr(loop, "run_manager", None)
    return getattr(manager, "run_id", None)


def _status(loop: Loop) -> GraphLifecycleStatus:
    """The loop's status (a str the loop sets only to these values)."""
    return cast("GraphLifecycleStatus", loop.status)


def _resume_event(loop: Loop) -> Any:
    from lgnb.callbacks import GraphResumeEvent

    return GraphResumeEvent(
        run_id=_run_id(loop), status=_status(loop), checkpoint_id=loop.checkpoint_id, checkpoint_ns=_ns(loop)
    )


def _interrupt_event(loop: Loop, exc: BaseException) -> Any:
    from lgnb.callbacks import GraphInterruptEvent

    interrupts = tuple(exc.args[0]) if exc.args and exc.args[0] else ()
    return GraphInterruptEvent(
        run_id=_run_id(loop),
        status=_status(loop),
        checkpoint_id=loop.checkpoint_id,
        checkpoint_ns=_ns(loop),
        interrupts=interrupts,
    )


def on_resume(loop: Loop) -> None:
    from langchain_core.callbacks.manager import handle_event

    handle_event(_handlers(loop), "on_resume", None, _resume_event(loop))


async def aon_resume(loop: Loop) -> None:
    from langchain_core.callbacks.manager import ahandle_event

    await ahandle_event(_handlers(loop), "on_resume", None, _resume_event(loop))


def on_interrupt(loop: Loop, exc: BaseException) -> None:
    from langchain_core.callbacks.manager import handle_event

    handle_event(_handlers(loop), "on_interrupt", None, _interrupt_event(loop, exc))


async def aon_interrupt(loop: Loop, exc: BaseException) -> None:
    from langchain_core.callbacks.manager import ahandle_event

    await ahandle_event(_handlers(loop), "on_interrupt", None, _interrupt_event(loop, exc))
