#!/usr/bin/env bash
# tests/t_formats.sh - no format is dropped in silence (issue 33, part 4):
# a file in a format the reference imports and tracemount only recognises
# (Android logcat text) keeps its own
# type in metadata.json, "events": null and a not_exported reason;
# `tracemount check`, a foreground mount and `pack` print one warning line
# naming the file and its format; `pack --strict` fails on it. The formats
# tracemount reads (perf.data, a ninja log, strace and perf script text,
# collapsed stacks, a Gecko profile, a heap dump: issue 35) beside them have their
# events counted and in
# timeline.tsv (collapsed stacks, of no time, in profile.folded), and no
# warning.
# The files follow each format's public description, as far as the
# reference's sniffers look (spec/formats.md §1.2); the perf.data is a real
# capture of a node process (testdata/real/perf).
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
cd "$T_TMP"

mkdir in
printf '[{"name":"s","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]\n' >in/app.json
# perf.data: a real one (testdata/real/perf)
gzip -dc "$TESTDATA/real/perf/node.data.gz" >in/perf.data
printf 'main;parse;read 12\nmain;parse 3\n' >in/stacks.folded
printf '42  1700000000.000100 openat(AT_FDCWD, "/etc/hosts", O_RDONLY) = 3\n' >in/run.strace
printf 'app 7/8 [001] 10.000001:          1 cpu-clock: \n\t1 work+0x1 (/bin/app)\n\t2 main (/bin/app)\n\n' >in/app.perf
printf '%s\n' '{"meta":{"version":27,"interval":1},"libs":[],"threads":[{"name":"GeckoMain","tid":5,"pid":5,' \
	'"stringTable":["main","draw (in libxul.so)"],"frameTable":{"schema":{"location":0},"data":[[0],[1]]},' \
	'"stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1]]},' \
	'"samples":{"schema":{"stack":0,"time":1},"data":[[1,7.75]]}}]}' >in/firefox.json
printf '# ninja log v5\n10\t20\t0\tout.o\t1a2b\n' >in/.ninja_log_copy
cp in/.ninja_log_copy in/build.ninja_log
# a heap dump's header cut short: no graph, a stat (the real ones: t_hprof.sh)
printf 'JAVA PROFILE 1.0.2\0\0\0\0\x08' >in/heap.hprof
printf '11-29 10:00:00.123  1234  1234 I tag: hello\n' >in/app.logcat
(cd in && zip -q -X ../mixed.zip app.json perf.data stacks.folded run.strace app.perf firefox.json build.ninja_log heap.hprof app.logcat)

# what each file is, by the reference's names, in archive order
expect_types='["zip","json","perf","collapsed_stack","strace","perf_text","gecko","ninja_log","art_hprof","android_logcat"]'
expect_warn=$(for f in app.logcat:android_logcat; do
	echo "tracemount: warning: mixed.zip: ${f%%:*}: ${f#*:} events not exported: tracemount does not read this format yet"
done)

out=$("$tm" check mixed.zip 2>check.err); rc=$?
eq "check: such files still merge" "$rc" 0
contains "check: the summary names their formats" "$out" "9 trace files (1 perf, 1 art_hprof, 1 gecko, 1 json, 1 ninja_log, 1 android_logcat, 1 collapsed_stack, 1 perf_text, 1 strace)"
eq "check: one warning line per file, naming it and its format" "$(cat check.err)" "$expect_warn"

"$tm" ls mixed.zip files >/dev/null 2>ls.err
eq "ls prints no warning" "$(cat ls.err)" ""
meta=$("$tm" cat mixed.zip metadata.json 2>cat.err)
eq "cat prints no warning" "$(cat cat.err)" ""
eq "metadata: the type is the reference's name" "$(jq -c '[.files[].type]' <<<"$meta")" "$expect_types"
eq "metadata: no separate format field" "$(jq '[.files[] | select(has("format"))] | length' <<<"$meta")" 0
eq "metadata: events null where not exported" \
	"$(jq -c '[.files[] | select(.type | IN("json", "zip", "ninja_log", "strace", "perf_text", "collapsed_stack", "gecko", "perf", "art_hprof") | not) | .events]' <<<"$meta")" \
	'[null]'
eq "metadata: each says why" \
	"$(jq -r '[.files[] | select(.not_exported != null)] | length' <<<"$meta")" 1
