// lgnb.history(graph, config): the checkpoint timeline (SVG from the kernel's DOT, rendered
// by Graphviz WASM), a details panel for the clicked checkpoint with a fork form generated
// from the state schema (the kernel validates what is typed), and the diff between two
// checkpoints (shift-click the second). Replays open their own run view under the timeline
// (an ipywidgets box the kernel fills). Every action has one busy guard here and one in the
// kernel; a click whose message cannot reach the kernel says "kernel restarted: re-run the
// cell". Everything is text.
//
// Big threads: the kernel sends only what is drawn — long linear runs of checkpoints come as
// one segment node (click: the kernel expands it), and older checkpoints come a page at a
// time ("load older"). The page keeps no list longer than the kernel's caps
// (timeline.caps); lookups by SVG id go through one Map built per timeline.
import { h, jsonText } from "./dom.js";
import { renderSvg, panZoom } from "./svg.js";

const CSS = `
.lgnb-svg g.node.lgnb-selected > path, .lgnb-svg g.node.lgnb-selected > polygon { stroke: #b45309; stroke-width: 3; }
.lgnb-svg g.node.lgnb-compared > path, .lgnb-svg g.node.lgnb-compared > polygon { stroke: #0e7490; stroke-width: 3; stroke-dasharray: 4 2; }
.lgnb-history .lgnb-graph { align-self: start; }
.lgnb-history .lgnb-canvas { box-sizing: border-box; padding-top: 30px; }
.lgnb-history-actions { display: flex; gap: 6px; flex-wrap: wrap; margin: 4px 0; align-items: center; }
.lgnb-history-details .lgnb-json { max-height: 160px; }
.lgnb-fork { border: 1px solid #ddd6fe; border-radius: 6px; padding: 4px 6px; background: #faf8ff; }
.lgnb-fork > summary { cursor: pointer; color: #5b21b6; font-size: 12px; }
.lgnb-fork-field { display: flex; flex-direction: column; gap: 2px; margin: 4px 0; }
.lgnb-fork-label { font-size: 11px; color: #475569; }
.lgnb-fork-key { color: #1f2430; font-weight: 600; }
.lgnb-fork-input { font: 11px/1.35 var(--jp-code-font-family, ui-monospace, monospace); width: 100%; box-sizing: border-box; border: 1px solid #c5cbd6; border-radius: 4px; padding: 2px 4px; resize: vertical; }
.lgnb-fork-input.lgnb-edited { border-color: #7c3aed; background: #fbf9ff; }
.lgnb-fork-input.lgnb-invalid { border-color: #dc2626; background: #fef2f2; }
.lgnb-field-error { color: #991b1b; font-size: 11px; white-space: pre-wrap; }
.lgnb-field-error:empty { display: none; }
.lgnb-diff { margin-top: 6px; }
.lgnb-diff-key { font-weight: 600; margin-top: 4px; }
.lgnb-diff-pair { display: grid; grid-template-columns: 1fr 1fr; gap: 4px; }
.lgnb-diff-before { background: #fef2f2 !important; }
.lgnb-diff-after { background: #ecfdf5 !important; }
.lgnb-diff-msg { font-size: 11px; white-space: pre-wrap; overflow-wrap: anywhere; padding: 2px 4px; border-radius: 4px; margin: 2px 0; }
.lgnb-diff-msg.lgnb-added { background: #ecfdf5; }
.lgnb-diff-msg.lgnb-removed { background: #fef2f2; text-decoration: line-through; }
.lgnb-svg g.node.lgnb-segment { cursor: zoom-in; }
.lgnb-too-big { font-size: 11px; color: #475569; font-style: italic; }
`;

// In the view's own element, like the common styles (styles.js): a shadow root sees them.
function injectHistoryStyles(el) {
  const style = document.createElement("style");
  style.dataset.lgnb = "history-styles";
  style.textContent = CSS;
  el.append(style);
}

const RESTARTED = "kernel restarted: re-run the cell";
const ANSWER_TIMEOUT_MS = 20000;

function btn(text, title, onClick, testid) {
  return h("button", { class: "lgnb-btn", type: "button", title, text, "data-testid": testid, on: { click: onClick } });
}

