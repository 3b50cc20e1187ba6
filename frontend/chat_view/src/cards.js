/** The cards of a turn: a tool call (start, then end), an approval before a call, and a sign-in link. */
import { el, isWebUrl, openOnClick, pretty } from "./dom.js";
import { targetNote } from "./links.js";

const HINTS = [
  ["read_only", "read-only"],
  ["destructive", "destructive"],
  ["idempotent", "idempotent"],
  ["open_world", "open world"],
];
const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/=]+$/;

function where(event) {
  if (event.kind === "workflow") return "KNIME workflow";
  return event.server ? `${event.server} (${event.kind})` : event.kind;
}

/** A tool call as it starts: tool, server or workflow, redacted arguments, status "running". */
export function toolCard(event) {
  return el(
    "article",
    { class: "card tool", "data-call-id": event.call_id, "data-status": "running" },
    el(
      "header",
      {},
      el("span", { class: "tool-name" }, event.tool),
      el("span", { class: "where" }, where(event)),
      el("span", { class: "tool-status" }, "running"),
      el("span", { class: "duration" }),
    ),
    el("details", { class: "arguments" }, el("summary", {}, "Arguments"), el("pre", {}, pretty(event.arguments))),
  );
}

/**
 * Completes a tool card: status, duration, the PNG images and the result, collapsed; a call the person stopped has no
 * result, only what became of it (cancelled on its server, or a workflow tool left), which the card says openly.
 */
export function endToolCard(card, event) {
  card.dataset.status = event.status;
  card.querySelector(".tool-status").textContent = event.status;
  // An earlier call, shown again from the conversation, has no duration (the log has it).
  card.querySelector(".duration").textContent = event.duration_ms == null ? "" : `${(event.duration_ms / 1000).toFixed(1)} s`;
  const images = (event.images ?? []).filter((url) => PNG_DATA_URL.test(url));
  if (images.length) card.append(el("div", { class: "images" }, images.map((src) => el("img", { src, alt: "tool image" }))));
  if (event.status === "cancelled") card.append(el("p", { class: "stop-note" }, event.text ?? ""));
  else card.append(el("details", { class: "result" }, el("summary", {}, "Result"), el("pre", { class: "result-text" }, event.text ?? "")));
}

/**
 * An approval card: tool, server, hints and editable arguments, with Approve, Deny (optional reason) and Allow for
 * this session. `decide(choice, arguments, reason)` answers; arguments are sent only when the person changed them.
 */
export function approvalCard(event, decide) {
  const original = pretty(event.arguments);
  const argumentsBox = el("textarea", { class: "approval-arguments", rows: 4, "aria-label": "Arguments" }, original);
  const reason = el("input", { class: "deny-reason", type: "text", placeholder: "Reason (optional)", "aria-label": "Reason" });
  const problem = el("p", { class: "problem", hidden: true });
  const outcome = el("p", { class: "outcome", hidden: true });
  const hints = event.hints ?? {};
  const badges = HINTS.filter(([key]) => hints[key]).map(([, label]) => el("li", { class: `hint ${label.replace(" ", "-")}` }, label));
  if (!hints.annotated) badges.push(el("li", { class: "hint unannotated" }, "no annotations"));

  const card = el(
    "article",
    { class: "card approval", "data-call-id": event.call_id },
    el("header", {}, "Approve a call to ", el("span", { class: "tool-name" }, event.tool), " on ", el("span", { class: "where" }, where(event)), "?"),
    el("ul", { class: "hints" }, badges),
    el("label", {}, "Arguments", argumentsBox),
    problem,
    el(
      "div",
      { class: "actions" },
      el("button", { type: "button", class: "approve", onclick: () => answer("approve") }, "Approve"),
      el("button", { type: "button", class: "allow-session", onclick: () => answer("allow_session") }, "Allow for this session"),
      reason,
      el("button", { type: "button", class: "deny", onclick: () => answer("deny") }, "Deny"),
    ),
    outcome,
  );

  function answer(choice) {
    let edited = null;
    if (choice !== "deny" && argumentsBox.value !== original) {
      try {
        edited = JSON.parse(argumentsBox.value);
      } catch (error) {
        edited = undefined;
      }
      if (edited === undefined || edited === null || typeof edited !== "object" || Array.isArray(edited)) {
        problem.textContent = "The arguments must be a JSON object.";
        problem.hidden = false;
        return;
      }
    }
    problem.hidden = true;
    card.querySelectorAll("button, textarea, input").forEach((control) => (control.disabled = true));
    const said = { approve: "Approved", allow_session: "Allowed for this session", deny: "Denied" }[choice];
    outcome.textContent = choice === "deny" && reason.value ? `${said}: ${reason.value}` : said;
    outcome.hidden = false;
    card.dataset.choice = choice;
    decide(choice, edited, choice === "deny" ? reason.value || null : null);
  }
  return card;
}

/** A server's sign-in link: shown with the server's name (and its host when private), opened only by a click. */
export function signInCard(event) {
  const link = isWebUrl(event.url)
    ? el("a", { class: "sign-in-link", href: event.url, target: "_blank", rel: "noopener noreferrer", onclick: (click) => { click.preventDefault(); openOnClick(event.url); } }, event.url)
    : el("code", {}, event.url ?? "");
  return el("article", { class: "card sign-in" }, el("header", {}, el("span", { class: "where" }, event.server), " needs you to sign in:"), el("p", {}, link, targetNote(event.url, event.url)));
}
