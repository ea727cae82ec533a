#!/usr/bin/env bash
# `pnpm bench:node24`: the PostgreSQL section of `pnpm bench` on Node.js 24 with the newest graphile-worker and
# pg-boss (both need Node 22 or later; the bench's own package.json pins the newest that run on Node 20), Docket
# on the same Node. Runs in a scratch copy installed for Node 24 (node24-scratch.sh) and prints the table; nothing in
# this tree changes. Arguments go to the bench (`--quick` checks the harness). DOCKET_NODE24_PEERS overrides the
# peers installed.
set -euo pipefail
# shellcheck source=node24-scratch.sh
source "$(dirname "$0")/node24-scratch.sh" bench-node24
peers="${DOCKET_NODE24_PEERS:-graphile-worker@latest pg-boss@latest}"
# shellcheck disable=SC2086
pnpm --filter @docket/bench add -D $peers >/dev/null
pnpm exec turbo run build --output-logs=errors-only
node tooling/bench/src/run.mjs --only postgres "$@"
