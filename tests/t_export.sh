#!/usr/bin/env bash
# tests/t_export.sh - merged.pftrace and timeline.tsv, top level and per
# machine, on the real captures of testdata/real plus a second machine:
# exact st_size, 16 concurrent readers get the same bytes, the trace decodes
# with protoc and re-imports as one merge with the same events, timeline.tsv
# is sorted, tab-separated with 9 columns, has a line per placed event and
# resolves interned names. Through a real mount when FUSE works (not with
# TM_NO_FUSE=1); otherwise through `tracemount cat`. The placement of every
# conformance scenario through merged.pftrace is checked by
# t_conformance.sh.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
here=$(cd "$(dirname "$0")" && pwd)
real=$here/../testdata/real
ev=$BUILD/tools/tm_events
cd "$T_TMP"

if [ ! -x "$ev" ]; then
	skip "export" "no $ev (make check builds it)"
	exit 0
fi
if [ -z "${TM_NO_FUSE:-}" ] && have_fuse; then mode=fuse; else mode=cli; fi
[ $mode == cli ] && skip "export: FUSE mount" "no FUSE here (or TM_NO_FUSE): checks run through tracemount cat"

gunzip -c "$real/chromium_startup.pftrace.gz" >chromium_startup.pftrace
gunzip -c "$real/chromium_startup.json.gz" >chromium_startup.json
cp "$real/node_trace.json" "$real/sched_switch.systrace" .
# The Node trace on a machine of its own, so there is more than one.
cat >perfetto_manifest.json <<'EOF'
{"perfetto_manifest": {"version": 1, "files": [{"path": "node_trace.json", "machine": {"name": "node box"}}]}}
EOF
zip -q -X cap.zip perfetto_manifest.json chromium_startup.pftrace chromium_startup.json node_trace.json \
	sched_switch.systrace

if [ $mode == fuse ]; then
	m=$T_TMP/mnt
	T_MOUNTS+=("$m")
	if ! tm_mount cap.zip "$m"; then
		fail "export: mount" "$(cat "$m.log")"
		exit 1
	fi
	get() { cat "$m/$1"; }
	size() { stat -c %s "$m/$1"; }
	dirs=$(ls "$m/machines")
else
	get() { "$tm" cat cap.zip "$1"; }
	size() { "$tm" cat cap.zip "$1" | wc -c; }
	dirs=$("$tm" ls cap.zip machines)
fi

# machines/ names it with the space escaped (tracemount(1), "Machine folders").
eq "machines: the host and the node box" "$(printf '%s\n' "$dirs" | sort | tr '\n' ' ')" "machine0 node%20box "
nb=node%20box

for f in merged.pftrace timeline.tsv machines/machine0/merged.pftrace "machines/$nb/timeline.tsv"; do
	get "$f" >out.bin
	eq "$f: st_size is the byte count" "$(size "$f")" "$(wc -c <out.bin)"
done

# 16 readers at once, while nothing has been read yet in this mount for
# the per-machine timeline: all get identical bytes.
if [ $mode == fuse ]; then
	pids=()
	for i in $(seq 1 16); do cat "$m/merged.pftrace" >"r.$i" & pids+=($!); done
	wait "${pids[@]}"
	same=1
	for i in $(seq 2 16); do cmp -s r.1 "r.$i" || same=0; done
	eq "merged.pftrace: 16 concurrent readers get the same bytes" "$same" 1
	cmp -s r.1 <("$tm" cat cap.zip merged.pftrace)
	eq "merged.pftrace: the mount and tracemount cat agree" "$?" 0
else
	skip "merged.pftrace: 16 concurrent readers" "no FUSE here"
fi

get merged.pftrace >merged.pftrace
if command -v protoc >/dev/null; then
	ok "merged.pftrace decodes as perfetto.protos.Trace" \
		protoc --decode=perfetto.protos.Trace --proto_path="$here/../protos" "$here/../protos/trace.proto" \
		<merged.pftrace
	protoc --decode=perfetto.protos.Trace --proto_path="$here/../protos" "$here/../protos/trace.proto" \
		<merged.pftrace >merged.txt 2>/dev/null
	eq "merged.pftrace: no clock ids left" "$(grep -c 'timestamp_clock_id' merged.txt)" 0
	eq "merged.pftrace: one SystemInfo names the node box" \
		"$(grep -c 'machine_name: "node box"' merged.txt)" 1
	# Process and thread names at the end (a ProcessTree, or a task_rename
	# for a thread of no known process): Node's M events, the systrace
	# task names.
	ok "merged.pftrace: Node's process name" grep -q 'cmdline: "node"' merged.txt
	ok "merged.pftrace: Node's thread names" grep -q 'name: "JavaScriptMainThread"' merged.txt
	task=$(awk '!/^#/ { sub(/^ +/, ""); sub(/-[0-9]+ .*/, ""); if ($0 != "" && $0 != "<...>") { print; exit } }' sched_switch.systrace)
	ok "merged.pftrace: systrace task names ($task)" grep -qE "(newcomm|name): \"$task\"" merged.txt
else
	skip "merged.pftrace decodes" "no protoc"
fi

