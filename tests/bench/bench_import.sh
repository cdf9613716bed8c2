#!/usr/bin/env bash
# tests/bench/bench_import.sh - issue 34's table: the reference's import of
# a real capture against our reading of it, for the scan, merged.pftrace
# and timeline.tsv, each read the two ways a user reads them: `tracemount
# cat`, and `cat` on a fresh mount (the time of the cat; the mount is up
# first). Every read cold (-o noindex, nothing cached), from the page
# cache, the fastest of BENCH_RUNS (3). Also the peak RSS of ours (the
# command, or the daemon) and the peak space our temporary files take in
# TMPDIR (watched in one more run, untimed), as a multiple of the input:
# TMPDIR is a tmpfs of its own here, whose use counts the files a pass has
# already unlinked. "kept" is what of it a mount still holds once the cat
# is done, to serve reads at any offset: the file read and the machines'
# copies of it (of timeline.tsv, the records its lines are made of when
# read); the rest of the peak is the pass's own scratch (its order store,
# its sorts).
#
# Inputs, as bench_reference.sh builds them (N copies of a capture of
# testdata/real/capture2 in a TAR, one machine each):
#   proto     BENCH_IMPORT_PROTO    (190) x chrome_startup.pftrace (0.7 MB)
#   json      BENCH_IMPORT_JSON     (43)  x chrome_devtools.json   (1.7 MB)
#   systrace  BENCH_IMPORT_SYSTRACE (500) x kernel_ftrace.txt      (0.2 MB)
#   proto_bare BENCH_IMPORT_PROTO_BARE (190): the proto copies without a
#             manifest, all on one machine ("bare"; no aims)
# and, for issue 35's formats, which the reference reads only alone (no
# aims: the two are measured side by side):
#   ninja     BENCH_IMPORT_NINJA    (1000) builds of testdata/real/ninja's
#             log, one after another in one log (212,000 jobs, 14 MB)
#   strace    BENCH_IMPORT_STRACE   (1000) x testdata/real/strace's capture
#             (0.09 MB), one machine each, as the others
#   perf      BENCH_IMPORT_PERF     (200) x testdata/real/perf's perf.data
#             of node (0.16 MB)
#   perf_text BENCH_IMPORT_PERF_TEXT (100) x testdata/real/perf's perf script
#             text of the same recording (1.2 MB)
#   collapsed BENCH_IMPORT_COLLAPSED (200) x testdata/real/perf's collapsed
#             stacks (0.5 MB; no time: nothing in merged.pftrace or
#             timeline.tsv, but the pass reads them for profile.folded)
#   gecko     BENCH_IMPORT_GECKO    (100) x testdata/real/gecko's Firefox
#             profile (0.7 MB)
#   hprof     BENCH_IMPORT_HPROF    (50) x testdata/real/hprof's HotSpot
#             heap dump (1.9 MB; no time: nothing in timeline.tsv)
#   proto_samples BENCH_IMPORT_PROTO_SAMPLES (200) x testdata/real/perf's
#             node capture as a proto trace (0.23 MB: PerfSample and
#             StackSample packets, their stacks interned)
# Without TRACE_PROCESSOR_SHELL, `cat ARCHIVE` stands in for the
# reference. Numbers only: the aims are printed, never asserted.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
real=testdata/real/capture2
tp=${TRACE_PROCESSOR_SHELL:-}
work=$(mktemp -d /tmp/tmbench-import.XXXXXX)
spool=$work/spool
mnt=$work/mnt
cleanup() {
	grep -qs " $mnt fuse" /proc/mounts && fusermount3 -u "$mnt"
	grep -qs " $spool tmpfs" /proc/mounts && umount "$spool"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ ! -x /usr/bin/time ]; then
	echo "bench_import: needs GNU time (/usr/bin/time, Debian package time)"
	exit 0
fi
. tests/bench/lib.sh

mkdir -p "$spool" "$mnt"
tmpfs=0
mount -t tmpfs -o size=16g tmpfs "$spool" 2>/dev/null && tmpfs=1
export TMPDIR=$spool
fuse=0
[ -e /dev/fuse ] && command -v fusermount3 >/dev/null && fuse=1

# spool_peak PID: the largest use of the spool while PID runs, in kB
spool_watch() {
	local pid=$1 peak=0 u
	while kill -0 "$pid" 2>/dev/null; do
		u=$(df -k --output=used "$spool" | tail -n 1)
		[ "$u" -gt "$peak" ] && peak=$u
		sleep 0.02
	done
	echo "$peak"
}

