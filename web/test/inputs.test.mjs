// The Run panel's boxes: how typed text becomes `inputs` (the text they are filled with: test_web_run_panel.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { parseInputs } from "../src/inputs.js";

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
