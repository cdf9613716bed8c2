#!/usr/bin/env bash
# tests/t_index.sh - the index cache (tracemount(1), INDEX CACHE): the scan's
# results kept in $XDG_CACHE_HOME/tracemount/ and used again, byte for byte,
# for unchanged inputs only; any change of the archive (even rewritten in
# place with its size and mtime kept) misses; a damaged, truncated, foreign
# or other-format file is ignored with one warning line naming it and why;
# a cache that cannot be written warns and changes nothing else; -o noindex
# and -o index=FILE for ls/cat/check and a mount; the sizes a generation
# pass found, answering stat without one. Whether the index answered is
# what `check` says on a terminal ("(from the index)"), read through
# script(1).
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
cd "$T_TMP"
cache=$XDG_CACHE_HOME/tracemount

# The summary `check` prints on a terminal: says whether the index answered.
loaded() { # check's arguments...
	if ! command -v script >/dev/null 2>&1; then echo "no script(1)"; return; fi
	local cmd
	printf -v cmd '%q ' "$tm" check "$@"
	script -qec "$cmd" /dev/null </dev/null | tr -d '\r' | sed -n 's/.*\(Trace loaded: .*\)/\1/p'
}
from_index() { case "$(loaded "$@")" in *"(from the index)") echo yes ;; *) echo no ;; esac; }

# A capture stored (not deflated) so that a rewrite in place keeps its size.
json() { printf '{"traceEvents":[{"pid":1,"tid":1,"ts":%d,"dur":5,"ph":"X","name":"%s"}]}\n' "$1" "$2"; }
mkdir -p src && json 1000 alpha >src/a.json && json 2000 bravo >src/b.json
printf '# tracer: nop\n#\n  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\n' >src/c.systrace
(cd src && zip -q -X -0 ../cap.zip a.json b.json c.systrace)

ref=$("$tm" cat -o noindex cap.zip metadata.json)
ok "noindex writes no index" test ! -e "$cache"
first=$("$tm" cat cap.zip metadata.json 2>err)
eq "first cat: the same metadata.json" "$first" "$ref"
eq "first cat: nothing on stderr" "$(cat err)" ""
eq "first cat: one index file in the cache" "$(ls "$cache" | grep -c '^cap\.zip-[0-9a-f]\{16\}\.idx$')" 1
idx=$(ls -d "$cache"/cap.zip-*.idx)
eq "the cache directory is private" "$(stat -c %a "$cache")" 700
second=$("$tm" cat cap.zip metadata.json 2>err)
eq "second cat: the same metadata.json" "$second" "$ref"
eq "second cat: nothing on stderr" "$(cat err)" ""
for f in clocks/graph.dot clocks/edges.csv machines/machine0/machine.json perfetto_manifest.json; do
	ok "from the index: $f is the scan's" cmp <("$tm" cat cap.zip "$f") <("$tm" cat -o noindex cap.zip "$f")
done
eq "from the index: ls machines" "$("$tm" ls cap.zip machines)" "$("$tm" ls -o noindex cap.zip machines)"
eq "from the index: check's summary" "$("$tm" check cap.zip)" "$("$tm" check -o noindex cap.zip)"
if command -v script >/dev/null 2>&1; then
	eq "check says the index answered" "$(from_index cap.zip)" yes
	eq "check with -o noindex scans" "$(from_index -o noindex cap.zip)" no
else
	skip "check says the index answered" "no script(1)"
fi
eq "the index file is not rewritten when it answered" "$(find "$cache" -newer "$idx" -name '*.idx' | wc -l)" 0

