"""The state a node reads, without an O(keys) copy per step.

LangGraph gives each node a fresh plain dict of the whole state: the node may keep it
or change it, and neither the state nor any other node sees that. Copying a 20,000-key
state for every step is what made per-step cost grow with the width of the state, so
the loop hands out one `StateInput` per step and *reuses* it at the next step,
bringing only the keys that changed up to date, when — and only when — nobody can
tell the difference:

* no one but the loop and the tasks it gave it to holds a reference to it (CPython's
  reference count: a node that stored it, a `tasks`/`debug` stream chunk the caller
  kept, a tracer that recorded it all hold one, and then a new copy is made), and
* no one changed it: `StateInput` is a `dict` (`isinstance(state, dict)` holds, it
  prints, compares, pickles and serializes as one) whose mutating methods mark it
  dirty before doing their work; a dirty snapshot is never reused.

Within a step only the first whole-state reader gets the shared snapshot; any other
task of that step gets its own plain copy, so tasks running in parallel never share a
dict one of them might change.

A state of fewer than `SHARE_FROM` keys is simply copied for each reader: copying it
costs less than checking whether the snapshot can be reused.

A conditional edge reads the state too, as its task left it: the state with the task's
own writes applied and, as LangGraph does, under the node's output keys
(`{**output, **state}`, so the output's keys come first). `EdgeView` keeps one such dict
per edge and reuses it on the same terms, in steps of one task: the keys written since
are brought up to date, the task's writes laid over them, and the node's output keys,
which fix the dict's order, must be the same as last time.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

__all__ = ("EdgeView", "StateInput", "StateViews")

_getrefcount = sys.getrefcount


def _kept_refcount() -> int:
    """What `sys.getrefcount` says of an object held by one attribute and one local
    variable: the count of a snapshot nobody else holds. Measured at import, not assumed:
    3 on CPython 3.10-3.13 (the attribute, the local, the call's argument), but an
    interpreter that passes the argument without a new reference says 2, and a hard-coded
    3 there would take a snapshot a node kept for one nobody holds."""

    class Holder:
        __slots__ = ("snapshot",)
        snapshot: StateInput

    holder = Holder()
    probe = holder.snapshot = StateInput()
    return _getrefcount(probe)


_set = dict.__setitem__
_pop = dict.pop

SHARE_FROM = 128
"""Number of state keys from which whole-state readers share one snapshot (below it,
each gets a plain copy: `dict(state)` of a few dozen keys costs less than the reuse
checks). Tests set it to 0 to run the sharing on small states."""


class StateInput(dict):
    """A node's copy of the state: a plain dict that remembers whether it was changed."""

    __slots__ = ("dirty",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dirty = False

    def __setitem__(self, key: Any, value: Any) -> None:
        self.dirty = True
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self.dirty = True
        super().__delitem__(key)

    def __ior__(self, other: Any) -> Any:  # type: ignore[misc]
        self.dirty = True
        return super().__ior__(other)

    def pop(self, *args: Any) -> Any:
        self.dirty = True
        return super().pop(*args)

    def popitem(self) -> Any:
        self.dirty = True
        return super().popitem()

    def clear(self) -> None:
        self.dirty = True
        super().clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.dirty = True
        super().update(*args, **kwargs)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self.dirty = True
        return super().setdefault(key, default)

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))  # unpickles as the plain dict it stands for


_KEPT = _kept_refcount()


class StateViews:
    """One loop's whole-state input: the shared snapshot and the keys it lags behind."""

    __slots__ = ("snapshot", "stale", "step", "share_from")

    def __init__(self) -> None:
        self.share_from = SHARE_FROM  # the loop copies states smaller than this
        self.snapshot: StateInput | None = None
        # keys written since the snapshot was brought up to date (the loop adds to it after
        # each apply while there is a snapshot)
        self.stale: set[str] = set()
        self.step = -1  # the step the snapshot was last handed out in

    def read(self, state: dict[str, Any], step: int, tasks: Iterable[Any]) -> dict[str, Any]:
        """The whole state for one task of `step`. `tasks`: tasks that may hold the
        snapshot as their `.input` (the previous step's); each is counted as a known
        reference, so any reference not accounted for forces a fresh copy."""
        if self.step == step:
            return dict(state)  # a second reader in one step: its own copy
        self.step = step
        snap = self._reusable(state, tasks)
        if snap is None:
            snap = self.snapshot = StateInput(state)
            self.stale = set()
        return snap

    def _reusable(self, state: dict[str, Any], tasks: Iterable[Any]) -> StateInput | None:
        snap = self.snapshot
        if snap is None or snap.dirty:
            return None
        held = 0
        for t in tasks:
            if t.input is snap:
                held += 1
        # references: self.snapshot, `snap` (`_KEPT`), and the tasks'
        if _getrefcount(snap) != _KEPT + held:
            return None
        for k in self.stale:
            if k in state:
                if k not in snap:
                    return None  # a new key: a copy keeps the state's key order
                _set(snap, k, state[k])
            else:
                _pop(snap, k, None)
        self.stale = set()
        return snap


class EdgeView:
    """One conditional edge's reusable input within one loop (see the module doc).

    `reads`: the state keys the edge reads. The caller lays the task's writes over the
    snapshot `reusable` returns and adds their keys to `stale` (the state catches up
    after the step)."""

    __slots__ = ("snapshot", "stale", "out_keys", "reads")

    def __init__(self, reads: frozenset[str]) -> None:
        self.reads = reads
        self.snapshot: StateInput | None = None
        self.stale: set[str] = set()  # keys whose value in the snapshot may be out of date
        self.out_keys: tuple[Any, ...] | None = None  # the node output's keys, in order

    def keep(self, value: dict[str, Any], out_keys: tuple[Any, ...] | None,
             written: Iterable[str]) -> StateInput:
        """`value` (built in full) as the snapshot to reuse."""
        snap = self.snapshot = StateInput(value)
        self.out_keys = out_keys
        self.stale = set(written)
        return snap

    def reusable(self, state: dict[str, Any], out_keys: tuple[Any, ...] | None) -> StateInput | None:
        """The snapshot with the state's keys brought up to date, or None when it cannot
        be reused: changed, still referenced elsewhere, a key added to the state (its
        place in the order would differ), or other output keys (they come first)."""
        snap = self.snapshot
        if snap is None or snap.dirty or out_keys != self.out_keys:
            return None
        # references: self.snapshot and `snap` (`_KEPT`)
        if _getrefcount(snap) != _KEPT:
            return None
        reads = self.reads
        for k in self.stale:
            if k not in reads:
                continue
            if k in state:
                if k not in snap:
                    return None
                _set(snap, k, state[k])
            elif out_keys is not None and k in out_keys:
                return None  # its place and value are the output's: build it again
            else:
                _pop(snap, k, None)
        self.stale = set()
        return snap
