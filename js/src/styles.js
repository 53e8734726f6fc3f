// Styles for all lgnb views. Each view puts them in its own element: a notebook host may
// render a view inside a shadow root (marimo does), where rules in document.head never apply.
const CSS = `
.lgnb-root { font: 13px/1.4 var(--jp-ui-font-family, system-ui, sans-serif); color: var(--jp-ui-font-color1, #1f2430);
  border: 1px solid var(--jp-border-color2, #dde1e8); border-radius: 8px; padding: 8px; background: var(--jp-layout-color1, #fff); }
.lgnb-header { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin-bottom: 6px; }
.lgnb-title { font-weight: 600; font-size: 14px; }
.lgnb-meta { color: var(--jp-ui-font-color2, #5b6578); font-size: 12px; }
.lgnb-status { padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #e5e7eb; color: #374151; }
.lgnb-status-running { background: #fef3c7; color: #92400e; }
.lgnb-status-done { background: #d1fae5; color: #065f46; }
.lgnb-status-error { background: #fee2e2; color: #991b1b; }
.lgnb-status-interrupted { background: #dbeafe; color: #1e40af; }
.lgnb-status-cancelled { background: #e5e7eb; color: #374151; }
.lgnb-btn { font: inherit; font-size: 12px; padding: 1px 8px; border: 1px solid #c5cbd6; border-radius: 4px; background: #f7f8fa; cursor: pointer; color: #1f2430; }
.lgnb-btn:hover { background: #eceff4; }
.lgnb-graph { position: relative; border: 1px solid var(--jp-border-color2, #e3e6ec); border-radius: 6px; background: var(--jp-layout-color0, #fbfcfe); }
.lgnb-toolbar { position: absolute; top: 4px; right: 4px; display: flex; gap: 4px; z-index: 1; }
.lgnb-canvas { height: 360px; overflow: hidden; cursor: grab; touch-action: none; }
.lgnb-canvas svg.lgnb-svg { width: 100%; height: 100%; display: block; user-select: none; }
.lgnb-svg g.node, .lgnb-svg g.cluster { cursor: pointer; }
.lgnb-svg g.node.lgnb-visited > path, .lgnb-svg g.node.lgnb-visited > polygon, .lgnb-svg g.node.lgnb-visited > ellipse { stroke: #2563eb; stroke-width: 1.6; }
.lgnb-svg g.node.lgnb-active > path, .lgnb-svg g.node.lgnb-active > polygon, .lgnb-svg g.node.lgnb-active > ellipse { fill: #fde68a; stroke: #d97706; stroke-width: 2.5; animation: lgnb-pulse 1s ease-in-out infinite alternate; }
.lgnb-svg g.edge.lgnb-taken > path { stroke: #2563eb; stroke-width: 2; }
.lgnb-svg g.edge.lgnb-taken > polygon { fill: #2563eb; stroke: #2563eb; }
@keyframes lgnb-pulse { from { stroke-opacity: 1; } to { stroke-opacity: 0.35; } }
.lgnb-graph-main { display: grid; grid-template-columns: minmax(0, 2fr) minmax(180px, 1fr); gap: 8px; }
.lgnb-run-main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.2fr); gap: 8px; }
.lgnb-details { font-size: 12px; padding: 6px; border: 1px solid var(--jp-border-color2, #e3e6ec); border-radius: 6px; display: flex; flex-direction: column; gap: 3px; overflow-wrap: anywhere; }
.lgnb-details-slot:empty { display: none; }
.lgnb-run-left .lgnb-details-slot { margin-top: 6px; }
.lgnb-details-title { font-weight: 600; }
.lgnb-hint { color: #6b7280; }
.lgnb-json { margin: 0; font: 11px/1.35 var(--jp-code-font-family, ui-monospace, monospace); white-space: pre-wrap; overflow-wrap: anywhere; max-height: 220px; overflow: auto; background: var(--jp-layout-color2, #f3f4f6); padding: 4px; border-radius: 4px; }
.lgnb-messages { height: 360px; overflow-y: auto; display: flex; flex-direction: column; gap: 6px; padding: 4px; border: 1px solid var(--jp-border-color2, #e3e6ec); border-radius: 6px; }
.lgnb-bubble { max-width: 92%; padding: 5px 9px; border-radius: 10px; background: #f1f5f9; align-self: flex-start; }
.lgnb-bubble.lgnb-human { background: #dbeafe; align-self: flex-end; }
.lgnb-bubble.lgnb-tool { background: #ecfdf5; font-family: var(--jp-code-font-family, ui-monospace, monospace); font-size: 12px; }
.lgnb-bubble.lgnb-system { background: #f5f3ff; }
.lgnb-who { font-size: 11px; color: #64748b; }
.lgnb-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.lgnb-tool { font: 12px var(--jp-code-font-family, ui-monospace, monospace); color: #7c2d12; overflow-wrap: anywhere; }
.lgnb-tool-name { font-weight: 600; }
.lgnb-tool-badge { font: 10px var(--jp-ui-font-family, sans-serif); background: #ffedd5; color: #9a3412; border-radius: 3px; padding: 0 4px; margin-right: 6px; }
.lgnb-progress-list { display: flex; flex-direction: column; gap: 4px; margin-top: 6px; }
.lgnb-progress-list:empty { display: none; }
.lgnb-bar { display: grid; grid-template-columns: minmax(80px, auto) 1fr 40px; gap: 8px; align-items: center; font-size: 12px; }
.lgnb-bar-track { height: 8px; background: #e5e7eb; border-radius: 4px; overflow: hidden; }
.lgnb-bar-fill { height: 100%; background: #3b82f6; transition: width 0.1s linear; }
.lgnb-bar-pct { text-align: right; color: #6b7280; }
.lgnb-error { color: #991b1b; background: #fef2f2; border: 1px solid #fecaca; border-radius: 6px; padding: 4px 8px; margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.lgnb-errors:empty { display: none; }
.lgnb-notice { color: #1e3a8a; background: #eff6ff; border: 1px solid #bfdbfe; border-radius: 6px; padding: 4px 8px; margin: 4px 0; }
.lgnb-interrupts:empty, .lgnb-forms:empty { display: none; }
.lgnb-interrupt { border: 1px solid #93c5fd; border-radius: 6px; padding: 4px 8px; margin: 4px 0; background: #f8fbff; }
.lgnb-form { display: flex; flex-direction: column; gap: 6px; padding: 8px 10px; }
.lgnb-form-head { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
.lgnb-form-title { font-weight: 600; }
.lgnb-form-node { font-weight: 600; color: #1e40af; }
.lgnb-form-id { font-family: var(--jp-code-font-family, ui-monospace, monospace); font-size: 11px; }
.lgnb-form-fields { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 3px 10px; margin: 0; }
.lgnb-form-fields dt { font-weight: 600; color: #475569; }
.lgnb-form-fields dd { margin: 0; }
.lgnb-form-value { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 220px; overflow: auto; }
.lgnb-form-actions, .lgnb-form-free { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.lgnb-form-btn { font-size: 13px; padding: 3px 14px; }
.lgnb-btn-primary { background: #2563eb; border-color: #2563eb; color: #fff; }
.lgnb-btn-primary:hover { background: #1d4ed8; }
.lgnb-btn:disabled { opacity: 0.5; cursor: default; }
.lgnb-form-input { font: inherit; flex: 1 1 220px; max-width: 420px; padding: 2px 6px; border: 1px solid #c5cbd6; border-radius: 4px; }
.lgnb-forms-busy { opacity: 0.75; }
.lgnb-form-error { color: #991b1b; background: #fef2f2; border: 1px solid #fecaca; border-radius: 6px; padding: 4px 8px; margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.lgnb-form-part { border-top: 1px dashed #cbd5e1; padding-top: 6px; display: flex; flex-direction: column; gap: 4px; }
.lgnb-form-part:first-of-type { border-top: none; padding-top: 0; }
.lgnb-form-part-title { font-weight: 600; font-family: var(--jp-code-font-family, ui-monospace, monospace); }
.lgnb-form-desc { white-space: pre-wrap; color: #475569; font-size: 12px; }
.lgnb-form-inputs { display: flex; flex-direction: column; gap: 4px; }
.lgnb-field { display: grid; grid-template-columns: 160px minmax(0, 1fr); gap: 2px 8px; align-items: start; }
.lgnb-field > .lgnb-hint, .lgnb-field > .lgnb-field-error { grid-column: 2; }
.lgnb-field-label { font-weight: 600; color: #475569; overflow-wrap: anywhere; }
.lgnb-field textarea.lgnb-form-input, .lgnb-field select.lgnb-form-input { max-width: 520px; }
.lgnb-field > input[type=checkbox] { justify-self: start; margin: 3px 0; }
.lgnb-field-error { color: #991b1b; font-size: 12px; }
.lgnb-field-error:empty { display: none; }
.lgnb-field-bad .lgnb-form-input { border-color: #dc2626; }
.lgnb-field-group { margin-left: 4px; }
.lgnb-field-group > summary { cursor: pointer; color: #475569; }
.lgnb-form-btn[aria-pressed=true] { outline: 2px solid #1d4ed8; outline-offset: 1px; }
.lgnb-form-note { font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
.lgnb-form-note[data-tone=error] { color: #991b1b; }
.lgnb-form-note[data-tone=info] { color: #475569; }
.lgnb-form-held:empty, .lgnb-form-note:empty, .lgnb-forms-bar:empty, .lgnb-answers:empty { display: none; }
.lgnb-form-held { color: #166534; font-size: 12px; }
.lgnb-forms-bar { display: flex; gap: 8px; align-items: center; margin: 4px 0; }
.lgnb-answers { margin: 4px 0; font-size: 12px; }
.lgnb-answer { border-left: 3px solid #16a34a; padding: 1px 8px; margin: 2px 0; background: #f0fdf4; white-space: pre-wrap; overflow-wrap: anywhere; }
.lgnb-answer-by { color: #166534; font-weight: 600; }
.lgnb-runs { font-size: 12px; color: #475569; }
.lgnb-rerun { color: #9a3412; font-weight: 600; }
.lgnb-section { margin-top: 6px; }
.lgnb-section > summary { cursor: pointer; color: #475569; font-size: 12px; }
.lgnb-dropped { font-size: 11px; color: #92400e; background: #fffbeb; border-radius: 4px; padding: 1px 6px; margin: 2px 0; }
.lgnb-list { max-height: 260px; overflow: auto; display: flex; flex-direction: column; gap: 3px; }
.lgnb-row { display: grid; grid-template-columns: 140px 1fr; gap: 6px; }
.lgnb-tag { font-size: 11px; color: #475569; overflow-wrap: anywhere; }
.lgnb-badge { font: bold 11px sans-serif; fill: #b45309; }
.lgnb-lens:focus { outline: 2px solid #93c5fd; }
.lgnb-lens-body { display: flex; flex-direction: column; gap: 8px; margin-top: 8px; }
.lgnb-lens-phase-title { font-weight: 600; font-size: 12px; color: #334155; margin-bottom: 2px; }
.lgnb-lens-table { border-collapse: collapse; width: 100%; font-size: 12px; }
.lgnb-lens-table th, .lgnb-lens-table td { border: 1px solid var(--jp-border-color2, #e3e6ec); padding: 2px 5px; vertical-align: top; text-align: left; }
.lgnb-lens-table th { background: var(--jp-layout-color2, #f3f4f6); font-weight: 600; }
.lgnb-lens-val { max-height: 120px; }
.lgnb-lens-write { display: flex; gap: 4px; align-items: flex-start; }
.lgnb-lens-chan { color: #475569; white-space: nowrap; font-size: 11px; }
.lgnb-lens-internal { color: #94a3b8; }
.lgnb-lens-changed > td { background: #fef9c3; }
.lgnb-lens-bad { color: #991b1b; }
.lgnb-lens-here { font-weight: 600; color: #1d4ed8; }
.lgnb-lens-trail { font-size: 12px; display: flex; flex-direction: column; gap: 2px; margin-bottom: 6px; }
.lgnb-lens-whatif-bar { display: flex; gap: 6px; align-items: center; margin-bottom: 4px; }
.lgnb-messages:empty { display: none; }
.lgnb-state { margin-top: 6px; font-size: 12px; display: flex; flex-direction: column; gap: 4px; overflow-wrap: anywhere; }
.lgnb-state-head { color: #334155; }
.lgnb-state-tasks { display: flex; flex-direction: column; gap: 2px; }
.lgnb-state-task > summary { cursor: pointer; }
.lgnb-state-count { font-weight: 700; color: #b45309; }
.lgnb-state-update { display: grid; grid-template-columns: 60px minmax(0, 1fr); gap: 6px; margin-left: 14px; }
.lgnb-state-table td.lgnb-state-key { white-space: nowrap; font-family: var(--jp-code-font-family, ui-monospace, monospace); }
.lgnb-state-val { font: 11px var(--jp-code-font-family, ui-monospace, monospace); white-space: pre-wrap; }
.lgnb-state-msg { font-size: 12px; white-space: pre-wrap; margin-left: 10px; }
.lgnb-fold > summary { cursor: pointer; font: 11px var(--jp-code-font-family, ui-monospace, monospace); color: #475569; }
@media (max-width: 700px) { .lgnb-run-main, .lgnb-graph-main { grid-template-columns: 1fr; } }
`;

/** Style `el` (a view's element) wherever it lives; returns a function that undoes it.
 * A `<style>` inside the element applies in the document, in a shadow root and in an
 * iframe alike, attached or not yet attached, and it leaves with the view. */
export function injectStyles(el) {
  const style = document.createElement("style");
  style.dataset.lgnb = "styles";
  style.textContent = CSS;
  el.prepend(style);
  return () => style.remove();
}
