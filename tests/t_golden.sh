#!/usr/bin/env bash
# tests/t_golden.sh - every file tracemount makes, byte for byte, the same
# as tests/golden/outputs.tsv records (issue 34: a rebuild of the import
# core changes no output). For every scenario directory (tests/conformance/
# and tests/interop/captures/) the archive is built and each file of its
# tree is hashed (tests/tools/outputs.sh); one PASS/FAIL line per
# scenario, naming the files that differ.
#
# An output that changes on purpose is recorded again with
#   make golden          (GOLDEN_UPDATE=1 bash tests/t_golden.sh)
# and the commit that changes it says why.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/golden/outputs.tsv
# The sanitizer builds run the same code on the same inputs; the hashes
# are checked once, on the optimized build, where they take 90 s.
case "$(basename "$BUILD")" in san | tsan)
	skip "golden" "checked on the optimized build (build/rel)"
	exit 0 ;;
esac
scenario_init || { fail "golden: encode the fixtures" "protoc failed"; exit 1; }

out=$T_TMP/outputs.tsv
: >"$out"
served_bad= served_n=0
for dir in "$here"/conformance/*/ "$here"/interop/captures/*/; do
	dir=${dir%/}
	[ -f "$dir/archive" ] || continue
	name=$(basename "$dir")
	a=$T_TMP/$name.$(cat "$dir/archive")
	if ! build_archive "$dir" "$a" 2>"$T_TMP/build.err"; then
		fail "golden: $name: build the archive" "$(head -c 300 "$T_TMP/build.err")"
		continue
	fi
	# relative: metadata.json names the archive as given
	(cd "$T_TMP" && bash "$here/tools/outputs.sh" "$TRACEMOUNT" "$name.idx" "${a##*/}") | sed "s|^|$name\t|" >>"$out"
	# `tracemount cat` streams the top-level timeline.tsv as it is made;
	# a mount keeps its records and makes the lines again when they are
	# read (core/export/timeline.c): those bytes, read in 64 KiB pieces,
	# are the same
	streamed=$(awk -F'\t' -v n="$name" '$1 == n && $2 == "timeline.tsv" { print $3 }' "$out")
	if [ -n "$streamed" ]; then
		if "$BUILD/tools/tm_export" -t "$a" "$T_TMP/served.tsv" 2>"$T_TMP/served.err"; then
			made=$(sha256sum <"$T_TMP/served.tsv" | cut -d' ' -f1)
		else
			made="error: $(head -c 200 "$T_TMP/served.err")"
		fi
		[ "$made" = "$streamed" ] || served_bad="$served_bad $name"
		served_n=$((served_n + 1))
	fi
	rm -f "$T_TMP/$name.idx" "$a" "$T_TMP/served.tsv"
done
if [ -z "$served_bad" ]; then
	pass "golden: timeline.tsv made when read, as streamed ($served_n scenarios)"
else
	fail "golden: timeline.tsv made when read" "differs from the streamed bytes in:$served_bad"
fi

if [ -n "${GOLDEN_UPDATE:-}" ]; then
	mkdir -p "$(dirname "$golden")"
	cp "$out" "$golden"
	pass "golden: recorded $(wc -l <"$golden") files in tests/golden/outputs.tsv"
	exit 0
fi
if [ ! -f "$golden" ]; then
	fail "golden" "no $golden (make golden records it)"
	exit 1
fi
for name in $(cut -f1 "$golden" "$out" | sort -u); do
	d=$(diff <(awk -F'\t' -v n="$name" '$1 == n' "$golden") <(awk -F'\t' -v n="$name" '$1 == n' "$out"))
	if [ -z "$d" ]; then
		pass "golden: $name: $(awk -F'\t' -v n="$name" '$1 == n' "$out" | wc -l) files as recorded"
	else
		fail "golden: $name" "files that differ from the record (< recorded, > now): $(grep '^[<>]' <<<"$d" | cut -f2,3 | head -n 8 | tr '\n' ' ')"
	fi
done