eq "profile.folded: perf.data's samples too (their frames named mapping+0xaddress)" \
	"$("$tm" cat mixed.zip machines/machine0/profile.folded | grep '+0x' | awk '{ n += $NF } END { print n }')" \
	"$(jq '.files[] | select(.type == "perf") | .events' <<<"$meta")"
eq "metadata: a perf.data file's samples are counted, and exported" \
	"$(jq -c '.files[] | select(.type == "perf") | [.events, .not_exported]' <<<"$meta")" \
	"[$("$tm" cat mixed.zip timeline.tsv | awk -F'\t' '$4 == "perf.data" && $5 == "sample"' | wc -l),null]"
eq "metadata: an strace call is counted, and exported" \
	"$(jq -c '.files[] | select(.type == "strace") | [.events, .not_exported]' <<<"$meta")" '[1,null]'
eq "timeline.tsv: the call on its thread, with its args" \
	"$("$tm" cat mixed.zip timeline.tsv | awk -F'\t' '$7 == "openat" { print $5, $6, $10, $12 }')" \
	'instant strace 42 {"args":"AT_FDCWD, \"/etc/hosts\", O_RDONLY","ret":"3"}'
eq "metadata: a perf script sample is counted, and exported" \
	"$(jq -c '.files[] | select(.type == "perf_text") | [.events, .not_exported]' <<<"$meta")" '[1,null]'
eq "timeline.tsv: the sample on its thread, its stack leaf first" \
	"$("$tm" cat mixed.zip timeline.tsv | awk -F'\t' '$5 == "sample" && $6 == "perf_text" { print $6, $7, $9, $10, $12 }')" \
	'perf_text work 7 8 {"stack":[{"name":"work","mapping":"/bin/app"},{"name":"main","mapping":"/bin/app"}]}'
contains "threads.tsv: the sample's thread, named by its command" \
	"$("$tm" cat mixed.zip machines/machine0/threads.tsv 2>&1)" "$(printf '8\tapp\t7')"
eq "metadata: collapsed stacks are exported, and place no event (they have no time)" \
	"$(jq -c '.files[] | select(.type == "collapsed_stack") | [.events, .not_exported]' <<<"$meta")" '[0,null]'
eq "metadata: a Gecko sample is counted, and exported" \
	"$(jq -c '.files[] | select(.type == "gecko") | [.events, .not_exported]' <<<"$meta")" '[1,null]'
eq "timeline.tsv: the Gecko sample at its whole ms (the reference reads 7.75 as 7), its frame's lib a mapping" \
	"$("$tm" cat mixed.zip timeline.tsv | awk -F'\t' '$6 == "gecko" { print $1, $5, $7, $9, $10, $12 }')" \
	'7000000 sample draw 5 5 {"stack":[{"name":"draw","mapping":"libxul.so"},{"name":"main","mapping":"gecko"}]}'
eq "profile.folded: the samples' stacks and the collapsed stacks, from the root, with their counts" \
	"$("$tm" cat mixed.zip machines/machine0/profile.folded | grep -v '+0x')" \
	"$(printf '%s\n' 'main;draw 1' 'main;parse 3' 'main;parse;read 12' 'main;work 1')"
eq "metadata: a ninja log's job is counted, and exported" \
	"$(jq -c '.files[] | select(.type == "ninja_log") | [.events, .not_exported]' <<<"$meta")" '[1,null]'
eq "timeline.tsv: the job on worker 1 of the Build process" \
	"$("$tm" cat mixed.zip timeline.tsv | awk -F'\t' '$7 == "out.o" { print $1, $2, $5, $9, $10 }')" \
	"10000000 10000000 slice 1 1"
contains "threads.tsv: the worker" "$("$tm" cat mixed.zip machines/machine0/threads.tsv 2>&1)" "$(printf '1\tWorker\t1')"
eq "metadata: a heap dump is exported, places no event (it has no clock) and counts its cut header" \
	"$(jq -c '.files[] | select(.type == "art_hprof") | [.events, .not_exported, .stats]' <<<"$meta")" \
	'[0,null,{"hprof_header_errors":1}]'
contains "metadata: the reason names the outputs" "$(jq -r '.files[] | select(.type == "android_logcat") | .not_exported' <<<"$meta")" \
	"none of them is in merged.pftrace, timeline.tsv or the tables"
eq "metadata: a merged file counts its events and has no reason" \
	"$(jq -c '.files[1] | [.events, has("not_exported")]' <<<"$meta")" '[1,false]'
eq "metadata: the merge is ok" "$(jq -r .status <<<"$meta")" ok

