#!/usr/bin/env bash
# tests/t_hprof.sh - Java heap dumps (hprof, issue 35): a real HotSpot dump
# (testdata/real/hprof, its README says how it was taken) against the
# class histogram the JVM printed of the same heap just before; the
# ART-shaped dump tests/tools/make_hprof.py writes (testdata/hprof/
# art_edge.hprof) against what its layout says: heap.tsv's classes, the
# HeapGraph packets of merged.pftrace (read back with protoc: roots,
# references, field names), the stats, the pid 0 process; a cut dump
# keeps what came before the cut; the mount shows what cat shows.
#
# Expectations come from the JVM's histogram and the generator's layout,
# independently of core/. (The reference's import of the same files:
# tests/interop/captures/hprof_*.)
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$T_TMP"

for c in jq gzip awk python3 protoc; do
	if ! command -v $c >/dev/null; then
		skip "hprof" "$c is not installed"
		exit 0
	fi
done

# ---- the ART-shaped dump -----------------------------------------------------------
python3 "$root/tests/tools/make_hprof.py" >art.hprof
ok "art_edge.hprof is what its recipe writes" cmp -s art.hprof "$TESTDATA/hprof/art_edge.hprof"

meta=$("$tm" cat art.hprof metadata.json)
eq "metadata: the dump's type, exported, no event placed (it has no clock)" \
	"$(jq -c '.files[] | [.type, .events, .not_exported]' <<<"$meta")" '["art_hprof",0,null]'
# 42 strings, 18 LOAD CLASS (one twice), 2 segments, 12 instances, 3 object
# and 3 primitive arrays, 16 roots; references: Holder.self, String.value,
# 5 of the nodes' next/payload (one to an object the dump lacks), the
# MyWeak's, SoftReference's and FinalizerReference's referent (and its
# zombie), the String[]'s 2 present elements, byte[][]'s one, the cut
# node's next: 15. Errors: "[X" is no type, nor is the unnamed class's
# placeholder "[unknown string ID: 30583]" (a '[' first), an instance of
# class 0x5555 the dump lacks; the cut node's payload (a reference and a
# value).
eq "metadata: the reference's hprof counters" "$(jq -c '.files[0].stats' <<<"$meta")" \
	'{"hprof_string_counter":42,"hprof_class_counter":18,"hprof_heap_dump_counter":2,"hprof_instance_counter":12,"hprof_object_array_counter":3,"hprof_primitive_array_counter":3,"hprof_root_counter":16,"hprof_reference_counter":15,"hprof_class_errors":3,"hprof_reference_errors":1,"hprof_field_value_errors":1}'

