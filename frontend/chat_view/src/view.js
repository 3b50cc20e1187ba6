/**
 * The chat: renders the session's events (see src/nodes/agent_chat/service.py) and sends what the person does through
 * the data service: init, send, poll, stop, decide, answer_form, instructions (the servers' own words, shown on
 * request) and app_request (what an MCP App asks for, see apps.js). While a turn runs, or an app waits for an answer,
 * it polls for new events.
 */
import { AppRequests } from "./app-requests.js";
import { Apps, markByApp } from "./apps.js";
import { approvalCard, endToolCard, signInCard, toolCard } from "./cards.js";
import { el } from "./dom.js";
import { formCard } from "./forms.js";
import { instructionsList } from "./instructions.js";
import { renderMarkdown } from "./markdown.js";

const POLL_MS = 250;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class ChatView {
  /** `call(method, ...args)` calls the data service and resolves to its result (undefined on a failed call). */
  constructor(root, call) {
    this.call = call;
    this.messages = root.querySelector(".messages");
    this.status = root.querySelector(".status");
    this.composer = root.querySelector(".composer");
    this.input = this.composer.querySelector("textarea");
    this.stopButton = root.querySelector(".stop");
    this.seq = 0;
    this.turnOpen = false;
    this.serverRunning = false;
    this.polling = false;
    this.streaming = null;
    this.cards = new Map();
    this.forms = new Map();
    this.showToolCalls = true;
    this.showApps = true;
    this.appCalls = new Map();
    this.requests = new AppRequests(call, () => this.poll());
    this.apps = new Apps(this.requests, (node) => this.add(node));
    this.composer.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send();
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        this.send();
      }
    });
    this.stopButton.addEventListener("click", () => this.stop());
    this.instructions = root.querySelector(".instructions");
    this.instructionsToggle = root.querySelector(".instructions-toggle");
    this.instructionsToggle.addEventListener("click", () => this.toggleInstructions());
  }

  /** Shows what the servers say about themselves, asked for afresh each time it opens; a second click hides it. */
  async toggleInstructions() {
    const opening = this.instructions.hidden;
    this.instructionsToggle.setAttribute("aria-expanded", String(opening));
    if (!opening) {
      this.instructions.hidden = true;
      return;
    }
    this.instructions.replaceChildren(el("p", { class: "none" }, "Asking the servers…"));
    this.instructions.hidden = false;
    this.instructions.replaceChildren(...instructionsList(await this.call("instructions")));
  }

  async start() {
    const state = (await this.call("init")) ?? {};
    this.showToolCalls = state.show_tool_calls !== false;
    this.showApps = state.show_apps !== false;
    this.apply(state.events ?? []);
    this.serverRunning = Boolean(state.running);
    this.update();
    if (this.serverRunning) this.poll();
  }

  async send() {
    const text = this.input.value.trim();
    if (!text || this.busy()) return;
    this.input.value = "";
    this.turnOpen = true;
    this.update();
    if ((await this.call("send", text)) === undefined) this.turnOpen = false; // the call failed: KNIME alerts
    this.update();
    this.poll();
  }

  async stop() {
    this.stopButton.disabled = true;
    this.stopButton.textContent = "Stopping…";
    await this.call("stop");
  }

  busy() {
    return this.turnOpen || this.serverRunning;
  }

  /** Whether to keep polling: a turn runs or an app waits for an answer. */
  expecting() {
    return this.busy() || this.requests.waiting();
  }

  /** Polls until the turn has ended (its turn_end event seen and the session idle) and no app waits. */
  async poll() {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.expecting()) {
        const answer = await this.call("poll", this.seq);
        if (answer) {
          this.apply(answer.events);
          this.serverRunning = Boolean(answer.running);
          this.update();
        }
        if (this.expecting()) await sleep(POLL_MS);
      }
    } finally {
      this.polling = false;
    }
  }

  update() {
    const busy = this.busy();
    this.composer.querySelector(".send").disabled = busy;
    this.stopButton.hidden = !busy;
    if (!busy) {
      this.stopButton.disabled = false;
      this.stopButton.textContent = "Stop";
    }
    this.status.hidden = !busy;
    if (busy && !this.status.textContent) this.status.textContent = "Working…";
    if (!busy) this.status.textContent = "";
  }

  /** Renders each event on its own: one the page cannot show becomes an error card, and the rest still show. */
  apply(events) {
    for (const event of events) {
      const seq = Number(event?.seq);
      if (Number.isFinite(seq)) this.seq = Math.max(this.seq, seq);
      try {
        this.render(event);
      } catch (error) {
        const kind = typeof event?.type === "string" ? event.type : "unknown";
        const why = error instanceof Error ? error.message : "unknown error";
        this.add(el("p", { class: "message error unshown" }, `Could not show a ${kind} event (${why}); the rest of the chat goes on.`));
      }
    }
    this.messages.lastElementChild?.scrollIntoView({ block: "end" });
  }

  render(event) {
    switch (event.type) {
      case "user":
        this.streaming = null;
        markByApp(this.bubble("user", event.text), event);
        break;
      case "assistant_delta":
        this.streaming ??= { text: "", node: this.bubble("assistant", "") };
        this.streaming.text += event.text ?? "";
        this.streaming.node.replaceChildren(renderMarkdown(this.streaming.text));
        break;
      case "assistant":
        if (this.streaming) this.streaming.node.replaceChildren(renderMarkdown(event.text));
        else this.bubble("assistant", event.text);
        this.streaming = null;
        break;
      case "tool_start":
        this.streaming = null;
        this.status.textContent = `Calling ${event.tool}…`;
        if (this.showToolCalls) this.cards.set(event.call_id, this.add(markByApp(toolCard(event), event)));
        // An app's own call answers that app: it shows no second one.
        if (event.app && this.showApps && !event.by_app) this.appCalls.set(event.call_id, event);
        break;
      case "progress":
        this.status.textContent = `${event.tool}: ${event.text}`;
        break;
      case "tool_end": {
        const card = this.cards.get(event.call_id);
        if (card) endToolCard(card, event);
        const app = this.appCalls.get(event.call_id);
        this.appCalls.delete(event.call_id);
        if (app) this.apps.show(app, card ?? null);
        this.status.textContent = "Working…";
        break;
      }
      case "approval":
        this.streaming = null;
        this.add(markByApp(approvalCard(event, (choice, args, reason) => this.call("decide", event.call_id, choice, args, reason)), event));
        break;
      case "app_reply":
        this.requests.settle(event);
        break;
      case "form":
        this.streaming = null;
        this.forms.set(event.form_id, this.add(formCard(event, (action, content) => this.call("answer_form", event.form_id, action, content))));
        break;
      case "sign_in":
        this.add(signInCard(event));
        break;
      case "error": {
        const form = event.form_id && this.forms.get(event.form_id);
        if (form) form.reopen(event.message);
        else this.add(el("p", { class: "message error" }, event.message ?? "Error"));
        break;
      }
      case "turn_end":
        this.streaming = null;
        this.turnOpen = false;
        break;
      default:
        break;
    }
  }

  /** A message bubble; the assistant's text is Markdown, the person's is plain text. */
  bubble(role, text) {
    const node = el("div", { class: `message ${role}` });
    if (role === "assistant") node.append(renderMarkdown(text));
    else node.textContent = text ?? "";
    return this.add(node);
  }

  add(node) {
    this.messages.append(node);
    return node;
  }
}
