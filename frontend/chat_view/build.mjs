// Builds the Agent Chat node's page into src/nodes/chat_view (committed, so the extension works without a build):
// one bundled script (the sources, @knime/ui-extension-service, ext-apps' AppBridge, markdown-it, DOMPurify), one
// bundled stylesheet (chat.css with what it @imports: KNIME's design tokens, the font faces, whose woff2 files land in
// fonts/), the page's HTML and the MCP Apps sandbox proxy page. Run ./build.sh (npm ci, then this); the same lockfile
// and esbuild version give the same files. An argument names another output folder (tests/test_chat_view_build.py
// checks that the committed files are what this builds).
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? join(here, "..", "..", "src", "nodes", "chat_view");
rmSync(join(out, "fonts"), { recursive: true, force: true }); // no font the stylesheet no longer names stays
mkdirSync(out, { recursive: true });
const common = { bundle: true, minify: true, legalComments: "eof", logLevel: "warning" };

// zod (under ext-apps' AppBridge) re-exports its error messages in every language as `z.locales`; the page never
// picks one (zod uses English unless told), so that index is replaced by English alone: a quarter MB less script.
const englishOnly = {
  name: "zod-english-only",
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.resolveDir.endsWith(join("zod", "v4", "classic")) || args.resolveDir.endsWith(join("zod", "v4", "core"))
        ? { path: join(args.resolveDir, "..", "locales", "en.js"), namespace: "zod-english" }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "zod-english" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
  },
};

// KNIME's colour tokens are light-dark() pairs, which Chromium reads from version 123 on; a KNIME whose browser is older
// would show the page without colours. So the token file gets a fallback: where light-dark() is not understood, each
// token is its light value (KNIME's look by default).
const lightFallback = {
  name: "light-dark-fallback",
  setup(builder) {
    builder.onLoad({ filter: /kds-styles[\\/]dist[\\/]tokens[\\/]css[\\/]_variables\.css$/ }, (args) => {
      const tokens = readFileSync(args.path, "utf8");
      const light = [];
      for (const match of tokens.matchAll(/(--[\w-]+):\s*light-dark\(/g)) light.push(`${match[1]}: ${firstArgument(tokens, match.index + match[0].length)};`);
      const fallback = `@supports not (color: light-dark(#000, #fff)) {\n  :root, :host {\n    ${light.join("\n    ")}\n  }\n}\n`;
      return { contents: `${tokens}\n${fallback}`, loader: "css" };
    });
  },
};

/** The first argument of the function call whose arguments start at `start` in `text` (nested parentheses kept). */
function firstArgument(text, start) {
  let depth = 0;
  for (let i = start; i < text.length; i += 1) {
    const char = text[i];
    if (char === "(") depth += 1;
    else if (char === ")") depth -= 1;
    if (depth === 0 && char === ",") return text.slice(start, i).trim();
  }
  throw new Error(`No light value in the token at ${start}`);
}

await build({
  ...common,
  plugins: [englishOnly],
  entryPoints: [join(here, "src", "main.js")],
  format: "iife",
  target: "es2020",
  outfile: join(out, "chat.js"),
});
await build({
  ...common,
  plugins: [lightFallback],
  entryPoints: [join(here, "src", "chat.css")],
  loader: { ".woff2": "file" },
  assetNames: "fonts/[name]",
  outfile: join(out, "chat.css"),
});
for (const file of ["index.html", "sandbox.html"]) copyFileSync(join(here, "src", file), join(out, file));
