"""Reserved names of the Pregel runtime.

They are the same strings LangGraph uses, because they appear in checkpoints (channel
names, pending-write channels) and in stream output, which lgnb shares with the
`langgraph-checkpoint` ecosystem.
"""

import sys
from typing import Final

START: Final = sys.intern("__start__")
END: Final = sys.intern("__end__")

INPUT: Final = sys.intern("__input__")
INTERRUPT: Final = sys.intern("__interrupt__")
RESUME: Final = sys.intern("__resume__")
ERROR: Final = sys.intern("__error__")
NO_WRITES: Final = sys.intern("__no_writes__")
TASKS: Final = sys.intern("__pregel_tasks")
RETURN: Final = sys.intern("__return__")
# the channel of an entrypoint's previous return value (`previous` in the functional API)
PREVIOUS: Final = sys.intern("__previous__")
PUSH: Final = sys.intern("__pregel_push")
PULL: Final = sys.intern("__pregel_pull")
NS_SEP: Final = sys.intern("|")
NS_END: Final = sys.intern(":")
CONF: Final = "configurable"
NULL_TASK_ID: Final = "00000000-0000-0000-0000-000000000000"
TAG_HIDDEN: Final = sys.intern("langsmith:hidden")
TAG_NOSTREAM: Final = sys.intern("nostream")
ROOT: Final = "__root__"
BRANCH_TO: Final = "branch:to:{}"
# the key of `{"__overwrite__": v}`, the dict form of `Overwrite(v)` for reducer keys
OVERWRITE: Final = sys.intern("__overwrite__")
# `configurable` key holding the durability a caller passed (LangGraph's name; nodes read it)
CONFIG_KEY_DURABILITY: Final = sys.intern("__pregel_durability")

# writes that never reach a channel: they carry control information for the loop
SPECIAL_WRITES: Final = frozenset({NO_WRITES, INTERRUPT, RESUME, ERROR, RETURN, "__error_source_node__"})

# names no channel, managed value or node may take (LangGraph 1.2's `RESERVED`, checked by
# `Pregel.validate`): write keys the loop gives a meaning to, `configurable` keys the runtime
# sets, the task kinds, the namespace separators. START, END and the Send queue `__pregel_tasks`
# are checked apart (`add_node`, `Pregel(...)`), as LangGraph does.
RESERVED: Final = frozenset({
    TAG_HIDDEN,
    # write keys
    INPUT, INTERRUPT, RESUME, ERROR, "__error_source_node__", NO_WRITES, "__snapshot_bumps__",
    # configurable keys
    "__pregel_send", "__pregel_read", "__pregel_checkpointer", "__pregel_stream",
    "checkpoint_map", "__pregel_resuming", "__pregel_replay_state", "__pregel_task_id",
    "checkpoint_id", "checkpoint_ns", "__pregel_timed_attempt_observer", "__pregel_resume_map",
    "__pregel_strict_resume", "__pregel_stream_messages_v2",
    # task kinds, namespace separators, the config key
    PUSH, PULL, NS_SEP, NS_END, CONF,
})

CONFIG_KEY_CHECKPOINTER: Final = sys.intern("__pregel_checkpointer")
"""The `configurable` key that hands a graph (or a state read) its checkpointer."""
