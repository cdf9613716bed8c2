#!/usr/bin/env bash
# tests/bench/run.sh - run every benchmark (tests/bench/bench_*.sh). These
# print numbers; they are not tests and assert no timing.
set -u
cd "$(dirname "$0")/../.."
# The benchmarks' index cache is their own (the user's stays clean).
XDG_CACHE_HOME=$(mktemp -d /tmp/tmbench-xdg.XXXXXX)
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for b in tests/bench/bench_*.sh; do
	echo "== $b"
	bash "$b" || echo "$b failed"
done
