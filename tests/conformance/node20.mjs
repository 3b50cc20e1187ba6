// Preload (`node --import ./node20.mjs ...`) for the conformance suite on Node.js 20: its bundle imports
// fs.globSync (Node.js 22) at load time, for its tier-check command only. On a Node.js without it, the suite's
// imports of "fs" get the module plus a globSync that says so; the client scenarios never call it.
import fs from "node:fs";
import { register } from "node:module";

if (fs.globSync === undefined) {
  register("./node20_hooks.mjs", import.meta.url);
}
