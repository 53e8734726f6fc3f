// The lens: one super-step per click. Header (status, Step / Run to end / Reset; keys → or
// Enter, e, r), the graph with the step's tasks lit ("×N" for a node run as N tasks), the
// edges that triggered them, then the plan → execute → update table, the state before and
// after (changed keys marked) and "what if" under another reducer. Everything is text.
import { h, jsonText } from "./dom.js";
import { graphPane, details } from "./graph.js";
import { createForms } from "./forms.js";

const FOLD = 160; // characters of a value shown before it folds

function val(value) {
  let text = value === undefined ? "—" : jsonText(value);
  if (value !== undefined && typeof value !== "string") {
    try { const flat = JSON.stringify(value); if (flat.length <= 60) text = flat; } catch { /* keep the indented text */ }
  }
  if (text.length <= FOLD) return h("pre", { class: "lgnb-json lgnb-lens-val", text });
  return h("details", { class: "lgnb-fold" }, h("summary", { text: `${text.slice(0, 60).replace(/\s+/g, " ")}… (${text.length} chars)` }),
    h("pre", { class: "lgnb-json lgnb-lens-val", text }));
}
const dash = (v) => (v === null || v === undefined ? "—" : String(v));

function table(head, rows, cls) {
  return h("table", { class: `lgnb-lens-table ${cls || ""}` },
    h("thead", {}, h("tr", {}, ...head.map((t) => h("th", { text: t })))),
    h("tbody", {}, ...rows));
}

function planSection(step) {
  const tasks = step.plan?.tasks || [];
  if (!tasks.length) return null;
  const rows = tasks.map((t) => h("tr", { "data-node": t.node },
    h("td", { text: t.node }),
    h("td", {}, t.send ? h("span", {}, h("b", { text: "Send" }), ` → ${t.send.node}, arg `, val(t.send.arg))
      : (t.triggers || []).map((tr) => `${tr.channel}${tr.version == null ? "" : ` @ ${tr.version}`}`).join(", ") || "—")));
  return h("div", { class: "lgnb-lens-phase", "data-phase": "plan" }, h("div", { class: "lgnb-lens-phase-title", text: `1 · plan — ${tasks.length} task${tasks.length === 1 ? "" : "s"}` }),
    table(["node", "triggered by (channel @ version) / Send"], rows));
}

function executeSection(step) {
  const tasks = step.execute?.tasks || [];
  if (!tasks.length) return null;
  const rows = tasks.map((t) => h("tr", { "data-node": t.node },
    h("td", { text: t.node }),
    h("td", {}, ...(t.writes || []).map(([c, v]) => h("div", { class: "lgnb-lens-write" }, h("span", { class: "lgnb-lens-chan", text: `${c} ←` }), val(v))),
      ...(t.interrupts || []).map((i) => h("div", { class: "lgnb-lens-intr" }, "interrupt: ", val(i)))),
    h("td", { text: t.restored ? "restored" : t.cached ? "cached" : t.duration_ms == null ? "—" : `${Number(t.duration_ms).toFixed(1)} ms` }),
    h("td", { class: t.error ? "lgnb-lens-bad" : "", text: t.error || "" })));
  return h("div", { class: "lgnb-lens-phase", "data-phase": "execute" }, h("div", { class: "lgnb-lens-phase-title", text: "2 · execute — writes per task" }),
    table(["task", "writes (in order)", "time", "error"], rows));
}

function updateSection(step) {
  const u = step.update;
  if (!u) return null;
  const rows = (u.channels || []).map((c) => h("tr", { "data-channel": c.channel, class: c.internal ? "lgnb-lens-internal" : "" },
    h("td", { text: c.channel + (c.internal ? " (internal)" : "") }),
    h("td", { text: dash(c.reducer) }),
    h("td", {}, c.had_value === false ? "∅" : val(c.before)),
    h("td", {}, ...(c.writes || []).map((w) => h("div", { class: "lgnb-lens-write" }, h("span", { class: "lgnb-lens-chan", text: `${w.node}:` }), val(w.value)))),
    h("td", {}, c.has_value === false ? "∅" : val(c.after)),
    h("td", { text: dash(c.version) })));
  const err = u.error ? h("div", { class: "lgnb-error lgnb-lens-conflict", "data-testid": "lens-conflict" },
    h("b", { text: `${u.error.type}${u.error.channel ? ` at ${u.error.channel}` : ""}: ` }), String(u.error.message || "").split("\n")[0],
    ...(u.error.writes || []).map((w) => h("div", {}, `${w.node} wrote `, val(w.value)))) : null;
  const what = u.source === "input" ? "the input" : u.source === "command" ? "a command" : "barrier: the writes applied at once";
  return h("div", { class: "lgnb-lens-phase", "data-phase": "update" }, h("div", { class: "lgnb-lens-phase-title", text: `3 · update — ${what}` }),
    rows.length ? table(["channel", "reducer", "before", "writes", "after", "version"], rows, "lgnb-lens-update") : null, err);
}

