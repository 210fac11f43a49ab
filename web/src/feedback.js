// Feedback beside a case's verdict (issue 25): the known mistake it looks like, with the author's note; the
// program jit made of the function (jaxpr, and folded the StableHLO, telling lines marked); its cost beside
// the reference's. Everything comes from the reply's fields and enters the page as text only.
import { el } from "./dom.js";

const MARK_WORDS = {
  loop: "a loop",
  custom_call: "a custom call",
  host_callback: "a host callback",
  convert: "a dtype conversion",
};

/** The "looks like a known mistake" note of a case, or null. */
export function renderMistake(item) {
  const mistake = item.mistake;
  if (!mistake) return null;
  const others =
    mistake.others > 0
      ? el("p", { class: "muted mistake-others" }, `It also matches ${mistake.others} other known mistake${mistake.others === 1 ? "" : "s"}.`)
      : null;
  return el(
    "aside",
    { class: "mistake", "data-mistake": mistake.name },
    el("p", { class: "mistake-name" }, "This looks like a known mistake: ", el("strong", {}, mistake.name)),
    el("p", { class: "mistake-note" }, mistake.note),
    others,
  );
}

/** Lines of `text` with the marked ones flagged: [{number, text, kind}] (kind null when unmarked). */
export function markedLines(text, marks) {
  const kinds = new Map((marks || []).map((m) => [m.line, m.kind]));
  return text.split("\n").map((line, i) => ({ number: i + 1, text: line, kind: kinds.get(i + 1) || null }));
}

function programText(text, marks, label) {
  const pre = el("pre", { class: "program-text", "data-dialect": label });
  for (const line of markedLines(text, marks)) {
    const row = el("span", { class: line.kind ? `program-line marked mark-${line.kind}` : "program-line" }, line.text);
    if (line.kind) row.setAttribute("title", MARK_WORDS[line.kind] || line.kind);
    pre.append(row, "\n");
  }
  return pre;
}

/** What the marks say, in words: "2 loops, 1 dtype conversion". */
export function marksSummary(marks) {
  const counts = new Map();
  for (const m of marks || []) counts.set(m.kind, (counts.get(m.kind) || 0) + 1);
  return [...counts]
    .map(([kind, n]) => {
      const word = (MARK_WORDS[kind] || kind).replace(/^an? /, "");
      return `${n} ${word}${n === 1 ? "" : word.endsWith("s") ? "es" : "s"}`;
    })
    .join(", ");
}

/** The program view of a public or custom case (folded), or null. */
export function renderProgram(item) {
  const program = item.program;
  if (!program) return null;
  const summary = marksSummary(program.jaxpr_marks);
  return el(
    "details",
    { class: "program" },
    el("summary", {}, "What jit made of it", summary ? ` (${summary})` : ""),
    programText(program.jaxpr, program.jaxpr_marks, "jaxpr"),
    el(
      "details",
      { class: "stablehlo" },
      el("summary", {}, "StableHLO"),
      programText(program.stablehlo, program.stablehlo_marks, "stablehlo"),
    ),
  );
}

function scaled(value, scale, unit) {
  const shown = value / scale;
  return `${shown < 100 ? Number(shown.toFixed(1)) : Math.round(shown)}${unit}`;
}

/** A count for reading: "980", "12.3 k", "4.1 M" (as the judge's cost line writes it). */
export function countText(value) {
  for (const [scale, unit] of [[1e9, " G"], [1e6, " M"], [1e3, " k"]]) {
    if (Math.abs(value) >= scale) return scaled(value, scale, unit);
  }
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(3)));
}

/** Bytes for reading: "640 bytes", "12.5 KiB", "3 MiB". */
export function bytesText(value) {
  for (const [scale, unit] of [[2 ** 30, " GiB"], [2 ** 20, " MiB"], [2 ** 10, " KiB"]]) {
    if (value >= scale) return scaled(value, scale, unit);
  }
  return `${Math.round(value)} bytes`;
}

function msText(value) {
  return value >= 100 ? `${Math.round(value)} ms` : `${Number(value.toPrecision(3))} ms`;
}

function ratioText(value) {
  if (value === null || value === undefined) return "";
  if (Number(value.toFixed(2)) === 1) return "same";
  return value < 10 ? `${Number(value.toPrecision(2))}x` : `${Math.round(value)}x`;
}

/**
 * The rows of a case's cost table: each figure the judge gave beside the reference's, with their ratio.
 * A time's ratio is the judge's (`compile_ratio`, `run_ratio`), which it gives only when both times are
 * measurable (judge/feedback/cost.py, MEASURABLE_MS); otherwise the row says the times are too short to
 * compare, and no ratio is made up here.
 */
export function costRows(cost) {
  const rows = [];
  const figure = (label, mine, reference, ratio, text) => {
    if (mine === null || mine === undefined || reference === null || reference === undefined) return;
    rows.push({ label, yours: text(mine), reference: text(reference), ratio });
  };
  figure("FLOPs", cost.flops, cost.reference_flops, ratioText(cost.flops_ratio), countText);
  figure("Bytes accessed", cost.bytes_accessed, cost.reference_bytes_accessed, ratioText(cost.bytes_ratio), bytesText);
  figure("Loops", cost.loops, cost.reference_loops, cost.loops === cost.reference_loops ? "same" : "", String);
  const short = "too short to compare";
  figure("Compile time", cost.compile_ms, cost.reference_compile_ms, ratioText(cost.compile_ratio) || short, msText);
  figure("Run time", cost.run_ms, cost.reference_run_ms, ratioText(cost.run_ratio) || short, msText);
  return rows;
}

/** A case's cost beside the reference's: a small table of the figures (and the judge's line), or null. */
export function renderCost(item) {
  const cost = item.cost;
  if (!cost) return null;
  const rows = costRows(cost);
  if (!rows.length) return cost.text ? el("p", { class: "cost muted" }, "Cost: ", cost.text) : null;
  const cell = (tag, text, attributes = {}) => el(tag, attributes, text);
  return el(
    "details",
    { class: "cost" },
    el("summary", {}, "Cost beside the reference's: ", cost.text || "no figures"),
    el(
      "table",
      { class: "cost-table" },
      el("caption", { class: "muted" }, "XLA's cost analysis of your compiled program and of the reference's, on this case"),
      el(
        "thead",
        {},
        el("tr", {}, cell("th", "", { scope: "col" }), cell("th", "Yours", { scope: "col" }), cell("th", "Reference", { scope: "col" }), cell("th", "Ratio", { scope: "col" })),
      ),
      el(
        "tbody",
        {},
        ...rows.map((row) =>
          el("tr", { "data-figure": row.label }, cell("th", row.label, { scope: "row" }), cell("td", row.yours), cell("td", row.reference), cell("td", row.ratio)),
        ),
      ),
    ),
  );
}

/** Every feedback part a case has, in the order the page shows them. */
export function renderFeedback(item) {
  return [renderMistake(item), renderCost(item), renderProgram(item)].filter(Boolean);
}
