/**
 * MCP Apps in the chat: a tool call whose tool has an app shows it under its card once the call ended. The app runs in
 * this folder's sandbox.html, loaded in <iframe sandbox="allow-scripts"> (an opaque origin, never the page's), which
 * puts the app's document (its own CSP first, built by the core) in an inner sandboxed frame. The page speaks to it
 * with ext-apps' AppBridge; everything the app asks for (a tool call, a resource, a message) goes to the chat session
 * as an app request for that call, which allows only the call's own server and applies the run's approval rules.
 */
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { hostContext, onThemeChange } from "./app-theme.js";
import { el, isWebUrl, openOnClick } from "./dom.js";
import { forgetAppFrame, registerAppFrame } from "./guard.js";
import { targetNote } from "./links.js";
import { version } from "../package.json";

const HOST_INFO = { name: "KNIME Agent Chat", version };
const CAPABILITIES = { serverTools: {}, serverResources: {}, openLinks: {}, message: { text: {} }, logging: {} };
const MIN_HEIGHT = 120;
const MAX_HEIGHT = 900;
const SANDBOX = "allow-scripts";

/** What an app is told about the page: the theme, KNIME's style variables, inline display at most MAX_HEIGHT high. */
function context() {
  return { ...hostContext(), containerDimensions: { maxHeight: MAX_HEIGHT } };
}

/** The app's name as the page shows it: its tool and server. */
export function appName(event) {
  return `${event.tool} app (${event.server})`;
}

/** Marks a card or message an app made (its event has `by_app`, the app's name): "from <app>". */
export function markByApp(node, event) {
  if (typeof event.by_app !== "string") return node;
  node.dataset.byApp = event.by_app;
  const badge = el("span", { class: "by-app" }, `from ${event.by_app}`);
  const header = node.querySelector("header");
  if (header) header.append(badge);
  else node.prepend(badge, " ");
  return node;
}

/** A CallToolResult as the app's schema takes it: no null fields. */
function toolResult(result) {
  return Object.fromEntries(Object.entries(result ?? {}).filter(([, value]) => value !== null && value !== undefined));
}

/** A link an app asks to open: shown with the app's name and where it goes, opened only on the person's click. */
function linkCard(name, url) {
  const link = el("a", { class: "app-link", href: url, target: "_blank", rel: "noopener noreferrer", onclick: (click) => { click.preventDefault(); openOnClick(url); } }, url);
  return el("article", { class: "card app-link-card" }, el("header", {}, el("span", { class: "where" }, name), " asks to open a link:"), el("p", {}, link, targetNote(url, url)));
}

export class Apps {
  /** `requests` is the page's AppRequests; `add(node)` appends a card to the chat. */
  constructor(requests, add) {
    this.requests = requests;
    this.add = add;
    this.bridges = new Set();
    onThemeChange(() => this.bridges.forEach((bridge) => bridge.setHostContext(context())));
  }

  /** Shows the app of the ended call `event` (its tool_start) in a slot under `card` (or on its own without one). */
  async show(event, card) {
    const name = appName(event);
    const slot = el("div", { class: "app", "data-call-id": event.call_id, "data-status": "loading" });
    const problem = el("p", { class: "problem app-problem", hidden: true });
    const fail = (what, error) => {
      slot.dataset.status = "failed";
      problem.textContent = `The ${name} ${what}: ${error instanceof Error ? error.message : String(error)}. The chat goes on without it.`;
      problem.hidden = false;
    };
    (card ?? this.add(el("article", { class: "card app-host" }))).append(slot, problem);
    let view;
    try {
      view = await this.requests.ask(event.call_id, "view");
    } catch (error) {
      fail("could not be shown", error);
      return;
    }
    try {
      await this.connect(event, name, view, slot, fail);
    } catch (error) {
      fail("stopped", error);
    }
  }

  /** Frames the sandbox proxy in `slot` and connects a bridge to it; `fail(what, error)` shows what went wrong. */
  async connect(event, name, view, slot, fail) {
    if (view.prefers_border !== false) slot.classList.add("bordered");
    const frame = el("iframe", { class: "app-frame", sandbox: SANDBOX, src: "sandbox.html", title: name, allow: view.allow || null, referrerpolicy: "no-referrer" });
    frame.style.width = "100%";
    frame.style.height = `${MIN_HEIGHT}px`;
    registerAppFrame(frame);
    slot.append(frame);
    const bridge = new AppBridge(null, HOST_INFO, CAPABILITIES, { hostContext: context() });
    const ask = (method, params) => this.requests.ask(event.call_id, method, params);
    bridge.onsandboxready = () => bridge.sendSandboxResourceReady({ html: view.document, csp: view.csp, permissions: view.permissions, sandbox: SANDBOX, allow: view.allow ?? "" });
    bridge.oninitialized = async () => {
      await bridge.sendToolInput({ arguments: view.input ?? {} });
      if (view.result) await bridge.sendToolResult(toolResult(view.result));
      else await bridge.sendToolCancelled({ reason: "The tool call did not finish." });
      slot.dataset.status = "shown";
    };
    bridge.oncalltool = async (params) => toolResult(await ask("tools/call", { name: params.name, arguments: params.arguments ?? {} }));
    bridge.onreadresource = (params) => ask("resources/read", { uri: params.uri });
    bridge.onlistresources = () => ask("resources/list", {});
    bridge.onmessage = async (params) => {
      await ask("ui/message", { role: params.role, content: params.content });
      return {};
    };
    bridge.onopenlink = async ({ url }) => {
      if (!isWebUrl(url)) return { isError: true };
      this.add(linkCard(name, url));
      return {};
    };
    bridge.onsizechange = ({ height }) => {
      if (Number.isFinite(height)) frame.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)))}px`;
    };
    bridge.onrequestdisplaymode = async () => ({ mode: "inline" });
    bridge.onloggingmessage = () => {};
    bridge.onerror = (error) => fail("had a problem", error);
    bridge.onclose = () => {
      forgetAppFrame(frame);
      this.bridges.delete(bridge);
    };
    this.bridges.add(bridge);
    await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  }
}