// Records a subgraph streamed during this step, nested under it: one fold per namespace
// (its own plan / execute / update, as lgnb.pregel.records.format_record prints them).
function subgraphSection(step) {
  const subs = step.subgraphs || [];
  if (!subs.length) return null;
  return h("div", { class: "lgnb-lens-phase", "data-phase": "subgraphs" },
    h("div", { class: "lgnb-lens-phase-title", text: `inside ${subs.length === 1 ? "a subgraph" : `${subs.length} subgraphs`} — its own super-steps` }),
    ...subs.map((sub, i) => h("details", { class: "lgnb-fold lgnb-lens-sub", "data-ns": sub.ns, open: i === 0 ? "" : undefined },
      h("summary", {}, h("b", { text: sub.name || sub.ns }),
        h("span", { class: "lgnb-hint", text: ` · ${sub.records.filter((r) => r.kind === "plan" && r.tasks?.length).length} steps · ${sub.ns}` })),
      h("pre", { class: "lgnb-json", text: sub.text || "" }))));
}

function stateSection(step) {
  const before = step.before || {}, after = step.after || {};
  const changed = new Set(step.changed || []);
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  if (!keys.length) return null;
  const rows = keys.map((k) => h("tr", { class: changed.has(k) ? "lgnb-lens-changed" : "", "data-key": k },
    h("td", { text: changed.has(k) ? `● ${k}` : k }), h("td", {}, k in before ? val(before[k]) : "∅"), h("td", {}, k in after ? val(after[k]) : "∅")));
  return h("div", { class: "lgnb-lens-phase", "data-phase": "state" }, h("div", { class: "lgnb-lens-phase-title", text: "state before → after (● changed)" }),
    table(["key", "before", "after"], rows));
}

function whatifSection(model, step) {
  const chans = (step.update?.channels || []).filter((c) => !c.internal);
  if (!chans.length && !step.update?.error) return null;
  const select = h("select", { class: "lgnb-lens-reducer", "aria-label": "reducer" },
    ...(model.get("reducers") || []).map((r) => h("option", { value: r, text: r })));
  const go = h("button", { class: "lgnb-btn", type: "button", text: "what if",
    on: { click: () => model.send({ kind: "whatif", reducer: select.value, index: step.index }) } });
  const out = h("div", { class: "lgnb-lens-whatif-out" });
  const w = model.get("whatif") || {};
  if (w.error) out.append(h("div", { class: "lgnb-error", text: w.error }));
  if (w.results && w.index === step.index) {
    out.append(table(["channel", `real (${w.results[0]?.real_reducer ?? "reducer unknown"})`, `with ${w.reducer}`], w.results.map((r) => h("tr", { class: r.same ? "" : "lgnb-lens-changed" },
      h("td", { text: r.channel }),
      h("td", {}, r.real_error ? h("span", { class: "lgnb-lens-bad", text: String(r.real_error).split("\n")[0] }) : val(r.real)),
      h("td", {}, r.error ? h("span", { class: "lgnb-lens-bad", text: r.error }) : val(r.whatif))))));
  }
  return h("div", { class: "lgnb-lens-phase", "data-phase": "whatif" },
    h("div", { class: "lgnb-lens-phase-title", text: "what if — the same writes under another reducer (nodes not re-run)" }),
    h("div", { class: "lgnb-lens-whatif-bar" }, select, go), out);
}

