// Pure functions behind the Run panel's display: tree shapes, the display diff, paths, numbers.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  closeEnough,
  compactText,
  differingPaths,
  formatNumber,
  formatPath,
  inputLayout,
  isListNode,
  kindAt,
  layoutOf,
  leafDiff,
  leafShape,
  toBfloat16,
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

test("numbers show the shortest text their dtype reads back the same (float32 without a dtype)", () => {
  assert.equal(formatNumber(0.800000011920929), "0.8");
  assert.equal(formatNumber(5), "5.0");
  assert.equal(formatNumber(-1 / 3), "-0.33333333");
  assert.equal(formatNumber("NaN"), "NaN");
  assert.equal(formatNumber("-Infinity"), "-Infinity");
  assert.equal(formatNumber(1e-9), "1e-9");
  // Six decimals would show 0.0006 for both, hiding the difference.
  assert.equal(formatNumber(0.00059988, "float32"), "0.00059988");
  assert.notEqual(formatNumber(0.00059988, "float32"), formatNumber(0.0006, "float32"));
  // Integer dtypes are integers, not floats.
  assert.equal(formatNumber(55, "int32"), "55");
  assert.equal(formatNumber(55, "float32"), "55.0");
  assert.equal(formatNumber(true, "bool"), "True");
  // bfloat16 keeps 8 bits of mantissa: 0.1 is 0.10009765625, shown as 0.1; 1.0078125 as 1.01 (the same bfloat16).
  assert.equal(formatNumber(0.10009765625, "bfloat16"), "0.1");
  assert.equal(formatNumber(1.0078125, "bfloat16"), "1.01");
  assert.equal(toBfloat16(1.01), 1.0078125);
  assert.equal(formatNumber(0.1, "float64"), "0.1");
});

test("with the judge's layout: tuples, leaves that are lists of arrays, dtypes and root names", () => {
  const shown = {
    json: [{ b: [1, 2] }, [[1, 2], [3, 4]]],
    leaves: [
      { path: [0, "b"], dtype: "int32" },
      { path: [1, 0], dtype: "float32" },
      { path: [1, 1], dtype: "float32" },
    ],
    tuples: [[]],
  };
  const layout = layoutOf(shown);
  assert.equal(kindAt(shown.json, [], layout), "tuple");
  assert.equal(kindAt(shown.json[1], [1], layout), "list"); // a list of two arrays, not one 2x2 leaf
  assert.equal(kindAt(shown.json[1], [1], null), "leaf"); // which the JSON alone would say
  assert.equal(compactText(shown.json, layout), '({"b": [1, 2]}, [[1.0, 2.0], [3.0, 4.0]])');
  assert.equal(compactText([[1, 2]], layoutOf({ leaves: [{ path: [0], dtype: "int32" }], tuples: [[]] })), "([1, 2],)");
  assert.equal(formatPath([0, "b"], ["new_params", "state"]), 'new_params["b"]');
  // A list where a tuple is expected, and a float32 leaf where a bfloat16 one is expected, differ.
  const asList = layoutOf({ ...shown, tuples: [] });
  assert.deepEqual(differingPaths(shown.json, shown.json, { gotLayout: asList, expectedLayout: layout }), ["output"]);
  const bf16 = layoutOf({ ...shown, leaves: shown.leaves.map((l, i) => (i === 1 ? { ...l, dtype: "bfloat16" } : l)) });
  assert.deepEqual(
    differingPaths(shown.json, shown.json, { gotLayout: layout, expectedLayout: bf16, rootNames: ["p", "q"] }),
    ["q[0]"],
  );
});

test("an input's layout: an int32 step and Python ints read as integers, floats as floats, a tuple as one", () => {
  const inputs = {
    arguments: {
      step: { kind: "array", layout: "leaf", dtype: "int32" },
      peak_lr: { kind: "number", layout: "leaf", dtype: "float" },
      warmup_steps: { kind: "int", layout: "leaf", dtype: "int" },
      tree: { kind: "pytree", layout: "tree", dtype: "case" },
      shape: { kind: "int_tuple", layout: "tuple", dtype: "int" },
      fn: { kind: "function", layout: "leaf", dtype: null },
    },
  };
  const input = { step: 55, peak_lr: 0.1, warmup_steps: 10, tree: { w: [1, 2], b: [{ c: 3 }] }, shape: [2, 3], fn: "relu" };
  const layout = inputLayout(input, inputs, "bfloat16");
  // the arguments in signature order (the order of `inputs.arguments`); a dict inside one sorted, as JAX does
  assert.equal(compactText(input, layout), '{"step": 55, "peak_lr": 0.1, "warmup_steps": 10, "tree": {"b": [{"c": 3.0}], "w": [1.0, 2.0]}, "shape": (2, 3), "fn": "relu"}');
  assert.equal(kindAt(input.tree.b, ["tree", "b"], layout), "list");
  assert.equal(inputLayout(input, undefined, "float32"), null);
});

test("an argument's layout decides, not its kind: a tuple of floats reads as a tuple of floats", () => {
  const inputs = { arguments: { betas: { kind: "float_tuple", layout: "tuple", dtype: "float" } } };
  const layout = inputLayout({ betas: [0.9, 1] }, inputs, "float32");
  assert.equal(compactText({ betas: [0.9, 1] }, layout), '{"betas": (0.9, 1.0)}');
});

test("an input's arguments come in signature order, whatever order its JSON has; unknown keys after, sorted", () => {
  const inputs = {
    arguments: {
      params: { kind: "pytree", layout: "tree", dtype: "case" },
      grads: { kind: "pytree", layout: "tree", dtype: "case" },
      step: { kind: "array", layout: "leaf", dtype: "int32" },
      learning_rate: { kind: "number", layout: "leaf", dtype: "float" },
    },
  };
  const input = { learning_rate: 0.5, grads: { w: 1 }, zeta: 1, step: 3, params: { w: 2 }, alpha: 2 };
  const layout = inputLayout(input, inputs, "float32");
  assert.equal(
    compactText(input, layout),
    '{"params": {"w": 2.0}, "grads": {"w": 1.0}, "step": 3, "learning_rate": 0.5, "alpha": 2.0, "zeta": 1.0}',
  );
  // without the page's knowledge of the arguments a dict's keys stay sorted
  assert.equal(compactText({ b: 1, a: 2 }), '{"a": 2.0, "b": 1.0}');
});
