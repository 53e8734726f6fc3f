// DOT → a sanitized, inert <svg> element, rendered by Graphviz compiled to WASM.
//
// The DOT comes from the kernel, where every user string was escaped by the `graphviz`
// package, so Graphviz emits it as XML text. We still parse the SVG in an inert document
// (DOMParser, image/svg+xml: scripts never run there), drop anything active (script,
// foreignObject, event-handler attributes, non-local links) and only then adopt it.
import { instance } from "@viz-js/viz";

let vizPromise = null;
export function viz() {
  if (!vizPromise) vizPromise = instance();
  return vizPromise;
}

const BANNED = new Set(["script", "foreignobject", "iframe", "object", "embed", "style", "audio", "video", "image", "use"]);

export function sanitize(root) {
  const walker = [root];
  while (walker.length) {
    const el = walker.pop();
    for (const child of Array.from(el.children)) {
      if (BANNED.has(child.localName.toLowerCase())) child.remove();
      else walker.push(child);
    }
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase();
      if (name.startsWith("on")) el.removeAttribute(attr.name);
      else if ((name === "href" || name.endsWith(":href")) && !value.startsWith("#")) el.removeAttribute(attr.name);
      else if (value.includes("javascript:")) el.removeAttribute(attr.name);
    }
  }
  return root;
}

/** Render DOT to an adopted, sanitized SVGSVGElement. Throws on invalid DOT. */
export async function renderSvg(dot) {
  const v = await viz();
  const text = v.renderString(dot, { format: "svg", engine: "dot" });
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.localName !== "svg") throw new Error("Graphviz did not produce SVG");
  sanitize(svg);
  return document.importNode(svg, true);
}

/** Pan (drag) and zoom (ctrl/⌘ + wheel, or the returned zoom()) by editing the viewBox. */
export function panZoom(svg, { signal }) {
  const base = svg.viewBox.baseVal;
  const content = { x: base.x, y: base.y, w: base.width, h: base.height };
  // Fit the graph, but never magnify past its natural size (1 pt = 4/3 px).
  const cw = svg.clientWidth || 600, ch = svg.clientHeight || 360;
  const unitsPerPx = Math.max(content.w / cw, content.h / ch, 0.75);
  const home = { w: cw * unitsPerPx, h: ch * unitsPerPx };
  home.x = content.x + (content.w - home.w) / 2;
  home.y = content.y + (content.h - home.h) / 2;
  let box = { ...home };
  svg.setAttribute("viewBox", `${box.x} ${box.y} ${box.w} ${box.h}`);
  const apply = () => svg.setAttribute("viewBox", `${box.x} ${box.y} ${box.w} ${box.h}`);
  const zoom = (factor, cx = 0.5, cy = 0.5) => {
    const w = box.w * factor, h = box.h * factor;
    box = { x: box.x + (box.w - w) * cx, y: box.y + (box.h - h) * cy, w, h };
    apply();
  };
  const fit = () => { box = { ...home }; apply(); };
  let drag = null;
  svg.addEventListener("wheel", (e) => {
    if (!e.ctrlKey && !e.metaKey) return;
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, (e.clientX - r.left) / r.width, (e.clientY - r.top) / r.height);
  }, { signal, passive: false });
  svg.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, box: { ...box }, moved: false };
  }, { signal });
  svg.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const r = svg.getBoundingClientRect();
    const dx = ((e.clientX - drag.x) / r.width) * box.w, dy = ((e.clientY - drag.y) / r.height) * box.h;
    if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 3) {
      if (!drag.moved) svg.setPointerCapture?.(e.pointerId);
      drag.moved = true;
    }
    if (drag.moved) { box = { ...drag.box, x: drag.box.x - dx, y: drag.box.y - dy }; apply(); }
  }, { signal });
  const end = () => { if (drag?.moved) svg.dataset.dragged = "1"; drag = null; };
  svg.addEventListener("pointerup", end, { signal });
  svg.addEventListener("pointercancel", end, { signal });
  return { zoom, fit };
}