function section(label, value) {
  return h("div", { class: "lgnb-section" },
    h("div", { class: "lgnb-tag", text: label }),
    h("pre", { class: "lgnb-json", text: jsonText(value) }));
}

function initialText(f) {
  return f.kind === "boolean" ? (f.value === true ? "true" : f.value === false ? "false" : "") : (f.text ?? "");
}

// One input per state key; `edits` keeps what was typed across redraws (keyed by checkpoint).
function forkField(f, cid, edits, errors) {
  const key = `${cid}\u0000${f.key}`;
  if (f.too_big || f.locked) { // not sent to the page, or no JSON value: shown, not editable here
    const why = f.too_big
      ? `${f.too_big.toLocaleString()} characters: too big to edit here (fork from code: view.fork(id, {...}))`
      : `holds ${f.locked}: not editable as text here (fork from code: view.fork(id, {...}))`;
    return {
      key: f.key,
      el: h("div", { class: "lgnb-fork-field", "data-testid": f.too_big ? "too-big" : "locked" },
        h("span", { class: "lgnb-fork-label" }, h("span", { class: "lgnb-fork-key", text: f.key }), ` ${f.kind}`),
        h("span", { class: "lgnb-too-big", text: why })),
      changed: () => false,
      raw: () => null,
    };
  }
  const start = initialText(f);
  let input;
  if (f.kind === "boolean") {
    input = h("select", { class: "lgnb-fork-input" },
      start === "" ? h("option", { value: "", text: "—" }) : null,
      h("option", { value: "true", text: "true" }), h("option", { value: "false", text: "false" }));
  } else if (f.kind === "integer" || f.kind === "number") {
    input = h("input", { class: "lgnb-fork-input", type: "text", inputmode: "decimal" });
  } else {
    const lines = (start.match(/\n/g) || []).length + 1;
    input = h("textarea", { class: "lgnb-fork-input", rows: String(Math.min(8, Math.max(f.kind === "json" ? 2 : 1, lines))),
      spellcheck: "false", placeholder: f.reducer ? "value to add through the reducer (JSON)" : f.kind === "json" ? "JSON" : "" });
  }
  input.setAttribute("data-key", f.key);
  input.setAttribute("aria-label", f.key);
  input.value = edits.has(key) ? edits.get(key) : start;
  const err = h("div", { class: "lgnb-field-error", "data-testid": "field-error", text: errors[f.key] || "" });
  const mark = () => {
    input.classList.toggle("lgnb-edited", input.value !== start);
    input.classList.toggle("lgnb-invalid", Boolean(err.textContent));
  };
  input.addEventListener("input", () => { edits.set(key, input.value); err.textContent = ""; mark(); });
  input.addEventListener("change", () => { edits.set(key, input.value); mark(); });
  mark();
  const kind = f.reducer ? `${f.kind} · through the reducer (adds)` : f.kind;
  return {
    key: f.key,
    el: h("label", { class: "lgnb-fork-field" },
      h("span", { class: "lgnb-fork-label" }, h("span", { class: "lgnb-fork-key", text: f.key }), ` ${kind}`), input, err),
    changed: () => input.value !== start,
    raw: () => input.value,
  };
}

