// The plain editor's text arithmetic: line offsets, what Enter and Tab insert.
import assert from "node:assert/strict";
import { test } from "node:test";

import { lineStart, newlineAt, tabAt } from "../src/code.js";

const CODE = "def f(x):\n    if x:\n        return 1\n    return 2";

test("lineStart finds each line and nothing past the last", () => {
  assert.equal(lineStart(CODE, 1), 0);
  assert.equal(lineStart(CODE, 2), 10);
  assert.equal(CODE.slice(lineStart(CODE, 3)).split("\n")[0], "        return 1");
  assert.equal(lineStart(CODE, 5), null);
  assert.equal(lineStart(CODE, 0), null);
  assert.equal(lineStart("", 1), 0);
});

test("Enter keeps the indentation and opens a block after a colon", () => {
  assert.equal(newlineAt(CODE, "def f(x):".length), "\n    ");
  assert.equal(newlineAt(CODE, lineStart(CODE, 3) + "        return 1".length), "\n        ");
  assert.equal(newlineAt(CODE, lineStart(CODE, 2) + "    if x:".length), "\n        ");
  assert.equal(newlineAt("x = 1", 5), "\n");
  // In the middle of a line only the text before the cursor counts.
  assert.equal(newlineAt("    a: b", 6), "\n        ");
});

test("Tab moves to the next multiple of four", () => {
  assert.equal(tabAt(0), "    ");
  assert.equal(tabAt(1), "   ");
  assert.equal(tabAt(4), "    ");
  assert.equal(tabAt(7), " ");
});
