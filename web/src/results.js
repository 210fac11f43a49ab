// Render grading results: a Run's cases in full, a submission's cases as they arrive, the overall verdict.
import { cloneTemplate, el } from "./dom.js";
import { renderFeedback } from "./feedback.js";
import { conditionOf, tracingRule, userLine } from "./explain.js";
import { differingPaths, inputLayout, layoutOf, renderTree } from "./tree.js";
import { verdictBadge, verdictLabel } from "./verdicts.js";

function milliseconds(value) {
  if (value === null || value === undefined) return null;
  return value >= 100 ? `${Math.round(value)} ms` : `${Number(value.toFixed(1))} ms`;
}

/** "compile 41 ms · run 0.2 ms", or null when the case never reached the executor. */
export function timesText(item) {
  const parts = [];
  const compile = milliseconds(item.compile_ms);
  const run = milliseconds(item.run_ms);
  if (compile) parts.push(`compile ${compile}`);
  if (run) parts.push(`run ${run}`);
  return parts.length ? parts.join(" · ") : null;
}

export function caseTitle(item) {
  if (item.visibility === "custom") return "Your input";
  const example = /^example_(\d+)$/.exec(item.name);
  if (example) return `Example ${example[1]}`;
  return item.visibility === "hidden" ? `${item.name} (hidden)` : item.name;
}

/**
 * The message of a case, with what it teaches: the user's line (a button that shows it in the editor) and,
 * for a tracing error, why jax.jit refused it and what to write instead.
 */
export function renderMessage(item, { onShowLine, explain = true } = {}) {
  const parts = [];
  if (!item.message) return parts;
  parts.push(el("pre", { class: "message", text: item.message }));
  const where = userLine(item.message);
  if (where && onShowLine) {
    const button = el("button", { type: "button", class: "link-button" }, `Show line ${where.line} in the editor`);
    button.addEventListener("click", () => onShowLine(where.line));
    parts.push(button);
  }
  if (explain && item.verdict === "trace_error") {
    const explanation = explainTracing(item.message, where);
    if (explanation) parts.push(explanation);
  }
  return parts;
}

function explainTracing(message, where) {
  const rule = tracingRule(message);
  if (!rule) return null;
  const fragment = cloneTemplate(`explain-${rule}`);
  const box = fragment.firstElementChild;
  const condition = conditionOf(where?.source);
  for (const slot of box.querySelectorAll("[data-slot=line]")) {
    slot.textContent = where?.source ? `line ${where.line}: ${where.source}` : "";
    slot.closest("[data-if=line]")?.toggleAttribute("hidden", !where?.source);
  }
  for (const slot of box.querySelectorAll("[data-slot=condition]")) {
    slot.textContent = condition ?? "pred";
  }
  return box;
}

/** Your output beside the expected one; `rootNames` names a tuple output's elements in the paths. */
function outputPanes(item, { rootNames = [] } = {}) {
  if (!item.output && !item.expected) return null;
  // A value too large to show comes without JSON, with a text that says what it holds.
  const omitted = item.output?.omitted || item.expected?.omitted;
  const mark = item.verdict !== "accepted" && item.output && item.expected && !omitted;
  const got = item.output?.json;
  const expected = item.expected?.json;
  const gotLayout = layoutOf(item.output);
  const expectedLayout = layoutOf(item.expected);
  const pane = (title, shown, other, layout, otherLayout) =>
    el(
      "div",
      { class: "pane" },
      el("h4", {}, title),
      !shown
        ? el("p", { class: "muted" }, "(no output)")
        : shown.omitted
          ? el("p", { class: "muted omitted" }, shown.text)
          : el("pre", { class: "value" }, renderTree(shown.json, { other, mark, layout, otherLayout, rootNames })),
    );
  const panes = el(
    "div",
    { class: "panes" },
    pane("Your output", item.output, expected, gotLayout, expectedLayout),
    pane("Expected output", item.expected, got, expectedLayout, gotLayout),
  );
  const differing = mark ? differingPaths(got, expected, { gotLayout, expectedLayout, rootNames }) : [];
  return [
    panes,
    differing.length
      ? el("p", { class: "differs" }, "Highlighted leaves differ: ", el("code", {}, differing.join(", ")))
      : null,
  ];
}

const FLOAT = /^(b?float\d+)$/;

/**
 * The float dtype of a case's leaves: a custom case's is the Run's (`options.runDtype`), an example's the
 * problem says (`options.inputs.examples`); else the first float leaf of its expected output.
 */
export function caseDtype(item, options = {}) {
  const inputs = options.inputs;
  if (item.visibility === "custom") return options.runDtype ?? inputs?.dtype ?? null;
  const known = inputs?.examples?.[item.name];
  if (known) return known;
  for (const shown of [item.expected, item.output]) {
    const leaf = (shown?.leaves ?? []).find((l) => FLOAT.test(l.dtype));
    if (leaf) return leaf.dtype;
  }
  return inputs?.dtype ?? null;
}

