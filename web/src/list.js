// The problem list: title, difficulty, tags, and the last verdict this browser saw for each problem.
import { api } from "./api.js";
import { el, replace } from "./dom.js";
import { loadVerdict } from "./storage.js";
import { verdictBadge } from "./verdicts.js";

function row(problem) {
  const last = loadVerdict(problem.slug);
  return el(
    "li",
    { class: "problem-row", "data-slug": problem.slug },
    el("a", { href: `/problems/${encodeURIComponent(problem.slug)}`, class: "problem-link" }, problem.title),
    el("span", { class: `difficulty difficulty-${problem.difficulty}` }, problem.difficulty),
    el("span", { class: "tags" }, ...problem.tags.map((tag) => el("span", { class: "tag" }, tag))),
    el(
      "span",
      { class: "last-verdict" },
      last
        ? [el("span", { class: "visually-hidden" }, "Your last verdict: "), verdictBadge(last.verdict)]
        : el("span", { class: "muted" }, "not submitted yet"),
    ),
  );
}

async function start() {
  const list = document.getElementById("problems");
  try {
    const data = await api("/api/problems");
    const problems = Array.isArray(data) ? data : (data.problems ?? data.items ?? []);
    if (problems.length === 0) replace(list, el("li", { class: "muted" }, "No problems are installed."));
    else replace(list, ...problems.map(row));
  } catch (error) {
    replace(list, el("li", { class: "error" }, `The problems could not be loaded: ${error.message}`));
  }
  list.setAttribute("aria-busy", "false");
  document.body.dataset.ready = "true";
  // Navigation start to a usable page (bench/bench_page.py reads it).
  performance.mark("judge:ready");
}

start();
