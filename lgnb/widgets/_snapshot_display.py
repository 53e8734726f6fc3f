"""How a view's output carries its static snapshot (`_snapshot`) beside the widget.

A view is displayed with a display id; its output's mime bundle holds the widget
(`application/vnd.jupyter.widget-view+json`), which a live page renders, and `text/html`,
the snapshot, which nbconvert, GitHub and viewers without the widget show. A change of a
trait named in `_snapshot_on` (a run's status, a drawing) re-publishes the bundle with
`update_display`, so the notebook saved at the end holds the final snapshot.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any


class Snapshotted:
    """Mixin for widget views: `text/html` snapshot in the output, `to_html(path)`."""

    #: traits whose change updates the output's snapshot (once the view is displayed)
    _snapshot_on: tuple[str, ...] = ()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown = False
        if self._snapshot_on:
            self.observe(lambda _change: self._publish_snapshot(), names=list(self._snapshot_on))  # type: ignore[attr-defined]

    def _static_html(self) -> str:
        """This view's snapshot: an HTML fragment with no script (views override it)."""
        return ""

    def _snapshot(self) -> str:
        try:
            return self._static_html()
        except Exception as exc:  # noqa: BLE001 - a snapshot that fails must not hide the widget
            return f"<pre>lgnb: no snapshot ({html.escape(type(exc).__name__)}: {html.escape(str(exc))})</pre>"

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

    def _bundle_and_metadata(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        data = self._repr_mimebundle_()
        if isinstance(data, tuple):
            return data[0], (data[1] if len(data) > 1 and isinstance(data[1], dict) else {})
        return (data, {}) if isinstance(data, dict) else None

    @property
    def _display_id(self) -> str:
        return f"lgnb-{self._uid}"  # type: ignore[attr-defined]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        bundle = self._bundle_and_metadata()
        if bundle is not None:
            display(bundle[0], metadata=bundle[1], raw=True, display_id=self._display_id)
            self._shown = True

    def _publish_snapshot(self) -> None:
        """Replace the snapshot in every output of this view (nothing before it is shown)."""
        if not self._shown:
            return
        try:
            from IPython.display import update_display

            bundle = self._bundle_and_metadata()
            if bundle is not None:
                update_display(bundle[0], metadata=bundle[1], raw=True, display_id=self._display_id)
        except Exception:  # noqa: BLE001 S110 - the live widget is unaffected; only the saved output lags
            pass

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write this view's snapshot as a standalone HTML file (no script, no network)."""
        from lgnb.widgets._snapshot import standalone

        target = Path(path)
        title = getattr(self, "title", "") or getattr(self, "_view_kind", "") or "lgnb"
        target.write_text(standalone(self._snapshot(), title=title), encoding="utf-8")
        return target
