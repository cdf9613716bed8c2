#!/usr/bin/env bash
# tests/t_inputs.sh - several inputs (issue 11): loose files and a
# directory merge exactly as the archive that packs them (metadata.json,
# merged.pftrace, timeline.tsv); -o manifest=FILE is a manifest packed
# first; every error path; a FUSE mount of several inputs (skipped without
# /dev/fuse or with TM_NO_FUSE=1; unmounted on every path by lib.sh's trap).
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
here=$(cd "$(dirname "$0")" && pwd)
cd "$T_TMP"

# The demo capture as loose files: a manifest, a proto, systrace, JSON.
"$here/../testdata/demo/build.sh" "$T_TMP/ref.zip" >/dev/null || fail "build the demo archive"
mkdir cap && (cd cap && unzip -q ../ref.zip)
members=(perfetto_manifest.json phone.pb phone.systrace server.json)
loose=("${members[@]/#/cap/}")

# same_merge NAME A... -- B...: the merge of operands A equals the merge of
# B: metadata.json but for `archive` and file 0's type and size, and
# merged.pftrace, timeline.tsv, perfetto_manifest.json and graph.dot bytes.
same_merge() {
	local name=$1 a=() b=() f
	shift
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	local strip='del(.archive) | .files[0] |= del(.type, .size)'
	ok "$name: merges" "$tm" check "${a[@]}"
	eq "$name: metadata.json" "$("$tm" cat "${a[@]}" metadata.json | jq -S "$strip")" \
		"$("$tm" cat "${b[@]}" metadata.json | jq -S "$strip")"
	for f in merged.pftrace timeline.tsv perfetto_manifest.json clocks/graph.dot; do
		ok "$name: $f bytes" cmp <("$tm" cat "${a[@]}" "$f") <("$tm" cat "${b[@]}" "$f")
	done
}

# Loose files, in the order the archive holds them.
same_merge "loose files = their zip" "${loose[@]}" -- ref.zip
meta=$("$tm" cat "${loose[@]}" metadata.json)
eq "loose files: archive lists the inputs" "$(jq -c .archive <<<"$meta")" \
	'["cap/perfetto_manifest.json","cap/phone.pb","cap/phone.systrace","cap/server.json"]'
eq "loose files: file 0 is the archive holding them" "$(jq -c '.files[0] | [.id, .path, .type, .size, .parent]' <<<"$meta")" \
	'[0,null,"inputs",null,null]'
eq "loose files: members by base name, ids in the order given" "$(jq -c '[.files[1:][] | [.id, .path, .parent]]' <<<"$meta")" \
	'[[1,"perfetto_manifest.json",0],[2,"phone.pb",0],[3,"phone.systrace",0],[4,"server.json",0]]'
eq "loose files: the zip's metadata names the zip" "$("$tm" cat ref.zip metadata.json | jq -c '[.archive, .files[0].type]')" '["ref.zip","zip"]'
eq "loose files: files/ shows the members" "$("$tm" ls "${loose[@]}" files)" "$(printf '%s\n' "${members[@]}")"
for f in "${members[@]}"; do
	ok "loose files: files/$f is the file's bytes" cmp <("$tm" cat "${loose[@]}" "files/$f") "cap/$f"
done
eq "loose files: check summary" "$("$tm" check "${loose[@]}")" \
	"${loose[*]}: ok: 3 trace files (1 json, 1 systrace, 1 proto), manifest perfetto_manifest.json, 2 machines, 12 events placed, trace time BOOTTIME"

# Another order gives other ids, as another zip would.
(cd cap && zip -q -X ../reordered.zip server.json phone.pb perfetto_manifest.json phone.systrace)
same_merge "loose files in another order = that zip" cap/server.json cap/phone.pb cap/perfetto_manifest.json cap/phone.systrace -- \
	reordered.zip

