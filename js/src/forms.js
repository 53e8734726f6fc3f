// Approval forms for pending interrupts. The kernel describes each form (synced trait
// `forms`, built by lgnb/widgets/_forms.py): interrupt id, node, the payload as text fields,
// the buttons and whether a free-text answer fits. A click sends
// {kind: "resume", id, interrupt_id, value}; the kernel answers {kind: "resume-result", id,
// ok, error?}. While a resume runs every button is disabled; the form goes away when the
// kernel's `forms` no longer lists it. Everything is set as text, never HTML.
import { h } from "./dom.js";

export function createForms({ model }) {
  const list = h("div", { class: "lgnb-forms" });
  const errorEl = h("div", { class: "lgnb-form-error", "data-testid": "form-error", role: "alert" });
  const el = h("div", { class: "lgnb-interrupts", "data-testid": "interrupts" }, errorEl, list);
  let shown = null; // JSON of the forms drawn (redrawn only when it changes: typed text survives)
  let busy = false, lastStatus = null, nextRequest = 1;
  const controls = [];
  const waiting = new Set();

  function setBusy(on) {
    busy = on;
    paintControls();
  }
  function paintControls() {
    const off = busy || model.get("status") !== "interrupted";
    for (const c of controls) c.disabled = off;
    list.classList.toggle("lgnb-forms-busy", busy);
  }
  function showError(text) {
    errorEl.textContent = text || "";
    errorEl.style.display = errorEl.textContent ? "" : "none";
  }

  function send(form, value) {
    if (busy) return;
    const id = nextRequest++;
    waiting.add(id);
    showError("");
    setBusy(true);
    model.send({ kind: "resume", id, interrupt_id: form.id, value });
  }

  function draw(form) {
    const head = h("div", { class: "lgnb-form-head" },
      h("span", { class: "lgnb-form-title", text: "Approval needed" }),
      form.node ? h("span", { class: "lgnb-form-node", text: `in node ${form.node}` }) : null,
      h("span", { class: "lgnb-meta lgnb-form-id", text: form.id ? `interrupt ${form.id}` : "interrupt" }));
    const body = (form.fields || []).length
      ? h("dl", { class: "lgnb-form-fields" }, ...form.fields.flatMap((f) => [
        h("dt", { text: f.key }), h("dd", {}, h("div", { class: "lgnb-form-value", text: f.text }))]))
      : h("div", { class: "lgnb-form-value lgnb-form-text", text: form.text ?? "" });
    if (form.resumable === false) {
      return h("div", { class: "lgnb-interrupt lgnb-form", "data-interrupt-id": form.id }, head, body,
        h("div", { class: "lgnb-hint", text: "No buttons: this graph has no checkpointer, so the run cannot be resumed (see above)." }));
    }
    const buttons = (form.actions || []).map((a, i) => h("button", {
      class: `lgnb-btn lgnb-form-btn${i === 0 ? " lgnb-btn-primary" : ""}`, type: "button", text: a.label,
      on: { click: () => send(form, a.value) } }));
    controls.push(...buttons);
    let free = null;
    if (form.free_text) {
      const input = h("input", { class: "lgnb-form-input", type: "text", placeholder: "or answer in words…",
        "aria-label": "free-form answer" });
      const submit = h("button", { class: "lgnb-btn lgnb-form-send", type: "button", text: "Send",
        on: { click: () => send(form, input.value) } });
      input.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && !submit.disabled) submit.click(); });
      controls.push(input, submit);
      free = h("div", { class: "lgnb-form-free" }, input, submit);
    }
    return h("div", { class: "lgnb-interrupt lgnb-form", "data-interrupt-id": form.id },
      head, body, h("div", { class: "lgnb-form-actions" }, ...buttons), free);
  }

  function update() {
    const status = model.get("status");
    const forms = model.get("forms") || [];
    const key = JSON.stringify(forms);
    if (status === "interrupted" && lastStatus !== "interrupted") busy = false; // paused again: answerable
    lastStatus = status;
    if (key !== shown) {
      shown = key;
      controls.length = 0;
      list.replaceChildren(...forms.map(draw));
    }
    if (status === "interrupted" && forms.length === 0 && (model.get("interrupts") || []).length === 0) {
      list.replaceChildren(h("div", { class: "lgnb-interrupt", text: "paused at a breakpoint" }));
      shown = null;
    }
    showError(model.get("form_error"));
    paintControls();
  }

  function onMessage(msg) {
    if (msg?.kind !== "resume-result" || !waiting.has(msg.id)) return;
    waiting.delete(msg.id);
    if (!msg.ok) {
      showError(msg.error || "could not resume");
      setBusy(false);
    }
  }
  model.on("msg:custom", onMessage);
  for (const name of ["forms", "form_error", "status", "interrupts"]) model.on(`change:${name}`, update);
  update();
  return {
    el,
    dispose() {
      model.off("msg:custom", onMessage);
      for (const name of ["forms", "form_error", "status", "interrupts"]) model.off(`change:${name}`, update);
    },
  };
}
