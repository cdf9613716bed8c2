#!/usr/bin/env bash
# tests/t_heap_graph.sh - Java heap dumps as Perfetto records them
# (HeapGraph packets of the android.java_hprof data source) in heap.tsv and
# metadata.json: testdata/conformance/heap_graph.textproto, a dump in two
# packets and one in one, and heap_graph_broken.textproto, dumps the
# reference counts as broken; merged.pftrace keeps the packets; two files
# whose dumps share a sequence id are one dump, as in the reference; a
# packet is decoded as the reference's decoder (protozero) reads it, cut
# or odd; the mount shows what cat shows.
#
# Expectations come from the fixtures' comments and the HeapGraph rules
# (an object of self_size 0 takes its type's object_size; an object named
# by a reference but never given is of the trace's first class row, of
# size -1), worked out by hand here, independently of core/. (The
# reference's import of the same files: tests/interop/captures/heap_graph*.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
tm=$TRACEMOUNT
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$T_TMP"

for c in jq protoc zip; do
	if ! command -v $c >/dev/null; then
		skip "heap_graph" "$c is not installed"
		exit 0
	fi
done
scenario_init || { fail "heap_graph" "cannot encode the fixtures (protoc)"; exit 1; }
cp "$enc/heap_graph.pb" graph.pftrace
cp "$enc/heap_graph_broken.pb" broken.pftrace

# ---- one file, two dumps --------------------------------------------------------
# pid 200: Foo 0x10 (0: its type's 16), 0x20 (24), 0x70 (type 6, also
# Foo: 12) and the two objects only named (0x999 by Bar's reference, 0x60
# as Bar's class loader) in the first class row, Foo's, at -1 each: 5
# objects, 50 bytes. Bar 0x30 (0: 32), byte[] 0x40 (100), type 4 (never
# named) 0x50 (8). pid 300: two Strings of 0 (24 each), an Object[] of 40.
cat >graph.expect <<'EOF'
class	objects	bytes
byte[]	1	100
com.example.Foo	5	50
java.lang.String	2	48
java.lang.Object[]	1	40
com.example.Bar	1	32
	1	8
EOF
"$tm" cat graph.pftrace machines/machine0/heap.tsv >graph.tsv
eq "heap.tsv: the classes of both dumps, as the packets give them" "$(cat graph.tsv)" "$(cat graph.expect)"
meta=$("$tm" cat graph.pftrace metadata.json)
eq "metadata: whole dumps count no stat" "$(jq -c '.files[0].stats // {}' <<<"$meta")" '{}'
"$tm" cat graph.pftrace machines/machine0/processes.tsv >procs.tsv
eq "processes.tsv: the dumps' processes" "$(awk -F'\t' 'NR > 1 { print $1 }' procs.tsv | sort -n | tr '\n' ' ')" "0 200 300 "

# merged.pftrace keeps every HeapGraph packet as it was
"$tm" cat graph.pftrace merged.pftrace >merged.pftrace
n_in=$(protoc --decode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" <graph.pftrace |
	grep -c '^  heap_graph {')
n_out=$(protoc --decode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" <merged.pftrace |
	grep -c '^  heap_graph {')
eq "merged.pftrace: the three HeapGraph packets" "$n_out" "$n_in"
strip() { protoc --decode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" |
	awk '/^  heap_graph \{/ { on = 1 } on { print } on && /^  \}/ { on = 0 }'; }
eq "merged.pftrace: their contents as they were" "$(strip <merged.pftrace | md5sum)" "$(strip <graph.pftrace | md5sum)"
eq "merged.pftrace read back: the same heap.tsv" "$("$tm" cat merged.pftrace machines/machine0/heap.tsv)" \
	"$(cat graph.expect)"

# ---- broken dumps ------------------------------------------------------------------
# pid 400 (sequence 1) begins at index 1 (missing packet, counted for the
# upid the sequence had then: none, 0), never ends (non-finalized, at the
# end), an object whose field ids and references differ in number (upid
# 1, dropped), an object of a type never named (its size stays 0: upid 1
# again, once), a location never named (invalid string, upid 1), a
# /data/app/ location of no package. pid 500 (sequence 2, upid 2): an
# object with two references and a type of one field and no superclass
# (upid 2); then pid 501 (upid 3) on the same sequence: its object and
# root are refused (non-finalized, twice).
"$tm" cat broken.pftrace metadata.json >broken.json
eq "metadata: the reference's heap_graph stats" "$(jq -cS '.files[0].stats' broken.json)" \
	'{"deobfuscate_location_parse_error":1,"heap_graph_invalid_string_id":{"1":1},"heap_graph_malformed_packet":{"1":2,"2":1},"heap_graph_missing_packet":{"0":1},"heap_graph_non_finalized_graph":3}'
cat >broken.expect <<'EOF'
class	objects	bytes
b.C	1	16
a.A	1	8
	1	0
EOF
eq "heap.tsv: what the broken dumps give" "$("$tm" cat broken.pftrace machines/machine0/heap.tsv)" \
	"$(cat broken.expect)"

