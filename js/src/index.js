// The lgnb front-end bundle: the one module (views + Graphviz WASM) shared by every lgnb
// view on a page. Each view widget carries a tiny loader (lgnb/widgets/_assets.py) that
// imports this module once per page and bundle hash, then calls:
//   attach(kind, model)                — at model creation (anywidget initialize)
//   render(kind, {model, el, signal})  — per view; returns a cleanup function.
import { injectStyles } from "./styles.js";
import { renderRun } from "./run.js";
import { renderGraph } from "./graph-view.js";
import { renderHistory } from "./history-view.js";
import { renderLens } from "./lens-view.js";
import { renderInbox } from "./inbox-view.js";
import { attachRun } from "./store.js";
import { protocolProblem } from "./protocol.js";

const VIEWS = { run: renderRun, graph: renderGraph, history: renderHistory, lens: renderLens, inbox: renderInbox };
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
  const view = VIEWS[kind];
  if (!view) {
    el.textContent = `lgnb: unknown view kind ${JSON.stringify(kind)}`;
    return () => {};
  }
  const unstyle = injectStyles(el);
  const state = attach(kind, model);
  const cleanup = view({ model, el, signal: signal ?? new AbortController().signal, state });
  return () => {
    if (typeof cleanup === "function") cleanup();
    unstyle();
  };
}

