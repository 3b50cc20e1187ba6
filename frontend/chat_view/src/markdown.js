/**
 * Model answers as Markdown (markdown-it), sanitised by DOMPurify: raw HTML in an answer is shown as text, images
 * become their alt text (no remote image is ever loaded), links keep only http(s)/mailto targets and open in a new
 * window on a click, with a note saying where they go when that is a private host or not what their text says
 * (links.js); DOMPurify then keeps only the formatting tags below, so no script or event handler survives.
 */
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import { noteTargets } from "./links.js";

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
md.renderer.rules.image = (tokens, index) => md.utils.escapeHtml(`[image: ${tokens[index].content || "no description"}]`);

const TAGS = [
  "p", "br", "hr", "strong", "em", "b", "i", "s", "del", "code", "pre", "blockquote", "ul", "ol", "li", "a",
  "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
];
const PURIFY = {
  ALLOWED_TAGS: TAGS,
  ALLOWED_ATTR: ["href", "title", "start"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  RETURN_DOM_FRAGMENT: true,
};

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** `text` rendered as sanitised Markdown, a DocumentFragment to append. */
export function renderMarkdown(text) {
  return noteTargets(DOMPurify.sanitize(md.render(text ?? ""), PURIFY));
}
