#!/usr/bin/env bash
# tests/interop/run.sh - compare, table by table, the reference's import of
# each fixture archive with its import of our merged.pftrace (issue 8).
#
#   TRACE_PROCESSOR_SHELL=/path/to/trace_processor_shell tests/interop/run.sh [BUILD]
#
# Fixtures: every scenario of tests/conformance/ whose archive merges, and
# the real captures of tests/interop/captures/ (scenario directories, see
# tests/scenario.sh). A fixture whose file reference_member names one
# member is compared with the reference's import of that member alone:
# the formats the reference refuses inside an archive (a ninja log,
# tracemount(1), "Divergences"). For each, `trace_processor_shell query -f tables.sql`
# runs on the archive and on `tracemount cat ARCHIVE merged.pftrace`; the
# rows of each table are compared as multisets. Per fixture a table is
# printed (table, rows in the archive, in merged.pftrace, in common), then
# one PASS/FAIL line per (fixture, table): PASS when both sides hold the
# same rows, or when tests/interop/differences names the fixture and
# table (a documented, reasoned difference: the line says why). Rows that
# differ in every fixture for one documented reason (tracemount(1),
# "Divergences from Perfetto") are named by tests/interop/row-differences
# instead (TABLE ROW_REGEX REASON, awk regex on the tab-separated row): they
# are set aside on both sides before the comparison, which then passes
# only when everything else is equal, and the line says how many were set
# aside and why. A total table ends the run. INTEROP_ONLY=GLOB limits the
# fixtures; T_KEEP=1 leaves the rows in the test directory.
#
# The tsv_* tables hold the archive's import against tracemount's text
# views (issue 9), the "merged" column reading them: tsv_slice the slice
# table (name, ts, dur, machine) against the slice and instant rows of
# every machines/<dir>/timeline.tsv, tsv_sample the stack samples (machine,
# ts, tid, leaf frame) against its sample rows, tsv_counter the counter
# table (machine, track name, CPU, ts, value) against its counter rows,
# tsv_sched the sched table (machine, ts, dur, CPU, tid, end state,
# priority) against its sched rows,
# tsv_profile the stack and
# aggregate samples (stack, count) against every profile.folded, tsv_heap
# the heap graphs' classes (machine, name, objects, bytes) against every
# heap.tsv, tsv_thread
# and tsv_process the thread
# and process tables (machine, id, name) against threads.tsv and
# processes.tsv.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${1:-${BUILD:-$root/build/rel}}
export TRACEMOUNT=${TRACEMOUNT:-$BUILD/tracemount}
export BUILD
. "$root/tests/lib.sh"
. "$root/tests/scenario.sh"
. "$here/lib.sh"

tp=${TRACE_PROCESSOR_SHELL:-}
if [ -z "$tp" ] || [ ! -x "$tp" ]; then
	skip "interop" "TRACE_PROCESSOR_SHELL is not set to a trace_processor_shell binary"
	exit 0
fi
scenario_init || { fail "interop" "cannot encode the fixtures (protoc)"; exit 1; }

tables="slice thread_slice instant thread thread_ids process process_ids counter sched thread_state flow args sample callsite
	mapping perf_sample perf_callsite perf_mapping heap_class heap_object heap_reference aggregate stats"
# compared with tracemount's text views instead of merged.pftrace's import
tsv_tables="tsv_slice tsv_sample tsv_counter tsv_sched tsv_profile tsv_heap tsv_thread tsv_process"
# compared with metadata.json's stats (tables.sql)
meta_tables="meta_stats file_stats"
differences=$here/differences
row_differences=$here/row-differences

# The rows of one import, one file per table: TABLE.rows, sorted.
import() { # trace outdir
	# shellcheck disable=SC2086
	reference_rows "$tp" "$1" "$2" $tables $tsv_tables $meta_tables stat_kind
}

