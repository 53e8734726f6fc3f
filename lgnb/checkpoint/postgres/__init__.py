"""PostgreSQL checkpointing: LangGraph's `PostgresSaver`, loading strictly.

The path for teams that outgrow one machine: many kernels and workers share one
database of threads. Imports mirror LangGraph's
(`from lgnb.checkpoint.postgres import PostgresSaver`); requires
`pip install 'lgnb[postgres]'`.

These are LangGraph's savers (`langgraph-checkpoint-postgres`: same tables, same SQL,
same rows, shared freely with LangGraph processes) with one difference: they load
with lgnb's strict serializer, as lgnb's SQLite saver does, so a crafted row never
runs code. `allow_unsafe_deserialization=True` restores LangGraph's permissive
loading (see `PostgresSaver`). And one table more: `setup()` also creates
`lgnb_thread_leases`, which lets runs of many processes take turns on a thread
(`multitask=`, see `lgnb.checkpoint.postgres._lease`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple

from lgnb.checkpoint.postgres._require import require

if TYPE_CHECKING:
    import langgraph.checkpoint.postgres as _pg
else:  # an ImportError that names the extra to install when it is missing
    _pg = require("langgraph.checkpoint.postgres")

from lgnb.checkpoint.postgres._lease import LeaseSetup  # noqa: E402
from lgnb.checkpoint.postgres._stored import PgStoredValue, list_stored, sync_fetch  # noqa: E402
from lgnb.checkpoint.postgres._strict import OPTIONS_DOC, StrictDefault  # noqa: E402

__all__ = ["PostgresSaver", "ShallowPostgresSaver"]


class PostgresSaver(LeaseSetup, StrictDefault, _pg.PostgresSaver):
    __doc__ = (
        "Checkpoints in a PostgreSQL database (LangGraph's `PostgresSaver`).\n"
        + OPTIONS_DOC
    )

    def list_stored(
        self,
        config: RunnableConfig | None,
        *,
        load: Callable[[PgStoredValue], Any],
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
        inline_max: int = 65536,
    ) -> Iterator[CheckpointTuple]:
        """`list()` with each channel value and pending write handed to `load` undecoded
        (its type, size, and bytes when at most `inline_max`; `read()` fetches larger
        ones): an lgnb extra for `lgnb.history`, which decodes only what it shows. Reads
        a page of checkpoints at a time and gives the connection back between pages."""
        return list_stored(self, sync_fetch(self), config, load=load, filter=filter, before=before,
                           limit=limit, inline_max=inline_max)


class ShallowPostgresSaver(LeaseSetup, StrictDefault, _pg.ShallowPostgresSaver):
    __doc__ = (
        "Only the latest checkpoint of each thread, in PostgreSQL (LangGraph's "
        "deprecated `ShallowPostgresSaver`; prefer `PostgresSaver` with "
        "`durability='exit'`).\n" + OPTIONS_DOC
    )
