#!/usr/bin/env bash
# tests/interop/run.sh - compare, table by table, the reference's import of
# each fixture archive with its import of our merged.pftrace (issue 8).
#
#   TRACE_PROCESSOR_SHELL=/path/to/trace_processor_shell tests/interop/run.sh [BUILD]
#
# Fixtures: every scenario of tests/conformance/ whose archive merges, and
# the real captures of tests/interop/captures/ (scenario directories, see
# tests/scenario.sh). For each, `trace_processor_shell query -f tables.sql`
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
# every machines/<dir>/timeline.tsv, tsv_thread and tsv_process the thread
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

tp=${TRACE_PROCESSOR_SHELL:-}
if [ -z "$tp" ] || [ ! -x "$tp" ]; then
	skip "interop" "TRACE_PROCESSOR_SHELL is not set to a trace_processor_shell binary"
	exit 0
fi
scenario_init || { fail "interop" "cannot encode the fixtures (protoc)"; exit 1; }

tables="slice instant thread process counter sched thread_state flow args stats"
# compared with tracemount's text views instead of merged.pftrace's import
tsv_tables="tsv_slice tsv_thread tsv_process"
differences=$here/differences
row_differences=$here/row-differences

# The rows of one import, one file per table: TABLE.rows, sorted.
import() { # trace outdir
	local t=$1 d=$2
	mkdir -p "$d"
	if ! "$tp" query -f "$here/tables.sql" "$t" >"$d/out.csv" 2>"$d/err"; then
		return 1
	fi
	# one column "row" per result set; CSV-quoted: strip the quotes
	grep -v '^"row"$' "$d/out.csv" | grep -v '^$' |
		sed -e 's/^"//' -e 's/"$//' -e 's/""/"/g' >"$d/all"
	local tb
	for tb in $tables $tsv_tables; do
		awk -F'\t' -v t="$tb" '$1 == t' "$d/all" | cut -f2- | sort >"$d/$tb.rows"
	done
}

documented() { # fixture table -> the reason, or nothing
	[ -f "$differences" ] || return 0
	awk -v f="$1" -v t="$2" '!/^#/ && NF >= 3 {
		split($0, p, " "); if (f ~ ("^" p[1] "$") && p[2] == t) {
			r = $0; sub(/^[^ ]+ [^ ]+ /, "", r); print r; exit } }' "$differences"
}

# Set aside the rows of TABLE in FILE that row-differences names; print
# "N REASON; ..." for what was set aside (nothing when none was).
set_aside() { # table file
	[ -f "$row_differences" ] || return 0
	awk -F'\t' -v t="$1" -v out="$2.kept" '
		FNR == NR { if (!/^#/ && NF) { split($0, p, " "); if (p[1] == t) {
			n++; re[n] = p[2]; r = $0; sub(/^[^ ]+ [^ ]+ /, "", r); why[n] = r } } next }
		{ for (i = 1; i <= n; i++) if ($0 ~ re[i]) { c[i]++; next }; print > out }
		END { close(out); for (i = 1; i <= n; i++) if (c[i]) printf "%s%d %s", (o++ ? "; " : ""), c[i], why[i] }' \
		"$row_differences" "$2"
	touch "$2.kept"
}

declare -A tot_a tot_m tot_c
for tb in $tables $tsv_tables; do tot_a[$tb]=0; tot_m[$tb]=0; tot_c[$tb]=0; done
n_fix=0

