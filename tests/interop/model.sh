#!/usr/bin/env bash
# tests/interop/model.sh - compare, table by table, the reference's import of
# each fixture archive with the model's tables of the same archive
# (core/model/model.h, printed by build/.../tools/tm_model).
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
. "$here/lib.sh"

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
	# shellcheck disable=SC2086
	reference_rows "$tp" "$1" "$2" $tables
}

# The model's rows, the same way.
model() { # archive outdir
	local a=$1 d=$2
	mkdir -p "$d"
	"$tm_model" "$a" >"$d/all" 2>"$d/err" || return 1
	# shellcheck disable=SC2086
	split_rows "$d/all" "$d" $tables
}

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
	# shellcheck disable=SC2086
	compare_tables "interop model" "$name" "$w" reference model "$differences" "" $tables
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

# shellcheck disable=SC2086
print_totals reference model $tables
exit $T_FAILED
