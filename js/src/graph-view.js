// lgnb.show(graph): the graph pane plus a details panel for the clicked node.
import { h } from "./dom.js";
import { graphPane, details } from "./graph.js";

export function renderGraph({ model, el, signal }) {
  const title = h("div", { class: "lgnb-header" }, h("span", { class: "lgnb-title" }));
  const hint = h("div", { class: "lgnb-details lgnb-hint", text: "click a node for details; drag to pan, ctrl + wheel to zoom" });
  const side = h("div", { class: "lgnb-details-slot" }, hint);
  const graph = graphPane({ model, signal, onSelect: (sel) => side.replaceChildren(details(sel, { model })) });
  const root = h("div", { class: "lgnb-root lgnb-graph-view" }, title, h("div", { class: "lgnb-graph-main" }, graph.el, side));
  const paint = () => { title.firstChild.textContent = model.get("title") || "graph"; };
  model.on("change:title", paint);
  paint();
  el.append(root);
  return () => root.remove();
}
