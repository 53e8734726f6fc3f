// The kernel↔page protocol, page side. Written down once, in lgnb/widgets/protocol.py (its
// docstring lists every message and the rules both reducers follow; TypedDicts type them):
// change one, change the other, and bump PROTOCOL_VERSION on both.

/** The version this bundle speaks; every view's `_protocol` trait carries the kernel's. */
export const PROTOCOL_VERSION = 1;

/** Every content patch kind (lgnb.widgets.protocol.PATCH_KINDS). */
export const PATCH_KINDS = Object.freeze(["msg.new", "msg.delta", "tool.delta", "msg.final", "progress", "log",
  "update", "error"]);

/** What a view shows instead of itself when the kernel speaks another version. */
export function mismatchMessage(page, kernel) {
  return `lgnb front end v${page}, kernel v${kernel}: restart the kernel / rebuild`;
}

/** null when `model`'s kernel speaks this bundle's version, else the text to show.
 *  A kernel from before the version existed sends none: that is version 0. */
export function protocolProblem(model) {
  const kernel = model.get("_protocol") ?? 0;
  return kernel === PROTOCOL_VERSION ? null : mismatchMessage(PROTOCOL_VERSION, kernel);
}
