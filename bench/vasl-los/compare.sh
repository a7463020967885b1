#!/usr/bin/env bash
# VASL's verdicts for the agreement test (protocol/tests/vasl_los_agreement.rs), board by board:
# each board's archive taken from the VASL mirror, VASL's LOS engine compiled once, then for
# each board one file of ground-level pairs and one of pairs from and to upper levels (--levels),
# and the same for a few maps of several boards.
#
#   bench/vasl-los/compare.sh BOARDS_DIR REF_DIR [BOARD...]
#
# BOARDS_DIR receives the archives (bdNN, bda, ...) and SharedBoardMetadata.xml; REF_DIR the TSV
# files. BOARD defaults to 1-50 and the Deluxe boards a-h. Then:
#   ASL_VASL_BOARDS=BOARDS_DIR ASL_VASL_LOS_REF=REF_DIR \
#     cargo test -p asl-protocol --test vasl_los_agreement -- --nocapture
# Environment: VASL_MIRROR (default /work/.mirror/michalxo+vasl/repo), PAIRS (default 2000),
# LAYOUTS (maps of several boards, space separated; default below). Nothing of VASL's is
# written into this repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 2 ] || { echo "usage: $0 BOARDS_DIR REF_DIR [BOARD...]" >&2; exit 2; }
boards="$1"; refs="$2"; shift 2
mirror="${VASL_MIRROR:-/work/.mirror/michalxo+vasl/repo}"
pairs="${PAIRS:-2000}"
layouts="${LAYOUTS:-1,2r/3,4 10/11/12 20r,21 32,33/34r,35 a,b/c,d}"
list=("$@")
[ ${#list[@]} -gt 0 ] || list=($(seq 1 50) a b c d e f g h)
mkdir -p "$boards" "$refs"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/vasl-compare.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

git -C "$mirror" ls-tree -r --name-only HEAD -- src/VASL/LOS src/VASL/build/module/map/boardArchive \
    dist/boardData/SharedBoardMetadata.xml |
while IFS= read -r f; do
    mkdir -p "$tmp/vasl/$(dirname "$f")"
    git -C "$mirror" cat-file blob "HEAD:$f" > "$tmp/vasl/$f"
done
cp "$tmp/vasl/dist/boardData/SharedBoardMetadata.xml" "$boards/"
mkdir -p "$tmp/classes"
javac -nowarn -encoding UTF-8 -d "$tmp/classes" -sourcepath "$here/stubs:$tmp/vasl/src" "$here/VaslLos.java" 2>&1 \
    | grep -v '^Note:' >&2 || true
run() { java ${JAVA_OPTS:-} -cp "$tmp/classes" VaslLos --shared "$boards/SharedBoardMetadata.xml" \
    --boards "$boards" --repeat 1 "$@"; }

# the archive's name of a board (1 -> bd01, a -> bda), taken from the mirror unless present
archive() {
    local name="bd$1"; [[ $1 =~ ^[0-9]$ ]] && name="bd0$1"
    [ -s "$boards/$name" ] || git -C "$mirror" cat-file blob "HEAD:boards/bdFiles/$name" > "$boards/$name" 2>/dev/null \
        || { rm -f "$boards/$name"; echo "board $1: no archive bdFiles/$name in the mirror" >&2; return 1; }
    echo "$name"
}
for b in "${list[@]}"; do
    name="$(archive "$b")" || continue
    run --layout "$b" --pairs "$pairs" --out "$refs/$name.tsv" 2>"$refs/$name.log" \
        || echo "board $b: VASL failed (see $refs/$name.log)" >&2
    run --layout "$b" --pairs "$pairs" --levels --seed 38 --out "$refs/$name-levels.tsv" 2>"$refs/$name-levels.log" \
        || echo "board $b, levels: VASL failed (see $refs/$name-levels.log)" >&2
done
for l in $layouts; do
    f="m-$(echo "$l" | tr ',/' '_-')"
    for b in $(echo "$l" | tr ',/' '  '); do
        [[ $b =~ ^[0-9]+r$ ]] && b="${b%r}"
        archive "$b" > /dev/null || true
    done
    run --layout "$l" --pairs "$pairs" --out "$refs/$f.tsv" 2>"$refs/$f.log" || echo "layout $l: VASL failed" >&2
    run --layout "$l" --pairs "$pairs" --levels --seed 38 --out "$refs/$f-levels.tsv" 2>"$refs/$f-levels.log" \
        || echo "layout $l, levels: VASL failed" >&2
done
