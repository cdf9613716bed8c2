#!/usr/bin/env python3
"""Writes malformed.pftrace: Java heap dump packets (HeapGraph, from
protos/trace.proto's field numbers) whose bytes protobuf-c refuses whole
and the reference reads in part. Kept with its output; run it again
(python3 make_malformed.py) after changing it.

Sequence 1, pid 600, a dump in two packets of one time:
  packet 1 (index 0, continued): object 1 (type 1, 10 bytes); object 2,
    whose packed reference_object_id ends in a cut varint (malformed:
    it and every later object of the packet are dropped); object 3;
    type 1 "m.A" (object size 8); type 2 "m.B" whose packed
    reference_field_id is cut (malformed: skipped); a root whose packed
    object_ids are cut (malformed); type 3 "m.C".
  packet 2 (index 1, not continued): object 4 (type 1, size 0: the
    type's 8); then a field whose length runs past the message, where
    reading stops (the `continued: true` after it is not read, so the
    dump ends here).
"""


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def vi(field, v):
    return key(field, 0) + varint(v)


def ld(field, data):
    return key(field, 2) + varint(len(data)) + data


def packed_raw(field, raw):  # a packed run of raw bytes, cut or not
    return ld(field, raw)


obj1 = vi(1, 1) + vi(2, 1) + vi(3, 10)
obj2 = vi(1, 2) + vi(2, 1) + vi(3, 20) + packed_raw(5, bytes([0x03, 0x81]))
obj3 = vi(1, 3) + vi(2, 2) + vi(3, 30)
type1 = vi(1, 1) + ld(3, b"m.A") + vi(4, 8)
type2 = vi(1, 2) + ld(3, b"m.B") + vi(4, 8) + packed_raw(6, bytes([0xFF]))
type3 = vi(1, 3) + ld(3, b"m.C") + vi(4, 4)
root = packed_raw(1, bytes([0x01, 0x80])) + vi(2, 1)
graph1 = (vi(1, 600) + vi(6, 0) + vi(5, 1) + ld(2, obj1) + ld(2, obj2) + ld(2, obj3)
          + ld(9, type1) + ld(9, type2) + ld(7, root) + ld(9, type3))
obj4 = vi(1, 4) + vi(2, 1) + vi(3, 0)
graph2 = (vi(1, 600) + vi(6, 1) + ld(2, obj4)
          + key(2, 2) + varint(40) + b"\x08\x05" + vi(5, 1))


def packet(ts, graph):
    return ld(1, vi(10, 1) + vi(8, ts) + ld(56, graph))


with open("malformed.pftrace", "wb") as f:
    f.write(packet(1000, graph1) + packet(1000, graph2))
