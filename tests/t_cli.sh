#!/usr/bin/env bash
# tests/t_cli.sh - the command line as a user meets it: --help, --version,
# exit codes, and `tracemount ls|cat|check` on good and bad archives.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
here=$(cd "$(dirname "$0")" && pwd)
cd "$T_TMP"

printf '{"traceEvents":[{"pid":10,"tid":10,"ts":2000,"dur":500,"ph":"X","name":"json_slice"}]}\n' >app.json
printf '# tracer: nop\n#\n  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\n' >sys.systrace
mkdir -p sub && cp app.json sub/nested.json
printf '{"perfetto_manifest": {"version": 1, "files": [{"path": "app.json", "machine": {"name": "phone"}}]}}\n' >meta.json
zip -q -X good.zip meta.json app.json sys.systrace sub/nested.json
printf '{"perfetto_manifest": {"version": 1.0}}\n' >bad.json
zip -q -X bad.zip bad.json app.json

out=$("$tm" --help); rc=$?
eq "help exits 0" "$rc" 0
contains "help names every command" "$out" "tracemount check [-o OPTION]... INPUT..."
contains "help documents ls -l" "$out" "tracemount ls [-l] [-o OPTION]... INPUT... [PATH]"
contains "help documents -o noindex" "$out" "-o noindex"
contains "help documents -o index=FILE" "$out" "-o index=FILE"
contains "help documents pack" "$out" "tracemount pack -o OUT [--manifest FILE] [--strict] [--no-validate] INPUT..."
out=$("$tm" --version); eq "version" "$out" "tracemount 0.1.0"

for c in ls cat check pack; do
	out=$("$tm" $c --help); rc=$?
	eq "$c --help exits 0" "$rc" 0
	contains "$c --help prints the usage" "$out" "usage: tracemount"
done

# Usage errors: exit 2 and a usage line on stderr, nothing else done.
"$tm" >/dev/null 2>&1; eq "no arguments is a usage error" $? 2
"$tm" cat good.zip >/dev/null 2>&1; eq "cat without a path is a usage error" $? 2
"$tm" check >/dev/null 2>&1; eq "check without an archive is a usage error" $? 2
err=$("$tm" check good.zip extra 2>&1); rc=$?
eq "check of two inputs opens both: a missing one exits 1" "$rc/$err" "1/tracemount: extra: No such file or directory"
err=$("$tm" ls -x good.zip 2>&1); rc=$?
eq "an unknown ls option exits 2" "$rc" 2
eq "an unknown ls option is named, with the usage" "$err" "$(printf '%s\n' "tracemount: ls: unknown option '-x'" \
	"usage: tracemount ls [-l] [-o OPTION]... INPUT... [PATH]" "Try 'tracemount --help' for more information.")"
mkdir -p mnt
err=$("$tm" good.zip 2>&1); rc=$?
eq "a mount without a mount point exits 2" "$rc" 2
contains "a mount without a mount point says so" "$err" "tracemount: expected INPUT... and MOUNTPOINT"
err=$("$tm" good.zip mnt extra 2>&1); rc=$?
eq "a mount with three operands mounts two inputs on the last" "$rc/$err" "1/tracemount: extra: No such file or directory"
"$tm" good.zip mnt -o no_such_option >/dev/null 2>&1; eq "an unknown mount option exits 2" $? 2
"$tm" good.zip mnt --no-such-option >/dev/null 2>&1; eq "an unknown long option exits 2" $? 2
out=$("$tm" good.zip mnt --version); rc=$?
eq "--version after the operands prints the version" "$out/$rc" "tracemount 0.1.0/0"
grep -qs " $T_TMP/mnt fuse" /proc/mounts && fail "usage errors mount nothing" || pass "usage errors mount nothing"
err=$("$tm" good.zip no/such/dir 2>&1); rc=$?
eq "a missing mount point exits 1" "$rc" 1
eq "a missing mount point is named" "$err" "tracemount: no/such/dir: No such file or directory"
err=$("$tm" good.zip app.json 2>&1); rc=$?
eq "a file as mount point exits 1" "$rc" 1
eq "a file as mount point is named" "$err" "tracemount: app.json: Not a directory"

out=$("$tm" check good.zip); rc=$?
eq "check ok exits 0" "$rc" 0
contains "check summarises" "$out" "3 trace files (2 json, 1 systrace), manifest meta.json"

err=$("$tm" check bad.zip 2>&1 >/dev/null); rc=$?
eq "check bad manifest exits 1" "$rc" 1
eq "check prints the exact manifest error" "$err" "perfetto_manifest: version must be an integer"

