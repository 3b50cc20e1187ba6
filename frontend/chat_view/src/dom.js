/** Building DOM nodes from text only: whatever a model, tool or server sent is set as text, never parsed as HTML. */

/**
 * An element with attributes (`class`, `data-*`, …; `on*` keys add listeners) and children (nodes or strings,
 * which become text nodes; null and false are left out).
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** `value` as indented JSON for display (strings as they are). */
export function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value ?? {}, null, 2);
}

/** True for an http(s) URL: the only kind of link the page offers to open. */
export function isWebUrl(url) {
  try {
    const { protocol } = new URL(url);
    return protocol === "https:" || protocol === "http:";
  } catch {
    return false;
  }
}

/** Opens `url` in a new window, only from a person's click, never for anything but http(s). */
export function openOnClick(url) {
  if (isWebUrl(url)) window.open(url, "_blank", "noopener,noreferrer");
}
