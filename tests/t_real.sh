#!/usr/bin/env bash
# tests/t_real.sh - captures recorded on a real machine (testdata/real, its
# README.md says how): a Chromium startup trace in Perfetto protobuf, a
# Chromium startup trace and a Node trace in Chrome JSON, and kernel
# sched_switch text from tracefs. The archives are built here with `zip`
# from the stored files, without a perfetto_manifest.json:
#
#   text.zip     the JSON and systrace files only
#   capture.zip  the same plus the protobuf trace
#
# Every expectation is computed here from the source files with jq, awk and
# `protoc --decode`, independently of core/: how many events each file
# places, at which trace-time timestamps, and one hand-checked conversion
# through a Chromium incremental sequence clock.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
ev=$BUILD/tools/tm_events
here=$(cd "$(dirname "$0")" && pwd)
protos=$here/../protos
real=$TESTDATA/real
cd "$T_TMP"

for c in jq zip protoc gzip awk; do
	if ! command -v $c >/dev/null; then
		skip "real captures" "$c is not installed"
		exit 0
	fi
done
have_ev=1
[ -x "$ev" ] || { have_ev=0; skip "real captures: placed events" "$ev not built"; }

gzip -dc "$real/chromium_startup.pftrace.gz" >chromium_startup.pftrace
gzip -dc "$real/chromium_startup.json.gz" >chromium_startup.json
cp "$real/node_trace.json" "$real/sched_switch.systrace" .
zip -q -X text.zip chromium_startup.json node_trace.json sched_switch.systrace
zip -q -X capture.zip chromium_startup.pftrace chromium_startup.json node_trace.json sched_switch.systrace

# ---- expectations from the sources ------------------------------------------

# Chrome JSON (core/scan/scan.c on_json_event, formats.md §3): an event is placed
# when it is an object with a string ph and a numeric ts, ph is one of
# B E i I R n C b e, or X/T with a numeric dur >= 0. ts is in µs; both files
# hold integer ts only, so the value in ns is ts * 1000 exactly. Neither file
# has systemTraceEvents. Prints one ts (ns, own clock) per placed event.
json_ts() {
	jq -r '.traceEvents[] | select(type == "object")
		| select((.ph | type) == "string" and (.ph | length) > 0 and (.ts | type) == "number")
		| select((.ph[0:1] | IN("B", "E", "i", "I", "R", "n", "C", "b", "e"))
			or ((.ph[0:1] | IN("X", "T")) and (.dur | type) == "number" and .dur >= 0))
		| .ts * 1000' "$1"
}

# Ftrace text (formats.md §4.2): every line that is not a comment and has a
# "<secs>.<frac>: <event>:" column is one event; its ts is
# (int64)(strtod(secs) * 1e9). awk's numbers are doubles too, so the same
# truncation gives the same value; %.0f prints it exactly (< 2^53).
systrace_ts() {
	awk '/^#/ { next }
	{
		for (i = 1; i < NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/ && $(i + 1) ~ /^[A-Za-z0-9_]+:$/) {
				s = $i; sub(/:$/, "", s)
				printf "%.0f\n", int(s * 1e9)
				break
			}
	}' "$1"
}

