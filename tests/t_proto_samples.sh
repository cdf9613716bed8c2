#!/usr/bin/env bash
# tests/t_proto_samples.sh - the stack samples a Perfetto proto trace
# carries (issue 35): testdata/conformance/proto_samples.textproto, written
# from the protos' public description (tests/interop/captures/proto_samples
# holds the same against the reference's import). PerfSample packets
# (traced_perf), StreamingProfilePackets (Chrome's sampler) and StackSample
# packets go into profile.folded and timeline.tsv's sample rows, their
# threads into threads.tsv, the stats resolving their stacks counts into
# metadata.json; merged.pftrace carries them so that tracemount reads the
# same profile back from it. Expectations are worked out from the fixture.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$T_TMP"

for c in jq protoc; do
	if ! command -v $c >/dev/null; then
		skip "proto samples" "$c is not installed"
		exit 0
	fi
done
in=$T_TMP/samples.pftrace
protoc --encode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" \
	<"$TESTDATA/conformance/proto_samples.textproto" >"$in" || { fail "encode proto_samples"; exit 1; }

# Sequence 1 (PerfSample): stack 1 twice (main, do_work, memcpy), stack 2
# twice (its leaf has no name: its mapping's last component and rel_pc),
# stack 3 twice (main; once of no pid or tid: the swapper), stack 4 once
# (a frame of no mapping whose name holds ';' and a tab: written '_'),
# stack 8 once (its mapping's second path component is missing: the name
# ends before it); the rest no stack. Sequence 2 (Chrome): thread 501's
# samples at 5, 15, 25 us after its descriptor, 100 us of a TrackEvent,
# then 1 and 1 more, the packet with one delta for three stacks its first,
# the one with three deltas for one stack its first; the stack 99 is
# missing; 502 after the clear: two. Sequence 3 (StackSample, source
# simpleperf): the interned stack three times, the inline one once.
# Sequence 4 (Chrome): one sample after its descriptor, then one after a
# clear and one after a loss, both counted from 0 on MONOTONIC (4 s).
cat >expect_folded <<'EOF'
Compositor 2
after_clear 2
art::Run;java.lang.Thread.run 3
base::ThreadMain; 2
base::ThreadMain;RunTask 3
base::ThreadMain;RunTask;v8::Execute 3
main 2
main;do_work 1
main;do_work;libc.so+0x400 2
main;do_work;memcpy 2
main;loop 1
main;odd_name_with tab 1
sampler 1
EOF
"$tm" cat "$in" machines/machine0/profile.folded >got_folded
ok "profile.folded: every sample of the three packets, one line per stack" cmp -s got_folded expect_folded
[ -s got_folded ] && ! cmp -s got_folded expect_folded && diff got_folded expect_folded | head -n 10

# ts, source, leaf, pid, tid of every sample row: the perf samples whose
# stack fails are rows without one (as perf_sample keeps them), the
# Chrome one is no row (as there); the lost-records packet is no sample
cat >expect_rows <<'EOF'
4000007000	chrome	after_clear	600	601
4000009000	chrome	after_clear	600	601
5000001000	linux.perf	memcpy	100	101
5000002000	linux.perf	memcpy	100	101
5000003000	linux.perf	libc.so+0x400	100	102
5000004000	linux.perf	main	200	201
5000005000	linux.perf	odd;name\twith tab	200	201
5000006000	linux.perf		200	202
5000007000	linux.perf		200	202
5000008000	linux.perf		200	202
5000009000	linux.perf		200	202
5000010000	linux.perf		200	202
5000011000	linux.perf	do_work	200	202
5000012000	linux.perf		200	202
5000013000	linux.perf		200	202
5000015000	linux.perf		100	101
5000015000	chrome	RunTask	500	501
5000016000	linux.perf	libc.so+0x400	100	101
5000017000	linux.perf	main	0	0
5000025000	chrome	v8::Execute	500	501
5000035000	chrome	RunTask	500	501
5000136000	chrome	v8::Execute	500	501
5000137000	chrome		500	501
5000144000	chrome	RunTask	500	501
5000146000	chrome		500	501
5000155000	chrome	v8::Execute	500	501
5000201000	simpleperf	java.lang.Thread.run	300	302
5000202000	simpleperf	loop	300	301
5000203000	simpleperf	java.lang.Thread.run		303
5000204000	simpleperf	java.lang.Thread.run		
5000205000	simpleperf		300	301
5000206000	simpleperf		300	301
5000500000	chrome	Compositor	500	502
5000504000	chrome	Compositor	500	502
5000705000	chrome	sampler	600	601
EOF
"$tm" cat "$in" timeline.tsv | awk -F'\t' -v OFS='\t' 'NR > 1 && $5 == "sample" { print $1, $6, $7, $9, $10 }' >got_rows
ok "timeline.tsv: a sample row per sample, at its time (Chrome's from the sequence's deltas)" cmp -s got_rows expect_rows
[ -s got_rows ] && ! cmp -s got_rows expect_rows && diff got_rows expect_rows | head -n 10
eq "timeline.tsv: the legacy TrackEvent after the first Chrome packet, its 25 us moving the sequence's time" \
	"$("$tm" cat "$in" timeline.tsv | awk -F'\t' '$7 == "tick" { print $1 }')" 5000135000

