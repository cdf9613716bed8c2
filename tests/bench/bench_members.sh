#!/usr/bin/env bash
# tests/bench/bench_members.sh - an archive of many small members: a ZIP of
# BENCH_MEMBERS (default 100,000) tiny Chrome JSON traces in 100
# directories, then the same files as a folder of loose files. Wall time,
# CPU time and peak RSS of the mount tier (`tracemount ls A files`) and of
# the scan and the parse pass of its stats (`tracemount cat A
# metadata.json`: without the index, cold with
# the index written, warm from it), next to `unzip -l` and `unzip -p` of
# the archive (`find` and `cat` of every file for the folder) in the same
# run. Numbers only: the aims (mount tier < 0.5 s, scan < 2 s, both
# < 100 MB) are shown, never asserted.
#
# The archive is generated once (it takes a while) into $BENCH_CACHE
# (default /tmp/tmbench-cache), named after the member count and a hash of
# this script.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
cache=${BENCH_CACHE:-/tmp/tmbench-cache}
n=${BENCH_MEMBERS:-100000}
hash=$(sha1sum "$0" | cut -c1-8)
work=$(mktemp -d /tmp/tmbench-members.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export XDG_CACHE_HOME=$work/xdg
mkdir -p "$cache"

a=$cache/members-$n-$hash.zip
if [ ! -s "$a" ]; then
	echo "bench_members: generating $a" >&2
	mkdir -p "$work/src"
	(cd "$work/src" && awk -v n="$n" 'BEGIN {
		per = int((n + 99) / 100)
		for (i = 0; i < n; i++) {
			d = sprintf("p%03d", int(i / per))
			if (i % per == 0) system("mkdir -p " d)
			f = sprintf("%s/t%06d.json", d, i)
			printf "{\"traceEvents\":[{\"pid\":%d,\"tid\":%d,\"ts\":%d,\"dur\":5,\"ph\":\"X\",\"name\":\"s%d\"}]}\n", int(i / per), i % 1000, i, i > f
			close(f)
		}
	}' && zip -q -D -r "$a.tmp" .) && mv "$a.tmp" "$a" || { rm -f "$a.tmp"; echo "bench_members: cannot generate" >&2; exit 1; }
	rm -rf "$work/src"
fi
cat "$a" >/dev/null

# "WALL CPU PEAK_MB" of a command (stdout discarded).
measure() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -o "$work/t" -f '%U %S %M' "$@" >/dev/null 2>"$work/err" || { echo "- - -"; return; }
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" '{ printf "%.2f %.2f %.1f", (b - a) / 1e9, $1 + $2, $3 / 1024 }' "$work/t"
}
row() { # label command...
	local label=$1; shift
	read -r wall cpu rss < <(measure "$@")
	printf '%-36s %8s %8s %9s\n' "$label" "$wall" "$cpu" "$rss"
}

echo "archive: $(unzip -l "$a" | tail -n 1 | awk '{ print $2 }') members, $(awk -v s="$(stat -c %s "$a")" 'BEGIN { printf "%.1f", s / 1048576 }') MB"
printf '%-36s %8s %8s %9s\n' command wall_s cpu_s peak_MB
row "unzip -l (baseline: list)" unzip -l "$a"
row "unzip -p (baseline: every byte)" unzip -p "$a"
row "tracemount ls A files (mount tier)" "$tm" ls "$a" files
row "tracemount cat -o noindex A metadata" "$tm" cat -o noindex "$a" metadata.json
rm -rf "$XDG_CACHE_HOME"
row "tracemount cat A metadata (cold)" "$tm" cat "$a" metadata.json
row "tracemount cat A metadata (warm)" "$tm" cat "$a" metadata.json

# The same members as a folder of loose files (tracemount(1), INPUTS: the
# tree and metadata of the ZIP that packs them): a file system walk and a
# file opened for each member instead of one archive's directory.
mkdir -p "$work/loose" && (cd "$work/loose" && unzip -q "$a") || { echo "bench_members: cannot unzip" >&2; exit 1; }
d=$work/loose
echo "folder: $(find "$d" -type f | wc -l) files"
printf '%-36s %8s %8s %9s\n' command wall_s cpu_s peak_MB
row "find -type f (baseline: walk)" find "$d" -type f
row "cat every file (baseline: every byte)" sh -c 'find "$1" -type f -exec cat {} +' sh "$d"
row "tracemount ls D files (mount tier)" "$tm" ls "$d" files
row "tracemount cat -o noindex D metadata" "$tm" cat -o noindex "$d" metadata.json
rm -rf "$XDG_CACHE_HOME"
row "tracemount cat D metadata (cold)" "$tm" cat "$d" metadata.json
row "tracemount cat D metadata (warm)" "$tm" cat "$d" metadata.json
echo "aims (shown, not asserted): mount tier < 0.5 s and < 100 MB; scan < 2 s and < 100 MB"
