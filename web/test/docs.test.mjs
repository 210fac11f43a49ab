// The editor's JAX help: which name a piece of code means (the learner's imports), and its help from the
// docs index web/jax_names.py writes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { aliasesIn, codePieces, dottedAt, helpFor, moduleNamed, resolve } from "../src/docs.js";

const index = JSON.parse(readFileSync(new URL("../src/jax-docs.json", import.meta.url), "utf8"));

test("imports bind names to jax paths; the usual names work before any import", () => {
  const none = aliasesIn("");
  assert.equal(resolve("jnp.minimum", none), "jax.numpy.minimum");
  assert.equal(resolve("lax.scan", none), "jax.lax.scan");
  assert.equal(resolve("jax.random.split", none), "jax.random.split");
  assert.equal(resolve("jr.split", none), null);

  const code = [
    "import jax",
    "import jax.numpy as np  # the learner's choice",
    "import jax.random as jr, numpy",
    "from jax import lax as L, tree",
    "from jax.numpy import (",
    "    where,",
    "    minimum as smaller,",
    ")",
    "from functools import partial",
  ].join("\n");
  const aliases = aliasesIn(code);
  assert.equal(resolve("np.sum", aliases), "jax.numpy.sum");
  assert.equal(resolve("jr.split", aliases), "jax.random.split");
  assert.equal(resolve("L.fori_loop", aliases), "jax.lax.fori_loop");
  assert.equal(resolve("tree.map", aliases), "jax.tree.map");
  assert.equal(resolve("where", aliases), "jax.numpy.where");
  assert.equal(resolve("smaller", aliases), "jax.numpy.minimum");
  assert.equal(resolve("partial", aliases), null);
  assert.equal(resolve("numpy.sum", aliases), null);
  assert.equal(moduleNamed("jr", aliases), "jax.random");
  assert.equal(moduleNamed("jax.numpy", aliases), "jax.numpy");
  assert.equal(moduleNamed("jr.split", aliases), null);
  // Another module under a usual name is not jax's.
  assert.equal(resolve("jnp.sum", aliasesIn("import numpy as jnp")), null);
  assert.equal(resolve("jax.jit", aliasesIn("import jax.numpy")), "jax.jit");
});

test("the dotted name under the pointer ends with the word under it", () => {
  const line = "    y = jax.random.split(key, 3)";
  assert.deepEqual(dottedAt(line, line.indexOf("split") + 2), { text: "jax.random.split", from: 8, to: 24 });
  assert.deepEqual(dottedAt(line, line.indexOf("random")), { text: "jax.random", from: 8, to: 18 });
  assert.deepEqual(dottedAt(line, 8), { text: "jax", from: 8, to: 11 });
  assert.equal(dottedAt(line, line.indexOf("(")), null);
  assert.equal(dottedAt(line, 2), null);
  assert.equal(dottedAt("x = f(a).sum()", 10), null); // a method of a value, not a module's name
});

test("help comes from the docs index of the installed jax, cleaned for reading", () => {
  const minimum = helpFor("jax.numpy.minimum", index);
  assert.equal(minimum.signature, "jax.numpy.minimum(x, y, /)");
  assert.match(minimum.summary, /element-wise minimum/);
  assert.deepEqual(
    minimum.params.map((param) => param.name),
    ["x", "y"],
  );
  const split = helpFor("jax.random.split", index);
  assert.equal(split.signature, "jax.random.split(key, num=2)");
  assert.ok(split.params.some((param) => param.name === "num"));
  assert.match(helpFor("jax.lax.scan", index).signature, /^jax\.lax\.scan\(f, init, xs=None, length=None/);
  assert.equal(helpFor("jax.numpy.no_such_name", index), null);
  assert.equal(helpFor(null, index), null);
  // No reStructuredText left for the reader to decode.
  for (const [path, entry] of Object.entries(index.docs)) {
    const text = [entry.doc, ...entry.params.map(([, line]) => line)].join(" ");
    assert.doesNotMatch(text, /:[a-z]+:`|``/, path);
  }
});

test("backticked pieces are code", () => {
  assert.deepEqual(codePieces("Splits `key` into `num` keys."), [
    { text: "Splits " },
    { code: "key" },
    { text: " into " },
    { code: "num" },
    { text: " keys." },
  ]);
  assert.deepEqual(codePieces("plain"), [{ text: "plain" }]);
});
