#!/usr/bin/env bash
# tests/t_gecko_markers.sh - a processed Firefox profile's markers (issue
# 35): testdata/gecko/markers_gecko.json, written from the processed
# profile's public description to reach every phase and corner, read as
# the reference reads it (tests/interop/captures/gecko_markers holds the
# same against the reference's import): each marker a slice of its
# category and name on a track of (thread, category, name) at its time
# on the file's clock (ms), an interval whole, a start and an end paired
# by name, its data as args under "data"; the thread made and named with
# its first marker. Expectations are worked out from the file here.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
root=$(cd "$(dirname "$0")/.." && pwd)
in=$TESTDATA/gecko/markers_gecko.json
cd "$T_TMP"

for c in jq protoc; do
	if ! command -v $c >/dev/null; then
		skip "gecko markers" "$c is not installed"
		exit 0
	fi
done

# GeckoMain (301): 16 markers. Categories: Graphics 0, DOM 1, "GC / CC" 2
# (the string entry is no category), "" 3 (an entry without a name); 9
# none. Its name 99 is no string: no marker; phase 7 makes no slice; the
# one at -1 ms is before the clock's start (dropped); the DOMEvent at 11
# ends at 10 (an interval of 0); GC starts at 4 (startTime) and ends at
# 4.5 (its end's endTime), its end's data on it; Styles of DOM runs 10 to
# 12.5, of Graphics 13 to 14 (start, end), on a track each; the two
# Layouts nest; the last one's data is an array, whose keys hold '.',
# '[' and nothing. Renderer (302), of the shared strings: Refresh 3 to 3.5,
# Paint from 4 to 5. Idle (303) has no category column: no marker.
cat >expect <<'EOF'
2000000	0	instant	Graphics	Paint	0	300	301	thread:Paint	{"data":{"type":"Paint","nested":{"a":1,"b":[1,2.5,"x",null,true]}}}
3000000	500000	slice	Graphics	Refresh	0	300	302	thread:Refresh	{"data":{"type":"Refresh","ms":0.5}}
3250000	500000	slice	DOM	DOMEvent	0	300	301	thread:DOMEvent	{"data":{"type":"DOMEvent","eventType":"click","latency":1.5}}
4000000	500000	slice		GC	0	300	301	thread:GC	{"data":{"type":"GC","reason":"ALLOC_TRIGGER","zones":[{"n":1},{"n":2}]}}
4000000	1000000	slice	Graphics	Paint	0	300	302	thread:Paint	{}
6500000	0	instant		Refresh	0	300	301	thread:Refresh	{"data":{}}
7000000	0	instant	GC / CC		0	300	301	thread:	{"data":{"empty":null}}
8000000	1000000	slice	Graphics	Layout	0	300	301	thread:Layout	{"data":{"type":"Layout","depth":0}}
8500000	250000	slice	Graphics	Layout	1	300	301	thread:Layout	{"data":{"type":"Layout","depth":1}}
10000000	2500000	slice	DOM	Styles	0	300	301	thread:Styles	{}
11000000	0	instant	DOM	DOMEvent	0	300	301	thread:DOMEvent	{}
13000000	1000000	slice	Graphics	Styles	0	300	301	thread:Styles	{}
15000000	0	instant	Graphics	Paint	0	300	301	thread:Paint	{"data":[1,[2,3],{"k.x":[4],"c[0]":true,"":-1}]}
EOF
"$tm" cat "$in" timeline.tsv | awk -F'\t' -v OFS='\t' 'NR > 1 && $5 != "sample" { print $1, $2, $5, $6, $7, $8, $9, $10, $11, $12 }' >got
ok "timeline.tsv: every marker's slice, as the reference makes it" cmp -s got expect
[ -s got ] && ! cmp -s got expect && diff got expect | head -n 10

meta=$("$tm" cat "$in" metadata.json)
eq "metadata: 2 samples and 17 markers placed, the one before the clock's start dropped" \
	"$(jq -c '.files[0] | [.events, .dropped, .drops]' <<<"$meta")" '[19,1,{"trace_sorter_negative_timestamp_dropped":1}]'
eq "threads.tsv: the threads with markers, named by their profile, and their process's main thread" \
	"$("$tm" cat "$in" machines/machine0/threads.tsv | awk -F'\t' 'NR > 1 && $1 > 0 { print $1 "/" $2 "/" $3 }')" \
	"$(printf '%s\n' '300//300' '301/GeckoMain/300' '302/Renderer/300')"

# merged.pftrace: each marker a TrackEvent of its category and name (an
# interval of whole microseconds a complete event, a start and an end one
# each: three pairs here), its data the debug annotation "data" (as JSON
# text, which the reference flattens as it flattens the profile's)
"$tm" cat "$in" merged.pftrace >m.pftrace
protoc --decode=perfetto.protos.Trace -I"$root/protos" "$root/protos/trace.proto" <m.pftrace >m.txt
eq "merged.pftrace: the markers with data carry it as one annotation named data" \
	"$(grep -A2 'debug_annotations {' m.txt | grep -c 'name: "data"')" 9
eq "merged.pftrace: a TrackEvent per slice, two for a start and its end" \
	"$(grep -c '^  track_event {' m.txt)" "$(( $(wc -l <expect) + 3 ))"

if have_fuse; then
	if tm_mount "$in" "$T_TMP/mnt"; then
		eq "mount: timeline.tsv as cat gives it" "$(md5sum <"$T_TMP/mnt/timeline.tsv")" \
			"$("$tm" cat "$in" timeline.tsv | md5sum)"
		if tm_umount "$T_TMP/mnt"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$T_TMP/mnt.log")"; fi
	else
		fail "mount markers_gecko.json" "$(cat "$T_TMP/mnt.log")"
	fi
else
	skip "mount: timeline.tsv" "/dev/fuse or fusermount3 is missing; the same file was checked through tracemount cat"
fi
exit $T_FAILED
