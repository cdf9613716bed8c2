#!/usr/bin/env bash
# tests/bench/run.sh - run every benchmark (tests/bench/bench_*.sh). These
# print numbers; they are not tests and assert no timing.
set -u
cd "$(dirname "$0")/../.."
for b in tests/bench/bench_*.sh; do
	echo "== $b"
	bash "$b" || echo "$b failed"
done
