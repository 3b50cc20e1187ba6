/**
 * Where a link goes, said next to it before the person clicks: a link to this computer or the local network
 * (loopback, private and link-local addresses, local names), to an IP address, or whose text is not its own address
 * gets a note with its real host, so "docs" pointing at 169.254.169.254 cannot pass for the docs.
 */
import { el, isWebUrl } from "./dom.js";

const LOCAL_NAMES = /(^localhost|\.localhost|\.local|\.internal|\.lan|\.home\.arpa)$/i;
const IPV4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/;

function privateV4(a, b) {
  return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31)
    || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
}

/** For a hostname as the URL parser gives it (IPv4 in dotted form, IPv6 in brackets): [an IP literal, private]. */
function classify(hostname) {
  const v4 = hostname.match(IPV4);
  if (v4) return [true, privateV4(Number(v4[1]), Number(v4[2]))];
  if (hostname.startsWith("[")) {
    const v6 = hostname.slice(1, -1).toLowerCase();
    const mapped = v6.match(/^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/);
    if (mapped) return [true, privateV4(parseInt(mapped[1], 16) >> 8, parseInt(mapped[1], 16) & 255)];
    return [true, v6 === "::1" || v6 === "::" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6)];
  }
  return [false, !hostname.includes(".") || LOCAL_NAMES.test(hostname)];
}

/** Whether the link's text is its own address (as a linkified URL is, with or without its scheme). */
function saysItsTarget(target, text) {
  const said = (text ?? "").trim();
  for (const candidate of [said, `http://${said}`]) {
    try {
      const url = new URL(candidate);
      if (isWebUrl(candidate) && url.host === target.host && url.pathname + url.search + url.hash === target.pathname + target.search + target.hash) return true;
    } catch {
      // not an address: the text says something else
    }
  }
  return false;
}

/** The note saying where `url` goes, for a link showing `text`; null where the text already says it plainly. */
export function targetNote(url, text) {
  if (!isWebUrl(url)) return null;
  const target = new URL(url);
  const [literal, local] = classify(target.hostname);
  if (!literal && !local && saysItsTarget(target, text)) return null;
  return el("span", { class: "link-target" }, `(opens ${target.host}${local ? ", a private address" : ""})`);
}

/** Adds the note after each link in `root` that needs one. */
export function noteTargets(root) {
  for (const link of root.querySelectorAll("a[href]")) {
    const note = targetNote(link.getAttribute("href"), link.textContent);
    if (note) link.after(note);
  }
  return root;
}