# tm_cat OUT_VAR ARCHIVE PATH: "seconds rss_kb spool_kb 0" of `tracemount cat`.
# The spool's peak is watched in a run of its own, never in a timed one:
# the watch forks df about 150 times a second, which took a fifth of a
# core from a pass that uses both (a 0.09 s JSON scan measured 0.15 s).
tm_cat() {
	local _v=$1 _a=$2 _p=$3 _r _best="" _rss=0 _sp=0 _i _t0 _t1 _t _k _s
	for ((_i = 0; _i <= runs; _i++)); do
		_t0=$EPOCHREALTIME
		/usr/bin/time -f '%M' -o "$work/time" "$tm" cat -o noindex "$_a" "$_p" >/dev/null 2>"$work/err" &
		_r=$!
		_s=0
		[ "$_i" = 0 ] && _s=$(spool_watch $_r)
		wait $_r || { printf -v "$_v" '%s' "nan 0 0 0"; return; }
		_t1=$EPOCHREALTIME
		_t=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", b - a }')
		_k=$(tail -n 1 "$work/time")
		if [ "$_i" -gt 0 ] && faster "$_t" "$_best"; then _best=$_t; fi
		[ "$_k" -gt "$_rss" ] && _rss=$_k
		[ "$_s" -gt "$_sp" ] && _sp=$_s
	done
	printf -v "$_v" '%s' "$_best $_rss $_sp 0"
}

# mount_cat OUT_VAR ARCHIVE PATH: the same for `cat` on a fresh mount (the
# spool watched in the first run alone, as above); the RSS is the daemon's
# peak (VmHWM) once the cat is done, the last the spool's use then (kept)
mount_cat() {
	local _v=$1 _a=$2 _p=$3 _best="" _rss=0 _sp=0 _kept=0 _i _d _t0 _t1 _t _k _s _r _w _u
	if [ "$fuse" = 0 ]; then printf -v "$_v" '%s' "nan 0 0 0"; return; fi
	for ((_i = 0; _i <= runs; _i++)); do
		"$tm" -f -o noindex "$_a" "$mnt" 2>"$work/daemon.err" &
		_d=$!
		for _w in $(seq 1 500); do grep -qs " $mnt fuse" /proc/mounts && break; sleep 0.01; done
		_t0=$EPOCHREALTIME
		cat "$mnt/$_p" >/dev/null &
		_r=$!
		_s=0
		[ "$_i" = 0 ] && _s=$(spool_watch $_r)
		wait $_r
		_t1=$EPOCHREALTIME
		_k=$(awk '/^VmHWM:/ { print $2 }' "/proc/$_d/status")
		_u=$(df -k --output=used "$spool" | tail -n 1)
		[ "$_u" -gt "$_s" ] && _s=$_u # the watch samples; this is exact
		fusermount3 -u "$mnt"
		wait "$_d"
		_t=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", b - a }')
		if [ "$_i" -gt 0 ] && faster "$_t" "$_best"; then _best=$_t; fi
		[ "${_k:-0}" -gt "$_rss" ] && _rss=$_k
		[ "$_s" -gt "$_sp" ] && _sp=$_s
		[ "$_u" -gt "$_kept" ] && _kept=$_u
	done
	printf -v "$_v" '%s' "$_best $_rss $_sp $_kept"
}

echo "select 1;" >"$work/q.sql"
if [ -n "$tp" ]; then
	base_name="reference"
	base=("$tp" query -f "$work/q.sql")
else
	echo "TRACE_PROCESSOR_SHELL is not set: cat of the archive stands in for the reference"
	base_name="cat"
	base=(cat)
fi
[ "$tmpfs" = 1 ] || echo "no tmpfs for TMPDIR here (not root?): its peak is not measured"
[ "$fuse" = 1 ] || echo "no FUSE here: the mount columns are not measured"

printf '\n%-44s %9s | %-24s | %-24s %-24s | %-24s %-24s | %9s %9s %6s\n' input "$base_name" "scan (clocks/edges.csv)" \
	"merged.pftrace: cat" "merged.pftrace: mount" "timeline.tsv: cat" "timeline.tsv: mount" "peak RSS" "peak TMP" "kept"
