#!/usr/bin/env python3
"""make_perf_names.py desc|typeinfo OUT: a perf.data of seven attrs, each
with ids and one sample of each of its ids, whose event names come from
the EVENT_DESC feature (desc) or from Simpleperf's event_type_info
(typeinfo). Prints, per sample, "ts<TAB>name": the name of its attr's
counter track, by the rules the reference follows:

- EVENT_DESC: each entry names the attrs of its ids; a later entry
  naming an attr again wins.
- event_type_info: lines "name,type,config"; the first line of a
  (type, config) names every attr of it that has ids, later ones of it
  are left out.

Written from the perf.data layout (linux/perf_event.h, tools/perf's
header.h, Simpleperf's record_file_format.md)."""
import struct
import sys

mode, out = sys.argv[1], sys.argv[2]
ATTR_SIZE = 112
SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_PERIOD = 1, 2, 4, 64, 256
USE_CLOCKID, CLOCK_MONOTONIC = 1 << 25, 1
RECORD_SAMPLE, MISC_USER = 9, 2
FEAT_EVENT_DESC, FEAT_SIMPLEPERF_META_INFO = 12, 129

# (type, config) of each attr: 0 and 3 share one, as do 4 and 5
keys = [(1, 10), (1, 11), (2, 10), (1, 10), (3, 7), (3, 7), (4, 1)]
ids = [[100 + 10 * a + j for j in range(3 + a)] for a in range(len(keys))]


def attr(type_, config):
    return struct.pack("<IIQQQQQIIQQQQIiQIHH", type_, ATTR_SIZE, config, 1,
                       SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_ID | SAMPLE_PERIOD, 0,
                       USE_CLOCKID, 0, 0, 0, 0, 0, 0, 0, CLOCK_MONOTONIC, 0, 0, 0, 0)


def padded(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 8)
    return struct.pack("<I", len(b)) + b


names = {}
if mode == "desc":
    # entries: (name, ids); the last one renames attr 2 (by one of its ids)
    # and names the same ids several times over
    entries = [("cycles", ids[0] * 3), ("instructions", ids[1]), ("branches", ids[2]), ("cache-misses", ids[3]),
               ("faults", ids[4] + ids[5]), ("renamed", [ids[2][1]] * 5), ("ghost", [9999])]
    feat = FEAT_EVENT_DESC
    sec = struct.pack("<II", len(entries), ATTR_SIZE)
    for name, its in entries:
        sec += attr(0, 0) + struct.pack("<I", len(its)) + padded(name) + b"".join(struct.pack("<Q", i) for i in its)
        for a in range(len(keys)):
            if set(its) & set(ids[a]):
                names[a] = name
else:
    lines = [("cpu-cycles", 1, 10), ("instructions", 1, 11), ("again", 1, 10), ("task-clock", 2, 10),
             ("page-faults", 3, 7), ("nothing", 9, 9), ("page-faults-2", 3, 7)]
    feat = FEAT_SIMPLEPERF_META_INFO
    text = "".join("%s,%d,%d\n" % l for l in lines)
    sec = b"event_type_info\0" + text.encode() + b"\0"
    seen = set()
    for name, t, c in lines:
        if (t, c) in seen:
            continue
        seen.add((t, c))
        for a in range(len(keys)):
            if keys[a] == (t, c):
                names[a] = name

records, expect, ts = [], [], 1000
for a in range(len(keys)):
    for i in ids[a]:
        ts += 10
        records.append(struct.pack("<IHHQIIQQQ", RECORD_SAMPLE, MISC_USER, 48, 0x1000, 7, 7, ts, i, 1))
        expect.append("%d\t%s" % (ts, names.get(a, "")))
data = b"".join(records)

hdr_size = 104
entries = b""
ids_blob = b""
ids_off = hdr_size + len(keys) * (ATTR_SIZE + 16)
for a, (t, c) in enumerate(keys):
    blob = b"".join(struct.pack("<Q", i) for i in ids[a])
    entries += attr(t, c) + struct.pack("<QQ", ids_off + len(ids_blob), len(blob))
    ids_blob += blob
data_off = ids_off + len(ids_blob)
table_off = data_off + len(data)
flags = [0, 0, 0, 0]
flags[feat // 64] |= 1 << (feat % 64)
header = b"PERFILE2" + struct.pack("<QQ", hdr_size, ATTR_SIZE + 16)
header += struct.pack("<QQQQQQ", hdr_size, len(entries), data_off, len(data), 0, 0) + struct.pack("<QQQQ", *flags)
with open(out, "wb") as f:
    f.write(header + entries + ids_blob + data + struct.pack("<QQ", table_off + 16, len(sec)) + sec)
print("\n".join(expect))
