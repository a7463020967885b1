#!/usr/bin/env bash
# Build VASL's LOS engine (VASL.LOS.Map + the board-archive reader) from a VASL source
# checkout with our stubs, then run the VaslLos driver on a directory of board archives.
#
#   bench/vasl-los/run.sh BOARDS_DIR [VaslLos args...]
#
# Environment:
#   VASL_SRC     a VASL source checkout (the directory holding src/VASL/...). Default: extracted
#                from the bare mirror in VASL_MIRROR (git archive HEAD src dist/boardData) into a temp dir.
#   VASL_MIRROR  default /work/.mirror/michalxo+vasl/repo
#   VASL_SHARED  SharedBoardMetadata.xml to use. Default: $VASL_SRC/dist/boardData/SharedBoardMetadata.xml
#   JAVA_OPTS    extra JVM options
# Everything VASL's is compiled into a temp dir that is removed on exit; nothing of VASL's is
# written into this repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -lt 1 ]; then
    echo "usage: $0 BOARDS_DIR [--layout 1|1,2r/3,4] [--pairs N] [--seed S] [--repeat R] [--max-range R] [--out FILE]" >&2
    exit 2
fi
boards="$1"; shift
tmp="$(mktemp -d "${TMPDIR:-/tmp}/vasl-los.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

if [ -z "${VASL_SRC:-}" ]; then
    mirror="${VASL_MIRROR:-/work/.mirror/michalxo+vasl/repo}"
    mkdir -p "$tmp/vasl"
    # file by file: the mirror may lack large blobs elsewhere in the tree
    git -C "$mirror" ls-tree -r --name-only HEAD -- src/VASL/LOS src/VASL/build/module/map/boardArchive \
        dist/boardData/SharedBoardMetadata.xml |
    while IFS= read -r f; do
        mkdir -p "$tmp/vasl/$(dirname "$f")"
        git -C "$mirror" cat-file blob "HEAD:$f" > "$tmp/vasl/$f"
    done
    VASL_SRC="$tmp/vasl"
fi
shared="${VASL_SHARED:-$VASL_SRC/dist/boardData/SharedBoardMetadata.xml}"
[ -f "$VASL_SRC/src/VASL/LOS/Map/Map.java" ] || { echo "no src/VASL/LOS/Map/Map.java under VASL_SRC=$VASL_SRC" >&2; exit 1; }
[ -f "$shared" ] || { echo "no SharedBoardMetadata.xml at $shared (set VASL_SHARED)" >&2; exit 1; }

# Our stubs come first on the source path, so they stand in for VASSAL, jdom2, slf4j and
# VASL's game-state bridge; javac compiles only the VASL classes the driver reaches.
mkdir -p "$tmp/classes"
javac -nowarn -encoding UTF-8 -d "$tmp/classes" -sourcepath "$here/stubs:$VASL_SRC/src" "$here/VaslLos.java" 2>&1 \
    | grep -v '^Note:' >&2 || true
[ -f "$tmp/classes/VaslLos.class" ] || { echo "compilation failed" >&2; exit 1; }

exec_java() { java ${JAVA_OPTS:-} -cp "$tmp/classes" VaslLos --shared "$shared" --boards "$boards" "$@"; }
exec_java "$@"
