#!/usr/bin/env bash
# tests/t_perf_data.sh - perf.data, `perf record`'s own file (issue 35):
# the real captures of testdata/real/perf (their README says how they were
# recorded) read as the reference reads them. node.data is the recording
# whose `perf script` text is node_perf.txt beside it, so what tracemount
# makes of the binary file is checked against what perf itself printed of
# it: the same samples, each on its thread at its microsecond, in
# timeline.tsv and profile.folded; a group's values (group.data) are the
# counter rows perf's dump of it gives. A file recorded without -k puts
# trace time on the perf clock, as the reference does; damaged files fail
# with the reference's words; the mount shows what `tracemount cat` shows.
#
# Expectations come from perf's text and the format's layout (awk, od),
# independently of core/.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
src=$TESTDATA/real/perf
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$T_TMP"

for c in jq gzip awk od; do
	if ! command -v $c >/dev/null; then
		skip "perf.data" "$c is not installed"
		exit 0
	fi
done

gzip -dc "$src/node_perf.txt.gz" >node_perf.txt
gzip -dc "$src/node.data.gz" >node.data
cp "$src/node.data.gz" node.data.gz

# perf script's heads: (tid, seconds.microseconds), and how many
awk '/^[^[:space:]]/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]:$/) {
	t = $i; sub(":", "", t); n = split($(i - 1), p, "/"); print p[n], t; break } }' node_perf.txt | sort >heads
samples=$(wc -l <heads)

for in in node.data node.data.gz; do
	meta=$("$tm" cat $in metadata.json)
	eq "$in: merges" "$(jq -r .status <<<"$meta")" ok
	eq "$in: the perf file's type is the reference's name, its samples counted" \
		"$(jq -c '[.files[] | select(.type == "perf") | [.type, .events, .not_exported]]' <<<"$meta")" \
		"[[\"perf\",$samples,null]]"
	eq "$in: recorded with -k mono, trace time is MONOTONIC" "$(jq -r .trace_time.clock <<<"$meta")" MONOTONIC
	tl=$("$tm" cat $in timeline.tsv)
	eq "$in: each sample perf script printed, on its thread at its microsecond" \
		"$(awk -F'\t' '$5 == "sample" { printf "%s %d.%06d\n", $10, int($1 / 1e9), int(($1 % 1e9) / 1000) }' \
			<<<"$tl" | sort | md5sum)" "$(md5sum <heads)"
	eq "$in: a sample's category is the reference's source" \
		"$(awk -F'\t' '$5 == "sample" { print $6 }' <<<"$tl" | sort -u)" linux.perf
done

# An unsymbolized frame is shown as its mapping's last path component and
# the address in it; the leaf first in the args, as the name column says.
tl=$("$tm" cat node.data timeline.tsv)
eq "a sample's name is its leaf frame, the first of its stack" \
	"$(awk -F'\t' '$5 == "sample"' <<<"$tl" | jq -Rr 'split("\t") | [.[6], (.[11] | fromjson | .stack[0].name)] | select(.[0] != .[1])' | wc -l)" 0
eq "frames are named mapping+0xaddress" \
	"$(awk -F'\t' '$5 == "sample" { print $7 }' <<<"$tl" | grep -cvE '^[^/]+\+0x[0-9a-f]+$')" 0
eq "perf script's kernel frames are in [kernel.kallsyms]_text (the mapping perf names)" \
	"$(awk -F'\t' '$5 == "sample"' <<<"$tl" | grep -c '"mapping":"\[kernel.kallsyms\]_text"' | awk '{ print ($1 > 0) }')" 1

folded=$("$tm" cat node.data machines/machine0/profile.folded)
eq "profile.folded: every sample once" "$(awk '{ n += $NF } END { print n }' <<<"$folded")" "$samples"
eq "profile.folded: one line per distinct stack, sorted" "$(cut -d' ' -f1 <<<"$folded" | LC_ALL=C sort -c && echo sorted)" sorted
eq "profile.folded: stacks end at the leaves timeline.tsv names" \
	"$(awk '{ n = split($1, f, ";"); print f[n] }' <<<"$folded" | sort -u | md5sum)" \
	"$(awk -F'\t' '$5 == "sample" { print $7 }' <<<"$tl" | sort -u | md5sum)"
