#!/usr/bin/env bash
# Rebuilds the Agent Chat page (src/nodes/chat_view) from frontend/chat_view's sources, reproducibly: the exact
# dependency versions of package-lock.json and the pinned esbuild.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
npm ci --no-audit --no-fund
npm run build
