// Signed out (or accounts off), storage.js keeps progress in this browser's localStorage as it always did.
import assert from "node:assert/strict";
import { test } from "node:test";

import { installBrowser } from "./fakes.mjs";

const { storage, requests } = installBrowser();
const store = await import("../src/storage.js");
const { localProgress } = await import("../src/account.js");

test("code, verdicts and submissions live under the browser's own keys, and nothing is sent", () => {
  assert.equal(store.keptWhere(), "this browser");
  assert.equal(store.saveCode("scale-tree", "x = 1"), true);
  assert.equal(store.loadCode("scale-tree"), "x = 1");
  assert.equal(storage.getItem("jax-judge:code:scale-tree"), "x = 1");
  store.saveVerdict("scale-tree", { verdict: "accepted", passed: 2, total: 2, at: 1 });
  assert.equal(store.isSolved("scale-tree"), true);
  assert.equal(store.isSolved("lerp-trees"), false);
  store.addSubmission("scale-tree", "id-1", 5);
  assert.deepEqual(store.loadSubmissions("scale-tree"), [{ id: "id-1", at: 5 }]);
  store.saveCode("scale-tree", null);
  assert.equal(store.loadCode("scale-tree"), null);
  assert.deepEqual(requests, []);
});

test("the import offer reads what this browser kept while signed out", () => {
  storage.setItem("jax-judge:code:lerp-trees", "# mine");
  storage.setItem("jax-judge:submissions:lerp-trees", JSON.stringify([{ id: "a", at: 1 }, { id: "b" }, null]));
  storage.setItem("jax-judge:submissions:broken", "{not json");
  storage.setItem("jax-judge:@account:code:x", "{}");
  storage.setItem("other-site", "ignored");
  const progress = localProgress(storage);
  assert.deepEqual(progress.code, { "lerp-trees": "# mine" });
  assert.deepEqual(progress.submissions, { "scale-tree": ["id-1"], "lerp-trees": ["a", "b"] });
});
