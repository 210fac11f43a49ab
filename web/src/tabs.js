// Tabs (the WAI-ARIA tabs pattern): a tablist of buttons, each controlling one panel by aria-controls. One
// tab is selected and in the Tab order (roving tabindex); the arrow keys, Home and End move between tabs.
// A panel that is not selected gets the class "tab-hidden" (so a panel's own `hidden`, meaning "nothing
// to show yet", stays the page's to set).

/**
 * Wire `tablist`; returns `select(tabId, {focus})`. `onSelect(tabId)` follows every change; with
 * `hide: false` the panels are left to the page's stylesheet (tabs that are panes on a wide screen).
 */
export function wireTabs(tablist, { onSelect = () => {}, hide = true } = {}) {
  const tabs = [...tablist.querySelectorAll('[role="tab"]')];
  const panelOf = (tab) => document.getElementById(tab.getAttribute("aria-controls"));
  const select = (id, { focus = false } = {}) => {
    for (const tab of tabs) {
      const chosen = tab.id === id;
      tab.setAttribute("aria-selected", chosen ? "true" : "false");
      tab.tabIndex = chosen ? 0 : -1;
      if (hide) panelOf(tab)?.classList.toggle("tab-hidden", !chosen);
      if (chosen && focus) tab.focus();
    }
    onSelect(id);
  };
  for (const tab of tabs) {
    tab.addEventListener("click", () => select(tab.id, { focus: true }));
    tab.addEventListener("keydown", (event) => {
      const at = tabs.indexOf(tab);
      const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      select(tabs[(to + tabs.length) % tabs.length].id, { focus: true });
    });
  }
  const first = tabs.find((tab) => tab.getAttribute("aria-selected") === "true") ?? tabs[0];
  if (first) select(first.id);
  return select;
}

/**
 * A splitter (role=separator) that sets `property` (a percentage) on `target`: drag or arrow keys. `axis`
 * "x" (a vertical bar: the percentage of the target's width left of it, ArrowLeft/ArrowRight) or "y" (a
 * horizontal bar: the percentage of its height above it, ArrowUp/ArrowDown).
 */
export function wireSplitter(splitter, target, { property = "--split", min = 20, max = 80, axis = "x", onChange } = {}) {
  const set = (value) => {
    const clamped = Math.round(Math.min(max, Math.max(min, value)));
    target.style.setProperty(property, `${clamped}%`);
    splitter.setAttribute("aria-valuenow", String(clamped));
    onChange?.(clamped);
  };
  const [less, more] = axis === "y" ? ["ArrowUp", "ArrowDown"] : ["ArrowLeft", "ArrowRight"];
  splitter.addEventListener("keydown", (event) => {
    const now = Number(splitter.getAttribute("aria-valuenow"));
    const to = { [less]: now - 5, [more]: now + 5, Home: min, End: max }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    set(to);
  });
  splitter.addEventListener("pointerdown", (event) => {
    splitter.setPointerCapture(event.pointerId);
    const box = target.getBoundingClientRect();
    const move = (e) =>
      set(axis === "y" ? ((e.clientY - box.top) / box.height) * 100 : ((e.clientX - box.left) / box.width) * 100);
    const up = () => {
      splitter.removeEventListener("pointermove", move);
      splitter.removeEventListener("pointerup", up);
    };
    splitter.addEventListener("pointermove", move);
    splitter.addEventListener("pointerup", up);
  });
  return set;
}
