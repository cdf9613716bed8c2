# tests/scenario.sh - build a scenario's archive (sourced after lib.sh).
#
# A scenario directory (tests/conformance/*, tests/interop/captures/*)
# holds `archive` (zip, tar, tgz, gz or single), `members` (one line per
# member in listing order: NAME SOURCE[+SOURCE...] [gz]) and the files its
# sources name; tests/t_conformance.sh documents the format. Sources:
#   FILE      a file of the scenario directory
#   @FIXTURE  testdata/conformance/FIXTURE, or FIXTURE.textproto encoded
#   ^SUB      the archive built from the sub-scenario directory SUB
#   %PATH     testdata/PATH, gunzipped when it ends in .gz (real captures)
#   empty     an empty member
#
#   scenario_init                  encode the proto fixtures once
#   build_archive DIR OUT_ARCHIVE  build DIR's archive
scenario_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fixtures=$scenario_here/../testdata/conformance
enc=$T_TMP/fixtures

scenario_init() {
	mkdir -p "$enc"
	if ls "$fixtures"/*.textproto >/dev/null 2>&1; then
		bash "$scenario_here/tools/encode_fixtures.sh" "$enc" >/dev/null || return 1
	fi
}

build_member() { # scenario_dir sources out
	local dir=$1 srcs=$2 out=$3 s
	: >"$out"
	IFS='+' read -ra parts <<<"$srcs"
	for s in "${parts[@]}"; do
		case "$s" in
		empty) ;;
		@*) if [ -f "$fixtures/${s#@}" ]; then cat "$fixtures/${s#@}" >>"$out"
		    else cat "$enc/${s#@}.pb" >>"$out"; fi || return 1 ;;
		%*.gz) gzip -dc "$TESTDATA/${s#%}" >>"$out" || return 1 ;;
		%*) cat "$TESTDATA/${s#%}" >>"$out" || return 1 ;;
		^*) build_archive "$dir/${s#^}" "$out.sub" && cat "$out.sub" >>"$out" && rm -f "$out.sub" || return 1 ;;
		*) cat "$dir/$s" >>"$out" || return 1 ;;
		esac
	done
}

build_archive() { # scenario_dir out_archive
	local dir=$1 out=$2 kind name src flag work
	kind=$(cat "$dir/archive")
	work=$T_TMP/work.$$.$RANDOM
	mkdir -p "$work"
	local names=() zargs=() i=0 f
	while read -r name src flag; do
		[ -n "$name" ] || continue
		case "$name" in \#*) continue ;; esac
		[ "$name" == "-" ] && name=$src
		case "$name" in */)
			names+=("$name"); zargs+=("$name"); continue ;;
		esac
		case "$src" in '->'*) # a TAR symbolic link
			mkdir -p "$work/t/$(dirname "$name")" && ln -s "${src#->}" "$work/t/$name"
			names+=("$name"); continue ;;
		esac
		i=$((i + 1)); f=$work/m$i
		build_member "$dir" "$src" "$f" || return 1
		if [ "${flag:-}" == gz ]; then gzip -n -c "$f" >"$f.tmp" && mv "$f.tmp" "$f"; fi
		case "$kind" in
		tar|tgz) mkdir -p "$work/t/$(dirname "$name")" && cp "$f" "$work/t/$name" ;;
		esac
		names+=("$name"); zargs+=("$name=$f")
	done <"$dir/members"
	rm -f "$out"
	case "$kind" in
	zip) "$BUILD/tools/mkzip" "$out" "${zargs[@]}" ;;
	tar) (cd "$work/t" && tar --format=$(cat "$dir/tarformat" 2>/dev/null || echo gnu) --no-recursion -cf "$out" "${names[@]}") ;;
	tgz) (cd "$work/t" && tar --format=gnu --no-recursion -czf "$out" "${names[@]}") ;;
	gz) (for j in $(seq 1 $i); do gzip -n -c "$work/m$j"; done >"$out") ;;
	single) cp "$work/m1" "$out" ;;
	esac
}

