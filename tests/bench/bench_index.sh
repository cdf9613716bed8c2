#!/usr/bin/env bash
# tests/bench/bench_index.sh - the index cache (tracemount(1), INDEX
# CACHE): `tracemount cat ARCHIVE metadata.json` with the cache off (the
# scan and the parse pass of its stats every time), cold (that pass, then
# the index written) and warm (the index answers), wall time and peak RSS, next to `tar -tf` of the same
# archive in the same run; then `tracemount ls -l ARCHIVE` (every size of
# the root) cold (the generation pass, then its sizes kept) and warm (the
# index's sizes). Numbers only: the aim (warm < 50 ms) is shown, never
# asserted.
#
# Inputs: one synthetic trace per kind (tests/tools/gen_trace.c) as the one
# member of a TAR, BENCH_INDEX_MB each (default 128, the size of the
# bench archives), shared with bench_scan.sh through $BENCH_CACHE (default
# /tmp/tmbench-cache). Kinds: BENCH_INDEX_KINDS (default "proto json
# systrace"). The index lives in a temporary XDG_CACHE_HOME.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build/rel}
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
cache=${BENCH_CACHE:-/tmp/tmbench-cache}
mb=${BENCH_INDEX_MB:-128}
kinds=${BENCH_INDEX_KINDS:-proto json systrace}

make --no-print-directory -s "$BUILD/tools/gen_trace" >/dev/null || {
	echo "bench_index: cannot build gen_trace" >&2
	exit 1
}
gen=$(realpath "$BUILD/tools/gen_trace")
ghash=$(sha1sum tests/tools/gen_trace.c | cut -c1-8)
mkdir -p "$cache"
work=$(mktemp -d /tmp/tmbench-index.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export XDG_CACHE_HOME=$work/xdg

archive() { # kind MB
	local kind=$1 ext
	case $kind in proto) ext=pftrace ;; json) ext=json ;; *) ext=systrace ;; esac
	local a=$cache/$kind-$2-$ghash.tar
	if [ ! -s "$a" ]; then
		echo "bench_index: generating $a" >&2
		mkdir -p "$work/gen"
		"$gen" "$kind" "$2" >"$work/gen/trace.$ext" && (cd "$work/gen" && tar -cf "$a.tmp" "trace.$ext") &&
			mv "$a.tmp" "$a" || { rm -f "$a.tmp"; return 1; }
		rm -rf "$work/gen"
	fi
	echo "$a"
}

# "SECONDS PEAK_MB" of a command (stdout discarded): wall time to the
# nanosecond from date(1), peak RSS from time(1).
measure() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -o "$work/t" -f '%M' "$@" >/dev/null 2>"$work/err" || { echo "- -"; return; }
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" '{ printf "%.4f %.1f", (b - a) / 1e9, $1 / 1024 }' "$work/t"
}
ms() { awk -v s="$1" 'BEGIN { printf "%.0f", s * 1000 }'; }

printf '%-9s %8s %11s %11s %11s %11s %9s %12s %12s\n' input size_MB noindex_ms cold_ms warm_ms tar_-tf_ms warm_RSS \
	ls-l_cold_ms ls-l_warm_ms
for kind in $kinds; do
	a=$(archive "$kind" "$mb") || { echo "bench_index: cannot generate $kind"; continue; }
	cat "$a" >/dev/null
	rm -rf "$XDG_CACHE_HOME"
	read -r t_none _ < <(measure "$tm" cat -o noindex "$a" metadata.json)
	read -r t_cold _ < <(measure "$tm" cat "$a" metadata.json)
	measure "$tm" cat "$a" metadata.json >/dev/null # the page cache holds the index too
	read -r t_warm rss_warm < <(measure "$tm" cat "$a" metadata.json)
	read -r t_tar _ < <(measure tar -tf "$a")
	read -r l_cold _ < <(measure "$tm" ls -l "$a")
	read -r l_warm _ < <(measure "$tm" ls -l "$a")
	printf '%-9s %8.0f %11s %11s %11s %11s %9s %12s %12s\n' "$kind" \
		"$(awk -v s="$(stat -c %s "$a")" 'BEGIN { print s / 1048576 }')" \
		"$(ms "$t_none")" "$(ms "$t_cold")" "$(ms "$t_warm")" "$(ms "$t_tar")" "$rss_warm" "$(ms "$l_cold")" "$(ms "$l_warm")"
done
echo "noindex: the scan alone; cold: the scan and the index written; warm: the index answers"
echo "ls -l cold: the scan from the index and the generation pass; warm: the sizes from the index"
echo "(every run includes starting tracemount and the mount tier); RSS in MB"
echo "aim (shown, not asserted): warm < 50 ms"
