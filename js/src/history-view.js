// lgnb.history(graph, config): the checkpoint timeline (SVG from the kernel's DOT, rendered
// by Graphviz WASM) and a details panel for the clicked checkpoint. Everything is text.
import { h, jsonText } from "./dom.js";
import { renderSvg, panZoom } from "./svg.js";

const CSS = `
.lgnb-svg g.node.lgnb-selected > path, .lgnb-svg g.node.lgnb-selected > polygon { stroke: #b45309; stroke-width: 3; }
.lgnb-history-actions { display: flex; gap: 6px; flex-wrap: wrap; margin: 4px 0; }
.lgnb-history-details .lgnb-json { max-height: 160px; }
`;

function injectHistoryStyles() {
  if (document.getElementById("lgnb-history-styles")) return;
  const style = document.createElement("style");
  style.id = "lgnb-history-styles";
  style.textContent = CSS;
  document.head.append(style);
}

function btn(text, title, onClick, testid) {
  return h("button", { class: "lgnb-btn", type: "button", title, text, "data-testid": testid, on: { click: onClick } });
}

function section(label, value) {
  return h("div", { class: "lgnb-section" },
    h("div", { class: "lgnb-tag", text: label }),
    h("pre", { class: "lgnb-json", text: jsonText(value) }));
}

function checkpointDetails(c, d, { model }) {
  const send = (kind) => model.send({ kind, id: c.id });
  const step = c.step ?? "?";
  return h("div", { class: "lgnb-details lgnb-history-details", "data-testid": "checkpoint-details" },
    h("div", { class: "lgnb-details-title", text: `step ${step} · ${c.source || "?"}${c.latest ? " · latest" : ""}` }),
    h("div", { class: "lgnb-tag", text: `checkpoint ${c.id}` }),
    c.parent ? h("div", { class: "lgnb-tag", text: `parent ${c.parent}` }) : null,
    d.created_at ? h("div", { class: "lgnb-tag", text: d.created_at }) : null,
    h("div", { text: `next: ${(d.next || []).join(", ") || "— (end)"}` }),
    h("div", { class: "lgnb-history-actions" },
      btn("Fork from here", "graph.update_state(this checkpoint, None): a new branch from here", () => send("fork"), "fork"),
      btn("Replay from here", "lgnb.run(graph, None, this checkpoint's config)", () => send("replay"), "replay")),
    section("values", d.values),
    (d.interrupts || []).length ? section("interrupts", d.interrupts) : null,
    (d.tasks || []).length ? section("tasks", d.tasks) : null,
    section("metadata", d.metadata));
}

export function renderHistory({ model, el, signal }) {
  injectHistoryStyles();
  const title = h("span", { class: "lgnb-title" });
  const meta = h("span", { class: "lgnb-meta" });
  const notice = h("div", { class: "lgnb-notice", "data-testid": "notice" });
  const error = h("div", { class: "lgnb-error", "data-testid": "error" });
  const header = h("div", { class: "lgnb-header" }, title, meta,
    btn("refresh", "re-read the history", () => model.send({ kind: "refresh" }), "refresh"));
  const canvas = h("div", { class: "lgnb-canvas" });
  let svg = null, pz = null, token = 0;
  const toolbar = h("div", { class: "lgnb-toolbar" },
    btn("+", "zoom in (or ctrl + wheel)", () => pz?.zoom(1 / 1.25)),
    btn("−", "zoom out", () => pz?.zoom(1.25)),
    btn("fit", "fit the whole timeline", () => pz?.fit()));
  const pane = h("div", { class: "lgnb-graph" }, toolbar, canvas);
  const hint = h("div", { class: "lgnb-details lgnb-hint", text: "click a checkpoint for its values, next nodes and metadata; drag to pan, ctrl + wheel to zoom" });
  const side = h("div", { class: "lgnb-details-slot" }, hint);
  const root = h("div", { class: "lgnb-root lgnb-history" }, header, notice, error,
    h("div", { class: "lgnb-graph-main" }, pane, side));

  const tl = () => model.get("timeline") || { checkpoints: [], links: [] };
  const byDot = (id) => tl().checkpoints.find((c) => c.dot_id === id);

  function showSelected() {
    const id = model.get("selected");
    svg?.querySelectorAll(".lgnb-selected").forEach((e) => e.classList.remove("lgnb-selected"));
    const c = tl().checkpoints.find((x) => x.id === id);
    if (!c) { side.replaceChildren(hint); return; }
    svg?.querySelector(`[id="${c.dot_id}"]`)?.classList.add("lgnb-selected");
    const d = model.get("details") || {};
    if (d.id !== c.id) { // the kernel sends the clicked checkpoint's details
      side.replaceChildren(h("div", { class: "lgnb-details lgnb-hint", text: `step ${c.step ?? "?"} · ${c.source || "?"}: loading…` }));
      return;
    }
    side.replaceChildren(checkpointDetails(c, d, { model }));
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
      for (const c of tl().checkpoints) { // tooltips: the checkpoint id, as text
        const t = next.querySelector(`[id="${c.dot_id}"] > title`);
        if (t) t.textContent = `checkpoint ${c.id}`;
      }
      const natural = next.viewBox.baseVal.height * (4 / 3);
      canvas.style.height = `${Math.round(Math.min(420, Math.max(140, natural + 24)))}px`;
      canvas.replaceChildren(next);
      svg = next;
      pz = panZoom(svg, { signal });
      showSelected();
    } catch (err) {
      canvas.replaceChildren(h("pre", { class: "lgnb-error", text: `could not draw the history: ${err?.message ?? err}` }));
    }
  }

  canvas.addEventListener("click", (e) => {
    if (svg?.dataset.dragged) { delete svg.dataset.dragged; return; }
    const g = e.target.closest?.("g.node");
    const c = g && byDot(g.id);
    if (!c) return;
    model.set("selected", c.id);
    model.save_changes();
    showSelected();
  }, { signal });

  const paint = () => {
    title.textContent = model.get("title") || "history";
    const t = tl();
    const forks = (t.branch_points || []).length;
    meta.textContent = `${t.checkpoints.length} checkpoints${forks ? ` · ${forks} branch point${forks > 1 ? "s" : ""}` : ""}`;
    notice.textContent = model.get("notice") || "";
    notice.style.display = notice.textContent ? "" : "none";
    error.textContent = model.get("error") || "";
    error.style.display = error.textContent ? "" : "none";
  };
  for (const name of ["title", "timeline", "notice", "error"]) model.on(`change:${name}`, paint);
  model.on("change:dot", draw);
  model.on("change:selected", showSelected);
  model.on("change:timeline", showSelected);
  model.on("change:details", showSelected);
  paint();
  draw();
  el.append(root);
  return () => {
    for (const name of ["title", "timeline", "notice", "error"]) model.off(`change:${name}`, paint);
    model.off("change:dot", draw);
    model.off("change:selected", showSelected);
    model.off("change:timeline", showSelected);
    model.off("change:details", showSelected);
    root.remove();
  };
}
