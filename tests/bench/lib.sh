# tests/bench/lib.sh - what the benchmarks that time the reference share
# (sourced; needs $work, a scratch directory, and $tm, our binary).

# build KIND SOURCE N [bare]: $work/KIND.tar of N copies of SOURCE, one
# machine each; with "bare", no manifest (all on one machine)
build() {
	# one word per `local`: its words are expanded before any is set, so
	# `local kind=$1 d=$work/$kind` would read the caller's $kind
	local kind=$1 src=$2 n=$3 bare=${4:-}
	local d=$work/$kind ext=${2##*.}
	mkdir -p "$d"
	if [ "${src%.gz}" != "$src" ]; then
		ext=${src%.gz}; ext=${ext##*.}
		gunzip -c "$src" >"$d/t0.$ext"
	else
		cp "$src" "$d/t0.$ext"
	fi
	local i files=""
	for ((i = 1; i < n; i++)); do ln "$d/t0.$ext" "$d/t$i.$ext"; done
	{
		printf '{"perfetto_manifest": {"version": 1, "files": ['
		for ((i = 0; i < n; i++)); do
			[ $i -gt 0 ] && printf ', '
			printf '{"path": "t%d.%s", "machine": {"name": "m%d"}}' $i "$ext" $i
		done
		printf ']}}\n'
	} >"$d/perfetto_manifest.json"
	for ((i = 0; i < n; i++)); do files="$files t$i.$ext"; done
	[ "$bare" = bare ] || files="perfetto_manifest.json$files"
	# shellcheck disable=SC2086
	(cd "$d" && tar --hard-dereference -cf "$work/$kind.tar" $files)
	rm -rf "$d"
}

# timed OUT_VAR CMD...: "seconds peak_kb", the fastest of BENCH_RUNS runs
# (3) and the largest peak, output discarded: on a shared VM one run's
# time moves by a third (the reference's import of the proto archive took
# 9.6 s and 12.9 s in two runs of one hour). The wall time is bash's clock
# (EPOCHREALTIME, in microseconds) around the run: GNU time's %e has 10 ms
# steps, a seventh of a 0.07 s scan (35x and 40x were the same run).
runs=${BENCH_RUNS:-3}

# faster T BEST: whether T seconds beat BEST (true when BEST is empty)
faster() {
	[ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'
}

timed() {
	local v=$1 i best="" peak=0 t0 t1 t k; shift
	for ((i = 0; i < runs; i++)); do
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
			echo "  failed: $* ($(tail -n 1 "$work/err"))" >&2
			printf -v "$v" '%s' "nan 0"
			return
		}
		t1=$EPOCHREALTIME
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		k=$(tail -n 1 "$work/time")
		if faster "$t" "$best"; then best=$t; fi
		[ "$k" -gt "$peak" ] && peak=$k
	done
	printf -v "$v" '%s' "$best $peak"
}

