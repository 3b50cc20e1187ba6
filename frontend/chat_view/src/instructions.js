/** The "Server instructions" panel: what each MCP server says about itself, asked for on request, shown as text. */
import { el } from "./dom.js";

/** The panel's content for `found`, the data service's `instructions` answer: each server's name and its words. */
export function instructionsList(found) {
  if (!Array.isArray(found) || !found.length) {
    return [el("p", { class: "none" }, "No server has given instructions (so far: a server connects on its first call when the model is not given them).")];
  }
  return found.map((item) =>
    el(
      "article",
      { class: "card server-instructions" },
      el("header", {}, el("span", { class: "where" }, String(item?.server ?? "")), item?.cut ? el("span", { class: "cut" }, "cut at the size limit") : null),
      el("pre", { class: "instructions-text" }, String(item?.text ?? "")),
    ),
  );
}
