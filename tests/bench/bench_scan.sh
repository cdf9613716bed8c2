#!/usr/bin/env bash
# tests/bench/bench_scan.sh - throughput and peak RSS of the scan tier
# (one streaming pass over every trace file) on large synthetic traces,
# next to `cat` of the same archive from the page cache in the same run.
# Numbers only: the aims (proto scan >= 25% of cat throughput, RSS under
# 100 MB) are shown, never asserted.
#
# Inputs (tests/tools/gen_trace.c, deterministic), each one member of a
# TAR, generated once and kept in $BENCH_CACHE (default
# /tmp/tmbench-cache; the name carries the size and a hash of the
# generator, so a changed generator regenerates):
#   proto     BENCH_PROTO_MB    (1024)  track events, ftrace, compact sched, snapshots
#   json      BENCH_JSON_MB     (512)   Chrome JSON, object form
#   systrace  BENCH_SYSTRACE_MB (512)   atrace text
# A size of 0 skips that input. BENCH_SCAN picks what is timed:
#   tool      build/rel/tools/tm_scan ARCHIVE: tm_merge_open + tm_scan_run
#             with a counting sink (the default)
#   check     tracemount check -o noindex ARCHIVE
#   metadata  tracemount cat -o noindex ARCHIVE metadata.json
#             (the scan itself: bench_index.sh times the index cache)
# BENCH_TOOL=PATH times that tm_scan binary instead of the build's (to
# compare a saved copy of an older build with the current one, on the
# same cached inputs).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build/rel}
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
mode=${BENCH_SCAN:-tool}
cache=${BENCH_CACHE:-/tmp/tmbench-cache}
sizes="proto:${BENCH_PROTO_MB:-1024} json:${BENCH_JSON_MB:-512} systrace:${BENCH_SYSTRACE_MB:-512}"

targets=("$BUILD/tools/gen_trace")
[ -n "${BENCH_TOOL:-}" ] || targets+=("$BUILD/tools/tm_scan")
make --no-print-directory -s "${targets[@]}" >/dev/null || {
	echo "bench_scan: cannot build the tools" >&2
	exit 1
}
gen=$(realpath "$BUILD/tools/gen_trace")
scan_tool=$(realpath "${BENCH_TOOL:-$BUILD/tools/tm_scan}")
ghash=$(sha1sum tests/tools/gen_trace.c | cut -c1-8)
mkdir -p "$cache"
work=$(mktemp -d /tmp/tmbench-scan.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The archive for one input, generated on first use.
archive() { # kind MB
	local kind=$1 mb=$2 ext
	case $kind in proto) ext=pftrace ;; json) ext=json ;; *) ext=systrace ;; esac
	local a=$cache/$kind-$mb-$ghash.tar
	if [ ! -s "$a" ]; then
		echo "bench_scan: generating $a" >&2
		local d=$work/gen-$kind
		mkdir -p "$d"
		"$gen" "$kind" "$mb" >"$d/trace.$ext" && (cd "$d" && tar -cf "$a.tmp" "trace.$ext") &&
			mv "$a.tmp" "$a" || { rm -rf "$a.tmp" "$d"; return 1; }
		rm -rf "$d"
	fi
	echo "$a"
}

# The timed command for an archive, in the array `cmd`.
set_cmd() { # archive
	case $mode in
	tool) cmd=("$scan_tool" "$1") ;;
	check) cmd=("$tm" check -o noindex "$1") ;;
	metadata) cmd=("$tm" cat -o noindex "$1" metadata.json) ;;
	*) echo "bench_scan: BENCH_SCAN=$mode: tool, check or metadata" >&2; exit 2 ;;
	esac
}

now() { date +%s.%N; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", (t > 0 ? b / 1048576 / t : 0) }'; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }

# Peak RSS (KiB) and CPU seconds (user + system) of a command, as "KiB
# SECONDS" in rssfile: /usr/bin/time -f, else the VmHWM the process
# reports (sampled while it runs) and no CPU time ("-"). CPU time is what
# to compare when other work shares the machine; wall time is shown too.
have_time=0
[ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1 && have_time=1
run_peak() { # outfile rssfile cmd...
	local o=$1 r=$2; shift 2
	if [ $have_time = 1 ]; then
		/usr/bin/time -o "$r" -f '%M %U %S' "$@" >"$o"
		local rc=$?
		awk '{ print $1, $2 + $3 }' "$r" >"$r.x" && mv "$r.x" "$r"
		return $rc
	fi
	"$@" >"$o" &
	local pid=$! hwm=0 v
	while kill -0 $pid 2>/dev/null; do
		v=$(awk '/VmHWM/ { print $2 }' /proc/$pid/status 2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
		sleep 0.05
	done
	wait $pid
	local rc=$?
	echo "$hwm -" >"$r"
	return $rc
}

printf '%-9s %8s %10s %14s %9s %8s %12s %10s  %s\n' input size_MB scan_MB/s scan_cpu_MB/s cat_MB/s ratio_% peak_RSS_MB events status
for spec in $sizes; do
	kind=${spec%%:*} mb=${spec#*:}
	[ "$mb" -gt 0 ] 2>/dev/null || continue
	a=$(archive "$kind" "$mb") || { echo "bench_scan: cannot generate $kind"; continue; }
	size=$(stat -c %s "$a")
	cat "$a" >/dev/null
	cat "$a" >/dev/null # warm: both runs read from the page cache
	t0=$(now); cat "$a" >/dev/null; t1=$(now)
	set_cmd "$a"
	t2=$(now); run_peak "$work/out" "$work/rss" "${cmd[@]}"; rc=$?; t3=$(now)
	cat_rate=$(mbps "$size" "$(elapsed "$t0" "$t1")")
	scan_rate=$(mbps "$size" "$(elapsed "$t2" "$t3")")
	rss=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/rss" 2>/dev/null)
	cpu=$(awk '{ print $2 }' "$work/rss" 2>/dev/null)
	cpu_rate=-
	[ "${cpu:--}" != - ] && cpu_rate=$(mbps "$size" "$cpu")
	if [ "$mode" = tool ]; then
		events=$(sed -n 's/^events=\([0-9]*\).*/\1/p' "$work/out")
		status=$(sed -n 's/.* status=\([a-z]*\).*/\1/p' "$work/out")
		[ "$status" = error ] && status="error: $(sed -n 's/.* error="\(.*\)"$/\1/p' "$work/out")"
	else
		events=-
		status=$([ $rc = 0 ] && echo ok || echo "exit $rc")
	fi
	printf '%-9s %8.0f %10s %14s %9s %8s %12s %10s  %s\n' "$kind" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')" \
		"$scan_rate" "$cpu_rate" "$cat_rate" "$(awk -v s="$scan_rate" -v c="$cat_rate" 'BEGIN { printf "%.0f", (c > 0 ? 100 * s / c : 0) }')" \
		"$rss" "${events:--}" "${status:-exit $rc}"
done
echo "scan: $mode ($([ "$mode" = tool ] && echo "$scan_tool" || echo "$tm")); inputs cached in $cache"
echo "ratio: scan_MB/s (wall) / cat_MB/s; scan_cpu_MB/s: size / (user + system) seconds of the scan"
echo "aims (shown, not asserted): proto scan >= 25% of cat throughput; peak RSS < 100 MB"
