"""Front-end assets: the one shared bundle, the tiny per-view module, and a fallback.

Why two modules: anywidget stores every model's `_esm` in the saved notebook. The bundle
(views + Graphviz compiled to WASM) is about 1.5 MB, so it lives in exactly one model, the
:class:`~lgnb.widgets._runtime.Runtime`; each view's `_esm` is :data:`VIEW_ESM` (under 2 KB),
which obtains the runtime's exports through anywidget's `host.getWidget` (anywidget ≥ 0.11)
or, failing that, through a promise the runtime publishes on `globalThis`.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"
BUNDLE = STATIC / "lgnb.js"

#: The whole ESM of every view widget: find the runtime, delegate `render` to it.
VIEW_ESM = r"""
const KEY = Symbol.for("lgnb.runtime");
function published() {
  const g = globalThis;
  if (!g[KEY]) { let resolve; const promise = new Promise((r) => (resolve = r)); g[KEY] = { promise, resolve }; }
  return g[KEY].promise;
}
async function runtime(model, host) {
  const ref = model.get("_lgnb_runtime");
  if (host && typeof host.getWidget === "function" && ref) {
    try { const w = await host.getWidget(ref); if (w && w.exports && w.exports.render) return w.exports; }
    catch (err) { console.warn("lgnb: runtime via host.getWidget failed, waiting for it", err); }
  }
  return published();
}
export default {
  async render({ model, el, host, signal }) {
    el.textContent = "loading lgnb view…";
    const timeout = new Promise((r) => setTimeout(() => r(null), 20000));
    const rt = await Promise.race([runtime(model, host), timeout]);
    if (!rt) { el.textContent = "lgnb: the front-end runtime did not load (re-run the cell that made this view)."; return; }
    el.textContent = "";
    return rt.render(model.get("_view_kind"), { model, el, signal });
  },
};
"""

#: Used when `lgnb/static/lgnb.js` was not built: views say so instead of failing.
FALLBACK_ESM = r"""
function render(kind, { el }) {
  const box = document.createElement("div");
  box.style.cssText = "font:13px sans-serif;padding:8px;border:1px dashed #c66;color:#933";
  box.textContent = "lgnb front end not built (lgnb/static/lgnb.js is missing): run `npm ci && npm run build` in js/, then re-run this cell.";
  el.appendChild(box);
  return () => box.remove();
}
const exports = { render, version: "fallback" };
export default {
  initialize() {
    const KEY = Symbol.for("lgnb.runtime"), g = globalThis;
    if (!g[KEY]) { let resolve; const promise = new Promise((r) => (resolve = r)); g[KEY] = { promise, resolve }; }
    g[KEY].resolve(exports);
    return exports;
  },
};
"""


def bundle_text() -> str:
    """The built front end, or the fallback module when it was not built."""
    try:
        return BUNDLE.read_text(encoding="utf-8")
    except FileNotFoundError:
        return FALLBACK_ESM


def bundle_built() -> bool:
    """Whether `npm run build` produced the bundle this package serves."""
    return BUNDLE.is_file()
