// The run view: header (status, step, elapsed), graph with live marks, messages streaming
// per bubble, progress bars, errors, approval forms for interrupts (forms.js), state updates and custom events.
// State arrives as synced traits; content as batches of patches (custom messages
// {kind: "patches" | "snapshot", id, ...}).
import { h, fmtSeconds } from "./dom.js";
import { graphPane, details } from "./graph.js";
import { createContent } from "./content.js";
import { createForms } from "./forms.js";
import { createStatePanel, foldedValue } from "./state-panel.js";

export function renderRun({ model, el, signal, state }) {
  const { store } = state;
  const title = h("span", { class: "lgnb-title" });
  const status = h("span", { class: "lgnb-status", "data-testid": "status" });
  const step = h("span", { class: "lgnb-meta", "data-testid": "step" });
  const elapsed = h("span", { class: "lgnb-meta", "data-testid": "elapsed" });
  const thread = h("span", { class: "lgnb-meta" });
  const cancel = h("button", { class: "lgnb-btn", type: "button", text: "cancel",
    on: { click: () => model.send({ kind: "cancel" }) } });
  const header = h("div", { class: "lgnb-header" }, title, status, step, elapsed, thread, cancel);
  const notice = h("div", { class: "lgnb-notice", "data-testid": "notice" });
  // how often each node ran in this thread; a resumed node re-runs from its first line
  const runs = h("div", { class: "lgnb-runs", "data-testid": "runs" });
  const forms = createForms({ model, canContinue: true });
  const interrupts = forms.el;
  const content = createContent(store);
  const detailsBox = h("div", { class: "lgnb-details-slot" });
  const statePanel = createStatePanel();
  // every task's update of the node's latest step (a Send fan-out of 3 lists 3)
  const extra = (key) => {
    const deltas = store.lastUpdates(key);
    if (!deltas.length) return null;
    return h("div", {}, h("div", { text: deltas.length > 1 ? `last step: ${deltas.length} updates` : "last update:" }),
      ...deltas.map((delta) => foldedValue(delta)));  // folded by the kernel (_panel.fold)
  };
  const graph = graphPane({ model, signal, onSelect: (sel) => detailsBox.replaceChildren(details(sel, { model, extra })) });
  const main = h("div", { class: "lgnb-run-main" },
    h("div", { class: "lgnb-run-left" }, graph.el, detailsBox),
    h("div", { class: "lgnb-run-right" }, content.messagesEl, content.progressEl, statePanel.el));
  // Errors are shown once, as the list the kernel's error patches build (node, type,
  // message); the synced `error` trait is the same failure, kept for the Python API.
  const root = h("div", { class: "lgnb-root lgnb-run" }, header, notice, runs, content.errorsEl, interrupts, main,
    content.updEl, content.logEl);
  el.append(root);

  let elapsedAt = performance.now();
  function paint() {
    const s = model.get("status");
    title.textContent = model.get("title") || "run";
    status.textContent = s;
    status.className = `lgnb-status lgnb-status-${s}`;
    step.textContent = `step ${model.get("step")}`;
    thread.textContent = model.get("thread") ? `thread ${model.get("thread")}` : "";
    cancel.style.display = s === "running" ? "" : "none";
    notice.textContent = model.get("notice") || "";
    notice.style.display = notice.textContent ? "" : "none";
    const counts = Object.entries(model.get("runs") || {});
    const reruns = (model.get("reruns") || []).filter((k) => (model.get("active") || []).includes(k) || s !== "running");
    runs.replaceChildren(
      ...(reruns.length && s === "running" ? [h("span", { class: "lgnb-rerun", text: `↻ ${reruns.join(", ")} re-running from its start · ` })] : []),
      ...(counts.some(([, n]) => n > 1) ? [h("span", { text: `runs in this thread: ${counts.map(([k, n]) => `${k} ×${n}`).join(", ")}` })] : []));
    runs.style.display = runs.childNodes.length ? "" : "none";
    graph.mark({ active: model.get("active"), visited: model.get("visited"), taken: model.get("taken") });
    statePanel.update(model.get("panel"));
    tick();
  }
  function tick() {
    const base = model.get("elapsed") || 0;
    const live = model.get("status") === "running" ? (performance.now() - elapsedAt) / 1000 : 0;
    elapsed.textContent = fmtSeconds(base + live);
  }
  model.on("change:elapsed", () => { elapsedAt = performance.now(); });
  for (const name of ["status", "step", "active", "visited", "taken", "interrupts", "notice", "title", "thread", "drawing", "runs", "reruns", "panel"]) {
    model.on(`change:${name}`, paint);
  }
  const unsubscribe = store.subscribe((event) => {
    if (event.type === "patch") content.apply(event.patch);
    else content.load(store.snapshot());
  });
  const timer = setInterval(tick, 200);
  content.load(store.snapshot());
  paint();
  return () => { unsubscribe(); forms.dispose(); clearInterval(timer); root.remove(); };
}
