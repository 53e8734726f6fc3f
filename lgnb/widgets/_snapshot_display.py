"""How a view's output carries its static snapshot (`_snapshot`) beside the widget.

Displaying a view makes two outputs: the widget (`application/vnd.jupyter.widget-view+json`,
with an empty `text/plain`), then the snapshot (`text/html` only). Two, because JupyterLab
renders only the widget mimetype of an output that has one, and after a kernel shutdown it
shows "Error displaying widget: model not found" there, never the output's `text/html`.
A CSS rule in the snapshot (no script) shows exactly one of the two in JupyterLab and
Notebook 7: the snapshot while the widget has not rendered (loading, or its model is gone),
the widget once it has. nbconvert, GitHub and other viewers without the widget show the
snapshot (and an empty text for the widget's output).

The snapshot output has its own display id: a change of a trait named in `_snapshot_on`
(a run's status, a drawing) re-publishes it with `update_display`, so the notebook saved
at the end holds the final snapshot.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from lgnb.widgets._wire import wire_text


class Snapshotted:
    """Mixin for widget views: `text/html` snapshot in the output, `to_html(path)`."""

    #: traits whose change updates the output's snapshot (once the view is displayed)
    _snapshot_on: tuple[str, ...] = ()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._snapshot_displayed = False
        self._snapshot_holds = 0  # open `hold_sync` blocks: the snapshot waits for their end
        self._snapshot_stale = False
        if self._snapshot_on:
            self.observe(lambda _change: self._snapshot_asked(), names=list(self._snapshot_on))  # type: ignore[attr-defined]

    def _snapshot_asked(self) -> None:
        if self._snapshot_holds:
            self._snapshot_stale = True  # traits set after this one in the block belong in it
        else:
            self._publish_snapshot()

    def hold_sync(self) -> AbstractContextManager[Any]:
        """The widget's `hold_sync`; a snapshot asked for inside it is made once the block's
        traits are all set (a run's final status is set before its final step, in one block)."""
        return self._snapshot_hold(super().hold_sync())  # type: ignore[misc]

    @contextmanager
    def _snapshot_hold(self, held: AbstractContextManager[Any]) -> Iterator[None]:
        self._snapshot_holds += 1
        try:
            with held:
                yield
        finally:
            self._snapshot_holds -= 1
            if not self._snapshot_holds and self._snapshot_stale:
                self._snapshot_stale = False
                self._publish_snapshot()

    def _static_html(self) -> str:
        """This view's snapshot: an HTML fragment with no script (views override it)."""
        return ""

    def _snapshot(self) -> str:
        """The snapshot, encodable: a lone surrogate in any text shown becomes U+FFFD here,
        once for every way the snapshot leaves the kernel (display, update_display, to_html)."""
        try:
            fragment = self._static_html()
        except Exception as exc:  # noqa: BLE001 - a snapshot that fails must not hide the widget
            fragment = f"<pre>lgnb: no snapshot ({html.escape(type(exc).__name__)}: {html.escape(str(exc))})</pre>"
        return wire_text(fragment)

    def _widget_mimebundle(self, **kwargs: Any) -> Any:
        """The widget's own mime bundle (a view that displays inside a box overrides it)."""
        return super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget's bundle (`data` or `(data, metadata)`, as the widget gives it) plus
        the snapshot as `text/html`."""
        data = self._widget_mimebundle(**kwargs)
        if isinstance(data, tuple) and data and isinstance(data[0], dict):
            return (dict(data[0], **{"text/html": self._snapshot()}), *data[1:])
        if isinstance(data, dict):
            return dict(data, **{"text/html": self._snapshot()})
        return data

    @property
    def _display_id(self) -> str:
        return f"lgnb-{self._uid}"  # type: ignore[attr-defined]

    def _snapshot_output(self) -> dict[str, str]:
        """The snapshot output's bundle: the fragment and the rule that swaps it with the widget."""
        uid = html.escape(self._uid, quote=True)  # type: ignore[attr-defined]
        mine = f'[data-lgnb-for="{uid}"]'
        drawn = ":has(> .jp-OutputArea-output > .lm-Widget)"  # the widget rendered (not loading, not missing)
        swap = (f"<style>.jp-OutputArea-child{drawn} + .jp-OutputArea-child:has({mine}) {{display:none}}"
                f".jp-OutputArea-child:not({drawn}):has(+ .jp-OutputArea-child {mine}) {{display:none}}</style>")
        return {"text/html": f'<div data-lgnb-for="{uid}">{swap}{self._snapshot()}</div>'}

    def _ipython_display_(self) -> None:
        from IPython.display import display

        data = self._widget_mimebundle()
        if isinstance(data, tuple):
            data = data[0] if data and isinstance(data[0], dict) else None
        if not isinstance(data, dict):
            return
        display({**data, "text/plain": ""}, raw=True)
        display(self._snapshot_output(), raw=True, display_id=self._display_id)
        self._snapshot_displayed = True

    def _publish_snapshot(self) -> None:
        """Replace the snapshot in every output of this view (nothing before it is shown)."""
        if not self._snapshot_displayed:
            return
        try:
            from IPython.display import update_display

            update_display(self._snapshot_output(), raw=True, display_id=self._display_id)
        except Exception:  # noqa: BLE001 S110 - the live widget is unaffected; only the saved output lags
            pass

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write this view's snapshot as a standalone HTML file (no script, no network)."""
        from lgnb.widgets._snapshot import standalone

        target = Path(path)
        title = getattr(self, "title", "") or getattr(self, "_view_kind", "") or "lgnb"
        target.write_text(wire_text(standalone(self._snapshot(), title=title)), encoding="utf-8")
        return target
