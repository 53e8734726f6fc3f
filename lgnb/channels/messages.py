"""MessagesChannel: an `add_messages` key whose step costs O(new messages), not O(history).

`BinaryOperatorAggregate(list, add_messages)` rebuilds an id -> position map of the
whole conversation on every write, and a conditional edge's fresh read (a copy of the
channel with the node's writes applied) does it again. This channel gives exactly the
same values — it runs `add_messages`' merge rules write by write — but keeps the id
index between steps:

* the *owner* (the loop's channel, or one restored from a checkpoint) keeps a dict
  from id to position and adds to it as messages are appended; replacing a message in
  place keeps its position; a removal compacts the list and drops the index, which is
  rebuilt on the next write (a removal is O(history) in LangGraph too);
* a conditional edge's fresh read of the common update (plain messages, what nodes
  return) asks the owner for `value_after(update)`: the new list, computed with the
  owner's index and a small dict of its own, the owner left as it is; anything else
  takes a `copy()`, which *borrows* the owner's dict without copying it: it trusts
  only entries below the length the list had when it was copied (the owner appends
  after that, never rewrites what was there) and keeps its own small dict for what it
  appends itself.

Each write still gives a list nobody else holds, as LangGraph's new list does, so a
value already handed out (node input, a streamed `values` chunk, a checkpoint) never
changes afterwards. For a long history (`REUSE_FROM` messages and more) that list is
not always a fresh copy: the write adopts the list a conditional edge's fresh read
built (when the edge left it alone), or grows in place the list the previous write
replaced, once its reference count shows nobody holds it any more (`_reused`).
Only the `format=None` reducer uses this channel: `format="langchain-openai"`
rewrites the whole list on every call in LangGraph, so it keeps the plain reducer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Self

from lgnb.channels.base import MISSING
from lgnb.channels.binop import BinaryOperatorAggregate, as_overwrite, second_overwrite

__all__ = ("MessagesChannel", "is_plain_add_messages")


def is_plain_add_messages(reducer: Callable[..., Any]) -> bool:
    """True for lgnb's `add_messages` used with its default `format=None`
    (`add_messages` itself, or `add_messages()` / `add_messages(format=None)`)."""
    module = getattr(reducer, "__module__", None)
    func = getattr(reducer, "func", None)
    if module != "lgnb.graph.message" and getattr(func, "__module__", None) != "lgnb.graph.message":
        return False
    from lgnb.graph import message

    if reducer is message.add_messages:
        return True
    return (
        func is message._merge
        and not getattr(reducer, "args", ())
        and not (getattr(reducer, "keywords", None) or {}).get("format")
    )


_REDUCER: Any = None


def _reducer() -> Any:
    """lgnb.graph.message (the reducer's rules), imported on first use: the graph package
    imports the channels, not the other way round. Kept in a global, since a function-level
    `from ... import` costs a failed `__path__` lookup through that module's `__getattr__`
    on every call — on every write of a conversation."""
    global _REDUCER
    if _REDUCER is None:
        from lgnb.graph import message

        _REDUCER = message
    return _REDUCER


def _local_refcount() -> int:
    """What `sys.getrefcount` says of a list only a local variable refers to, on this
    interpreter (3.11 counts the variable and the call's argument; others may not)."""
    probe: list = []
    return _getrefcount(probe)


def _boxed_refcount() -> int:
    """What `sys.getrefcount` says of a list a local variable and one tuple refer to (a
    `value_after` record, unpacked in `_adopt`)."""
    probe: list = []
    box = (probe,)  # noqa: F841 - the second reference is the point
    return _getrefcount(probe)


REUSE_FROM = 256
"""Histories shorter than this are copied: below ~256 messages a copy costs no more than
checking that a retired list can be reused (measured on CPython 3.11)."""

_getrefcount = sys.getrefcount
_ONLY_LOCAL = _local_refcount()
_ONLY_BOXED = _boxed_refcount()

_APPENDABLE: dict[type, bool] = {}
"""Message classes `_appended` takes, by class (filled as they are met)."""


def _appendable(cls: type) -> bool:
    m = _reducer()
    return m._is_plain_message_type(cls) and not issubclass(cls, m.RemoveMessage)


class MessagesChannel(BinaryOperatorAggregate):
    """A `messages: Annotated[list, add_messages]` key that keeps its id index.

    Values, errors and the ids given to messages are those of `add_messages`
    (lgnb.graph.message); only the cost per write changes: O(len(update)) plus one
    list copy, instead of re-indexing the history.
    """

    __slots__ = ("_own", "_shared", "_base", "_fresh", "_spare", "_seen", "_fixed", "_lineage")

    def __init__(self, typ: Any, operator: Callable[[Any, Any], Any], key: str = "") -> None:
        super().__init__(typ, operator, key)
        self._reset_index()

    def _reset_index(self) -> None:
        # _own: id -> position this channel writes (None: rebuild before the next merge);
        # _shared: an owner's dict borrowed read-only, trusted for positions < _base.
        self._own: dict[Any, int] | None = None
        self._shared: dict[Any, int] | None = None
        self._base = 0
        # _fresh: (update, value it was applied to, new list, positions appended) of the
        # last `value_after`, which the next `update` of that same write may adopt
        self._fresh: tuple[Any, list, list, dict[Any, int]] | None = None
        # _spare: the list this channel's value was before the last common write, in a
        # one-item box (taken with an atomic `pop`: two edges may read at once);
        # _fixed: the positions that write replaced (the spare still has the old ones)
        self._spare: list[list] = []
        self._fixed: list[int] = []
        # _seen: what the value held when `_own` last matched it, kept up to date by this
        # channel's own writes. The value is handed out (node input, `values` chunks) and
        # user code may change that list in place, as in LangGraph, where the next
        # `add_messages` sees the change: a value no longer equal to `_seen` is
        # re-indexed first. None: nothing to check (no index, or a copy checked when made)
        self._seen: list | None = None
        self._lineage = object()

    @property
    def lineage(self) -> object:
        """A token that stays the same object while the value only grows: as long as it
        does, the first `n` messages of the value carry the ids that the first `n` of any
        earlier value of the same lineage carried (its `n` messages). Messages are
        appended, or replaced by one with the same id; anything else (a removal, an
        `Overwrite`, `REMOVE_ALL_MESSAGES`, a value restored or re-indexed after user code
        changed it in place) starts a new lineage. The `messages` stream reads it to mark
        only the messages a node's input gained since it last looked (`_messages.py`)."""
        return self._lineage

    def copy(self) -> Self:
        self._check()
        new = self.__class__.__new__(self.__class__)
        new.typ, new.key, new.operator, new.value = self.typ, self.key, self.operator, self.value
        new._fresh = None
        new._spare = []
        new._fixed = []
        new._seen = None  # checked just now; a copy is updated at once (a fresh read)
        new._lineage = object()
        if self._own is None:
            new._own, new._shared, new._base = None, None, 0
        elif self._shared is None:
            # borrow this owner's dict: it only ever grows past len(self.value)
            new._own, new._shared, new._base = {}, self._own, len(self.value)
        else:
            new._own, new._shared, new._base = dict(self._own), self._shared, self._base
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = super().from_checkpoint(checkpoint)
        new._reset_index()
        return new

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if self.value is MISSING:
            self.value = values[0]
            self._reset_index()
            values = values[1:]
        fresh, self._fresh = self._fresh, None
        if fresh is not None and len(values) == 1 and values[0] is fresh[0]:
            merged = self._adopt(fresh)
            if merged is not None:
                self._retire(merged)
                return True
        seen_overwrite = False
        for value in values:
            if not seen_overwrite and self._own is not None:
                merged = self._appended(value, None)  # the common update
                if merged is not None:
                    self._retire(merged)
                    continue
            is_overwrite, new_value = as_overwrite(value)
            if is_overwrite:
                if seen_overwrite:
                    raise second_overwrite(self.key)
                self.value = new_value
                self._reset_index()
                seen_overwrite = True
            elif not seen_overwrite:
                try:
                    self._merge(value)
                except BaseException:
                    self._reset_index()  # a half-applied write may have indexed ids
                    raise
        return True

    # ------------------------------------------------------------------ merge
    def _check(self) -> None:
        """Re-index a value user code changed in place since this channel's last write
        (a message appended to a node's input list, one removed or replaced): the index
        would put the next write's messages at wrong places. Costs one pointer
        comparison per message when nothing changed."""
        seen = self._seen
        if seen is not None and self.value != seen:
            self._fresh = None
            self._spare = []
            self._rebuild()

    def _rebuild(self) -> list:
        m = _reducer()
        current = m._as_message_list(self.value)
        for msg in current:
            if msg.id is None:
                msg.id = m._new_id()
        self.value = current
        self._own = {msg.id: pos for pos, msg in enumerate(current)}
        self._shared = None
        self._seen = list(current)
        self._lineage = object()
        return current

    def _find(self, mid: Any) -> int | None:
        pos = self._own.get(mid)  # type: ignore[union-attr]
        if pos is None and self._shared is not None:
            pos = self._shared.get(mid)
            if pos is not None and pos >= self._base:
                return None  # the owner appended it after this copy was made
        return pos

    def value_after(self, update: Any) -> list | None:
        """The value one write of `update` would give, this channel left as it is (a
        conditional edge's fresh read, without copying the channel); None when
        `update` is not the common case: copy the channel and `update` the copy.

        A long new list (`REUSE_FROM` messages or more) is remembered: when the step's
        only write to this channel is that same `update`, `update()` takes the list
        instead of building it again (one copy of the history per step instead of two,
        none once retired lists are reused), unless the conditional edge changed it
        — LangGraph's edge reads a list of its own, so a change there must not reach
        the state."""
        if self._own is None or self.value is MISSING:
            return None
        record: dict[Any, int] = {}
        merged = self._appended(update, record)
        if merged is not None and len(merged) >= REUSE_FROM:  # a short list: copy again
            self._fresh = (update, self.value, merged, record)
        return merged

    def _adopt(self, fresh: tuple[Any, list, list, dict[Any, int]]) -> list | None:
        """`fresh`'s list if it is still exactly the value the write gives: nothing
        written here since, every message of the update appended (none replaced), the
        list as `value_after` returned it, and nobody holding it any more (its reference
        count: a router that kept the state it read, or passed its list in a `Send`,
        holds it, and may change it later; LangGraph's state never shares the list its
        edge read). Checking costs one pointer comparison per message of the history (no
        reference counts touched), a copy costs two."""
        update, base, merged, record = fresh
        own = self._own
        if own is None or self.value is not base or _getrefcount(merged) != _ONLY_BOXED:
            return None
        n = len(base)
        tail = merged[n:]
        added = update if type(update) is list else [update]
        if len(tail) != len(added) or len(record) != len(added):
            return None  # a message replaced, an id given twice, or the list changed size
        for got, msg in zip(tail, added):
            if got is not msg:
                return None
        del merged[n:]  # compare the history part without copying it...
        try:
            same = merged == base
        finally:
            merged.extend(tail)  # ...and put the new messages back
        if not same:
            return None
        own.update(record)
        if self._seen is not None:
            self._seen.extend(tail)
        self._fixed = []
        return merged

    def _retire(self, merged: list) -> None:
        """`merged` becomes the value; a long old list is kept to be reused (`_reused`)."""
        old, self.value = self.value, merged
        if type(old) is list and len(old) >= REUSE_FROM:
            self._spare = [old]
        elif self._spare:
            self._spare = []

    def _reused(self) -> list | None:
        """The retired list brought up to the current value, when nothing but this
        channel holds it any more — so it can grow in place instead of the history
        being copied (and the old list freed) on every write. Its reference count
        proves nobody else can see the change; comparing it with the value (one pointer
        comparison per message, no reference counts touched) proves nobody changed it
        while they held it. Otherwise None: copy."""
        box = self._spare
        if not box:
            return None
        try:
            spare = box.pop()
        except IndexError:  # another edge's read took it first
            return None
        if _getrefcount(spare) != _ONLY_LOCAL:
            return None
        value = self.value
        seen = self._seen
        made = value if seen is None else seen  # what this channel made the value
        n = len(spare)
        if type(value) is not list or n > len(made):
            return None
        for pos in self._fixed:  # the messages the last write replaced: the new objects
            if pos < n:
                spare[pos] = made[pos]
        spare.extend(made[n:])
        # one comparison proves both that nobody changed the spare while they held it and
        # that nobody changed the value in place since the last write (`_check`)
        return spare if spare == value else None

    def _appended(self, update: list, record: dict[Any, int] | None) -> list | None:
        """The new list when `update` holds only ready-made messages (no chunk, dict
        or `RemoveMessage`) and the index is built, else None: each message replaces
        the one with its id or is appended (its position noted in `record`, or in the
        index when `record` is None: this channel's own write); one without an id gets
        a new one, in place, as `add_messages` does."""
        if type(update) is not list:
            update = [update]  # a node's single message
        elif not update:
            return None
        kinds = _APPENDABLE
        for msg in update:
            ok = kinds.get(type(msg))
            if ok is None:
                ok = kinds[type(msg)] = _appendable(type(msg))
            if not ok:
                return None
        merged = self._reused()
        if merged is None:  # no spare, or it failed its comparison: check, then copy
            self._check()
            merged = list(self.value)
        own = self._own
        assert own is not None
        local = record is not None  # positions appended here are in `record` only
        if record is None:
            record = own
        seen = None if local else self._seen
        fixed: list[int] = []
        shared, base = self._shared, self._base
        new_id = None
        for msg in update:
            mid = msg.id
            if mid is None:
                if new_id is None:
                    new_id = _reducer()._new_id
                mid = msg.id = new_id()
                pos = None
            else:  # `record`, then `_find`'s lookups, inline
                pos = record.get(mid)
                if pos is None and local:
                    pos = own.get(mid)
                if pos is None and shared is not None:
                    pos = shared.get(mid)
                    if pos is not None and pos >= base:
                        pos = None  # the owner appended it after this copy was made
            if pos is None:
                record[mid] = len(merged)
                merged.append(msg)
                if seen is not None:
                    seen.append(msg)
            else:
                merged[pos] = msg
                fixed.append(pos)
                if seen is not None:
                    seen[pos] = msg
        if not local:
            self._fixed = fixed
        return merged

    def _merge(self, right: Any) -> None:
        """`self.value = add_messages(self.value, right)`, in O(len(right))."""

        m = _reducer()
        if self._own is not None:
            self._check()
        update = m._as_message_list(right)
        for msg in update:
            if msg.id is None:
                msg.id = m._new_id()
        cut = m._remove_all_cut(update)
        if cut >= 0:
            self.value = update[cut + 1 :]
            self._reset_index()
            return
        current = self.value if self._own is not None else self._rebuild()
        own = self._own
        assert own is not None
        merged, removed = m.merge_by_id(list(current), update, self._find, own.__setitem__)
        if removed:
            self._reset_index()
        elif self._seen is not None:
            self._seen = list(merged)
        self._spare, self._fixed = [], []
        self.value = merged
