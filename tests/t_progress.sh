#!/usr/bin/env bash
# tests/t_progress.sh - the scan's progress (tracemount(1), PROGRESS): on a
# terminal (script(1) gives one) `tracemount check` and a foreground mount
# print progress lines and end with "Trace loaded: N MB in Ts (R MB/s)" on
# stderr; without a terminal they print nothing extra. A foreground mount
# shows a generation pass's phases too, then "Generated files built in
# Ts". Formats only: no timing is asserted.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
cd "$T_TMP"

if ! command -v script >/dev/null 2>&1; then
	skip "progress" "no script(1) to give a terminal"
	exit 0
fi

json() { printf '{"traceEvents":[{"pid":1,"tid":1,"ts":%d,"dur":5,"ph":"X","name":"%s"}]}\n' "$1" "$2"; }
json 1000 a >a.json && json 2000 b >b.json
awk 'BEGIN { for (i = 0; i < 200000; i++)
	printf "  app-%d (%5d) [%03d] ...1 %d.%06d: tracing_mark_write: B|%d|slice_%d\n", i % 97, i % 997, i % 8, 1 + i / 1000000, i % 1000000, i % 997, i }' >big.systrace
zip -q -X cap.zip a.json b.json big.systrace
summary='^Trace loaded: [0-9]+\.[0-9] MB in [0-9]+\.[0-9]{2}s \([0-9]+ MB/s\)$'
line='^tracemount: [0-9]+\.[0-9] of [0-9]+\.[0-9] MB \([0-9]+%\), [0-9]+ MB/s: (a\.json|b\.json|big\.systrace)$'

# On a terminal: what check writes, each piece a terminal would show.
on_tty() { # command...
	local cmd
	printf -v cmd '%q ' "$@"
	script -qec "$cmd" /dev/null </dev/null
}
out=$(on_tty "$tm" check -o noindex cap.zip)
rc=$?
eq "check on a terminal exits 0" "$rc" 0
pieces=$(printf '%s' "$out" | tr '\r' '\n' | sed 's/\x1b\[K//g' | grep -v '^$')
eq "check on a terminal: one summary line" "$(grep -cE "$summary" <<<"$pieces")" 1
eq "the summary counts the trace bytes" "$(grep -E "$summary" <<<"$pieces" | awk '{ print $3 }')" \
	"$(awk -v b=$(($(stat -c %s a.json) + $(stat -c %s b.json) + $(stat -c %s big.systrace))) 'BEGIN { printf "%.1f", b / 1e6 }')"
eq "then check's own summary" "$(tail -n 1 <<<"$pieces")" "cap.zip: ok: 3 trace files (2 json, 1 systrace), no manifest, 1 machine, 200002 events placed, trace time TRACE_FILE"
eq "every other line is a progress line" \
	"$(grep -vE "$summary" <<<"$pieces" | grep -vxF "$(tail -n 1 <<<"$pieces")" | grep -cvE "$line")" 0
ok "progress lines are rewritten in place (carriage return, erase line)" grep -q $'\r\x1b\\[KTrace loaded' <<<"$out"

# Without a terminal: nothing but check's summary.
"$tm" check -o noindex cap.zip >out 2>err
eq "no terminal: nothing on stderr" "$(cat err)" ""
eq "no terminal: only the summary on stdout" "$(cat out)" "$(tail -n 1 <<<"$pieces")"
eq "ls and cat print no progress on a terminal" \
	"$(on_tty "$tm" cat -o noindex cap.zip metadata.json | grep -c 'Trace loaded')" 0

# A failed merge (a member damaged mid-way, found by the scan): its error,
# no summary.
cp big.systrace dmg.systrace
zip -q -X dmg.zip dmg.systrace
printf '%064d' 0 | tr 0 '\377' | dd of=dmg.zip bs=1 seek=$(($(stat -c %s dmg.zip) / 2)) conv=notrunc status=none
out=$(on_tty "$tm" check -o noindex dmg.zip | tr -d '\r')
eq "a failed merge: no summary" "$(grep -c 'Trace loaded' <<<"$out")" 0
contains "a failed merge: its error instead" "$out" "dmg.systrace"

# A foreground mount on a terminal: the summary when the scan runs.
if [ -n "${TM_NO_FUSE:-}" ] || ! have_fuse; then
	skip "progress of a foreground mount" "no FUSE here"
	exit 0
fi
m=$T_TMP/mnt
mkdir -p "$m"
T_MOUNTS+=("$m")
script -qfec "$(printf '%q ' "$tm" cap.zip "$m" -f -o noindex)" fg.log </dev/null >/dev/null 2>&1 &
T_PIDS+=($!)
for i in $(seq 1 200); do grep -qs " $m fuse" /proc/mounts && break; sleep 0.05; done
if grep -qs " $m fuse" /proc/mounts; then
	pass "foreground mount under a terminal"
	jq -e '.status == "ok"' "$m/metadata.json" >/dev/null
	eq "foreground mount: metadata.json" "$?" 0
	# then a generation pass (the scan is made): its phases, its summary
	cmp -s <(cat "$m/timeline.tsv") <("$tm" cat -o noindex cap.zip timeline.tsv)
	eq "foreground mount: timeline.tsv" "$?" 0
	fusermount3 -u "$m"
	wait "${T_PIDS[@]}" 2>/dev/null
	T_PIDS=()
	fg=$(tr '\r' '\n' <fg.log | sed 's/\x1b\[K//g' | grep -v '^$')
	eq "foreground mount: one summary on the terminal" "$(grep -cE "$summary" <<<"$fg")" 1
	gen='^tracemount: generating: (reading [0-9]+\.[0-9] of [0-9]+\.[0-9] MB \([0-9]+%\), [0-9]+ MB/s: (a\.json|b\.json|big\.systrace)|ordering [0-9]+ of [0-9]+ events \([0-9]+%\)|writing [0-9]+ of [0-9]+ lines \([0-9]+%\))$'
	for phase in reading ordering writing; do
		ok "foreground mount: the pass shows it is $phase" grep -qE "^tracemount: generating: $phase " <<<"$fg"
	done
	eq "foreground mount: every generating line in its form" \
		"$(grep '^tracemount: generating' <<<"$fg" | grep -cvE "$gen")" 0
	eq "foreground mount: one pass summary" \
		"$(grep -cE '^Generated files built in [0-9]+\.[0-9]{2}s$' <<<"$fg")" 1
	# metadata.json's stats were counted by a pass of its own, said apart
	eq "foreground mount: one summary of metadata.json's stats" \
		"$(grep -cE '^Stats counted in [0-9]+\.[0-9]{2}s$' <<<"$fg")" 1
	eq "foreground mount: its lines say what they count" \
		"$(grep '^tracemount: counting stats' <<<"$fg" | grep -cvE '^tracemount: counting stats: (reading|ordering) ')" 0
	grep -qs " $m fuse" /proc/mounts && fail "foreground mount: unmounted" || pass "foreground mount: unmounted"
else
	fail "foreground mount under a terminal" "$(cat fg.log)"
fi
