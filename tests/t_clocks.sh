#!/usr/bin/env bash
# tests/t_clocks.sh - clocks/graph.dot a person can read and each file's
# placement in metadata.json (issue 9), on the real captures of
# testdata/real: capture2 (a Chromium proto with a clock per sequence, a
# DevTools JSON, kernel ftrace and trace-cmd text, two Node traces, a
# manifest naming two machines) and together (Chromium proto, Node JSON and
# kernel text recorded at once, no manifest).
#
# The graph must render with `dot`, hold at most 40 nodes, name every trace
# file by its path (never a bare file id) and fold a file's sequence
# clocks; every trace file's placement must end at the trace-time clock
# metadata.json names, and what it placed must add up to the events.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
tm=$TRACEMOUNT
here=$(cd "$(dirname "$0")" && pwd)
cd "$T_TMP"

for c in jq dot; do
	if ! command -v $c >/dev/null; then
		skip "clocks" "$c is not installed"
		exit 0
	fi
done

for cap in capture2 together; do
	a=$T_TMP/$cap.zip
	if ! build_archive "$here/interop/captures/$cap" "$a" 2>build.err; then
		fail "$cap: build" "$(cat build.err)"
		continue
	fi
	"$tm" cat "$a" clocks/graph.dot >g.dot
	"$tm" cat "$a" metadata.json >meta.json
	if dot -Tplain g.dot >g.plain 2>dot.err; then pass "$cap: graph.dot renders"
	else fail "$cap: graph.dot renders" "$(cat dot.err)"; continue; fi
	nodes=$(grep -c '^node ' g.plain)
	edges=$(grep -c '^edge ' g.plain)
	size=$(awk '$1 == "graph" { printf "%.0fx%.0f in", $3, $4 }' g.plain)
	echo "# $cap: $nodes nodes, $edges edges, $size"
	[ "$nodes" -le 40 ] && pass "$cap: graph.dot has at most 40 nodes ($nodes)" ||
		fail "$cap: graph.dot has at most 40 nodes" "$nodes nodes"
	missing=""
	for p in $(jq -r '.files[] | select(.placement) | .path' meta.json); do
		grep -qF "label=\"$p\\n" g.dot || missing+=" $p"
	done
	eq "$cap: graph.dot names every trace file by its path" "$missing" ""
	eq "$cap: graph.dot shows no bare file id" "$(grep -cE 'file [0-9]+' g.dot)" 0
	# every sequence clock is in a fold, none drawn alone
	eq "$cap: sequence clocks are folded" "$(grep -c '\\nseq [0-9]' g.dot)" 0
	seqs=$(jq '[.files[].placement // [] | .[] | .clocks[0] | select(test("sequences\\)$"))] | length' meta.json)
	[ "$seqs" -gt 0 ] && pass "$cap: a file's sequence clocks are one placement group" ||
		fail "$cap: a file's sequence clocks are one placement group" "none folded"
	# the path of every file ends at trace time, named as metadata.json names it
	tt=$(jq -r '.trace_time.clock' meta.json)
	eq "$cap: every placement ends at trace time ($tt)" \
		"$(jq -r --arg tt "$tt" '.files[].placement // [] | .[] | select(.reaches_trace_time) |
			.clocks[-1] | select(startswith($tt + "@") | not)' meta.json)" ""
	eq "$cap: every placement has a hop between each two clocks" \
		"$(jq '[.files[].placement // [] | .[] | select((.clocks | length) != (.hops | length) + 1)] | length' meta.json)" 0
	eq "$cap: every trace file has a placement" \
		"$(jq -r '.files[] | select(.events != null and .events > 0 and ((.placement // []) | length) == 0) | .path' meta.json)" ""
	# a placed event is a timestamp converted, so no file places fewer
	# timestamps than it has events
	eq "$cap: placed timestamps cover the events" \
		"$(jq -r '.files[] | select(.placement) | select(([.placement[].placed] | add // 0) < .events) | .path' meta.json)" ""
	eq "$cap: the trace-time clock is drawn gold" "$(grep -c 'fillcolor="gold"' g.dot)" 1
done
exit 0