# A directory: its files, sorted by path, named relative to it.
same_merge "a directory = the zip of its files" cap -- ref.zip
eq "a directory: archive is the list of inputs" "$("$tm" cat cap metadata.json | jq -c .archive)" '["cap"]'
eq "a directory with a trailing slash names the same members" "$("$tm" cat cap/ metadata.json | jq -c '[.files[].path]')" \
	'[null,"perfetto_manifest.json","phone.pb","phone.systrace","server.json"]'

# Subdirectories, hidden entries, a symbolic link, a FIFO.
mkdir -p tree/sub tree/.git tree/deeper/.cache
cp cap/phone.pb tree/
cp cap/server.json tree/sub/
cp cap/server.json tree/.hidden.json
cp cap/server.json tree/.git/objects.json
cp cap/server.json tree/deeper/.cache/x.json
ln -s ../cap/phone.systrace tree/link.systrace
mkfifo tree/pipe
eq "a tree: regular files by sorted path; hidden, FIFOs skipped; links followed" \
	"$("$tm" cat tree metadata.json | jq -c '[[.files[].path], .ignored]')" \
	'[[null,"link.systrace","phone.pb","sub/server.json"],[]]'
eq "a tree: files/ has the subdirectory" "$("$tm" ls tree files/sub)" "server.json"
ok "a tree: a linked file's bytes" cmp <("$tm" cat tree files/link.systrace) cap/phone.systrace
mkdir -p flat/sub && cp cap/phone.systrace flat/link.systrace && cp cap/phone.pb flat/ && cp cap/server.json flat/sub/
mkdir treeman
printf '%s\n' '{"perfetto_manifest": {"version": 1, "files": [{"path": "sub/server.json", "machine": {"name": "server"}}]}}' \
	>treeman/perfetto_manifest.json
cp treeman/perfetto_manifest.json flat/
(cd flat && zip -q -X ../tree.zip link.systrace phone.pb sub/server.json)
(cd flat && zip -q -X ../tree_manifest.zip link.systrace phone.pb sub/server.json perfetto_manifest.json)
same_merge "a tree = the zip of its files" tree -- tree.zip
same_merge "a directory then a file = one zip" tree treeman/perfetto_manifest.json -- tree_manifest.zip
eq "a directory then a file: the manifest names a file below the directory" \
	"$("$tm" cat tree treeman/perfetto_manifest.json metadata.json | jq -c '[.machines[].name]')" '["server",null]'

# -o manifest=FILE: the manifest packed first, named perfetto_manifest.json.
# m.json pins server.json to phone.pb (so both must be inputs); names.json
# only names machines.
cp cap/perfetto_manifest.json m.json
printf '%s\n' '{"perfetto_manifest": {"version": 1, "files": [{"path": "phone.pb", "machine": {"name": "phone"}},' \
	'{"path": "server.json", "machine": {"name": "server"}}]}}' >names.json
same_merge "-o manifest=FILE = the zip with that manifest first" -o manifest=m.json cap/phone.pb cap/phone.systrace cap/server.json -- ref.zip
eq "-o manifest=FILE shows under files/ as perfetto_manifest.json" \
	"$("$tm" ls -o manifest=m.json cap/phone.pb cap/server.json files)" "$(printf 'perfetto_manifest.json\nphone.pb\nserver.json')"
ok "-o manifest=FILE: its bytes" cmp <("$tm" cat -o manifest=names.json cap/phone.pb files/perfetto_manifest.json) names.json
ok "-o manifest=FILE may be a pipe" cmp <("$tm" cat -o manifest=<(cat m.json) cap/phone.pb cap/phone.systrace cap/server.json merged.pftrace) \
	<("$tm" cat ref.zip merged.pftrace)
eq "-o manifest=FILE: perfetto_manifest.json is the manifest in effect" \
	"$("$tm" cat -o manifest=m.json cap/phone.pb cap/phone.systrace cap/server.json perfetto_manifest.json | jq -c .perfetto_manifest.attributes)" \
	'{"benchmark":"app_startup","run_id":42}'
