// A box that scrolls sideways on its own (display math, a code block of the statement at a phone's width)
// must be reachable with the keyboard, so that its hidden part can be scrolled into view without a mouse:
// such a box takes the focus (tabindex=0) while it overflows, and only then.

/** The statement's boxes that may scroll sideways. */
const SCROLLERS = ".prose math[display='block'], .prose pre, .prose table";

/** Give each overflowing box of `root` a tab stop and a name; take it back from one that fits again. */
export function markScrollers(root) {
  for (const box of root.querySelectorAll(SCROLLERS)) {
    const overflows = box.scrollWidth > box.clientWidth + 1;
    if (overflows && !box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.dataset.scroller = "true";
    } else if (!overflows && box.dataset.scroller) {
      box.removeAttribute("tabindex");
      delete box.dataset.scroller;
    }
  }
}

/** Mark the scrollers of `root` now and whenever its size changes (a new window width, a tab shown). */
export function watchScrollers(root) {
  if (!root) return;
  markScrollers(root);
  if (typeof ResizeObserver === "function") new ResizeObserver(() => markScrollers(root)).observe(root);
}
