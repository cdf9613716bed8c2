#!/usr/bin/env bash
# tests/t_pack.sh - `tracemount pack` (issue 11): ZIP, TAR and tar.gz round
# trips (the written archive lists the manifest first, holds the inputs'
# bytes, and merges as the inputs do and as the same archive made by zip or
# tar does); validation before writing; the dry run's drop report and
# --strict; --no-validate; every error path leaves OUT as it was and no
# temporary file behind; packing a mount's files reproduces the mount.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
here=$(cd "$(dirname "$0")" && pwd)
cd "$T_TMP"

"$here/../testdata/demo/build.sh" "$T_TMP/ref.zip" >/dev/null || fail "build the demo archive"
mkdir cap && (cd cap && unzip -q ../ref.zip)
traces=(phone.pb phone.systrace server.json)
inputs=("${traces[@]/#/cap/}")
cp cap/perfetto_manifest.json m.json
(cd cap && tar -cf ../ref.tar perfetto_manifest.json "${traces[@]}" && tar -czf ../ref.tgz perfetto_manifest.json "${traces[@]}")
mkdir out

list_members() { # ARCHIVE: member names in archive order
	case $1 in
	*.zip) unzip -Z1 "$1" ;;
	*) tar --quoting-style=literal -tf "$1" ;;
	esac
}
member_bytes() { # ARCHIVE NAME
	case $1 in
	*.zip) unzip -p "$1" "$2" ;;
	*) tar -xOf "$1" "$2" ;;
	esac
}
# no_leftovers NAME: out/ holds exactly what it should (no temporary file).
no_leftovers() {
	eq "$1: no temporary file left" "$(ls -A out | grep -c '^\.')" 0
}

for ext in zip tar tar.gz tgz; do
	o=out/cap.$ext
	case $ext in zip) ref=ref.zip ;; tar) ref=ref.tar ;; *) ref=ref.tgz ;; esac
	sum=$("$tm" pack -o "$o" --manifest m.json "${inputs[@]}" 2>pack.err); rc=$?
	eq "$ext: pack exits 0" "$rc" 0
	eq "$ext: nothing dropped, nothing on stderr" "$(cat pack.err)" ""
	eq "$ext: the dry run's summary" "$sum" \
		"$o: ok: 3 trace files (1 json, 1 systrace, 1 proto), manifest perfetto_manifest.json, 2 machines, 12 events placed, trace time BOOTTIME"
	eq "$ext: the manifest first, then the inputs in order" "$(list_members "$o")" \
		"$(printf '%s\n' perfetto_manifest.json "${traces[@]}")"
	ok "$ext: the manifest's bytes" cmp <(member_bytes "$o" perfetto_manifest.json) m.json
	for f in "${traces[@]}"; do
		ok "$ext: bytes of $f" cmp <(member_bytes "$o" "$f") "cap/$f"
	done
	# The written archive merges as zip/tar's own archive of the same files
	# (the containers' sizes differ: compression, TAR padding).
	strip='del(.archive) | .files |= map(if .type == "zip" or .type == "tar" or .type == "gzip" then del(.size) else . end)'
	eq "$ext: metadata.json equals that of $ref" "$("$tm" cat "$o" metadata.json | jq -S "$strip")" \
		"$("$tm" cat "$ref" metadata.json | jq -S "$strip")"
	for f in merged.pftrace timeline.tsv perfetto_manifest.json; do
		ok "$ext: $f equals that of $ref" cmp <("$tm" cat "$o" "$f") <("$tm" cat "$ref" "$f")
	done
	no_leftovers "$ext"
done
# ZIP and TAR hold the inputs as the loose mount does: the same merge.
for ext in zip tar; do
	ok "$ext: merged.pftrace equals the loose inputs'" cmp <("$tm" cat out/cap.$ext merged.pftrace) \
		<("$tm" cat -o manifest=m.json "${inputs[@]}" merged.pftrace)
done

