#!/usr/bin/env bash
# tests/t_together.sh - one capture recorded on one machine at the same time
# (testdata/real/together, testdata/real/README.md "Recorded together" says
# how): a Chromium startup trace in Perfetto protobuf, a Node trace in Chrome
# JSON and kernel sched_switch text from tracefs with trace_clock "mono". The
# archive is built here with `zip`, without a perfetto_manifest.json.
#
# The Chromium proto names MONOTONIC as primary_trace_clock, and the ftrace
# text was recorded on MONOTONIC too, so the systrace events keep their own
# timestamps in trace time (clocks.md §8.1) and must fall inside the
# Chromium run. Every expectation is computed here from the source files
# with jq, awk and `protoc --decode`, independently of core/.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
ev=$BUILD/tools/tm_events
here=$(cd "$(dirname "$0")" && pwd)
protos=$here/../protos
src=$TESTDATA/real/together
cd "$T_TMP"

for c in jq zip protoc gzip awk; do
	if ! command -v $c >/dev/null; then
		skip "together capture" "$c is not installed"
		exit 0
	fi
done
if [ ! -x "$ev" ]; then
	skip "together capture" "$ev not built"
	exit 0
fi

p=chromium_startup.pftrace
j=node_trace.json
s=sched_switch.systrace
gzip -dc "$src/$p.gz" >$p
gzip -dc "$src/$s.gz" >$s
cp "$src/$j" .
a=together.zip
zip -q -X $a $p $j $s

# ---- expectations from the sources ------------------------------------------

# Chrome JSON (formats.md §3): placed when ph is a non-empty string and ts a
# number, with ph one of B E i I R n C b e, or X/T with a numeric dur >= 0.
# Node writes integer µs, so ns = ts * 1000 exactly.
jq -r '.traceEvents[] | select(type == "object")
	| select((.ph | type) == "string" and (.ph | length) > 0 and (.ts | type) == "number")
	| select((.ph[0:1] | IN("B", "E", "i", "I", "R", "n", "C", "b", "e"))
		or ((.ph[0:1] | IN("X", "T")) and (.dur | type) == "number" and .dur >= 0))
	| .ts * 1000' $j | sort >$j.ts

# Ftrace text (formats.md §4.2): a non-comment line with a
# "<secs>.<frac>: <event>:" column; ts = (int64)(strtod(secs) * 1e9). awk's
# doubles truncate the same way; %.0f prints the value exactly (< 2^53).
awk '/^#/ { next }
{
	for (i = 1; i < NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/ && $(i + 1) ~ /^[A-Za-z0-9_]+:$/) {
			v = $i; sub(/:$/, "", v)
			printf "%.0f\n", int(v * 1e9)
			break
		}
}' $s | sort >$s.ts
eq "every non-comment systrace line matches the grammar" "$(wc -l <$s.ts)" "$(grep -vc '^#' $s)"
eq "every systrace line is a sched_switch" "$(wc -l <$s.ts)" "$(grep -c ': sched_switch: ' $s)"

# Perfetto protobuf, decoded with protoc; the hand rules of tests/t_real.sh
# (formats.md §5.2, clocks.md §4.4/§6.1 as Chromium uses them) give every
# TrackEvent packet's trace-time ts: "<TYPE> <ts> <sequence id>".
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
	<$p >$p.txt 2>decode.err
eq "the proto decodes with protoc" "$?/$(head -c 200 decode.err)" "0/"
eq "the proto names MONOTONIC as primary_trace_clock" \
	"$(grep -m 1 '^    primary_trace_clock: ' $p.txt | awk '{ print $2 }')" BUILTIN_CLOCK_MONOTONIC
awk -f proto_expect.awk $p.txt >proto_expect.txt 2>proto_expect.err
eq "every TrackEvent of the proto is covered by the hand rules" "$(cat proto_expect.err)" ""
pb_te=$(grep -c '^  track_event {' $p.txt)
eq "the hand rules keep every track_event packet" "$(wc -l <proto_expect.txt)" "$pb_te"
for f in $p $j $s; do
	n=$([ $f = $p ] && echo $pb_te || wc -l <$f.ts)
	[ "$n" -gt 0 ] && pass "$f has events to place ($n)" || fail "$f has events to place" "none"
done

# ---- the merge --------------------------------------------------------------

"$tm" cat $a metadata.json >meta.json
meta() { jq -r "$1" meta.json; }
out=$("$tm" check $a 2>&1); rc=$?
eq "check exits 0" "$rc" 0
contains "check says ok" "$out" "$a: ok:"
eq "metadata.json status" "$(meta '.status')" ok
eq "no file dropped anything" "$(meta '[.files[] | select(.path) | .dropped // 0] | add')" 0
eq "trace time is MONOTONIC, claimed by the proto" \
	"$(meta '"\(.trace_time.clock_id) \(.trace_time.file)"')" "3 $p"

"$ev" $a >ev.jsonl 2>ev.err
eq "tm_events status" "$(tail -n 1 ev.jsonl | jq -r .summary.status)" ok
eq "tm_events trace_time_clock_id" "$(tail -n 1 ev.jsonl | jq -r .summary.trace_time_clock_id)" 3
eq "tm_events: all stats zero" \
	"$(tail -n 1 ev.jsonl | jq -c '[.summary.stats | to_entries[] | select(.value != 0)]')" "[]"
jq -r 'select(.file != null) | [.file, .kind, .ts] | @tsv' ev.jsonl >ev.tsv
n_of() { awk -F '\t' -v f=$1 '$1 == f' ev.tsv | wc -l; }
kinds() { awk -F '\t' -v f=$p -v k=$1 '$1 == f && $2 == k' ev.tsv | wc -l; }

