// Reading the engine's messages to teach: the user's line, the tracing rule, the `if` condition.
import assert from "node:assert/strict";
import { test } from "node:test";

import { conditionOf, tracingRule, userLine } from "../src/explain.js";

const IF_MESSAGE =
  "line 9: `if norm > max_norm:`\nA Python `if`, `while`, `and`, `or` or `bool()` needs a concrete " +
  "True/False, but under jax.jit this value is a tracer.\n(TracerBoolConversionError: Attempted boolean " +
  "conversion of traced array with shape bool[].)";

test("the user's line and source come from the message's first line", () => {
  assert.deepEqual(userLine(IF_MESSAGE), { line: 9, source: "if norm > max_norm:" });
  assert.deepEqual(userLine("line 3: something"), { line: 3, source: null });
  assert.equal(userLine("clipped[\"w\"]: dtype float32, expected bfloat16"), null);
  assert.equal(userLine(undefined), null);
});

test("the tracing rule a message is about", () => {
  assert.equal(tracingRule(IF_MESSAGE), "bool");
  assert.equal(tracingRule("line 4: `np.sqrt(x)`\n(TracerArrayConversionError: ...)"), "numpy");
  assert.equal(tracingRule("line 5: `float(norm)`\n(ConcretizationTypeError: ...)"), "concrete");
  assert.equal(tracingRule("something else"), null);
});

test("the condition of an if/elif/while line", () => {
  assert.equal(conditionOf("if norm > max_norm:"), "norm > max_norm");
  assert.equal(conditionOf("    elif x < 0:  # negative"), "x < 0");
  assert.equal(conditionOf("while err > tol:"), "err > tol");
  assert.equal(conditionOf("scale = 1.0"), null);
  assert.equal(conditionOf(null), null);
});
