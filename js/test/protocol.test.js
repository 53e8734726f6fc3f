// The page half of the kernel↔page protocol (lgnb/widgets/protocol.py), under Node's own
// test runner: `node --test js/test/` (./dev test runs it; so does
// tests/widgets/test_protocol_fixtures.py). The fixtures in tests/fixtures/protocol/ are what
// a run view's page received in real runs (plus the hand-written edge cases); the Python
// reducer replays the same files to the same `final` content.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { attachRun, createStore } from "../src/store.js";
import { PROTOCOL_VERSION, mismatchMessage, protocolProblem } from "../src/protocol.js";
import { render } from "../src/index.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "fixtures", "protocol");
const files = readdirSync(FIXTURES).filter((f) => f.endsWith(".json")).sort();
const load = (name) => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));

/** A widget model as anywidget gives it to the page: traits, change events, custom messages. */
function fakeModel(traits) {
  const values = { ...traits };
  const handlers = new Map();
  const sent = [];
  return {
    sent,
    get: (key) => values[key],
    set(key, value) { values[key] = value; (handlers.get(`change:${key}`) ?? []).forEach((fn) => fn()); },
    on(event, fn) { handlers.set(event, [...(handlers.get(event) ?? []), fn]); },
    send(msg) { sent.push(msg); },
    custom(msg) { (handlers.get("msg:custom") ?? []).forEach((fn) => fn(msg)); },
  };
}

/** What the page's store holds after the fixture's messages from `start` on: a page whose
 *  model opened with that message's snapshot, then got the rest (attachRun's own handlers). */
function replay(fixture, start = 0) {
  const messages = fixture.messages.slice(start);
  const opening = messages[0] && "state" in messages[0] ? messages.shift().state.snapshot : {};
  const model = fakeModel({ caps: fixture.caps, snapshot: opening, _protocol: PROTOCOL_VERSION });
  const { store } = attachRun(model);
  assert.deepEqual(model.sent, [{ kind: "hello" }]);
  for (const m of messages) {
    if ("state" in m) model.set("snapshot", m.state.snapshot);
    else model.custom(m.custom);
  }
  return JSON.parse(JSON.stringify(store.snapshot()));
}

/** Quietly collect console.warn while `fn` runs. */
function warnings(fn) {
  const seen = [];
  const original = console.warn;
  console.warn = (...args) => seen.push(args);
  try { fn(); } finally { console.warn = original; }
  return seen;
}

for (const name of files) {
  test(`the page's reducer replays ${name} to the kernel's final content`, () => {
    const fixture = load(name);
    assert.equal(fixture.protocol, PROTOCOL_VERSION, `${name} is of another protocol: re-run make_protocol_fixtures.py`);
    let state;
    warnings(() => { state = replay(fixture); });
    assert.deepEqual(state, fixture.final);
  });
}

test("a page opened late reaches the same content from any snapshot of a recorded run", () => {
  let openings = 0;
  for (const name of files.filter((f) => f.startsWith("run_"))) {
    const fixture = load(name);
    fixture.messages.forEach((m, i) => {
      const snap = m.state?.snapshot ?? (m.custom?.kind === "snapshot" ? m.custom.snapshot : null);
      if (!snap || !Object.keys(snap).length) return;
      openings += 1;
      assert.deepEqual(replay(fixture, i), fixture.final, `${name}, page opened at message ${i}`);
    });
  }
  assert.ok(openings >= 5, `only ${openings} snapshots in the recorded runs`);
});

test("unknown kinds and patches without id are skipped with a warning, their seq counted, no view told", () => {
  const store = createStore({ log: 5, updates: 5 });
  const told = [];
  store.subscribe((event) => told.push(event.patch?.kind));
  const seen = warnings(() => {
    store.apply({ kind: "msg.new", id: "m", seq: 1, content: "a" });
    store.apply({ kind: "msg.reaction", id: "m", seq: 2 });
    store.apply({ kind: "log", seq: 3, payload: 1 });
  });
  assert.equal(seen.length, 2);
  assert.match(String(seen[0][0]), /skipped a patch it cannot apply/);
  assert.deepEqual([seen[0][1], seen[1][1], seen[1][2]], ["msg.reaction", "log", undefined]);
  assert.deepEqual(told, ["msg.new"]);
  assert.equal(store.seq, 3);
  assert.deepEqual(store.snapshot().log, []);
});

test("the version check passes the kernel's version and names both versions otherwise", () => {
  assert.equal(protocolProblem(fakeModel({ _protocol: PROTOCOL_VERSION })), null);
  assert.equal(protocolProblem(fakeModel({ _protocol: PROTOCOL_VERSION + 1 })),
    `lgnb front end v${PROTOCOL_VERSION}, kernel v${PROTOCOL_VERSION + 1}: restart the kernel / rebuild`);
  // a kernel from before the version existed sends no _protocol at all
  assert.equal(protocolProblem(fakeModel({})), mismatchMessage(PROTOCOL_VERSION, 0));
});

test("a view of a kernel of another protocol version shows the mismatch instead of itself", () => {
  const el = { textContent: "" };
  const model = fakeModel({ _protocol: PROTOCOL_VERSION + 1, _uid: "u1", caps: {}, snapshot: {} });
  const cleanup = render("run", { model, el });
  assert.equal(el.textContent, `lgnb front end v${PROTOCOL_VERSION}, kernel v${PROTOCOL_VERSION + 1}: restart the kernel / rebuild`);
  assert.deepEqual(model.sent, []); // nothing attached, nothing asked of the kernel
  assert.equal(typeof cleanup, "function");
});
