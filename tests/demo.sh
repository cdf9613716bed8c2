#!/usr/bin/env bash
# tests/demo.sh TRACEMOUNT - build the bundled demo archive from its sources
# (testdata/demo/), mount it on a temporary directory, show `ls -R` and
# `jq . metadata.json`, and unmount, whatever happens.
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
trap cleanup EXIT INT TERM
if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
	echo "\$ tracemount $out/demo.zip $mnt"
	"$tm" "$out/demo.zip" "$mnt"
	echo "\$ ls -R $mnt"
	(cd "$mnt" && ls -R)
	echo "\$ jq . $mnt/metadata.json"
	jq . "$mnt/metadata.json"
	echo "\$ fusermount3 -u $mnt"
else
	echo "no /dev/fuse here: showing the same tree with 'tracemount ls' and 'tracemount cat'"
	"$tm" ls "$out/demo.zip" /
	"$tm" cat "$out/demo.zip" metadata.json | jq .
fi
