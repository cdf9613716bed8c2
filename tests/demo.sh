#!/usr/bin/env bash
# tests/demo.sh TRACEMOUNT - build the bundled demo archive from its sources
# (testdata/demo/), mount it on a temporary directory, show `ls -R`,
# `jq . metadata.json`, the trace time and machines, the timeline, a
# machine's threads and slice statistics, each file's way to trace time and
# the clock graph, and unmount, whatever happens.
set -eu
tm=$(realpath "$1")
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
testdata/demo/build.sh "$out/demo.zip" >/dev/null
mnt=$(mktemp -d /tmp/tracemount-demo.XXXXXX)
cleanup() {
	if grep -qs " $mnt fuse" /proc/mounts; then fusermount3 -u "$mnt" || umount -l "$mnt"; fi
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
	echo "\$ tracemount $out/demo.zip $mnt"
	"$tm" "$out/demo.zip" "$mnt"
	echo "\$ ls -R $mnt"
	(cd "$mnt" && ls -R)
	echo "\$ jq . $mnt/metadata.json"
	jq . "$mnt/metadata.json"
	echo "\$ jq -c '.trace_time, [.machines[] | {name, dir, events}]' $mnt/metadata.json"
	jq -c '.trace_time, [.machines[] | {name, dir, events}]' "$mnt/metadata.json"
	echo "\$ column -t -s \$'\\t' $mnt/timeline.tsv | head -n 12"
	column -t -s $'\t' "$mnt/timeline.tsv" | head -n 12
	d=$(ls "$mnt/machines" | head -n 1)
	echo "\$ column -t -s \$'\\t' $mnt/machines/$d/threads.tsv | head -n 8"
	column -t -s $'\t' "$mnt/machines/$d/threads.tsv" | head -n 8
	echo "\$ column -t -s \$'\\t' $mnt/machines/$d/slices.tsv | head -n 8"
	column -t -s $'\t' "$mnt/machines/$d/slices.tsv" | head -n 8
	echo "\$ jq -c '.files[] | select(.placement) | {path, placement: [.placement[] | {clocks, hops}]}' $mnt/metadata.json"
	jq -c '.files[] | select(.placement) | {path, placement: [.placement[] | {clocks, hops}]}' "$mnt/metadata.json"
	echo "\$ ls -l $mnt/merged.pftrace $mnt/machines/*/merged.pftrace"
	ls -l "$mnt/merged.pftrace" "$mnt"/machines/*/merged.pftrace
	if command -v dot >/dev/null; then
		echo "\$ dot -Tsvg $mnt/clocks/graph.dot | wc -c"
		dot -Tsvg "$mnt/clocks/graph.dot" | wc -c
	fi
	echo "\$ fusermount3 -u $mnt"
else
	echo "no /dev/fuse here: showing the same tree with 'tracemount ls' and 'tracemount cat'"
	"$tm" ls "$out/demo.zip" /
	"$tm" cat "$out/demo.zip" metadata.json | jq .
fi
