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
contains "help names every command" "$out" "tracemount check ARCHIVE"
out=$("$tm" --version); eq "version" "$out" "tracemount 0.1.0"

"$tm" >/dev/null 2>&1; eq "no arguments is a usage error" $? 2
"$tm" cat good.zip >/dev/null 2>&1; eq "cat without a path is a usage error" $? 2
"$tm" check >/dev/null 2>&1; eq "check without an archive is a usage error" $? 2

out=$("$tm" check good.zip); rc=$?
eq "check ok exits 0" "$rc" 0
contains "check summarises" "$out" "3 trace files (2 json, 1 systrace), manifest meta.json"

err=$("$tm" check bad.zip 2>&1 >/dev/null); rc=$?
eq "check bad manifest exits 1" "$rc" 1
eq "check prints the exact manifest error" "$err" "perfetto_manifest: version must be an integer"

err=$("$tm" check missing.zip 2>&1); rc=$?
eq "check of a missing file exits 1" "$rc" 1
contains "the error names the file" "$err" "missing.zip"

# One stored member, no central directory, then garbage where the next
# local header should be (formats.md §2.1).
"$BUILD/tools/mkzip" one.zip app.json=app.json
head -c $((30 + 8 + $(stat -c %s app.json))) one.zip >corrupt.zip
printf 'garbage! this is not a local file header.' >>corrupt.zip
err=$("$tm" check corrupt.zip 2>&1); rc=$?
eq "a corrupt zip exits 1" "$rc" 1
# The reference reports the offset just past the 30-byte header it read.
eq "a corrupt zip gives the reference's one line" "$err" "Invalid signature found at offset 0x$(printf %x $((30 + 30 + 8 + $(stat -c %s app.json)))). Actual=0x62726167, expected=0x4034b50"

eq "ls root" "$("$tm" ls good.zip)" "$(printf 'files\nmetadata.json\nperfetto_manifest.json')"
eq "ls files" "$("$tm" ls good.zip files)" "$(printf 'meta.json\napp.json\nsys.systrace\nsub')"
eq "ls nested" "$("$tm" ls good.zip /files/sub)" "nested.json"
"$tm" ls good.zip files/nope >/dev/null 2>&1; eq "ls of a missing path exits 1" $? 1

ok "cat is byte-identical to the member" cmp <("$tm" cat good.zip files/sub/nested.json) sub/nested.json
"$tm" cat good.zip files >/dev/null 2>&1; eq "cat of a directory exits 1" $? 1
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
page=$(MANWIDTH=100 man -l "$man" 2>/dev/null)
for w in "ls ARCHIVE" "cat ARCHIVE PATH" "check ARCHIVE" "-f " "-d " "-s " "-o OPTIONS" "--help" "--version" \
	metadata.json perfetto_manifest.json "files/MEMBER" processing_order files_path manifest_entry ignored \
	"EXIT STATUS" "%2E%2E"; do
	contains "man page documents '$w'" "$page" "$w"
done

# TAR links: a symlink stays a symlink, a hard link points at its target.
mkdir -p links/d && cp app.json links/d/app.json && ln -s d/app.json links/soft.json && ln links/d/app.json links/hard.json
(cd links && tar -cf ../links.tar d/app.json soft.json hard.json)
eq "tar symlink and hard link are skipped by the merge" "$("$tm" cat links.tar metadata.json | jq -c '[.ignored[] | .path]')" '["soft.json","hard.json"]'
ok "cat through a tar symlink's target" cmp <("$tm" cat links.tar files/d/app.json) app.json
ok "cat follows a tar symlink" cmp <("$tm" cat links.tar files/soft.json) app.json
ok "cat follows a tar hard link" cmp <("$tm" cat links.tar files/hard.json) app.json