# A changed archive is never served stale: b.json gets another name and
# timestamp of the same length, the zip is rewritten in place (same inode,
# same size) and its mtime put back.
mtime=$(stat -c %Y cap.zip)
json 3000 delta >src/b.json
(cd src && zip -q -X -0 ../new.zip a.json b.json c.systrace)
eq "the rewritten zip has the same size" "$(stat -c %s new.zip)" "$(stat -c %s cap.zip)"
inode=$(stat -c %i cap.zip)
dd if=new.zip of=cap.zip conv=notrunc status=none
touch -d "@$mtime" cap.zip
eq "same inode and mtime" "$(stat -c '%i %Y' cap.zip)" "$inode $mtime"
meta=$("$tm" cat cap.zip metadata.json 2>err)
eq "changed in place: the new member's time" "$(jq -c '[.files[] | select(.path == "b.json") | .first_ts]' <<<"$meta")" "[3000000]"
eq "changed in place: the scan of the new bytes" "$meta" "$("$tm" cat -o noindex cap.zip metadata.json)"
eq "changed in place: nothing on stderr" "$(cat err)" ""
eq "the stale index was replaced, not added to" "$(ls "$cache" | wc -l)" 1
eq "touch alone misses too" "$(touch cap.zip; from_index cap.zip)" no
eq "and the next run hits" "$(from_index cap.zip)" yes
ref=$("$tm" cat -o noindex cap.zip metadata.json)

# Files that cannot be trusted: ignored with one line naming the file and
# the reason, the output unchanged, the file replaced.
cp "$idx" good.idx
damaged() { # name reason: the index is damaged by the caller first
	local out err
	out=$("$tm" cat cap.zip metadata.json 2>err); err=$(cat err)
	eq "$1: metadata.json still right" "$out" "$ref"
	eq "$1: one warning naming the file and why" "$err" "tracemount: index $idx: ignored: $2"
	eq "$1: replaced after the scan" "$("$tm" cat cap.zip metadata.json 2>&1 >/dev/null)" ""
}
printf 'X' | dd of="$idx" bs=1 seek=$(($(stat -c %s "$idx") / 2)) conv=notrunc status=none
damaged "a flipped byte" "checksum mismatch (damaged or truncated)"
head -c $(($(stat -c %s "$idx") - 7)) good.idx >"$idx"
damaged "a truncated file" "checksum mismatch (damaged or truncated)"
head -c 5 good.idx >"$idx"
damaged "a file cut in its header" "truncated"
: >"$idx"
damaged "an empty file" "truncated"
echo '{"not": "an index"}' >"$idx"
damaged "a foreign file" "not a tracemount index"
{ head -c 8 good.idx; printf '\007\0\0\0'; tail -c +13 good.idx; } >"$idx"
damaged "another format" "written in another format (7) by another tracemount"
rm -f "$idx" && mkdir "$idx"
out=$("$tm" cat cap.zip metadata.json 2>err)
eq "a directory in its place: metadata.json still right" "$out" "$ref"
contains "a directory in its place: warned" "$(cat err)" "tracemount: index $idx: "
rmdir "$idx"

# A cache that cannot be written: a warning, and everything else goes on.
out=$(XDG_CACHE_HOME=$T_TMP/cap.zip "$tm" cat cap.zip metadata.json 2>err); rc=$?
eq "unwritable cache: exit 0" "$rc" 0
eq "unwritable cache: metadata.json right" "$out" "$ref"
contains "unwritable cache: one warning" "$(cat err)" "tracemount: index $T_TMP/cap.zip/tracemount/cap.zip-"
contains "unwritable cache: says it was not written" "$(cat err)" ": not written: Not a directory"
eq "unwritable cache: one line" "$(wc -l <err)" 1
err=$(XDG_CACHE_HOME=$T_TMP/cap.zip "$tm" check cap.zip 2>&1 >/dev/null)
contains "unwritable cache: check warns too" "$err" "not written"

# -o index=FILE: that file, written then read.
"$tm" check -o index=mine.idx cap.zip >/dev/null
ok "-o index=FILE writes that file" test -s mine.idx
eq "-o index=FILE: the same metadata.json" "$("$tm" cat -o index=mine.idx cap.zip metadata.json)" "$ref"
if command -v script >/dev/null 2>&1; then
	eq "-o index=FILE answers" "$(from_index -o index=mine.idx cap.zip)" yes