eq "-o manifest=FILE with one trace file is a merge of two members" \
	"$("$tm" cat -o manifest=names.json cap/server.json metadata.json | jq -c '[.files[] | [.path, .type]]')" \
	'[[null,"inputs"],["perfetto_manifest.json","perfetto_manifest"],["server.json","json"]]'
# One archive and -o manifest: the archive is a member, its members nested
# and matched by their bare names (manifest.md §3.4)...
(cd cap && zip -q -X ../noman.zip phone.pb phone.systrace server.json)
eq "-o manifest=FILE with an archive: the archive is a member" \
	"$("$tm" cat -o manifest=names.json noman.zip metadata.json | jq -c '[[.files[] | [.id, .path, .parent]], [.machines[].name]]')" \
	'[[[0,null,null],[1,"perfetto_manifest.json",0],[2,"noman.zip",0],[3,"phone.pb",2],[4,"phone.systrace",2],[5,"server.json",2]],["phone","server",null]]'
# ... which are listed only when the archive is processed, after the
# manifest: a pin to one of them cannot resolve, as in a packed archive.
expect_error() { # NAME EXPECTED COMMAND...
	local name=$1 want=$2 err rc
	shift 2
	err=$("$@" 2>&1 >/dev/null); rc=$?
	eq "$name" "$rc/$err" "1/$want"
}
expect_error "-o manifest=FILE pinning a member of an archive input" \
	"perfetto_manifest: clocks: could not resolve file 'server.json'. It must match the \`path\` of an entry in the \`files\` array." \
	"$tm" check -o manifest=m.json noman.zip

# One archive, one trace file: as they always were.
eq "one archive is opened as itself" "$("$tm" cat ref.zip metadata.json | jq -c '[.files[0].type, (.files | length)]')" '["zip",5]'
eq "one trace file is opened as itself" "$("$tm" cat cap/server.json metadata.json | jq -c '.archive, [.files[] | [.path, .type]]')" \
	"$(printf '"cap/server.json"\n[[null,"json"]]')"
# An archive among several inputs is a nested member.
eq "an archive among inputs is nested" "$("$tm" cat noman.zip names.json metadata.json | jq -c '[.files[] | [.id, .path, .type, .parent, .processing_order]]')" \
	'[[0,null,"inputs",null,0],[1,"noman.zip","zip",0,2],[2,"names.json","perfetto_manifest",0,1],[3,"phone.pb","proto",1,3],[4,"phone.systrace","systrace",1,4],[5,"server.json","json",1,5]]'

# ls and cat: with two operands or more the last is the PATH.
eq "ls of several inputs: the last operand is the PATH" "$("$tm" ls cap/phone.pb cap/server.json /)" \
	"$(printf 'clocks\nfiles\nmachines\nmerged.pftrace\nmetadata.json\nperfetto_manifest.json\ntimeline.tsv')"
err=$("$tm" ls cap/phone.pb cap/server.json 2>&1); rc=$?
eq "ls a.pb b.json lists path b.json of a.pb" "$rc/$err" "1/tracemount: ls: cap/server.json: No such file or directory"
ok "ls -o manifest=FILE, with -l after the operands" "$tm" ls cap/phone.pb -o manifest=names.json files -l

# Errors: each exits 1 with one line that names the culprit.
mkdir other && cp cap/phone.pb other/
expect_error "two files with one member name" \
	"tracemount: two inputs give the member name 'phone.pb': cap/phone.pb and other/phone.pb" "$tm" check cap/phone.pb other/phone.pb
expect_error "a file and a directory's file with one member name" \
	"tracemount: two inputs give the member name 'phone.pb': cap/phone.pb and other/phone.pb" "$tm" check cap/phone.pb other
expect_error "the first clash in listing order is named" \
	"tracemount: two inputs give the member name 'phone.pb': cap/phone.pb and other/phone.pb" "$tm" check cap other cap/server.json
expect_error "-o manifest=FILE and a manifest among the inputs" \
	"multiple perfetto_manifest files in archive" "$tm" check -o manifest=m.json cap/phone.pb cap/server.json other/../m.json