err=$("$tm" check missing.zip 2>&1); rc=$?
eq "check of a missing file exits 1" "$rc" 1
eq "the error names the file and the reason" "$err" "tracemount: missing.zip: No such file or directory"

# One stored member, no central directory, then garbage where the next
# local header should be (formats.md §2.1).
"$BUILD/tools/mkzip" one.zip app.json=app.json
head -c $((30 + 8 + $(stat -c %s app.json))) one.zip >corrupt.zip
printf 'garbage! this is not a local file header.' >>corrupt.zip
err=$("$tm" check corrupt.zip 2>&1); rc=$?
eq "a corrupt zip exits 1" "$rc" 1
# The reference reports the offset just past the 30-byte header it read.
eq "a corrupt zip gives the reference's one line" "$err" "Invalid signature found at offset 0x$(printf %x $((30 + 30 + 8 + $(stat -c %s app.json)))). Actual=0x62726167, expected=0x4034b50"

eq "ls root" "$("$tm" ls good.zip)" "$(printf 'clocks\nfiles\nmachines\nmerged.pftrace\nmetadata.json\nperfetto_manifest.json\ntimeline.tsv')"
eq "ls files" "$("$tm" ls good.zip files)" "$(printf 'meta.json\napp.json\nsys.systrace\nsub')"
eq "ls nested" "$("$tm" ls good.zip /files/sub)" "nested.json"
err=$("$tm" ls good.zip files/nope 2>&1); rc=$?
eq "ls of a missing path exits 1" "$rc" 1
eq "ls of a missing path says why" "$err" "tracemount: ls: files/nope: No such file or directory"
eq "ls of a file lists the operand" "$("$tm" ls good.zip files/app.json)" "files/app.json"
eq "ls -l: type, exact size, name" "$("$tm" ls -l good.zip files)" "$(printf -- '- %12d %s\n' \
	$(stat -c %s meta.json) meta.json $(stat -c %s app.json) app.json $(stat -c %s sys.systrace) sys.systrace;
	printf 'd %12d sub' 0)"
eq "ls -l of the root gives generated files their exact size" \
	"$("$tm" ls -l good.zip | awk '$3 == "metadata.json" { print $2 }')" "$("$tm" cat good.zip metadata.json | wc -c)"

ok "cat is byte-identical to the member" cmp <("$tm" cat good.zip files/sub/nested.json) sub/nested.json
# A generated file's bytes go to a file by sendfile and to a pipe by
# sendfile or by reading: the same bytes every way, and a failed write
# is an error with its reason.
"$tm" cat good.zip merged.pftrace >cat_file.pftrace
"$tm" cat good.zip merged.pftrace | cat >cat_pipe.pftrace
ok "cat of merged.pftrace: to a file as to a pipe" cmp cat_file.pftrace cat_pipe.pftrace
ok "cat of merged.pftrace to a file is all of it" test "$(stat -c %s cat_file.pftrace)" = \
	"$("$tm" ls -l good.zip | awk '$3 == "merged.pftrace" { print $2 }')"
"$tm" cat good.zip timeline.tsv >cat_file.tsv
ok "cat of timeline.tsv: to a file as to a pipe" cmp cat_file.tsv <("$tm" cat good.zip timeline.tsv | cat)
# The top-level timeline.tsv goes to standard output as it is made, with
# no temporary copy: under a file size limit far below its size (the pass
# keeps its order and sorts in memory at this size, and -o noindex writes
# no index) it still comes out whole, where a spooled copy would be cut
# off by SIGXFSZ. Its size is kept for the index as any pass's is.
{
	printf '['
	for i in $(seq 1 1200); do
		printf '%s{"ph":"X","pid":1,"tid":%d,"ts":%d,"dur":3,"name":"slice_%d","args":{"i":%d}}' \
			"$([ "$i" = 1 ] || echo ,)" $((i % 9 + 1)) $((i * 7919 % 5000)) "$i" "$i"
	done
	printf ']\n'
} >many.json
"$tm" cat -o noindex many.json timeline.tsv >many_whole.tsv
(ulimit -f 16 && exec "$tm" cat -o noindex many.json timeline.tsv) 2>limit.err | cat >many_limited.tsv
ok "timeline.tsv is far larger than the limit" test "$(stat -c %s many_whole.tsv)" -gt 65536
ok "cat of timeline.tsv under a 16 KiB file size limit is all of it" cmp many_whole.tsv many_limited.tsv
eq "and says nothing" "$(cat limit.err)" ""
"$tm" cat -o index="$PWD/many.idx" many.json timeline.tsv >/dev/null
eq "the streamed timeline.tsv's size is the index's" \
	"$("$tm" ls -l -o index="$PWD/many.idx" many.json | awk '$3 == "timeline.tsv" { print $2 }')" \
	"$(stat -c %s many_whole.tsv)"
