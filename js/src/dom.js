// Tiny DOM builder. Text is only ever set with textContent / text nodes: nothing from a
// user, a model or a graph is parsed as HTML.

/** h("div", {class: "x", text: "hi", title: "t", on: {click: f}}, child, ...) */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = String(value);
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (key === "style") el.style.cssText = value;
    else if (key.startsWith("on")) throw new Error("use the `on` map for listeners");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Pretty JSON as text (values are already JSON from the kernel). */
export function jsonText(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
}

export function fmtSeconds(s) {
  if (!Number.isFinite(s)) return "";
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}
