#!/usr/bin/env python3
"""make_perf_mmaps.py N SEED OUT: a perf.data of one process whose N MMAPs
are random ranges, overlapping one another, in random order, each followed
by two samples at random addresses (on CLOCK_MONOTONIC, so that trace time
is the sample's time; sample_id_all gives each MMAP its time too, so it
comes in file order). Prints, per sample, "ts<TAB>mapping": the MMAP whose
range holds the sample's address once every MMAP before it has trimmed or
split the ranges it overlaps (perf's and the reference's rule: the newest
mapping of an address wins), empty when none does.

Written from the perf.data layout (linux/perf_event.h, tools/perf's
header.h): a 104-byte header, one perf_event_attr of 112 bytes and its
empty ids section, then the records."""
import bisect
import random
import struct
import sys

n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(seed)
ATTR_SIZE = 112
SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME = 1, 2, 4
SAMPLE_ID_ALL, USE_CLOCKID = 1 << 18, 1 << 25
CLOCK_MONOTONIC = 1
RECORD_MMAP, RECORD_SAMPLE, MISC_USER = 1, 9, 2

attr = struct.pack("<IIQQQQQIIQQQQIiQIHH", 0, ATTR_SIZE, 0, 1, SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME, 0,
                   SAMPLE_ID_ALL | USE_CLOCKID, 0, 0, 0, 0, 0, 0, 0, CLOCK_MONOTONIC, 0, 0, 0, 0)
assert len(attr) == ATTR_SIZE

# the address space: disjoint [start, end, name], sorted by start
starts, ranges = [], []


def mmap(start, end, name):
    keep = []
    for r in ranges:
        if r[1] <= start or r[0] >= end:
            keep.append(r)
            continue
        if r[0] < start:
            keep.append([r[0], start, r[2]])
        if r[1] > end:
            keep.append([end, r[1], r[2]])
    keep.append([start, end, name])
    keep.sort()
    ranges[:] = keep
    starts[:] = [r[0] for r in keep]


def lookup(ip):
    i = bisect.bisect_right(starts, ip) - 1
    return ranges[i][2] if i >= 0 and ranges[i][1] > ip else ""


records, expect, ts, span = [], [], 1000, n * 64
for i in range(n):
    start = rnd.randrange(span) * 16
    length = rnd.choice([16, 64, 256, 4096, 65536, span * 4]) if rnd.random() < 0.95 else rnd.randrange(1, span * 16)
    name = "/m%d" % i
    mmap(start, start + length, name)
    path = name.encode() + b"\0"
    path += b"\0" * (-len(path) % 8)
    ts += 10
    body = struct.pack("<IIQQQ", 100, 100, start, length, 0) + path + struct.pack("<IIQ", 100, 100, ts)
    records.append(struct.pack("<IHH", RECORD_MMAP, MISC_USER, 8 + len(body)) + body)
    for _ in range(2):
        ts += 10
        ip = rnd.randrange(span * 16 + 100000)
        records.append(struct.pack("<IHHQIIQ", RECORD_SAMPLE, MISC_USER, 32, ip, 100, 100, ts))
        expect.append("%d\t%s" % (ts, lookup(ip)))

data = b"".join(records)
attrs = attr + struct.pack("<QQ", 0, 0)
header = b"PERFILE2" + struct.pack("<QQ", 104, ATTR_SIZE + 16)
header += struct.pack("<QQQQQQ", 104, len(attrs), 104 + len(attrs), len(data), 0, 0) + b"\0" * 32
with open(out, "wb") as f:
    f.write(header + attrs + data)
print("\n".join(expect))
