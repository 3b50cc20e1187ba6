// Preload (`node --require ./bind_loopback.cjs ...`) for the test peers: the upstream MCP servers
// listen on every interface, and test servers must only be reachable from this machine. Every TCP
// listen in the process (net, http and express servers alike) is rewritten to bind 127.0.0.1;
// listening on a Unix socket path or an inherited handle is left as it is.
"use strict";

const net = require("node:net");

const LOOPBACK = "127.0.0.1";
const originalListen = net.Server.prototype.listen;

function isPort(value) {
  return (
    value === undefined ||
    value === null ||
    typeof value === "number" ||
    (typeof value === "string" && /^\d+$/.test(value))
  );
}

function loopbackArgs(args) {
  if (typeof args[0] === "function") {
    return loopbackArgs([0, ...args]);
  }
  const [first, ...rest] = args;
  if (first !== null && typeof first === "object") {
    if (["path", "handle", "fd", "_handle"].some((key) => key in first)) {
      return args;
    }
    return [{ ...first, host: LOOPBACK }, ...rest];
  }
  if (!isPort(first)) {
    return args;
  }
  const options = { port: first === undefined || first === null ? 0 : Number(first), host: LOOPBACK };
  const tail = [];
  for (const arg of rest) {
    if (typeof arg === "function") {
      tail.push(arg);
    } else if (typeof arg === "number") {
      options.backlog = arg;
    }
  }
  return [options, ...tail];
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  return originalListen.apply(this, loopbackArgs(args));
};
