"""One body for the sync and the async path: a program yields requests, a driver answers.

Code that does I/O (a saver call, a callback, a node) is written once, as a generator
that yields a *request* for each call and receives its result. A request is
`(sync_fn, async_fn, args)` or `(sync_fn, async_fn, args, kwargs)`: `answer` calls the
sync function, `aanswer` awaits the async one. An exception raised by the call is thrown
back into the program, which may handle it; the program's return value is the driver's.
So concurrency limits, error handling and bookkeeping cannot drift apart between
`invoke` and `ainvoke`: the only difference left is the call that was awaited.

`task_program` (a task's life), the trace calls, opening a loop, hydrating delta keys
and reading or updating state are written this way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar, Union

__all__ = ("Request", "Program", "answer", "aanswer", "saver_request")

T = TypeVar("T")

Request = Union[
    tuple[Callable[..., Any] | None, Callable[..., Awaitable[Any]] | None, tuple[Any, ...]],
    tuple[
        Callable[..., Any] | None,
        Callable[..., Awaitable[Any]] | None,
        tuple[Any, ...],
        dict[str, Any],
    ],
]
"""`(sync_fn, async_fn, args[, kwargs])`: what a program asks its driver to call."""

Program = Generator[Request, Any, T]


def answer(program: Program[T]) -> T:
    """Run `program` to its end, calling each request's sync function."""
    reply: Any = None
    error: BaseException | None = None
    while True:
        try:
            try:
                request = program.send(reply) if error is None else program.throw(error)
            finally:
                error = None  # its traceback holds this frame (a cycle, left to the GC)
        except StopIteration as done:
            return done.value
        reply = None
        try:
            fn = request[0]
            reply = fn(*request[2], **request[3]) if len(request) > 3 else fn(*request[2])  # type: ignore[misc]
        except BaseException as e:  # noqa: BLE001 - the program decides what to do with it
            error = e


async def aanswer(program: Program[T]) -> T:
    """Run `program` to its end, awaiting each request's async function."""
    reply: Any = None
    error: BaseException | None = None
    while True:
        try:
            try:
                request = program.send(reply) if error is None else program.throw(error)
            finally:
                error = None  # its traceback holds this frame (a cycle, left to the GC)
        except StopIteration as done:
            return done.value
        reply = None
        try:
            fn = request[1]
            if len(request) > 3:
                reply = await fn(*request[2], **request[3])  # type: ignore[misc]
            else:
                reply = await fn(*request[2])  # type: ignore[misc]
        except BaseException as e:  # noqa: BLE001
            error = e


def saver_request(saver: Any, method: str, *args: Any, **kwargs: Any) -> Request:
    """A request for `saver.<method>(...)` / `saver.a<method>(...)`. `list` is read to the
    end (a saver's open `list()` may hold its connection while it yields)."""
    if method == "list":
        return (_listed, _alisted, (saver, args, kwargs))
    if method == "iter_list":  # read lazily when the saver allows it (see _iter_listed)
        return (_iter_listed, _alisted, (saver, args, kwargs))
    return (getattr(saver, method), getattr(saver, "a" + method, None), args, kwargs)


def _listed(saver: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    return list(saver.list(*args, **kwargs))


def _iter_listed(saver: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """`saver.list(...)` itself when the saver says it releases its connection between
    the items it yields (`lists_lazily`, e.g. lgnb's SqliteSaver): a history's first
    page then costs a page, not the whole thread. Else read to the end."""
    items = saver.list(*args, **kwargs)
    return items if getattr(saver, "lists_lazily", False) is True else list(items)


async def _alisted(saver: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    return [c async for c in saver.alist(*args, **kwargs)]
