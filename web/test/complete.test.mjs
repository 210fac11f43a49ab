// Completion of jax names: which dotted name the cursor is in, and the options for a module.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { dottedBefore, optionsFor } from "../src/complete.js";

test("the dotted name before the cursor", () => {
  assert.deepEqual(dottedBefore("    x = jnp.wh"), { module: "jnp", prefix: "wh", from: 12 });
  assert.deepEqual(dottedBefore("jax.tree."), { module: "jax.tree", prefix: "", from: 9 });
  assert.equal(dottedBefore("x = 1 + "), null);
});

test("options come from the locked jax, with signatures; aliases share them", () => {
  const where = optionsFor("jnp").find((item) => item.label === "where");
  assert.match(where.detail, /condition/);
  assert.equal(optionsFor("jax.numpy"), optionsFor("jnp"));
  assert.ok(optionsFor("lax").some((item) => item.label === "scan"));
  assert.ok(optionsFor("jax.tree").some((item) => item.label === "map"));
  assert.equal(optionsFor("np"), null);
});
