// Approval forms for pending interrupts. The kernel describes each form (synced trait
// `forms`, built by lgnb/widgets/_forms.py): parts (one per tool call / question), each with
// choices (buttons) and inputs (fields generated from a schema or the tool's arguments).
// The page only draws and sends what was picked:
//   {kind: "answer", id, interrupt_id, picks: [{part, choice, inputs: {name: raw}}], hold}
// The kernel computes the value, validates it, checks the question is still pending and
// resumes keyed by interrupt id; it answers {kind: "resume-result", id, interrupt_id, ok,
// error?, errors?: {"<part>.<input>": message}, stale?, held?}. Several open questions:
// answers are held and sent together ({kind: "send_held", id, ids?}) or one by one.
// Answered forms collapse into lines from the `answers` trait. Everything is text.
import { h, jsonText } from "./dom.js";

const RESTARTED = "kernel restarted: re-run the cell";
const SLOW_MS = 8000;

// `canContinue`: the host answers {kind: "continue"} (the run view; the lens has its own
// Step / Run buttons at a breakpoint).
export function createForms({ model, canContinue = false }) {
  const bar = h("div", { class: "lgnb-forms-bar", "data-testid": "forms-bar" });
  const list = h("div", { class: "lgnb-forms" });
  const record = h("div", { class: "lgnb-answers", "data-testid": "answers" });
  const errorEl = h("div", { class: "lgnb-form-error", "data-testid": "form-error", role: "alert" });
  const el = h("div", { class: "lgnb-interrupts", "data-testid": "interrupts" }, errorEl, bar, list, record);
  let shown = null; // JSON of the forms drawn (redrawn only when it changes: typed text survives)
  let busy = false, dead = false, lastStatus = null, nextRequest = 1;
  let continueBtn = null; // the breakpoint's button, while one is shown
  const waiting = new Map(); // request id → {iid, timer}
  const views = new Map(); // interrupt id → {note, setErrors, controls, form}

  function controlsOff() { return busy || dead || model.get("status") !== "interrupted"; }
  function paintControls() {
    const off = controlsOff();
    for (const v of views.values()) for (const c of v.controls) c.disabled = off || c.dataset.stale === "1" || (c.dataset.needsAll === "1" && !v.ready());
    for (const b of bar.querySelectorAll("button")) b.disabled = off;
    if (continueBtn) continueBtn.disabled = off;
    list.classList.toggle("lgnb-forms-busy", busy);
  }
  function showError(text) {
    errorEl.textContent = text || "";
    errorEl.style.display = errorEl.textContent ? "" : "none";
  }
  function noteAll(text) { for (const v of views.values()) v.note(text, "error"); }

  function post(message, iid) {
    if (dead) { if (iid) views.get(iid)?.note(RESTARTED, "error"); else showError(RESTARTED); return false; }
    const id = nextRequest++;
    const timer = setTimeout(() => {
      if (!waiting.has(id)) return;
      const text = "no answer from the kernel yet: it may be busy running a cell (if it restarted: re-run the cell)";
      if (iid) views.get(iid)?.note(text, "error"); else showError(text);
    }, SLOW_MS);
    waiting.set(id, { iid, timer, hold: !!message.hold });
    try {
      model.send({ ...message, id });
    } catch (err) {
      clearTimeout(timer);
      waiting.delete(id);
      dead = true;
      noteAll(RESTARTED);
      paintControls();
      return false;
    }
    return true;
  }

  function submit(form, picks) {
    if (busy || dead) { if (dead) views.get(form.id)?.note(RESTARTED, "error"); return; }
    const hold = (model.get("forms") || []).length > 1;
    showError("");
    views.get(form.id)?.note(hold ? "checking…" : "sending…", "info");
    if (!hold) busy = true; // one resume at a time: every control off until the kernel answers
    else views.get(form.id).pending = true;
    if (!post({ kind: "answer", interrupt_id: form.id, picks, hold }, form.id)) busy = false;
    paintControls();
  }

  function sendHeld(ids) {
    if (busy || dead) return;
    busy = true;
    if (!post(ids ? { kind: "send_held", ids } : { kind: "send_held" }, ids?.length === 1 ? ids[0] : null)) busy = false;
    paintControls();
  }

  // A static breakpoint (interrupt_before / interrupt_after): no question, nothing to
  // answer. Say where the run stands and offer to go on ({kind: "continue", id}); the state
  // can be changed first from code (update_state), as the lessons do.
  // A node that raised NodeInterrupt (deprecated) asks nothing either: its words are shown
  // (as text), and going on runs the node again, which stops again unless the state changed.
  function drawBreakpoint(bp) {
    const next = Array.isArray(bp.next) ? bp.next.map(String).join(", ") : "";
    const stopped = Array.isArray(bp.stopped) ? bp.stopped : [];
    const where = stopped.length ? (next ? `stopped by the node · next: ${next}` : "stopped by the node")
      : next ? `paused at a breakpoint · next: ${next}` : "paused at a breakpoint";
    const said = stopped.map((s) => h("div", { class: "lgnb-breakpoint-says", "data-testid": "stopped-says",
      text: `${String(s.node || "")}${s.node ? ": " : ""}${String(s.says ?? "")}` }));
    if (!canContinue) return h("div", { class: "lgnb-interrupt", text: where }, ...said);
    continueBtn = h("button", { class: "lgnb-btn lgnb-btn-primary lgnb-continue", type: "button",
      "data-testid": "continue", text: "continue ▶", on: { click: () => goOn() } });
    const hint = stopped.length
      ? "NodeInterrupt asks nothing: continue runs the node again, and it stops again unless its state "
        + "changes. Change it first with graph.update_state(config, values) in a cell, then continue."
      : "continue runs on from here; to change the state first, call "
        + "graph.update_state(config, values, as_node=...) in a cell, then continue.";
    return h("div", { class: "lgnb-interrupt lgnb-breakpoint", "data-testid": "breakpoint" },
      h("div", { class: "lgnb-breakpoint-where", text: where }), ...said,
      h("div", { class: "lgnb-hint", text: hint }),
      continueBtn);
  }
  function goOn() {
    if (busy || dead) { if (dead) showError(RESTARTED); return; }
    busy = true;
    showError("");
    if (!post({ kind: "continue" }, null)) busy = false;
    paintControls();
  }

  const READONLY_HINT = "too long to edit here: sent back whole, as it was; "
    + "to change it, answer in code with Command(resume=...)";

  function inputEl(spec) {
    const v = spec.value;
    let c;
    if (spec.type === "boolean") {
      c = h("input", { type: "checkbox" });
      c.checked = v === true;
    } else if (spec.type === "enum") {
      c = h("select", {}, h("option", { value: "", text: spec.required ? "— choose —" : "(none)" }),
        ...(spec.options || []).map((o, i) => h("option", { value: String(i), text: o.label })));
      const at = (spec.options || []).findIndex((o) => JSON.stringify(o.value) === JSON.stringify(v));
      c.value = at >= 0 ? String(at) : "";
    } else if (spec.type === "text" || spec.type === "lines" || spec.type === "json") {
      c = h("textarea", { rows: spec.type === "text" ? 2 : 3 });
      c.value = v === null || v === undefined ? "" : spec.type === "lines" && Array.isArray(v) ? v.join("\n")
        : spec.type === "json" ? jsonText(v) : String(v);
    } else {
      c = h("input", { type: "text", inputmode: spec.type === "string" ? undefined : "decimal" });
      c.value = v === null || v === undefined ? "" : String(v);
    }
    // a value too long to edit on the page comes cut: shown, not editable, kept whole
    if (spec.readonly) c.readOnly = true;
    c.classList.add("lgnb-form-input");
    c.setAttribute("aria-label", spec.label);
    c.dataset.name = spec.name;
    return c;
  }
  function rawOf(c) {
    if (c.type === "checkbox") return c.checked;
    return c.value;
  }

  function drawPart(form, part, pi, ctx) {
    const inputs = new Map(); // name → {row, control, err}
    const rows = [];
    const groups = new Map();
    for (const spec of part.inputs || []) {
      const control = inputEl(spec);
      const err = h("div", { class: "lgnb-field-error", role: "alert" });
      const hint = spec.type === "lines" ? " (one per line)" : spec.type === "json" ? " (JSON)" : "";
      const row = h("label", { class: "lgnb-field", "data-field": spec.name },
        h("span", { class: "lgnb-field-label", text: `${spec.label}${spec.required ? " *" : ""}${hint}` }),
        control, spec.description ? h("span", { class: "lgnb-hint", text: spec.description }) : null,
        spec.readonly ? h("span", { class: "lgnb-hint", "data-testid": "readonly-hint", text: READONLY_HINT }) : null, err);
      inputs.set(spec.name, { row, control, err });
      ctx.controls.push(control);
      if (control.tagName === "INPUT" && control.type === "text") {
        control.addEventListener("keydown", (ev) => { if (ev.key === "Enter") ctx.enter(pi); });
      }
      if (spec.group) {
        if (!groups.has(spec.group)) {
          const box = h("details", { class: "lgnb-field-group" }, h("summary", { text: spec.group }));
          groups.set(spec.group, box);
          rows.push(box);
        }
        groups.get(spec.group).append(row);
      } else rows.push(row);
    }
    const fieldsBox = h("div", { class: "lgnb-form-inputs" }, ...rows);
    let chosen = null;
    const state = { decided: null };
    function visible(names) {
      const set = new Set(names);
      for (const [name, x] of inputs) x.row.style.display = set.has(name) ? "" : "none";
      for (const box of groups.values()) box.style.display = [...box.querySelectorAll("[data-field]")].some((r) => r.style.display !== "none") ? "" : "none";
      fieldsBox.style.display = names.length ? "" : "none";
      if (names.length) for (const box of groups.values()) if (box.style.display !== "none" && ctx.hasErrors) box.open = true;
    }
    const allNames = [...inputs.keys()];
    visible(part.inputs_open ? allNames : []);
    const confirm = h("button", { class: "lgnb-btn lgnb-btn-primary lgnb-form-confirm", type: "button", text: "",
      on: { click: () => decide(chosen) } });
    confirm.style.display = "none";
    ctx.controls.push(confirm);
    const picked = h("span", { class: "lgnb-meta lgnb-form-picked" });
    function pick(choice) {
      const names = part.inputs_open ? allNames : choice.inputs || [];
      const raw = {};
      for (const n of names) if (inputs.has(n)) raw[n] = rawOf(inputs.get(n).control);
      return { part: pi, choice: choice.key, inputs: raw };
    }
    function decide(choice) {
      if (!choice) return;
      state.decided = pick(choice);
      picked.textContent = form.collect ? `decision: ${choice.label}` : "";
      for (const b of buttons) b.setAttribute("aria-pressed", b.dataset.key === choice.key ? "true" : "false");
      ctx.decided(pi);
    }
    const buttons = (part.choices || []).map((choice, i) => {
      const b = h("button", { class: `lgnb-btn lgnb-form-btn${i === 0 ? " lgnb-btn-primary" : ""}`, type: "button",
        text: choice.label, "data-key": choice.key, on: { click: () => {
          if (!part.inputs_open && (choice.inputs || []).length) {
            chosen = choice;
            visible(choice.inputs);
            confirm.textContent = choice.confirm || "Send";
            confirm.style.display = "";
            for (const x of buttons) x.setAttribute("aria-pressed", x === b ? "true" : "false");
            inputs.get(choice.inputs[0])?.control.focus();
            return;
          }
          chosen = null;
          confirm.style.display = "none";
          if (!part.inputs_open) visible([]);
          decide(choice);
        } } });
      return b;
    });
    ctx.controls.push(...buttons);
    ctx.enterers[pi] = () => (part.inputs_open && buttons.length === 1 ? buttons[0].click() : chosen && confirm.click());
    ctx.setters.push((errors) => {
      for (const [name, x] of inputs) {
        const msg = errors[`${pi}.${name}`] || "";
        x.err.textContent = msg;
        x.row.classList.toggle("lgnb-field-bad", !!msg);
        if (msg) { x.row.style.display = ""; fieldsBox.style.display = ""; x.row.closest("details")?.setAttribute("open", ""); }
      }
    });
    ctx.states[pi] = state;
    const shownBox = (part.shown || []).length ? h("dl", { class: "lgnb-form-fields" }, ...part.shown.flatMap((f) => [
      h("dt", { text: f.key }), h("dd", {}, h("div", { class: "lgnb-form-value", text: f.text }))])) : null;
    return h("div", { class: "lgnb-form-part", "data-part": String(pi) },
      part.title ? h("div", { class: "lgnb-form-part-title", text: part.title }) : null,
      part.description ? h("div", { class: "lgnb-form-desc", text: part.description }) : null,
      shownBox, fieldsBox,
      h("div", { class: "lgnb-form-actions" }, ...buttons, picked), h("div", { class: "lgnb-form-confirm-row" }, confirm));
  }

  function draw(form) {
    const noteEl = h("div", { class: "lgnb-form-note", "data-testid": "form-note", role: "status" });
    const head = h("div", { class: "lgnb-form-head" },
      h("span", { class: "lgnb-form-title", text: form.title || "Approval needed" }),
      form.node ? h("span", { class: "lgnb-form-node", text: `in node ${form.node}` }) : null,
      h("span", { class: "lgnb-meta lgnb-form-id", text: form.id ? `interrupt ${form.id}` : "interrupt" }));
    const body = (form.fields || []).length
      ? h("dl", { class: "lgnb-form-fields" }, ...form.fields.flatMap((f) => [
        h("dt", { text: f.key }), h("dd", {}, h("div", { class: "lgnb-form-value", text: f.text }))]))
      : form.text ? h("div", { class: "lgnb-form-value lgnb-form-text", text: form.text }) : null;
    const view = { form, controls: [], pending: false,
      note(text, tone) { noteEl.textContent = text || ""; noteEl.dataset.tone = tone || ""; noteEl.style.display = text ? "" : "none"; },
      ready: () => true };
    view.note("");
    views.set(form.id, view);
    const box = h("div", { class: "lgnb-interrupt lgnb-form", "data-interrupt-id": form.id, "data-kind": form.kind || "" });
    if (form.resumable === false) {
      // no buttons; a form drawn as cards (tool calls) still shows what each card asks
      const cards = body ? [] : (form.parts || []).map((p) => h("div", { class: "lgnb-form-part" },
        p.title ? h("div", { class: "lgnb-form-part-title", text: p.title }) : null,
        p.description ? h("div", { class: "lgnb-form-desc", text: p.description }) : null,
        (p.shown || []).length ? h("dl", { class: "lgnb-form-fields" }, ...p.shown.flatMap((f) => [
          h("dt", { text: f.key }), h("dd", {}, h("div", { class: "lgnb-form-value", text: f.text }))])) : null));
      box.append(head, body || "", ...cards, h("div", { class: "lgnb-hint", text: "No buttons: this graph has no checkpointer, so the run cannot be resumed (see above)." }));
      return box;
    }
    const parts = form.parts || [];
    const ctx = { controls: view.controls, states: [], setters: [], enterers: [], hasErrors: false,
      enter: (pi) => ctx.enterers[pi]?.(),
      decided: () => { if (!form.collect) send(); else paintControls(); } };
    const partEls = parts.map((p, i) => drawPart(form, p, i, ctx));
    view.setErrors = (errors) => { for (const s of ctx.setters) s(errors || {}); };
    view.ready = () => ctx.states.every((s) => s && s.decided);
    function send() {
      if (!view.ready()) return;
      view.setErrors({});
      submit(form, ctx.states.map((s) => s.decided));
    }
    const held = h("div", { class: "lgnb-form-held", "data-testid": "form-held" });
    view.held = held;
    let sendAll = null;
    if (form.collect) {
      sendAll = h("button", { class: "lgnb-btn lgnb-btn-primary lgnb-form-send-all", type: "button",
        text: `Send ${parts.length} decisions`, "data-needs-all": "1", on: { click: send } });
      view.controls.push(sendAll);
    }
    box.append(head, body || "", ...partEls, sendAll ? h("div", { class: "lgnb-form-confirm-row" }, sendAll) : "", held, noteEl);
    return box;
  }

  function drawHeld() {
    const forms = model.get("forms") || [];
    const held = model.get("held") || {};
    for (const [iid, v] of views) {
      if (!v.held) continue;
      const summary = held[iid];
      v.held.replaceChildren();
      if (summary !== undefined) {
        const now = h("button", { class: "lgnb-btn lgnb-form-send-now", type: "button", text: "send now",
          on: { click: () => sendHeld([iid]) } });
        v.controls.push(now);
        v.held.append(h("span", { text: `ready: ${summary} (sent with the others) ` }), now);
      }
    }
    bar.replaceChildren();
    if (forms.length > 1 && model.get("status") === "interrupted") {
      const open = forms.filter((f) => held[f.id] === undefined);
      const ready = forms.length - open.length;
      bar.append(h("span", { class: "lgnb-meta", text: `${forms.length} questions: ${open.length} open (${open.map((f) => f.node || f.id).join(", ") || "none"}), ${ready} ready` }));
      if (ready) bar.append(h("button", { class: "lgnb-btn lgnb-btn-primary lgnb-send-held", type: "button",
        text: `Send ${ready} ready answer${ready > 1 ? "s" : ""}`, on: { click: () => sendHeld(null) } }));
    }
  }

  function drawRecord() {
    const answers = model.get("answers") || [];
    record.replaceChildren(...answers.map((a) => h("div", { class: "lgnb-answer", "data-interrupt-id": a.interrupt_id },
      a.asked ? h("span", { class: "lgnb-answer-asked", text: `“${a.asked}” ` }) : null,
      h("span", { class: "lgnb-answer-by", text: `answered by ${a.by === "page" ? "the page" : a.by} at ${a.at}` }),
      a.node ? h("span", { class: "lgnb-meta", text: ` in ${a.node}` }) : null,
      h("span", { text: `: ${a.summary}` }))));
  }

  function update() {
    const status = model.get("status");
    const forms = model.get("forms") || [];
    const key = JSON.stringify(forms);
    if (status !== lastStatus) busy = false; // the run moved (resumed, paused, ended): answerable again
    lastStatus = status;
    if (key !== shown) {
      shown = key;
      views.clear();
      list.replaceChildren(...forms.map(draw));
    }
    const bp = model.get("breakpoint") || {};
    const stopped = Array.isArray(bp.stopped) && bp.stopped.length > 0; // only NodeInterrupts pending
    if (status === "interrupted" && forms.length === 0 && ((model.get("interrupts") || []).length === 0 || stopped)) {
      list.replaceChildren(drawBreakpoint(bp));
      shown = null;
    } else {
      continueBtn = null;
    }
    drawHeld();
    drawRecord();
    showError(model.get("form_error"));
    if (dead) noteAll(RESTARTED);
    paintControls();
  }

  function onMessage(msg) {
    if (msg?.kind !== "resume-result" || !waiting.has(msg.id)) return;
    const { timer, hold } = waiting.get(msg.id);
    clearTimeout(timer);
    waiting.delete(msg.id);
    const v = msg.interrupt_id ? views.get(msg.interrupt_id) : null;
    if (v) v.pending = false;
    if (!msg.ok) {
      if (v) {
        v.note(msg.error || "could not resume", "error");
        v.setErrors?.(msg.errors || {});
        if (msg.stale) for (const c of v.controls) c.dataset.stale = "1";
      } else showError(msg.error || "could not resume");
      busy = false;
    } else if (v) {
      v.note(msg.held ? "" : "sent", "info");
      if (hold) busy = false;
    }
    paintControls();
  }
  function onCommLive() {
    // jupyter-widgets sets comm_live to false when the kernel restarts or the comm closes
    dead = true;
    busy = false;
    noteAll(RESTARTED);
    showError(RESTARTED);
    paintControls();
  }
  model.on("msg:custom", onMessage);
  model.on("comm_live_update", onCommLive);
  const names = ["forms", "form_error", "status", "interrupts", "answers", "held", "breakpoint"];
  for (const name of names) model.on(`change:${name}`, update);
  update();
  return {
    el,
    dispose() {
      model.off("msg:custom", onMessage);
      model.off("comm_live_update", onCommLive);
      for (const name of names) model.off(`change:${name}`, update);
      for (const { timer } of waiting.values()) clearTimeout(timer);
    },
  };
}
