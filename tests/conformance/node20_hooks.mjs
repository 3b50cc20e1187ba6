// Module resolution hook of node20.mjs: "fs" as imported by the conformance suite's bundle resolves to node20_fs.mjs.
const FS = new URL("./node20_fs.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  const fromSuite = context.parentURL?.includes("/node_modules/conformance-");
  if (fromSuite && (specifier === "fs" || specifier === "node:fs")) {
    return { url: FS, shortCircuit: true };
  }
  return next(specifier, context);
}
