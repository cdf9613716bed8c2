#!/usr/bin/env bash
# tests/t_layers.sh - core/ is a pipeline of layers, each a folder, and a
# folder per format (README, "Layout"; issue 34). A layer calls only the
# layers below it: from the build's objects (nm), every function one
# folder's code calls in another folder must be of a lower rank below.
# So there is no cycle between layers, a reader knows nothing of the
# exporter or the model, the model knows no format, and a format module
# may use every layer but the drivers above it (the registry, the pass,
# the session). A folder of core/ that the ranks do not name fails too:
# a new layer takes its place here on purpose. A new format's folder
# (core/formats/NAME) is a format module: rank 8.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)

rank() {
	case "$1" in
	util) echo 0 ;;
	clock | detect | sort) echo 1 ;;
	manifest | container) echo 2 ;;
	wire | input) echo 3 ;;
	scan) echo 4 ;;
	model) echo 5 ;;
	export) echo 6 ;;
	formats/systrace) echo 7 ;; # its line parser serves the JSON and proto modules
	formats/*) echo 8 ;;
	formats) echo 9 ;;          # the registry
	pass) echo 10 ;;
	session) echo 11 ;;
	*) echo "" ;;
	esac
}

objs=$BUILD/obj/core
if ! command -v nm >/dev/null 2>&1 || [ ! -d "$objs" ]; then
	skip "layers" "no nm, or no objects in $objs"
	exit 0
fi

# Every folder of core/ has a rank.
for d in $(cd "$root/core" && find . -name '*.c' | sed 's|^\./||; s|/[^/]*$||' | sort -u); do
	if [ -z "$(rank "$d")" ]; then fail "layers: core/$d has a rank" "add it to tests/t_layers.sh"; fi
done

# The same for the headers a file includes: a type or an inline function
# of a layer above is a dependency too (the model's structs name no
# format's). core/formats/kinds.h, the record kinds that the format
# modules share, ranks below them.
header_rank() {
	case "$1" in
	formats/kinds.h) echo 6 ;;
	*) rank "$(dirname "$1")" ;;
	esac
}
up=""
while IFS= read -r f; do
	from=$(dirname "$f"); rf=$(rank "$from")
	while IFS= read -r inc; do
		to=$(dirname "$inc")
		[ "$to" = . ] || [ "$to" = "$from" ] && continue
		rt=$(header_rank "$inc")
		[ -n "$rt" ] || continue # not a header of core/ (build/gen)
		[ "$rf" -gt "$rt" ] || up+="core/$f includes $inc; "
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$root/core/$f")
done < <(cd "$root/core" && find . -name '*.[ch]' | sed 's|^\./||' | sort)
if [ -z "$up" ]; then
	pass "layers: every header a file of core/ includes is of its folder or a layer below"
else
	fail "layers: a header of a layer above or across" "$(printf '%s' "$up" | head -c 1500)"
fi

# folder TAB symbol, for what each object defines and what it calls
defs=$T_TMP/defs; uses=$T_TMP/uses
: >"$defs"; : >"$uses"
n=0
while IFS= read -r o; do
	rel=${o#"$objs/"}
	dir=$(dirname "$rel")
	[ "$dir" = . ] && continue
	[ -f "$root/core/${rel%.o}.c" ] || continue # an object left from an older layout
	n=$((n + 1))
	nm "$o" | awk -v d="$dir" -v f="$(basename "$rel" .o)" -v defs="$defs" -v uses="$uses" '
		NF == 3 && $2 ~ /^[TDBR]$/ { print $3 "\t" d >> defs }
		NF == 2 && $1 == "U" { print $2 "\t" d "\t" f >> uses }'
done < <(find "$objs" -name '*.o' | sort)
if [ "$n" -eq 0 ]; then
	fail "layers" "no object of core/ in $objs"
	exit 1
fi

# caller-folder callee-folder symbol file, for calls across folders
edges=$(awk -F'\t' 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2 "\t" def[$1] "\t" $1 "\t" $3 }' "$defs" "$uses" | sort -u)
bad=""
while IFS=$'\t' read -r from to sym file; do
	[ -n "$from" ] || continue
	rf=$(rank "$from"); rt=$(rank "$to")
	if [ -z "$rf" ] || [ -z "$rt" ] || [ "$rf" -le "$rt" ]; then
		bad+="core/$from/$file.c calls $sym of core/$to; "
	fi
done <<<"$edges"
folders=$(printf '%s\n' "$edges" | cut -f1,2 | sort -u | grep -c .)
if [ -z "$bad" ]; then
	pass "layers: $n objects in $(cut -f2 "$uses" | sort -u | grep -c .) folders; the $folders pairs of folders that call each other, each to a layer below"
else
	fail "layers: a call upward or across" "$(printf '%s' "$bad" | head -c 1500)"
fi