# heap.tsv: instance sizes from the class dumps (Node 24, six of them:
# 0x2001-0x2003, 0x2005, 0x200B and the cut one), arrays the class's 16
# plus their elements (4-byte ids, 5 bytes, 3 ints, 2 chars), every class
# object java.lang.Class's 120 plus its static fields (Holder's: 38)
cat >heap.expect <<'EOF'
class	objects	bytes
java.lang.Class<com.example.Holder>	1	158
com.example.Node	6	144
java.lang.Class<[X>	1	120
java.lang.Class<[unknown string ID: 30583]>	1	120
java.lang.Class<byte[]>	1	120
java.lang.Class<byte[][]>	1	120
java.lang.Class<char[]>	1	120
java.lang.Class<com.example.MyWeak>	1	120
java.lang.Class<com.example.Node>	1	120
java.lang.Class<int[]>	1	120
java.lang.Class<java.lang.Class>	1	120
java.lang.Class<java.lang.Object>	1	120
java.lang.Class<java.lang.String>	1	120
java.lang.Class<java.lang.String[]>	1	120
java.lang.Class<java.lang.ref.FinalizerReference>	1	120
java.lang.Class<java.lang.ref.Reference>	1	120
java.lang.Class<java.lang.ref.SoftReference>	1	120
java.lang.Class<java.lang.ref.WeakReference>	1	120
java.lang.String[]	1	32
java.lang.ref.FinalizerReference	1	32
java.lang.ref.SoftReference	1	32
com.example.MyWeak	1	28
int[]	1	28
java.lang.String	1	24
byte[]	1	21
byte[][]	1	20
char[]	1	20
[X	1	16
[unknown string ID: 30583]	1	8
EOF
"$tm" cat art.hprof machines/machine0/heap.tsv >heap.tsv
ok "heap.tsv: per class its objects and bytes, largest first" cmp -s heap.tsv heap.expect
eq "processes.tsv: the idle process and the dump's process 0, as the reference makes them" \
	"$("$tm" cat art.hprof machines/machine0/processes.tsv | cut -f1 | tr '\n' ' ')" "pid 0 0 "
eq "timeline.tsv: no row (a heap dump has no time of its own)" \
	"$("$tm" cat art.hprof timeline.tsv | wc -l)" 1

# merged.pftrace: HeapGraph packets of pid 0 at the header's time (ms as
# the reference takes it), decoded with protoc
"$tm" cat art.hprof merged.pftrace >art.pftrace
protoc --decode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" <art.pftrace >art.txt
eq "merged.pftrace: every packet at the header's time (0x18BCFE3A000)" \
	"$(awk '$1 == "timestamp:" { print $2 }' art.txt | sort -u)" 1699999883264
eq "merged.pftrace: the objects that have a class (34 of 35)" "$(grep -c '^    objects {' art.txt)" 34
eq "merged.pftrace: the last packet ends the graph" "$(grep -c 'continued: true' art.txt)" \
	"$(($(grep -c 'heap_graph {' art.txt) - 1))"
# roots: 0x2001 is JNI_GLOBAL and JAVA_FRAME (the lower rank wins), 0x2006
# of the UNKNOWN tag (no root type), 0x9999 held by no object
roots=$(awk '/^    roots \{/ { r = 1; t = "ROOT_UNKNOWN"; n = 0; next }
	r && /object_ids:/ { ids[n++] = $2 } r && /root_type:/ { t = $2 }
	r && /^    \}/ { for (i = 0; i < n; i++) print t, ids[i]; r = 0 }' art.txt | sort)
eq "merged.pftrace: the roots by type" "$roots" "$(printf '%s\n' 'ROOT_DEBUGGER 8199' 'ROOT_FINALIZING 8205' \
	'ROOT_INTERNED_STRING 12288' 'ROOT_JNI_GLOBAL 8193' 'ROOT_JNI_LOCAL 8196' 'ROOT_JNI_MONITOR 8208' \
	'ROOT_MONITOR_USED 8202' 'ROOT_NATIVE_STACK 8200' 'ROOT_STICKY_CLASS 4103' 'ROOT_STICKY_CLASS 4109' \
	'ROOT_THREAD_BLOCK 8201' \
	'ROOT_THREAD_OBJECT 8204' 'ROOT_UNKNOWN 8198' 'ROOT_VM_INTERNAL 8207' | sort)"
fields=$(grep -o 'str: ".*"' art.txt | sed 's/^str: "//; s/"$//' | sort)
eq "merged.pftrace: field names, each with the class of what it points at" "$fields" "$(printf '%s\n' \
	'byte[] [0]' 'byte[] java.lang.String.value' 'com.example.Node [3]' 'com.example.Node com.example.Holder.self' \
	'com.example.Node com.example.Node.next' 'com.example.Node java.lang.ref.FinalizerReference.zombie' \
	'com.example.Node java.lang.ref.Reference.referent' 'java.lang.String [0]' \
	'java.lang.String com.example.Node.payload' 'int[] com.example.Node.payload' \
	'unknown com.example.Node.next' | sort)"
eq "merged.pftrace: the reference to an object the dump lacks points at none (0)" \
	"$(grep -c 'reference_object_id: 0$' art.txt)" 1
kinds=$(grep -B2 'kind: KIND' art.txt | awk '/class_name:/ { n = $2 } /kind:/ { print n, $2 }' | tr -d '"' | sort)
eq "merged.pftrace: the reference classes' kinds, up the superclass chain" "$kinds" "$(printf '%s\n' \
	'com.example.MyWeak KIND_WEAK_REFERENCE' 'java.lang.ref.FinalizerReference KIND_FINALIZER_REFERENCE' \
	'java.lang.ref.SoftReference KIND_SOFT_REFERENCE' 'java.lang.ref.WeakReference KIND_WEAK_REFERENCE')"

# A cut dump: the second segment runs past the end; what came before it
# stays (the first segment's String and its byte[], the 17 class objects)
second=$(python3 "$root/tests/tools/make_hprof.py" --segments | awk '{ print $2 }')
head -c $((second + 40)) art.hprof >cut.hprof
cut_meta=$("$tm" cat cut.hprof metadata.json); rc=$?
eq "a cut dump merges" "$rc" 0
eq "a cut dump: the records before the cut counted" \
	"$(jq -c '.files[0].stats | [.hprof_heap_dump_counter, .hprof_instance_counter, .hprof_primitive_array_counter]' <<<"$cut_meta")" \
	'[1,1,1]'
eq "a cut dump: heap.tsv of what came before" "$("$tm" cat cut.hprof machines/machine0/heap.tsv | awk -F'\t' 'NR > 1 { n += $2 } END { print n }')" 19
printf 'JAVA PROFILE 1.0.2\0' >header.hprof
eq "a dump of a header cut short: a stat, no graph" \
	"$("$tm" cat header.hprof metadata.json | jq -c '.files[0].stats'):$("$tm" cat header.hprof machines/machine0/heap.tsv | wc -l)" \
	'{"hprof_header_errors":1}:1'

# Names cut at a NUL, as the reference reads them (C strings); a class
# that is its own superclass ends its chain there (the class object: no
# java.lang.Class in the dump, no static field: 0 bytes)
python3 - <<'PY'
import struct
def rec(tag, body): return struct.pack(">BII", tag, 0, len(body)) + body
def i4(v): return struct.pack(">I", v)
out = bytearray(b"JAVA PROFILE 1.0.3\0" + struct.pack(">III", 4, 0, 1000))
out += rec(1, i4(1) + b"com/example/Nul\0Tail") + rec(1, i4(2) + b"fi\0eld")
out += rec(2, i4(1) + i4(0x100) + i4(0) + i4(1))
dump = bytes([0x20]) + i4(0x100) + i4(0) + i4(0x100) + i4(0) * 5 + i4(4)   # its own superclass
dump += struct.pack(">HHH", 0, 0, 1) + i4(2) + bytes([10])                 # one int field
dump += bytes([0x21]) + i4(0x200) + i4(0) + i4(0x100) + i4(4) + i4(7)
open("nul.hprof", "wb").write(out + rec(0x1C, dump))
PY
eq "a class name cut at its NUL; a chain that loops ends" \
	"$("$tm" cat nul.hprof machines/machine0/heap.tsv | sort)" \
	"$(printf '%s\n' 'class	objects	bytes' 'com.example.Nul	1	4' 'java.lang.Class<com.example.Nul>	1	0' | sort)"

# ---- the real HotSpot dump against the JVM's own histogram -----------------------
gzip -dc "$TESTDATA/real/hprof/small.hprof.gz" >small.hprof
"$tm" cat small.hprof machines/machine0/heap.tsv >small.tsv
# the histogram names classes as heap.tsv does but for arrays ([B ...);
# java.lang.Class counts the class objects (heap.tsv: java.lang.Class<X>
# each); the phantom cleaners the dump's collection cleared after the
# histogram's are one
awk '$1 ~ /^[0-9]+:$/ && $4 !~ /^\[/ && $4 != "java.lang.Class" { print $4 "\t" $2 }' \
	"$TESTDATA/real/hprof/small_histo.txt" | sort >histo
awk -F'\t' 'NR > 1 && $1 !~ /^java\.lang\.Class</ { print $1 "\t" $2 }' small.tsv | sort >ours
eq "small.hprof: the program's nodes, as the histogram counts them" "$(awk -F'\t' '$1 == "Small$Node" { print $2, $3 }' small.tsv)" "200 4800"
eq "small.hprof: every class the histogram names has its count in heap.tsv" \
	"$(join -t "$(printf '\t')" histo ours | awk -F'\t' '$2 != $3 { print $1, $2, $3 }')" \
	'jdk.internal.ref.CleanerImpl$PhantomCleanableRef 3 1'
# the histogram's java.lang.Class: the class objects, and the primitive
# types' mirrors, which the dump holds as instances of java.lang.Class
eq "small.hprof: java.lang.Class as the histogram counts it: the class objects and the mirrors" \
	"$(awk -F'\t' '$1 ~ /^java\.lang\.Class</ { n++ } $1 == "java.lang.Class" { n += $2 } END { print n }' small.tsv)" \
	"$(awk '$4 == "java.lang.Class" { print $2 + 0 }' "$TESTDATA/real/hprof/small_histo.txt")"

if have_fuse; then
	if tm_mount art.hprof "$T_TMP/mnt"; then
		# first: a pass that makes the scan's results as it goes
		eq "mount: merged.pftrace as cat gives it" "$(md5sum <"$T_TMP/mnt/merged.pftrace")" "$(md5sum <art.pftrace)"
		eq "mount: heap.tsv as cat gives it" "$(cat "$T_TMP/mnt/machines/machine0/heap.tsv")" "$(cat heap.expect)"
		eq "mount: its size as stat says" "$(stat -c %s "$T_TMP/mnt/machines/machine0/heap.tsv")" "$(wc -c <heap.expect)"
		if tm_umount "$T_TMP/mnt"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$T_TMP/mnt.log")"; fi
	else
		fail "mount art.hprof" "$(cat "$T_TMP/mnt.log")"
	fi
else
	skip "mount: heap.tsv" "/dev/fuse or fusermount3 is missing; the same file was checked through tracemount cat"
fi
# 4,000 classes in one line of inheritance, an instance of each: each
# class kept its whole chain of fields (K^2/2 for K classes: 8 million
# entries here, 1 GB for 16,000). It keeps its own now, and an instance's
# fields are walked up the chain. The plain build's peak RSS stays small
# (a sanitizer's own memory is not ours to bound); the references are the
# same either way (none: each instance holds one byte of its int field).
python3 - deep.hprof <<'EOF'
import struct, sys
K = 4000
out = bytearray(b"JAVA PROFILE 1.0.3\0" + struct.pack(">III", 4, 0, 0))
def rec(tag, body): out.extend(struct.pack(">BII", tag, 0, len(body)) + body)
I = lambda v: struct.pack(">I", v)
rec(0x01, I(0x10) + b"C")
rec(0x01, I(0x11) + b"f")
for k in range(K):
    rec(0x02, I(k + 1) + I(0x1000 + k) + I(0) + I(0x10))
seg = bytearray()
for k in range(K):
    seg += bytes([0x20]) + I(0x1000 + k) + I(0) + I(0x1000 + k - 1 if k else 0) + I(0) * 5 + I(8)
    seg += struct.pack(">HHH", 0, 0, 1) + I(0x11) + bytes([10])
for k in range(K):
    seg += bytes([0x21]) + I(0x100000 + k) + I(0) + I(0x1000 + k) + I(1) + b"\0"
rec(0x1C, bytes(seg))
open(sys.argv[1], "wb").write(out)
EOF
/usr/bin/time -f %M -o deep.rss "$tm" cat -o noindex deep.hprof metadata.json >deep.json
eq "deep classes: every instance read, each a field cut short" \
	"$(jq -c '.stats | [.hprof_class_counter, .hprof_instance_counter, .hprof_field_value_errors]' deep.json)" \
	'[4000,4000,4000]'
case $tm in
*/san/* | */tsan/* | */clang/*) skip "deep classes: peak RSS" "a sanitizer's build" ;;
*) ok "deep classes: peak RSS ($(tail -n 1 deep.rss) kB) under 30 MB" [ "$(tail -n 1 deep.rss)" -lt 30720 ] ;;
esac
exit $T_FAILED
