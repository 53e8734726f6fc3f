"""`interrupt()`: raise on first call, return the resume value when the node re-runs."""

from __future__ import annotations

from typing import Any

from lgnb._internal.constants import RESUME
from lgnb._internal.context import current_task
from lgnb._internal.ids import interrupt_id
from lgnb.channels.base import MISSING
from lgnb.errors import GraphInterrupt, mark_invalid_resume
from lgnb.types import Interrupt

__all__ = ("interrupt",)


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """See `lgnb.types.interrupt`."""
    ctx = current_task()
    task = ctx.task
    loop = ctx.loop
    if ctx.resume is None:
        ctx.resume, _ = loop.resume_for(task)
    idx = ctx.interrupt_index
    ctx.interrupt_index += 1
    adapter = _adapter(response_schema)
    if adapter is not None:
        from lgnb.graph._allowlist import allow_response_schema

        allow_response_schema(loop, response_schema)
    answers = ctx.resume
    if idx < len(answers):
        validated = _validate(adapter, answers[idx])  # an invalid answer is not recorded
        task.writes.append((RESUME, answers[: idx + 1]))
        return validated
    value_null = loop.peek_null_resume()
    if value_null is not MISSING:
        validated = _validate(adapter, value_null)  # an invalid answer is not consumed
        loop.take_null_resume()
        answers.append(value_null)
        task.writes.append((RESUME, list(answers)))
        return validated
    schema = None
    if response_schema is not None:
        schema = response_schema if isinstance(response_schema, dict) else adapter.json_schema()
    raise GraphInterrupt(
        (Interrupt(value=value, id=interrupt_id(task.ns, len(answers)), response_schema=schema),)
    )


def _adapter(schema: Any) -> Any:
    if schema is None or isinstance(schema, dict):
        return None
    from pydantic import TypeAdapter

    return TypeAdapter(schema)


def _validate(adapter: Any, value: Any) -> Any:
    """The resume value checked against `response_schema`; a failure is flagged so that
    `lgnb.errors.is_invalid_resume` tells it from other validation errors."""
    if adapter is None:
        return value
    from pydantic import ValidationError

    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        mark_invalid_resume(exc)
        raise
