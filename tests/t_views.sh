#!/usr/bin/env bash
# tests/t_views.sh - the views the scan feeds: metadata.json (status,
# trace_time, bounds, stats, machines, per-file counts), machines/<dir>/
# (machine.json and the files/ symlinks), clocks/graph.dot and edges.csv,
# the effective perfetto_manifest.json of an archive without a manifest
# (packed back with the traces it gives the same merge), and a merge error
# found by the scan (check exits 1 with the exact text; metadata.json says
# so; clocks/ and machine.json read as EIO). Through a real mount when FUSE
# works (not with TM_NO_FUSE=1); otherwise the mount-only checks print SKIP
# and the same checks run through `tracemount ls|cat`.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/../testdata/conformance
cd "$T_TMP"

if [ -z "${TM_NO_FUSE:-}" ] && have_fuse; then mode=fuse; else mode=cli; fi
[ $mode == cli ] && skip "views: FUSE mount" "no FUSE here (or TM_NO_FUSE): checks run through tracemount ls/cat"

have_protoc=1
if ! bash "$here/tools/encode_fixtures.sh" enc >/dev/null 2>&1; then
	have_protoc=0
	skip "views: proto fixtures" "protoc is missing or failed"
fi

# A proto on two machines, both named by SystemInfo (host "phone" with
# utsname and 8 CPUs, embedded machine 7 "vm"), with a BOOTTIME snapshot.
cat >two.textproto <<'EOF'
packet {
  clock_snapshot {
    clocks { clock_id: 6 timestamp: 1000000000 }
    clocks { clock_id: 1 timestamp: 1700000001000000000 }
    clocks { clock_id: 3 timestamp: 500000000 }
  }
}
packet { system_info { machine_name: "phone" utsname { sysname: "Linux" release: "6.1" } num_cpus: 8 } }
packet { trusted_packet_sequence_id: 1 track_descriptor { uuid: 12345 } }
packet { timestamp: 1100000000 trusted_packet_sequence_id: 1
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 12345 name: "proto_slice" } }
packet { timestamp: 1200000000 trusted_packet_sequence_id: 1
  track_event { type: TYPE_SLICE_END track_uuid: 12345 } }
packet { machine_id: 7 system_info { machine_name: "vm" } }
packet { machine_id: 7 clock_snapshot { clocks { clock_id: 6 timestamp: 50000000000 } } }
packet { machine_id: 7 trusted_packet_sequence_id: 2 track_descriptor { uuid: 77 } }
packet { machine_id: 7 timestamp: 50100000000 trusted_packet_sequence_id: 2
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 77 name: "vm_slice" } }
packet { machine_id: 7 timestamp: 50200000000 trusted_packet_sequence_id: 2
  track_event { type: TYPE_SLICE_END track_uuid: 77 } }
EOF
if [ $have_protoc == 1 ]; then
	protoc --encode=perfetto.protos.Trace --proto_path="$here/../protos" "$here/../protos/trace.proto" \
		<two.textproto >two.pb || { have_protoc=0; fail "views: encode two.pb" "protoc failed"; }
fi

# Archive 1, no manifest, JSON and systrace only: the systrace file (first
# by name, so processed first) owns trace time on MONOTONIC; the JSON files
# are bridged to it.
mkdir -p js/sub && cd js
cp "$fixtures/systrace.txt" 0sys.txt
cp "$fixtures/a_slice.json" sub/a.json
printf '{"traceEvents":[{"pid":1,"tid":1,"ts":-5,"ph":"i","name":"neg"},{"pid":1,"tid":1,"ts":3000,"dur":10,"ph":"X","name":"ok"}]}\n' >b.json
zip -q -X ../js.zip 0sys.txt sub/a.json b.json
cd ..