# Re-import: the same events (kind, trace ts, machine name) and the same
# trace clock, with nothing dropped. Kernel lines the reference keeps no
# row of (kind ftrace) are not written to merged.pftrace.
norm() {
	"$ev" "$1" | jq -r 'select(.kind and .kind != "ftrace") |
		if .kind == "slice" then "begin \(.ts) \(.machine)", "end \(.ts + .dur) \(.machine)"
		elif .kind == "async_begin" then "begin \(.ts) \(.machine)"
		elif .kind == "async_end" then "end \(.ts) \(.machine)"
		else "\(.kind) \(.ts) \(.machine)" end' | sort
}
norm cap.zip >want
norm merged.pftrace >got
if cmp -s got want; then pass "merged.pftrace re-imports the same $(wc -l <want) events"
else fail "merged.pftrace re-imports the same events" "$(diff got want | head -n 4 | tr '\n' ' ')"; fi
summ() { "$ev" "$1" | tail -n 1 | jq -c '.summary | [.status, .trace_time_clock_id]'; }
eq "merged.pftrace re-imports with the same trace clock" "$(summ merged.pftrace)" "$(summ cap.zip)"
eq "merged.pftrace re-imports with nothing dropped" \
	"$("$ev" merged.pftrace | tail -n 1 | jq '[.summary.stats[]] | add')" 0

# Each machine's merged.pftrace holds exactly that machine's events.
get machines/machine0/merged.pftrace >m0.pftrace
get "machines/$nb/merged.pftrace" >m1.pftrace
cat <(norm m0.pftrace) <(norm m1.pftrace) | sort >split
if cmp -s split want; then pass "machines/*/merged.pftrace split the events"
else fail "machines/*/merged.pftrace split the events" "$(diff split want | head -n 4 | tr '\n' ' ')"; fi
eq "machines/$nb/merged.pftrace names its machine" \
	"$("$ev" m1.pftrace | tail -n 1 | jq -c '[.summary.machines[].name]')" '["node box"]'

# timeline.tsv
get timeline.tsv >timeline.tsv
eq "timeline.tsv: header" "$(head -n 1 timeline.tsv)" "$(printf 'ts\tdur\tmachine\tfile\tkind\tname\tpid\ttid\targs')"
eq "timeline.tsv: a line per placed event" "$(($(wc -l <timeline.tsv) - 1))" \
	"$("$ev" cap.zip | grep -c '"kind"')"
eq "timeline.tsv: 9 tab-separated fields on every line" \
	"$(awk -F '\t' 'NF != 9 { bad++ } END { print bad + 0 }' timeline.tsv)" 0
tail -n +2 timeline.tsv | sort -t "$(printf '\t')" -k1,1n -s -c 2>/dev/null
eq "timeline.tsv: sorted by ts" "$?" 0
eq "timeline.tsv: proto slices carry their interned names" \
	"$(awk -F '\t' '$4 == "chromium_startup.pftrace" && $5 == "begin" && $6 == "" { n++ } END { print n + 0 }' timeline.tsv)" 0
eq "timeline.tsv: proto slice begins" \
	"$(awk -F '\t' '$4 == "chromium_startup.pftrace" && $5 == "begin" { n++ } END { print n + 0 }' timeline.tsv)" \
	"$("$ev" cap.zip | jq -r 'select(.file == "chromium_startup.pftrace" and .kind == "begin") | 1' | wc -l)"
# Chromium's slices are on thread tracks: their pid/tid come from the
# track descriptors (only its two global ActiveProcesses instants have none).
eq "timeline.tsv: proto slices carry the pid/tid of their thread track" \
	"$(awk -F '\t' '$4 == "chromium_startup.pftrace" && $5 == "begin" && ($7 == "" || $8 == "") { n++ } END { print n + 0 }' timeline.tsv)" 0
eq "timeline.tsv: the node box lines are node_trace.json's" \
	"$(awk -F '\t' -v d=$nb '$3 == d { print $4 }' timeline.tsv | sort -u)" "node_trace.json"
get "machines/$nb/timeline.tsv" >nb.tsv
get machines/machine0/timeline.tsv >m0.tsv
eq "machines/*/timeline.tsv split the lines" \
	"$(cat <(tail -n +2 m0.tsv) <(tail -n +2 nb.tsv) | sort)" "$(tail -n +2 timeline.tsv | sort)"

# formats.md §3.5: a JSON C event is one sample per numeric arg, on the
# counter "{name} {arg}" ("{name} id: {id} {arg}" with an id); merged.pftrace
# keeps each as its own counter track with the same samples.
cat >ctr.json <<'EOF'
{"traceEvents": [
 {"ph": "C", "pid": 5, "ts": 10, "name": "mem", "args": {"rss": 7, "heap": 2.5, "label": "x"}},
 {"ph": "C", "pid": 5, "ts": 20, "name": "q", "id": "A", "args": {"depth": 3}}
]}
EOF
eq "JSON counters: a sample per numeric arg, named after it" \
	"$("$ev" ctr.json | jq -c 'select(.kind == "counter") | [.name, .ts, .value]' | tr '\n' ' ')" \
	'["mem rss",10000,7] ["mem heap",10000,2.5] ["q id: A depth",20000,3] '
"$tm" cat ctr.json merged.pftrace >ctr.pftrace
eq "JSON counters: merged.pftrace keeps the samples" \
	"$("$ev" ctr.pftrace | jq -c 'select(.kind == "counter") | [.ts, .value]' | sort | tr '\n' ' ')" \
	'[10000,2.5] [10000,7] [20000,3] '
if command -v protoc >/dev/null; then
	eq "JSON counters: one counter track each" \
		"$(protoc --decode=perfetto.protos.Trace --proto_path="$here/../protos" "$here/../protos/trace.proto" \
			<ctr.pftrace | grep -c 'name: "\(mem rss\|mem heap\|q id: A depth\)"')" 3
fi

if [ $mode == fuse ]; then
	if tm_umount "$m"; then pass "export: clean unmount"; else fail "export: clean unmount" "$(cat "$m.log")"; fi
	grep -qs " $m fuse" /proc/mounts && fail "export: nothing left mounted" || pass "export: nothing left mounted"
fi
exit $T_FAILED
