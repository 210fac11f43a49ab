// Moving the focus through the page as Tab would, for editors that keep Tab for indenting.

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"]), [contenteditable="true"]';

/** Focus the element after (or, `backwards`, before) `from` in the Tab order; false when there is none. */
export function focusNext(from, backwards = false) {
  const all = [...document.querySelectorAll(FOCUSABLE)].filter(
    (node) => node.tabIndex >= 0 && node.getClientRects().length > 0 && !node.closest("[hidden], .tab-hidden"),
  );
  const inside = all.filter((node) => from.contains(node) || node === from);
  const anchor = backwards ? all.indexOf(inside[0]) : all.indexOf(inside[inside.length - 1]);
  const target = all[anchor + (backwards ? -1 : 1)];
  if (!target) return false;
  target.focus();
  return true;
}