export function renderLens({ model, el, signal }) {
  const title = h("span", { class: "lgnb-title" });
  const status = h("span", { class: "lgnb-status", "data-testid": "status" });
  const where = h("span", { class: "lgnb-meta", "data-testid": "lens-step" });
  const btn = (text, kind, key) => h("button", { class: "lgnb-btn", type: "button", text, title: `${text} (key: ${key})`,
    "data-action": kind, on: { click: () => model.send({ kind }) } });
  const stepBtn = btn("Step ▶", "step", "→ or Enter"), runBtn = btn("Run to end ▶▶", "run", "e"), resetBtn = btn("Reset ↺", "reset", "r");
  const header = h("div", { class: "lgnb-header" }, title, status, where, stepBtn, runBtn, resetBtn);
  const notice = h("div", { class: "lgnb-notice", "data-testid": "notice" });
  const errorEl = h("div", { class: "lgnb-errors", "data-testid": "lens-error" });
  const forms = createForms({ model });
  const detailsBox = h("div", { class: "lgnb-details-slot" });
  const graph = graphPane({ model, signal, onSelect: (sel) => detailsBox.replaceChildren(details(sel, { model })) });
  const steps = h("div", { class: "lgnb-lens-trail", "data-testid": "lens-trail" });
  const body = h("div", { class: "lgnb-lens-body", "data-testid": "lens-table" });
  const root = h("div", { class: "lgnb-root lgnb-lens", tabindex: "0" }, header, notice, errorEl, forms.el,
    h("div", { class: "lgnb-graph-main" }, graph.el, h("div", {}, steps, detailsBox)), body);
  root.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea")) return;
    const kind = { ArrowRight: "step", Enter: "step", e: "run", r: "reset" }[e.key];
    if (kind) { e.preventDefault(); model.send({ kind }); }
  }, { signal });
  el.append(root);

  function paint() {
    const s = model.get("status");
    const cur = model.get("current") || {};
    title.textContent = model.get("title") || "lens";
    status.textContent = model.get("busy") ? "working…" : s;
    status.className = `lgnb-status lgnb-status-${s === "paused" || s === "ready" ? "interrupted" : s}`;
    where.textContent = cur.step === undefined ? "press Step ▶" : `super-step ${cur.step}${cur.step === -1 ? " (input)" : ""}`;
    // at a breakpoint (interrupted, no question asked: no form) Step and Run continue the run
    const asking = s === "interrupted" && (model.get("forms") || []).length > 0;
    const over = s === "done" || s === "error" || asking;
    stepBtn.disabled = runBtn.disabled = over || model.get("busy");
    notice.textContent = model.get("notice") || "";
    notice.style.display = notice.textContent ? "" : "none";
    const err = model.get("error") || {};
    errorEl.replaceChildren(...(err.type ? [h("div", { class: "lgnb-error", "data-testid": "error" }, h("b", { text: `${err.type}: ` }), String(err.message || "").split("\n")[0])] : []));
    const counts = model.get("counts") || {};
    const badges = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 1).map(([k, n]) => [k, `×${n}`]));
    graph.mark({ active: model.get("active"), visited: model.get("visited"), taken: model.get("taken"), badges });
    steps.replaceChildren(h("div", { class: "lgnb-details-title", text: "super-steps" }),
      ...(model.get("summary") || []).map((x) => h("div", { class: x.index === cur.index ? "lgnb-lens-here" : "" ,
        text: `${x.step === -1 ? "input" : `step ${x.step}`}: ${(x.nodes || []).join(", ") || "—"}${x.status !== "done" ? ` (${x.status})` : ""}` })));
    const parts = cur.index === undefined ? [h("div", { class: "lgnb-hint", text: "Press Step ▶ (or → / Enter) to run one super-step: plan → execute → update." })]
      : [planSection(cur), executeSection(cur), updateSection(cur), subgraphSection(cur), stateSection(cur), whatifSection(model, cur)];
    body.replaceChildren(...parts.filter(Boolean));
  }
  for (const name of ["status", "current", "summary", "active", "visited", "taken", "counts", "busy", "notice", "error", "whatif", "title", "drawing", "forms"]) {
    model.on(`change:${name}`, paint);
  }
  paint();
  return () => { forms.dispose(); root.remove(); };
}
