#!/bin/bash
# Runs each libFuzzer target for a bounded time from its stored corpus, up to
# NPROC (2) targets at a time, each on a core of its own.
# Usage: tools/fuzz.sh [SECONDS-PER-TARGET]   (default 20)
set -u
cd "$(dirname "$0")/.." || exit 2
secs=${1:-20}
jobs=${NPROC:-2}
dir=build-fuzz
if ! command -v clang >/dev/null; then
	echo "fuzz: clang is needed (apt-get install clang)" >&2
	exit 2
fi
if [ ! -d "$dir" ]; then
	CC=clang meson setup "$dir" -Dfuzzing=true -Db_sanitize=address,undefined \
		-Db_lundef=false >/dev/null || exit 2
fi
ninja -C "$dir" fuzz/fuzz-sig fuzz/fuzz-opts fuzz/fuzz-shebang >/dev/null || exit 2

# fuzz TARGET: one target from a copy of its corpus; what it found is kept and
# named; fails when it found something.
fuzz() {
	local target=$1 work
	work=$(mktemp -d)
	cp fuzz/corpus/"$target"/* "$work"/
	if "$dir/fuzz/fuzz-$target" -max_total_time="$secs" -close_fd_mask=2 \
		-artifact_prefix="$work/" "$work" >"$work.log" 2>&1; then
		echo "fuzz-$target: $(grep -E '^Done' "$work.log")"
		rm -rf "$work" "$work.log"
		return 0
	fi
	{
		echo "fuzz-$target: FAILED; reproducer and log:"
		ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null
		tail -n 30 "$work.log"
		echo "fuzz-$target: kept in $work"
	} >&2
	return 1
}

status=0
running=0
for target in sig opts shebang; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n || status=1
		running=$((running - 1))
	fi
	fuzz "$target" &
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	wait -n || status=1
	running=$((running - 1))
done
exit $status