# Placed counts, from the sources.
for f in $j $s; do
	eq "$f: events in metadata.json" "$(meta ".files[] | select(.path == \"$f\") | .events")" "$(wc -l <$f.ts)"
	eq "$f: events placed" "$(n_of $f)" "$(wc -l <$f.ts)"
done
eq "$p: TrackEvents placed" \
	"$(( $(kinds begin) + $(kinds end) + $(kinds instant) + $(kinds counter) ))" "$pb_te"
eq "$p: events in metadata.json match tm_events" \
	"$(meta ".files[] | select(.path == \"$p\") | .events")" "$(n_of $p)"
eq "$p: other timestamped packets placed" "$(kinds packet)" "$(cat proto_packets.txt)"

# Timestamps. JSON: the private clock bridges to trace time at offset 0
# (clocks.md §7 step 3). Systrace: on the proto's MONOTONIC clock
# (clocks.md §8.1), so in trace time it stays at its own value.
for f in $j $s; do
	awk -F '\t' -v f=$f '$1 == f { print $3 }' ev.tsv | sort >$f.got
	if cmp -s $f.got $f.ts; then
		pass "$f: trace-time timestamps are the source's ($(wc -l <$f.ts))"
	else
		fail "$f: trace-time timestamps" "$(diff $f.got $f.ts | head -n 4 | tr '\n' ' ')"
	fi
done
awk -F '\t' -v f=$p '$1 == f && ($2 == "begin" || $2 == "end" || $2 == "instant") { print $2, $3 }' \
	ev.tsv | sort >proto.got
sed -e 's/^TYPE_SLICE_BEGIN/begin/' -e 's/^TYPE_SLICE_END/end/' -e 's/^TYPE_INSTANT/instant/' \
	-e '/^TYPE_COUNTER/d' -e 's/ [0-9]*$//' proto_expect.txt | sort >proto.want
if cmp -s proto.got proto.want; then
	pass "$p: TrackEvent trace-time timestamps ($(wc -l <proto.want))"
else
	fail "$p: TrackEvent trace-time timestamps" "$(diff proto.got proto.want | head -n 4 | tr '\n' ' ')"
fi

# Recorded together: metadata.json's range of each file agrees with the
# source, and the kernel events fall in the Chromium trace's range.
range() { meta ".files[] | select(.path == \"$1\") | \"\(.first_trace_ts) \(.last_trace_ts)\""; }
eq "$s: first/last trace ts in metadata.json" "$(range $s)" "$(head -n 1 $s.ts) $(tail -n 1 $s.ts)"
eq "$p: first/last trace ts in metadata.json" "$(range $p)" \
	"$(awk -F '\t' -v f=$p '$1 == f { print $3 }' ev.tsv | sort -n | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//')"
read -r s0 s1 <<<"$(range $s)"
read -r p0 p1 <<<"$(range $p)"
if [ "$s0" -le "$p1" ] && [ "$p0" -le "$s1" ]; then
	pass "$s [$s0, $s1] overlaps $p [$p0, $p1]"
else
	fail "$s overlaps $p" "[$s0, $s1] vs [$p0, $p1]"
fi
# The slices of the same run: some Chromium slice begins lie inside the
# systrace window.
n=$(awk -F '\t' -v f=$p -v a=$s0 -v b=$s1 '$1 == f && $2 == "begin" && $3 >= a && $3 <= b' ev.tsv | wc -l)
[ "$n" -gt 0 ] && pass "$p: slice begins inside the systrace window ($n)" ||
	fail "$p: slice begins inside the systrace window" "none"

# merged.pftrace (formats.md §5.9) re-imported alone: the same slice edges
# and instants per kind at the same timestamps (a complete slice is a begin
# at ts and an end at ts + dur), the same kernel events, trace time
# MONOTONIC, all stats zero.
edges() {
	jq -r 'select(.kind) |
		if .kind == "slice" then "begin \(.ts)", "end \(.ts + .dur)"
		elif .kind == "begin" or .kind == "async_begin" then "begin \(.ts)"
		elif .kind == "end" or .kind == "async_end" then "end \(.ts)"
		elif .kind == "instant" then "instant \(.ts)"
		elif .kind == "sched" then "sched \(.ts)"
		else empty end' "$1" | sort
}
if "$tm" cat $a merged.pftrace >merged.pftrace 2>merged.err; then
	"$ev" merged.pftrace >merged.jsonl 2>merged.ev.err
	edges ev.jsonl >edges.want
	edges merged.jsonl >edges.got
	for k in begin end instant sched; do
		eq "merged.pftrace: $k count" "$(grep -c "^$k " edges.got)" "$(grep -c "^$k " edges.want)"
	done
	if cmp -s edges.got edges.want; then
		pass "merged.pftrace re-imports with the same $(wc -l <edges.want) timestamps per kind"
	else
		fail "merged.pftrace re-imports the same" "$(diff edges.got edges.want | head -n 4 | tr '\n' ' ')"
	fi
	sum=merged.jsonl
	eq "merged.pftrace: status" "$(tail -n 1 $sum | jq -r .summary.status)" ok
	eq "merged.pftrace: trace_time_clock_id" "$(tail -n 1 $sum | jq -r .summary.trace_time_clock_id)" 3
	eq "merged.pftrace: all stats zero" \
		"$(tail -n 1 $sum | jq -c '[.summary.stats | to_entries[] | select(.value != 0)]')" "[]"
else
	fail "merged.pftrace" "$(cat merged.err)"
fi
exit $T_FAILED