/** A case's input as a tree, with each leaf's dtype when the page knows the arguments. */
function inputTree(item, options) {
  return renderTree(item.input, { layout: inputLayout(item.input, options.inputs, caseDtype(item, options)) });
}

/** One case of a Run: title, verdict, times, message, input, and your output beside the expected one. */
export function renderCase(item, options = {}) {
  const card = el("article", { class: "case", "data-case": item.name, "data-verdict": item.verdict });
  const times = timesText(item);
  card.append(
    el(
      "header",
      {},
      el("h3", {}, caseTitle(item)),
      verdictBadge(item.verdict, item.reason),
      times ? el("span", { class: "times" }, times) : null,
    ),
    ...(options.sameAs
      ? [el("p", { class: "muted same-message" }, `Same message as ${options.sameAs}.`)]
      : renderMessage(item, options)),
  );
  if (item.input) {
    card.append(
      el(
        "details",
        { class: "input", open: item.visibility === "custom" },
        el("summary", {}, "Input"),
        el("pre", { class: "value" }, inputTree(item, options)),
      ),
    );
  }
  const panes = outputPanes(item, options);
  if (panes) card.append(...panes.filter(Boolean));
  card.append(...renderFeedback(item));
  return card;
}

/** Most printed lines the page shows; the rest are counted, not shown. */
export const PRINT_LINES_SHOWN = 400;

/** `text` cut to its first `limit` lines: `{shown, cut}` (how many lines were left out). */
export function capLines(text, limit = PRINT_LINES_SHOWN) {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (lines.length <= limit) return { shown: lines.join("\n"), cut: 0, lines: lines.length };
  return { shown: lines.slice(0, limit).join("\n"), cut: lines.length - limit, lines: lines.length };
}