# A directory: members named relative to it, sorted; long and non-ASCII
# names survive (TAR: GNU long names, which the reference reads).
long=$(printf 'L%.0s' $(seq 150))
mkdir -p tree/$long tree/sub
cp cap/server.json "tree/$long/x.json"
cp cap/phone.systrace "tree/sub/ünï.systrace"
cp cap/phone.pb tree/
for ext in zip tar tgz; do
	o=out/tree.$ext
	ok "directory, $ext: pack" "$tm" pack -o "$o" tree
	eq "directory, $ext: names relative to it" "$(list_members "$o")" "$(printf '%s\n' "$long/x.json" phone.pb "sub/ünï.systrace")"
	eq "directory, $ext: the merge's member names" "$("$tm" cat "$o" metadata.json | jq -c '[.files[] | select(.path != null and .path != "") | .path]')" \
		"[\"$long/x.json\",\"phone.pb\",\"sub/ünï.systrace\"]"
	ok "directory, $ext: timeline.tsv equals the directory's" cmp <("$tm" cat "$o" timeline.tsv) <("$tm" cat tree timeline.tsv)
done
# ZIP and TAR members get the ids the directory's members have (a tar.gz
# has one file more, its inner stream): the same merged.pftrace bytes.
for ext in zip tar; do
	ok "directory, $ext: merged.pftrace equals the directory's" cmp <("$tm" cat out/tree.$ext merged.pftrace) \
		<("$tm" cat tree merged.pftrace)
done

# One archive input is a member, not unpacked.
ok "an archive input: pack" "$tm" pack -o out/nested.zip ref.zip
eq "an archive input is one member" "$(list_members out/nested.zip)" "ref.zip"
ok "an archive input: its bytes" cmp <(member_bytes out/nested.zip ref.zip) ref.zip
# A manifest among the inputs keeps its place.
printf '%s\n' '{"perfetto_manifest": {"version": 1, "files": [{"path": "phone.pb", "machine": {"name": "p"}}]}}' >names.json
ok "a manifest input: pack" "$tm" pack -o out/inorder.zip cap/phone.pb names.json
eq "a manifest input keeps its place" "$(list_members out/inorder.zip | tr '\n' ' ')" "phone.pb names.json "

# The dry run: drops are reported per file and reason (spec s11: a pinned
# JSON moved before 0 loses its slice), and do not fail without --strict.
cp "$here/../testdata/conformance/a_slice.json" a.json
cp "$here/../testdata/conformance/b_slice.json" b.json
cp "$here/conformance/s11_pin_negative_offset_dropped/meta.json" neg.json
sum=$("$tm" pack -o out/neg.zip --manifest neg.json a.json b.json 2>pack.err); rc=$?
eq "drops: exit 0 without --strict" "$rc" 0
eq "drops: one line per file and reason" "$(cat pack.err)" "1 event of b.json dropped: trace_sorter_negative_timestamp_dropped"
eq "drops: the summary" "$sum" "out/neg.zip: ok: 2 trace files (2 json), manifest perfetto_manifest.json, 1 machine, 1 event placed, trace time TRACE_FILE"
eq "drops: the archive is written" "$(list_members out/neg.zip | tr '\n' ' ')" "perfetto_manifest.json a.json b.json "
eq "drops: the same count as metadata.json" "$("$tm" cat out/neg.zip metadata.json | jq -c '.files[] | select(.path == "b.json") | .drops')" \
	'{"trace_sorter_negative_timestamp_dropped":1}'
echo old >out/strict.zip
sum=$("$tm" pack --strict -o out/strict.zip --manifest neg.json a.json b.json 2>pack.err); rc=$?
eq "--strict: a drop exits 1" "$rc" 1
eq "--strict: the report and why" "$(cat pack.err)" "$(printf '%s\n' "1 event of b.json dropped: trace_sorter_negative_timestamp_dropped" \
	"tracemount: pack: --strict: 1 event dropped, out/strict.zip not written")"
eq "--strict: nothing on stdout" "$sum" ""
eq "--strict: OUT is left as it was" "$(cat out/strict.zip)" old
no_leftovers "--strict"
ok "--strict: no drop, exit 0" "$tm" pack --strict -o out/clean.zip --manifest m.json "${inputs[@]}"
sum=$("$tm" pack --no-validate --strict -o out/nov.tar --manifest neg.json a.json b.json 2>pack.err); rc=$?
eq "--no-validate: no dry run, exit 0" "$rc/$(cat pack.err)" "0/"
eq "--no-validate: says so" "$sum" "out/nov.tar: 3 members written, not validated"
eq "--no-validate: the archive is written" "$(list_members out/nov.tar | tr '\n' ' ')" "perfetto_manifest.json a.json b.json "

