// Pure functions behind the printed-output box.
import assert from "node:assert/strict";
import { test } from "node:test";

import { capLines, unorderedDebugPrint } from "../src/results.js";

test("capLines keeps the first lines in order and counts the rest", () => {
  const text = Array.from({ length: 900 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const { shown, cut, lines } = capLines(text, 400);
  assert.equal(lines, 900);
  assert.equal(cut, 500);
  assert.equal(shown.split("\n").length, 400);
  assert.ok(shown.startsWith("line 0\nline 1\n"));
  assert.deepEqual(capLines("a\nb"), { shown: "a\nb", cut: 0, lines: 2 });
});

test("an unordered jax.debug.print is noticed; ordered=True is not", () => {
  assert.equal(unorderedDebugPrint('jax.debug.print("x {}", x)'), true);
  assert.equal(unorderedDebugPrint('jax.debug.print("x {}", x, ordered=True)'), false);
  assert.equal(unorderedDebugPrint('print("x")'), false);
  assert.equal(unorderedDebugPrint(null), false);
});
