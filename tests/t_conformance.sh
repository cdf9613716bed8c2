#!/usr/bin/env bash
# tests/t_conformance.sh - every scenario of spec/conformance.md, one
# directory each under tests/conformance/. A scenario directory holds:
#
#   archive   one word: zip, tar, tgz, gz (a gzip of the single member,
#             or of the members concatenated), or single (the member itself)
#   members   one line per archive member, in listing order:
#               NAME SOURCE[+SOURCE...]
#             SOURCE is a file of the scenario directory; @FIXTURE is
#             testdata/conformance/FIXTURE as is, or FIXTURE.textproto
#             encoded with protoc; ^SUB is the archive built from the
#             sub-scenario directory SUB; "empty" is an empty member.
#             Several sources joined by + are concatenated. NAME ending in
#             "/" (no SOURCE) is a ZIP directory entry. A trailing "gz" word
#             gzips that member. SOURCE "->TARGET" is a TAR symbolic link.
#   expect    one expectation per line:
#               error TEXT     `tracemount check` exits 1 and prints TEXT
#                              (the whole message) on stderr
#               ok             `tracemount check` exits 0
#               jq FILTER      FILTER on metadata.json prints true
#               events FILTER  FILTER on the scan's events (tm_events
#                              JSON lines, slurped) prints true
#
#             jq 1.6 holds numbers as doubles, so a trace ts such as
#             1700000001100000000 cannot be compared exactly. Before an
#             `events` FILTER runs, every integer value of 16 or more digits
#             in the tm_events output (a JSON number right after a ':') is
#             turned into a string: write `.ts == "1700000001100000000"`.
#             Shorter integers stay numbers.
#
# The runner builds each archive in a scratch directory, then checks every
# expectation; one PASS/FAIL line per expectation.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
here=$(cd "$(dirname "$0")" && pwd)
scenario_init || fail encode_fixtures "protoc failed"

# The placements of a trace as comparable lines: one per slice edge,
# instant or counter sample, "kind name ts machine", sorted. A complete
# slice is its begin and end; end names are left out (a re-import does
# not name ends).
# The placements of a trace, but its ProcessTree packets: merged.pftrace
# adds one wherever a JSON or systrace file makes a thread, at that time
# (core/export/export_text.c, made_threads); trees() lists those, and every one
# of the archive's must be in merged.pftrace too.
placements() {
	[ -s "$1" ] || return 0 # an empty merge exports an empty trace
	"$BUILD/tools/tm_events" "$1" | sed -E 's/:(-?[0-9]{16,})([,}])/:"\1"\2/g' | jq -r '
		select(.kind and (.kind != "packet" or .name != "process_tree")) |
		if .kind == "slice" then
			"begin \(.name) \(.ts) \(.machine)",
			"end - \((.ts|tonumber) + .dur) \(.machine)"
		elif .kind == "end" or .kind == "async_end" then "end - \(.ts) \(.machine)"
		elif .kind == "async_begin" then "begin \(.name) \(.ts) \(.machine)"
		elif .kind == "counter" then "counter \(.value) \(.ts) \(.machine)"
		else "\(.kind) \(.name) \(.ts) \(.machine)" end' | sort
}
trees() {
	[ -s "$1" ] || return 0
	"$BUILD/tools/tm_events" "$1" | sed -E 's/:(-?[0-9]{16,})([,}])/:"\1"\2/g' |
		jq -r 'select(.kind == "packet" and .name == "process_tree") | "\(.ts) \(.machine)"' | sort
}