# Errors: exit 1, one line, OUT left as it was, no temporary file.
expect_error() { # NAME EXPECTED COMMAND...
	local name=$1 want=$2 err rc
	shift 2
	echo old >out/keep.zip
	err=$("$@" 2>&1 >/dev/null); rc=$?
	eq "$name" "$rc/$err" "1/$want"
	eq "$name: OUT is left as it was" "$(cat out/keep.zip)" old
	no_leftovers "$name"
}
printf '%s\n' '{"perfetto_manifest": {"version": 1, "files": [{"path": "phone.pb"}, {"path": "gpu.json"}]}}' >unknown.json
expect_error "a manifest path that names no input" "tracemount: pack: the manifest's files[].path 'gpu.json' names no input" \
	"$tm" pack -o out/keep.zip --manifest unknown.json "${inputs[@]}"
expect_error "a manifest input's path that names no input" "tracemount: pack: the manifest's files[].path 'gpu.json' names no input" \
	"$tm" pack -o out/keep.zip unknown.json "${inputs[@]}"
(cd cap && zip -q -X ../noman.zip "${traces[@]}")
ok "a manifest path may name a member of an archive input" "$tm" pack -o out/inner.zip --manifest names.json noman.zip
printf '{"perfetto_manifest": {"version": 1.0}}\n' >bad.json
expect_error "a bad manifest: the exact error" "perfetto_manifest: version must be an integer" \
	"$tm" pack -o out/keep.zip --manifest bad.json "${inputs[@]}"
expect_error "--manifest and a manifest among the inputs" "multiple perfetto_manifest files in archive" \
	"$tm" pack -o out/keep.zip --manifest m.json cap
expect_error "--manifest that is no manifest" \
	"tracemount: cap/server.json: not a perfetto_manifest (its first key must be \"perfetto_manifest\", spec/manifest.md §2)" \
	"$tm" pack -o out/keep.zip --manifest cap/server.json cap/phone.pb
mkdir other && cp cap/phone.pb other/
expect_error "two inputs with one member name" \
	"tracemount: two inputs give the member name 'phone.pb': cap/phone.pb and other/phone.pb" \
	"$tm" pack -o out/keep.zip cap/phone.pb other/phone.pb
expect_error "a missing input" "tracemount: nope.json: No such file or directory" "$tm" pack -o out/keep.zip cap/phone.pb nope.json
: >empty.json
expect_error "an input the merge refuses" "Unknown trace type provided (ERR:fmt)" "$tm" pack -o out/keep.zip cap/phone.pb empty.json
# An error only the scan finds: caught by the dry run, before the rename
# (spec c23: a `machine` override on a proto with packets of machine 7).
bash "$here/tools/encode_fixtures.sh" fixtures >/dev/null
cat fixtures/solo.pb fixtures/m7_process.pb >m7.pb
printf '%s\n' '{"perfetto_manifest": {"version": 1, "files": [{"path": "m7.pb", "machine": {"name": "vm"}}]}}' >m7.json
expect_error "an error found by the dry run" \
	"perfetto_manifest: a \`machine\` override attributes the file to one machine, but the file contains packets from multiple machines. Replace \`machine\` with a \`machines\` block that maps each embedded machine_id to a named machine, e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}]." \
	"$tm" pack -o out/keep.zip --manifest m7.json m7.pb
ok "--no-validate skips the dry run that would find it" "$tm" pack --no-validate -o out/m7.zip --manifest m7.json m7.pb
expect_error "OUT in a missing directory" "tracemount: pack: nodir/x.zip: No such file or directory" \
	"$tm" pack -o nodir/x.zip cap/phone.pb
mkdir out/adir.zip
err=$("$tm" pack -o out/adir.zip cap/phone.pb 2>&1); rc=$?
eq "OUT that is a directory" "$rc/$err" "1/tracemount: pack: out/adir.zip: Is a directory"
rmdir out/adir.zip
no_leftovers "OUT that is a directory"

