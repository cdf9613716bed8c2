#!/usr/bin/env bash
# tests/t_all_formats.sh - one capture of every text format tracemount
# reads beside kernel ftrace, recorded at the same time on one machine
# (testdata/real/all, its README says how): perf's own file (perf.data),
# its perf script text and its collapsed stacks of a node process, strace text of a python process,
# sched_switch from tracefs, a ninja build's log, a Java heap dump (of no
# clock: testdata/real/hprof's), and a manifest that
# relates strace's REALTIME to the perf samples' MONOTONIC by the offset
# measured when recording. Built here as a ZIP and as a TAR (the
# reference refuses both: the ninja log inside an archive, and, in the
# TAR, the collapsed stacks whose first line is longer than the 512 bytes
# its TAR reader sniffs; tracemount(1), "Divergences"). make interop
# compares the same capture without those two members.
#
# Expectations are computed here from the source files with awk, jq and
# bash's 64-bit arithmetic, independently of core/.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
src=$TESTDATA/real/all
cd "$T_TMP"

for c in jq zip tar gzip awk; do
	if ! command -v $c >/dev/null; then
		skip "all formats capture" "$c is not installed"
		exit 0
	fi
done

mkdir in
for f in node_perf.txt node.folded python.strace sched.systrace perf.data; do gzip -dc "$src/$f.gz" >in/$f; done
cp "$src/ninja_log" "$src/perfetto_manifest.json" in/
gzip -dc "$TESTDATA/real/hprof/small.hprof.gz" >in/heap.hprof
members="perfetto_manifest.json ninja_log node.folded node_perf.txt python.strace sched.systrace perf.data heap.hprof"
# shellcheck disable=SC2086
(cd in && zip -q -X ../all.zip $members && tar cf ../all.tar $members)

# (read as text: jq's numbers are doubles, 53 bits)
offset=$(sed -n 's/.*"offset_ns": *\(-\{0,1\}[0-9]*\).*/\1/p' in/perfetto_manifest.json)
# the first call line's epoch time (seconds.microseconds) in ns, plus the offset
first=$(awk 'NR == 1 { print $2 }' in/python.strace)
strace_first=$(( ${first%.*} * 1000000000 + 10#${first#*.} * 1000 + offset ))
samples=$(grep -c '^[^[:space:]]' in/node_perf.txt)
folded=$(awk '{ n += $NF } END { print n }' in/node.folded)
jobs=$(grep -vc '^#' in/ninja_log)
# perf script's sample heads as (tid, seconds.microseconds): perf.data's
# samples are the same ones (one recording), on MONOTONIC as trace time
awk '/^[^[:space:]]/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]:$/) {
	t = $i; sub(":", "", t); n = split($(i - 1), p, "/"); print p[n], t; break } }' in/node_perf.txt | sort >script_heads

for a in all.zip all.tar; do
	meta=$("$tm" cat $a metadata.json 2>cat.err)
	eq "$a: merges" "$(jq -r '.status' <<<"$meta")" ok
	eq "$a: every file of a format tracemount reads, none unexported" \
		"$(jq -c '[.files[] | select(.parent != null) | [.path, .type, (.not_exported == null)]] | sort' <<<"$meta")" \
		'[["heap.hprof","art_hprof",true],["ninja_log","ninja_log",true],["node.folded","collapsed_stack",true],["node_perf.txt","perf_text",true],["perf.data","perf",true],["perfetto_manifest.json","perfetto_manifest",true],["python.strace","strace",true],["sched.systrace","systrace",true]]'
	eq "$a: trace time is the perf samples' MONOTONIC, as the manifest says" \
		"$(jq -c '.trace_time | [.clock, .owner]' <<<"$meta")" '["MONOTONIC","manifest"]'
	eq "$a: strace's REALTIME reaches it by the manifest's offset" \
		"$(jq -r '.files[] | select(.path == "python.strace") | .first_trace_ts' <<<"$meta")" "$strace_first"
	tl=$("$tm" cat $a timeline.tsv)
	eq "$a: one sample row per perf script sample" \
		"$(awk -F'\t' '$5 == "sample" && $4 == "node_perf.txt"' <<<"$tl" | wc -l)" "$samples"
	eq "$a: perf.data's samples are perf script's, each at its microsecond on its thread" \
		"$(awk -F'\t' '$5 == "sample" && $4 == "perf.data" {
			printf "%s %d.%06d\n", $10, int($1 / 1e9), int(($1 % 1e9) / 1000) }' <<<"$tl" | sort | md5sum)" \
		"$(md5sum <script_heads)"
	eq "$a: one slice per ninja job" "$(awk -F'\t' '$4 == "ninja_log"' <<<"$tl" | wc -l)" "$jobs"
	eq "$a: profile.folded holds both perf samples and the collapsed stacks' counts" \
		"$("$tm" cat $a machines/machine0/profile.folded | awk '{ n += $NF } END { print n }')" \
		"$((2 * samples + folded))"
	eq "$a: heap.tsv holds the heap dump's classes, as the dump alone gives them" \
		"$("$tm" cat $a machines/machine0/heap.tsv | md5sum)" "$("$tm" cat in/heap.hprof machines/machine0/heap.tsv | md5sum)"
	eq "$a: the heap dump's counters in its file's stats" \
		"$(jq -c '.files[] | select(.path == "heap.hprof") | .stats.hprof_instance_counter' <<<"$meta")" \
		"$("$tm" cat in/heap.hprof metadata.json | jq -c '.files[0].stats.hprof_instance_counter')"
done
eq "the ZIP and the TAR make the same timeline.tsv" "$("$tm" cat all.zip timeline.tsv | md5sum)" \
	"$("$tm" cat all.tar timeline.tsv | md5sum)"
eq "the ZIP and the TAR make the same profile.folded" \
	"$("$tm" cat all.zip machines/machine0/profile.folded | md5sum)" \
	"$("$tm" cat all.tar machines/machine0/profile.folded | md5sum)"
exit $T_FAILED
