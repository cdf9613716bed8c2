#!/usr/bin/env python3
"""make_tid_reuse.py proto|json SEED OUT: a trace where a few tids live
under many pids, as the fixtures tests/interop/captures/tid_reuse_proto
and tid_reuse_json were made (SEED 1). The model keeps a tid's threads
in the reference's order (ProcessTracker's tids_) and, once a tid has
had eight, also by pid; these traces put tens of threads on one tid.

proto: process_tree packets of threads of three tids under random tgids
and of processes, and ftrace bundles of sched_process_free (a process
ends), task_newtask (a pid comes again, or a CLONE_THREAD from a tid),
sched_process_exit and sched_switch, encoded with protoc from the
textproto (protos/ is Perfetto's).
json: thread_name and process_name metadata, instants and complete
events of three tids under random pids."""
import json
import random
import subprocess
import sys
from pathlib import Path

kind, seed, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = random.Random(seed)

if kind == "json":
    tids = [r.randrange(1, 6) for _ in range(3)]
    npid = r.choice([10, 30, 200])
    evs, ts = [], 0
    for i in range(r.randrange(200, 3000)):
        ts += r.randrange(0, 5)
        pid, tid = r.randrange(1, npid), r.choice(tids)
        c = r.randrange(6)
        if c == 0:
            evs.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": "t%d" % r.randrange(9)}})
        elif c == 1:
            evs.append({"ph": "M", "name": "process_name", "pid": pid, "tid": tid, "args": {"name": "p%d" % r.randrange(9)}})
        elif c == 2:
            evs.append({"ph": "i", "name": "i", "ts": ts, "pid": pid, "tid": tid, "s": "t"})
        else:
            evs.append({"ph": "X", "name": "x", "ts": ts, "dur": r.randrange(10), "pid": pid, "tid": tid})
    Path(out).write_text(json.dumps({"traceEvents": evs}) + "\n")
    sys.exit(0)

L = ['packet { system_info { utsname { sysname: "Linux" release: "5.10.43" machine: "aarch64" } } }']
ts = 1000000000
tids = [r.randrange(100, 110) for _ in range(3)]
npid = r.choice([12, 40])
for blk in range(r.randrange(20, 60)):
    ts += 1000
    if r.randrange(4) < 2:
        procs = " ".join('processes { pid: %d ppid: 1 cmdline: "c%d" }' % (r.randrange(1, npid), i) for i in range(r.randrange(3)))
        threads = " ".join("threads { tid: %d tgid: %d }" % (r.choice(tids), r.randrange(1, npid)) for i in range(r.randrange(1, 8)))
        L.append("packet { timestamp: %d process_tree { %s %s } }" % (ts, procs, threads))
        continue
    ev = []
    for k in range(r.randrange(1, 15)):
        ts += r.randrange(1, 100)
        d = r.randrange(6)
        if d == 0:
            ev.append('event { timestamp: %d pid: 0 sched_process_free { comm: "f" pid: %d prio: 120 } }' % (ts, r.randrange(1, npid)))
        elif d == 1:
            ev.append('event { timestamp: %d pid: 1 task_newtask { pid: %d comm: "n" clone_flags: 17 } }' % (ts, r.randrange(1, npid)))
        elif d == 2:
            ev.append('event { timestamp: %d pid: %d task_newtask { pid: %d comm: "t" clone_flags: 65536 } }' % (ts, r.choice(tids + [r.randrange(1, npid)]), r.choice(tids)))
        elif d == 3:
            ev.append('event { timestamp: %d pid: %d sched_process_exit { comm: "x" pid: %d tgid: %d prio: 120 } }' % (ts, r.choice(tids), r.choice(tids), r.randrange(1, npid)))
        else:
            a, b = r.choice(tids), r.choice(tids + [r.randrange(1, npid)])
            ev.append('event { timestamp: %d pid: %d sched_switch { prev_comm: "p" prev_pid: %d prev_prio: 120 prev_state: 1 next_comm: "q%d" next_pid: %d next_prio: 120 } }' % (ts, a, a, k, b))
    L.append("packet { ftrace_events { cpu: %d %s } }" % (r.randrange(2), " ".join(ev)))
protos = Path(__file__).resolve().parents[2] / "protos"
with open(out, "wb") as f:
    subprocess.run(["protoc", "--encode=perfetto.protos.Trace", "--proto_path=%s" % protos, str(protos / "trace.proto")],
                   input=("\n".join(L) + "\n").encode(), stdout=f, check=True)
