#!/usr/bin/env bash
# tests/t_concurrent.sh - readers of different generated files never wait
# for each other's build (DESIGN.md "Laziness and cost tiers"): through a
# mount of a bench-size proto trace, metadata.json is read completely while
# the generation pass of merged.pftrace is still running, then both files
# are right. Ordering only, no timing: the pass is known to be under way
# when the daemon holds its spooled files open under our TMPDIR, and known
# to be still running when the reader that started it has not returned.
#
# metadata.json's stats come from a pass of their own (tracemount(1),
# "Costs") that costs about what the generation pass costs, so a cold
# metadata.json may well end after the build: that case checks only that
# both reads complete and agree. The ordering check runs with an index
# that holds the scan and the stats but no sizes, so that metadata.json
# has nothing but its own rendering left while merged.pftrace must build.
#
# The pass is started through machines/machine0/merged.pftrace: with
# libfuse before 3.17 the kernel serializes lookups within one directory
# (tracemount(1), "Costs"), and a lookup of the root's merged.pftrace
# would hold the root while it builds.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
gen=$BUILD/tools/gen_trace
cd "$T_TMP"

if [ -n "${TM_NO_FUSE:-}" ] || ! have_fuse; then
	skip "metadata.json during a merged.pftrace build" "no FUSE here"
	exit 0
fi
if [ ! -x "$gen" ]; then
	skip "metadata.json during a merged.pftrace build" "no $gen (make check builds it)"
	exit 0
fi
# Large enough that the generation pass outlasts a read of metadata.json
# by far (seconds against milliseconds).
"$gen" proto 32 >big.pftrace || { fail "generate the trace"; exit 1; }
export TMPDIR=$T_TMP/spool
mkdir -p "$TMPDIR"
spooled() { ls -l "/proc/$daemon/fd" 2>/dev/null | grep -q " $TMPDIR/"; }

# An index of the scan and the stats, made by a read that builds no file.
"$tm" cat -o index="$T_TMP/stats.idx" big.pftrace metadata.json >meta.ref ||
	{ fail "index of the scan and the stats"; exit 1; }

m=$T_TMP/mnt
if ! tm_mount big.pftrace "$m" -o index="$T_TMP/stats.idx"; then
	fail "mount" "$(cat "$m.log")"
	exit 1
fi
daemon=${T_PIDS[-1]}

ok "the scan runs" cat "$m/clocks/edges.csv"

# A reader starts the generation pass: stat waits for the exact size.
ok "machines/ lists" ls "$m/machines/machine0"
stat -c %s "$m/machines/machine0/merged.pftrace" >size.out 2>&1 &
builder=$!
for i in $(seq 1 1200); do spooled && break; kill -0 $builder 2>/dev/null || break; sleep 0.05; done
if spooled && kill -0 $builder 2>/dev/null; then
	pass "the generation pass is under way"
	meta=$(cat "$m/metadata.json")
	rc=$?
	if kill -0 $builder 2>/dev/null; then
		pass "metadata.json answered while merged.pftrace was being built"
	else
		fail "metadata.json answered while merged.pftrace was being built" "it returned after the build"
	fi
	eq "metadata.json read during the build is complete" "$rc/$(jq -r .status <<<"$meta")" "0/ok"
else
	fail "the generation pass is under way" "no spooled file seen before the build ended"
fi
wait $builder
eq "merged.pftrace: its size once built" "$(cat size.out)" "$(cat "$m/machines/machine0/merged.pftrace" | wc -c)"
ok "metadata.json the same after the build" cmp <(printf '%s\n' "$meta") "$m/metadata.json"
ok "metadata.json the same as the read outside the mount" cmp meta.ref "$m/metadata.json"
if tm_umount "$m"; then pass "clean unmount"; else fail "clean unmount" "$(cat "$m.log")"; fi
grep -qs " $m fuse" /proc/mounts && fail "nothing left mounted" || pass "nothing left mounted"

# Cold: metadata.json's stats pass and the generation pass run side by
# side, each under its own lock; both end, and metadata.json is the same.
m=$T_TMP/mnt.cold
if ! tm_mount big.pftrace "$m" -o noindex; then
	fail "cold: mount" "$(cat "$m.log")"
	exit 1
fi
daemon=${T_PIDS[-1]}
stat -c %s "$m/machines/machine0/merged.pftrace" >size.cold 2>&1 &
builder=$!
for i in $(seq 1 1200); do spooled && break; kill -0 $builder 2>/dev/null || break; sleep 0.05; done
ok "cold: metadata.json read beside the build" cmp meta.ref "$m/metadata.json"
wait $builder
eq "cold: merged.pftrace: the same size" "$(cat size.cold)" "$(cat size.out)"
if tm_umount "$m"; then pass "cold: clean unmount"; else fail "cold: clean unmount" "$(cat "$m.log")"; fi
grep -qs " $m fuse" /proc/mounts && fail "cold: nothing left mounted" || pass "cold: nothing left mounted"

# SIGTERM while a generation pass is under way stops the pass too, and the
# daemon goes: it says "interrupted" (the pass did not run to its end),
# exits 0 and leaves no mount. The reader gets an error. No timing: the
# waits below only keep a broken build from hanging the test.
m=$T_TMP/mnt.stop
if ! tm_mount big.pftrace "$m" -o noindex; then
	fail "stop: mount" "$(cat "$m.log")"
	exit 1
fi
daemon=${T_PIDS[-1]}
cat "$m/timeline.tsv" >/dev/null 2>reader.err &
reader=$!
for i in $(seq 1 1200); do spooled && break; kill -0 $reader 2>/dev/null || break; sleep 0.05; done
if spooled && kill -0 $reader 2>/dev/null; then
	kill -TERM "$daemon"
	for i in $(seq 1 1200); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
	wait "$daemon"
	eq "stop: SIGTERM during a pass: the daemon exits 0" "$?" 0
	grep -qs " $m fuse" /proc/mounts && fail "stop: unmounted" || pass "stop: unmounted"
	contains "stop: the pass was stopped" "$(cat "$m.log")" "tracemount: interrupted"
	wait $reader && fail "stop: the reader gets an error" || pass "stop: the reader gets an error"
	grep -q 'Sanitizer' "$m.log" && fail "stop: no sanitizer report" "$(head -c 400 "$m.log")"
else
	fail "stop: the generation pass is under way" "no spooled file seen before the read ended"
fi
grep -qs " $m fuse" /proc/mounts && fusermount3 -uz "$m"
true