/** Whether `code` calls jax.debug.print without ordered=True (XLA may then run the prints in any order). */
export function unorderedDebugPrint(code) {
  const calls = [...(code ?? "").matchAll(/debug\.print\s*\(([^\n]*)/g)];
  return calls.some((call) => !/ordered\s*=\s*True/.test(call[1]));
}

const ORDER_NOTE =
  "Lines from jax.debug.print may appear out of order: without ordered=True XLA is free to run the prints " +
  "in any order (and once per compiled call). Pass ordered=True to keep them in program order.";

/** "Example 1", "Example 1 and Example 2", "Examples 1, 2 and 3": the cases a section belongs to. */
function casesText(names) {
  const titles = names.map((name) => caseTitle({ name, visibility: name === "custom" ? "custom" : "public" }));
  if (titles.length <= 1) return titles[0] ?? "";
  return `${titles.slice(0, -1).join(", ")} and ${titles.at(-1)}`;
}

/** The heading of one printed-output section (judge/feedback/printed.py says what each kind is). */
export function sectionTitle(section) {
  const cases = casesText(section.cases ?? []);
  switch (section.kind) {
    case "load":
      return "While loading your code";
    case "trace":
      return section.cases.length > 1
        ? `While tracing ${cases} (one trace: same shapes and dtypes)`
        : `While tracing ${cases}`;
    case "run":
      return `jax.debug output of ${cases}`;
    case "retrace":
      return `While tracing ${cases} again (the judge checks that a second trace gives the same program)`;
    default:
      return "Other output";
  }
}

function bytesText(count) {
  return count >= 1024 ? `${(count / 1024).toFixed(count >= 10240 ? 0 : 1)} KiB` : `${count} bytes`;
}

/** One section: its heading, its text in a scrolling box (at most `limit` lines), what was cut, a note. */
function renderSection(section, limit) {
  const { shown, cut, lines } = capLines(section.text ?? "", limit);
  const title = sectionTitle(section);
  const count = `${lines} line${lines === 1 ? "" : "s"}`;
  const part = el(
    "section",
    { class: "print-section", "data-kind": section.kind, "data-cases": (section.cases ?? []).join(" ") },
    el("h4", {}, `${title} `, el("span", { class: "times" }, count)),
  );
  if (shown) part.append(el("pre", { class: "stdout", text: shown, tabindex: "0", "aria-label": `${title}, ${count}` }));
  if (cut) part.append(el("p", { class: "muted print-cut" }, `${cut} more line${cut === 1 ? "" : "s"} not shown here.`));
  if (section.cut_bytes > 0) {
    part.append(
      el("p", { class: "muted print-limit" }, `${bytesText(section.cut_bytes)} more printed here past the output limit (not kept).`),
    );
  }
  if (section.unordered) part.append(el("p", { class: "muted print-order" }, ORDER_NOTE));
  return part;
}

/**
 * The captured prints of a run or submission, or null when nothing was printed: per case, in the order
 * printed (result.output: loading, tracing each signature, each case's jax.debug output), each section in
 * a scrolling box of bounded height with at most PRINT_LINES_SHOWN lines (the rest counted), with a
 * note where the function's jax.debug prints may be reordered. A result without sections (stored before
 * the judge split output) shows its stdout in one box, with the note when `code` uses an unordered print.
 */
export function renderPrints(result, { code } = {}) {
  if (!result.stdout) return null;
  const sections = (result.output ?? []).filter((section) => section.text || section.cut_bytes);
  const lines = capLines(result.stdout).lines;
  const count = `${lines} line${lines === 1 ? "" : "s"}`;
  const box = el(
    "section",
    { class: "prints", "aria-label": "Printed output" },
    el("h3", {}, "Printed output ", el("span", { class: "times" }, count)),
  );
  if (sections.length) {
    for (const section of sections) box.append(renderSection(section, PRINT_LINES_SHOWN));
  } else {
    const { shown, cut } = capLines(result.stdout);
    box.append(
      el("pre", { class: "stdout", text: shown, tabindex: "0", "aria-label": `Printed output, ${count}` }),
      cut ? el("p", { class: "muted print-cut" }, `${cut} more line${cut === 1 ? "" : "s"} not shown here.`) : null,
      unorderedDebugPrint(code) ? el("p", { class: "muted print-order" }, ORDER_NOTE) : null,
    );
  }
  if (result.stdout_truncated) box.append(el("p", { class: "muted" }, "(cut: the print limit was reached)"));
  return box;
}

/** The headline of a result: overall verdict, how many cases passed, and the time taken. */
export function renderSummary(result, what) {
  const summary = el("div", { class: "summary", "data-verdict": result.verdict });
  summary.append(
    verdictBadge(result.verdict),
    el("span", {}, ` ${result.passed} of ${result.total} ${what} passed`),
  );
  if (typeof result.elapsed_ms === "number") summary.append(el("span", { class: "times" }, milliseconds(result.elapsed_ms)));
  return summary;
}

/**
 * The message of the whole result when no case carries it (a syntax error, a missing function: the code
 * never reached a case, so every case is "not run"), with the button that shows its line; else null.
 */
export function renderResultMessage(result, options = {}) {
  const told = (item) => item.message && item.verdict !== "not_run" && result.message.includes(item.message);
  if (!result.message || result.cases.some(told)) return null;
  const box = el("div", { class: "result-message", "data-verdict": result.verdict });
  box.append(...renderMessage({ message: result.message, verdict: result.verdict }, options));
  box.firstElementChild?.classList.add("final-message");
  return box;
}

/** The whole result of a Run. */
export function renderRun(result, options = {}) {
  // The dtype a custom case's float leaves were given (the page notes it on the result it keeps).
  if (result.run_dtype) options = { ...options, runDtype: result.run_dtype };
  const what = result.cases.some((c) => c.visibility === "custom") ? "cases" : "examples";
  // One explanation of a tracing error is enough, even when every case fails the same way.
  const explained = result.cases.find((item) => item.verdict === "trace_error");
  return [
    renderSummary(result, what),
    renderResultMessage(result, options),
    ...result.cases.map((item, i) => {
      const first = result.cases.findIndex((other) => other.message && other.message === item.message);
      const sameAs = first >= 0 && first < i ? caseTitle(result.cases[first]) : null;
      return renderCase(item, { ...options, explain: item === explained, sameAs });
    }),
    renderPrints(result, options),
  ].filter(Boolean);
}

/** One row of a submission's progress: name, verdict, times, and the message (hidden cases: no data). */
export function renderProgressRow(item, options = {}) {
  const row = el("li", { class: "progress-row", "data-case": item.name, "data-verdict": item.verdict });
  const times = timesText(item);
  row.append(
    el(
      "div",
      { class: "row-head" },
      el("span", { class: "case-name" }, caseTitle(item)),
      verdictBadge(item.verdict, item.reason),
      times ? el("span", { class: "times" }, times) : null,
    ),
  );
  if (item.verdict !== "accepted") {
    if (options.sameAs) row.append(el("p", { class: "muted same-message" }, `Same message as ${options.sameAs}.`));
    else row.append(...renderMessage(item, options));
    row.append(...renderFeedback(item));
  }
  if (item.visibility !== "hidden" && item.verdict !== "accepted" && (item.output || item.expected)) {
    const details = el("details", {}, el("summary", {}, "Input and outputs"));
    if (item.input) details.append(el("pre", { class: "value" }, inputTree(item, options)));
    details.append(...outputPanes(item, options).filter(Boolean));
    row.append(details);
  }
  return row;
}

export function verdictSentence(result) {
  return `${verdictLabel(result.verdict)}: ${result.passed} of ${result.total} cases passed.`;
}