row() { # kind source n aims(scan pftrace timeline; 0: none) [bare]
	local kind=$1 src=$2 n=$3 as=$4 ap=$5 at=$6 bare=${7:-}
	[ "$n" -gt 0 ] || return 0
	local a=$work/$kind.tar size
	if [ "$kind" = ninja ]; then
		# the reference reads a ninja log only alone: one log of n builds
		# like the real one, each after the one before
		a=$work/ninja_log
		awk -v n="$n" -F'\t' -v OFS='\t' 'NR == 1 { print; next } { l[NR] = $0 }
			END { for (k = 0; k < n; k++) for (i = 2; i <= NR; i++) { split(l[i], f, "\t")
				print f[1] + k * 12000, f[2] + k * 12000, f[3], "b" k "/" f[4], f[5] } }' "$src" >"$a"
	else
		build "$kind" "$src" "$n" "$bare"
	fi
	size=$(stat -c %s "$a")
	cat "$a" >/dev/null # page cache
	local b s pc pm tc tmn
	timed b "${base[@]}" "$a"
	tm_cat s "$a" clocks/edges.csv # the scan alone: the clock views
	tm_cat pc "$a" merged.pftrace
	mount_cat pm "$a" merged.pftrace
	tm_cat tc "$a" timeline.tsv
	mount_cat tmn "$a" timeline.tsv
	awk -v name="$n x $(basename "${src%.gz}") ($((size / 1000000)) MB)" -v size="$size" -v b="$b" -v s="$s" \
		-v pc="$pc" -v pm="$pm" -v tc="$tc" -v tmn="$tmn" -v as="$as" -v ap="$ap" -v at="$at" -v ref="$tp" -v bare="$bare" '
	function cell(x,   X) { split(x, X, " "); return sprintf("%7.3fs (%5.1fx)", X[1], X[1] > 0 ? B[1] / X[1] : 0) }
	function aim(x) { return x > 0 ? sprintf("%16s >= %3dx", "", x) : sprintf("%24s", "-") }
	BEGIN {
		split(b, B, " ")
		n = split(s " " pc " " pm " " tc " " tmn, all, " ")
		rss = 0; sp = 0; kept = 0
		for (i = 1; i <= n; i += 4) {
			if (all[i + 1] > rss) rss = all[i + 1]
			if (all[i + 2] > sp) sp = all[i + 2]
			if (all[i + 3] > kept) kept = all[i + 3]
		}
		sub(/ninja_log \(/, "builds of ninja_log (", name)
		if (bare == "bare") sub(/ \(/, ", bare (", name)
		printf "%-44s %8.3fs | %-24s | %-24s %-24s | %-24s %-24s | %6.0f MB %5.2fx %5.2fx\n", name, B[1], cell(s),
			cell(pc), cell(pm), cell(tc), cell(tmn), rss / 1024, sp * 1024 / size, kept * 1024 / size
		if (ref != "")
			printf "%-44s %9s | %-24s | %-24s %-24s | %-24s %-24s | %9s %9s\n", "  aim", "", aim(as),
				aim(ap), aim(ap), aim(at), aim(at), "<= 64 MB", "<= 1.5x"
	}'
	rm -f "$a"
}
row proto "$real/chrome_startup.pftrace.gz" "${BENCH_IMPORT_PROTO:-190}" 50 25 10
row json "$real/chrome_devtools.json.gz" "${BENCH_IMPORT_JSON:-43}" 20 5 5
row systrace "$real/kernel_ftrace.txt.gz" "${BENCH_IMPORT_SYSTRACE:-500}" 40 20 15
# the proto files again without a manifest, as a folder of loose files
# comes: one machine, whose kept packets wait in a temporary file for the
# machine ids that only the whole scan gives (no aims of their own)
row proto_bare "$real/chrome_startup.pftrace.gz" "${BENCH_IMPORT_PROTO_BARE:-190}" 0 0 0 bare
# issue 35: a format's scan and generation next to the reference's import
row ninja testdata/real/ninja/ninja_log "${BENCH_IMPORT_NINJA:-1000}" 0 0 0
row strace testdata/real/strace/python_strace.txt.gz "${BENCH_IMPORT_STRACE:-1000}" 0 0 0
row perf testdata/real/perf/node.data.gz "${BENCH_IMPORT_PERF:-200}" 0 0 0
row perf_text testdata/real/perf/node_perf.txt.gz "${BENCH_IMPORT_PERF_TEXT:-100}" 0 0 0
row collapsed testdata/real/perf/node.folded.gz "${BENCH_IMPORT_COLLAPSED:-200}" 0 0 0
row gecko testdata/real/gecko/firefox_startup.json.gz "${BENCH_IMPORT_GECKO:-100}" 0 0 0
row hprof testdata/real/hprof/small.hprof.gz "${BENCH_IMPORT_HPROF:-50}" 0 0 0
row proto_samples testdata/real/perf/node_proto.pftrace.gz "${BENCH_IMPORT_PROTO_SAMPLES:-200}" 0 0 0