compare_fixture() { # name archive
	local name=$1 a=$2 w=$T_TMP/i.$1
	mkdir -p "$w"
	"$TRACEMOUNT" check "$a" >/dev/null 2>&1 || return 0 # does not merge: nothing to compare
	if ! "$TRACEMOUNT" cat "$a" merged.pftrace >"$w/merged.pftrace" 2>"$w/cat.err"; then
		fail "interop $name: merged.pftrace" "$(cat "$w/cat.err")"
		return
	fi
	if ! import "$a" "$w/a"; then
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
	local d mname
	: >"$w/m/tsv_slice.rows.u"; : >"$w/m/tsv_thread.rows.u"; : >"$w/m/tsv_process.rows.u"
	for d in $("$TRACEMOUNT" ls "$a" machines); do
		mname=$("$TRACEMOUNT" cat "$a" "machines/$d/machine.json" | jq -r '.name // "\\N"')
		"$TRACEMOUNT" cat "$a" "machines/$d/timeline.tsv" | awk -F'\t' -v m="$mname" \
			'NR > 1 && ($5 == "slice" || $5 == "instant") { print $7 "\t" $1 "\t" $2 "\t" m }' >>"$w/m/tsv_slice.rows.u"
		"$TRACEMOUNT" cat "$a" "machines/$d/threads.tsv" | awk -F'\t' -v m="$mname" \
			'NR > 1 { print m "\t" $1 "\t" $2 }' >>"$w/m/tsv_thread.rows.u"
		"$TRACEMOUNT" cat "$a" "machines/$d/processes.tsv" | awk -F'\t' -v m="$mname" \
			'NR > 1 { print m "\t" $1 "\t" $2 }' >>"$w/m/tsv_process.rows.u"
	done
	for tb in $tsv_tables; do sort "$w/m/$tb.rows.u" >"$w/m/$tb.rows"; done
	n_fix=$((n_fix + 1))
	printf '\n%s\n' "$name"
	printf '  %-13s %9s %9s %9s\n' table archive merged common
	local tb na nm nc why lines=()
	for tb in $tables $tsv_tables; do
		na=$(wc -l <"$w/a/$tb.rows"); nm=$(wc -l <"$w/m/$tb.rows")
		nc=$(comm -12 "$w/a/$tb.rows" "$w/m/$tb.rows" | wc -l)
		tot_a[$tb]=$((tot_a[$tb] + na)); tot_m[$tb]=$((tot_m[$tb] + nm)); tot_c[$tb]=$((tot_c[$tb] + nc))
		printf '  %-13s %9d %9d %9d\n' "$tb" "$na" "$nm" "$nc"
		if [ "$na" -eq "$nm" ] && [ "$nc" -eq "$na" ]; then
			lines+=("PASS interop $name: $tb ($na rows)")
		else
			why=$(documented "$name" "$tb")
			aside_a=$(set_aside "$tb" "$w/a/$tb.rows"); aside_m=$(set_aside "$tb" "$w/m/$tb.rows")
			if [ -z "$why" ] && { [ -n "$aside_a" ] || [ -n "$aside_m" ]; } &&
				cmp -s "$w/a/$tb.rows.kept" "$w/m/$tb.rows.kept"; then
				lines+=("PASS interop $name: $tb differs as documented ($na/$nm/$nc): set aside from the archive's: ${aside_a:-none}; from merged: ${aside_m:-none}")
			elif [ -n "$why" ]; then
				lines+=("PASS interop $name: $tb differs as documented ($na/$nm/$nc): $why")
			else
				lines+=("FAIL interop $name: $tb: archive $na, merged $nm, common $nc; first differences: $(diff "$w/a/$tb.rows" "$w/m/$tb.rows" | grep '^[<>]' | head -n 3 | tr '\n' ' ')")
				T_FAILED=1
			fi
		fi
	done
	printf '%s\n' "${lines[@]}"
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
	compare_fixture "$name" "$a"
done

printf '\nall %d fixtures\n' "$n_fix"
printf '  %-13s %9s %9s %9s %7s\n' table archive merged common common%
for tb in $tables $tsv_tables; do
	pct=$(awk -v c="${tot_c[$tb]}" -v a="${tot_a[$tb]}" -v m="${tot_m[$tb]}" \
		'BEGIN { d = a > m ? a : m; printf "%.1f", d ? 100 * c / d : 100 }')
	printf '  %-13s %9d %9d %9d %7s\n' "$tb" "${tot_a[$tb]}" "${tot_m[$tb]}" "${tot_c[$tb]}" "$pct"
done
exit $T_FAILED