# each sample's thread and process (a main thread per process made by
# pid) and the process tree's, in time order (sequence 4's first, at 4 s),
# 303 of no pid
eq "threads.tsv: the samples' threads" \
	"$("$tm" cat "$in" machines/machine0/threads.tsv | awk -F'\t' 'NR > 1 { printf "%s/%s ", $1, $3 }')" \
	"0/0 600/600 601/600 1/1 100/100 101/100 102/100 200/200 201/200 202/200 500/500 501/500 502/500 300/300 302/300 301/300 303/ "
eq "metadata.json: the stats resolving the stacks counted, as the reference counts them" \
	"$("$tm" cat "$in" metadata.json | jq -c '.files[0].stats')" \
	'{"stackprofile_parser_error":2,"stackprofile_invalid_frame_id":1,"stackprofile_empty_callstack":1,"stackprofile_invalid_callstack_id":2,"stackprofile_invalid_string_id":3,"stackprofile_invalid_mapping_id":1,"perf_cpu_lost_records":{"2":5},"perf_samples_skipped":1}'

# merged.pftrace: the Chrome samples as StackSamples of source "chrome"
# at their trace times; the one whose stack fails, and the packet short of
# deltas, as StreamingProfilePackets without a row
"$tm" cat "$in" merged.pftrace >m.pftrace
protoc --decode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" <m.pftrace >m.txt
eq "merged.pftrace: a StackSample per Chrome sample and per StackSample" "$(grep -c '^  stack_sample {' m.txt)" 19
eq "merged.pftrace: the Chrome sequences' defaults name the source, once per state (a loss keeps it)" \
	"$(grep -c 'source: "chrome"' m.txt)" 4
eq "merged.pftrace: two StreamingProfilePackets left, of no row" "$(grep -c '^  streaming_profile_packet {' m.txt)" 2
eq "merged.pftrace read back: the same profile.folded" \
	"$("$tm" cat m.pftrace machines/machine0/profile.folded | md5sum)" "$(md5sum <expect_folded)"
eq "merged.pftrace read back: the same sample rows" \
	"$("$tm" cat m.pftrace timeline.tsv | awk -F'\t' -v OFS='\t' 'NR > 1 && $5 == "sample" && $6 != "chrome" { print $1, $6, $7, $9, $10 }' | md5sum)" \
	"$(grep -v chrome expect_rows | md5sum)"

# PerfSample counter values (testdata/conformance/proto_perf_counters):
# a counter row per value on the tracks its session's defaults named at
# its first sample on the CPU (ts, track name, CPU, value). Sequence 10 on
# CPU 0 names its timebase task-clock:uk and four followers; on CPU 1 it
# has two counts for them; at 3000 the fifth count has no follower; at
# 4000 no timebase count; at 4500 a skipped sample (not in scope) still
# counts; the lost-records and producer packets do not; the renamed
# timebase is CPU 2's only. Sequence 11 (no defaults) is cpu-clock,
# without a CPU on CPU 0; sequence 13's two unknowns share one track.
protoc --encode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" \
	<"$TESTDATA/conformance/proto_perf_counters.textproto" >counters.pftrace || fail "encode proto_perf_counters"
