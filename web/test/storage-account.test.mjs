// Signed in, storage.js reads the account's progress from the page and sends the code back; the browser's
// anonymous entries are neither read nor written.
import assert from "node:assert/strict";
import { test } from "node:test";

import { installBrowser } from "./fakes.mjs";

const state = {
  id: "acc-1",
  name: "ada",
  csrf: "token-1",
  problems: {
    "scale-tree": { solved: true, verdict: "wrong_answer", at: "2026-12-06T10:00:00+00:00" },
    "lerp-trees": { solved: false, verdict: "wrong_answer", at: "2026-12-06T10:00:00+00:00" },
  },
  problem: {
    slug: "scale-tree",
    code: "# from the account",
    code_saved_at: "2026-12-06T10:00:00+00:00",
    history: [{ id: "s-2", at: "2026-12-06T10:00:00+00:00" }],
  },
};
const { storage, requests } = installBrowser(state, "token-1");
storage.setItem("jax-judge:code:scale-tree", "# anonymous");
const store = await import("../src/storage.js");

test("the account is the source of code, verdicts, the solved set and the history", () => {
  assert.equal(store.keptWhere(), "your account");
  assert.equal(store.loadCode("scale-tree"), "# from the account");
  assert.equal(store.loadCode("lerp-trees"), null);
  assert.equal(store.isSolved("scale-tree"), true); // solved once, whatever the last verdict
  assert.equal(store.isSolved("lerp-trees"), false);
  assert.equal(store.loadVerdict("scale-tree").verdict, "wrong_answer");
  assert.deepEqual(
    store.loadSubmissions("scale-tree").map((item) => item.id),
    ["s-2"],
  );
  store.addSubmission("scale-tree", "s-3");
  assert.deepEqual(
    store.loadSubmissions("scale-tree").map((item) => item.id),
    ["s-3", "s-2"],
  );
  store.saveVerdict("lerp-trees", { verdict: "accepted", at: Date.now() });
  assert.equal(store.isSolved("lerp-trees"), true);
});

test("a save goes to the account with the CSRF token and leaves the anonymous entry alone", () => {
  assert.equal(store.saveCode("scale-tree", "# typed"), true);
  const put = requests.at(-1);
  assert.equal(put.path, "/account/code/scale-tree");
  assert.equal(put.method, "PUT");
  assert.equal(put.headers["X-CSRF-Token"], "token-1");
  assert.deepEqual(JSON.parse(put.body), { code: "# typed" });
  assert.equal(storage.getItem("jax-judge:code:scale-tree"), "# anonymous");
  assert.equal(JSON.parse(storage.getItem("jax-judge:@acc-1:code:scale-tree")).code, "# typed");
  assert.equal(store.loadCode("scale-tree"), "# typed");
});

test("a copy newer than the server's (a save that never arrived) wins and is sent again", () => {
  storage.setItem("jax-judge:@acc-1:code:lerp-trees", JSON.stringify({ code: "# offline", at: Date.now() }));
  const before = requests.length;
  assert.equal(store.loadCode("lerp-trees"), "# offline");
  assert.equal(requests.length, before + 1);
  assert.equal(requests.at(-1).path, "/account/code/lerp-trees");
});
