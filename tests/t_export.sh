#!/usr/bin/env bash
# tests/t_export.sh - merged.pftrace and timeline.tsv, top level and per
# machine, on the real captures of testdata/real plus a second machine:
# exact st_size, 16 concurrent readers get the same bytes, the trace decodes
# with protoc and re-imports as one merge with the same events, timeline.tsv
# is sorted, tab-separated with 12 columns, has the slices the placed
# events make, and the per-machine tables agree with it. Through a real mount when FUSE works (not with
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
# row of (kind ftrace) are not written to merged.pftrace. A ProcessTree
# that makes a JSON or systrace file's threads at their place in the order
# (core/export/export_text.c, made_threads) is a packet of its own: the packet
# events are those of the archive and one per such ProcessTree.
norm() {
	"$ev" "$1" | jq -r 'select(.kind and .kind != "ftrace" and .kind != "packet") |
		if .kind == "slice" then "begin \(.ts) \(.machine)", "end \(.ts + .dur) \(.machine)"
		elif .kind == "async_begin" then "begin \(.ts) \(.machine)"
		elif .kind == "async_end" then "end \(.ts) \(.machine)"
		else "\(.kind) \(.ts) \(.machine)" end' | sort
}
norm cap.zip >want
norm merged.pftrace >got
packets() { "$ev" "$1" | jq -r 'select(.kind == "packet")' | grep -c '"packet"'; }
if [ -f merged.txt ]; then
	made=$(awk '/^packet \{/ { ts = 0; p = 0 } /^  timestamp:/ { ts = 1 } /^  process_tree \{/ { p = 1 }
		/^\}/ { if (ts && p) n++ } END { print n + 0 }' merged.txt)
	eq "merged.pftrace re-imports the same packets, and a ProcessTree for each place threads are made" \
		"$(packets merged.pftrace)" "$(($(packets cap.zip) + made))"
fi
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
eq "timeline.tsv: header" "$(head -n 1 timeline.tsv)" \
	"$(printf 'ts\tdur\tmachine\tfile\tkind\tcategory\tname\tdepth\tpid\ttid\ttrack\targs')"
eq "timeline.tsv: 12 tab-separated fields on every line" \
	"$(awk -F '\t' 'NF != 12 { bad++ } END { print bad + 0 }' timeline.tsv)" 0
tail -n +2 timeline.tsv | sort -t "$(printf '\t')" -k1,1n -s -c 2>/dev/null
eq "timeline.tsv: sorted by ts" "$?" 0
eq "timeline.tsv: only the documented kinds" \
	"$(tail -n +2 timeline.tsv | cut -f5 | sort -u | grep -vxE 'slice|instant|counter|sched|ftrace' | wc -l)" 0
eq "timeline.tsv: every args column is one JSON object" \
	"$(tail -n +2 timeline.tsv | cut -f12 | jq -c 'type' | grep -c object)" "$(($(wc -l <timeline.tsv) - 1))"