eq "threads.tsv: perf script's threads" \
	"$("$tm" cat node.data machines/machine0/threads.tsv | awk -F'\t' 'NR > 1 && $1 != 0 { print $1 }' | sort | md5sum)" \
	"$(cut -d' ' -f1 heads | sort -u | md5sum)"

# a manifest: perf.data on machine "server" naming trace time, its perf
# script text on machine "client" related to it by offset_ns (the
# reference agrees: interop fixture perf_data_machines)
mkdir two
cp "$src/machines_manifest.json" two/perfetto_manifest.json
cp node.data node_perf.txt two/
(cd two && zip -q -X ../two.zip perfetto_manifest.json node.data node_perf.txt)
offset=$(sed -n 's/.*"offset_ns": *\(-\{0,1\}[0-9]*\).*/\1/p' two/perfetto_manifest.json)
eq "manifest: a machine each" "$("$tm" ls two.zip machines | sort | tr '\n' ' ')" "client server "
"$tm" cat two.zip machines/server/timeline.tsv | awk -F'\t' '$5 == "sample" { print $1 }' >server_ts
"$tm" cat two.zip machines/client/timeline.tsv | awk -F'\t' '$5 == "sample" { print $1 }' >client_ts
eq "manifest: perf.data's samples on server, at their own times" \
	"$("$tm" cat two.zip machines/server/timeline.tsv | awk -F'\t' '$5 == "sample" {
		printf "%s %d.%06d\n", $10, int($1 / 1e9), int(($1 % 1e9) / 1000) }' | sort | md5sum)" "$(md5sum <heads)"
# (perf script's seconds are read as a double times 1000 three times, as
# the reference reads them: a nanosecond lower at times)
eq "manifest: each perf script sample on client at its perf.data time (to the microsecond) plus offset_ns" \
	"$(paste server_ts client_ts | awk -v o="$offset" '{ d = $2 - int($1 / 1000) * 1000
		if (d != o && d != o - 1) bad++ } END { print NR, bad + 0 }')" "$samples 0"

# recorded without -k: the attrs' clock is the perf clock, which then
# names trace time (the reference's SetGlobalClock)
gzip -dc "$src/python_perfclock.data.gz" >plain.data
meta=$("$tm" cat plain.data metadata.json)
eq "no -k: trace time is the perf clock" "$(jq -c '.trace_time | [.clock, .clock_id, .owner]' <<<"$meta")" \
	'["PERF",10,"file"]'
eq "no -k: every sample placed" "$(jq '.files[0].events' <<<"$meta")" \
	"$("$tm" cat plain.data timeline.tsv | awk -F'\t' '$5 == "sample"' | wc -l)"

# a group read at each sample (leader sampling, :S): every value perf
# dumps of it (group_reads.txt: time, event, value) is a counter row of
# that event at the sample's time; merged.pftrace holds them as the
# sample's timebase and follower counts, which read back give the same
gzip -dc "$src/group.data.gz" >group.data
gzip -dc "$src/group_reads.txt.gz" >group_reads.txt
# (time, event, value: counter_rows without the track)
reads() { counter_rows "$1" | cut -f1,2,4; }
eq "read groups: each value perf read is a counter row of its event" \
	"$(reads group.data | md5sum)" "$(md5sum <group_reads.txt)"
eq "read groups: 648 values" "$(reads group.data | wc -l)" 648
"$tm" cat group.data merged.pftrace >group.pftrace
eq "read groups: the same rows read back from merged.pftrace" \
	"$(reads group.pftrace | md5sum)" "$(md5sum <group_reads.txt)"

# a file whose samples carry no CPU (node.data: one command's) keeps its
# counter on a global track, as the reference's perf.data importer does;
# merged.pftrace holds it as counter TrackEvents (a PerfSample's counts go
# on a CPU's track), which read back give the same rows (ts, name, track,
# value)
eq "no CPU: the counter on a global track" "$(counter_rows node.data | cut -f3 | sort | uniq -c | awk '{ print $1, $2 }')" \
	"703 global:cpu-clock"
"$tm" cat node.data merged.pftrace >node_merged.pftrace
eq "no CPU: the same rows read back from merged.pftrace" \
	"$(counter_rows node_merged.pftrace | md5sum)" "$(counter_rows node.data | md5sum)"
eq "a CPU's counter: the rows on cpu:N, read back the same" \
	"$(counter_rows group.pftrace | md5sum)" "$(counter_rows group.data | md5sum)"
