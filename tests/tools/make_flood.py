#!/usr/bin/env python3
"""make_flood.py KIND flood|control N OUT: an input whose N keys all fell
into one probe chain of a table before the tables' hashes were keyed
(core/util/hash.h), or a control input of the same shape and size with
ordinary keys. tests/bench/bench_flood.sh times both.

KIND (the table, and how its keys were made to collide):
  perf_ids     perf.data, one attr of N ids (perf_data.c id_seen: the slot
               was (key * K >> 7) & mask, so keys whose low 47 bits are
               zero took slot 0): id = (i << 40) - 1
  hprof_ids    an hprof heap dump of N primitive arrays (hprof.c's object
               index, a tm_u64map): ids the inverse of its old hash of
               i << 24, which has 24 low bits zero
  proto_uuids  a proto trace of N TrackDescriptors, one instant on each
               (scan_proto.c's tracks, a tm_u64map): uuids as hprof_ids'
  json_pids    Chrome JSON with N string pids (json_trace.c string_id:
               FNV-1a & mask): FNV-1a multicollisions on the low 20 bits,
               chained from pairs of 3-character blocks
Control keys: 1..N for perf and hprof ids, random 64-bit uuids, random
pids of the same length."""
import itertools
import random
import struct
import sys

M64 = 1 << 64


def unhash_u64map(y):
    """The key the old tm_u64map hash (xorshift 33, multiply, xorshift 33)
    sent to y."""
    c_inv = pow(0xFF51AFD7ED558CCD, -1, M64)
    y ^= y >> 33
    y = (y * c_inv) % M64
    y ^= y >> 33
    return y


def varint(v):
    b = bytearray()
    while True:
        x, v = v & 0x7F, v >> 7
        if not v:
            b.append(x)
            return bytes(b)
        b.append(x | 0x80)


def pb_int(field, v):
    return varint(field << 3) + varint(v)


def pb_bytes(field, b):
    return varint(field << 3 | 2) + varint(len(b)) + b