else
	skip "-o index=FILE answers" "no script(1)"
fi
eq "-o index=FILE of other inputs: a silent miss" \
	"$("$tm" cat -o index=mine.idx src/a.json metadata.json 2>&1 >/dev/null)" ""
# A file the user names that holds something else (a trace, by mistake):
# ignored, and left as it is, not replaced; the cache's own are replaced.
cp src/a.json mistake.json
out=$("$tm" cat -o index=mistake.json cap.zip metadata.json 2>err)
eq "-o index=FILE that is no index: metadata.json right" "$out" "$ref"
ok "-o index=FILE that is no index: left as it was" cmp mistake.json src/a.json
eq "-o index=FILE that is no index: says so" "$(cat err)" \
	"tracemount: index mistake.json: ignored: not a tracemount index
tracemount: index mistake.json: not written: it holds something else, left as it is"
: >empty.idx
"$tm" check -o index=empty.idx cap.zip >/dev/null 2>&1
ok "-o index=FILE that is empty: written" test -s empty.idx
ok "-o index=FILE makes missing directories" "$tm" check -o index=sub/dir/x.idx cap.zip
ok "-o index=FILE: made" test -s sub/dir/x.idx
ok "ls takes -o noindex" "$tm" ls -o noindex cap.zip machines
err=$("$tm" cat -o index= cap.zip metadata.json 2>&1); rc=$?
eq "-o index= without a file is a usage error" "$rc" 2
contains "-o index= says what -o takes" "$err" "-o takes manifest=FILE, index=FILE or noindex"
err=$("$tm" check -o index=a -o index=b cap.zip 2>&1); rc=$?
eq "-o index=FILE twice is a usage error" "$rc/$(head -n 1 <<<"$err")" "2/tracemount: check: -o index=FILE given twice"
err=$("$tm" check -o nosuch cap.zip 2>&1); rc=$?
eq "an unknown -o is a usage error" "$rc" 2

# Several inputs: the members' identities and the manifest's content are
# the key.
mkdir -p run && json 10 one >run/x.json && json 20 two >run/y.json
ref2=$("$tm" cat -o noindex run metadata.json)
eq "a directory: first run" "$("$tm" cat run metadata.json)" "$ref2"
eq "a directory: second run" "$("$tm" cat run metadata.json)" "$ref2"
json 30 three >run/z.json
eq "a directory with a new file misses" \
	"$("$tm" cat run metadata.json | jq -c '[.files[].path]')" '[null,"x.json","y.json","z.json"]'
json 99 six >run/x.json
eq "a member rewritten misses" "$("$tm" cat run metadata.json | jq -c '[.files[1].first_ts]')" "[99000]"
printf '{"perfetto_manifest": {"version": 1, "attributes": {"run": 1}}}\n' >m.json
eq "-o manifest=FILE: first" "$("$tm" cat -o manifest=m.json run metadata.json | jq -c .attributes)" '{"run":1}'
printf '{"perfetto_manifest": {"version": 1, "attributes": {"run": 2}}}\n' >m.json
eq "-o manifest=FILE changed misses" "$("$tm" cat -o manifest=m.json run metadata.json | jq -c .attributes)" '{"run":2}'

# A merge that fails with an input error (a damaged member found by the
# scan) is kept with its error.
awk 'BEGIN { for (i = 0; i < 20000; i++)
	printf "  app-%d (%5d) [%03d] ...1 %d.%06d: tracing_mark_write: B|%d|slice_%d\n", i % 97, i % 997, i % 8, 1 + i / 1000000, i % 1000000, i % 997, i }' >dmg.systrace
