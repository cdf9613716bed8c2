#!/usr/bin/env bash
# tests/interop/model.sh - compare, table by table, the reference's import of
# each fixture archive with the model's tables of the same archive
# (core/model.h, printed by build/.../tools/tm_model).
#
#   TRACE_PROCESSOR_SHELL=/path/to/trace_processor_shell tests/interop/model.sh [BUILD]
#
# Fixtures: as tests/interop/run.sh (every conformance scenario whose
# archive merges, and the real captures of tests/interop/captures/). For
# each, `trace_processor_shell query -f tables.sql` runs on the archive and
# `tm_model` on the archive; the rows of each table are compared as
# multisets. Per fixture a table is printed (table, rows in the reference,
# in the model, in common), then one PASS/FAIL line per (fixture, table):
# PASS when both hold the same rows, or when tests/interop/model_differences
# names the fixture and table (a documented, reasoned difference: the line
# says why). A total table ends the run. INTEROP_ONLY=GLOB limits the
# fixtures.
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
	skip "interop model" "TRACE_PROCESSOR_SHELL is not set to a trace_processor_shell binary"
	exit 0
fi
tm_model=$BUILD/tools/tm_model
if [ ! -x "$tm_model" ]; then
	fail "interop model" "$tm_model is not built (make bins)"
	exit 1
fi
scenario_init || { fail "interop model" "cannot encode the fixtures (protoc)"; exit 1; }

tables="slice instant thread process counter sched flow"
differences=$here/model_differences

# The reference's rows, one file per table: TABLE.rows, sorted.
import() { # trace outdir
	local t=$1 d=$2
	mkdir -p "$d"
	if ! "$tp" query -f "$here/tables.sql" "$t" >"$d/out.csv" 2>"$d/err"; then
		return 1
	fi
	grep -v '^"row"$' "$d/out.csv" | grep -v '^$' |
		sed -e 's/^"//' -e 's/"$//' -e 's/""/"/g' >"$d/all"
	local tb
	for tb in $tables; do
		awk -F'\t' -v t="$tb" '$1 == t' "$d/all" | cut -f2- | sort >"$d/$tb.rows"
	done
}

# The model's rows, the same way.
model() { # archive outdir
	local a=$1 d=$2
	mkdir -p "$d"
	"$tm_model" "$a" >"$d/all" 2>"$d/err" || return 1
	local tb
	for tb in $tables; do
		awk -F'\t' -v t="$tb" '$1 == t' "$d/all" | cut -f2- | sort >"$d/$tb.rows"
	done
}

documented() { # fixture table -> the reason, or nothing
	[ -f "$differences" ] || return 0
	awk -v f="$1" -v t="$2" '!/^#/ && NF >= 3 {
		split($0, p, " "); if (f ~ ("^" p[1] "$") && p[2] == t) {
			r = $0; sub(/^[^ ]+ [^ ]+ /, "", r); print r; exit } }' "$differences"
}

declare -A tot_a tot_m tot_c
for tb in $tables; do tot_a[$tb]=0; tot_m[$tb]=0; tot_c[$tb]=0; done
n_fix=0

compare_fixture() { # name archive
	local name=$1 a=$2 w=$T_TMP/m.$1
	mkdir -p "$w"
	"$TRACEMOUNT" check "$a" >/dev/null 2>&1 || return 0 # does not merge: nothing to compare
	if ! import "$a" "$w/a"; then
		skip "interop model $name" "the reference does not import the archive: $(grep -v '^\[' "$w/a/err" | tail -n 1)"
		return
	fi
	if ! model "$a" "$w/m"; then
		fail "interop model $name: tm_model" "$(tail -n 2 "$w/m/err")"
		return
	fi
	n_fix=$((n_fix + 1))
	printf '\n%s\n' "$name"
	printf '  %-13s %9s %9s %9s\n' table reference model common
	local tb na nm nc why lines=()
	for tb in $tables; do
		na=$(wc -l <"$w/a/$tb.rows"); nm=$(wc -l <"$w/m/$tb.rows")
		nc=$(comm -12 "$w/a/$tb.rows" "$w/m/$tb.rows" | wc -l)
		tot_a[$tb]=$((tot_a[$tb] + na)); tot_m[$tb]=$((tot_m[$tb] + nm)); tot_c[$tb]=$((tot_c[$tb] + nc))
		printf '  %-13s %9d %9d %9d\n' "$tb" "$na" "$nm" "$nc"
		if [ "$na" -eq "$nm" ] && [ "$nc" -eq "$na" ]; then
			lines+=("PASS interop model $name: $tb ($na rows)")
		else
			why=$(documented "$name" "$tb")
			if [ -n "$why" ]; then
				lines+=("PASS interop model $name: $tb differs as documented ($na/$nm/$nc): $why")
			else
				lines+=("FAIL interop model $name: $tb: reference $na, model $nm, common $nc; first differences: $(diff "$w/a/$tb.rows" "$w/m/$tb.rows" | grep '^[<>]' | head -n 3 | tr '\n' ' ')")
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
		fail "interop model $name: build" "$(cat "$T_TMP/build.err")"
		continue
	fi
	compare_fixture "$name" "$a"
done

printf '\nall %d fixtures\n' "$n_fix"
printf '  %-13s %9s %9s %9s %7s\n' table reference model common common%
for tb in $tables; do
	pct=$(awk -v c="${tot_c[$tb]}" -v a="${tot_a[$tb]}" -v m="${tot_m[$tb]}" \
		'BEGIN { d = a > m ? a : m; printf "%.1f", d ? 100 * c / d : 100 }')
	printf '  %-13s %9d %9d %9d %7s\n' "$tb" "${tot_a[$tb]}" "${tot_m[$tb]}" "${tot_c[$tb]}" "$pct"
done
exit $T_FAILED
