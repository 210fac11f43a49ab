// The problem list. The server renders every problem in the suggested order (judge/web/routes.py); this
// script adds what only this browser (signed in: the account, storage.js) knows: the last verdict on each
// problem, how many are solved, the next one to try, and the search and filters (which need no request:
// they show and hide the rendered rows).
import { el, replace } from "./dom.js";
import { startAccount } from "./account.js";
import { isSolved, loadVerdict } from "./storage.js";
import { verdictBadge } from "./verdicts.js";

const $ = (id) => document.getElementById(id);

/** Whether a row matches the search words (each must be in the title or a tag), difficulty and tag. */
export function matches(row, { words, difficulty, tag, unsolvedOnly }) {
  if (difficulty && row.difficulty !== difficulty) return false;
  if (tag && !row.tags.includes(tag)) return false;
  if (unsolvedOnly && row.solved) return false;
  const haystack = `${row.title} ${row.tags.join(" ")} ${row.slug}`.toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** The search box's text as lower-case words. */
export function searchWords(text) {
  return text.toLowerCase().split(/\s+/).filter(Boolean);
}

function showVerdicts(rows) {
  for (const row of rows) {
    const last = loadVerdict(row.slug);
    row.solved = isSolved(row.slug);
    if (last) {
      replace(
        row.node.querySelector(".last-verdict"),
        el("span", { class: "visually-hidden" }, "Your last verdict: "),
        verdictBadge(last.verdict),
      );
    }
  }
  const solved = rows.filter((row) => row.solved).length;
  $("solved-count").textContent = String(solved);
  $("progress").hidden = false;
  const next = rows.find((row) => !row.solved);
  if (next) {
    const link = $("suggested-link");
    link.textContent = next.title;
    link.href = next.node.querySelector(".problem-link").getAttribute("href");
    $("suggested").hidden = false;
  }
}

function wireFilters(rows) {
  const form = $("filters");
  const apply = () => {
    const filter = {
      words: searchWords($("search").value),
      difficulty: $("difficulty-filter").value,
      tag: $("tag-filter").value,
      unsolvedOnly: $("unsolved-only").checked,
    };
    let shown = 0;
    for (const row of rows) {
      row.node.hidden = !matches(row, filter);
      if (!row.node.hidden) shown += 1;
    }
    $("no-match").hidden = shown > 0;
    $("match-count").textContent = shown === rows.length ? "" : `${shown} of ${rows.length} shown`;
  };
  form.addEventListener("input", apply);
  form.addEventListener("submit", (event) => event.preventDefault());
  form.hidden = false;
  apply();
}

function start() {
  startAccount();
  const list = $("problems");
  const rows = list
    ? [...list.querySelectorAll(".problem-row")].map((node) => ({
        node,
        slug: node.dataset.slug,
        title: node.querySelector(".problem-link").textContent,
        difficulty: node.dataset.difficulty,
        tags: node.dataset.tags.split(" ").filter(Boolean),
        solved: false,
      }))
    : [];
  if (rows.length) {
    showVerdicts(rows);
    wireFilters(rows);
  }
  document.body.dataset.ready = "true";
  // Navigation start to a usable page (bench/bench_page.py reads it).
  performance.mark("judge:ready");
}

if (typeof document !== "undefined") start();
