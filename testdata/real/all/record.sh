#!/bin/sh
# Everything at once: kernel sched_switch (trace_clock mono), perf of node
# (-k mono), strace of python (epoch time), a ninja build.
set -e
T=/sys/kernel/tracing
mount -t tracefs nodev $T
old_clock=$(sed 's/.*\[\(.*\)\].*/\1/' $T/trace_clock)
echo mono >$T/trace_clock
echo >$T/trace
echo 1 >$T/events/sched/sched_switch/enable
echo 1 >$T/tracing_on
python3 -c 'import time; r = time.clock_gettime_ns(time.CLOCK_REALTIME); m = time.clock_gettime_ns(time.CLOCK_MONOTONIC); print(m - r)' >offset_ns
perf record -q -k mono -g -e cpu-clock -F 499 -o perf.data -- node work.js &
strace -f -ttt -o python.strace /usr/bin/python3 work.py &
rm -f .ninja_log a.o b.o c.o app
ninja -j2 >/dev/null
wait
echo 0 >$T/tracing_on
echo 0 >$T/events/sched/sched_switch/enable
cat $T/trace >sched_switch.systrace
echo >$T/trace
echo "$old_clock" >$T/trace_clock
umount $T
perf script -i perf.data >node_perf.txt 2>/dev/null
perf script report stackcollapse -i perf.data >node.folded 2>/dev/null