out=$("$tm" cat good.zip timeline.tsv 2>cat_head.err | head -n 1)
eq "cat of timeline.tsv into head: the header line" "$out" "$(printf 'ts\tdur\tmachine\tfile\tkind\tcategory\tname\tdepth\tpid\ttid\ttrack\targs')"
eq "and no message" "$(cat cat_head.err)" ""
err=$("$tm" cat good.zip timeline.tsv 2>&1 >&-); rc=$?
eq "cat to a closed standard output exits 1 and says why" "$rc/$err" "1/tracemount: cat: write error: Bad file descriptor"
if [ -w /dev/full ]; then
	err=$("$tm" cat good.zip merged.pftrace 2>&1 >/dev/full); rc=$?
	eq "cat to a full device exits 1 and says why" "$rc/$err" "1/tracemount: cat: write error: No space left on device"
	err=$("$tm" cat good.zip timeline.tsv 2>&1 >/dev/full); rc=$?
	eq "cat of timeline.tsv to a full device exits 1 and says why" "$rc/$err" \
		"1/tracemount: cat: write error: No space left on device"
	err=$("$tm" cat good.zip files/app.json 2>&1 >/dev/full); rc=$?
	eq "cat of a member to a full device exits 1 and says why" "$rc/$err" \
		"1/tracemount: cat: write error: No space left on device"
else
	skip "cat to a full device" "no /dev/full"
fi
err=$("$tm" cat good.zip files 2>&1); rc=$?
eq "cat of a directory exits 1" "$rc" 1
eq "cat of a directory says why" "$err" "tracemount: cat: files: Is a directory"
err=$("$tm" cat good.zip files/x 2>&1); rc=$?
eq "cat of a missing path exits 1" "$rc" 1
eq "cat of a missing path names it" "$err" "tracemount: cat: files/x: No such file or directory"
err=$("$tm" cat good.zip files/app.json/x 2>&1)
eq "cat through a file says why" "$err" "tracemount: cat: files/app.json/x: Not a directory"
err=$("$tm" cat bad.zip files/app.json 2>&1); rc=$?
eq "cat refuses an archive that does not merge" "$rc/$err" "1/perfetto_manifest: version must be an integer"
meta=$("$tm" cat good.zip metadata.json)
eq "metadata status" "$(jq -r .status <<<"$meta")" ok
eq "metadata types" "$(jq -c '[.files[].type]' <<<"$meta")" '["zip","perfetto_manifest","json","systrace","json"]'
eq "metadata sizes are the member sizes" "$(jq '.files[] | select(.path=="sys.systrace") | .size' <<<"$meta")" "$(stat -c %s sys.systrace)"
eq "metadata manifest entry" "$(jq -c '.files[] | select(.path=="app.json") | .manifest_entry' <<<"$meta")" '{"path":"app.json","machine":{"name":"phone"}}'
eq "normalised manifest" "$("$tm" cat good.zip perfetto_manifest.json | jq -c .)" \
	'{"perfetto_manifest":{"version":1,"files":[{"path":"app.json","machine":{"name":"phone"}}]}}'

# A plain trace file and a gzip stream are archives too.
ok "a single JSON file" "$tm" check app.json
eq "files/ shows the single input" "$("$tm" ls app.json files)" "app.json"
gzip -c app.json >app.json.gz
eq "a gzip stream: the inner file is json" "$("$tm" cat app.json.gz metadata.json | jq -c '[.files[] | [.path, .type]]')" '[[null,"gzip"],["","json"]]'
tar -czf good.tgz meta.json app.json sys.systrace
eq "tar.gz lists the tar's members" "$("$tm" ls good.tgz files)" "$(printf 'meta.json\napp.json\nsys.systrace')"
ok "tar.gz member bytes" cmp <("$tm" cat good.tgz files/sys.systrace) sys.systrace
for c in bzip2 xz zstd; do
	tar -cf - app.json sys.systrace | $c -c >good.tar.$c
	ok "tar.$c member bytes" cmp <("$tm" cat good.tar.$c files/app.json) app.json
