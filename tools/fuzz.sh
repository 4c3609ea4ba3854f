#!/bin/bash
# Runs each libFuzzer target for a bounded time from its stored corpus.
# Usage: tools/fuzz.sh [SECONDS-PER-TARGET]   (default 20)
set -u
cd "$(dirname "$0")/.." || exit 2
secs=${1:-20}
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
status=0
for target in sig opts shebang; do
	work=$(mktemp -d)
	cp fuzz/corpus/"$target"/* "$work"/
	if "$dir/fuzz/fuzz-$target" -max_total_time="$secs" -close_fd_mask=2 \
		-artifact_prefix="$work/" "$work" >"$work.log" 2>&1; then
		echo "fuzz-$target: $(grep -E '^Done' "$work.log")"
	else
		echo "fuzz-$target: FAILED; reproducer and log:" >&2
		ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null >&2
		tail -n 30 "$work.log" >&2
		echo "fuzz-$target: kept in $work" >&2
		status=1
		continue
	fi
	rm -rf "$work" "$work.log"
done
exit $status
