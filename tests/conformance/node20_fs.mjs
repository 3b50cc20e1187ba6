// "fs" for the conformance suite on Node.js 20 (see node20.mjs): node:fs, plus the globSync it lacks.
import fs from "node:fs";

export * from "node:fs";
export default fs;

export function globSync() {
  throw new Error("fs.globSync needs Node.js 22: the conformance suite's tier-check does not run on this Node.js");
}