zip -q -X dmg.zip dmg.systrace
printf '%064d' 0 | tr 0 '\377' | dd of=dmg.zip bs=1 seek=$(($(stat -c %s dmg.zip) / 2)) conv=notrunc status=none
bad1=$("$tm" cat dmg.zip metadata.json | jq -c '[.status, .error]')
bad2=$("$tm" cat dmg.zip metadata.json | jq -c '[.status, .error]')
contains "a failed merge: its error" "$bad1" '["error","'
eq "a failed merge reads the same from the index" "$bad2" "$bad1"
if command -v script >/dev/null 2>&1; then
	eq "a failed merge prints no summary on a terminal" "$(script -qec "$(printf '%q ' "$tm") check dmg.zip" /dev/null </dev/null | grep -c 'Trace loaded')" 0
fi

# The sizes of the generated files: kept with the scan's results after a
# generation pass, so that the next run answers stat (ls -l) without one.
# With $TMPDIR missing a generation pass cannot make its temporary files:
# a stat that still answers did not run one.
gone=$T_TMP/no-such-dir
lsl() { "$tm" ls -l -o index=sizes.idx "$@"; }
cold=$(lsl cap.zip)
contains "sizes: the first ls -l runs the pass" "$cold" "merged.pftrace"
# the root holds no table: a machine's ls -l runs the tables' pass
mach=$(lsl cap.zip machines/machine0)
contains "sizes: a machine's ls -l runs the tables' pass" "$mach" "threads.tsv"
err=$(TMPDIR=$gone "$tm" cat -o index=sizes.idx cap.zip merged.pftrace 2>&1 >/dev/null); rc=$?
eq "sizes: without \$TMPDIR the pass fails" "$rc" 1
contains "sizes: and says why" "$err" "cannot create a temporary file"
eq "sizes: the next ls -l answers from the index" "$(TMPDIR=$gone lsl cap.zip 2>&1)" "$cold"
eq "sizes: so does ls -l of a machine" "$(TMPDIR=$gone lsl cap.zip machines/machine0 2>&1)" "$mach"
for f in merged.pftrace timeline.tsv machines/machine0/merged.pftrace machines/machine0/slices.tsv \
	machines/machine0/threads.tsv machines/machine0/processes.tsv; do
	size=$(TMPDIR=$gone lsl cap.zip "${f%/*}" | awk -v n="${f##*/}" '$3 == n { print $2 }')
	[ "${f%/*}" = "$f" ] && size=$(TMPDIR=$gone lsl cap.zip | awk -v n="$f" '$3 == n { print $2 }')
	eq "sizes: $f's is its length" "$size" "$("$tm" cat -o noindex cap.zip "$f" | wc -c)"
done
eq "sizes: the bytes are the pass's" "$("$tm" cat -o index=sizes.idx cap.zip timeline.tsv | md5sum)" \
	"$("$tm" cat -o noindex cap.zip timeline.tsv | md5sum)"
# cat builds the one file asked for; each run adds its sizes to the index.
"$tm" cat -o index=one.idx cap.zip merged.pftrace >/dev/null
"$tm" cat -o index=one.idx cap.zip timeline.tsv >/dev/null
eq "sizes: cat's runs add up" "$(TMPDIR=$gone "$tm" ls -l -o index=one.idx cap.zip 2>&1)" "$cold"
# A changed archive misses: its sizes are not used either.
cp cap.zip cap2.zip
"$tm" ls -l -o index=cap2.idx cap2.zip >/dev/null
json 5000 a_much_longer_name_here >src/a.json
(cd src && zip -q -X -0 ../cap2.zip a.json b.json c.systrace)
out=$(TMPDIR=$gone "$tm" ls -l -o index=cap2.idx cap2.zip 2>&1); rc=$?
eq "sizes: a changed archive is not given the old sizes" "$(awk '$3 == "merged.pftrace" { print $2 }' <<<"$out")" ""
contains "sizes: its pass runs, and fails without \$TMPDIR" "$out" \
	"tracemount: ls: merged.pftrace: $gone/tracemount."
