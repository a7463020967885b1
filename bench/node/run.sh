#!/usr/bin/env bash
# Installs the Node generator's packages (exact versions, from package-lock.json, into
# bench/node/node_modules) when they are missing or stale, then runs the generator with the
# given options (`run.sh --help`). Needs node 18 or newer and npm; the release binaries come
# from `cargo build --release -p asl-server -p asl-load` (or ASL_SERVER_BIN / ASL_LOAD_BIN).
# Nothing in the test suite or CI runs this: only the benchmark installs from npm.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "run.sh: node (18 or newer) and npm are needed" >&2
  exit 1
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
  echo "run.sh: node $(node --version) is too old; 18 or newer is needed (global fetch)" >&2
  exit 1
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund >&2
fi
exec node load.mjs "$@"
