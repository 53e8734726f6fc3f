// Model-level run content: the same patch rules as lgnb/widgets/_store.py (both follow the
// protocol written down in lgnb/widgets/protocol.py; see ./protocol.js), kept per widget
// model from the moment the model exists (anywidget `initialize`), so no patch is missed
// before a view renders, and every view of the model renders the same data.
// The event log and the update list keep the latest `caps[name]` rows, the kernel's own
// numbers (the run view's `caps` trait), and count the rows they dropped.

import { PATCH_KINDS } from "./protocol.js";

/** The row limit of a bounded list: the kernel's number, or none when it sent none. */
function capOf(caps, name) {
  const n = caps?.[name];
  return Number.isInteger(n) && n > 0 ? n : Infinity;
}

const KNOWN = new Set(PATCH_KINDS);

/** A list row: the patch without its `kind` (as the kernel's snapshot holds it). */
function row(p) {
  const { kind, ...rest } = p;
  return rest;
}

function toolSlot(msg, index) {
  let call = msg.tool_calls.find((c) => c.index === index);
  if (!call) {
    call = { index, id: null, name: "", args: "" };
    msg.tool_calls.push(call);
  }
  return call;
}

export function createStore(caps = {}) {
  let seq = 0;
  let messages = new Map(), progress = new Map(), log = [], updates = [], errors = [];
  let dropped = { log: 0, updates: 0 };
  const limits = { log: capOf(caps, "log"), updates: capOf(caps, "updates") };
  function bounded(list, name, item) {
    list.push(item);
    if (list.length > limits[name]) {
      const extra = list.length - limits[name];
      list.splice(0, extra);
      dropped[name] += extra;
    }
  }
  const listeners = new Set();
  // A view that fails on one patch must not stop the others (nor the rest of the batch),
  // and must not fail silently: widget message handlers swallow exceptions.
  const emit = (event) => listeners.forEach((fn) => {
    try { fn(event); } catch (err) { console.error("lgnb: a view failed to apply", event.patch?.kind ?? event.type, err); }
  });

  // Apply one patch's data; false when it was skipped (unknown kind or no id: a newer
  // kernel's extras must not break this page). The rules are protocol.py's, as in _store.py.
  function applyData(p) {
    if (!KNOWN.has(p.kind) || p.id === undefined || p.id === null) {
      console.warn("lgnb: skipped a patch it cannot apply (kind %o, id %o): the kernel and this page speak different protocol versions?", p.kind, p.id);
      return false;
    }
    switch (p.kind) {
      case "msg.new":
        messages.set(p.id, { id: p.id, node: p.node ?? "", ns: p.ns ?? "", type: p.type ?? "ai", name: p.name ?? null,
          ...(p.task ? { task: p.task } : {}),
          content: p.content ?? "", tool_calls: (p.tool_calls ?? []).map((c) => ({ ...c })) });
        break;
      case "msg.delta": { const m = messages.get(p.id); if (m) m.content += p.text ?? ""; break; }
      case "tool.delta": {
        const m = messages.get(p.id); if (!m) break;
        const call = toolSlot(m, p.index ?? 0);
        if (p.name) call.name = p.name;
        if (p.call_id) call.id = p.call_id;
        call.args += p.args ?? "";
        break;
      }
      case "msg.final": {
        const m = messages.get(p.id); if (!m) break;
        m.content = p.content ?? m.content;
        if (p.tool_calls != null) m.tool_calls = p.tool_calls.map((c) => ({ ...c }));
        m.final = true;
        break;
      }
      case "progress":
        progress.set(p.id, { id: p.id, node: p.node ?? null, ns: p.ns ?? null, stage: p.stage ?? null,
          label: p.label ?? null, value: p.value ?? null });
        break;
      case "log": bounded(log, "log", row(p)); break;
      case "update": bounded(updates, "updates", row(p)); break;
      case "error": errors.push(row(p)); break;
    }
    return true;
  }

  return {
    get seq() { return seq; },
    /** Rows kept per bounded list ({log, updates}) and rows dropped so far (oldest first). */
    get caps() { return { ...limits }; },
    get dropped() { return { ...dropped }; },
    /** Apply a patch once (by seq) and tell the views. */
    apply(p) {
      if (typeof p.seq === "number") {
        if (p.seq <= seq) return;
        seq = p.seq;
      }
      if (applyData(p)) emit({ type: "patch", patch: p });
    },
    /** Replace everything with a kernel snapshot. */
    load(snap) {
      if (!snap || typeof snap !== "object") return;
      seq = snap.seq ?? 0;
      messages = new Map((snap.messages ?? []).map((m) => [m.id, { ...m, content: m.content ?? "",
        tool_calls: (m.tool_calls ?? []).map((c) => ({ ...c })) }]));
      progress = new Map((snap.progress ?? []).map((p) => [p.id, { ...p }]));
      log = []; updates = []; errors = [...(snap.errors ?? [])];
      dropped = { log: Number(snap.dropped?.log) || 0, updates: Number(snap.dropped?.updates) || 0 };
      for (const p of snap.log ?? []) bounded(log, "log", p);
      for (const p of snap.updates ?? []) bounded(updates, "updates", p);
      emit({ type: "reset" });
    },
    snapshot() {
      return { seq, messages: [...messages.values()], progress: [...progress.values()], log, updates, errors,
        dropped: { ...dropped } };
    },
    /** Every update of the node's latest step (one per task), oldest first. */
    lastUpdates(key) {
      let i = updates.length - 1;
      while (i >= 0 && updates[i].node !== key) i--;
      if (i < 0) return [];
      const step = updates[i].step;
      return updates.filter((u) => u.node === key && u.step === step).map((u) => u.delta);
    },
    lastUpdate(key) {
      for (let i = updates.length - 1; i >= 0; i--) if (updates[i].node === key) return updates[i].delta;
      return undefined;
    },
    subscribe(fn) { listeners.add(fn); return () => listeners.delete(fn); },
  };
}

// Page-wide counters for benchmarks and debugging (bench/bench_view.py reads them):
// per batch [kernel send time, page receive time, streamed chars so far] (s, s, n), bounded.
const stats = (globalThis.__lgnb_stats ??= { batches: 0, patches: 0, chars: 0, log: [] });
const MAX_LOG = 20000;

/** Model-level state of a run view: the store fed by the kernel's custom messages. */
export function attachRun(model) {
  const store = createStore(model.get("caps"));
  store.load(model.get("snapshot"));
  model.on("change:snapshot", () => {
    const snap = model.get("snapshot");
    // Only a newer snapshot replaces what the patches built (the end of a run sends both).
    if (snap && (snap.seq ?? 0) > store.seq) store.load(snap);
  });
  model.on("msg:custom", (msg) => {
    if (msg?.kind === "patches") {
      const received = Date.now() / 1000;
      for (const p of msg.patches) {
        store.apply(p);
        if (p.kind === "msg.delta") stats.chars += (p.text ?? "").length;
      }
      stats.batches += 1;
      stats.patches += msg.patches.length;
      if (typeof msg.t === "number" && stats.log.length < MAX_LOG) stats.log.push([msg.t, received, stats.chars]);
    } else if (msg?.kind === "snapshot") {
      store.load(msg.snapshot);
    }
  });
  model.send({ kind: "hello" });
  return { store };
}
