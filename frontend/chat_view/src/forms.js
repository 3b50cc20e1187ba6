/**
 * A server's question as a form built from its JSON schema (MCP elicitation: a flat object of strings, numbers,
 * integers, booleans, enums and multi-select enums, reduced to that by the core), answered with Accept, Decline or
 * Cancel. URL mode shows the URL, its host when private, and the server's name instead, and opens the URL only when
 * the person clicks. The session validates the content again.
 */
import { el, isWebUrl, openOnClick } from "./dom.js";
import { targetNote } from "./links.js";

/** A choice field's [value, label] pairs (an array field's are its items'), or null for other fields. */
function choices(schema) {
  const source = schema.type === "array" ? schema.items ?? {} : schema;
  if (Array.isArray(source.enum)) return source.enum.map((value, i) => [value, schema.enumNames?.[i] ?? String(value)]);
  const options = source.oneOf ?? source.anyOf;
  if (Array.isArray(options)) return options.map((option) => [option.const, option.title ?? String(option.const)]);
  return null;
}

const INPUT_TYPES = { email: "email", uri: "url", date: "date" };

function field(name, schema, required) {
  const options = choices(schema);
  let input;
  if (options && schema.type === "array") {
    const chosen = Array.isArray(schema.default) ? schema.default : [];
    input = el("select", { name, multiple: true }, options.map(([value, label]) => el("option", { value: String(value), selected: chosen.includes(value) }, label)));
  } else if (options) {
    input = el("select", { name }, required ? null : el("option", { value: "" }, ""), options.map(([value, label]) => el("option", { value: String(value), selected: value === schema.default }, label)));
  } else if (schema.type === "boolean") {
    input = el("input", { name, type: "checkbox", checked: schema.default === true });
  } else if (schema.type === "number" || schema.type === "integer") {
    input = el("input", { name, type: "number", step: schema.type === "integer" ? 1 : "any", min: schema.minimum, max: schema.maximum, value: schema.default });
  } else {
    input = el("input", { name, type: INPUT_TYPES[schema.format] ?? "text", minlength: schema.minLength, maxlength: schema.maxLength, value: schema.default });
  }
  input.required = required && schema.type !== "boolean";
  return el("label", { class: "field", "data-field": name }, el("span", { class: "field-title" }, (schema.title ?? name) + (required ? " *" : "")), input, schema.description ? el("small", {}, schema.description) : null);
}

/** The value of one field in the schema's type, or undefined when left empty. */
function valueOf(input, schema) {
  if (schema.type === "boolean") return input.checked;
  if (schema.type === "array") {
    const options = choices(schema);
    const chosen = [...input.selectedOptions].map((option) => options.find(([value]) => String(value) === option.value)?.[0]);
    return chosen.length ? chosen : undefined;
  }
  if (input.value === "") return undefined;
  if (schema.type === "number" || schema.type === "integer") return Number(input.value);
  const options = choices(schema);
  return options ? options.find(([value]) => String(value) === input.value)?.[0] : input.value;
}

/** A form card; `answer(action, content)` sends the person's answer. */
export function formCard(event, answer) {
  const schema = event.schema ?? {};
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const problem = el("p", { class: "problem", hidden: true });
  const outcome = el("p", { class: "outcome", hidden: true });
  const body = event.url
    ? el("p", { class: "form-url" }, el("span", { class: "where" }, event.server), " asks you to open ", el("code", { class: "url" }, event.url), targetNote(event.url, event.url))
    : el("div", { class: "fields" }, Object.entries(properties).map(([name, property]) => field(name, property, required.has(name))));
  const accept = event.url && isWebUrl(event.url)
    ? el("button", { type: "button", class: "accept", onclick: () => { openOnClick(event.url); send("accept", null); } }, "Open link")
    : el("button", { type: "button", class: "accept", onclick: () => submit() }, "Accept");
  const card = el(
    "article",
    { class: "card form", "data-form-id": event.form_id },
    el("header", {}, el("span", { class: "where" }, event.server), " asks:"),
    el("p", { class: "form-message" }, event.message ?? ""),
    body,
    problem,
    el("div", { class: "actions" }, event.url && !isWebUrl(event.url) ? null : accept,
      el("button", { type: "button", class: "decline", onclick: () => send("decline", null) }, "Decline"),
      el("button", { type: "button", class: "cancel", onclick: () => send("cancel", null) }, "Cancel")),
    outcome,
  );

  function submit() {
    const content = {};
    for (const [name, property] of Object.entries(properties)) {
      const input = card.querySelector(`[data-field="${CSS.escape(name)}"] [name]`);
      if (!input.checkValidity()) {
        problem.textContent = `${property.title ?? name}: ${input.validationMessage}`;
        problem.hidden = false;
        return;
      }
      const value = valueOf(input, property);
      if (value !== undefined) content[name] = value;
    }
    send("accept", content);
  }

  function send(action, content) {
    problem.hidden = true;
    card.querySelectorAll("button, input, select").forEach((control) => (control.disabled = true));
    outcome.textContent = { accept: "Sent", decline: "Declined", cancel: "Cancelled" }[action];
    outcome.hidden = false;
    card.dataset.action = action;
    answer(action, content);
  }

  /** Opens the form again after the session refused the content (shown as a problem). */
  card.reopen = (message) => {
    card.querySelectorAll("button, input, select").forEach((control) => (control.disabled = false));
    outcome.hidden = true;
    delete card.dataset.action;
    problem.textContent = message;
    problem.hidden = false;
  };
  return card;
}
