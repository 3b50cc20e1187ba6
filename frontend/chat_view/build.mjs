// Builds the Agent Chat node's page into src/nodes/chat_view (committed, so the extension works without a build):
// one bundled script (the sources, @knime/ui-extension-service, markdown-it, DOMPurify), the stylesheet and the
// HTML. Run ./build.sh (npm ci, then this); the same lockfile and esbuild version give the same files. An argument
// names another output folder (tests/test_chat_view_build.py checks that the committed files are what this builds).
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? join(here, "..", "..", "src", "nodes", "chat_view");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, "src", "main.js")],
  bundle: true,
  format: "iife",
  target: "es2020",
  minify: true,
  legalComments: "eof",
  outfile: join(out, "chat.js"),
  logLevel: "warning",
});
for (const file of ["index.html", "chat.css"]) copyFileSync(join(here, "src", file), join(out, file));
