// Pure functions behind the Run panel's display: tree shapes, the display diff, paths, numbers.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  closeEnough,
  differingPaths,
  formatNumber,
  formatPath,
  isListNode,
  leafDiff,
  leafShape,
} from "../src/tree.js";

test("a list holding objects is a node; lists of numbers are leaves", () => {
  assert.equal(isListNode([{ w: 1 }, { w: 2 }]), true);
  assert.equal(isListNode([[1, 2], [3, 4]]), false);
  assert.equal(isListNode([]), false);
});

test("leaf shapes: rectangular lists only", () => {
  assert.deepEqual(leafShape(3), []);
  assert.deepEqual(leafShape([]), [0]);
  assert.deepEqual(leafShape([[1, 2], [3, 4], [5, 6]]), [3, 2]);
  assert.equal(leafShape([[1, 2], [3]]), null);
  assert.equal(leafShape(["a"]), null);
});

test("closeness uses float32's tolerance; NaN matches only NaN", () => {
  assert.equal(closeEnough(0.6000001, 0.6), true);
  assert.equal(closeEnough(0.61, 0.6), false);
  assert.equal(closeEnough(Number.NaN, Number.NaN), true);
  assert.equal(closeEnough(Number.NaN, 1), false);
  assert.equal(closeEnough(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY), true);
  assert.equal(closeEnough(Number.POSITIVE_INFINITY, 1e38), false);
});

test("leafDiff names the differing elements, or the whole leaf when shapes differ", () => {
  const same = leafDiff([[1, 2], [3, 4]], [[1, 2], [3, 4]]);
  assert.equal(same.differs, false);
  const values = leafDiff([[1, 2], [3, 5]], [[1, 2], [3, 4]]);
  assert.equal(values.differs, true);
  assert.deepEqual([...values.elements], [3]);
  const shape = leafDiff([1, 2, 3], [1, 2]);
  assert.equal(shape.differs, true);
  assert.equal(shape.elements.size, 0);
  assert.equal(leafDiff("NaN", "NaN").differs, false);
});

test("paths read like the judge's messages", () => {
  assert.equal(formatPath([]), "output");
  assert.equal(formatPath(["clipped", "dense", "w"]), 'clipped["dense"]["w"]');
  assert.equal(formatPath([0, "w"]), 'output[0]["w"]');
  assert.equal(formatPath(["not an identifier"]), 'output["not an identifier"]');
});

test("differingPaths finds value, missing-key and structure differences", () => {
  const expected = { clipped: { b: 0.8, w: [0.6, 0.0] }, global_norm: 5.0 };
  assert.deepEqual(differingPaths(expected, expected), []);
  assert.deepEqual(differingPaths({ clipped: { b: 0.8, w: [0.6, 0.1] }, global_norm: 5.0 }, expected), [
    'clipped["w"]',
  ]);
  assert.deepEqual(differingPaths({ clipped: { b: 0.8 }, global_norm: 5.0 }, expected), ['clipped["w"]']);
  assert.deepEqual(differingPaths({ clipped: 1.0, global_norm: 5.0 }, expected), ["clipped"]);
  assert.deepEqual(differingPaths([{ w: 1 }, { w: 3 }], [{ w: 1 }, { w: 2 }]), ['output[1]["w"]']);
});

test("numbers show six decimals in shortest form, like the statement", () => {
  assert.equal(formatNumber(0.800000011920929), "0.8");
  assert.equal(formatNumber(5), "5.0");
  assert.equal(formatNumber(-1 / 3), "-0.333333");
  assert.equal(formatNumber("NaN"), "NaN");
  assert.equal(formatNumber("-Infinity"), "-Infinity");
  assert.equal(formatNumber(1e-9), "0.0");
});
