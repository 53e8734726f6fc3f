// The run view's state panel: the state after the latest super-step (the checkpoint's step),
// the keys that step changed marked ●, per node its task count (×N for a Send fan-out) and
// every task's update. Values arrive folded by the kernel (lgnb/widgets/_panel.py):
// {__fold__: "str" | "list" | "messages" | "dict" | "cut", ...}. Everything is text.
import { h } from "./dom.js";

const STATUS = {
  input: "the input",
  step: "after the step",
  interrupted: "interrupted: writes of the tasks that finished (saved with the step once it completes)",
  saved: "the thread's saved state",
};

function flat(value) {
  if (typeof value === "string") return JSON.stringify(value);
  try { return JSON.stringify(value); } catch { return String(value); }
}

function msgLine(m) {
  if (m && typeof m === "object" && typeof m.type === "string" && "content" in m) {
    const c = m.content && typeof m.content === "object" && m.content.__fold__ === "str"
      ? `${m.content.head}… (${m.content.len.toLocaleString()} chars)` : typeof m.content === "string" ? m.content : flat(m.content);
    return h("div", { class: "lgnb-state-msg" }, h("b", { text: `${m.type}: ` }), c);
  }
  return h("div", { class: "lgnb-state-msg" }, flat(m));
}

/** A (folded) value as DOM: short values on one line, long ones behind a <details>. */
export function foldedValue(v) {
  if (v && typeof v === "object" && !Array.isArray(v) && typeof v.__fold__ === "string") {
    const f = v.__fold__;
    if (f === "str") {
      return h("details", { class: "lgnb-fold" }, h("summary", { text: `"${v.head.slice(0, 60).replace(/\s+/g, " ")}…" (${v.len.toLocaleString()} chars)` }),
        h("pre", { class: "lgnb-json", text: `${v.head}… (${(v.len - v.head.length).toLocaleString()} more chars not shown)` }));
    }
    if (f === "messages") {
      return h("details", { class: "lgnb-fold" }, h("summary", { text: `${v.len.toLocaleString()} messages · last ${v.last.length}` }),
        ...v.last.map(msgLine));
    }
    if (f === "list") {
      return h("details", { class: "lgnb-fold" }, h("summary", { text: `list of ${v.len.toLocaleString()} items · last ${v.last.length}: ${flat(v.last).slice(0, 80)}` }),
        ...v.last.map((x) => foldedValue(x)));
    }
    if (f === "dict") {
      return h("details", { class: "lgnb-fold" }, h("summary", { text: `${v.len.toLocaleString()} keys · first ${Object.keys(v.items).length}` }),
        h("pre", { class: "lgnb-json", text: JSON.stringify(v.items, null, 2) }));
    }
    return h("span", { class: "lgnb-hint", text: "… (too large to show)" });
  }
  const text = flat(v);
  if (text.length <= 120) return h("code", { class: "lgnb-state-val", text });
  return h("details", { class: "lgnb-fold" }, h("summary", { text: `${text.slice(0, 80)}…` }),
    h("pre", { class: "lgnb-json", text: JSON.stringify(v, null, 2) }));
}

export function createStatePanel() {
  const head = h("div", { class: "lgnb-state-head", "data-testid": "state-step" });
  const tasks = h("div", { class: "lgnb-state-tasks", "data-testid": "state-tasks" });
  const body = h("tbody", {});
  const table = h("table", { class: "lgnb-lens-table lgnb-state-table" },
    h("thead", {}, h("tr", {}, h("th", { text: "key" }), h("th", { text: "value" }))), body);
  const more = h("div", { class: "lgnb-hint" });
  const el = h("div", { class: "lgnb-state", "data-testid": "state" }, head, tasks, table, more);
  let last = null;

  function update(panel) {
    if (panel === last) return;
    last = panel;
    const has = panel && Array.isArray(panel.keys);
    el.style.display = has ? "" : "none";
    if (!has) return;
    head.replaceChildren(h("b", { text: `state · step ${panel.step ?? "—"}` }),
      h("span", { class: "lgnb-hint", text: ` — ${STATUS[panel.status] || panel.status}${panel.changed?.length ? " · ● changed" : ""}` }));
    tasks.replaceChildren(...(panel.tasks || []).map((t) => h("details", { class: "lgnb-state-task", "data-node": t.node },
      h("summary", {}, h("b", { text: t.node }), t.count > 1 ? h("span", { class: "lgnb-state-count", text: ` ×${t.count}` }) : null,
        h("span", { class: "lgnb-hint", text: ` · ${t.updates.length + (t.more || 0)} update${t.updates.length + (t.more || 0) === 1 ? "" : "s"}` })),
      ...t.updates.map((u, i) => h("div", { class: "lgnb-state-update" },
        h("span", { class: "lgnb-tag", text: t.updates.length > 1 ? `task ${i + 1}` : "update" }),
        u === null || u === undefined ? h("span", { class: "lgnb-hint", text: "no writes" }) : foldedValue(u))),
      t.more ? h("div", { class: "lgnb-hint", text: `… and ${t.more} more` }) : null)));
    tasks.style.display = tasks.childNodes.length ? "" : "none";
    body.replaceChildren(...panel.keys.map((k) => h("tr", { class: k.changed ? "lgnb-lens-changed" : "", "data-key": k.key },
      h("td", { class: "lgnb-state-key", text: k.changed ? `● ${k.key}` : k.key }), h("td", {}, foldedValue(k.value)))));
    more.textContent = panel.more_keys ? `… ${panel.more_keys} more keys not shown` : "";
  }
  update(null);
  return { el, update };
}