# profile.folded: two files' same stacks are one line, sorted in byte
# order; a ';' in a frame's name would split it, so it is written '_'.
mkdir two
cp "$TESTDATA/perf_text/edge_perf.txt" two/a.perf
sed 's/ leaf / le;af /' two/a.perf >two/b.perf
(cd two && tar cf ../two.tar a.perf b.perf)
eq "profile.folded: one line per distinct stack, counts summed over files" \
	"$("$tm" cat two.tar machines/machine0/profile.folded)" \
	"$(printf '%s\n' ';a;operator+(int) 2' '[unknown];foo(int) 2' '__libc_start_call_main;work 4' \
		'__libc_start_call_main;work;le_af 1' '__libc_start_call_main;work;leaf 1' 'bare 2')"

# A collapsed-stack file whose first line is longer than the 512 bytes the
# reference's TAR reader sniffs (it aborts on it: tracemount(1),
# "Divergences") is read as collapsed stacks.
long=$(printf 'frame%03d;' $(seq 1 80))
printf '%s 5\nmain;x 2\n' "${long%;}" >two/long.folded
(cd two && tar cf ../long.tar long.folded)
eq "a long first line in a TAR: still collapsed stacks" \
	"$("$tm" cat long.tar metadata.json | jq -c '[.files[].type]')" '["tar","collapsed_stack"]'
eq "a long first line in a TAR: its stacks in profile.folded" \
	"$("$tm" cat long.tar machines/machine0/profile.folded | awk '{ print NF ? $NF : "" }' | tr '\n' ' ')" "5 2 "

# A Gecko profile that is not JSON fails the merge with the reference's text.
printf '{"meta":{},"threads":[' >bad.json
"$tm" check bad.json >/dev/null 2>bad.err
eq "a Gecko profile cut short: the reference's error" "$(cat bad.err)" \
	"Syntactic error while parsing Gecko trace: Error parsing JSON object field: ; please use an external JSON tool (e.g. jq) to understand the source of the error."

# A single input of such a format: named by its path, without a member.
"$tm" check in/app.logcat >/dev/null 2>single.err
eq "check of a lone logcat names the input" "$(cat single.err)" \
	"tracemount: warning: in/app.logcat: android_logcat events not exported: tracemount does not read this format yet"

# pack: reported with the drops; --strict refuses.
mkdir out
"$tm" pack -o out/p.zip in/app.json in/app.logcat in/heap.hprof in/firefox.json in/run.strace >pack.out 2>pack.err; rc=$?
eq "pack: writes the archive" "$rc" 0
eq "pack: reports each file not exported" "$(grep -c 'events not exported' pack.err)" 1
contains "pack: names the file" "$(cat pack.err)" "p.zip: app.logcat: android_logcat events not exported"
"$tm" pack --strict -o out/s.zip in/app.json in/app.logcat >/dev/null 2>strict.err; rc=$?
eq "pack --strict: fails" "$rc" 1
contains "pack --strict: says why" "$(cat strict.err)" \
	"tracemount: pack: --strict: the events of 1 file are not exported, out/s.zip not written"
ok "pack --strict: writes nothing" test ! -e out/s.zip
"$tm" pack --strict -o out/ok.zip in/app.json >/dev/null 2>&1
eq "pack --strict: a fully exported archive is written" "$?" 0

if have_fuse; then
	if tm_mount mixed.zip "$T_TMP/mnt"; then
		eq "mount: metadata.json as cat gives it" "$(cat "$T_TMP/mnt/metadata.json")" "$meta"
		eq "mount: events null through the mount" \
			"$(jq -c '.files[] | select(.type == "android_logcat") | .events' "$T_TMP/mnt/metadata.json")" null
		eq "mount: profile.folded as cat gives it" "$(cat "$T_TMP/mnt/machines/machine0/profile.folded")" \
			"$("$tm" cat mixed.zip machines/machine0/profile.folded)"
		if tm_umount "$T_TMP/mnt"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$T_TMP/mnt.log")"; fi
		eq "mount: the foreground daemon warned once per file" "$(grep 'warning' "$T_TMP/mnt.log")" "$expect_warn"
	else
		fail "mount mixed.zip" "$(cat "$T_TMP/mnt.log")"
	fi
else
	skip "mount: warnings of a foreground mount" "/dev/fuse or fusermount3 is missing; the same warning was checked through tracemount check"
fi
exit $T_FAILED