function diffPanel(diff, { onClear }) {
  const rows = [];
  const pair = (before, after) => h("div", { class: "lgnb-diff-pair" },
    h("pre", { class: "lgnb-json lgnb-diff-before", text: jsonText(before) }),
    h("pre", { class: "lgnb-json lgnb-diff-after", text: jsonText(after) }));
  if (diff.error) rows.push(h("div", { class: "lgnb-error", text: diff.error }));
  for (const c of diff.changed || []) {
    rows.push(h("div", { class: "lgnb-diff-key", "data-testid": "diff-changed", text: `${c.key} changed` }), pair(c.before, c.after));
  }
  for (const c of diff.added || []) {
    if ((diff.messages || []).some((m) => m.key === c.key)) continue;
    rows.push(h("div", { class: "lgnb-diff-key", "data-testid": "diff-added", text: `${c.key} added` }), pair(null, c.after));
  }
  for (const c of diff.removed || []) {
    rows.push(h("div", { class: "lgnb-diff-key", "data-testid": "diff-removed", text: `${c.key} removed` }), pair(c.before, null));
  }
  const msgText = (m) => `${m.type}${m.name ? ` (${m.name})` : ""}: ${jsonText(m.content)}${m.tool_calls ? ` → ${jsonText(m.tool_calls.map((t) => t.name))}` : ""}`;
  for (const m of diff.messages || []) {
    rows.push(h("div", { class: "lgnb-diff-key", "data-testid": "diff-messages",
      text: `${m.key}: ${m.added.length} added, ${m.removed.length} removed${m.replaced.length ? `, ${m.replaced.length} replaced` : ""}` }));
    for (const x of m.added) rows.push(h("div", { class: "lgnb-diff-msg lgnb-added", text: `+ ${msgText(x)}` }));
    for (const x of m.removed) rows.push(h("div", { class: "lgnb-diff-msg lgnb-removed", text: `− ${msgText(x)}` }));
    for (const x of m.replaced) {
      rows.push(h("div", { class: "lgnb-diff-msg lgnb-removed", text: `− ${msgText(x.before)}` }),
        h("div", { class: "lgnb-diff-msg lgnb-added", text: `+ ${msgText(x.after)}` }));
    }
  }
  if (!rows.length) rows.push(h("div", { class: "lgnb-hint", text: "same values" }));
  const same = (diff.same || []).length ? h("div", { class: "lgnb-tag", text: `unchanged: ${diff.same.join(", ")}` }) : null;
  return h("div", { class: "lgnb-details lgnb-diff", "data-testid": "diff" },
    h("div", { class: "lgnb-details-title", text: `diff: step ${diff.a_step ?? "?"} → step ${diff.b_step ?? "?"}` }),
    h("div", { class: "lgnb-tag", text: `from ${diff.a} to ${diff.b}` }),
    ...rows, same,
    h("div", { class: "lgnb-history-actions" }, btn("clear comparison", "stop comparing", onClear, "clear-compare")));
}

