"""The kernel↔page protocol of lgnb's views, written down once.

Every lgnb view is an anywidget whose page half is the bundle built from ``js/src``. The two
halves talk in two ways: synced traits (state the page draws, e.g. ``status``, ``forms``)
and *custom messages* (``model.send`` / ``View.send``), each a JSON object with a string
``kind``. This module types every custom message and every content patch (``TypedDict``s,
as anywidget's own ``_protocols.py`` does); ``js/src/protocol.js`` is its page-side twin
and points here. Change one, change the other, and bump :data:`PROTOCOL_VERSION`.

Version
-------
Every view syncs ``_protocol`` (:data:`PROTOCOL_VERSION`). The page compares it with the
version its bundle was built for and, on a mismatch, draws only::

    lgnb front end v<N>, kernel v<M>: restart the kernel / rebuild

(a stale bundle, or a notebook page left open across an upgrade), never a half-working view.

Kernel → page (custom messages)
-------------------------------
``patches``        {id, t, patches: [Patch]}  a batch of content patches (run view)
``snapshot``       {id, snapshot: Snapshot}   the whole content, e.g. for a page that said hello
``resume-result``  {id, ok, interrupt_id?, error?, errors?, stale?, held?, summary?}
``fork-result`` / ``replay-result`` / ``load-older-result`` / ``expand-result``
                   {request, ok, error?, ...}  answers of the history view
``lgnb_bundle``    {hash, bundle}             the front end (base64), to a page that asked

Page → kernel (custom messages)
-------------------------------
run view: ``hello``, ``cancel``, ``answer``, ``send_held``, ``resume``, ``continue`` (past a
static breakpoint); graph view: ``toggle``;
history view: ``select``, ``compare``, ``refresh``, ``expand``, ``collapse``, ``load_older``,
``fork``, ``replay``; lens view: ``step``, ``run``, ``reset``, ``whatif``, ``resume``;
inbox view: ``open`` (a thread), ``page`` (``to``: next / previous), ``refresh``; any view:
``lgnb_bundle`` (the page has no copy of the front end: the view sends one, as a message,
so it stays out of the saved widget state).
A view calls ``_msg_<kind>``; a kind it has no handler for is logged and ignored.

Content patches (run view)
--------------------------
The kernel turns stream chunks into patches (``_stream``), applies them to its own
:class:`~lgnb.widgets._store.ContentStore` and sends them; the page applies the same
patches with ``js/src/store.js``. Both reducers follow these rules, and the fixture
sequences in ``tests/fixtures/protocol/`` are replayed by both to the same state:

- Every patch has ``kind``, ``id`` and ``seq`` (increasing). A patch whose ``seq`` is not
  above the store's is already applied (a snapshot covered it) and is skipped.
- An unknown ``kind`` (a newer kernel) or a patch without ``id`` is skipped with a warning
  (Python: the ``lgnb.widgets`` logger; page: ``console.warn``); its ``seq`` still counts.
- A missing optional field takes its default: text and args ``""``, tool-call ``index`` 0
  (the kernel already numbers a provider's missing index as 0), ``name`` null.
- ``msg.final`` replaces content / tool calls only when it carries them (not null).
- Rows of ``log``, ``updates`` and ``errors`` are the patch without its ``kind``; ``log``
  and ``updates`` keep the latest ``caps[name]`` rows and count the rest in ``dropped``.
- A snapshot replaces everything (the page re-bounds its lists with its caps).
"""

# (no `from __future__ import annotations`: TypedDict reads NotRequired from real
# annotations; the tests check recorded traffic against these classes at runtime)
from typing import Any, Literal, TypedDict, Union

from typing_extensions import NotRequired

#: Bumped on any change a page of another version would misread.
PROTOCOL_VERSION = 1

#: The text a view shows instead of itself when the two halves disagree.
MISMATCH = "lgnb front end v{page}, kernel v{kernel}: restart the kernel / rebuild"


def mismatch_message(*, page: object, kernel: object = PROTOCOL_VERSION) -> str:
    """What the page says when its protocol version `page` is not the kernel's."""
    return MISMATCH.format(page=page, kernel=kernel)


# -- content patches -------------------------------------------------------------------
class ToolCall(TypedDict):
    index: int
    id: str | None
    name: str
    args: str  # JSON text as streamed (may be partial until msg.final)


class MsgNew(TypedDict):
    """Create (or replace) a message bubble."""
    kind: Literal["msg.new"]
    id: str
    seq: int
    node: str
    ns: str
    type: str  # "ai", "human", "tool", "system", ...
    content: str
    tool_calls: list[ToolCall]
    name: NotRequired[str | None]
    #: the node key as shown when it runs inside one of several parallel tasks of a root
    #: node (a subgraph per `Send`): "interview #2:ask"
    task: NotRequired[str]


class MsgDelta(TypedDict):
    """Append streamed text to a bubble."""
    kind: Literal["msg.delta"]
    id: str
    seq: int
    text: str


class ToolDelta(TypedDict):
    """Append streamed arguments to tool call `index` of a bubble (created if new)."""
    kind: Literal["tool.delta"]
    id: str
    seq: int
    index: int
    args: str
    name: NotRequired[str | None]  # a provider names the tool in its first chunk only
    call_id: NotRequired[str | None]


class MsgFinal(TypedDict):
    """The finished message: replaces streamed content and tool calls when present."""
    kind: Literal["msg.final"]
    id: str
    seq: int
    content: NotRequired[str]
    tool_calls: NotRequired[list[ToolCall]]


class Progress(TypedDict):
    """Set progress bar `id` (one per namespace, node and stage; with lgnb's engine, one per
    task of a node run as several in a step, its `label` naming it "worker #2") to `value`
    in [0, 1]."""
    kind: Literal["progress"]
    id: str
    seq: int
    node: str
    ns: str
    stage: str
    label: str
    value: float