# Perfetto protobuf, decoded to text with protoc. For every TrackEvent
# packet, prints "<TYPE> <trace-time ts> <sequence id>", applying by hand the
# rules of formats.md §5.2 and clocks.md §4.4/§6.1 to what Chromium writes:
#  * a sequence's incremental state becomes valid at sequence_flags bit 1 /
#    incremental_state_cleared, invalid again at previous_packet_dropped;
#    packets with bit 2 on an invalid sequence are skipped;
#  * the packet clock is timestamp_clock_id, else the sequence's
#    TracePacketDefaults.timestamp_clock_id, else the file default
#    (MONOTONIC: the first ClockSnapshot names it primary_trace_clock);
#  * each per-sequence ClockSnapshot {MONOTONIC M, 64 = V, unit U,
#    incremental} resets clock 64's running value to V*U; a packet on clock
#    64 with timestamp d adds d*U to it, and converts through that snapshot:
#    ts = M + running - V*U (trace time is MONOTONIC, clocks.md §5.2);
#  * a packet on MONOTONIC is already in trace time.
# It also counts, into proto_packets.txt, the other packets that carry a
# timestamp and are placed as plain "packet" events (scan.h TM_EV_PACKET):
# every kept packet with a timestamp but no TrackEvent, except ClockSnapshot
# packets, which the reference consumes before looking at their timestamp.
# Anything else (a TrackEvent on a clock these rules do not cover, or
# before its sequence's first snapshot) is counted as "unresolved" on
# stderr, so the test fails loudly if a new capture needs more rules.
cat >proto_expect.awk <<'EOF'
function reset() {
	seq = 0; flags = 0; cleared = 0; ppd = 0; has_ts = 0; ts = 0; tcid = 0
	te = 0; tetype = ""; snap = 0; nclk = 0; has_def = 0; def_tcid = 0; blk = ""
}
/^packet \{/ { reset(); next }
/^  [a-z_0-9]+ \{/ {
	blk = $1
	if (blk == "track_event") te = 1
	if (blk == "clock_snapshot") snap = 1
	if (blk == "trace_packet_defaults") has_def = 1
	next
}
/^  \}/ { blk = ""; next }
/^  trusted_packet_sequence_id: / { seq = $2; next }
/^  sequence_flags: / { flags = $2; next }
/^  incremental_state_cleared: true/ { cleared = 1; next }
/^  previous_packet_dropped: / { ppd = ($2 != "0" && $2 != "false"); next }
/^  timestamp: / { ts = $2; has_ts = 1; next }
/^  timestamp_clock_id: / { tcid = $2; next }
blk == "track_event" && /^    type: / { tetype = $2; next }
blk == "trace_packet_defaults" && /^    timestamp_clock_id: / { def_tcid = $2; next }
blk == "clock_snapshot" && /^      clock_id: / { cid[++nclk] = $2; cunit[nclk] = 1; next }
blk == "clock_snapshot" && /^      timestamp: / { cval[nclk] = $2; next }
blk == "clock_snapshot" && /^      unit_multiplier_ns: / { cunit[nclk] = ($2 == 0 ? 1 : $2); next }
/^\}/ {
	if (cleared || flags % 2 == 1) { valid[seq] = 1; defclk[seq] = 0 }
	else if (ppd) valid[seq] = 0
	if (int(flags / 2) % 2 == 1 && !valid[seq]) next
	if (has_def) defclk[seq] = def_tcid
	if (snap) {
		# Chromium's snapshot packets carry timestamp 0: no delta to add.
		if (has_ts && ts != 0) unresolved++
		mono = ""; inc = ""
		for (i = 1; i <= nclk; i++) {
			if (cid[i] == 3) mono = cval[i]
			if (cid[i] == 64) { inc = cval[i] * cunit[i]; unit[seq] = cunit[i] }
		}
		if (inc != "" && mono != "") { base_mono[seq] = mono; base_inc[seq] = inc; run[seq] = inc }
		next
	}
	if (!has_ts) next
	if (!te) packets++
	clk = tcid ? tcid : (defclk[seq] ? defclk[seq] : 3)
	if (clk == 64) {
		if (!(seq in run)) { if (te) unresolved++; next }
		run[seq] += ts * unit[seq]
		val = base_mono[seq] + run[seq] - base_inc[seq]
	} else if (clk == 3) {
		val = ts
	} else {
		if (te) unresolved++
		next
	}
	if (te) printf "%s %.0f %s\n", tetype, val, seq
}
END {
	if (unresolved) printf "unresolved %d\n", unresolved > "/dev/stderr"
	printf "%d\n", packets > "proto_packets.txt"
}
EOF