for dir in "$here"/conformance/*/; do
	dir=${dir%/}
	sc=$(basename "$dir")
	[ -f "$dir/expect" ] || continue
	a=$T_TMP/$sc.$(cat "$dir/archive")
	if ! build_archive "$dir" "$a" 2>"$T_TMP/build.err"; then
		fail "$sc: build" "$(cat "$T_TMP/build.err")"
		continue
	fi
	"$TRACEMOUNT" check "$a" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	meta=""
	events=""
	n=0
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		case "$line" in \#*) continue ;; esac
		n=$((n + 1))
		kind=${line%% *}
		arg=${line#* }
		case "$kind" in
		error)
			if [ $rc -eq 1 ] && [ "$(cat "$T_TMP/err")" == "$arg" ]; then pass "$sc: error"
			else fail "$sc: error" "exit $rc, stderr [$(cat "$T_TMP/err")], expected [$arg]"; fi ;;
		ok)
			if [ $rc -eq 0 ]; then pass "$sc: ok"; else fail "$sc: ok" "exit $rc: $(cat "$T_TMP/err")"; fi ;;
		jq)
			[ -n "$meta" ] || meta=$("$TRACEMOUNT" cat "$a" metadata.json 2>&1)
			got=$(printf '%s' "$meta" | jq -c "$arg" 2>&1)
			if [ "$got" == true ]; then pass "$sc: jq $arg"
			else fail "$sc: jq $arg" "got $got"; fi ;;
		events)
			if [ ! -x "$BUILD/tools/tm_events" ]; then skip "$sc: events $arg" "no tm_events tool"; continue; fi
			[ -n "$events" ] || events=$("$BUILD/tools/tm_events" "$a" 2>&1 |
				sed -E 's/:(-?[0-9]{16,})([,}])/:"\1"\2/g')
			got=$(printf '%s\n' "$events" | jq -s -c "$arg" 2>&1)
			if [ "$got" == true ]; then pass "$sc: events $arg"
			else fail "$sc: events $arg" "got $got"; fi ;;
		*) fail "$sc" "bad expectation: $line" ;;
		esac
	done <"$dir/expect"
	[ $n -gt 0 ] || fail "$sc" "no expectations"
	# formats.md §5.9: merged.pftrace alone re-imports with the same
	# placements (name, trace ts, machine name) as the archive, and each
	# machines/<dir>/merged.pftrace holds exactly that machine's.
	if [ $rc -eq 0 ] && [ -x "$BUILD/tools/tm_events" ]; then
		want=$(placements "$a")
		if "$TRACEMOUNT" cat "$a" merged.pftrace >"$T_TMP/merged.pftrace" 2>"$T_TMP/err"; then
			eq "$sc: merged.pftrace places the same events" "$(placements "$T_TMP/merged.pftrace")" "$want"
			eq "$sc: merged.pftrace keeps the archive's process trees" \
				"$(comm -23 <(trees "$a") <(trees "$T_TMP/merged.pftrace"))" ""
		else
			fail "$sc: merged.pftrace" "$(cat "$T_TMP/err")"
		fi
		per=""
		for d in $("$TRACEMOUNT" ls "$a" machines); do
			"$TRACEMOUNT" cat "$a" "machines/$d/merged.pftrace" >"$T_TMP/m.pftrace" 2>"$T_TMP/err" ||
				{ fail "$sc: machines/$d/merged.pftrace" "$(cat "$T_TMP/err")"; continue; }
			per+=$(placements "$T_TMP/m.pftrace")$'\n'
		done
		eq "$sc: machines/*/merged.pftrace split the events" "$(printf '%s' "$per" | grep . | sort)" "$want"
		# timeline.tsv: a slice row wherever the scan placed a slice's
		# start, with the end the scan placed for it
		got=$("$TRACEMOUNT" cat "$a" timeline.tsv | awk -F'\t' 'NR > 1 && ($5 == "slice" || $5 == "instant") {
			print $1, $7; if ($2 > 0) printf "end %.0f\n", $1 + $2 }' | sort)
		want=$("$BUILD/tools/tm_events" "$a" | jq -r 'select(.kind) |
			if (.kind | test("^(begin|instant|slice|async_begin)$")) then "\(.ts) \(.name)" else empty end,
			if (.kind == "slice" and (.dur // 0) > 0) then "end \(.ts + .dur)" else empty end,
			if (.kind | test("^(end|async_end)$")) then "end \(.ts)" else empty end' 2>&1)
		eq "$sc: timeline.tsv has the slices the events make" "$got" "$(printf '%s\n' "$want" | grep . | sort)"
	fi
done