eq "a CPU's counter: group.data's on its two CPUs" "$(counter_rows group.data | cut -f3 | sort -u | tr '\n' ' ')" "cpu:0 cpu:1 "

# damage: a cut file, a wrong header size (its 8-byte size field at 8),
# bytes after the last feature section
head -c $(($(stat -c %s node.data) / 2)) node.data >cut.data
out=$("$tm" check cut.data 2>&1); rc=$?
eq "a cut file fails with the reference's words" "$rc:$out" "1:Premature end of perf file. (ERR:tp-corrupt)"
size=$(od -An -tu8 -j8 -N8 node.data | tr -d ' ')
{ head -c 8 node.data; printf '\x70\0\0\0\0\0\0\0'; tail -c +17 node.data; } >size.data
out=$("$tm" check size.data 2>&1); rc=$?
eq "a header of another size fails so" "$rc:$out" "1:Failed to perf file header size. Expected $size, found 112"
{ cat node.data; printf 'xyz'; } >tail.data
out=$("$tm" check tail.data 2>&1); rc=$?
eq "bytes after the last section fail so" "$rc:$out" "1:Unexpected data, 3"
meta=$("$tm" cat cut.data metadata.json 2>/dev/null)
eq "metadata.json of a cut file names the reason" "$(jq -c '[.status, .error]' <<<"$meta")" \
	'["error","Premature end of perf file. (ERR:tp-corrupt)"]'

# MMAPs of random ranges that overlap, in random order, a sample after
# each: a sample is in the newest mapping of its address, the older ones
# trimmed or split around it (make_perf_mmaps.py works it out on its own;
# the reference agrees on this file). 3,000 mappings make the address
# space a structure of many parts, each put in, split and emptied.
if command -v python3 >/dev/null; then
	python3 "$root/tests/tools/make_perf_mmaps.py" 3000 11 mmaps.data >mmaps.expect
	eq "perf.data: 6,000 samples, each in the mapping that holds its address last" \
		"$("$tm" cat mmaps.data timeline.tsv | awk -F'\t' '$5 == "sample" {
			m = $12; sub(/.*"mapping":"/, "", m); sub(/".*/, "", m); print $1 "\t" m }' | md5sum)" \
		"$(md5sum <mmaps.expect)"
	eq "perf.data: some samples fall in no mapping, most in one" \
		"$(awk -F'\t' '$2 == "" { none++ } $2 != "" { some++ } END { print (none > 0 && some > 5000) }' mmaps.expect)" 1
	# event names: from EVENT_DESC (the last entry of an attr wins) and
	# from Simpleperf's event_type_info (the first line of a type and
	# config names all its attrs); make_perf_names.py says which name
	# each sample's counter row takes (the reference agrees on both)
	for how in desc typeinfo; do
		python3 "$root/tests/tools/make_perf_names.py" $how names.data >names.expect
		eq "perf.data: event names from $how, each counter row on its attr's" \
			"$("$tm" cat names.data timeline.tsv | awk -F'\t' '$5 == "counter" { print $1 "\t" $7 }' | md5sum)" \
			"$(md5sum <names.expect)"
	done
else
	skip "perf.data: overlapping MMAPs, event names" "python3 is not installed"
fi

if ! have_fuse; then
	skip "perf.data: mount" "no /dev/fuse or fusermount3; the same checks ran through tracemount cat"
	exit $T_FAILED
fi
if tm_mount node.data "$T_TMP/mnt"; then
	eq "mount: timeline.tsv as cat gives it" "$(md5sum <"$T_TMP/mnt/timeline.tsv")" "$(md5sum <<<"$tl")"
	eq "mount: profile.folded as cat gives it" "$(cat "$T_TMP/mnt/machines/machine0/profile.folded")" "$folded"
	eq "mount: its size as stat says" "$(stat -c %s "$T_TMP/mnt/machines/machine0/profile.folded")" \
		"$(printf '%s\n' "$folded" | wc -c)"
	eq "mount: merged.pftrace as cat gives it" "$(md5sum <"$T_TMP/mnt/merged.pftrace")" \
		"$("$tm" cat node.data merged.pftrace | md5sum)"
	if tm_umount "$T_TMP/mnt"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$T_TMP/mnt.log")"; fi
else
	fail "perf.data: mount" "$(cat "$T_TMP/mnt.log")"
fi
exit $T_FAILED
