#!/usr/bin/env bash
# tests/bench/bench_export.sh - throughput and peak RSS of the export tier:
# `tracemount cat ARCHIVE merged.pftrace` (the scan, the export pass that
# writes the merged trace of the whole archive and of every machine, and
# reading it back) and the same for timeline.tsv, next to `cat` of the
# archive from the page cache in the same run. Numbers only: the aims
# (export >= 15% of cat throughput, peak RSS <= 64 MB, issue 10) are shown, never
# asserted.
#
# Input: BENCH_EXPORT_MB (default 1024) of synthetic proto in a TAR
# (tests/tools/gen_trace.c), shared with bench_scan.sh through
# $BENCH_CACHE (default /tmp/tmbench-cache), and the same packets as a
# trace of two buffers (gen_trace proto2: half of it out of order). 0 skips the benchmark. The
# spooled output goes to $TMPDIR (else /tmp). peak_tmp_MB is the most disk
# the process's temporary files held at once (their allocated blocks,
# holes punched out not counted), sampled every 0.1 s from /proc.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build/rel}
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
cache=${BENCH_CACHE:-/tmp/tmbench-cache}
mb=${BENCH_EXPORT_MB:-1024}
[ "$mb" -gt 0 ] 2>/dev/null || { echo "bench_export: skipped (BENCH_EXPORT_MB=$mb)"; exit 0; }

make --no-print-directory -s "$BUILD/tools/gen_trace" >/dev/null || {
	echo "bench_export: cannot build gen_trace" >&2
	exit 1
}
gen=$(realpath "$BUILD/tools/gen_trace")
ghash=$(sha1sum tests/tools/gen_trace.c | cut -c1-8)
mkdir -p "$cache"
# archive KIND: the cached TAR of $mb MB of gen_trace KIND (proto, proto2)
archive() {
	local a=$cache/$1-$mb-$ghash.tar d
	if [ ! -s "$a" ]; then
		echo "bench_export: generating $a" >&2
		d=$(mktemp -d /tmp/tmbench-export.XXXXXX)
		"$gen" "$1" "$mb" >"$d/trace.pftrace" && (cd "$d" && tar -cf "$a.tmp" trace.pftrace) && mv "$a.tmp" "$a" ||
			{ rm -rf "$d" "$a.tmp"; echo "bench_export: cannot generate" >&2; return 1; }
		rm -rf "$d"
	fi
	echo "$a"
}
a=$(archive proto) && a2=$(archive proto2) || exit 1

now() { date +%s.%N; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", (t > 0 ? b / 1048576 / t : 0) }'; }
peak() { # rssfile cmd... (stdout discarded)
	local r=$1; shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -o "$r" -f '%M' "$@" >/dev/null
	else
		"$@" >/dev/null
		echo 0 >"$r"
	fi
}

# peak_tmp TMPFILE CMD...: CMD's stdout discarded; the largest sum of the
# allocated bytes of the unlinked files it held open, sampled, to TMPFILE.
# Each file counts once (by inode): a spool is often open twice, for
# writing and for reading, and counting each fd doubled it.
peak_tmp() {
	local out=$1; shift
	"$@" >/dev/null &
	local pid=$! max=0 cur f
	while kill -0 "$pid" 2>/dev/null; do
		cur=$(for f in /proc/"$pid"/fd/*; do
			case "$(readlink "$f" 2>/dev/null)" in
			*tracemount.*" (deleted)") stat -L -c '%i %b %B' "$f" 2>/dev/null ;;
			esac
		done | sort -u | awk '{ s += $2 * $3 } END { printf "%.0f\n", s }')
		[ "$cur" -gt "$max" ] && max=$cur
		sleep 0.1
	done
	wait "$pid"
	echo "$max" >"$out"
}

rss=$(mktemp)
tmpb=$(mktemp)
printf '%-26s %8s %10s %9s %8s %12s %10s %12s\n' output input_MB MB/s cat_MB/s ratio_% peak_RSS_MB out_MB peak_tmp_MB
# rows ARCHIVE LABEL: both generated files of one archive, next to cat
rows() {
	local a=$1 label=$2 size t0 t1 cat_rate f t2 t3 out rate
	size=$(stat -c %s "$a")
	cat "$a" >/dev/null
	cat "$a" >/dev/null
	t0=$(now); cat "$a" >/dev/null; t1=$(now)
	cat_rate=$(mbps "$size" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
	for f in merged.pftrace timeline.tsv; do
		t2=$(now); peak "$rss" "$tm" cat "$a" "$f"; t3=$(now)
		out=$("$tm" cat "$a" "$f" | wc -c)
		peak_tmp "$tmpb" "$tm" cat "$a" "$f"
		rate=$(mbps "$size" "$(awk -v a="$t2" -v b="$t3" 'BEGIN { print b - a }')")
		printf '%-26s %8.0f %10s %9s %8s %12s %10.0f %12.0f\n' "$f$label" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')" \
			"$rate" "$cat_rate" "$(awk -v s="$rate" -v c="$cat_rate" 'BEGIN { printf "%.0f", (c > 0 ? 100 * s / c : 0) }')" \
			"$(awk '{ printf "%.1f", $1 / 1024 }' "$rss")" "$(awk -v s="$out" 'BEGIN { print s / 1048576 }')" \
			"$(awk '{ print $1 / 1048576 }' "$tmpb")"
	done
}
rows "$a" ""
rows "$a2" " (2 buffers)"
rm -f "$rss" "$tmpb"
echo "MB/s: archive bytes per second of \`tracemount cat ARCHIVE FILE\` (scan + export + read back)"
echo "(2 buffers): the same packets with the ftrace bundles after all others, as a trace of two"
echo "buffers is written: half the trace out of order, sorted through temporary files"
echo "aims (shown, not asserted): export >= 15% of cat throughput; peak RSS <= 64 MB (issue 10)"
