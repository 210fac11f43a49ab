// Pure functions behind the feedback of a case: marked program lines and what the marks say.
import assert from "node:assert/strict";
import { test } from "node:test";

import { bytesText, costRows, countText, markedLines, marksSummary } from "../src/feedback.js";

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

test("costRows sets each figure beside the reference's and gives a time ratio only where the judge did", () => {
  const rows = costRows({
    flops: 29,
    reference_flops: 10,
    flops_ratio: 2.9,
    bytes_accessed: 3 * 2 ** 20,
    reference_bytes_accessed: 3 * 2 ** 20,
    bytes_ratio: 1,
    loops: 0,
    reference_loops: 0,
    compile_ms: 52,
    reference_compile_ms: 40,
    compile_ratio: 1.3,
    run_ms: 0.841,
    reference_run_ms: 0.001,
    run_ratio: null,
  });
  assert.deepEqual(
    rows.map((row) => [row.label, row.yours, row.reference, row.ratio]),
    [
      ["FLOPs", "29", "10", "2.9x"],
      ["Bytes accessed", "3 MiB", "3 MiB", "same"],
      ["Loops", "0", "0", "same"],
      ["Compile time", "52 ms", "40 ms", "1.3x"],
      ["Run time", "0.841 ms", "0.001 ms", "too short to compare"],
    ],
  );
  assert.deepEqual(costRows({ flops: 5 }), []);
});

test("countText and bytesText write figures for reading", () => {
  assert.equal(countText(980), "980");
  assert.equal(countText(12345), "12.3 k");
  assert.equal(countText(1500), "1.5 k");
  assert.equal(countText(999999), "1000 k");
  assert.equal(countText(2.5e6), "2.5 M");
  assert.equal(bytesText(640), "640 bytes");
  assert.equal(bytesText(12.5 * 1024), "12.5 KiB");
});
