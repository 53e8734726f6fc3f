// The DOM of a run's content — message bubbles, progress bars, event log, state updates,
// errors — built from the model-level store (store.js) and then changed patch by patch.
// Streamed text is appended as a new Text node per batch (appending to one ever-longer node
// costs time proportional to its length); every string is text, never HTML. Following the
// newest message (scrolling to the bottom) happens once per frame and never forces a layout
// while a batch is applied. The event log and the update list hold at most the store's
// caps (the kernel's numbers) of rows: older rows leave the DOM, and a line says how many.
import { h, jsonText, clear } from "./dom.js";
import { foldedValue } from "./state-panel.js";

const ROLE = { ai: "assistant", human: "user", tool: "tool", system: "system" };

/** `store` (store.js) gives the row caps and how many rows it dropped. */
export function createContent(store) {
  const messagesEl = h("div", { class: "lgnb-messages", "data-testid": "messages" });
  const progressEl = h("div", { class: "lgnb-progress-list" });
  const errorsEl = h("div", { class: "lgnb-errors" });
  const logList = h("div", { class: "lgnb-list" });
  const updList = h("div", { class: "lgnb-list" });
  const logSummary = h("summary", { text: "events (0)" });
  const updSummary = h("summary", { text: "updates (0)" });
  const logDropped = h("div", { class: "lgnb-dropped", "data-testid": "log-dropped", style: "display:none" });
  const updDropped = h("div", { class: "lgnb-dropped", "data-testid": "updates-dropped", style: "display:none" });
  const logEl = h("details", { class: "lgnb-section", "data-testid": "events" }, logSummary, logDropped, logList);
  const updEl = h("details", { class: "lgnb-section", "data-testid": "updates" }, updSummary, updDropped, updList);

  let bubbles = new Map(), bars = new Map();
  const lists = {
    log: { list: logList, summary: logSummary, note: logDropped, noun: "events" },
    updates: { list: updList, summary: updSummary, note: updDropped, noun: "updates" },
  };
  // Add a row to a bounded list, drop the oldest rows beyond the cap, and say how many
  // rows went (`dropped`: the store's count, or the snapshot's on a reload).
  function addRow(name, row, dropped) {
    const { list, summary, note, noun } = lists[name];
    list.append(row);
    const cap = store.caps[name];
    while (list.childElementCount > cap) list.firstElementChild.remove();
    const shown = list.childElementCount, gone = Number(dropped?.[name]) || 0;
    summary.textContent = gone ? `${noun} (${(shown + gone).toLocaleString("en-US")}, the latest ${shown} shown)` : `${noun} (${shown})`;
    note.textContent = gone ? `${gone.toLocaleString("en-US")} older ${noun} dropped: the kernel and this page keep the latest ${cap}.` : "";
    note.style.display = gone ? "" : "none";
  }

  // Follow the newest text unless the reader scrolled up; checked once per frame.
  let follow = true, autoTop = 0, frame = 0;
  messagesEl.addEventListener("scroll", () => {
    const top = messagesEl.scrollTop;
    if (follow && top >= autoTop - 1) return; // our own scroll to the bottom
    follow = messagesEl.scrollHeight - top - messagesEl.clientHeight < 30;
  }, { passive: true });
  function toBottom() {
    follow = true;
    messagesEl.scrollTop = messagesEl.scrollHeight;
    autoTop = messagesEl.scrollTop;
  }
  function stickToBottom() {
    if (frame) return;
    frame = requestAnimationFrame(() => { frame = 0; if (follow) toBottom(); });
  }

  // A long streamed text is kept as a column of blocks ("segments"): the browser then lays
  // out only the open last block when a batch arrives, not the whole text (one block with
  // 100k characters costs ~100 ms of layout per frame). A block is closed after a line
  // break once it holds SEGMENT characters (invisible: pre-wrap breaks there anyway), or,
  // for text without line breaks, after a space once it holds 4 × SEGMENT (one early
  // line end per 16k characters).
  const SEGMENT = 4096;
  function segment(bubble) {
    const seg = h("div", { class: "lgnb-seg" });
    bubble.textEl.append(seg);
    bubble.seg = seg; bubble.segLength = 0;
    return seg;
  }
  function setText(bubble, text) {
    bubble.textEl.replaceChildren();
    segment(bubble);
    appendText(bubble, text);
  }
  function splitAt(bubble, text) {
    const room = SEGMENT - bubble.segLength, hard = 4 * SEGMENT - bubble.segLength;
    if (text.length < room) return -1;
    const nl = text.indexOf("\n", Math.max(0, room - 1));
    if (nl >= 0 && nl < hard) return nl + 1;
    if (text.length < hard) return -1;
    const sp = text.indexOf(" ", Math.max(0, hard - 1));
    return sp >= 0 ? sp + 1 : -1;
  }
  function appendText(bubble, text) {
    while (text) {
      const cut = splitAt(bubble, text);
      const head = cut < 0 ? text : text.slice(0, cut);
      if (bubble.seg.childNodes.length >= 64) bubble.seg.normalize(); // few nodes, rare merge
      bubble.seg.append(document.createTextNode(head));
      bubble.segLength += head.length;
      if (cut < 0) return;
      segment(bubble);
      text = text.slice(cut);
    }
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
    const textEl = h("div", { class: "lgnb-text" });
    const toolsEl = h("div", { class: "lgnb-tools" });
    const where = p.task || (p.node && p.node !== "input" ? p.node : null); // "interview #2:ask": one of parallel copies
    const who = [ROLE[p.type] || p.type, where, p.name].filter(Boolean).join(" · ");
    const el = h("div", { class: `lgnb-bubble lgnb-${p.type || "ai"}`, "data-msg-id": p.id },
      h("div", { class: "lgnb-who", text: who }), textEl, toolsEl);
    const bubble = { el, textEl, toolsEl, tools: new Map(), seg: null, segLength: 0 };
    setText(bubble, p.content || "");
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

  function apply(p, dropped) {
    switch (p.kind) {
      case "msg.new": newBubble(p); stickToBottom(); break;
      case "msg.delta": { const b = bubbles.get(p.id); if (b) { appendText(b, p.text); stickToBottom(); } break; }
      case "tool.delta": {
        const b = bubbles.get(p.id); if (!b) break;
        const tool = toolEl(b, p.index ?? 0);
        if (p.name) tool.name.textContent = p.name;
        tool.args.appendData(p.args || "");
        break;
      }
      case "msg.final": {
        const b = bubbles.get(p.id); if (!b) break;
        if (typeof p.content === "string" && p.content !== b.textEl.textContent) setText(b, p.content);
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
        addRow("log", h("div", { class: "lgnb-row" },
          h("span", { class: "lgnb-tag", text: p.task || p.node || unattributed(p) }), h("pre", { class: "lgnb-json", text: jsonText(p.payload) })),
        dropped ?? store.dropped);
        break;
      case "update":
        addRow("updates", h("div", { class: "lgnb-row" },
          h("span", { class: "lgnb-tag", text: `step ${p.step} · ${p.task || p.node}` }), foldedValue(p.delta)),  // folded by the kernel
        dropped ?? store.dropped);
        break;
      case "error":
        errorsEl.append(h("div", { class: "lgnb-error", "data-testid": "error" },
          h("b", { text: `${p.type || "Error"}${p.node ? ` in node ${p.node}` : ""}: ` }),
          h("span", { class: "lgnb-error-message", text: p.message || "" })));
        break;
      default:
        console.warn("lgnb: unknown patch", p.kind);
    }
  }

  // a custom event whose writer the stream does not name: its namespace and root step
  function unattributed(p) {
    return typeof p.step === "number" ? [p.ns, `step ${p.step}`].filter(Boolean).join(" · ") : "custom";
  }

  function load(snap) {
    if (!snap || typeof snap !== "object") return;
    bubbles = new Map(); bars = new Map();
    for (const el of [messagesEl, progressEl, errorsEl, logList, updList]) clear(el);
    logSummary.textContent = "events (0)"; updSummary.textContent = "updates (0)";
    for (const { note } of Object.values(lists)) { note.textContent = ""; note.style.display = "none"; }
    for (const m of snap.messages || []) { newBubble(m); if (m.final) bubbles.get(m.id).el.classList.add("lgnb-final"); }
    for (const p of snap.progress || []) apply({ ...p, kind: "progress" });
    // rows beyond the cap at the snapshot's start count as dropped before it
    const early = (name, rows) => Math.max(0, rows.length - store.caps[name]);
    const log = snap.log || [], updates = snap.updates || [];
    const dropped = { log: (Number(snap.dropped?.log) || 0) + early("log", log),
      updates: (Number(snap.dropped?.updates) || 0) + early("updates", updates) };
    for (const p of log.slice(-store.caps.log)) apply({ ...p, kind: "log" }, dropped);
    for (const p of updates.slice(-store.caps.updates)) apply({ ...p, kind: "update" }, dropped);
    for (const p of snap.errors || []) apply({ ...p, kind: "error" });
    toBottom();
  }

  return { messagesEl, progressEl, errorsEl, logEl, updEl, apply, load };
}
