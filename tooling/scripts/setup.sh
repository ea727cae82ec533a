#!/usr/bin/env bash
# Set-up for a fresh machine: pnpm 12.4.2 when missing, then the dependencies. Where no prebuilt better-sqlite3 can be
# downloaded, node-gyp compiles it and must find Node's headers; pnpm 12 does not pass npm's nodedir through, so it is
# exported here when the headers are installed (docs/contributing.md: Building better-sqlite3).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${npm_config_nodedir:-}" ] && [ -d /usr/include/node ]; then export npm_config_nodedir=/usr; fi
if [ "$(pnpm --version 2>/dev/null || true)" != "12.4.2" ]; then
  npm i -g --allow-scripts=pnpm pnpm@12.4.2
fi
if [ -n "${CI:-}" ]; then pnpm install --frozen-lockfile; else pnpm install; fi