protoc --decode=perfetto.protos.Trace --proto_path="$protos" "$protos/trace.proto" \
	<chromium_startup.pftrace >chromium_startup.txt 2>decode.err
eq "the proto capture decodes with protoc" "$?/$(head -c 200 decode.err)" "0/"
# What the capture must exercise: per-sequence incremental clocks in µs,
# and TracePacketDefaults that put packets on them.
n=$(grep -c '^      is_incremental: true' chromium_startup.txt)
[ "$n" -gt 0 ] && pass "the proto capture has incremental clock readings ($n)" ||
	fail "the proto capture has incremental clock readings" "none"
n=$(grep -A1 '^      clock_id: 64$' chromium_startup.txt | grep -c '^      timestamp: ')
eq "every clock 64 reading is incremental in µs" \
	"$(grep -A3 '^      clock_id: 64$' chromium_startup.txt | grep -c '^      unit_multiplier_ns: 1000$')" "$n"
n=$(grep -c '^  trace_packet_defaults {' chromium_startup.txt)
[ "$n" -gt 0 ] && pass "the proto capture has TracePacketDefaults ($n)" ||
	fail "the proto capture has TracePacketDefaults" "none"

awk -f proto_expect.awk chromium_startup.txt >proto_expect.txt 2>proto_expect.err
eq "every TrackEvent of the proto is covered by the hand rules" "$(cat proto_expect.err)" ""
pb_begin=$(grep -c '^TYPE_SLICE_BEGIN ' proto_expect.txt)
pb_end=$(grep -c '^TYPE_SLICE_END ' proto_expect.txt)
pb_instant=$(grep -c '^TYPE_INSTANT ' proto_expect.txt)
pb_counter=$(grep -c '^TYPE_COUNTER ' proto_expect.txt)
# The track_event packets of the decode, counted without the rules above;
# all of them are on valid sequences, so the two counts agree.
eq "the hand rules keep every track_event packet" "$(wc -l <proto_expect.txt)" \
	"$(grep -c '^  track_event {' chromium_startup.txt)"
