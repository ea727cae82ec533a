#!/usr/bin/env bash
# Runs the test suite on Node.js 24 beside the Node.js 20 run, in a scratch copy of the tree installed for Node 24
# (node24-scratch.sh): `pnpm test` without the files that spawn many processes or run
# fixed-length trials: each process takes a second longer to start on Node 24 (drizzle-orm's import), and what they
# check does not depend on the Node version (Node 20 runs them). The seed's 20 lifecycle scenarios do run here: the
# source documents ask for Node 24. The dashboard's Chromium tests are left out too: the browser is the same, and its
# handler tests run on Node 24.
# DOCKET_NODE24_ALL=1 runs every file.
set -euo pipefail
# shellcheck source=node24-scratch.sh
source "$(dirname "$0")/node24-scratch.sh" node24-suite
if [ -n "${DOCKET_NODE24_ALL:-}" ]; then
  pnpm test
else
  pnpm test --exclude 'packages/*/test/schedules-multi-process.test.ts' --exclude 'packages/*/test/flow-multi-process.test.ts' \
    --exclude 'packages/*/test/family-multi-process.test.ts' --exclude 'packages/*/test/feed-multi-process.test.ts' \
    --exclude 'packages/dashboard/test/*browser.test.ts'
fi
