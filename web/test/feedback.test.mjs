// Pure functions behind the feedback of a case: marked program lines and what the marks say.
import assert from "node:assert/strict";
import { test } from "node:test";

import { markedLines, marksSummary } from "../src/feedback.js";

test("markedLines flags the marked lines by number and leaves the rest plain", () => {
  const lines = markedLines("a\nb = while[\nc", [{ line: 2, kind: "loop" }]);
  assert.deepEqual(lines, [
    { number: 1, text: "a", kind: null },
    { number: 2, text: "b = while[", kind: "loop" },
    { number: 3, text: "c", kind: null },
  ]);
  assert.equal(markedLines("x", undefined)[0].kind, null);
});

test("marksSummary counts the marks in words", () => {
  const marks = [
    { line: 1, kind: "loop" },
    { line: 4, kind: "loop" },
    { line: 5, kind: "convert" },
  ];
  assert.equal(marksSummary(marks), "2 loops, 1 dtype conversion");
  assert.equal(marksSummary([]), "");
});
