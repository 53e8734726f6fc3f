// The DOM of a run's content — message bubbles, progress bars, event log, state updates,
// errors — built from the model-level store (store.js) and then changed patch by patch.
// Streamed text is appended to one Text node per bubble; every string is text, never HTML.
import { h, jsonText, clear } from "./dom.js";

const ROLE = { ai: "assistant", human: "user", tool: "tool", system: "system" };

export function createContent() {
  const messagesEl = h("div", { class: "lgnb-messages", "data-testid": "messages" });
  const progressEl = h("div", { class: "lgnb-progress-list" });
  const errorsEl = h("div", { class: "lgnb-errors" });
  const logList = h("div", { class: "lgnb-list" });
  const updList = h("div", { class: "lgnb-list" });
  const logSummary = h("summary", { text: "events (0)" });
  const updSummary = h("summary", { text: "updates (0)" });
  const logEl = h("details", { class: "lgnb-section" }, logSummary, logList);
  const updEl = h("details", { class: "lgnb-section" }, updSummary, updList);

  let bubbles = new Map(), bars = new Map(), counts = { log: 0, updates: 0 };

  function stickToBottom(fn) {
    const atBottom = messagesEl.scrollHeight - messagesEl.scrollTop - messagesEl.clientHeight < 30;
    fn();
    if (atBottom) messagesEl.scrollTop = messagesEl.scrollHeight;
  }

  function toolEl(bubble, index) {
    let tool = bubble.tools.get(index);
    if (!tool) {
      const name = h("span", { class: "lgnb-tool-name" });
      const args = document.createTextNode("");
      const el = h("div", { class: "lgnb-tool" }, h("span", { class: "lgnb-tool-badge", text: "tool call" }), name, "(", h("span", { class: "lgnb-tool-args" }, args), ")");
      bubble.toolsEl.append(el);
      tool = { name, args };
      bubble.tools.set(index, tool);
    }
    return tool;
  }

  function newBubble(p) {
    const text = document.createTextNode(p.content || "");
    const toolsEl = h("div", { class: "lgnb-tools" });
    const who = [ROLE[p.type] || p.type, p.node && p.node !== "input" ? p.node : null, p.name].filter(Boolean).join(" · ");
    const el = h("div", { class: `lgnb-bubble lgnb-${p.type || "ai"}`, "data-msg-id": p.id },
      h("div", { class: "lgnb-who", text: who }), h("div", { class: "lgnb-text" }, text), toolsEl);
    const bubble = { el, text, toolsEl, tools: new Map() };
    const old = bubbles.get(p.id);
    if (old) old.el.replaceWith(el); else messagesEl.append(el);
    bubbles.set(p.id, bubble);
    for (const call of p.tool_calls || []) setTool(bubble, call);
  }

  function setTool(bubble, call) {
    const tool = toolEl(bubble, call.index ?? 0);
    tool.name.textContent = call.name || "";
    tool.args.data = call.args || "";
  }

  function apply(p) {
    switch (p.kind) {
      case "msg.new": stickToBottom(() => newBubble(p)); break;
      case "msg.delta": { const b = bubbles.get(p.id); if (b) stickToBottom(() => b.text.appendData(p.text)); break; }
      case "tool.delta": {
        const b = bubbles.get(p.id); if (!b) break;
        const tool = toolEl(b, p.index ?? 0);
        if (p.name) tool.name.textContent = p.name;
        tool.args.appendData(p.args || "");
        break;
      }
      case "msg.final": {
        const b = bubbles.get(p.id); if (!b) break;
        b.text.data = p.content ?? b.text.data;
        if (p.tool_calls) { clear(b.toolsEl); b.tools.clear(); for (const c of p.tool_calls) setTool(b, c); }
        b.el.classList.add("lgnb-final");
        break;
      }
      case "progress": {
        let bar = bars.get(p.id);
        if (!bar) {
          const fill = h("div", { class: "lgnb-bar-fill" });
          const label = h("span", { class: "lgnb-bar-label" });
          const pct = h("span", { class: "lgnb-bar-pct" });
          const el = h("div", { class: "lgnb-bar", role: "progressbar" }, label, h("div", { class: "lgnb-bar-track" }, fill), pct);
          progressEl.append(el);
          bar = { el, fill, label, pct };
          bars.set(p.id, bar);
        }
        const v = Math.max(0, Math.min(1, Number(p.value) || 0));
        bar.label.textContent = p.label || p.stage || p.node || "progress";
        bar.fill.style.width = `${(v * 100).toFixed(1)}%`;
        bar.pct.textContent = `${Math.round(v * 100)}%`;
        bar.el.setAttribute("aria-valuenow", String(Math.round(v * 100)));
        break;
      }
      case "log":
        counts.log += 1;
        logSummary.textContent = `events (${counts.log})`;
        logList.append(h("div", { class: "lgnb-row" },
          h("span", { class: "lgnb-tag", text: p.node || "custom" }), h("pre", { class: "lgnb-json", text: jsonText(p.payload) })));
        break;
      case "update":
        counts.updates += 1;
        updSummary.textContent = `updates (${counts.updates})`;
        updList.append(h("div", { class: "lgnb-row" },
          h("span", { class: "lgnb-tag", text: `step ${p.step} · ${p.node}` }), h("pre", { class: "lgnb-json", text: jsonText(p.delta) })));
        break;
      case "error":
        errorsEl.append(h("div", { class: "lgnb-error", "data-testid": "error" },
          h("b", { text: `${p.type || "Error"} in ${p.node || "the run"}: ` }), p.message || ""));
        break;
      default:
        console.warn("lgnb: unknown patch", p.kind);
    }
  }

  function load(snap) {
    if (!snap || typeof snap !== "object") return;
    bubbles = new Map(); bars = new Map(); counts = { log: 0, updates: 0 };
    for (const el of [messagesEl, progressEl, errorsEl, logList, updList]) clear(el);
    logSummary.textContent = "events (0)"; updSummary.textContent = "updates (0)";
    for (const m of snap.messages || []) { newBubble(m); if (m.final) bubbles.get(m.id).el.classList.add("lgnb-final"); }
    for (const p of snap.progress || []) apply({ ...p, kind: "progress" });
    for (const p of snap.log || []) apply({ ...p, kind: "log" });
    for (const p of snap.updates || []) apply({ ...p, kind: "update" });
    for (const p of snap.errors || []) apply({ ...p, kind: "error" });
    messagesEl.scrollTop = messagesEl.scrollHeight;
  }

  return { messagesEl, progressEl, errorsEl, logEl, updEl, apply, load };
}
