// lgnb.inbox(url): a LangGraph server's interrupted threads, newest first, a page at a
// time. A click on a row asks the kernel to open that thread (its form shows under the
// list); everything shown is text (textContent), never HTML.
import { h, clear, fmtSeconds } from "./dom.js";

const ROW = "display:flex;gap:.75em;align-items:baseline;width:100%;text-align:left;padding:.35em .5em;"
  + "margin:2px 0;border:1px solid var(--jp-border-color2,#ddd);border-radius:4px;cursor:pointer;"
  + "background:var(--jp-layout-color1,#fff);color:inherit;font:inherit";

export function renderInbox({ model, el, signal }) {
  const title = h("span", { class: "lgnb-title" });
  const refresh = h("button", { class: "lgnb-inbox-refresh", type: "button", text: "↻ refresh",
    on: { click: () => model.send({ kind: "refresh" }) } });
  const list = h("div", { class: "lgnb-inbox-list", role: "list" });
  const prev = h("button", { class: "lgnb-inbox-prev", type: "button", text: "← newer",
    on: { click: () => model.send({ kind: "page", to: "previous" }) } });
  const next = h("button", { class: "lgnb-inbox-next", type: "button", text: "older →",
    on: { click: () => model.send({ kind: "page", to: "next" }) } });
  const pageLabel = h("span", { class: "lgnb-inbox-page" });
  const notice = h("div", { class: "lgnb-inbox-notice lgnb-hint" });
  const error = h("div", { class: "lgnb-inbox-error", style: "color:var(--jp-error-color1,#c00)" });
  const root = h("div", { class: "lgnb-root lgnb-inbox-view" },
    h("div", { class: "lgnb-header" }, title, refresh),
    list, h("div", { class: "lgnb-inbox-pager", style: "display:flex;gap:.5em;align-items:center" }, prev, pageLabel, next),
    notice, error);

  const paint = () => {
    title.textContent = model.get("title") || "inbox";
    const rows = model.get("rows") || [];
    const opened = model.get("opened") || "";
    clear(list);
    if (!rows.length) list.append(h("div", { class: "lgnb-inbox-empty lgnb-hint", text: "no thread is waiting for an answer" }));
    for (const row of rows) {
      const isOpen = row.thread_id === opened;
      list.append(h("button", {
        class: "lgnb-inbox-row" + (isOpen ? " lgnb-inbox-open" : ""), type: "button", role: "listitem",
        "data-thread": row.thread_id, style: ROW + (isOpen ? ";outline:2px solid var(--jp-brand-color1,#1976d2)" : ""),
        title: `thread ${row.thread_id}`,
        on: { click: () => model.send({ kind: "open", thread_id: row.thread_id }) },
      },
      h("span", { class: "lgnb-inbox-question", style: "flex:1;font-weight:600", text: row.question }),
      h("span", { class: "lgnb-inbox-graph lgnb-hint", text: row.graph_id }),
      // the id's end: time-ordered ids (UUID v6/v7) of one day share their first digits
      h("span", { class: "lgnb-inbox-thread lgnb-hint", text: "…" + String(row.thread_id).slice(-8) }),
      h("span", { class: "lgnb-inbox-age lgnb-hint", text: `waiting ${fmtSeconds(row.age_s)}` })));
    }
    const page = model.get("page") || 0;
    prev.disabled = page === 0;
    next.disabled = !model.get("has_more");
    pageLabel.textContent = `page ${page + 1}`;
    notice.textContent = model.get("notice") || "";
    error.textContent = model.get("error") || "";
  };
  for (const name of ["title", "rows", "opened", "page", "has_more", "notice", "error"]) {
    model.on(`change:${name}`, paint);
  }
  signal.addEventListener("abort", () => {
    for (const name of ["title", "rows", "opened", "page", "has_more", "notice", "error"]) model.off(`change:${name}`, paint);
  });
  paint();
  el.append(root);
  return () => root.remove();
}
