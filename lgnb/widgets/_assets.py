"""Front-end assets: the one shared bundle, the tiny per-view module, and a fallback.

Why this shape: anywidget stores every model's `_esm` in the saved notebook. The bundle
(views + Graphviz compiled to WASM) is about 1.5 MB, so it lives in exactly one model, the
:class:`~lgnb.widgets._runtime.Runtime`; each view's `_esm` is :data:`VIEW_ESM` (about 1 KB),
which obtains the runtime's exports through anywidget's `host.getWidget` (anywidget ≥ 0.11)
or, failing that, through a promise the runtime publishes on `globalThis`.

And the bundle travels gzipped and base64-encoded (about 0.6 MB): its WASM payload is a
string full of control characters that JSON would escape as six bytes each, doubling the
saved notebook. :data:`LOADER_ESM` (the runtime's `_esm`) inflates it in the browser with
`DecompressionStream` and imports it from a blob URL.
"""

from __future__ import annotations

import base64
import gzip
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
const within = (p, ms) => Promise.race([p, new Promise((r) => setTimeout(() => r(null), ms))]);
async function viaHost(model, host) {
  const ref = model.get("_lgnb_runtime");
  if (!host || typeof host.getWidget !== "function" || !ref) return null;
  try { const w = await host.getWidget(ref); return w && w.exports && w.exports.render ? w.exports : null; }
  catch (err) { return null; }
}
export default {
  async initialize({ model }) {
    const rt = await within(published(), 20000);
    if (rt) rt.attach(model.get("_view_kind"), model);
  },
  async render({ model, el, host, signal }) {
    el.textContent = "loading lgnb view…";
    const rt = (await viaHost(model, host)) || (await within(published(), 20000));
    if (!rt) { el.textContent = "lgnb: the front-end runtime did not load (re-run the cell that made this view)."; return; }
    el.textContent = "";
    return rt.render(model.get("_view_kind"), { model, el, signal });
  },
};
"""

#: Used when `lgnb/static/lgnb.js` was not built: views say so instead of failing.
FALLBACK_ESM = r"""
function attach() { return {}; }
function render(kind, { el }) {
  const box = document.createElement("div");
  box.style.cssText = "font:13px sans-serif;padding:8px;border:1px dashed #c66;color:#933";
  box.textContent = "lgnb front end not built (lgnb/static/lgnb.js is missing). Installed with pip: reinstall from a wheel or sdist (pip install --force-reinstall lgnb), which carry it. In a source checkout: ./dev setup (or npm ci && npm run build in js/). Then restart the kernel and re-run this cell.";
  el.appendChild(box);
  return () => box.remove();
}
const exports = { attach, render, version: "fallback" };
export default {
  initialize() {
    const KEY = Symbol.for("lgnb.runtime"), g = globalThis;
    if (!g[KEY]) { let resolve; const promise = new Promise((r) => (resolve = r)); g[KEY] = { promise, resolve }; }
    g[KEY].resolve(exports);
    return exports;
  },
};
"""


#: The runtime widget's `_esm`: inflate `_bundle` (base64 gzip) and import it.
LOADER_ESM = r"""
async function load(b64) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const text = await new Response(stream).text();
  const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
  try { return await import(url); } finally { URL.revokeObjectURL(url); }
}
export default {
  async initialize({ model }) {
    const mod = await load(model.get("_bundle"));
    return await mod.default.initialize({ model });
  },
};
"""

_cache: tuple[float, str] | None = None


def bundle_payload() -> tuple[str, str]:
    """`(_esm, _bundle)` for the runtime widget: the loader and the gzipped bundle,
    or the fallback module (and no bundle) when `npm run build` has not been run."""
    global _cache
    try:
        mtime = BUNDLE.stat().st_mtime
    except FileNotFoundError:
        return FALLBACK_ESM, ""
    if _cache is None or _cache[0] != mtime:
        raw = BUNDLE.read_bytes()
        _cache = (mtime, base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii"))
    return LOADER_ESM, _cache[1]


def bundle_built() -> bool:
    """Whether `npm run build` produced the bundle this package serves."""
    return BUNDLE.is_file()