done

# The man page renders cleanly and documents every option and command.
man=$here/../man/tracemount.1
eq "man page renders without warnings" "$(groff -man -Tutf8 -ww "$man" 2>&1 >/dev/null)" ""
# the ASCII device warns of a byte the UTF-8 one sets silently: a form
# feed where an escape's \f was meant stood in the page unnoticed
eq "man page renders in ASCII without warnings" "$(groff -man -Tascii -ww "$man" 2>&1 >/dev/null)" ""
eq "man page source holds no control characters" "$(LC_ALL=C grep -c '[[:cntrl:]]' "$man")" "0"
# .BR and its kind join their arguments without spaces: prose after them
# on the same line would read 'CACHE).Memorystaysbounded'. Unhyphenated
# on wide lines, such a run shows as a long word, which English here has not.
eq "man page runs no words together" \
	"$(groff -man -Tascii -P-cbou -rHY=0 -rLL=200n "$man" 2>/dev/null | grep -oE '[a-z]{16,}' | head -n 3)" ""
page=$(MANWIDTH=100 man -l "$man" 2>/dev/null)
for w in "ls [-l] [-o OPTION]... INPUT... [PATH]" "cat [-o OPTION]... INPUT... PATH" \
	"check [-o OPTION]... INPUT..." "pack -o OUT [--manifest FILE] [--strict] [--no-validate] INPUT..." \
	"-o manifest=FILE" "-o index=FILE" "-o noindex" "INDEX CACHE" "PROGRESS" "Trace loaded:" \
	"--strict" "--no-validate" "INPUTS" "-f " "-d " "-s " "-o OPTIONS" "--help" "--version" \
	metadata.json perfetto_manifest.json "files/MEMBER" processing_order files_path manifest_entry ignored \
	"EXIT STATUS" "SUBCOMMANDS" "DIVERGENCES FROM PERFETTO" "%2E%2E"; do
	contains "man page documents '$w'" "$page" "$w"
done

# TAR links: a symlink stays a symlink, a hard link points at its target.
mkdir -p links/d && cp app.json links/d/app.json && ln -s d/app.json links/soft.json && ln links/d/app.json links/hard.json
(cd links && tar -cf ../links.tar d/app.json soft.json hard.json)
eq "tar symlink and hard link are skipped by the merge" "$("$tm" cat links.tar metadata.json | jq -c '[.ignored[] | .path]')" '["soft.json","hard.json"]'
ok "cat through a tar symlink's target" cmp <("$tm" cat links.tar files/d/app.json) app.json
ok "cat follows a tar symlink" cmp <("$tm" cat links.tar files/soft.json) app.json
ok "cat follows a tar hard link" cmp <("$tm" cat links.tar files/hard.json) app.json
eq "ls -l shows a link and its target" "$("$tm" ls -l links.tar files/soft.json)" \
	"$(printf 'l %12d files/soft.json -> d/app.json' 10)"
eq "ls follows a link to a file" "$("$tm" ls links.tar files/soft.json)" "files/soft.json"
# Links the kernel would follow through: a directory link in the middle of
# a path, "..", a chain, a loop, and a target outside the archive.
mkdir -p more && cd more
mkdir -p real && cp ../app.json real/app.json
ln -s real dirlink && ln -s dirlink chain && ln -s ../real/app.json real/up.json
ln -s loop1 loop2 && ln -s loop2 loop1 && ln -s /etc/hostname abs
tar -cf ../more.tar real/app.json real/up.json dirlink chain loop1 loop2 abs
cd ..
ok "cat through a directory link" cmp <("$tm" cat more.tar files/dirlink/app.json) app.json
ok "cat through a chain of links" cmp <("$tm" cat more.tar files/chain/up.json) app.json
eq "ls through a directory link" "$("$tm" ls more.tar files/chain)" "$(printf 'app.json\nup.json')"
err=$("$tm" cat more.tar files/loop1 2>&1); rc=$?
eq "a link loop ends" "$rc/$err" "1/tracemount: cat: files/loop1: Too many levels of symbolic links"
err=$("$tm" cat more.tar files/abs 2>&1); rc=$?
eq "a link out of the archive is refused" "$rc/$err" "1/tracemount: cat: files/abs: symbolic link leads out of the archive"
err=$("$tm" cat more.tar files/../../x 2>&1); rc=$?
eq "\"..\" cannot leave the tree" "$rc/$err" "1/tracemount: cat: files/../../x: \"..\" leads out of the archive"
