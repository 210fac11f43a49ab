// Completion of jax names: which dotted name the cursor is in, and the options for a module as the code's
// imports name it.
import assert from "node:assert/strict";
import { test } from "node:test";

import { dottedBefore, jaxCompletions, optionsFor } from "../src/complete.js";
import { aliasesIn } from "../src/docs.js";

test("the dotted name before the cursor", () => {
  assert.deepEqual(dottedBefore("    x = jnp.wh"), { module: "jnp", prefix: "wh", from: 12 });
  assert.deepEqual(dottedBefore("jax.tree."), { module: "jax.tree", prefix: "", from: 9 });
  assert.equal(dottedBefore("x = 1 + "), null);
});

test("options come from the locked jax, with cleaned signatures; aliases share them", () => {
  const minimum = optionsFor("jnp").options.find((item) => item.label === "minimum");
  assert.equal(minimum.detail, "(x, y, /)"); // not (*args: 'ArrayLike', out: 'None' = None, ...)
  const where = optionsFor("jnp").options.find((item) => item.label === "where");
  assert.match(where.detail, /^\(condition, x=None, y=None/);
  assert.equal(optionsFor("jax.numpy").options, optionsFor("jnp").options);
  assert.ok(optionsFor("lax").options.some((item) => item.label === "scan"));
  assert.ok(optionsFor("jax.tree").options.some((item) => item.label === "map"));
  assert.equal(optionsFor("np"), null);
  assert.equal(optionsFor("jr"), null); // not a jax module until an import says so
});

test("the learner's own aliases name the modules", () => {
  const aliases = aliasesIn("import jax.random as jr\nfrom jax import tree as jt\nimport numpy as jnp\n");
  assert.equal(optionsFor("jr", aliases).module, "jax.random");
  assert.ok(optionsFor("jr", aliases).options.some((item) => item.label === "split"));
  assert.equal(optionsFor("jt", aliases).module, "jax.tree");
  assert.equal(optionsFor("jnp", aliases), null); // NumPy's, here
});

/** A CodeMirror CompletionContext over `text` with the cursor at its end. */
function contextOver(text, explicit = false) {
  const lines = text.split("\n");
  const doc = {
    toString: () => text,
    lineAt: () => ({ from: text.length - lines.at(-1).length, text: lines.at(-1) }),
  };
  return { state: { doc }, pos: text.length, explicit };
}

test("each option's documentation panel is asked for by its full dotted name", () => {
  const asked = [];
  const source = jaxCompletions((path) => {
    asked.push(path);
    return null;
  });
  const result = source(contextOver("from jax import random\nk = random.spl"));
  assert.equal(result.from, "from jax import random\nk = random.".length);
  result.options.find((option) => option.label === "split").info();
  assert.deepEqual(asked, ["jax.random.split"]);
  assert.equal(source(contextOver("x = np.wh")), null);
  assert.equal(jaxCompletions()(contextOver("y = jnp.mini")).options[0].info, undefined);
});
