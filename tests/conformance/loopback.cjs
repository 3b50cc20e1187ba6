// Preload (`node --require ./loopback.cjs ...`) for the conformance suite: every TCP listen binds 127.0.0.1
// (tests/peers/bind_loopback.cjs), and the address is known as soon as listen() returns, as it is for a listen on
// every interface. The suite's scenarios read server.address().port right after listen(0); a listen with a host
// otherwise learns its address after a DNS lookup on the next tick, even for an IP literal.
"use strict";

require("../peers/bind_loopback.cjs");

const dns = require("node:dns");
const net = require("node:net");

const listenOnLoopback = net.Server.prototype.listen;

net.Server.prototype.listen = function listenAtOnce(...args) {
  const lookup = dns.lookup;
  dns.lookup = (host, options, callback) => {
    const done = typeof options === "function" ? options : callback;
    return net.isIP(host) ? done(null, host, net.isIP(host)) : lookup(host, options, callback);
  };
  try {
    return listenOnLoopback.apply(this, args);
  } finally {
    dns.lookup = lookup;
  }
};
