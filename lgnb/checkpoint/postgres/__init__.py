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

from typing import TYPE_CHECKING

from lgnb.checkpoint.postgres._require import require

if TYPE_CHECKING:
    import langgraph.checkpoint.postgres as _pg
else:  # an ImportError that names the extra to install when it is missing
    _pg = require("langgraph.checkpoint.postgres")

from lgnb.checkpoint.postgres._joined import JoinedLists  # noqa: E402
from lgnb.checkpoint.postgres._lease import LeaseSetup  # noqa: E402
from lgnb.checkpoint.postgres._stored import ListStored  # noqa: E402
from lgnb.checkpoint.postgres._strict import OPTIONS_DOC, StrictDefault  # noqa: E402

__all__ = ["PostgresSaver", "ShallowPostgresSaver"]


class PostgresSaver(JoinedLists, ListStored, LeaseSetup, StrictDefault, _pg.PostgresSaver):
    __doc__ = (
        "Checkpoints in a PostgreSQL database (LangGraph's `PostgresSaver`).\n"
        + OPTIONS_DOC
    )


class ShallowPostgresSaver(LeaseSetup, StrictDefault, _pg.ShallowPostgresSaver):
    __doc__ = (
        "Only the latest checkpoint of each thread, in PostgreSQL (LangGraph's "
        "deprecated `ShallowPostgresSaver`; prefer `PostgresSaver` with "
        "`durability='exit'`).\n" + OPTIONS_DOC
    )