cat >expect_counters <<'EOF'
1000	task-clock:uk	cpu:0	100
1000	instructions	cpu:0	1
1000	sched:sched_switch:h	cpu:0	2
1000	raw.0x4.0xc0.0x1.0x0	cpu:0	3
1000	explicit	cpu:0	4
1500	cpu-clock	cpu:0	15
1600	cpu-clock	cpu:0	16
1700	unknown	cpu:3	17
1700	unknown	cpu:3	18
1800	:u	cpu:4	9007199254740992
1800	raw.0xffffffff.0xffffffffffffffff.0x0.0xa:k	cpu:4	1000000
2000	task-clock:uk	cpu:1	200
2000	instructions	cpu:1	5
2000	sched:sched_switch:h	cpu:1	6
2500	cpu-clock	cpu:0	25
3000	task-clock:uk	cpu:0	300
3000	instructions	cpu:0	7
3000	sched:sched_switch:h	cpu:0	8
3000	raw.0x4.0xc0.0x1.0x0	cpu:0	9
3000	explicit	cpu:0	10
4000	instructions	cpu:0	12
4500	task-clock:uk	cpu:0	450
6000	task-clock:uk	cpu:0	600
6000	instructions	cpu:0	13
7000	renamed	cpu:2	700
EOF
counter_rows counters.pftrace machines/machine0/timeline.tsv >got_counters
ok "PerfSample counters: a row per timebase and follower count, on the tracks the defaults name" \
	cmp -s got_counters expect_counters
[ -s got_counters ] && ! cmp -s got_counters expect_counters && diff got_counters expect_counters | head -n 10
# the stats, by session: sequence 10's is 0, 12's is 2 (the order of the
# sessions' first samples)
eq "PerfSample stats: lost records by CPU; guardrail stop, sharding by session" \
	"$("$tm" cat counters.pftrace metadata.json | jq -c '.files[0].stats | with_entries(select(.key | startswith("perf_")))')" \
	'{"perf_process_shard_count":{"2":4},"perf_chosen_process_shard":{"2":3},"perf_cpu_lost_records":{"0":3},"perf_guardrail_stop_ts":{"0":4700,"2":8100}}'
# merged.pftrace read back gives the same rows
"$tm" cat counters.pftrace machines/machine0/merged.pftrace >counters_merged.pftrace
counter_rows counters_merged.pftrace machines/machine0/timeline.tsv >got_counters2
ok "PerfSample counters: the same rows read back from merged.pftrace" cmp -s got_counters2 expect_counters

# StackSample counter values (testdata/conformance/proto_stack_counters):
# the primary weight on the primary descriptor's track (inline, interned,
# else the defaults'), the follower weights by position on the followers'
# (inline, else interned, a missing iid keeping its place, else the
# defaults'); a per-CPU counter on the CPU of the execution context, and
# none without one; a track per session, source and name (ts, name,
# track, value).
protoc --encode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" \
	<"$TESTDATA/conformance/proto_stack_counters.textproto" >stack_counters.pftrace || fail "encode proto_stack_counters"
cat >expect_stack_counters <<'EOF'
1000	def_time	global:def_time	10
1000	def_f2	global:def_f2	12
2000	def_time	global:def_time	20
2000	def_f1	cpu:1	21
3000	int_cycles	cpu:3	30
3000	int_instr	global:int_instr	31
3000	int_cycles	cpu:3	33
4000	f_inline	global:f_inline	41
4500	f_cpu	cpu:0	45
5000	inline	global:inline	50
7000	def_time	global:def_time	70
EOF
counter_rows stack_counters.pftrace machines/machine0/timeline.tsv >got_stack_counters
ok "StackSample counters: a row per weight with a track, paired by position" \
	cmp -s got_stack_counters expect_stack_counters