contains "sizes: the reason for the file with no size" "$out" "cannot create a temporary file: No such file or directory"
eq "sizes: ls -l exits 1 for it, as ls(1)" "$rc" 1
eq "sizes: but sizes of its own" \
	"$("$tm" ls -l -o index=cap2.idx cap2.zip | awk '$3 == "merged.pftrace" { print $2 }')" \
	"$("$tm" cat -o noindex cap2.zip merged.pftrace | wc -c)"

# pack's dry run reads a temporary file: it leaves nothing in the cache.
n=$(ls "$cache" | wc -l)
"$tm" pack -o packed.zip src/a.json src/c.systrace >/dev/null 2>&1
eq "pack leaves no index behind" "$(ls "$cache" | wc -l)" "$n"
eq "no temporary file is left in the cache" "$(ls -a "$cache" | grep -c 'idx\.')" 0

# A second mount answers from the index (the daemon's stderr has no warning).
if [ -z "${TM_NO_FUSE:-}" ] && have_fuse; then
	m=$T_TMP/mnt
	if tm_mount cap.zip "$m"; then
		ok "a mount: metadata.json" cmp "$m/metadata.json" <(printf '%s\n' "$ref")
		tm_umount "$m" || fail "a mount: clean unmount" "$(cat "$m.log")"
		eq "a mount: nothing on the daemon's stderr" "$(cat "$m.log")" ""
	else
		fail "a mount" "$(cat "$m.log")"
	fi
	# The daemon's stat answers from the index: with no $TMPDIR it can
	# build nothing, and its sizes are still there.
	m=$T_TMP/mnt4
	if TMPDIR=$gone tm_mount_args "$m" -o index="$T_TMP/sizes.idx" cap.zip "$m"; then
		eq "sizes through a mount: merged.pftrace" "$(stat -c %s "$m/merged.pftrace")" \
			"$("$tm" cat -o noindex cap.zip merged.pftrace | wc -c)"
		eq "sizes through a mount: a machine's threads.tsv" "$(stat -c %s "$m/machines/machine0/threads.tsv")" \
			"$("$tm" cat -o noindex cap.zip machines/machine0/threads.tsv | wc -c)"
		ok "sizes through a mount: reading still needs the pass" eval "! cat $m/timeline.tsv >/dev/null 2>&1"
		tm_umount "$m" || fail "sizes through a mount: clean unmount" "$(cat "$m.log")"
	else
		fail "sizes through a mount" "$(cat "$m.log")"
	fi
	m=$T_TMP/mnt2
	printf 'X' | dd of="$idx" bs=1 seek=$(($(stat -c %s "$idx") / 2)) conv=notrunc status=none
	if tm_mount_args "$m" cap.zip "$m"; then
		ok "a mount over a damaged index: metadata.json" cmp "$m/metadata.json" <(printf '%s\n' "$ref")
		tm_umount "$m" || fail "a mount over a damaged index: clean unmount" "$(cat "$m.log")"
		eq "a mount over a damaged index: the daemon says so" "$(cat "$m.log")" \
			"tracemount: index $idx: ignored: checksum mismatch (damaged or truncated)"
	else
		fail "a mount over a damaged index" "$(cat "$m.log")"
	fi
	m=$T_TMP/mnt3
	if tm_mount cap.zip "$m" -o noindex,index=/nonexistent/x.idx; then
		ok "-o noindex on a mount" cmp "$m/metadata.json" <(printf '%s\n' "$ref")
		tm_umount "$m" || fail "-o noindex on a mount: clean unmount" "$(cat "$m.log")"
		ok "-o noindex on a mount writes nothing" test ! -e /nonexistent/x.idx
	else
		fail "-o noindex on a mount" "$(cat "$m.log")"
	fi
else
	skip "index cache through a mount" "no FUSE here"
fi