# Usage errors: exit 2, nothing written.
usage() { # NAME EXPECTED-FIRST-LINE ARGS...
	local name=$1 want=$2 err rc
	shift 2
	err=$("$tm" pack "$@" 2>&1); rc=$?
	eq "usage: $name" "$rc/$(head -n 1 <<<"$err")" "2/$want"
}
usage "no -o" "tracemount: pack: expected -o OUT" cap/phone.pb
usage "no input" "tracemount: pack: expected INPUT..." -o out/x.zip
usage "an unknown suffix" "tracemount: pack: OUT must end in .zip, .tar, .tar.gz or .tgz" -o out/x.rar cap/phone.pb
usage "-o twice" "tracemount: pack: -o OUT given twice" -o out/x.zip -o out/y.zip cap/phone.pb
usage "--manifest twice" "tracemount: pack: --manifest given twice" -o out/x.zip --manifest m.json --manifest m.json cap/phone.pb
usage "--manifest without a value" "tracemount: pack: option '--manifest' needs a value" -o out/x.zip cap/phone.pb --manifest
usage "-o without a value" "tracemount: pack: option '-o' needs a value" -o
usage "an unknown option" "tracemount: pack: unknown option '--fast'" --fast -o out/x.zip cap/phone.pb
eq "usage errors write nothing" "$(ls out | grep -c '^[xy]\.')" 0
out=$("$tm" pack --help); rc=$?
eq "pack --help" "$rc/$(head -n 1 <<<"$out")" "0/usage: tracemount INPUT... MOUNTPOINT [-f] [-d] [-s] [-o OPTION[,OPTION...]]"

# perfetto_manifest.json is the manifest in effect: packed with the traces
# it reproduces the merge. With a manifest given, exactly; without one, the
# effective manifest gives the same events at the same times on the same
# machines (tracemount(1), "Effective manifest": file ids move by one for
# the manifest member, and trace time becomes the manifest's).
"$tm" cat -o manifest=m.json "${inputs[@]}" perfetto_manifest.json >given.json
ok "manifest in effect: pack" "$tm" pack -o out/given.zip --manifest given.json "${inputs[@]}"
ok "manifest in effect: the same merged.pftrace" cmp <("$tm" cat out/given.zip merged.pftrace) \
	<("$tm" cat -o manifest=m.json "${inputs[@]}" merged.pftrace)
"$tm" cat "${inputs[@]}" perfetto_manifest.json >effective.json
ok "effective manifest: pack" "$tm" pack -o out/again.zip --manifest effective.json "${inputs[@]}"
ok "effective manifest: the same timeline" cmp <("$tm" cat out/again.zip timeline.tsv) <("$tm" cat "${inputs[@]}" timeline.tsv)
eq "effective manifest: the same machines and trace time" \
	"$("$tm" cat out/again.zip metadata.json | jq -c '[.machines[].name, .trace_time.clock, .bounds]')" \
	"$("$tm" cat "${inputs[@]}" metadata.json | jq -c '[.machines[].name, .trace_time.clock, .bounds]')"

if [ -n "${TM_NO_FUSE:-}" ] || ! have_fuse; then
	skip "pack of a mount's files" "no FUSE here"
	exit 0
fi
# A mount's files/ (its manifest among them) pack into an archive that
# merges exactly as the mount; without a manifest, its files/ and its
# perfetto_manifest.json give the same events.
m=$T_TMP/mnt.pack
if tm_mount_args "$m" -o manifest=m.json "${inputs[@]}" "$m"; then
	ok "mount: pack its files/" "$tm" pack -o out/frommount.zip "$m/files"
	ok "mount: the packed archive merges as the mount" cmp <("$tm" cat out/frommount.zip merged.pftrace) "$m/merged.pftrace"
	strip='del(.archive) | .files[0] |= del(.type, .size)'
	ok "mount: the same metadata.json but the archive" cmp <("$tm" cat out/frommount.zip metadata.json | jq -S "$strip") \
		<(jq -S "$strip" "$m/metadata.json")
	if tm_umount "$m"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$m.log")"; fi
else
	fail "mount for pack" "$(cat "$m.log")"
fi
m=$T_TMP/mnt.pack2
if tm_mount_args "$m" "${inputs[@]}" "$m"; then
	ok "mount without a manifest: pack files/ with perfetto_manifest.json" \
		"$tm" pack -o out/frommount2.zip --manifest "$m/perfetto_manifest.json" "$m/files"
	ok "mount without a manifest: the same timeline" cmp <("$tm" cat out/frommount2.zip timeline.tsv) "$m/timeline.tsv"
	if tm_umount "$m"; then pass "mount without a manifest: clean unmount"; else fail "mount without a manifest: clean unmount" "$(cat "$m.log")"; fi
else
	fail "mount for pack, no manifest" "$(cat "$m.log")"
fi
grep -qs " $T_TMP/mnt.pack" /proc/mounts && fail "nothing left mounted" || pass "nothing left mounted"