[ -s got_stack_counters ] && ! cmp -s got_stack_counters expect_stack_counters &&
	diff got_stack_counters expect_stack_counters | head -n 10
"$tm" cat stack_counters.pftrace machines/machine0/merged.pftrace >stack_counters_merged.pftrace
counter_rows stack_counters_merged.pftrace machines/machine0/timeline.tsv >got_stack_counters2
ok "StackSample counters: the same rows read back from merged.pftrace" \
	cmp -s got_stack_counters2 expect_stack_counters

# A TracePacketDefaults that gives stack_sample_defaults twice (no
# producer writes that, but the wire allows it): the reference reads the
# last one whole, not the two merged, so a source only the first names is
# none (NULL in its profiler_sample table; an empty category here), and
# the second's source wins over the first's. Text format refuses a field
# given twice, so the packets are put together from encoded parts: a
# field of wire type 2 is its tag, its length (a varint) and its bytes.
enc() { protoc --encode="perfetto.protos.$1" -I"$root/protos" "$root/protos/trace.proto"; }
for q in 2:f 3:g; do
	echo "trusted_packet_sequence_id: ${q%:*} incremental_state_cleared: true timestamp: 1000
	      interned_data { function_names { iid: 1 str: \"${q#*:}\" } frames { iid: 1 function_name_id: 1 }
	                      callstacks { iid: 1 frame_ids: 1 } }" | enc TracePacket >"head${q%:*}"
	echo "trusted_packet_sequence_id: ${q%:*} timestamp: ${q%:*}000
	      stack_sample { task_context { pid: 10 tid: 1${q%:*} } callstack_iid: 1 }" | enc TracePacket >"sample${q%:*}"
done
echo 'stack_sample_defaults { source: "first" }' | enc TracePacketDefaults >d2a
echo 'stack_sample_defaults { }' | enc TracePacketDefaults >d2b
echo 'stack_sample_defaults { source: "x" }' | enc TracePacketDefaults >d3a
echo 'stack_sample_defaults { source: "second" }' | enc TracePacketDefaults >d3b
{ cat head2; pb_len 59 d2a d2b; } >packet2 # 59: TracePacket.trace_packet_defaults
{ cat head3; pb_len 59 d3a d3b; } >packet3
{ pb_len 1 packet2; pb_len 1 sample2; pb_len 1 packet3; pb_len 1 sample3; } >twice.pftrace
eq "stack_sample_defaults twice: the last one's source, none when it names none" \
	"$("$tm" cat twice.pftrace timeline.tsv | awk -F'\t' '$5 == "sample" { printf "%s %s;", $1, $6 }')" "2000 ;3000 second;"
"$tm" cat twice.pftrace merged.pftrace >twice_merged.pftrace
eq "stack_sample_defaults twice: the same read back from merged.pftrace" \
	"$("$tm" cat twice_merged.pftrace timeline.tsv | awk -F'\t' '$5 == "sample" { printf "%s %s;", $1, $6 }')" "2000 ;3000 second;"

# A real capture the same way: testdata/real/perf's perf.data and perf
# script of node, and their merged.pftrace (node_proto.pftrace: PerfSample
# and StackSample packets) read as a proto trace give the same profile
# and the same sample rows (time, source, leaf, pid, tid; mapping names in
# the stacks get merged.pftrace's leading '/')
mkdir node
gunzip -c "$TESTDATA/real/perf/node.data.gz" >node/node.data
gunzip -c "$TESTDATA/real/perf/node_perf.txt.gz" >node/node_perf.txt
gunzip -c "$TESTDATA/real/perf/node_proto.pftrace.gz" >node_proto.pftrace
rows() { "$tm" cat "$1" timeline.tsv | awk -F'\t' -v OFS='\t' 'NR > 1 && $5 == "sample" { print $1, $6, $7, $9, $10 }' | sort; }
"$tm" cat node machines/machine0/profile.folded >node.folded
eq "real perf capture as proto: profile.folded as read from perf.data and perf script" \
	"$("$tm" cat node_proto.pftrace machines/machine0/profile.folded | md5sum)" "$(md5sum <node.folded)"
eq "real perf capture as proto: 1,056 stacks" "$(wc -l <node.folded)" 1056
eq "real perf capture as proto: the sample rows as read from perf.data and perf script" \
	"$(rows node_proto.pftrace | md5sum)" "$(rows node | md5sum)"
eq "real perf capture as proto: 1,406 sample rows" "$(rows node_proto.pftrace | wc -l)" 1406

if have_fuse; then
	if tm_mount "$in" "$T_TMP/mnt"; then
		eq "mount: profile.folded as cat gives it" "$(md5sum <"$T_TMP/mnt/machines/machine0/profile.folded")" \
			"$(md5sum <expect_folded)"
		if tm_umount "$T_TMP/mnt"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$T_TMP/mnt.log")"; fi
	else
		fail "mount samples.pftrace" "$(cat "$T_TMP/mnt.log")"
	fi
else
	skip "mount: profile.folded" "/dev/fuse or fusermount3 is missing; the same file was checked through tracemount cat"
fi
# Stacks whose frames repeat a mapping with a long path: a record holds a
# mapping or function name once past its first 64 KB of frames, and names
# it again by index (samples.h, TM_PR_STR_AGAIN); 2 KB of such input made
# 300 MB of one sample's record. 600 frames from the root alternate f on
# the long mapping (30 components of 1,000 bytes), g on /lib and a frame of
# no name on the long mapping (shown as its last component and its
# rel_pc); every frame comes back as it was (leaf first).
long=$(head -c 1000 /dev/zero | tr '\0' A)
{
	echo 'packet { timestamp: 1000 clock_snapshot { clocks { clock_id: 6 timestamp: 1000 } clocks { clock_id: 3 timestamp: 1000 } } }'
	echo 'packet { trusted_packet_sequence_id: 1 sequence_flags: 1'
	echo '  trace_packet_defaults { timestamp_clock_id: 6 perf_sample_defaults { timebase { name: "cpu-clock" } } }'
	echo "  interned_data { mapping_paths { iid: 1 str: \"$long\" } mapping_paths { iid: 2 str: \"lib\" }"
	printf '    mappings { iid: 1 start: 4096 end: 8192'
	for ((i = 0; i < 30; i++)); do printf ' path_string_ids: 1'; done
	echo ' }'
	echo '    mappings { iid: 2 start: 8192 end: 9000 path_string_ids: 2 }'
	echo '    function_names { iid: 1 str: "f" } function_names { iid: 2 str: "g" }'
	echo '    frames { iid: 1 function_name_id: 1 mapping_id: 1 rel_pc: 16 }'
	echo '    frames { iid: 2 function_name_id: 2 mapping_id: 2 rel_pc: 32 }'
	echo '    frames { iid: 3 mapping_id: 1 rel_pc: 48 }'
	printf '    callstacks { iid: 1'
	for ((i = 0; i < 200; i++)); do printf ' frame_ids: 1 frame_ids: 2 frame_ids: 3'; done
	echo ' } } }'
	for t in 2000 3000 4000; do
		echo "packet { trusted_packet_sequence_id: 1 timestamp: $t perf_sample { cpu: 0 pid: 10 tid: 11 callstack_iid: 1 } }"
	done
} >longmap.textproto
protoc --encode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" <longmap.textproto >longmap.pftrace ||
	fail "encode longmap"
"$tm" cat longmap.pftrace timeline.tsv | awk -F '\t' '$5 == "sample" { print $12 }' >longmap.stacks
eq "long mappings: a line a sample" "$(wc -l <longmap.stacks)" 3
eq "long mappings: every frame, each as it was" \
	"$(jq -c '.stack as $s | [($s | length), ($s | map(.name | length) | unique),
		($s | map(.mapping | length) | unique), $s[0].name[-6:], $s[1], $s[2].name]' longmap.stacks | sort -u)" \
	'[600,[1,1005],[4,30030],"A+0x30",{"name":"g","mapping":"/lib"},"f"]'
exit $T_FAILED
