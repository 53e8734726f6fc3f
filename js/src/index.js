// The lgnb front-end runtime: the one module (views + Graphviz WASM) shared by every lgnb
// view in a notebook. It is loaded by the hidden Runtime widget; each view widget carries
// a tiny module that finds these exports and calls:
//   attach(kind, model)                — at model creation (anywidget initialize)
//   render(kind, {model, el, signal})  — per view; returns a cleanup function.
import { injectStyles } from "./styles.js";
import { renderRun } from "./run.js";
import { renderGraph } from "./graph-view.js";
import { renderHistory } from "./history-view.js";
import { renderLens } from "./lens-view.js";
import { attachRun } from "./store.js";
import { protocolProblem } from "./protocol.js";

const VIEWS = { run: renderRun, graph: renderGraph, history: renderHistory, lens: renderLens };
const ATTACH = { run: attachRun };
const states = new Map(); // model _uid → model-level state
export const version = "0.1.0";

export function attach(kind, model) {
  const uid = model.get("_uid");
  if (!states.has(uid)) states.set(uid, ATTACH[kind] ? ATTACH[kind](model) : {});
  return states.get(uid);
}

export function render(kind, { model, el, signal }) {
  // A bundle and a kernel of different protocol versions would misread each other: say so.
  const problem = protocolProblem(model);
  if (problem) {
    el.textContent = problem;
    return () => {};
  }
  injectStyles();
  const view = VIEWS[kind];
  if (!view) {
    el.textContent = `lgnb: unknown view kind ${JSON.stringify(kind)}`;
    return () => {};
  }
  const state = attach(kind, model);
  return view({ model, el, signal: signal ?? new AbortController().signal, state });
}

const exports = { attach, render, version };

function publish() {
  const KEY = Symbol.for("lgnb.runtime");
  const g = globalThis;
  if (!g[KEY]) {
    let resolve;
    const promise = new Promise((r) => (resolve = r));
    g[KEY] = { promise, resolve };
  }
  g[KEY].resolve(exports);
}

export default {
  initialize() {
    publish();
    return exports;
  },
};
