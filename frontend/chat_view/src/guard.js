/**
 * The page's message guard, installed before anything else listens: the page hears only KNIME (its parent window)
 * and its MCP Apps' sandbox frames. A message from any other window (an app's inner frame posting past its proxy, a
 * window it opened) is dropped, and so is anything from an app frame that looks like KNIME's UI-extension protocol
 * (`type` starting "UIExtension"), so an app can never answer or forge what @knime/ui-extension-service waits for.
 */

const appFrames = new Set();

/** Whether `source` is the window of one of the page's app frames. */
export function isAppFrame(source) {
  for (const frame of appFrames) if (source !== null && frame.contentWindow === source) return true;
  return false;
}

/** Lets the page hear `frame` (an app's sandbox proxy) until `forgetAppFrame(frame)`. */
export function registerAppFrame(frame) {
  appFrames.add(frame);
}

export function forgetAppFrame(frame) {
  appFrames.delete(frame);
}

function guard(event) {
  if (event.source !== null && event.source === window.parent) return;
  const fromApp = isAppFrame(event.source);
  const type = event.data?.type;
  if (fromApp && !(typeof type === "string" && type.startsWith("UIExtension"))) return;
  event.stopImmediatePropagation();
}

// Capturing on window, registered first: it runs before every other message listener of the page.
window.addEventListener("message", guard, { capture: true });
