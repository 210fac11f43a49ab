// Small DOM helpers. Text from the judge (messages, prints, outputs) only ever enters the page as text.

/** `el("p", {class: "x"}, "text", child)`: an element with attributes and children (strings become text). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replace the children of `node`. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A fresh copy of the `<template id=...>` in the page. */
export function cloneTemplate(id) {
  const template = document.getElementById(id);
  return template.content.cloneNode(true);
}