# meta_rows METADATA_JSON STAT_KIND OUTDIR: metadata.json's stats as the
# meta_* tables hold them: in total, and per file for the names the
# reference keeps per trace; the names of another severity than error and
# data_loss left out, as the reference's rows leave them (a name the
# reference does not list stays in: it differs).
meta_rows() {
	local mj=$1 kinds=$2 d=$3
	jq -r '
		def rows: to_entries[] | if (.value | type) == "object"
			then .key as $n | .value | to_entries[] | [$n, .key, (.value | tostring)]
			else [.key, "\\N", (.value | tostring)] end;
		(.stats | rows | select(.[2] != "0") | ["T", "-"] + . | join("\t")),
		(.files[] | select(.stats) | (.path // "\\N") as $p | .stats | rows | ["F", $p] + . | join("\t"))' "$mj" |
		awk -F'\t' -v OFS='\t' -v kinds="$kinds" -v d="$d" '
			BEGIN { while ((getline l < kinds) > 0) { split(l, k, "\t"); sev[k[1]] = k[2]; per[k[1]] = k[3] } }
			sev[$3] != "" && sev[$3] != "error" && sev[$3] != "data_loss" { next }
			$1 == "T" { print $3, $4, $5 > (d "/meta_stats.rows.u"); next }
			per[$3] == 1 { print $2, $3, $4, $5 > (d "/file_stats.rows.u") }'
	touch "$d/meta_stats.rows.u" "$d/file_stats.rows.u"
	sort "$d/meta_stats.rows.u" >"$d/meta_stats.rows"
	sort "$d/file_stats.rows.u" >"$d/file_stats.rows"
}

compare_fixture() { # name archive [member]
	local name=$1 a=$2 member=${3:-} w=$T_TMP/i.$1 ref
	mkdir -p "$w"
	"$TRACEMOUNT" check "$a" >/dev/null 2>&1 || return 0 # does not merge: nothing to compare
	if ! "$TRACEMOUNT" cat "$a" merged.pftrace >"$w/merged.pftrace" 2>"$w/cat.err"; then
		fail "interop $name: merged.pftrace" "$(cat "$w/cat.err")"
		return
	fi
	ref=$a
	if [ -n "$member" ]; then
		# a format the reference imports only alone (a ninja log)
		ref=$w/$(basename "$member")
		"$TRACEMOUNT" cat "$a" "files/$member" >"$ref" || { fail "interop $name: files/$member"; return; }
	fi
	if ! import "$ref" "$w/a"; then
		# tracemount mounts a few archives the reference refuses (TAR
		# links: tracemount(1), "Divergences"); nothing to compare
		skip "interop $name" "the reference does not import the archive: $(grep -v '^\[' "$w/a/err" | tail -n 1)"
		return
	fi
	if ! import "$w/merged.pftrace" "$w/m"; then
		fail "interop $name: reference import of merged.pftrace" "$(tail -n 2 "$w/m/err")"
		return
	fi
	# the text views, in the reference's terms: machine folders by name
	local d mname tb
	: >"$w/m/tsv_slice.rows.u"; : >"$w/m/tsv_sample.rows.u"; : >"$w/m/tsv_profile.rows.f"
	: >"$w/m/tsv_thread.rows.u"; : >"$w/m/tsv_heap.rows.u"
	: >"$w/m/tsv_process.rows.u"; : >"$w/m/tsv_counter.rows.u"; : >"$w/m/tsv_sched.rows.u"
	for d in $("$TRACEMOUNT" ls "$a" machines); do
		mname=$("$TRACEMOUNT" cat "$a" "machines/$d/machine.json" | jq -r '.name // "\\N"')
		# a counter's value from its args ({"value":V}) as tables.sql
		# prints it: an integer whole, else %.17g
		"$TRACEMOUNT" cat "$a" "machines/$d/timeline.tsv" | awk -F'\t' -v m="$mname" -v w="$w/m" '
			NR == 1 { next }
			$5 == "slice" || $5 == "instant" { print $7 "\t" $1 "\t" $2 "\t" m >>(w "/tsv_slice.rows.u") }
			$5 == "sample" { print m "\t" $1 "\t" $10 "\t" $7 >>(w "/tsv_sample.rows.u") }
			$5 == "counter" {
				v = $12; sub(/^\{"value":/, "", v); sub(/\}$/, "", v); x = v + 0
				s = x == int(x) && x < 9007199254740992 && x > -9007199254740992 ? sprintf("%.0f", x) : sprintf("%.17g", x)
				cpu = $11 ~ /^cpu:[0-9]+$/ ? substr($11, 5) : "\\N"
				print m "\t" $7 "\t" cpu "\t" $1 "\t" s >>(w "/tsv_counter.rows.u")
			}
			$5 == "sched" {
				st = match($12, /"end_state":"[^"]*"/) ? substr($12, RSTART + 13, RLENGTH - 14) : ""
				p = $12; sub(/.*"prio":/, "", p); sub(/\}$/, "", p)
				print m "\t" $1 "\t" $2 "\t" substr($11, 5) "\t" $10 "\t" st "\t" p >>(w "/tsv_sched.rows.u")
			}'
		"$TRACEMOUNT" cat "$a" "machines/$d/profile.folded" >>"$w/m/tsv_profile.rows.f"
		"$TRACEMOUNT" cat "$a" "machines/$d/heap.tsv" | awk -F'\t' -v m="$mname" \
			'NR > 1 { print m "\t" $1 "\t" $2 "\t" $3 }' >>"$w/m/tsv_heap.rows.u"
		"$TRACEMOUNT" cat "$a" "machines/$d/threads.tsv" | awk -F'\t' -v m="$mname" \
			'NR > 1 { print m "\t" $1 "\t" $2 }' >>"$w/m/tsv_thread.rows.u"
		"$TRACEMOUNT" cat "$a" "machines/$d/processes.tsv" | awk -F'\t' -v m="$mname" \
			'NR > 1 { print m "\t" $1 "\t" $2 }' >>"$w/m/tsv_process.rows.u"
	done
	# profile.folded's lines summed over the machines: STACK COUNT, the count after the last space
	awk '{ i = match($0, / [0-9]+$/); n[substr($0, 1, i - 1)] += substr($0, i + 1) }
		END { for (k in n) printf "%s\t%d\n", k, n[k] }' "$w/m/tsv_profile.rows.f" >"$w/m/tsv_profile.rows.u"
	for tb in $tsv_tables; do sort "$w/m/$tb.rows.u" >"$w/m/$tb.rows"; done
	rm -f "$w/m/meta_stats.rows.u" "$w/m/file_stats.rows.u"
	if ! "$TRACEMOUNT" cat "$a" metadata.json >"$w/metadata.json" 2>"$w/meta.err"; then
		fail "interop $name: metadata.json" "$(cat "$w/meta.err")"
		return
	fi
	meta_rows "$w/metadata.json" "$w/a/stat_kind.rows" "$w/m"
	if [ -n "$member" ]; then # the reference read the member as a trace of no path
		awk -F'\t' -v OFS='\t' -v p="$member" '$1 == p { $1 = "\\N" } 1' "$w/m/file_stats.rows" |
			sort >"$w/m/file_stats.rows.p" && mv "$w/m/file_stats.rows.p" "$w/m/file_stats.rows"
	fi
	# shellcheck disable=SC2086
	compare_tables interop "$name" "$w" archive merged "$differences" "$row_differences" $tables $tsv_tables \
		$meta_tables
}

for dir in "$root"/tests/conformance/*/ "$here"/captures/*/; do
	dir=${dir%/}
	[ -f "$dir/archive" ] || continue
	name=$(basename "$dir")
	case "$name" in ${INTEROP_ONLY:-*}) ;; *) continue ;; esac
	a=$T_TMP/$name.$(cat "$dir/archive")
	if ! build_archive "$dir" "$a" 2>"$T_TMP/build.err"; then
		fail "interop $name: build" "$(cat "$T_TMP/build.err")"
		continue
	fi
	member=""
	[ -f "$dir/reference_member" ] && member=$(cat "$dir/reference_member")
	compare_fixture "$name" "$a" "$member"
done

# shellcheck disable=SC2086
print_totals archive merged $tables $tsv_tables $meta_tables
exit $T_FAILED
