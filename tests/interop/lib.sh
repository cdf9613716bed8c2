# tests/interop/lib.sh - what the table comparisons share (sourced by
# tests/interop/run.sh, tests/interop/model.sh and tests/t_model.sh, after
# tests/lib.sh): rows split per table, the documented differences, the
# per-fixture comparison and the totals.
#
# A side's rows come as one file of "TABLE<tab>row" lines (tables.sql's
# output, or tm_model's); each table's rows go to DIR/TABLE.rows, sorted,
# and are compared as multisets.

interop_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# reference_rows TP TRACE DIR TABLE...: the reference (trace_processor_shell
# TP) imports TRACE and runs tables.sql; DIR/all holds its rows, DIR/err
# its messages, and each TABLE's rows are split out. 1 when it refuses.
reference_rows() {
	local tp=$1 t=$2 d=$3
	shift 3
	mkdir -p "$d"
	if ! "$tp" query -f "$interop_dir/tables.sql" "$t" >"$d/out.csv" 2>"$d/err"; then
		return 1
	fi
	# one column "row" per result set; CSV-quoted: strip the quotes
	grep -v '^"row"$' "$d/out.csv" | grep -v '^$' |
		sed -e 's/^"//' -e 's/"$//' -e 's/""/"/g' >"$d/all"
	split_rows "$d/all" "$d" "$@"
}

# split_rows ALL DIR TABLE...
split_rows() {
	local all=$1 d=$2 tb
	shift 2
	mkdir -p "$d"
	for tb in "$@"; do
		awk -F'\t' -v t="$tb" '$1 == t' "$all" | cut -f2- | sort >"$d/$tb.rows"
	done
}

# documented DIFFERENCES FIXTURE TABLE -> the reason, or nothing. A line of
# DIFFERENCES: FIXTURE_REGEX TABLE REASON (the whole table of a fixture).
documented() {
	[ -f "$1" ] || return 0
	awk -v f="$2" -v t="$3" '!/^#/ && NF >= 3 {
		split($0, p, " "); if (f ~ ("^" p[1] "$") && p[2] == t) {
			r = $0; sub(/^[^ ]+ [^ ]+ /, "", r); print r; exit } }' "$1"
}

# set_aside ROW_DIFFERENCES TABLE FILE: FILE.kept is FILE without the rows
# of TABLE that a line of ROW_DIFFERENCES (TABLE ROW_REGEX REASON) names;
# prints "N REASON; ..." for what was set aside (nothing when none was).
set_aside() {
	if [ ! -f "$1" ]; then
		cp "$3" "$3.kept"
		return 0
	fi
	awk -F'\t' -v t="$2" -v out="$3.kept" '
		FNR == NR { if (!/^#/ && NF) { split($0, p, " "); if (p[1] == t) {
			n++; re[n] = p[2]; r = $0; sub(/^[^ ]+ [^ ]+ /, "", r); why[n] = r } } next }
		{ for (i = 1; i <= n; i++) if ($0 ~ re[i]) { c[i]++; next }; print > out }
		END { close(out); for (i = 1; i <= n; i++) if (c[i]) printf "%s%d %s", (o++ ? "; " : ""), c[i], why[i] }' \
		"$1" "$3"
	touch "$3.kept"
}

# The running totals of compare_tables, per table, and the fixture count.
declare -A tot_a tot_m tot_c
n_fix=0

# compare_tables LABEL NAME DIR SIDE_A SIDE_M DIFFERENCES ROW_DIFFERENCES TABLE...
# Compares DIR/a/TABLE.rows with DIR/m/TABLE.rows for each TABLE: prints
# the fixture's table (rows on each side, in common), then one line per
# table: PASS when equal; PASS "differs as documented" when DIFFERENCES
# names the fixture and table, or when the rows ROW_DIFFERENCES names are
# all that differ (set aside on both sides; "" for none); else FAIL (and
# T_FAILED=1). Adds to the totals.
compare_tables() {
	local label=$1 name=$2 w=$3 sa=$4 sm=$5 diffs=$6 rdiffs=$7
	shift 7
	local tb na nm nc why aside_a aside_m lines=()
	n_fix=$((n_fix + 1))
	printf '\n%s\n' "$name"
	printf '  %-13s %9s %9s %9s\n' table "$sa" "$sm" common
	for tb in "$@"; do
		na=$(wc -l <"$w/a/$tb.rows"); nm=$(wc -l <"$w/m/$tb.rows")
		nc=$(comm -12 "$w/a/$tb.rows" "$w/m/$tb.rows" | wc -l)
		tot_a[$tb]=$((${tot_a[$tb]:-0} + na)); tot_m[$tb]=$((${tot_m[$tb]:-0} + nm))
		tot_c[$tb]=$((${tot_c[$tb]:-0} + nc))
		printf '  %-13s %9d %9d %9d\n' "$tb" "$na" "$nm" "$nc"
		if [ "$na" -eq "$nm" ] && [ "$nc" -eq "$na" ]; then
			lines+=("PASS $label $name: $tb ($na rows)")
			continue
		fi
		why=$(documented "$diffs" "$name" "$tb")
		aside_a=""; aside_m=""
		if [ -z "$why" ] && [ -n "$rdiffs" ]; then
			aside_a=$(set_aside "$rdiffs" "$tb" "$w/a/$tb.rows"); aside_m=$(set_aside "$rdiffs" "$tb" "$w/m/$tb.rows")
		fi
		if [ -z "$why" ] && { [ -n "$aside_a" ] || [ -n "$aside_m" ]; } &&
			cmp -s "$w/a/$tb.rows.kept" "$w/m/$tb.rows.kept"; then
			lines+=("PASS $label $name: $tb differs as documented ($na/$nm/$nc): set aside from the $sa's: ${aside_a:-none}; from $sm: ${aside_m:-none}")
		elif [ -n "$why" ]; then
			lines+=("PASS $label $name: $tb differs as documented ($na/$nm/$nc): $why")
		else
			lines+=("FAIL $label $name: $tb: $sa $na, $sm $nm, common $nc; first differences: $(diff "$w/a/$tb.rows" "$w/m/$tb.rows" | grep '^[<>]' | head -n 3 | tr '\n' ' ')")
			T_FAILED=1
		fi
	done
	printf '%s\n' "${lines[@]}"
}

# print_totals SIDE_A SIDE_M TABLE...: the totals over every fixture.
print_totals() {
	local sa=$1 sm=$2 tb pct
	shift 2
	printf '\nall %d fixtures\n' "$n_fix"
	printf '  %-13s %9s %9s %9s %7s\n' table "$sa" "$sm" common common%
	for tb in "$@"; do
		pct=$(awk -v c="${tot_c[$tb]:-0}" -v a="${tot_a[$tb]:-0}" -v m="${tot_m[$tb]:-0}" \
			'BEGIN { d = a > m ? a : m; printf "%.1f", d ? 100 * c / d : 100 }')
		printf '  %-13s %9d %9d %9d %7s\n' "$tb" "${tot_a[$tb]:-0}" "${tot_m[$tb]:-0}" "${tot_c[$tb]:-0}" "$pct"
	done
}