class Log(TypedDict):
    """A custom event (``get_stream_writer()`` payload), or a note of the view's own."""
    kind: Literal["log"]
    id: str | int
    seq: int
    node: str
    ns: str
    payload: Any
    step: NotRequired[int]  # with node "": the stream does not say which node wrote it (root step)
    task: NotRequired[str]  # the writing task, when its node runs as several in the step: "worker #2"


class Update(TypedDict):
    """A node's state delta in one step (folded to a bounded size by `_panel.fold`)."""
    kind: Literal["update"]
    id: int
    seq: int
    step: int
    node: str
    ns: str
    delta: Any
    task: NotRequired[str]  # as in MsgNew


class Error(TypedDict):
    """A node's (or the run's) failure."""
    kind: Literal["error"]
    id: str
    seq: int
    node: str
    ns: str
    type: str
    message: str


Patch = Union[MsgNew, MsgDelta, ToolDelta, MsgFinal, Progress, Log, Update, Error]

#: Every patch kind, in the order of the docs above.
PATCH_KINDS: tuple[str, ...] = ("msg.new", "msg.delta", "tool.delta", "msg.final", "progress", "log", "update",
                                "error")


class Message(TypedDict):
    """A bubble in a snapshot: `content` joined, `final` once msg.final arrived."""
    id: str
    node: str
    ns: str
    type: str
    name: str | None
    content: str
    tool_calls: list[ToolCall]
    final: NotRequired[bool]


class Dropped(TypedDict):
    log: int
    updates: int


class Snapshot(TypedDict):
    """The whole content of a run view (``ContentStore.snapshot()``, store.js ``snapshot()``)."""
    seq: int
    messages: list[Message]
    progress: list[dict[str, Any]]  # Progress without kind and seq
    log: list[dict[str, Any]]  # Log without kind
    updates: list[dict[str, Any]]  # Update without kind
    errors: list[dict[str, Any]]  # Error without kind
    dropped: Dropped


class Caps(TypedDict):
    """Rows kept per bounded list (the run view's ``caps`` trait)."""
    log: int
    updates: int


# -- kernel → page ---------------------------------------------------------------------
class PatchesMessage(TypedDict):
    kind: Literal["patches"]
    id: int  # batch number
    t: float  # kernel time of sending (benchmarks)
    patches: list[Patch]


class SnapshotMessage(TypedDict):
    kind: Literal["snapshot"]
    id: int
    snapshot: Snapshot


class ResumeResult(TypedDict):
    kind: Literal["resume-result"]
    id: Any  # the request id the page sent
    ok: bool
    interrupt_id: NotRequired[str | None]
    error: NotRequired[str]
    errors: NotRequired[dict[str, str]]  # "<part>.<input>" → message
    stale: NotRequired[bool]
    held: NotRequired[bool]
    summary: NotRequired[str]


class HistoryResult(TypedDict):
    kind: Literal["fork-result", "replay-result", "load-older-result", "expand-result"]
    request: Any
    ok: bool
    error: NotRequired[str]
    checkpoint: NotRequired[str]  # fork-result
    thread: NotRequired[str]  # replay-result
    added: NotRequired[int]  # load-older-result


class BundleMessage(TypedDict):
    kind: Literal["lgnb_bundle"]
    hash: str  # sha256 of the bundle: the page caches it under this name
    bundle: str  # the front end's ESM bundle, base64


ToPage = Union[PatchesMessage, SnapshotMessage, ResumeResult, HistoryResult, BundleMessage]


# -- page → kernel ---------------------------------------------------------------------
class Bare(TypedDict):
    """hello, cancel (run); refresh, collapse (history, inbox); step, run, reset (lens);
    lgnb_bundle (any view)."""
    kind: Literal["hello", "cancel", "refresh", "collapse", "step", "run", "reset", "lgnb_bundle"]


class Pick(TypedDict):
    part: int
    choice: str
    inputs: dict[str, str]  # input name → raw text


class Answer(TypedDict):
    kind: Literal["answer"]
    id: int
    interrupt_id: str
    picks: list[Pick]
    hold: bool


class SendHeld(TypedDict):
    kind: Literal["send_held"]
    id: int
    ids: NotRequired[list[str]]


class Continue(TypedDict):
    """The run view's breakpoint button: go on past a static breakpoint."""
    kind: Literal["continue"]
    id: int


class Resume(TypedDict):
    kind: Literal["resume"]
    id: int
    interrupt_id: NotRequired[str]
    value: Any


class ById(TypedDict):
    """toggle (graph: a subgraph key); select, compare (history: a checkpoint id)."""
    kind: Literal["toggle", "select", "compare"]
    id: str


class HistoryRequest(TypedDict):
    """Requests the history view answers with ``<kind>-result`` (same ``request``)."""
    kind: Literal["fork", "replay", "load_older", "expand"]
    request: int
    id: NotRequired[str]  # the checkpoint (fork, replay) or segment (expand)
    values: NotRequired[dict[str, str]]  # fork: key → raw text typed
    as_node: NotRequired[str | None]


class WhatIf(TypedDict):
    kind: Literal["whatif"]
    reducer: str
    index: NotRequired[int]


class OpenThread(TypedDict):
    """inbox: open a listed thread (its run view and form)."""
    kind: Literal["open"]
    thread_id: str


class TurnPage(TypedDict):
    """inbox: the next or the previous page of interrupted threads."""
    kind: Literal["page"]
    to: Literal["next", "previous"]


ToKernel = Union[Bare, Answer, SendHeld, Continue, Resume, ById, HistoryRequest, WhatIf, OpenThread, TurnPage]
