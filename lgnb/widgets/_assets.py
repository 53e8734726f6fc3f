"""Front-end assets: the bundle, the tiny module every view carries, and how they meet.

Why this shape. anywidget stores every model's `_esm` and traits in the saved notebook, and
the bundle (views + Graphviz compiled to WASM) is about 1.5 MB, so it must not travel in
every view. Nor may a view depend on a widget that is never displayed: marimo creates a
widget's front-end model only when it is displayed, so a hidden "bundle widget" never loads
there and every view would wait for it.

So each view is self-sufficient. Its `_esm` is :data:`VIEW_ESM` (about 2 KB), which finds the
bundle in a page-wide registry keyed by the bundle's hash (`globalThis[Symbol.for("lgnb.bundles")]`)
and otherwise loads it from whichever source answers first:

* its own `_bundle` trait — the first view made in a kernel carries the bundle (gzipped,
  base64: about 0.6 MB), the others an empty string; so a saved notebook holds one copy,
  and a notebook reopened without a kernel still draws from its saved widget state;
* the kernel — a view with no bundle at hand asks its own model's comm (`lgnb_bundle`) and
  the kernel answers with a custom message, which is never part of the saved state.

The bundle travels gzipped and base64-encoded: its WASM payload is a string full of control
characters that JSON would escape as six bytes each. Gzip level 1 (about 40 ms, 0.6 MB
encoded) rather than 9 (about 300 ms, 10% smaller): it is paid on the first run of a kernel. The loader inflates it with
`DecompressionStream` and imports it from a blob URL, once per page and bundle hash.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"
BUNDLE = STATIC / "lgnb.js"

#: The whole ESM of every view widget: get the page's copy of the bundle, delegate to it.
VIEW_ESM = r"""
const REG = Symbol.for("lgnb.bundles");
const NOT_BUILT = "lgnb front end not built (lgnb/static/lgnb.js is missing). Installed with pip: reinstall from a wheel or sdist (pip install --force-reinstall lgnb), which carry it. In a source checkout: ./dev setup (or npm ci && npm run build in js/). Then restart the kernel and re-run this cell.";
function slot(hash) {
  const reg = (globalThis[REG] ??= new Map());
  if (!reg.has(hash)) {
    const s = { loading: false };
    s.promise = new Promise((resolve, reject) => { s.resolve = resolve; s.reject = reject; });
    s.promise.catch(() => {});
    reg.set(hash, s);
  }
  return reg.get(hash);
}
async function inflate(b64) {
  const raw = atob(b64);
  const bytes = new Uint8Array(raw.length); // a plain loop: Uint8Array.from(raw, fn) is 10-25x slower
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const text = await new Response(stream).text();
  const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
  try { return await import(url); } finally { URL.revokeObjectURL(url); }
}
function feed(s, b64) {
  if (s.loading || !b64) return;
  s.loading = true;
  inflate(b64).then(s.resolve, s.reject);
}
function ask(model, hash) {
  return new Promise((resolve) => {
    const on = (msg) => {
      if (msg && msg.kind === "lgnb_bundle" && msg.hash === hash) { model.off("msg:custom", on); resolve(msg.bundle); }
    };
    model.on("msg:custom", on);
    try { model.send({ kind: "lgnb_bundle" }); } catch (err) { model.off("msg:custom", on); }
  });
}
const within = (p, ms) => Promise.race([p, new Promise((r) => setTimeout(() => r(null), ms))]);
async function runtime(model) {
  const hash = model.get("_lgnb_bundle");
  if (!hash) return null;
  const s = slot(hash);
  feed(s, model.get("_bundle"));
  if (!s.loading) {
    // another view on this page may be loading it already; if not, ask this view's kernel
    const mod = await within(s.promise, 150);
    if (mod) return mod;
    if (!s.loading) ask(model, hash).then((b64) => feed(s, b64));
  }
  return s.promise;
}
export default {
  async initialize({ model }) {
    try { const mod = await runtime(model); if (mod) mod.attach(model.get("_view_kind"), model); }
    catch (err) { console.error("lgnb: the front-end bundle did not load", err); }
  },
  async render({ model, el, signal }) {
    el.textContent = "loading lgnb view…";
    let mod = null, why = NOT_BUILT;
    try { mod = await within(runtime(model), 30000); if (!mod && model.get("_lgnb_bundle")) why = "lgnb: the front-end bundle did not arrive in 30 s (is the kernel running? re-run the cell that made this view)."; }
    catch (err) { why = `lgnb: the front-end bundle did not load: ${err}`; }
    if (!mod) {
      el.textContent = "";
      const box = document.createElement("div");
      box.style.cssText = "font:13px sans-serif;padding:8px;border:1px dashed #c66;color:#933";
      box.textContent = why;
      el.appendChild(box);
      return () => box.remove();
    }
    el.textContent = "";
    return mod.render(model.get("_view_kind"), { model, el, signal });
  },
};
"""

_cache: tuple[float, str, str] | None = None


def bundle_payload() -> tuple[str, str]:
    """`(hash, gzipped base64 bundle)`, or `("", "")` when `npm run build` has not been run
    (the views then say how to build it)."""
    global _cache
    try:
        mtime = BUNDLE.stat().st_mtime
    except FileNotFoundError:
        return "", ""
    if _cache is None or _cache[0] != mtime:
        raw = BUNDLE.read_bytes()
        packed = base64.b64encode(gzip.compress(raw, compresslevel=1, mtime=0)).decode("ascii")
        _cache = (mtime, hashlib.sha256(raw).hexdigest()[:16], packed)
    return _cache[1], _cache[2]


def bundle_built() -> bool:
    """Whether `npm run build` produced the bundle this package serves."""
    return BUNDLE.is_file()
