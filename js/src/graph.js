// The graph pane shared by the graph view and the run view: SVG from the kernel's DOT,
// pan/zoom, click for details, expand/collapse subgraphs, live marks (active, visited,
// taken edges) driven by node keys such as "agent" or "sub:child".
import { h, jsonText } from "./dom.js";
import { renderSvg, panZoom } from "./svg.js";

const SHORT_ESCAPES = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };
// control characters, lone surrogates, line and paragraph separators (Python: lgnb.draw._dot.visible)
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `s` with control characters drawn as escapes ("a\\x00b"), exactly as the kernel's DOT labels. */
export function visible(s) {
  return String(s).replace(INVISIBLE, (c) => SHORT_ESCAPES[c] ??
    (c.charCodeAt(0) <= 0xff ? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`
      : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
}

export function labelOf(node) {
  if (node.kind === "start") return "START";
  if (node.kind === "end") return "END";
  if (node.kind === "subgraph") return `${visible(node.name)} ⊞`;
  return visible(node.name);
}

/** The drawn key standing for a live key: itself, or its collapsed subgraph. */
export function displayKey(key, drawn) {
  if (drawn.has(key)) return key;
  const parts = String(key).split(":");
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join(":");
    if (drawn.has(prefix)) return prefix;
  }
  return null;
}

function button(text, title, onClick) {
  return h("button", { class: "lgnb-btn", type: "button", title, text, on: { click: onClick } });
}

export function graphPane({ model, signal, onSelect }) {
  const canvas = h("div", { class: "lgnb-canvas" });
  let svg = null, pz = null, token = 0;
  let marks = { active: [], visited: [], taken: [] };
  const toolbar = h("div", { class: "lgnb-toolbar" },
    button("+", "zoom in (or ctrl + wheel)", () => pz?.zoom(1 / 1.25)),
    button("−", "zoom out", () => pz?.zoom(1.25)),
    button("fit", "fit the whole graph", () => pz?.fit()));
  const el = h("div", { class: "lgnb-graph" }, toolbar, canvas);

  const drawing = () => model.get("drawing") || { nodes: [], edges: [], clusters: [] };

  function relabel(root) {
    for (const node of drawing().nodes) {
      const g = root.getElementById ? root.getElementById(node.dot_id) : root.querySelector(`[id="${node.dot_id}"]`);
      if (!g) continue;
      const texts = g.querySelectorAll("text");
      texts.forEach((t, i) => (i === 0 ? (t.textContent = labelOf(node)) : t.remove()));
      const title = g.querySelector("title");
      if (title) title.textContent = visible(node.key);
    }
  }

  async function draw() {
    const dot = model.get("dot");
    const mine = ++token;
    if (!dot) return;
    try {
      const next = await renderSvg(dot);
      if (mine !== token || signal.aborted) return;
      next.classList.add("lgnb-svg");
      next.removeAttribute("width");
      next.removeAttribute("height");
      relabel(next);
      const natural = next.viewBox.baseVal.height * (4 / 3);
      canvas.style.height = `${Math.round(Math.min(420, Math.max(140, natural + 24)))}px`;
      canvas.replaceChildren(next);
      svg = next;
      pz = panZoom(svg, { signal });
      mark(marks);
    } catch (err) {
      canvas.replaceChildren(h("pre", { class: "lgnb-error", text: `could not draw the graph: ${err?.message ?? err}` }));
    }
  }

  function byId(id) {
    return svg ? svg.querySelector(`[id="${id}"]`) : null;
  }

  /** Light nodes and edges: {active: [key], visited: [key], taken: [[src, dst]]}. */
  function mark(next) {
    marks = next;
    if (!svg) return;
    const d = drawing();
    const drawn = new Set(d.nodes.map((n) => n.key));
    const idOf = new Map(d.nodes.map((n) => [n.key, n.dot_id]));
    svg.querySelectorAll(".lgnb-active, .lgnb-visited, .lgnb-taken").forEach((e) =>
      e.classList.remove("lgnb-active", "lgnb-visited", "lgnb-taken"));
    for (const [cls, keys] of [["lgnb-visited", next.visited || []], ["lgnb-active", next.active || []]]) {
      for (const key of keys) {
        const shown = displayKey(key, drawn);
        if (shown) byId(idOf.get(shown))?.classList.add(cls);
      }
    }
    svg.querySelectorAll(".lgnb-badge").forEach((e) => e.remove());
    for (const [key, text] of Object.entries(next.badges || {})) {
      const shown = displayKey(key, drawn);
      const g = shown ? byId(idOf.get(shown)) : null;
      if (!g) continue;
      const box = g.getBBox();
      const t = document.createElementNS("http://www.w3.org/2000/svg", "text");
      t.setAttribute("class", "lgnb-badge");
      t.setAttribute("x", String(box.x + box.width + 2));
      t.setAttribute("y", String(box.y + 9));
      t.textContent = String(text);
      g.append(t);
    }
    for (const [src, dst] of next.taken || []) {
      const s = displayKey(src, drawn), t = displayKey(dst, drawn);
      if (!s || !t || s === t) continue;
      for (const e of d.edges) if (e.source === s && e.target === t) byId(e.dot_id)?.classList.add("lgnb-taken");
    }
  }

  canvas.addEventListener("click", (e) => {
    if (svg?.dataset.dragged) { delete svg.dataset.dragged; return; }
    const g = e.target.closest?.("g.node, g.cluster");
    if (!g) return;
    const d = drawing();
    const node = d.nodes.find((n) => n.dot_id === g.id);
    if (node) return onSelect?.({ type: "node", node });
    const cluster = d.clusters.find((c) => c.dot_id === g.id);
    if (cluster) onSelect?.({ type: "cluster", cluster });
  }, { signal });

  model.on("change:dot", draw);
  draw();
  return { el, mark };
}

/** Details of a clicked node or cluster; `extra(key)` may add run-specific rows. */
export function details(selection, { model, extra } = {}) {
  const d = model.get("drawing") || { nodes: [], edges: [] };
  const name = new Map(d.nodes.map((n) => [n.key, labelOf(n)]));
  const toggle = (key, text) => h("button", { class: "lgnb-btn", type: "button", text,
    on: { click: () => model.send({ kind: "toggle", id: key }) } });
  if (selection.type === "cluster") {
    const c = selection.cluster;
    return h("div", { class: "lgnb-details" },
      h("div", { class: "lgnb-details-title", text: `subgraph ${visible(c.name)}` }),
      h("div", { text: `key: ${visible(c.key)}` }), toggle(c.key, "collapse"));
  }
  const n = selection.node;
  const out = d.edges.filter((e) => e.source === n.key);
  const inc = d.edges.filter((e) => e.target === n.key);
  const edgeText = (e, other) => `${name.get(other) ?? visible(other)}${e.label != null ? ` [${visible(e.label)}]` : ""}${e.conditional ? " (conditional)" : ""}`;
  const meta = n.metadata && Object.keys(n.metadata).length ? n.metadata : null;
  return h("div", { class: "lgnb-details" },
    h("div", { class: "lgnb-details-title", text: `${labelOf(n)}  ·  ${n.kind}` }),
    n.key !== n.name ? h("div", { text: `key: ${visible(n.key)}` }) : null,
    n.data ? h("div", { text: `runs: ${n.data}` }) : null,
    h("div", { text: `goes to: ${out.map((e) => edgeText(e, e.target)).join(", ") || "—"}` }),
    h("div", { text: `comes from: ${inc.map((e) => edgeText(e, e.source)).join(", ") || "—"}` }),
    meta ? h("pre", { class: "lgnb-json", text: jsonText(meta) }) : null,
    n.kind === "subgraph" ? toggle(n.key, "expand subgraph") : null,
    n.cluster ? toggle(n.cluster, `collapse ${visible(n.cluster)}`) : null,
    extra ? extra(n.key) : null);
}