# ---- two files, one sequence id ----------------------------------------------------
# broken.pftrace's pid 400 dump (sequence 1, at 2000) is still open when
# graph.pftrace's sequence 1 begins (at 3000): its index 0 follows 1
# (missing, upid 1); pid 200 is another process, so its 6 objects and its
# root are refused (7 non-finalized, 9 in all) until its last packet ends
# the dump with graph.pftrace's types: a.A's object of size 0 is of type
# 1, now com.example.Foo (16); type 1's location 1 is broken.pftrace's
# "/data/app/nopackage" (the first name of an iid stays), so the location
# error stays and no id is missing; type 9's object stays nameless (0),
# as is the trace's first class row, type 9's, where Bar's class loader,
# named only, goes (-1).
zip -q two.zip broken.pftrace graph.pftrace
"$tm" cat two.zip metadata.json >two.json
eq "two files: the stats in total" "$(jq -cS '.stats | with_entries(select(.value != 0))' two.json)" \
	'{"deobfuscate_location_parse_error":1,"heap_graph_malformed_packet":{"1":2,"3":1},"heap_graph_missing_packet":{"0":1,"1":1},"heap_graph_non_finalized_graph":9}'
cat >two.expect <<'EOF2'
class	objects	bytes
java.lang.String	2	48
java.lang.Object[]	1	40
b.C	1	16
com.example.Foo	1	16
	2	-1
EOF2
"$tm" cat two.zip machines/machine0/heap.tsv >two.tsv
eq "two files: one dump of sequence 1" "$(cat two.tsv)" "$(cat two.expect)"
"$tm" cat two.zip merged.pftrace >two.pftrace
eq "two files: merged.pftrace read back gives the same heap.tsv" \
	"$("$tm" cat two.pftrace machines/machine0/heap.tsv)" "$(cat two.expect)"

# ---- packets protobuf-c refuses ------------------------------------------------------
# tests/interop/captures/heap_graph_malformed (make_malformed.py says how
# it is made): a dump of pid 600 (upid 1) in two packets. The first:
# object 1 (a type 1, 10 bytes), then object 2 whose packed references end
# in a cut varint (malformed; it and object 3 after it are dropped), type
# 1 m.A (8 bytes an object), type 2 m.B whose field ids are cut (malformed,
# skipped), a root whose object ids are cut (malformed), type 3 m.C. The
# second: object 4 (type 1, size 0: m.A's 8), then a field running past
# the message, where reading stops; the dump ends there (no `continued`
# read). So m.A: 2 objects, 18 bytes; three malformed, all of upid 1.
cp "$root/tests/interop/captures/heap_graph_malformed/malformed.pftrace" .
eq "malformed packets: heap.tsv holds what comes before the bad bytes" \
	"$("$tm" cat malformed.pftrace machines/machine0/heap.tsv)" "$(printf 'class\tobjects\tbytes\nm.A\t2\t18')"
eq "malformed packets: each bad object, type and root counted" \
	"$("$tm" cat malformed.pftrace metadata.json | jq -cS '.files[0].stats')" '{"heap_graph_malformed_packet":{"1":3}}'
"$tm" cat malformed.pftrace merged.pftrace >malformed_merged.pftrace
# the first packet's HeapGraph: its 79 bytes from byte 11 (0a 57, then
# the sequence id, time and heap_graph's tag and length, 8 bytes)
hex() { od -An -v -tx1 | tr -d ' \n'; }
g1=$(tail -c +11 malformed.pftrace | head -c 79 | hex)
case "$(hex <malformed_merged.pftrace)" in
*"4f$g1"*) pass "malformed packets: merged.pftrace keeps their bytes" ;;
*) fail "malformed packets: merged.pftrace keeps their bytes" "the first HeapGraph ($g1) is not in it" ;;
esac
eq "malformed packets: merged.pftrace read back gives the same heap.tsv" \
	"$("$tm" cat malformed_merged.pftrace machines/machine0/heap.tsv)" "$(printf 'class\tobjects\tbytes\nm.A\t2\t18')"

# ---- read as the reference's decoder reads ---------------------------------------
# tests/interop/captures/heap_graph_{two_runs,id_delta,wire_type,continued}
# (each RECIPE gives the bytes): a packed field's last run alone (object
# 1 names 6, not 5: m.A is 1 (10) and 6 (-1)); a non-zero id_delta over
# the id (object 6, and 100 only named: 10 + 10 - 1); a type_id given as
# a fixed64 read (objects of m.A, m.B, m.C); `continued` as a fixed32 read
# as true, so the second packet joins the dump (m.A 1 and 2, 10 each).
while IFS='|' read -r cap want; do
	got=$("$tm" cat "$root/tests/interop/captures/$cap/dump.pftrace" machines/machine0/heap.tsv | tail -n +2 |
		tr '\t\n' ' ;')
	eq "decoded as the reference: $cap" "$got" "$want"
done <<'EOF3'
heap_graph_two_runs|m.A 2 9;
heap_graph_id_delta|m.A 3 19;
heap_graph_wire_type|m.B 1 20;m.A 1 10;m.C 1 7;
heap_graph_continued|m.A 2 20;
EOF3

if have_fuse; then
	if tm_mount graph.pftrace "$T_TMP/mnt"; then
		eq "mount: heap.tsv as cat gives it" "$(cat "$T_TMP/mnt/machines/machine0/heap.tsv")" "$(cat graph.expect)"
		eq "mount: its size as stat says" "$(stat -c %s "$T_TMP/mnt/machines/machine0/heap.tsv")" \
			"$(wc -c <graph.expect)"
		if tm_umount "$T_TMP/mnt"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$T_TMP/mnt.log")"; fi
	else
		fail "mount graph.pftrace" "$(cat "$T_TMP/mnt.log")"
	fi
else
	skip "mount: heap.tsv" "/dev/fuse or fusermount3 is missing; the same file was checked through tracemount cat"
fi
exit $T_FAILED
