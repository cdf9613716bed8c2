#!/usr/bin/env bash
# tests/t_model.sh - the model reads merged.pftrace as it reads the archive.
#
# For every conformance scenario whose archive merges and every real
# capture of tests/interop/captures/, the model's tables of the archive
# (tm_model ARCHIVE: slice, instant, thread, process, counter, sched, flow,
# in tests/interop/tables.sql's columns) must equal the model's tables of
# `tracemount cat ARCHIVE merged.pftrace`: the proto half of the model reads
# back what the exporter encoded from the JSON and systrace halves, and the
# proto files it copied. No reference is needed (tests/interop/model.sh
# holds the model to the reference itself).
#
# One PASS line per fixture whose tables are equal; a table that differs
# FAILs, unless the difference is the reasoned one below or
# tests/t_model_differences names the fixture and table with the reason
# (printed on its PASS line). T_MODEL_ONLY=GLOB limits the fixtures.
#
# The reasoned difference: thread and process rows of tid / pid 0, as
# tests/interop/row-differences names them (set aside on both sides, the
# rest equal). The reference gives every machine of a proto or systrace
# file the idle process (SetPidZeroIsUpidZeroIdleProcess: tid 0 is the
# swapper thread, named "swapper", and pid 0 its process), and
# merged.pftrace is a proto file; a machine only JSON files read keeps an
# unnamed swapper row, and a JSON event's pid 0 or tid 0 there is a
# process / thread of its own.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/scenario.sh"
. "$here/interop/lib.sh"
tm_model=$BUILD/tools/tm_model
differences=$here/t_model_differences
row_differences=$here/interop/row-differences
tables="slice instant thread process counter sched flow"

if [ ! -x "$tm_model" ] || [ ! -x "$BUILD/tools/mkzip" ]; then
	skip "model" "no $tm_model (make check builds it)"
	exit 0
fi
scenario_init || { fail "model" "cannot encode the fixtures (protoc)"; exit 1; }

check_fixture() { # name archive
	local name=$1 a=$2 w=$T_TMP/mod.$1
	mkdir -p "$w/a" "$w/m"
	"$TRACEMOUNT" check "$a" >/dev/null 2>&1 || return 0 # does not merge
	if ! "$TRACEMOUNT" cat "$a" merged.pftrace >"$w/merged.pftrace" 2>"$w/cat.err"; then
		fail "model $name: merged.pftrace" "$(head -c 300 "$w/cat.err")"
		return
	fi
	if ! "$tm_model" "$a" >"$w/a.all" 2>"$w/a.err"; then
		fail "model $name: tm_model of the archive" "$(tail -n 3 "$w/a.err")"
		return
	fi
	if [ ! -s "$w/merged.pftrace" ]; then
		: >"$w/m.all" # nothing to read: no tables
	elif ! "$tm_model" "$w/merged.pftrace" >"$w/m.all" 2>"$w/m.err"; then
		fail "model $name: tm_model of merged.pftrace" "$(tail -n 3 "$w/m.err")"
		return
	fi
	# shellcheck disable=SC2086
	split_rows "$w/a.all" "$w/a" $tables
	# shellcheck disable=SC2086
	split_rows "$w/m.all" "$w/m" $tables
	local tb na nm nc why aside_a aside_m same=() notes=()
	for tb in $tables; do
		if cmp -s "$w/a/$tb.rows" "$w/m/$tb.rows"; then
			same+=("$tb")
			continue
		fi
		na=$(wc -l <"$w/a/$tb.rows"); nm=$(wc -l <"$w/m/$tb.rows")
		nc=$(comm -12 "$w/a/$tb.rows" "$w/m/$tb.rows" | wc -l)
		why=$(documented "$differences" "$name" "$tb")
		if [ -z "$why" ]; then
			aside_a=$(set_aside "$row_differences" "$tb" "$w/a/$tb.rows")
			aside_m=$(set_aside "$row_differences" "$tb" "$w/m/$tb.rows")
			if { [ -n "$aside_a" ] || [ -n "$aside_m" ]; } && cmp -s "$w/a/$tb.rows.kept" "$w/m/$tb.rows.kept"; then
				why="only rows tests/interop/row-differences names differ: set aside from the archive's: ${aside_a:-none}; from merged.pftrace's: ${aside_m:-none}"
			fi
		fi
		if [ -n "$why" ]; then
			notes+=("$tb ($na/$nm/$nc): $why")
		else
			fail "model $name: $tb" "archive $na, merged.pftrace $nm, common $nc; first differences: $(diff "$w/a/$tb.rows" "$w/m/$tb.rows" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
		fi
	done
	pass "model $name: ${same[*]:-no table} equal"
	local n
	for n in "${notes[@]}"; do
		pass "model $name: differs as documented: $n"
	done
}

for dir in "$here"/conformance/*/ "$here"/interop/captures/*/; do
	dir=${dir%/}
	[ -f "$dir/archive" ] || continue
	name=$(basename "$dir")
	case "$name" in ${T_MODEL_ONLY:-*}) ;; *) continue ;; esac
	a=$T_TMP/$name.$(cat "$dir/archive")
	if ! build_archive "$dir" "$a" 2>"$T_TMP/build.err"; then
		fail "model $name: build" "$(cat "$T_TMP/build.err")"
		continue
	fi
	check_fixture "$name" "$a"
done
exit $T_FAILED
