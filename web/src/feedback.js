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

/** The cost line of a case ("2.9x the reference's FLOPs, ..."), or null. */
export function renderCost(item) {
  const cost = item.cost;
  if (!cost || !cost.text) return null;
  return el("p", { class: "cost muted" }, "Cost: ", cost.text);
}

/** Every feedback part a case has, in the order the page shows them. */
export function renderFeedback(item) {
  return [renderMistake(item), renderCost(item), renderProgram(item)].filter(Boolean);
}