expect_error "-o manifest=FILE and an input perfetto_manifest.json that is one" \
	"multiple perfetto_manifest files in archive" "$tm" check -o manifest=m.json cap/perfetto_manifest.json cap/phone.pb
expect_error "-o manifest=FILE and a directory holding a manifest" \
	"multiple perfetto_manifest files in archive" "$tm" check -o manifest=m.json cap
mkdir named && cp cap/server.json named/perfetto_manifest.json
expect_error "-o manifest=FILE and a trace named perfetto_manifest.json" \
	"tracemount: two inputs give the member name 'perfetto_manifest.json': -o manifest=m.json and named/perfetto_manifest.json" \
	"$tm" check -o manifest=m.json named/perfetto_manifest.json
expect_error "-o manifest=FILE that is not a manifest" \
	"tracemount: cap/server.json: not a perfetto_manifest (its first key must be \"perfetto_manifest\", spec/manifest.md §2)" \
	"$tm" check -o manifest=cap/server.json cap/phone.pb
printf '{"perfetto_manifest": {"version": 1.0}}\n' >bad.json
expect_error "-o manifest=FILE: the exact manifest error" "perfetto_manifest: version must be an integer" \
	"$tm" check -o manifest=bad.json cap/phone.pb
printf '{"perfetto_manifest": {"version": 1, "trace_time": {"clock": "BOOTTIME", "file": "nope.pb"}}}\n' >tt.json
expect_error "-o manifest=FILE: an application error" \
	"perfetto_manifest: trace_time: file names unknown file 'nope.pb'. It must match the \`path\` of an entry in the \`files\` array." \
	"$tm" check -o manifest=tt.json cap/phone.pb
expect_error "-o manifest=FILE that does not exist" "tracemount: nope.json: No such file or directory" \
	"$tm" check -o manifest=nope.json cap/phone.pb
expect_error "-o manifest=FILE that is a directory" "tracemount: cap: Is a directory" "$tm" check -o manifest=cap cap/phone.pb
expect_error "an input that does not exist" "tracemount: nope.pb: No such file or directory" "$tm" check cap/phone.pb nope.pb
mkfifo fifo
expect_error "an input that is a FIFO" "tracemount: fifo: not a regular file or directory" "$tm" check cap/phone.pb fifo
: >empty.json
expect_error "an empty input: the reference's error" "Unknown trace type provided (ERR:fmt)" "$tm" check cap/phone.pb empty.json
# tracemount(1), INPUTS: zip -r writes a directory entry, which fails the
# merge as in the reference (conformance s01c); zip -r -D writes none
mkdir -p zd/d && cp cap/phone.pb zd/d/
(cd zd && zip -q -r ../zd_r.zip d && zip -q -r -D ../zd_rd.zip d)
expect_error "zip -r: its directory entry is of no type" "Unknown trace type provided (ERR:fmt)" "$tm" check zd_r.zip
ok "zip -r -D: no directory entry, merged" "$tm" check zd_rd.zip
mkdir gone && ln -s ../nowhere gone/dangling.json
expect_error "a dangling link in a directory" "tracemount: gone/dangling.json: No such file or directory" "$tm" check gone
for c in ls cat check; do
	"$tm" $c -o fsname=x cap/phone.pb / >/dev/null 2>&1; eq "$c: -o other than manifest= is a usage error" $? 2
	"$tm" $c -o manifest=m.json -o manifest=m.json cap/phone.pb / >/dev/null 2>&1
	eq "$c: -o manifest= twice is a usage error" $? 2
	"$tm" $c -o >/dev/null 2>&1; eq "$c: -o without a value is a usage error" $? 2
done
mkdir -p loopy/a && ln -s .. loopy/a/up && cp cap/server.json loopy/a/
eq "a link back up a directory is not followed round" "$("$tm" cat loopy metadata.json | jq -c '[.files[].path]')" '[null,"a/server.json"]'
mkdir -p "deep/$(seq -s/ 1 70)"
expect_error "directories nested too deep" "tracemount: deep/$(seq -s/ 1 64): directories nested more than 64 deep" "$tm" check deep
mkdir void
eq "an empty directory merges nothing" "$("$tm" check void)" "void: ok: 0 trace files, no manifest, 0 machines, 0 events placed, trace time TRACE_FILE"