# The rows of kind slice and instant start where the scan placed each
# slice, instant or complete event, and end where it placed their ends.
tl_slices() { awk -F '\t' 'NR > 1 && ($5 == "slice" || $5 == "instant") { print $1, $7; if ($2 > 0) printf "end %.0f\n", $1 + $2 }' "$1" | sort; }
ev_slices() {
	"$ev" "$1" | jq -r 'select(.kind) |
		if (.kind | test("^(begin|instant|slice|async_begin)$")) then "\(.ts) \(.name)" else empty end,
		if (.kind == "slice" and (.dur // 0) > 0) then "end \(.ts + .dur)" else empty end,
		if (.kind | test("^(end|async_end)$")) then "end \(.ts)" else empty end' | sort
}
tl_slices timeline.tsv >tl.got
ev_slices cap.zip >tl.want
if cmp -s tl.got tl.want; then pass "timeline.tsv: the slices the placed events make"
else fail "timeline.tsv: the slices the placed events make" "$(diff tl.got tl.want | head -n 6 | tr '\n' ' ')"; fi
eq "timeline.tsv: proto slices carry their interned names" \
	"$(awk -F '\t' '$4 == "chromium_startup.pftrace" && $5 == "slice" && $7 == "" { n++ } END { print n + 0 }' timeline.tsv)" 0
# Chromium's slices are on thread tracks: their pid/tid come from the
# track descriptors.
eq "timeline.tsv: thread-track slices carry their pid and tid" \
	"$(awk -F '\t' '$11 == "thread" && ($9 == "" || $10 == "") { n++ } END { print n + 0 }' timeline.tsv)" 0
eq "timeline.tsv: sched rows of sched_switch.systrace" \
	"$(awk -F '\t' '$4 == "sched_switch.systrace" && $5 == "sched" { n++ } END { print n + 0 }' timeline.tsv)" \
	"$(grep -c 'sched_switch:' sched_switch.systrace)"
eq "timeline.tsv: the node box lines are node_trace.json's" \
	"$(awk -F '\t' -v d=$nb '$3 == d { print $4 }' timeline.tsv | sort -u)" "node_trace.json"
get "machines/$nb/timeline.tsv" >nb.tsv
get machines/machine0/timeline.tsv >m0.tsv
eq "machines/*/timeline.tsv split the lines" \
	"$(cat <(tail -n +2 m0.tsv) <(tail -n +2 nb.tsv) | sort)" "$(tail -n +2 timeline.tsv | sort)"

# machines/<dir>/processes.tsv, threads.tsv, slices.tsv, checked against
# the machine's timeline.tsv
for d in machine0 "$nb"; do
	tl=$([ "$d" == "$nb" ] && echo nb.tsv || echo m0.tsv)
	for f in processes threads slices; do
		get "machines/$d/$f.tsv" >"$d.$f"
		eq "machines/$d/$f.tsv: st_size is the byte count" "$(size "machines/$d/$f.tsv")" "$(wc -c <"$d.$f")"
	done
	eq "machines/$d/processes.tsv: header" "$(head -n 1 "$d.processes")" \
		"$(printf 'pid\tname\tstart_ts\tend_ts\tparent_pid')"
	eq "machines/$d/threads.tsv: header" "$(head -n 1 "$d.threads")" \
		"$(printf 'tid\tname\tpid\tstart_ts\tend_ts\tslices\tbusy_ns')"
	eq "machines/$d/slices.tsv: header" "$(head -n 1 "$d.slices")" \
		"$(printf 'name\tcount\ttotal_ns\tmin_ns\tmedian_ns\tp90_ns\tmax_ns\tunfinished')"
	# every (pid, tid) of a thread slice is a thread of the table
	missing=$(awk -F '\t' 'FNR == NR { if (FNR > 1) t[$3 " " $1] = 1; next }
		FNR > 1 && $11 == "thread" && !(($9 " " $10) in t) { n++ } END { print n + 0 }' "$d.threads" "$tl")
	eq "machines/$d/threads.tsv: holds every thread with slices" "$missing" 0
	# slices and busy time per thread, summed from the timeline
	eq "machines/$d/threads.tsv: slices and busy_ns per thread" \
		"$(awk -F '\t' 'FNR > 1 && $11 == "thread" && ($5 == "slice" || $5 == "instant") { n[$10 " " $9]++; if ($8 == 0 && $2 > 0) b[$10 " " $9] += $2 }
			END { for (k in n) printf "%s %d %.0f\n", k, n[k], b[k] }' "$tl" | sort)" \
		"$(awk -F '\t' 'NR > 1 && $6 > 0 { print $1, $3, $6, $7 }' "$d.threads" | sort)"
	# per name: count, total, min, median (lower middle), p90 (nearest
	# rank), max, unfinished, from the timeline's durations
	eq "machines/$d/slices.tsv: statistics of the timeline's slices" \
		"$(awk -F '\t' 'NR > 1 && ($5 == "slice" || $5 == "instant") { print $7 "\t" $2 }' "$tl" |
			sort -t "$(printf '\t')" -k1,1 -k2,2n | awk -F '\t' '
			function flush() { if (name == "") return
				med = done ? d[int((done - 1) / 2)] : ""; p = done ? d[int((done * 9 + 9) / 10) - 1] : ""
				printf "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\n", name, cnt, tot, done ? d[0] : "", med, p, done ? d[done - 1] : "", unf }
			$1 != name { flush(); name = $1; cnt = 0; tot = 0; done = 0; unf = 0; delete d }
			{ cnt++; if ($2 < 0) unf++; else { d[done++] = $2; tot += $2 } }
			END { flush() }' | sort)" \
		"$(tail -n +2 "$d.slices" | grep -v '^\s' | sort)"
	eq "machines/$d/slices.tsv: sorted by total, largest first" \
		"$(tail -n +2 "$d.slices" | cut -f3 | sort -c -rn 2>&1 && echo sorted)" sorted
done
eq "machines/$nb/processes.tsv: node's process" "$(awk -F '\t' 'NR > 1 && $2 == "node" { print "found" }' "$nb.processes" | head -n 1)" found

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

# A harness that records one trace per device: 300 machines, under a limit
# of 128 open files. The machines' copies of each generated file share one
# temporary file (the pass once opened one per machine and failed with
# "Too many open files"); every machine's views hold its own events.
mkdir -p many && (
	cd many
	files=""
	printf '{"perfetto_manifest": {"version": 1, "files": [' >perfetto_manifest.json
	for i in $(seq 0 299); do
		printf '{"traceEvents": [{"ph": "X", "pid": 1, "tid": %d, "ts": %d, "dur": 5, "name": "dev%d"}]}\n' \
			$((1000 + i)) $((10 + i)) $i >d$i.json
		[ $i -gt 0 ] && printf ', ' >>perfetto_manifest.json
		printf '{"path": "d%d.json", "machine": {"name": "m%d"}}' $i $i >>perfetto_manifest.json
		files="$files d$i.json"
	done
	printf ']}}\n' >>perfetto_manifest.json
	# shellcheck disable=SC2086
	tar -cf ../many.tar perfetto_manifest.json $files
)
printf '#!/bin/sh\nulimit -n 128\nexec "%s" "$@"\n' "$tm" >low_fds
chmod +x low_fds
eq "300 machines, 128 open files: a machine's threads.tsv" \
	"$(./low_fds cat many.tar machines/m299/threads.tsv | awk -F '\t' '$1 == 1299 { print $1, $6 }')" "1299 1"
eq "300 machines, 128 open files: a machine's timeline.tsv" \
	"$(./low_fds cat many.tar machines/m17/timeline.tsv | grep -c 'dev17')" 1
eq "300 machines, 128 open files: merged.pftrace has every machine's slice" \
	"$(./low_fds cat many.tar merged.pftrace >many.pftrace && "$ev" many.pftrace | jq -r 'select(.kind == "slice") | .name' | sort -u | wc -l)" 300
if [ $mode == fuse ]; then
	mm=$T_TMP/many_mnt
	if TRACEMOUNT=$T_TMP/low_fds tm_mount many.tar "$mm"; then
		eq "300 machines mounted: machines/" "$(ls "$mm/machines" | wc -l)" 300
		whole=$(($(wc -l <"$mm/timeline.tsv") - 1))
		parts=0 bad=0
		for d in "$mm"/machines/*/; do
			n=$(($(wc -l <"$d/timeline.tsv") - 1))
			parts=$((parts + n))
			[ "$(stat -c %s "$d/merged.pftrace")" == "$(wc -c <"$d/merged.pftrace")" ] || bad=$((bad + 1))
			[ "$(awk 'END { print NR }' "$d/slices.tsv")" == 2 ] || bad=$((bad + 1))
		done
		eq "300 machines mounted: their timelines add up to the whole" "$parts" "$whole"
		eq "300 machines mounted: each view reads its st_size, one slice name each" "$bad" 0
		# the daemon is the last process tm_mount started (low_fds execs it)
		nfd=$(ls "/proc/${T_PIDS[-1]}/fd" 2>/dev/null | wc -l)
		ok "300 machines mounted: the daemon holds fewer than 64 descriptors (has $nfd)" \
			test "$nfd" -gt 0 -a "$nfd" -lt 64
		if tm_umount "$mm"; then pass "300 machines: clean unmount"; else fail "300 machines: clean unmount" "$(cat "$mm.log")"; fi
		grep -qs " $mm fuse" /proc/mounts && fail "300 machines: nothing left mounted" || pass "300 machines: nothing left mounted"
	else
		fail "300 machines: mount" "$(cat "$mm.log")"
	fi
fi

# Each input is read once: with no scan made yet, the generation pass is
# the scan too, and what the scan tier shows afterwards is what a scan of
# its own shows. Counted with strace(1): the bytes read from the archive by
# `cat merged.pftrace`. The archive mixes text traces with proto traces,
# whose rewritten packets wait for the header the whole scan gives: a
# Chromium capture on the host and the §2.6 spine with an embedded
# machine 7; the manifest puts two text traces on machines of their own,
# which the merge gives the ids 1 and 2 once it knows the embedded ones.
mkdir -p once && (
	cd once
	awk 'BEGIN { for (i = 0; i < 40000; i++)
		printf "  app-%d (%5d) [%03d] ...1 %d.%06d: tracing_mark_write: B|%d|slice_%d\n", i % 97, i % 997, i % 8, 1 + i / 1000000, i % 1000000, i % 997, i }' >a.systrace
	sed 's/app-/bpp-/' a.systrace >b.systrace
	cp "$real/node_trace.json" c.json
	cp ../chromium_startup.pftrace d.pftrace
	if bash "$here/tools/encode_fixtures.sh" enc >/dev/null 2>&1; then
		cp enc/multi.pb e.pftrace
	fi
	rm -rf enc
	cat >perfetto_manifest.json <<-'EOF'
	{"perfetto_manifest": {"version": 1, "files": [
	  {"path": "a.systrace", "machine": {"name": "box a"}},
	  {"path": "c.json", "machine": {"name": "node box"}}]}}
	EOF
	tar -cf ../once.tar perfetto_manifest.json a.systrace b.systrace c.json d.pftrace $(ls e.pftrace 2>/dev/null)
)
[ -f once/e.pftrace ] || skip "one read: an embedded machine" "protoc is missing or failed"
if command -v strace >/dev/null 2>&1; then
	# (LeakSanitizer cannot run under ptrace: off for this one run)
	# (a file per thread: reads of two threads at once are not cut in two)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -ff -qq -e trace=openat,read,pread64 \
		-e signal=none -o once.st "$tm" cat -o noindex once.tar merged.pftrace >once.pf
	fd=$(cat once.st.* | grep 'once\.tar' | grep -o '= [0-9]*$' | head -n 1 | tr -dc 0-9)
	read_bytes=$(cat once.st.* | awk -v fd="$fd" '$0 ~ "(pread64|read)\\(" fd "," && $NF + 0 > 0 { s += $NF } END { print s + 0 }')
	size=$(stat -c %s once.tar)
	ok "one read: merged.pftrace reads the archive once ($read_bytes of $size bytes)" \
		test "$read_bytes" -ge "$size" -a "$read_bytes" -lt $((size * 3 / 2))
else
	"$tm" cat -o noindex once.tar merged.pftrace >once.pf
	skip "one read: merged.pftrace reads the archive once" "no strace(1)"
fi
# The same bytes as an export that starts from a scan made before it (kept
# in an index by `cat metadata.json`), the whole merge's and each machine's.
"$tm" cat -o index=scan.idx once.tar metadata.json >/dev/null
ok "one read: the same merged.pftrace as after a scan" cmp once.pf <("$tm" cat -o index=scan.idx once.tar merged.pftrace)
n_once=0
for d in $("$tm" ls once.tar machines); do
	n_once=$((n_once + 1))
	ok "one read: machines/$d/merged.pftrace as after a scan" \
		cmp <("$tm" cat -o noindex once.tar "machines/$d/merged.pftrace") \
		<("$tm" cat -o index=scan.idx once.tar "machines/$d/merged.pftrace")
done
[ -f once/e.pftrace ] && eq "one read: the machines of the mixed archive" "$n_once" 4
# With two CPUs a worker thread rewrites the kept packets while the scan
# reads on; held to one CPU, the scan's thread does it: the same bytes.
if command -v taskset >/dev/null 2>&1 && taskset -c 0 true 2>/dev/null; then
	ok "merged.pftrace on one CPU (no packet worker), one read" \
		cmp once.pf <(taskset -c 0 "$tm" cat -o noindex once.tar merged.pftrace)
	ok "merged.pftrace on one CPU (no packet worker), after a scan" \
		cmp once.pf <(taskset -c 0 "$tm" cat -o index=scan.idx once.tar merged.pftrace)
	# packets larger than the worker's 256 KiB chunks, between small ones
	awk 'BEGIN { big = "x"; while (length(big) < 700000) big = big big; big = substr(big, 1, 700000)
		print "packet { trusted_packet_sequence_id: 1 track_descriptor { uuid: 12345 } }"
		for (i = 0; i < 50; i++) {
			printf "packet { timestamp: %d trusted_packet_sequence_id: 1 track_event { type: TYPE_SLICE_BEGIN track_uuid: 12345 name: \"%s\" } }\n", 1000000000 + i * 1000, i % 10 == 3 ? big : "s" i
			printf "packet { timestamp: %d trusted_packet_sequence_id: 1 track_event { type: TYPE_SLICE_END track_uuid: 12345 } }\n", 1000000500 + i * 1000
		} }' >big.textproto
	if protoc --encode=perfetto.protos.Trace --proto_path="$here/../protos" "$here/../protos/trace.proto" \
		<big.textproto >big.pftrace 2>/dev/null; then
		tar -cf big.tar big.pftrace
		"$tm" cat -o noindex big.tar merged.pftrace >big.pf
		ok "merged.pftrace on one CPU: packets larger than a worker's chunk" \
			cmp big.pf <(taskset -c 0 "$tm" cat -o noindex big.tar merged.pftrace)
		eq "merged.pftrace: the large packets' names" \
			"$("$tm" cat -o noindex big.tar timeline.tsv | awk -F'\t' 'length($7) == 700000' | wc -l)" 5
	else
		skip "merged.pftrace on one CPU: large packets" "protoc is missing or failed"
	fi
else
	skip "merged.pftrace on one CPU" "no taskset(1)"
fi
# With two CPUs a second thread reads the next JSON (and, when exporting,
# systrace) files ahead (core/util/ahead.h); held to one CPU everything is read
# in place: the same files either way, a bad file's error included.
if command -v taskset >/dev/null 2>&1 && taskset -c 0 true 2>/dev/null; then
	mkdir -p ahead ahead_bad ahead_pbad
	cp "$real/capture2/node_a.json" "$real/capture2/node_b.json" ahead/
	gunzip -c "$real/capture2/chrome_devtools.json.gz" >ahead/devtools.json
	gunzip -c "$real/capture2/kernel_ftrace.txt.gz" >ahead/ftrace.txt
	gunzip -c "$real/capture2/kernel_tracecmd.txt.gz" >ahead/tracecmd.txt
	cp ahead/node_a.json ahead/node_c.json
	# lines whose args the thread that feeds the model splits ahead of it
	# (core/formats/systrace/model_systrace.c m_systrace_prepare): a bare token (its key
	# "name" is no byte of the line), more tokens than are kept, keys past both
	{
		zcat "$real/capture2/kernel_ftrace.txt.gz" | sed -n '1,12p'
		printf '%s\n' \
			' record_kernel.s-20415   (  20415) [001] d..2.  1981.478020: sched_switch: prev_comm=a prev_pid=20415 prev_prio=120 prev_state=S ==> bare t1=1 t2=2 t3=3 t4=4 t5=5 t6=6 t7=7 t8=8 t9=9 next_comm=b next_pid=20376 next_prio=110' \
			'      tracemount-20416   (  20416) [000] dNs5.  1981.480054: sched_waking: bare comm=rcu_preempt pid=15 prio=120 target_cpu=001' \
			'          <idle>-0       (-----) [001] d..2.  1981.480100: cpu_idle: state=1 cpu_id=1 x' \
			' record_kernel.s-20415   (  20415) [001] .....  1981.480200: sched_process_free: comm=a pid=20417 prio=120'
	} >ahead/split.txt
	# proto files are read ahead for the scan alone (metadata.json)
	gunzip -c "$real/capture2/chrome_startup.pftrace.gz" >ahead/p1.pftrace
	cp ahead/p1.pftrace ahead/p2.pftrace
	# a bundle that inflates past what a log may hold: read in place
	if "$BUILD/tools/gen_trace" proto 3 | gzip -9 >bundle.gz; then
		n=$(stat -c %s bundle.gz)
		# Trace.packet { TracePacket.compressed_packets (50): the gzip }
		inner=$((2 + $(printf "$(varint "$n")" | wc -c) + n))
		{ printf "\\x0a$(varint "$inner")\\x92\\x03$(varint "$n")"; cat bundle.gz; } >ahead/bundle.pftrace
	fi
	(cd ahead && tar -cf ../ahead.tar *)
	cp ahead/* ahead_bad/
	head -c 20000 ahead/devtools.json >ahead_bad/devtools.json # cut short
	(cd ahead_bad && tar -cf ../ahead_bad.tar *)
	cp ahead/* ahead_pbad/
	printf '\\x0a\\x02\\x40\\x80' >>ahead_pbad/p2.pftrace # a last packet that does not parse
	(cd ahead_pbad && tar -cf ../ahead_pbad.tar *)
	for f in metadata.json merged.pftrace timeline.tsv; do
		ok "read ahead: $f as on one CPU" \
			cmp <("$tm" cat -o noindex ahead.tar $f) <(taskset -c 0 "$tm" cat -o noindex ahead.tar $f)
	done
	# timeline.tsv's lines are made by two formatters taking batches of
	# 256 KiB of rows in turn (core/export/timeline.c), by this thread
	# alone on one CPU: the lines of many batches, a machine's too
	ok "read ahead: timeline.tsv spans a few formatter batches" \
		test "$("$tm" cat -o noindex ahead.tar timeline.tsv | wc -c)" -gt 4000000
	for m in $("$tm" ls ahead.tar machines); do
		ok "read ahead: machines/$m/timeline.tsv as on one CPU" \
			cmp <("$tm" cat -o noindex ahead.tar "machines/$m/timeline.tsv") \
			<(taskset -c 0 "$tm" cat -o noindex ahead.tar "machines/$m/timeline.tsv")
	done
	ok "read ahead: a bad file's metadata.json as on one CPU" \
		cmp <("$tm" cat -o noindex ahead_bad.tar metadata.json) \
		<(taskset -c 0 "$tm" cat -o noindex ahead_bad.tar metadata.json)
	ok "read ahead: the bad file's error is reported" \
		grep -q "JSON trace file is incomplete" <("$tm" cat -o noindex ahead_bad.tar metadata.json)
	ok "read ahead: a damaged proto file's metadata.json as on one CPU" \
		cmp <("$tm" cat -o noindex ahead_pbad.tar metadata.json) \
		<(taskset -c 0 "$tm" cat -o noindex ahead_pbad.tar metadata.json)
	ok "read ahead: the damaged proto file's error is reported" \
		grep -q "ERR:tp-corrupt" <("$tm" cat -o noindex ahead_pbad.tar metadata.json)
	if [ -f ahead/bundle.pftrace ]; then
		ok "read ahead: a big inflated bundle's packets are counted" \
			test "$("$tm" cat -o noindex ahead.tar metadata.json |
				jq '.files[] | select(.path == "bundle.pftrace") | .packets')" -gt 1000
	else
		skip "read ahead: a big inflated bundle" "gen_trace or gzip failed"
	fi
else
	skip "read ahead: the same files as on one CPU" "no taskset(1)"
fi
# The text export writes its TrackEvents, ftrace events and packets at
# the wire level (core/export/export_text.c): protoc, decoding and encoding again
# in field-number order, must give the same bytes. Text inputs only (kept
# proto packets are copied as they came): JSON with args, and systrace
# lines of every event written, negative int32 fields, a 300-byte comm
# and threads of no process (task_rename).
if command -v protoc >/dev/null; then
	mkdir -p wire
	gunzip -c "$real/chromium_startup.json.gz" >wire/c.json
	cp "$real/node_trace.json" "$real/sched_switch.systrace" wire/
	long=$(printf 'c%.0s' $(seq 300))
	{
		echo "# tracer: nop"
		echo "  <idle>-0     (-----) [000] d..2  100.000001: cpu_idle: state=1 cpu_id=0"
		echo "  <idle>-0     (-----) [001] d..2  100.000002: cpu_frequency: state=1800000 cpu_id=1"
		echo "  foo-12    (-----) [000] d..2  100.000004: sched_switch: prev_comm=foo prev_pid=12 prev_prio=-5 prev_state=D ==> next_comm=$long next_pid=7 next_prio=120"
		echo "  bar-13    (   13) [001] d..2  100.000005: sched_waking: comm=baz pid=14 prio=-1 target_cpu=001"
		echo "  bar-13    (   13) [001] ...1  100.000006: tracing_mark_write: B|13|slice with spaces"
		echo "  bar-13    (   13) [001] ...1  100.000007: tracing_mark_write: E|13"
		# (two systrace files on one machine: B and E go as TrackEvents,
		# a counter stays a print)
		echo "  bar-13    (   13) [001] ...1  100.000008: tracing_mark_write: C|13|queue depth|5"
		echo "  <idle>-0     (-----) [001] d..2  100.000009: cpu_frequency_limits: min_freq=300000 max_freq=1800000 cpu_id=1"
		echo "  <idle>-0     (-----) [000] d..2  100.000010: clock_set_rate: mmc0 state=50000000 cpu_id=0"
		echo "  <idle>-0     (-----) [000] d..2  100.000011: clock_disable: mmc0 state=0 cpu_id=0"
		echo "  foo-12    (-----) [000] d..2  100.000012: thermal_temperature: thermal_zone=cpu-0 id=0 temp_prev=-5 temp=-7"
		echo "  foo-12    (-----) [000] d..2  100.000013: cdev_update: type=thermal-cpufreq-0 target=2"
	} >wire/edge.systrace
	(cd wire && zip -q -X ../wire.zip c.json node_trace.json sched_switch.systrace edge.systrace)
	"$tm" cat -o noindex wire.zip merged.pftrace >wire.pb
	P=$here/../protos
	protoc --decode=perfetto.protos.Trace --proto_path="$P" "$P/trace.proto" <wire.pb >wire.txt
	protoc --encode=perfetto.protos.Trace --proto_path="$P" "$P/trace.proto" <wire.txt >wire2.pb
	ok "merged.pftrace of text inputs: protoc re-encodes the same bytes" cmp wire.pb wire2.pb
	for e in track_event task_rename cpu_idle cpu_frequency sched_switch sched_waking print debug_annotations legacy_event \
		cpu_frequency_limits clock_set_rate clock_disable thermal_temperature cdev_update process_tree generic; do
		ok "merged.pftrace of text inputs: has $e" grep -q "$e {" wire.txt
	done
else
	skip "merged.pftrace of text inputs: wire bytes" "no protoc"
fi
# The scan tier the pass made: kept in an index by `ls -l` (whose first
# stat is merged.pftrace's), then read back, and shown through a mount.
"$tm" ls -l -o index=once.idx once.tar >/dev/null
for f in metadata.json clocks/graph.dot clocks/edges.csv perfetto_manifest.json machines/machine0/machine.json; do
	ok "one read: $f as a scan of its own gives it" cmp <("$tm" cat -o index=once.idx once.tar "$f") \
		<("$tm" cat -o noindex once.tar "$f")
done
if [ $mode == fuse ]; then
	m=$T_TMP/once_mnt
	if tm_mount once.tar "$m" -o noindex; then
		cat "$m/timeline.tsv" >once.tl &
		pid=$!
		ok "one read: metadata.json while the pass runs" cmp "$m/metadata.json" <("$tm" cat -o noindex once.tar metadata.json)
		wait "$pid"
		ok "one read: timeline.tsv through the mount" cmp once.tl <("$tm" cat -o noindex once.tar timeline.tsv)
		ok "one read: a machine's threads.tsv" cmp "$m/machines/machine0/threads.tsv" \
			<("$tm" cat -o noindex once.tar machines/machine0/threads.tsv)
		tm_umount "$m" || fail "one read: clean unmount" "$(cat "$m.log")"
	else
		fail "one read: mount" "$(cat "$m.log")"
	fi
fi
# `tracemount cat` of a top-level merged.pftrace or timeline.tsv makes no
# machine's copy (TM_GEN_TOP): the same bytes as the mount's, whose pass
# makes every machine's too; a machine's file, asked for, is still made.
mkdir -p top
gunzip -c "$real/capture2/chrome_devtools.json.gz" >top/a.json
cp "$real/capture2/node_a.json" top/b.json
gunzip -c "$real/capture2/kernel_ftrace.txt.gz" >top/c.txt
printf '%s\n' '{"perfetto_manifest": {"version": 1, "files": [' \
	'{"path": "a.json", "machine": {"name": "m0"}}, {"path": "b.json", "machine": {"name": "m1"}},' \
	'{"path": "c.txt", "machine": {"name": "m2"}}]}}' >top/perfetto_manifest.json
(cd top && tar -cf ../top.tar perfetto_manifest.json a.json b.json c.txt)
if [ $mode == fuse ]; then
	m=$T_TMP/top_mnt
	if tm_mount top.tar "$m" -o noindex; then
		for f in merged.pftrace timeline.tsv machines/m1/merged.pftrace machines/m2/timeline.tsv; do
			ok "cat of $f: the mount's bytes" cmp "$m/$f" <("$tm" cat -o noindex top.tar "$f")
		done
		tm_umount "$m" || fail "top-level cat: clean unmount" "$(cat "$m.log")"
	else
		fail "top-level cat: mount" "$(cat "$m.log")"
	fi
else
	skip "top-level cat: the mount's bytes" "no FUSE here"
fi
# A top-level file's pass keeps its size in the index, and no machine's:
# a later pass for the rest gives the same.
"$tm" cat -o index=top.idx top.tar merged.pftrace >top.pf
ok "top-level cat: its size as ls -l gives it after" \
	test "$("$tm" ls -l -o index=top.idx top.tar | awk '$NF == "merged.pftrace" { print $2 }')" = "$(stat -c %s top.pf)"
ok "top-level cat: a machine's file after it" \
	cmp <("$tm" cat -o index=top.idx top.tar machines/m0/merged.pftrace) \
	<("$tm" cat -o noindex top.tar machines/m0/merged.pftrace)
# JSON pids and tids given as strings: our ids from 2^32 go into
# merged.pftrace's 32-bit descriptor fields from INT32_MAX down. Their low
# bits (the first string's: 0, the idle process) put a string pid's
# events on a numeric pid's process when read back.
cat >strpid.json <<'EOF2'
{"traceEvents":[
{"ph":"X","pid":"Browser","tid":"Main","ts":10,"dur":5,"name":"a"},
{"ph":"X","pid":1,"tid":1,"ts":20,"dur":5,"name":"b"},
{"ph":"X","pid":0,"tid":0,"ts":30,"dur":5,"name":"c"}
]}
EOF2
"$tm" cat strpid.json merged.pftrace >strpid.pftrace
"$tm" cat strpid.pftrace timeline.tsv >strpid.tl
pm=$("$tm" ls strpid.pftrace machines | head -n 1)
"$tm" cat strpid.pftrace "machines/$pm/threads.tsv" >strpid.threads
"$tm" cat strpid.pftrace "machines/$pm/processes.tsv" >strpid.procs
# slice -> "pid tid" as the re-import of merged.pftrace has it
at() { awk -F '\t' -v n="$1" '$5 == "slice" && $7 == n { print $9, $10 }' strpid.tl; }
eq "string pid: its slice on the process named by the string, read back" \
	"$(at a | cut -d' ' -f1)" "$(awk -F '\t' '$2 == "Browser" { print $1 }' strpid.procs)"
eq "string tid: its slice on the thread named by the string, read back" \
	"$(at a | cut -d' ' -f2)" "$(awk -F '\t' '$2 == "Main" { print $1 }' strpid.threads)"
eq "string pid: apart from pid 1 and pid 0, read back" \
	"$(for s in a b c; do at $s | cut -d' ' -f1; done | sort -u | wc -l)" "3"
eq "string pid: the numeric pids keep theirs" "$(at b) $(at c)" "1 1 0 0"
# Two systrace files of one machine with B, E and I on one thread: the
# reference nests each file's slices apart (a thread track per file), so
# merged.pftrace writes them as TrackEvents on a track per file and thread
# (tracemount(1), "Divergences"); read back, the same slices, depths and
# instants. One systrace file alone keeps its prints.
shape=$here/interop/captures/two_systrace_one_thread
cp "$shape/a.systrace" "$shape/b.systrace" .
zip -q -X two_sys.zip a.systrace b.systrace
"$tm" cat two_sys.zip merged.pftrace >two_sys.pftrace
rows() { awk -F '\t' 'NR > 1 && ($5 == "slice" || $5 == "instant") { print $1, $2, $5, $7, $8 }' "$1" | sort; }
"$tm" cat two_sys.zip timeline.tsv >two_sys.tl
"$tm" cat two_sys.pftrace timeline.tsv >two_sys.back.tl
eq "two systrace files on one thread: each file's slices nest apart" \
	"$(awk -F '\t' '$7 == "load" { print $4, $2, $8 }' two_sys.tl | sort | tr '\n' ' ')" \
	"a.systrace 500000000 0 b.systrace 500000000 0 "
eq "two systrace files on one thread: read back, the same slices and depths" "$(rows two_sys.back.tl)" "$(rows two_sys.tl)"
if command -v protoc >/dev/null; then
	protoc --decode=perfetto.protos.Trace --proto_path="$here/../protos" "$here/../protos/trace.proto" \
		<two_sys.pftrace >two_sys.txt 2>/dev/null
	eq "two systrace files on one thread: no B, E or I print left" "$(grep -c 'buf: "[BEI]|' two_sys.txt)" 0
	# threads 100 and 101 (which prints B|100), in each of the two files
	eq "two systrace files on one thread: a track per file and thread" \
		"$(awk '/^  track_descriptor/ { d = 1 } d && /parent_uuid/ { n++ } /^  }/ { d = 0 } END { print n + 0 }' two_sys.txt)" 4
	"$tm" cat a.systrace merged.pftrace | protoc --decode=perfetto.protos.Trace --proto_path="$here/../protos" \
		"$here/../protos/trace.proto" >one_sys.txt 2>/dev/null
	eq "one systrace file: B, E and I stay prints" "$(grep -c 'buf: "[BEI]|' one_sys.txt)" 7
else
	skip "two systrace files on one thread: the encoding" "no protoc"
fi
# Threads and processes made in the archive's order (issue 33): the
# reference gives them row ids (utid, upid) in the order its parsers make
# them, also for a JSON metadata event at ts 0 or a kernel line that keeps
# no row, and args such as legacy_event.passthrough_utid hold those ids.
# Read back, merged.pftrace of a proto, two JSON and a systrace file on one
# machine lists threads and processes in the same order, not only the same
# set.
mkdir order && (cd order && gunzip -c "$real/together/chromium_startup.pftrace.gz" >a.pftrace &&
	gunzip -c "$real/chromium_startup.json.gz" >b.json && cp "$real/node_trace.json" c.json &&
	gunzip -c "$real/together/sched_switch.systrace.gz" >d.systrace && zip -q -X ../order.zip a.pftrace b.json c.json d.systrace)
"$tm" cat order.zip merged.pftrace >order.pftrace
for f in threads.tsv processes.tsv; do
	"$tm" cat order.zip "machines/machine0/$f" | cut -f1-3 >"order.$f"
	"$tm" cat order.pftrace "machines/machine0/$f" | cut -f1-3 >"order.back.$f"
	eq "creation order: $f read back in the archive's order" "$(diff "order.$f" "order.back.$f" | grep -c '^<')" 0
done
ok "creation order: the threads are many" test "$(wc -l <order.threads.tsv)" -gt 50
# Kernel counters of a systrace file (cpu_frequency_limits, clock_set_rate,
# clock_enable, clock_disable, thermal_temperature, cdev_update): the
# reference's text import makes counters of them, on the tracks its proto
# import gives the typed events; merged.pftrace writes those events, and
# read back they are the same counters, named as the reference names them.
cp "$here/interop/captures/kernel_counters/power.systrace" .
"$tm" cat power.systrace merged.pftrace >power.pftrace
counters() { "$tm" cat "$1" timeline.tsv | awk -F '\t' '$5 == "counter" { print $1, $7, $12 }' | sort; }
counters power.systrace >power.want
eq "kernel counters: each line a counter" "$(wc -l <power.want)" 13
eq "kernel counters: read back from merged.pftrace" "$(counters power.pftrace)" "$(cat power.want)"
contains "kernel counters: the reference's names" "$(cat power.want)" "Cpu 1 Max Freq Limit"
# A kernel line on CPU 1024 or higher (the reference's text import takes
# it; its proto import refuses a whole trace for one ftrace bundle of such
# a CPU): timeline.tsv shows it, merged.pftrace leaves it out and reads
# back. fuzz_export found a CPU of 9006 making a merged.pftrace that no
# Perfetto tool would open.
cat >bigcpu.systrace <<'EOF'
# tracer: nop
#
   traced_probes-1008  ( 1008) [001] d..2     1.000000: sched_switch: prev_comm=traced_probes prev_pid=1008 prev_prio=120 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     (-----) [2000] d..2     1.000050: sched_switch: prev_comm=swapper/2000 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker next_pid=77 next_prio=120
         kworker-77    (   77) [2000] d..2     1.000070: sched_switch: prev_comm=kworker prev_pid=77 prev_prio=120 prev_state=S ==> next_comm=swapper/2000 next_pid=0 next_prio=120
          <idle>-0     (-----) [001] d..2     1.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=traced_probes next_pid=1008 next_prio=120
EOF
cpu_rows() { "$tm" cat "$1" timeline.tsv | awk -F '\t' -v c="$2" '$5 == "sched" && $11 == c { n++ } END { print n + 0 }'; }
eq "CPU 2000: timeline.tsv has its sched rows" "$(cpu_rows bigcpu.systrace cpu:2000)" 2
"$tm" cat bigcpu.systrace merged.pftrace >bigcpu.pftrace
ok "CPU 2000: merged.pftrace reads back" "$tm" cat bigcpu.pftrace timeline.tsv
eq "CPU 2000: left out of merged.pftrace" "$(cpu_rows bigcpu.pftrace cpu:2000)" 0
eq "CPU 2000: the other CPU's rows kept" "$(cpu_rows bigcpu.pftrace cpu:1)" "$(cpu_rows bigcpu.systrace cpu:1)"
# A CPU of 4096 or more, which the reference's import aborts on (its
# kMaxCpusPerMachine): the line is left out and counted as a
# systrace_parse_failure, in a kernel text and in a JSON trace's
# systemTraceEvents alike. A CPU of 4294967295 wrapped the size of our
# per-CPU state to 0 and overflowed it (found by review).
cat >hugecpu.systrace <<'EOF'
# tracer: nop
#
   traced_probes-1008  ( 1008) [001] d..2     1.000000: sched_switch: prev_comm=traced_probes prev_pid=1008 prev_prio=120 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     (-----) [4294967295] d..2     1.000050: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker next_pid=77 next_prio=120
         kworker-77    (   77) [4096] d..2     1.000070: sched_switch: prev_comm=kworker prev_pid=77 prev_prio=120 prev_state=S ==> next_comm=swapper next_pid=0 next_prio=120
          <idle>-0     (-----) [001] d..2     1.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=traced_probes next_pid=1008 next_prio=120
EOF
eq "CPU 4096 and up: the other lines' rows" "$("$tm" cat hugecpu.systrace timeline.tsv | awk -F '\t' '$5 == "sched" { print $11 }' | sort | uniq -c | awk '{ print $2, $1 }')" "cpu:1 2"
eq "CPU 4096 and up: counted as systrace_parse_failure" \
	"$("$tm" cat hugecpu.systrace metadata.json | jq '.stats.systrace_parse_failure')" 2
printf '{"traceEvents": [], "systemTraceEvents": "# tracer: nop\\n  bash-5 ( 5) [5000] d..2 1.000000: sched_switch: prev_comm=bash prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=swapper next_pid=0 next_prio=120\\n  bash-6 ( 6) [002] d..2 1.000100: sched_switch: prev_comm=bash prev_pid=6 prev_prio=120 prev_state=S ==> next_comm=swapper next_pid=0 next_prio=120\\n"}\n' >hugecpu.json
eq "CPU 4096 and up in systemTraceEvents: the other line's row" \
	"$("$tm" cat hugecpu.json timeline.tsv | awk -F '\t' '$5 == "sched" { print $11 }')" "cpu:2"
eq "CPU 4096 and up in systemTraceEvents: counted" \
	"$("$tm" cat hugecpu.json metadata.json | jq '.stats.systrace_parse_failure')" 1
# A Gecko profile whose stacks chain 2,000 deep (each stack the one before
# plus a frame: 16 bytes of input a stack) has a sample on each: its
# timeline.tsv lines hold 1 to 2,000 frames, 60 MB for 26 KB of input. The
# formatters held a batch's lines whole (their records are 36 bytes,
# their lines up to 70 KB): 65 MB of memory, 980 MB for 8,000 stacks.
# They now write every 4 MB once it is their batch's turn. Peak RSS is
# checked in the plain build alone: the sanitizers' own memory (ASan's
# quarantine of freed blocks) is not ours to bound.
{
	printf '{"meta":{"version":27,"interval":1,"categories":[{"name":"Other"}]},"threads":[{"name":"T","tid":1,"pid":1,"stringArray":["f"],"frameTable":{"func":[0]},"funcTable":{"name":[0]},"stackTable":{"prefix":[null'
	for ((i = 0; i < 1999; i++)); do printf ',%d' $i; done
	printf '],"frame":[0'
	for ((i = 1; i < 2000; i++)); do printf ',0'; done
	printf ']},"samples":{"stack":[0'
	for ((i = 1; i < 2000; i++)); do printf ',%d' $i; done
	printf '],"time":[0'
	for ((i = 1; i < 2000; i++)); do printf ',%d' $i; done
	printf ']}}]}\n'
} >chain.json
/usr/bin/time -f %M -o chain.rss "$tm" cat -o noindex chain.json timeline.tsv >chain.tsv
eq "deep stacks: a line per sample" "$(awk -F '\t' '$5 == "sample"' chain.tsv | wc -l)" 2000
eq "deep stacks: the deepest has every frame" \
	"$(awk -F '\t' '$5 == "sample" { print $12 }' chain.tsv | tail -n 1 | jq '.stack | length')" 2000
size=$(stat -c %s chain.tsv)
case $tm in
*/san/* | */tsan/* | */clang/*) skip "deep stacks: peak RSS a fraction of the text" "a sanitizer's build" ;;
*) ok "deep stacks: peak RSS ($(cat chain.rss) kB) under half the text ($((size / 1024)) kB)" \
	[ $(($(tail -n 1 chain.rss) * 1024)) -lt $((size / 2)) ] ;;
esac
# An end's args merged into its slice's: a key the slice has takes the
# end's value (the last, when the end gives it twice), the others come
# after in the end's order. 3,000 args on each side, half of them shared.
{
	printf '{"traceEvents":[{"ph":"B","pid":1,"tid":1,"ts":1,"name":"s","args":{"k0":0'
	for ((i = 1; i < 3000; i++)); do printf ',"k%d":%d' $i $i; done
	printf '}},{"ph":"E","pid":1,"tid":1,"ts":2,"args":{"k1500":"first"'
	for ((i = 1500; i < 4500; i++)); do printf ',"k%d":"e%d"' $i $i; done
	printf '}}]}\n'
} >endargs.json
{
	printf '{"k0":0'
	for ((i = 1; i < 1500; i++)); do printf ',"k%d":%d' $i $i; done
	for ((i = 1500; i < 4500; i++)); do printf ',"k%d":"e%d"' $i $i; done
	printf '}\n'
} >endargs.expect
eq "an end's 3,000 args merged into its slice's 3,000, in order" \
	"$("$tm" cat -o noindex endargs.json timeline.tsv | awk -F '\t' '$5 == "slice" { print $12 }' | md5sum)" \
	"$(md5sum <endargs.expect)"

# A JSON event whose thread a chain of 2,000 threads waits for (each made
# by a CLONE_THREAD of it in a proto file of the same machine, its
# process unknown): all of them join pid 7 at that event, and
# merged.pftrace says so for each (a ProcessTree entry per thread made).
protos=$here/../protos
if command -v protoc >/dev/null; then
	mkdir -p waiting
	for ((i = 0; i < 2000; i++)); do
		printf 'event { timestamp: %d pid: 9000 task_newtask { pid: %d comm: "t" clone_flags: 65536 } }\n' \
			$((1000000000 + i * 1000)) $((20000000 + i))
	done | { printf 'packet { ftrace_events { cpu: 0 '; tr '\n' ' '; printf '} }\n'; } |
		protoc --encode=perfetto.protos.Trace --proto_path="$protos" "$protos/trace.proto" >waiting/p.pftrace
	printf '{"traceEvents":[{"ph":"X","name":"x","ts":3000000,"dur":1,"pid":7,"tid":9000}]}\n' >waiting/j.json
	printf '{"perfetto_manifest":{"version":1,"files":[{"path":"p.pftrace","machine":{"name":"m"}},{"path":"j.json","machine":{"name":"m"}}]}}\n' \
		>waiting/perfetto_manifest.json
	(cd waiting && tar cf ../waiting.tar perfetto_manifest.json p.pftrace j.json)
	"$tm" cat -o noindex waiting.tar merged.pftrace >waiting.pftrace
	eq "a chain of 2,000 waiting threads joins pid 7 in merged.pftrace" \
		"$("$tm" cat -o noindex waiting.pftrace machines/m/threads.tsv | awk -F '\t' '$1 >= 20000000 && $3 == 7' | wc -l)" 2000
	# at the JSON event's time, as the reference's import joined them
	protoc --decode=perfetto.protos.Trace --proto_path="$protos" "$protos/trace.proto" <waiting.pftrace >waiting.txt
	eq "merged.pftrace: a ProcessTree entry at the event's time for each of the 2,000, in pid 7" \
		"$(awk '/^packet \{/ { n = 0; ts = "" } /^    threads \{/ { th = 1 } th && /tid:/ { tid[n] = $2 }
			th && /tgid:/ { tg[n++] = $2; th = 0 } /^  timestamp:/ { ts = $2 }
			/^\}/ { for (i = 0; i < n; i++) if (ts == 3000000000 && tid[i] >= 20000000 && tg[i] == 7) print tid[i] }' \
			waiting.txt | wc -l)" 2000
else
	skip "a chain of waiting threads" "protoc is not installed"
fi

exit $T_FAILED
