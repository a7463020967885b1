#!/usr/bin/env bash
# The whole server's instructions per move: `asl-load matches` drives an `asl-server` run under
# `valgrind --tool=callgrind` (every thread of the process counted: the connections' websocket
# reads and writes, decoding, the game tasks, frame encoding, signing, the store's committer),
# twice, at FEW and MANY moves per match; the difference of the two totals over the moves
# between them is the instructions a move costs, the start, the games' creation, the joins and
# the shutdown cancelled out. Counted instructions do not move with the machine's load, as
# wall-clock CPU does (the timings of a run under valgrind are meaningless and not printed).
#
#   bench/callgrind/run.sh SERVER_BIN [MATCHES FEW MANY] [OUT_DIR]
#   bench/callgrind/run.sh --floor LOAD_BIN [MATCHES FEW MANY] [OUT_DIR]
#
# With `--floor`, the durable floor (`asl-load relay-server --durable DIR`: each move appended to
# the project's sled store, journal and `fdatasync` per group, forwarded once durable and
# acknowledged) is the process counted, driven by the same `asl-load matches` with the same
# moves (`--floor-bin`); the server beside it (`asl-server` from beside LOAD_BIN) runs as usual
# and is not counted.
#
# SERVER_BIN is best the `profiling` build (`cargo build --profile profiling -p asl-server -p
# asl-load`, line tables for `callgrind_annotate`); `asl-load` is taken from beside it, or
# from ASL_LOAD_BIN. The defaults are 200 matches, 20 and 60 moves (8,000 moves between the
# runs). The profiles stay in OUT_DIR (default: a fresh directory under /tmp) for
# `callgrind_annotate`. A group commit or a signature serves every command waiting at that
# moment, so those two costs per move depend on how the run interleaves: compare builds at the
# same MATCHES, and repeat a pair to see its spread. On a loaded machine valgrind's start can
# pass the 20 s `asl-load` waits for a server to listen: the run fails, and is run again.
set -euo pipefail
floor=""
if [ "${1:-}" = "--floor" ]; then
  floor=1
  shift
fi
bin="$(realpath "$1")"
matches="${2:-200}"
few="${3:-20}"
many="${4:-60}"
out="${5:-$(mktemp -d /tmp/asl-callgrind.XXXXXX)}"
if [ -n "$floor" ]; then
  load="$bin"
else
  load="${ASL_LOAD_BIN:-$(dirname "$bin")/asl-load}"
fi
mkdir -p "$out"
wrapper="$out/server.sh"
# asl-load ends its server with SIGKILL, which valgrind cannot outlive to write its profile: the
# wrapper runs it in the background, so the SIGKILL ends the wrapper alone, and this script
# stops the server with SIGTERM (a clean shutdown) once the run is over.
cat >"$wrapper" <<WRAP
#!/usr/bin/env bash
valgrind --tool=callgrind --callgrind-out-file="\$CG_RUN/callgrind.out" "$bin" "\$@" 2>"\$CG_RUN/valgrind.log" &
echo \$! >"\$CG_RUN/pid"
wait
WRAP
chmod +x "$wrapper"
total() {
  local moves="$1" run="$out/moves-$1"
  mkdir -p "$run"
  if [ -n "$floor" ]; then
    CG_RUN="$run" "$load" --server-bin "$(dirname "$bin")/asl-server" matches \
      --matches "$matches" --moves "$moves" --repeats 1 --floor-bin "$wrapper" \
      >"$run/load.txt" 2>&1 || { tail -5 "$run/load.txt" >&2; exit 1; }
  else
    CG_RUN="$run" "$load" --server-bin "$wrapper" matches --matches "$matches" --moves "$moves" \
      --repeats 1 >"$run/load.txt" 2>&1 || { tail -5 "$run/load.txt" >&2; exit 1; }
  fi
  local pid
  pid="$(cat "$run/pid")"
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.5; done
  grep -m1 '^summary:' "$run/callgrind.out" | awk '{print $2}'
}
a="$(total "$few")"
b="$(total "$many")"
moves=$((matches * (many - few)))
echo "instructions: $a at $few moves, $b at $many moves per match, $matches matches"
echo "per move: $(( (b - a) / moves )) ($moves moves between the runs; profiles in $out)"