# Archive 2, no manifest, the two-machine proto and a JSON file on the host.
if [ $have_protoc == 1 ]; then
	mkdir -p pj && cp two.pb pj/two.pb && cp "$fixtures/a_slice.json" pj/a.json
	(cd pj && zip -q -X ../pj.zip two.pb a.json)
fi

# Archive 3: conformance 41, a scan-time error.
if [ $have_protoc == 1 ]; then
	mkdir -p c41 && cp enc/multi.pb c41/multi.pb
	printf '%s\n' '{"perfetto_manifest": {"version": 1, "files": [{"path": "multi.pb", "machines": [{"id": 0, "name": "phone"}]}]}}' >c41/meta.json
	(cd c41 && zip -q -X ../c41.zip meta.json multi.pb)
fi

# view ARCHIVE: define v_cat, v_ls, v_lsl, v_readlink, v_path for ARCHIVE.
view() {
	local a=$1
	if [ $mode == fuse ]; then
		local m=$T_TMP/mnt.${a%.zip}
		if ! tm_mount "$a" "$m"; then fail "$a: mount" "$(cat "$m.log")"; return 1; fi
		pass "$a: mount"
		V_MNT=$m
		v_cat() { cat "$V_MNT/$1"; }
		v_ls() { ls -1 -U "$V_MNT/$1"; }
		v_size() { stat -c %s "$V_MNT/$1"; }
		v_readlink() { readlink "$V_MNT/$1"; }
	else
		V_ARCH=$a
		v_cat() { "$tm" cat "$V_ARCH" "$1"; }
		v_ls() { "$tm" ls "$V_ARCH" "$1"; }
		v_size() { "$tm" ls -l "$V_ARCH" "$1" | awk '{ print $2 }'; }
		v_readlink() { "$tm" ls -l "$V_ARCH" "$1" | sed 's/.* -> //'; }
	fi
}
unview() {
	if [ $mode == fuse ]; then
		if tm_umount "$V_MNT"; then pass "$1: clean unmount"; else fail "$1: clean unmount" "$(cat "$V_MNT.log")"; fi
	fi
}

