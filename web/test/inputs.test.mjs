// The Run panel's boxes: the text they are filled with and how typed text becomes `inputs`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { compactJSON, formatInput, parseInputs } from "../src/inputs.js";

test("short values stay on one line with spaces", () => {
  assert.equal(compactJSON({ w: [3, 0], b: 4 }), '{"w": [3, 0], "b": 4}');
  assert.equal(formatInput(1), "1");
});

test("long trees open up, leaves stay on one line, and the text parses back", () => {
  const value = { layers: [{ w: [0.6, 0.6, 0.6, 0.6] }, { w: [0.6, 0.6, 0.6, 0.6] }, { w: [0.6] }] };
  const text = formatInput(value);
  assert.ok(text.includes("\n"));
  assert.ok(text.includes('"w": [0.6, 0.6, 0.6, 0.6]'));
  assert.deepEqual(JSON.parse(text), value);
});

test("parseInputs returns inputs, or one error per bad box naming the argument and where", async () => {
  assert.deepEqual(await parseInputs({ grads: '{"w": [1]}', max_norm: "1.5" }), {
    inputs: { grads: { w: [1] }, max_norm: 1.5 },
  });
  const bad = await parseInputs({ grads: '{"w": [1,}', max_norm: " " });
  assert.match(bad.errors.grads, /^grads: not valid JSON: expected a value at line 1 column 10$/);
  assert.equal(bad.errors.max_norm, "max_norm: empty; type a JSON value");
});

test("a JSON error on a later line says which line", async () => {
  const bad = await parseInputs({ grads: '{\n  "w": [1, 2],\n  "b": oops\n}' });
  assert.equal(bad.errors.grads, "grads: not valid JSON: unexpected character at line 3 column 8");
});