if [ -n "${TM_NO_FUSE:-}" ] || ! have_fuse; then
	skip "a FUSE mount of several inputs" "no FUSE here"
	exit 0
fi

# A mount of several inputs, with -o manifest=FILE among FUSE options.
m=$T_TMP/mnt.multi
cp cap/phone.systrace live.systrace
if tm_mount_args "$m" cap/phone.pb live.systrace cap/server.json "$m" -o manifest=m.json,max_threads=4; then
	pass "mount of several inputs"
	eq "mount: ls files" "$(ls "$m/files")" "$(printf 'live.systrace\nperfetto_manifest.json\nphone.pb\nserver.json')"
	eq "mount: machines" "$(ls "$m/machines")" "$(printf 'machine0\nphone\nserver')"
	ok "mount: a member's bytes" cmp "$m/files/phone.pb" cap/phone.pb
	ok "mount: the manifest's bytes" cmp "$m/files/perfetto_manifest.json" m.json
	ok "mount: metadata.json equals tracemount cat" cmp "$m/metadata.json" \
		<("$tm" cat -o manifest=m.json cap/phone.pb live.systrace cap/server.json metadata.json)
	ok "mount: merged.pftrace equals tracemount cat" cmp "$m/merged.pftrace" \
		<("$tm" cat -o manifest=m.json cap/phone.pb live.systrace cap/server.json merged.pftrace)
	eq "mount: /proc/mounts names the first input and how many more" \
		"$(awk -v m="$m" '$2 == m { print $1 }' /proc/mounts)" "tracemount:phone.pb+2"
	# A file that changes under the mount is not served (the merge was
	# made from the old bytes): EIO, and the reason on the daemon's stderr.
	echo "  extra-1 (    1) [000] ...1     9.000000: tracing_mark_write: B|1|late" >>live.systrace
	out=$(cat "$m/files/live.systrace" 2>&1 >/dev/null)
	contains "mount: a changed input reads as EIO" "$out" "Input/output error"
	if tm_umount "$m"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$m.log")"; fi
	contains "mount: the daemon says which file changed" "$(cat "$m.log")" "live.systrace: the file changed since it was listed"
else
	fail "mount of several inputs" "$(cat "$m.log")"
fi
grep -qs " $m fuse" /proc/mounts && fail "nothing left mounted" || pass "nothing left mounted"

# Errors refuse the mount before FUSE is touched.
mkdir -p mnt.bad
err=$("$tm" -o manifest=bad.json cap/phone.pb mnt.bad 2>&1); rc=$?
eq "mount: a bad -o manifest refuses the mount" "$rc/$err" "1/perfetto_manifest: version must be an integer"
err=$("$tm" cap/phone.pb other/phone.pb mnt.bad 2>&1); rc=$?
eq "mount: duplicate member names refuse the mount" "$rc/$err" \
	"1/tracemount: two inputs give the member name 'phone.pb': cap/phone.pb and other/phone.pb"
grep -qs " $T_TMP/mnt.bad fuse" /proc/mounts && fail "mount: refused mounts leave nothing" || pass "mount: refused mounts leave nothing"

# Daemon mode changes directory to /: relative inputs must still read.
mkdir -p mnt.daemon
if "$tm" cap mnt.daemon; then
	T_MOUNTS+=("$T_TMP/mnt.daemon")
	ok "daemon mode: relative inputs read after the fork" cmp mnt.daemon/files/phone.systrace cap/phone.systrace
	ok "daemon mode: the merge runs" jq -e '.status == "ok"' mnt.daemon/metadata.json
	ok "daemon mode: unmount" fusermount3 -u mnt.daemon
else
	fail "daemon mode mount of a directory"
fi