# ---- js.zip ------------------------------------------------------------------
if view js.zip; then
	eq "js: root lists the views" "$(v_ls "" | tr '\n' ' ')" "clocks files machines merged.pftrace metadata.json perfetto_manifest.json timeline.tsv "
	meta=$(v_cat metadata.json)
	eq "js: status ok" "$(jq -r .status <<<"$meta")" ok
	eq "js: trace_time from the systrace file" "$(jq -c .trace_time <<<"$meta")" \
		'{"clock":"MONOTONIC","clock_id":3,"machine":0,"file":"0sys.txt","owner":"file"}'
	eq "js: every stat, zeros included, in order" "$(jq -c '.stats | keys_unsorted | length' <<<"$meta")" 23
	eq "js: stats start with the sorter drop" "$(jq -r '.stats | keys_unsorted[0]' <<<"$meta")" \
		trace_sorter_negative_timestamp_dropped
	eq "js: zeros are present" "$(jq '.stats.clock_sync_failure_no_path' <<<"$meta")" 0
	eq "js: the negative ts is counted" "$(jq '.stats.trace_sorter_negative_timestamp_dropped' <<<"$meta")" 1
	eq "js: b.json drops" "$(jq -c '.files[] | select(.path=="b.json") | [.events, .dropped, .drops, .packets, .clock_override]' <<<"$meta")" \
		'[1,1,{"trace_sorter_negative_timestamp_dropped":1},null,null]'
	eq "js: one host machine" "$(jq -c '[.machines[] | [.id, .raw_id, .name, .label_index, .dir, .files]]' <<<"$meta")" \
		'[[0,0,null,0,"machine0",[1,2,3]]]'
	# Each event's range in trace time: the bounds span them all.
	eq "js: bounds cover every file" \
		"$(jq -c '[([.files[] | select(.events > 0) | .first_trace_ts] | min), ([.files[] | select(.events > 0) | .last_trace_ts] | max)]' <<<"$meta")" \
		"$(jq -c '[.bounds.start_ns, .bounds.end_ns]' <<<"$meta")"
	eq "js: machine events add up" "$(jq '[.machines[].events] | add' <<<"$meta")" "$(jq '[.files[] | .events // 0] | add' <<<"$meta")"
	eq "js: systrace own range" "$(jq -c '.files[] | select(.path=="0sys.txt") | [.first_ts, .last_ts, .first_trace_ts, .last_trace_ts]' <<<"$meta")" \
		'[1000000000,1500000000,1000000000,1500000000]'
	eq "js: metadata.json size is its length" "$(v_size metadata.json)" "$(printf '%s\n' "$meta" | wc -c)"

	eq "js: machines/" "$(v_ls machines)" machine0
	mj=$(v_cat machines/machine0/machine.json)
	eq "js: machine.json" "$(jq -c '[.id, .raw_id, .name, .label_index, [.files[].path], .events]' <<<"$mj")" \
		'[0,0,null,0,["0sys.txt","sub/a.json","b.json"],4]'
	contains "js: machine.json lists its clocks" "$(jq -c .clocks <<<"$mj")" '"3"'
	eq "js: machine.json range" "$(jq -c '[.first_ts, .last_ts]' <<<"$mj")" "$(jq -c '[.bounds.start_ns, .bounds.end_ns]' <<<"$meta")"
	eq "js: links" "$(v_ls machines/machine0/files | sort | tr '\n' ' ')" "0sys.txt b.json sub%2Fa.json "
	eq "js: a nested member's link" "$(v_readlink machines/machine0/files/sub%2Fa.json)" "../../../files/sub/a.json"
	for l in 0sys.txt sub%2Fa.json b.json; do
		src=js/${l//%2F//}
		if v_cat "machines/machine0/files/$l" | cmp -s - "$src"; then pass "js: link $l resolves"; else fail "js: link $l resolves" "bytes differ"; fi
	done

	dotf=$(v_cat clocks/graph.dot)
	if printf '%s\n' "$dotf" | dot -Tsvg >/dev/null 2>dot.err; then pass "js: dot -Tsvg clocks/graph.dot"; else fail "js: dot -Tsvg clocks/graph.dot" "$(cat dot.err)"; fi
	contains "js: graph.dot names the machine" "$dotf" 'machine0'
	if [ $mode == fuse ] && command -v dot >/dev/null; then ok "js: dot reads the mounted file" dot -Tsvg -o graph.svg "$V_MNT/clocks/graph.dot"; fi
	csv=$(v_cat clocks/edges.csv)
	eq "js: edges.csv header" "$(head -n 1 <<<"$csv")" "from_clock,to_clock,from_ts,to_ts,origin,file,machine"
	eq "js: edges.csv rows have 7 fields" "$(tail -n +2 <<<"$csv" | awk -F, 'NF != 7' | wc -l)" 0
	contains "js: the JSON files are bridged" "$csv" "same_domain_assumption"

	man=$(v_cat perfetto_manifest.json)
	eq "js: effective manifest" "$(jq -c . <<<"$man")" \
		'{"perfetto_manifest":{"version":1,"trace_time":{"clock":"MONOTONIC","file":"0sys.txt"},"files":[{"path":"0sys.txt"},{"path":"b.json"},{"path":"sub/a.json"}]}}'
	printf '%s' "$man" >js/perfetto_manifest.json
	(cd js && zip -q -X ../js2.zip perfetto_manifest.json 0sys.txt sub/a.json b.json)
	meta2=$("$tm" cat js2.zip metadata.json)
	eq "js: repacked: same trace time" "$(jq -c '.trace_time | [.clock, .clock_id, .machine]' <<<"$meta2")" "$(jq -c '.trace_time | [.clock, .clock_id, .machine]' <<<"$meta")"
	eq "js: repacked: owned by the manifest" "$(jq -r .trace_time.owner <<<"$meta2")" manifest
	eq "js: repacked: same bounds and stats" "$(jq -c '[.bounds, .stats]' <<<"$meta2")" "$(jq -c '[.bounds, .stats]' <<<"$meta")"
	eq "js: repacked: same machines" "$(jq -c '[.machines[] | [.name, .events]]' <<<"$meta2")" "$(jq -c '[.machines[] | [.name, .events]]' <<<"$meta")"
	eq "js: check summarises the scan" "$("$tm" check js.zip)" \
		"js.zip: ok: 3 trace files (2 json, 1 systrace), no manifest, 1 machine, 4 events placed, trace time MONOTONIC"
	unview js.zip
fi

# ---- pj.zip (proto) --------------------------------------------------------------
if [ $have_protoc == 1 ] && view pj.zip; then
	meta=$(v_cat metadata.json)
	eq "pj: status ok" "$(jq -r .status <<<"$meta")" ok
	eq "pj: machines named by SystemInfo" "$(jq -c '[.machines[] | [.id, .raw_id, .name, .label_index, .dir, .files]]' <<<"$meta")" \
		'[[0,0,"phone",0,"phone",[1,2]],[1,7,"vm",1,"vm",[1]]]'
	eq "pj: trace time BOOTTIME owned by the proto" "$(jq -c '.trace_time | [.clock, .clock_id, .file, .owner]' <<<"$meta")" \
		'["BOOTTIME",6,"two.pb","file"]'
	eq "pj: proto file counts" "$(jq -c '.files[] | select(.path=="two.pb") | [.machines, .packets, .events, .dropped]' <<<"$meta")" \
		'[[0,1],10,4,0]'
	eq "pj: machines/" "$(v_ls machines | tr '\n' ' ')" "phone vm "
	mj=$(v_cat machines/phone/machine.json)
	eq "pj: machine.json identity" "$(jq -c '[.sysname, .release, .num_cpus, [.files[].path]]' <<<"$mj")" \
		'["Linux","6.1",8,["two.pb","a.json"]]'
	eq "pj: vm links" "$(v_ls machines/vm/files)" two.pb
	if v_cat machines/vm/files/two.pb | cmp -s - pj/two.pb; then pass "pj: vm link resolves"; else fail "pj: vm link resolves" "bytes differ"; fi
	if v_cat clocks/graph.dot | dot -Tsvg >/dev/null 2>dot.err; then pass "pj: dot -Tsvg"; else fail "pj: dot -Tsvg" "$(cat dot.err)"; fi
	contains "pj: graph.dot labels machines by name" "$(v_cat clocks/graph.dot)" 'label="vm"'
	contains "pj: edges.csv has the snapshot" "$(v_cat clocks/edges.csv)" ",clock_snapshot,1,phone"

	man=$(v_cat perfetto_manifest.json)
	eq "pj: effective manifest names the machines" "$(jq -c '.perfetto_manifest.files' <<<"$man")" \
		'[{"path":"two.pb","machines":[{"id":0,"name":"phone"},{"id":7,"name":"vm"}]},{"path":"a.json","machine":{"name":"phone"}}]'
	printf '%s' "$man" >pj/perfetto_manifest.json
	(cd pj && zip -q -X ../pj2.zip perfetto_manifest.json two.pb a.json)
	meta2=$("$tm" cat pj2.zip metadata.json)
	eq "pj: repacked: ok" "$(jq -r .status <<<"$meta2")" ok
	eq "pj: repacked: same trace time" "$(jq -c '.trace_time as $t | [$t.clock, $t.clock_id, .machines[$t.machine].name]' <<<"$meta2")" \
		"$(jq -c '.trace_time as $t | [$t.clock, $t.clock_id, .machines[$t.machine].name]' <<<"$meta")"
	eq "pj: repacked: same machines" "$(jq -c '[.machines[] | [.name, .events, .first_ts, .last_ts]]' <<<"$meta2")" \
		"$(jq -c '[.machines[] | [.name, .events, .first_ts, .last_ts]]' <<<"$meta")"
	eq "pj: repacked: same bounds" "$(jq -c .bounds <<<"$meta2")" "$(jq -c .bounds <<<"$meta")"
	unview pj.zip
fi

# ---- c41.zip: an error found by the scan ------------------------------------
c41="perfetto_manifest: machines: trace has a packet from undeclared machine id 7"
if [ $have_protoc == 1 ]; then
	err=$("$tm" check c41.zip 2>&1 >/dev/null); rc=$?
	eq "c41: check exits 1" "$rc" 1
	eq "c41: check prints the exact error" "$err" "$c41"
	ok "c41: ls of the root computes nothing and works" "$tm" ls c41.zip
	if view c41.zip; then
		meta=$(v_cat metadata.json)
		eq "c41: metadata status" "$(jq -r .status <<<"$meta")" error
		eq "c41: metadata error" "$(jq -r .error <<<"$meta")" "$c41"
		# a file that cannot be built has no size: a stat fails as a read
		# does (a size of 0 looked like an empty file)
		if [ $mode == fuse ]; then
			out=$(stat -c %s "$V_MNT/clocks/graph.dot" 2>&1); rc=$?
			eq "c41: stat of graph.dot fails" "$rc" 1
			contains "c41: stat of graph.dot fails with EIO" "$out" "Input/output error"
			eq "c41: ls of the folder still lists it" "$(ls "$V_MNT/clocks" | tr '\n' ' ')" "edges.csv graph.dot "
		fi
		out=$("$tm" ls -l c41.zip clocks 2>&1); rc=$?
		eq "c41: ls -l of clocks exits 1" "$rc" 1
		eq "c41: ls -l of clocks gives the reason for each" "$out" \
			"tracemount: ls: edges.csv: $c41"$'\n'"tracemount: ls: graph.dot: $c41"
		if [ $mode == fuse ]; then
			out=$(cat "$V_MNT/clocks/graph.dot" 2>&1 >/dev/null)
			contains "c41: graph.dot reads as EIO" "$out" "Input/output error"
			out=$(cat "$V_MNT/clocks/edges.csv" 2>&1 >/dev/null)
			contains "c41: edges.csv reads as EIO" "$out" "Input/output error"
			out=$(cat "$V_MNT/machines/phone/machine.json" 2>&1 >/dev/null)
			contains "c41: machine.json reads as EIO" "$out" "Input/output error"
			out=$(cat "$V_MNT/merged.pftrace" 2>&1 >/dev/null)
			contains "c41: merged.pftrace reads as EIO" "$out" "Input/output error"
			out=$(cat "$V_MNT/timeline.tsv" 2>&1 >/dev/null)
			contains "c41: timeline.tsv reads as EIO" "$out" "Input/output error"
			# DESIGN.md: printed on the daemon's stderr, once, when found.
			eq "c41: the daemon logs the error once" "$(grep -c -F -x "tracemount: $c41" "$V_MNT.log")" 1
		else
			err=$("$tm" cat c41.zip clocks/graph.dot 2>&1 >/dev/null); rc=$?
			eq "c41: cat clocks/graph.dot exits 1" "$rc" 1
			contains "c41: cat clocks/graph.dot gives the reason" "$err" "$c41"
			err=$("$tm" cat c41.zip machines/phone/machine.json 2>&1 >/dev/null); rc=$?
			eq "c41: cat machine.json exits 1" "$rc" 1
		fi
		unview c41.zip
	fi
fi
# ---- odd.tar: member names files/ escapes or renames ------------------------
# tracemount(1), "files/": a file where a directory is needed gets "~2", a
# duplicate name too; ".", "..", an empty component (a leading "/", "a//b")
# are written %2E, %2E%2E, %; the members below a renamed directory stay
# in that one directory. metadata.json's files_path is where each
# member's bytes are under the tree, whatever its name, and a hard link
# points at the member it names (the latest of that name, as tar extracts).
mkdir -p odd
src=$here/../testdata/real/capture2/node_b.json
for f in a c.json x1 x2 x3 x4; do cp "$src" "odd/$f"; done
ln odd/x1 odd/hl
(cd odd && tar -P --hard-dereference \
	--transform='s,^x1$,a/b.json,;s,^x2$,d//e.json,;s,^x3$,../up.json,;s,^x4$,/abs.json,' \
	-cf ../odd.tar a x1 ./c.json c.json c.json x2 x3 x4 2>/dev/null &&
	tar --transform='s,^x1$,a/b.json,;s,^hl$,h.json,' -rf ../odd.tar x1 hl)
if view odd.tar; then
	meta=$(v_cat metadata.json)
	eq "odd: files_path of each member" \
		"$(jq -r '.files[] | select(.path != null) | "\(.path) \(.files_path)"' <<<"$meta" | tr '\n' ';')" \
		"a files/a;a/b.json files/a~2/b.json;./c.json files/%2E/c.json;c.json files/c.json;c.json files/c.json~2;d//e.json files/d/%/e.json;../up.json files/%2E%2E/up.json;/abs.json files/%/abs.json;a/b.json files/a~2/b.json~2;"
	eq "odd: a hard link points at its member" "$(v_readlink files/h.json)" "a~2/b.json~2"
	bad=""
	while read -r p; do
		v_cat "$p" | cmp -s - "$src" || bad="$bad $p"
	done < <(jq -r '.files[].files_path | select(. != null)' <<<"$meta")
	eq "odd: every files_path reads as its member" "$bad" ""
	unview odd.tar
fi

# ---- bytes.tar: a member name that is not UTF-8 --------------------------------
# A Latin-1 name (as old ZIP and TAR tools write): files/ shows its bytes;
# metadata.json and machine.json, which must be UTF-8 (RFC 8259), and
# graph.dot (which Graphviz reads as UTF-8) show it with U+FFFD for the
# byte that is not.
mkdir -p bytes && lat=$(printf 'caf\xe9.systrace') && utf=$(printf 'caf\xef\xbf\xbd.systrace')
gunzip -c "$here/../testdata/real/together/sched_switch.systrace.gz" >"bytes/$lat"
(cd bytes && tar cf ../bytes.tar "$lat")
if view bytes.tar; then
	eq "bytes: files/ lists the name's bytes" "$(v_ls files)" "$lat"
	ok "bytes: the member reads under that name" cmp <(v_cat "files/$lat") "bytes/$lat"
	meta=$(v_cat metadata.json)
	ok "bytes: metadata.json is UTF-8" iconv -f UTF-8 -t UTF-8 <(printf '%s\n' "$meta")
	eq "bytes: metadata.json names the file with U+FFFD" "$(jq -r '.files[1].path' <<<"$meta")" "$utf"
	eq "bytes: its size is still its length" "$(v_size metadata.json)" "$(printf '%s\n' "$meta" | wc -c)"
	mj=$(v_cat machines/machine0/machine.json)
	ok "bytes: machine.json is UTF-8" iconv -f UTF-8 -t UTF-8 <(printf '%s\n' "$mj")
	dot=$(v_cat clocks/graph.dot)
	ok "bytes: graph.dot is UTF-8" iconv -f UTF-8 -t UTF-8 <(printf '%s\n' "$dot")
	contains "bytes: graph.dot names the file with U+FFFD" "$dot" "$utf"
	eq "bytes: dot reads it without a warning" "$(dot -Tsvg <<<"$dot" 2>&1 >/dev/null)" ""
	unview bytes.tar
fi

exit $T_FAILED