# Kernel events in the proto: FtraceEvents and compact-sched records.
# Chromium writes none; the count is still taken from the decode.
pb_ftrace=$(awk '/^  ftrace_events \{/ { f = 1; next } /^  \}/ { f = 0 }
	f && /^    event \{/ { n++ }
	f && /^      (switch|waking)_timestamp: / { n++ }
	END { print n + 0 }' chromium_startup.txt)

json_ts chromium_startup.json | sort >chromium_startup.json.ts
json_ts node_trace.json | sort >node_trace.json.ts
systrace_ts sched_switch.systrace | sort >sched_switch.systrace.ts
# A sanity floor for the fixtures themselves (recorded: 3005, 34, 177).
for f in chromium_startup.json node_trace.json sched_switch.systrace; do
	n=$(wc -l <$f.ts)
	[ "$n" -gt 0 ] && pass "$f has events to place ($n)" || fail "$f has events to place" "none"
done
eq "every sched_switch line has a timestamp" "$(wc -l <sched_switch.systrace.ts)" \
	"$(grep -c ': sched_switch: ' sched_switch.systrace)"

# ---- the merge --------------------------------------------------------------

# meta ARCHIVE JQ: query the archive's metadata.json (read once).
meta() { jq -r "$2" "$1.meta.json"; }

for a in text.zip capture.zip; do
	"$tm" cat $a metadata.json >$a.meta.json
	out=$("$tm" check $a 2>&1); rc=$?
	eq "$a: check exits 0" "$rc" 0
	contains "$a: check says ok" "$out" "$a: ok:"
	eq "$a: metadata.json status" "$(meta $a '.status')" ok
	eq "$a: no file dropped anything" "$(meta $a '[.files[] | .dropped // 0] | add')" 0
	for f in chromium_startup.json node_trace.json sched_switch.systrace; do
		eq "$a: $f events in metadata.json" \
			"$(meta $a ".files[] | select(.path == \"$f\") | .events")" "$(wc -l <$f.ts)"
	done
done
# Trace time (clocks.md §5.2): without the proto, the first JSON file claims
# its private clock; with it, the proto is processed first and its first
# ClockSnapshot names MONOTONIC as primary_trace_clock.
eq "text.zip: trace time is the first JSON's private clock" \
	"$(meta text.zip '"\(.trace_time.clock_id) \(.trace_time.file)"')" "11 chromium_startup.json"
eq "capture.zip: trace time is MONOTONIC, claimed by the proto" \
	"$(meta capture.zip '"\(.trace_time.clock_id) \(.trace_time.file)"')" "3 chromium_startup.pftrace"

[ $have_ev = 1 ] || exit $T_FAILED

for a in text.zip capture.zip; do
	"$ev" $a >$a.events 2>$a.err
	eq "$a: tm_events status" "$(tail -n 1 $a.events | jq -r '.summary.status')" ok
	# One line per placed event: file, kind, ts.
	jq -r 'select(.file != null) | [.file, .kind, .ts] | @tsv' $a.events >$a.tsv
	eq "$a: every placed ts is >= 0" "$(awk -F '\t' '$3 !~ /^[0-9]+$/' $a.tsv | head -n 3)" ""
	# The text files are on clocks with no relation to trace time but the
	# zero-offset bridges (clocks.md §7 step 3 for the JSON private
	# clocks; MONOTONIC to MONOTONIC for the systrace), so each placed
	# event's trace-time ts is its own time: compare the sorted lists.
	for f in chromium_startup.json node_trace.json sched_switch.systrace; do
		awk -F '\t' -v f=$f '$1 == f { print $3 }' $a.tsv | sort >$a.$f.got
		eq "$a: $f placed events" "$(wc -l <$a.$f.got)" "$(wc -l <$f.ts)"
		if cmp -s $a.$f.got $f.ts; then
			pass "$a: $f trace-time timestamps"
		else
			fail "$a: $f trace-time timestamps" "$(diff $a.$f.got $f.ts | head -n 4 | tr '\n' ' ')"
		fi
	done
done

a=capture.zip
p=chromium_startup.pftrace
kinds() { awk -F '\t' -v f=$p -v k=$1 '$1 == f && $2 == k' $a.tsv | wc -l; }
eq "$a: proto slice begins placed" "$(kinds begin)" "$pb_begin"
eq "$a: proto slice ends placed" "$(kinds end)" "$pb_end"
eq "$a: proto instants placed" "$(kinds instant)" "$pb_instant"
eq "$a: proto other timestamped packets placed" "$(kinds packet)" "$(cat proto_packets.txt)"
eq "$a: proto kernel events placed" "$(( $(kinds sched) + $(kinds ftrace) ))" "$pb_ftrace"
eq "$a: proto events in metadata.json match tm_events" \
	"$(meta $a ".files[] | select(.path == \"$p\") | .events")" \
	"$(awk -F '\t' -v f=$p '$1 == f' $a.tsv | wc -l)"
# Nothing else: TrackEvents (their extra_counter_values stay part of their
# slice), kernel events and the other timestamped packets are all of it.
eq "$a: proto events in all" "$(meta $a ".files[] | select(.path == \"$p\") | .events")" \
	"$((pb_begin + pb_end + pb_instant + pb_counter + pb_ftrace + $(cat proto_packets.txt)))"
# Every TrackEvent at the trace-time ts the hand rules give.
awk -F '\t' -v f=$p '$1 == f && ($2 == "begin" || $2 == "end" || $2 == "instant") { print $2, $3 }' \
	$a.tsv | sort >proto.got
sed -e 's/^TYPE_SLICE_BEGIN/begin/' -e 's/^TYPE_SLICE_END/end/' -e 's/^TYPE_INSTANT/instant/' \
	-e '/^TYPE_COUNTER/d' -e 's/ [0-9]*$//' proto_expect.txt | sort >proto.want
if cmp -s proto.got proto.want; then
	pass "$a: proto TrackEvent trace-time timestamps ($(wc -l <proto.want))"
else
	fail "$a: proto TrackEvent trace-time timestamps" "$(diff proto.got proto.want | head -n 4 | tr '\n' ' ')"
fi

# One conversion by hand, sequence 3 (the renderer main thread, pid 23838).
# Its first packet is the ClockSnapshot
#   {MONOTONIC (3) = 3124982390408; 64 = 3124982390, unit 1000, incremental;
#    65 = 3124982390, unit 1000}
# with sequence_flags 1 (state cleared) and defaults timestamp_clock_id 64. So
# clock 64's running value starts at 3124982390 * 1000 = 3124982390000 ns,
# and the snapshot relates it to MONOTONIC 3124982390408 (408 ns finer than
# clock 64 can say). Then three track descriptors (timestamp 0), the first
# slice begin (timestamp 0) and the second slice begin (timestamp 41):
#   first  begin: 3124982390000 + 0*1000           = 3124982390000 on 64
#                 -> 3124982390408 + (3124982390000 - 3124982390000)
#                 = 3124982390408 ns MONOTONIC
#   second begin: 3124982390000 + 0 + 0 + 0 + 0 + 41*1000 = 3124982431000
#                 -> 3124982390408 + 41000 = 3124982431408 ns MONOTONIC
# Trace time is MONOTONIC (above), so these are the trace-time values.
seq3=$(awk '$3 == 3 && $1 == "TYPE_SLICE_BEGIN" { print $2; if (++n == 2) exit }' proto_expect.txt | tr '\n' ' ')
eq "the hand rules agree with the worked example" "$seq3" "3124982390408 3124982431408 "
for t in 3124982390408 3124982431408; do
	eq "$a: a slice begins at $t (sequence 3, by hand)" \
		"$(awk -F '\t' -v f=$p -v t=$t '$1 == f && $2 == "begin" && $3 == t { print $3; exit }' $a.tsv)" "$t"
done

# merged.pftrace (formats.md §5.9): opened alone it places the same events
# at the same trace-time timestamps on the same machines, for the text-only
# archive and the one with Chromium's incremental clocks. Counts per kind
# and the timestamp of every slice begin are compared.
summary() { # trace -> "kind ts" lines of slice/instant edges, sorted
	"$ev" "$1" | jq -r 'select(.kind) |
		if .kind == "slice" then "begin \(.ts) \(.machine)", "end \(.ts + .dur) \(.machine)"
		elif .kind == "begin" or .kind == "async_begin" then "begin \(.ts) \(.machine)"
		elif .kind == "end" or .kind == "async_end" then "end \(.ts) \(.machine)"
		elif .kind == "instant" then "instant \(.ts) \(.machine)"
		else empty end' | sort
}
for a in text.zip capture.zip; do
	if "$TRACEMOUNT" cat $a merged.pftrace >$a.pftrace 2>$a.err; then
		summary $a >$a.want
		summary $a.pftrace >$a.got
		if cmp -s $a.got $a.want; then
			pass "$a: merged.pftrace re-imports with the same $(wc -l <$a.want) slice edges and instants"
		else
			fail "$a: merged.pftrace re-imports the same" "$(diff $a.got $a.want | head -n 4 | tr '\n' ' ')"
		fi
		eq "$a: merged.pftrace re-imports as one ok merge" \
			"$("$ev" $a.pftrace | tail -n 1 | jq -r .summary.status)" ok
	else
		fail "$a: merged.pftrace" "$(cat $a.err)"
	fi
done
exit $T_FAILED