def perf_ids(flood, n):
    attr_size = 112
    # sample_type: IP | TID | TIME | ID | PERIOD
    attr = struct.pack("<IIQQQQQIIQQQQIiQIHH", 0, attr_size, 0, 1, 1 | 2 | 4 | 64 | 256, 0,
                       0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    ids = [((i + 1) << 40) - 1 if flood else i + 1 for i in range(n)]
    # 100 PERF_RECORD_SAMPLEs (type 9, misc user) over the ids
    data = b"".join(struct.pack("<IHHQIIQQQ", 9, 2, 48, 0x1000, 7, 7, 1000 + 10 * j, ids[j * 997 % n], 1)
                    for j in range(100))
    hdr_size = 104
    ids_off = hdr_size + attr_size + 16
    blob = b"".join(struct.pack("<Q", i) for i in ids)
    entries = attr + struct.pack("<QQ", ids_off, len(blob))
    data_off = ids_off + len(blob)
    header = b"PERFILE2" + struct.pack("<QQ", hdr_size, attr_size + 16)
    header += struct.pack("<QQQQQQ", hdr_size, len(entries), data_off, len(data), 0, 0)
    header += struct.pack("<QQQQ", 0, 0, 0, 0)
    return header + entries + blob + data


def hprof_ids(flood, n):
    ids = [unhash_u64map((j + 1) << 24) if flood else 0x10000 + j for j in range(n)]
    out = bytearray(b"JAVA PROFILE 1.0.3\0" + struct.pack(">III", 8, 0x18B, 0xCFE3A000))

    def ident(v):
        return struct.pack(">Q", v)

    def record(tag, body):
        out.extend(struct.pack(">BII", tag, 0, len(body)) + body)

    record(0x01, ident(0x100) + b"java/lang/Object")  # STRING
    record(0x01, ident(0x101) + b"[B")
    record(0x02, struct.pack(">I", 1) + ident(0x1000) + struct.pack(">I", 0) + ident(0x100))  # LOAD CLASS
    record(0x02, struct.pack(">I", 2) + ident(0x1009) + struct.pack(">I", 0) + ident(0x101))
    seg = bytearray()
    for cls, sup, size in ((0x1000, 0, 8), (0x1009, 0x1000, 16)):  # CLASS DUMP
        seg += bytes([0x20]) + ident(cls) + struct.pack(">I", 0) + ident(sup) + ident(0) * 5
        seg += struct.pack(">I", size) + struct.pack(">HHH", 0, 0, 0)
    for j, oid in enumerate(ids):
        seg += bytes([0x23]) + ident(oid) + struct.pack(">IIB", 0, 1, 8) + b"x"  # PRIMITIVE ARRAY DUMP
        if j % 4 == 0:
            seg += bytes([0xFF]) + ident(oid)  # ROOT UNKNOWN
    record(0x1C, bytes(seg))  # HEAP DUMP SEGMENT
    record(0x2C, b"")  # HEAP DUMP END
    return bytes(out)


def proto_uuids(flood, n):
    rnd = random.Random(1)

    def control():
        while True:
            u = rnd.getrandbits(64)
            if u >> 63:
                return u

    uuids = [unhash_u64map((i + 1) << 24) if flood else control() for i in range(n)]
    # TracePacket: trusted_packet_sequence_id 10, sequence_flags 13,
    # track_descriptor 60 (uuid 1, name 2), timestamp 8, track_event 11
    # (type 9 = INSTANT, track_uuid 11, name 23)
    parts = [pb_bytes(1, pb_int(10, 1) + pb_int(13, 1))]
    for u in uuids:
        parts.append(pb_bytes(1, pb_int(10, 1) + pb_bytes(60, pb_int(1, u) + pb_bytes(2, b"t"))))
    for i, u in enumerate(uuids):
        te = pb_int(9, 3) + pb_int(11, u) + pb_bytes(23, b"e")
        parts.append(pb_bytes(1, pb_int(8, 1000 + i) + pb_int(10, 1) + pb_bytes(11, te)))
    return b"".join(parts)


FNV_PRIME, FNV_OFFSET = 1099511628211, 1469598103934665603
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def fnv_multicollisions(prefix, bits, count):
    """count strings prefix + blocks whose FNV-1a agree on the low bits:
    those bits of the state depend only on themselves and the bytes, so
    one pair of 3-character blocks that meet (a birthday search) per
    stage, chained, gives 2^stages strings."""
    mask = (1 << bits) - 1

    def step(h, s):
        for c in s.encode():
            h = ((h ^ c) * FNV_PRIME) & mask
        return h

    h = step(FNV_OFFSET & mask, prefix)
    pairs = []
    for _ in range(max(1, (count - 1).bit_length())):
        seen = {}
        for t in itertools.product(ALNUM, repeat=3):
            b = "".join(t)
            x = step(h, b)
            if x in seen:
                pairs.append((seen[x], b))
                h = x
                break
            seen[x] = b
    return [prefix + "".join(p[(i >> j) & 1] for j, p in enumerate(pairs)) for i in range(count)]


def json_pids(flood, n):
    pids = fnv_multicollisions("p", 20, n)
    if not flood:
        rnd = random.Random(2)
        pids = ["p" + "".join(rnd.choice(ALNUM) for _ in range(len(pids[0]) - 1)) for _ in range(n)]
    events, ts = [], 0
    for _ in range(2):
        for p in pids:
            ts += 10
            events.append('{"name":"a","ph":"X","ts":%d,"dur":1,"pid":"%s","tid":1}' % (ts, p))
    return ('{"traceEvents":[\n' + ",\n".join(events) + "\n]}\n").encode()


KINDS = {"perf_ids": perf_ids, "hprof_ids": hprof_ids, "proto_uuids": proto_uuids, "json_pids": json_pids}

if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in KINDS or sys.argv[2] not in ("flood", "control"):
        sys.exit(__doc__)
    with open(sys.argv[4], "wb") as f:
        f.write(KINDS[sys.argv[1]](sys.argv[2] == "flood", int(sys.argv[3])))
