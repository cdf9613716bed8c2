#!/usr/bin/env bash
# tests/bench/bench_phases.sh - where the time of a cold pass goes: for the
# inputs of bench_import.sh's aim rows, `tracemount cat -o noindex` of
# merged.pftrace and of timeline.tsv under `perf record`, cut into the
# pass's phases, each with its wall time and how busy each of our threads
# kept a core in it (threads of one name summed: two tm-format are up to
# 200%). The phases are told apart by the model's thread, which runs only
# while the ordered records are applied:
#   scan     reading the traces, their records into the order (tm-ahead
#            reads files ahead, tm-spool writes the order's blocks out)
#   replay   the records in order (this thread) applied by the model and
#            its builders (tm-model; tm-sort sorts the timeline's runs)
#   write    the file made from what the replay built (tm-format formats
#            timeline.tsv's lines)
# A pass without the model's thread (a proto merged.pftrace is rewritten
# packet by packet while read, by tm-rewrite; and any pass on one CPU,
# where the model runs on the pass's own thread) is one phase, "scan". Wall times run
# from a run's first sample to its last (start-up not counted). The thread that is
# busy all through a phase is the one that bounds it. Issue 34 asks, where
# an aim is not reached, where the time goes: this is that profile, made
# again on any machine with `perf` (Debian package linux-perf). Numbers
# only; perf's sampling (PHASES_HZ, 4000) costs a few percent. Threads are
# listed in the order they first ran.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
hz=${PHASES_HZ:-4000}
if ! command -v perf >/dev/null || ! perf record -q -o /dev/null true 2>/dev/null; then
	echo "bench_phases: needs perf (Debian package linux-perf) allowed to sample"
	exit 0
fi
work=$(mktemp -d /tmp/tmbench-phases.XXXXXX)
spool=$work/spool
cleanup() {
	grep -qs " $spool tmpfs" /proc/mounts && umount "$spool"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
. tests/bench/lib.sh
# the pass's temporary files on a tmpfs of their own, as bench_import.sh's
mkdir -p "$spool"
mount -t tmpfs -o size=16g tmpfs "$spool" 2>/dev/null
export TMPDIR=$spool

real=testdata/real/capture2
build proto "$real/chrome_startup.pftrace.gz" "${BENCH_IMPORT_PROTO:-190}"
build json "$real/chrome_devtools.json.gz" "${BENCH_IMPORT_JSON:-43}"
build systrace "$real/kernel_ftrace.txt.gz" "${BENCH_IMPORT_SYSTRACE:-500}"

# phases PERF_DATA: the table of one run's samples
phases() {
	perf script -i "$1" -F comm,time 2>/dev/null | awk -v hz="$hz" '
	{
		t = $NF; sub(":", "", t); t += 0
		comm = $1; for (i = 2; i < NF; i++) comm = comm " " $i
		n++; T[n] = t; C[n] = comm
		if (n == 1 || t < t0) t0 = t
		if (t > t1) t1 = t
		if (comm == "tm-model") { if (!m0 || t < m0) m0 = t; if (t > m1) m1 = t }
		if (!(comm in seen)) { seen[comm] = 1; order[++k] = comm }
	}
	END {
		if (!n) { print "  (no samples)"; exit }
		names[1] = "scan"; names[2] = "replay"; names[3] = "write"
		if (m0) { b[1] = t0; b[2] = m0; b[3] = m1; b[4] = t1 } else { b[1] = t0; b[2] = t1; b[3] = t1; b[4] = t1 }
		for (i = 1; i <= n; i++) {
			p = !m0 || T[i] < b[2] ? 1 : T[i] <= b[3] ? 2 : 3
			s[p, C[i]]++; tot[C[i]]++
		}
		printf "  %-7s %8s %7s  %s\n", "phase", "wall", "cores", "threads (share of a core)"
		for (p = 1; p <= 3; p++) {
			w = b[p + 1] - b[p]
			if (w <= 0) continue
			line = ""; busy = 0
			for (j = 1; j <= k; j++) if (s[p, c = order[j]]) {
				busy += s[p, c] / hz
				line = line sprintf("%s %d%%  ", c, 100 * s[p, c] / hz / w + 0.5)
			}
			printf "  %-7s %7.3fs %7.2f  %s\n", names[p], w, busy / w, line
		}
		line = ""; all = 0
		for (j = 1; j <= k; j++) { c = order[j]; all += tot[c] / hz; line = line sprintf("%s %.3fs  ", c, tot[c] / hz) }
		printf "  %-7s %7.3fs %7.2f  CPU: %s\n", "all", t1 - t0, all / (t1 - t0), line
	}'
}

for kind in proto json systrace; do
	for file in merged.pftrace timeline.tsv; do
		echo "$kind $file ($(($(stat -c %s "$work/$kind.tar") / 1000000)) MB): tracemount cat -o noindex"
		# the second of two runs: the first warms the page cache
		"$tm" cat -o noindex "$work/$kind.tar" "$file" >/dev/null
		perf record -q -F "$hz" -o "$work/perf.data" -- \
			"$tm" cat -o noindex "$work/$kind.tar" "$file" >/dev/null 2>"$work/err" ||
			{ echo "  failed: $(head -n 1 "$work/err")"; continue; }
		phases "$work/perf.data"
	done
done
