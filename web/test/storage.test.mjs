// What the page keeps per problem in local storage: here the Run panel's own input.
import assert from "node:assert/strict";
import { test } from "node:test";

const kept = new Map();
globalThis.window = {
  localStorage: {
    getItem: (key) => (kept.has(key) ? kept.get(key) : null),
    setItem: (key, value) => kept.set(key, String(value)),
    removeItem: (key) => kept.delete(key),
  },
};
const { loadRunInput, saveRunInput } = await import("../src/storage.js");

test("the Run panel's input is kept per problem", () => {
  assert.equal(loadRunInput("device-mesh-sharding"), null);
  saveRunInput("device-mesh-sharding", { mode: "custom", texts: { x: "[[1, 2]]", w: "[[3]]" }, dtype: "float32" });
  saveRunInput("prng-key-splitting", { mode: "examples", texts: { x: "[1]" }, dtype: null });
  assert.deepEqual(loadRunInput("device-mesh-sharding"), {
    mode: "custom",
    texts: { x: "[[1, 2]]", w: "[[3]]" },
    dtype: "float32",
  });
  assert.deepEqual(loadRunInput("prng-key-splitting"), { mode: "examples", texts: { x: "[1]" }, dtype: null });
});

test("what another script or version left there is read safely", () => {
  kept.set("jax-judge:input:a", "not json");
  kept.set("jax-judge:input:b", JSON.stringify({ mode: "sideways", texts: { x: 3, y: "[1]" } }));
  assert.equal(loadRunInput("a"), null);
  assert.deepEqual(loadRunInput("b"), { mode: "examples", texts: { y: "[1]" }, dtype: null });
});

test("an input too large to keep is not kept, and forgets the older one", () => {
  saveRunInput("c", { mode: "custom", texts: { x: "[1]" }, dtype: null });
  saveRunInput("c", { mode: "custom", texts: { x: "1".repeat(300_000) }, dtype: null });
  assert.equal(loadRunInput("c"), null);
});