export function renderHistory({ model, el, signal }) {
  injectHistoryStyles(el);
  const title = h("span", { class: "lgnb-title" });
  const meta = h("span", { class: "lgnb-meta" });
  const notice = h("div", { class: "lgnb-notice", "data-testid": "notice" });
  const error = h("div", { class: "lgnb-error", "data-testid": "error", role: "alert" });
  const older = btn("load older", "read the next page of older checkpoints from the kernel",
    () => request("load_older", {}), "load-older");
  const fold = btn("collapse runs", "fold the expanded runs of checkpoints again", () => send({ kind: "collapse" }), "collapse");
  const header = h("div", { class: "lgnb-header" }, title, meta, older, fold,
    btn("refresh", "re-read the history", () => send({ kind: "refresh" }), "refresh"));
  const canvas = h("div", { class: "lgnb-canvas" });
  let svg = null, pz = null, token = 0, draws = 0;
  const toolbar = h("div", { class: "lgnb-toolbar" },
    btn("+", "zoom in (or ctrl + wheel)", () => pz?.zoom(1 / 1.25)),
    btn("−", "zoom out", () => pz?.zoom(1.25)),
    btn("fit", "fit the whole timeline", () => pz?.fit()));
  const pane = h("div", { class: "lgnb-graph" }, toolbar, canvas);
  const hint = h("div", { class: "lgnb-details lgnb-hint", text: "click a checkpoint for its values, next nodes and metadata, then fork (with edited values) or replay from it; shift-click a second one to compare the two; drag to pan, ctrl + wheel to zoom" });
  const side = h("div", { class: "lgnb-details-slot" }, hint);
  const diffSlot = h("div", { class: "lgnb-details-slot" });
  const root = h("div", { class: "lgnb-root lgnb-history" }, header, notice, error,
    h("div", { class: "lgnb-graph-main" }, pane, h("div", {}, side, diffSlot)));

  // -- requests to the kernel: one busy guard per action ---------------------------------
  const pending = { fork: null, replay: null, load_older: null, expand: null };
  const timers = {};
  const edits = new Map();
  let nextRequest = 1, dead = false, localError = "", actions = null;

  function showError() {
    error.textContent = dead ? RESTARTED : localError || model.get("error") || "";
    error.style.display = error.textContent ? "" : "none";
  }
  function markDead() {
    dead = true;
    for (const k of Object.keys(pending)) pending[k] = null;
    showError();
    paintBusy();
  }
  function send(msg) {
    if (dead) { showError(); return false; }
    try {
      model.send(msg);
      return true;
    } catch (err) { // the comm is gone: the kernel restarted or the view was closed
      markDead();
      return false;
    }
  }
  function request(kind, payload) {
    if (pending[kind] || dead) return;
    if (kind === "replay" && model.get("busy") === "replay") return;
    const id = nextRequest++;
    pending[kind] = id;
    localError = "";
    paintBusy();
    if (!send({ kind, request: id, ...payload })) return;
    clearTimeout(timers[kind]);
    timers[kind] = setTimeout(() => {
      if (pending[kind] !== id) return;
      pending[kind] = null;
      localError = `${RESTARTED} (no answer from the kernel to "${kind}" in ${ANSWER_TIMEOUT_MS / 1000} s)`;
      showError();
      paintBusy();
    }, ANSWER_TIMEOUT_MS);
  }
  function onMessage(msg) {
    const kind = { "fork-result": "fork", "replay-result": "replay", "load-older-result": "load_older",
      "expand-result": "expand" }[msg?.kind];
    if (!kind || msg.request !== pending[kind]) return;
    clearTimeout(timers[kind]);
    pending[kind] = null;
    localError = msg.ok ? "" : msg.error || `${kind} failed`;
    if (msg.ok && kind === "fork") { // the fork is made: forget what was typed for its parent
      for (const k of [...edits.keys()]) if (k.startsWith(`${lastFork}\u0000`)) edits.delete(k);
    }
    showError();
    paintBusy();
  }
  let lastFork = null;
  function paintBusy() {
    older.disabled = dead || pending.load_older !== null;
    older.textContent = pending.load_older !== null ? "loading…" : "load older";
    if (!actions) return;
    actions.fork.disabled = dead || pending.fork !== null;
    actions.replay.disabled = dead || pending.replay !== null || model.get("busy") === "replay";
    actions.fork.textContent = pending.fork !== null ? "Forking…" : "Fork from here";
    actions.replay.textContent = actions.replay.disabled && !dead ? "Replaying…" : "Replay from here";
  }

  // -- details of the selected checkpoint -------------------------------------------------
  function checkpointDetails(c, d) {
    const step = c.step ?? "?";
    const form = d.form || { fields: [], as_node: [] };
    const errors = model.get("fork_errors") || {};
    const fields = (form.fields || []).map((f) => forkField(f, c.id, edits, errors));
    const asNode = h("select", { class: "lgnb-fork-input", "aria-label": "as node", "data-testid": "as-node",
      style: "width: auto" },
    h("option", { value: "", text: "as node: (auto, the last writer)" }),
    ...(form.as_node || []).map((n) => h("option", { value: n, text: `as node: ${n}` })));
    const doFork = () => {
      const values = {};
      for (const f of fields) if (f.changed()) values[f.key] = f.raw();
      lastFork = c.id;
      request("fork", { id: c.id, values, as_node: asNode.value || null });
    };
    const edited = fields.filter((f) => f.changed()).length;
    const formBox = h("details", { class: "lgnb-fork", "data-testid": "fork-form" },
      h("summary", { text: `edit values before forking (${fields.length} field${fields.length === 1 ? "" : "s"}${edited ? `, ${edited} edited` : ""})` }),
      form.error ? h("div", { class: "lgnb-field-error", text: form.error }) : null,
      errors[""] ? h("div", { class: "lgnb-field-error", text: errors[""] }) : null,
      ...fields.map((f) => f.el), asNode);
    if (edited || Object.keys(errors).length) formBox.open = true;
    actions = {
      fork: btn("Fork from here", "graph.update_state(this checkpoint, the edited values, as_node=...): a new branch", doFork, "fork"),
      replay: btn("Replay from here", "lgnb.run(graph, None, this checkpoint's config): its run view opens under the timeline",
        () => request("replay", { id: c.id }), "replay"),
    };
    paintBusy();
    return h("div", { class: "lgnb-details lgnb-history-details", "data-testid": "checkpoint-details" },
      h("div", { class: "lgnb-details-title", text: `step ${step} · ${c.source || "?"}${c.latest ? " · latest" : ""}` }),
      h("div", { class: "lgnb-tag", text: `checkpoint ${c.id}` }),
      c.parent ? h("div", { class: "lgnb-tag", text: `parent ${c.parent}` }) : null,
      d.created_at ? h("div", { class: "lgnb-tag", text: d.created_at }) : null,
      h("div", { text: `next: ${(d.next || []).join(", ") || "— (end)"}` }),
      formBox,
      h("div", { class: "lgnb-history-actions" }, actions.fork, actions.replay),
      section("values", d.values),
      (d.interrupts || []).length ? section("interrupts", d.interrupts) : null,
      (d.tasks || []).length ? section("tasks", d.tasks) : null,
      section("metadata", d.metadata));
  }

  // the drawn checkpoints and segments, bounded by the kernel's cap, and one Map by SVG id
  let index = null;
  function tl() {
    const t = model.get("timeline") || {};
    if (index?.source === t) return index;
    const cap = t.caps?.drawn ?? Infinity;
    const checkpoints = (t.checkpoints || []).slice(0, cap);
    const segments = (t.segments || []).slice(0, cap);
    const byDot = new Map();
    const byId = new Map();
    for (const c of checkpoints) { byDot.set(c.dot_id, c); byId.set(c.id, c); }
    for (const sg of segments) byDot.set(sg.dot_id, { ...sg, segment: true });
    index = { source: t, checkpoints, segments, byDot, byId, t };
    return index;
  }
  const byDot = (id) => tl().byDot.get(id);
  let shownKey = null;

  function showSelected() {
    const id = model.get("selected");
    const cmp = model.get("compare");
    svg?.querySelectorAll(".lgnb-selected, .lgnb-compared").forEach((e) => e.classList.remove("lgnb-selected", "lgnb-compared"));
    const other = cmp !== id ? tl().byId.get(cmp) : null;
    if (other) svg?.querySelector(`[id="${other.dot_id}"]`)?.classList.add("lgnb-compared");
    const c = tl().byId.get(id);
    if (!c) { shownKey = null; actions = null; side.replaceChildren(hint); return; }
    svg?.querySelector(`[id="${c.dot_id}"]`)?.classList.add("lgnb-selected");
    const d = model.get("details") || {};
    if (d.id !== c.id) { // the kernel sends the clicked checkpoint's details
      shownKey = null;
      actions = null;
      side.replaceChildren(h("div", { class: "lgnb-details lgnb-hint", text: `step ${c.step ?? "?"} · ${c.source || "?"}: loading…` }));
      return;
    }
    // redraw only when something shown changed (typed text survives a timeline refresh)
    const key = JSON.stringify([c, d, model.get("fork_errors")]);
    if (key === shownKey) { paintBusy(); return; }
    shownKey = key;
    side.replaceChildren(checkpointDetails(c, d));
  }

  function showDiff() {
    const diff = model.get("diff") || {};
    diffSlot.replaceChildren(...(diff.a ? [diffPanel(diff, { onClear: () => { model.set("compare", ""); model.save_changes(); } })] : []));
  }

  async function draw() {
    const dot = model.get("dot");
    const mine = ++token;
    if (!dot) return;
    const started = performance.now();
    try {
      const next = await renderSvg(dot);
      if (mine !== token || signal.aborted) return;
      next.classList.add("lgnb-svg");
      next.removeAttribute("width");
      next.removeAttribute("height");
      const { byDot: drawnById } = tl();
      for (const g of next.querySelectorAll("g.node")) { // tooltips, as text; segments zoom in
        const item = drawnById.get(g.id);
        const t = g.querySelector(":scope > title");
        if (!item || !t) continue;
        if (item.segment) {
          g.classList.add("lgnb-segment");
          t.textContent = item.kind === "run" ? `${item.count} checkpoints: click to expand` : `${item.count} older checkpoints not drawn`;
        } else {
          t.textContent = `checkpoint ${item.id}`;
        }
      }
      const natural = next.viewBox.baseVal.height * (4 / 3);
      canvas.style.height = `${Math.round(Math.min(450, Math.max(170, natural + 54)))}px`;
      canvas.replaceChildren(next);
      svg = next;
      pz = panZoom(svg, { signal });
      showSelected();
      // time to draw: DOT in hand → SVG laid out and in the page (the next frame is painted)
      requestAnimationFrame(() => {
        if (mine !== token) return;
        const now = performance.now();
        root.dataset.drawMs = String(Math.round(now - started));
        root.dataset.drawnAt = String(Math.round(now));
        root.dataset.draws = String(++draws);
      });
    } catch (err) {
      canvas.replaceChildren(h("pre", { class: "lgnb-error", text: `could not draw the history: ${err?.message ?? err}` }));
    }
  }

  canvas.addEventListener("click", (e) => {
    if (svg?.dataset.dragged) { delete svg.dataset.dragged; return; }
    const g = e.target.closest?.("g.node");
    const c = g && byDot(g.id);
    if (!c) return;
    if (c.segment) { // a collapsed run: the kernel draws its checkpoints
      if (c.kind === "run") request("expand", { id: c.id });
      return;
    }
    if ((e.shiftKey || e.metaKey || e.ctrlKey) && model.get("selected") && c.id !== model.get("selected")) {
      model.set("compare", c.id); // compare the selected checkpoint with this one
    } else {
      model.set("selected", c.id);
    }
    model.save_changes();
    showSelected();
  }, { signal });

  const paint = () => {
    title.textContent = model.get("title") || "history";
    const { t, segments } = tl();
    const forks = (t.branch_points || []).length;
    const loaded = t.loaded ?? (t.checkpoints || []).length;
    const runs = segments.filter((sg) => sg.kind === "run");
    const folded = runs.reduce((n, sg) => n + sg.count, 0);
    meta.textContent = `${loaded.toLocaleString()} checkpoint${loaded === 1 ? "" : "s"}` +
      `${t.has_older ? " (older ones not loaded)" : t.at_cap ? ` (the newest ${loaded.toLocaleString()}: limit reached)` : ""}` +
      `${runs.length ? ` · ${folded.toLocaleString()} in ${runs.length} collapsed run${runs.length > 1 ? "s" : ""}` : ""}` +
      `${forks ? ` · ${forks} branch point${forks > 1 ? "s" : ""}` : ""}${model.get("following") ? " · following" : ""}`;
    older.style.display = t.has_older ? "" : "none";
    fold.style.display = t.expanded ? "" : "none";
    notice.textContent = model.get("notice") || "";
    notice.style.display = notice.textContent ? "" : "none";
    showError();
  };
  const onBusy = () => paintBusy();
  const onClose = () => markDead();
  const PAINT = ["title", "timeline", "notice", "error", "following"];
  const SELECT = ["selected", "compare", "timeline", "details", "fork_errors"];
  for (const name of PAINT) model.on(`change:${name}`, paint);
  for (const name of SELECT) model.on(`change:${name}`, showSelected);
  model.on("change:dot", draw);
  model.on("change:diff", showDiff);
  model.on("change:busy", onBusy);
  model.on("msg:custom", onMessage);
  model.on("comm:close", onClose);
  paint();
  draw();
  showDiff();
  el.append(root);
  return () => {
    for (const name of PAINT) model.off(`change:${name}`, paint);
    for (const name of SELECT) model.off(`change:${name}`, showSelected);
    model.off("change:dot", draw);
    model.off("change:diff", showDiff);
    model.off("change:busy", onBusy);
    model.off("msg:custom", onMessage);
    model.off("comm:close", onClose);
    for (const t of Object.values(timers)) clearTimeout(t);
    root.remove();
  };
}
