#!/usr/bin/env bash
# tests/bench/bench_flood.sh - hash flooding: inputs whose keys all took one
# probe chain of a table before the tables' hashes were keyed with a
# secret of the process (core/util/hash.h), each next to a control input
# of the same shape and size with ordinary keys
# (tests/tools/make_flood.py says how each was built). For each kind, at
# BENCH_FLOOD_N (default 50,000) keys and twice that, the wall time and
# peak RSS of `tracemount cat -o noindex INPUT merged.pftrace`, and the
# time of the flood over the control's. Keyed, the two take the same
# time at both sizes; before, the flood's grew with the square of its
# keys (at 400,000 perf ids, 3.2 MB: 77 s against 0.03 s). Numbers only,
# the best of BENCH_RUNS (3); nothing is asserted. A run is cut at
# BENCH_FLOOD_TIMEOUT (60 s), shown as "timeout".
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
n=${BENCH_FLOOD_N:-50000}
limit=${BENCH_FLOOD_TIMEOUT:-60}
work=$(mktemp -d /tmp/tmbench-flood.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ ! -x /usr/bin/time ] || ! command -v python3 >/dev/null; then
	echo "bench_flood: needs GNU time and python3"
	exit 0
fi
. tests/bench/lib.sh

# cat_time FILE: "seconds peak_kb" of merged.pftrace, or "timeout 0"
cat_time() {
	local r
	timed r timeout "$limit" "$tm" cat -o noindex "$1" merged.pftrace
	case $r in nan*) echo "timeout 0" ;; *) echo "$r" ;; esac
}

printf '%-12s %8s %8s | %10s %8s | %10s %8s | %8s\n' kind keys "size MB" "control s" "RSS MB" "flood s" "RSS MB" "ratio"
for kind in perf_ids hprof_ids proto_uuids json_pids; do
	for k in "$n" $((2 * n)); do
		python3 tests/tools/make_flood.py "$kind" control "$k" "$work/c" &&
			python3 tests/tools/make_flood.py "$kind" flood "$k" "$work/f" || {
			echo "bench_flood: cannot make $kind"
			continue
		}
		read -r ct ck < <(cat_time "$work/c")
		read -r ft fk < <(cat_time "$work/f")
		awk -v kind="$kind" -v k="$k" -v sz="$(stat -c %s "$work/f")" -v ct="$ct" -v ck="$ck" -v ft="$ft" -v fk="$fk" 'BEGIN {
			ratio = (ft == "timeout" || ct == "timeout") ? "-" : sprintf("%.1fx", ft / (ct > 0.001 ? ct : 0.001))
			printf "%-12s %8d %8.1f | %10s %8.1f | %10s %8.1f | %8s\n", kind, k, sz / 1048576, ct, ck / 1024, ft, fk / 1024, ratio
		}'
		rm -f "$work/c" "$work/f"
	done
done
