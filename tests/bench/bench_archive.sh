#!/usr/bin/env bash
# tests/bench/bench_archive.sh - about 1 GB of trace files as a TAR and as a
# ZIP: time from running tracemount to a usable mount, and the throughput
# of `cat MOUNT/files/<member>` next to `tar -xO` / `unzip -p` of the same
# member in the same run, plus the daemon's peak RSS. Numbers only.
set -u
export LC_ALL=C
tm=$(realpath "${TRACEMOUNT:-./tracemount}")
SIZE_MB=${BENCH_MB:-1024}
MEMBERS=8
work=$(mktemp -d /tmp/tmbench.XXXXXX)
mnt=$work/mnt
pid=
cleanup() {
	grep -qs " $mnt fuse" /proc/mounts && fusermount3 -u "$mnt"
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work/src" "$mnt"

# Systrace-like text with varying numbers (compresses like real traces).
per=$((SIZE_MB / MEMBERS))
awk -v n=$((per * 1024 * 1024 / 90)) 'BEGIN { for (i = 0; i < n; i++)
	printf "  RenderThread-%d (%5d) [%03d] d..2 %d.%06d: sched_switch: prev_pid=%d next_pid=%d\n",
	i % 977, i % 3001, i % 8, 1000 + i / 100000, i % 1000000, i % 4093, (i * 7) % 4093 }' >"$work/src/m0.systrace"
for i in $(seq 1 $((MEMBERS - 1))); do cp "$work/src/m0.systrace" "$work/src/m$i.systrace"; done
(cd "$work/src" && tar -cf "$work/cap.tar" m*.systrace && zip -q -1 "$work/cap.zip" m*.systrace)
member=m3.systrace
msize=$(stat -c %s "$work/src/$member")

now() { date +%s.%N; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / 1048576 / t }'; }

printf '%-6s %10s %14s %16s %16s %16s %12s\n' format archive_MB mount_ready_ms cat_member_MB/s baseline_MB/s cached_reread_MB/s peak_RSS_MB
for a in tar zip; do
	arch=$work/cap.$a
	cat "$arch" >/dev/null # the archive itself is read from the page cache
	t0=$(now)
	"$tm" "$arch" "$mnt" -f 2>"$work/log" &
	pid=$!
	# Ready = the mount tier is up (files/ lists); metadata.json would
	# also time the scan, which bench_scan.sh measures on its own.
	until stat "$mnt/files" >/dev/null 2>&1 && grep -qs " $mnt fuse" /proc/mounts; do
		kill -0 $pid 2>/dev/null || { echo "mount failed: $(cat "$work/log")"; exit 1; }
		sleep 0.005
	done
	t1=$(now)
	# First read: every byte comes through the daemon (inflated for ZIP).
	t2=$(now); cat "$mnt/files/$member" >/dev/null; t3=$(now)
	# Second read: the kernel keeps our pages (contents never change).
	t6=$(now); cat "$mnt/files/$member" >/dev/null; t7=$(now)
	if [ $a = tar ]; then base() { tar -xOf "$arch" "$member"; }; else base() { unzip -p "$arch" "$member"; }; fi
	base >/dev/null
	t4=$(now); base >/dev/null; t5=$(now)
	rss=$(awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' /proc/$pid/status)
	fusermount3 -u "$mnt"; wait $pid; pid=
	printf '%-6s %10.0f %14.0f %16s %16s %16s %12s\n' $a "$(awk -v s=$(stat -c %s "$arch") 'BEGIN{print s/1048576}')" \
		"$(awk -v a=$t0 -v b=$t1 'BEGIN{print (b-a)*1000}')" \
		"$(mbps $msize $(awk -v a=$t2 -v b=$t3 'BEGIN{print b-a}'))" \
		"$(mbps $msize $(awk -v a=$t4 -v b=$t5 'BEGIN{print b-a}'))" \
		"$(mbps $msize $(awk -v a=$t6 -v b=$t7 'BEGIN{print b-a}'))" "$rss"
done
echo "member: $member, $((msize / 1048576)) MB; baseline: tar -xO (tar), unzip -p (zip)"
