#!/usr/bin/env python3
# tests/tools/make_hprof.py - write testdata/hprof/art_edge.hprof, a heap
# dump in the shape ART writes (4-byte ids, HEAP DUMP INFO naming the
# heaps, ART's root tags), built from the hprof format's public
# description (HotSpot's "HPROF binary format", ART's hprof.cc tags) to
# reach what a real HotSpot dump does not:
#
#   python3 tests/tools/make_hprof.py >testdata/hprof/art_edge.hprof
#
# (`--segments` prints where its heap dump segments start instead.)
# It holds: class names in the VM's form ("[Ljava/lang/String;", "[[B",
# one that is not a type: "[X"), a class named by a string the dump does
# not hold, a class loaded twice, the reference classes (a subclass of
# WeakReference whose referent is reachable only through it), a class
# object with static fields of every type, a root given twice (the lower
# rank wins), every ART root tag and one the format does not know, object
# arrays with null, present and dangling elements, an instance pointing
# at an object the dump does not hold, an instance of a class the dump
# does not hold, one whose fields are cut short, a FRAME and a TRACE
# record, and a last record cut short. The reference and tracemount read
# it the same way (tests/interop/captures/hprof_art).
import struct
import sys

ID = 4
out = bytearray()
out += b"JAVA PROFILE 1.0.3\0" + struct.pack(">III", ID, 0x18B, 0xCFE3A000)  # 1700000000000 ms


def ident(v):
    return struct.pack(">I", v)


segments = []  # where each HEAP DUMP SEGMENT starts (--segments prints them)


def record(tag, body):
    if tag == 0x1C:
        segments.append(len(out))
    out.extend(struct.pack(">BII", tag, 0, len(body)) + body)


strings = {}


def s(text):
    if text not in strings:
        strings[text] = 0x100 + len(strings)
        record(0x01, ident(strings[text]) + text.encode())
    return strings[text]


serial = [0]


def load_class(cid, name_id):
    serial[0] += 1
    record(0x02, struct.pack(">I", serial[0]) + ident(cid) + struct.pack(">I", 0) + ident(name_id))


# classes: id -> (name, super, instance size, instance fields [(name, type)])
OBJ, BOOL, CHAR, FLOAT, DOUBLE, BYTE, SHORT, INT, LONG = 2, 4, 5, 6, 7, 8, 9, 10, 11
classes = [
    (0x1000, "java/lang/Object", 0, 8, []),
    (0x1001, "java/lang/Class", 0x1000, 120, []),
    (0x1002, "java/lang/String", 0x1000, 24, [("value", OBJ), ("count", INT), ("hash", INT)]),
    (0x1003, "java/lang/ref/Reference", 0x1000, 24, [("referent", OBJ), ("queue", OBJ)]),
    (0x1004, "java/lang/ref/WeakReference", 0x1003, 24, []),
    (0x1005, "java/lang/ref/FinalizerReference", 0x1003, 32, [("zombie", OBJ)]),
    (0x1006, "com/example/MyWeak", 0x1004, 28, [("tag", INT)]),
    (0x1007, "com/example/Node", 0x1000, 24, [("next", OBJ), ("payload", OBJ), ("id", LONG), ("flag", BOOL)]),
    (0x1008, "[Ljava/lang/String;", 0x1000, 16, []),
    (0x1009, "[B", 0x1000, 16, []),
    (0x100A, "[I", 0x1000, 16, []),
    (0x100B, "[[B", 0x1000, 16, []),
    (0x100C, "[X", 0x1000, 16, []),
    (0x100D, "com/example/Holder", 0x1000, 12, []),
    (0x100E, "[C", 0x1000, 16, []),
    (0x100F, "java/lang/ref/SoftReference", 0x1003, 32, [("timestamp", LONG)]),
]
names = {}
for cid, name, _sup, _size, fields in classes:
    names[cid] = s(name)
    for f, _t in fields:
        s(f)
for f in ("answer", "pi", "e", "big", "small", "letter", "yes", "octet", "self", "other", "gone"):
    s(f)
for heap in ("zygote", "image", "app"):
    s(heap)
for cid, _name, _sup, _size, _fields in classes:
    load_class(cid, names[cid])
load_class(0x1010, 0x7777)      # a name the dump holds no string for
load_class(0x1007, names[0x1007])  # com.example.Node again
record(0x04, ident(1) + ident(2) + ident(3) + ident(4) + struct.pack(">Ii", 1, 7))  # FRAME
record(0x05, struct.pack(">III", 1, 1, 0))  # TRACE, no frames


def class_dump(cid, statics=()):
    _n, sup, size, fields = next((c[1], c[2], c[3], c[4]) for c in classes + [(0x1010, "?", 0x1000, 8, [])]
                                 if c[0] == cid)
    b = bytearray([0x20]) + ident(cid) + struct.pack(">I", 0) + ident(sup)
    b += ident(0) * 5 + struct.pack(">I", size)
    b += struct.pack(">H", 1) + struct.pack(">HB", 0, INT) + struct.pack(">i", 5)  # constant pool
    b += struct.pack(">H", len(statics))
    for name, typ, raw in statics:
        b += ident(strings[name]) + bytes([typ]) + raw
    b += struct.pack(">H", len(fields))
    for name, typ in fields:
        b += ident(strings[name]) + bytes([typ])
    return b


def instance(oid, cid, data):
    return bytes([0x21]) + ident(oid) + struct.pack(">I", 0) + ident(cid) + struct.pack(">I", len(data)) + data


def obj_array(oid, cid, elems):
    return bytes([0x22]) + ident(oid) + struct.pack(">II", 0, len(elems)) + ident(cid) + b"".join(map(ident, elems))


def prim_array(oid, typ, data, count):
    return bytes([0x23]) + ident(oid) + struct.pack(">IIB", 0, count, typ) + data


def heap_info(name):
    return bytes([0xFE]) + struct.pack(">I", 1) + ident(strings[name])


def root(tag, oid, extra=b""):
    return bytes([tag]) + ident(oid) + extra


seg1 = bytearray()
seg1 += heap_info("zygote")
for cid, *_ in classes:
    statics = ()
    if cid == 0x100D:
        statics = (("answer", INT, struct.pack(">i", 42)), ("pi", FLOAT, struct.pack(">f", 3.25)),
                   ("e", DOUBLE, struct.pack(">d", 2.5)), ("big", LONG, struct.pack(">q", -7)),
                   ("small", SHORT, struct.pack(">h", -3)), ("letter", CHAR, struct.pack(">H", 65)),
                   ("yes", BOOL, b"\1"), ("octet", BYTE, b"\x7f"), ("self", OBJ, ident(0x2001)),
                   ("gone", OBJ, ident(0x9999)))
    seg1 += class_dump(cid, statics)
seg1 += class_dump(0x1010)
seg1 += root(0x05, 0x100D)                       # STICKY_CLASS
seg1 += root(0x05, 0x1007)
seg1 += heap_info("image")
seg1 += prim_array(0x3001, BYTE, b"hello", 5)    # a String's bytes
seg1 += instance(0x3000, 0x1002, ident(0x3001) + struct.pack(">ii", 5, 0))
seg1 += root(0x89, 0x3000)                       # INTERNED_STRING
record(0x1C, bytes(seg1))

seg2 = bytearray()
seg2 += heap_info("app")
# a list of nodes: 0x2001 -> 0x2002 -> 0x2003, the last pointing at an
# object the dump does not hold
seg2 += instance(0x2001, 0x1007, ident(0x2002) + ident(0x3000) + struct.pack(">q?", 1, True))
seg2 += instance(0x2002, 0x1007, ident(0x2003) + ident(0) + struct.pack(">q?", 2, False))
seg2 += instance(0x2003, 0x1007, ident(0x8888) + ident(0x2006) + struct.pack(">q?", 3, True))
# a weak reference (MyWeak) to a node reachable through it alone
seg2 += instance(0x2004, 0x1006, struct.pack(">i", 9) + ident(0x2005) + ident(0))
seg2 += instance(0x2005, 0x1007, ident(0) + ident(0) + struct.pack(">q?", 5, False))
# a soft reference's referent is followed
seg2 += instance(0x200A, 0x100F, struct.pack(">q", 77) + ident(0x200B) + ident(0))
seg2 += instance(0x200B, 0x1007, ident(0) + ident(0) + struct.pack(">q?", 11, False))
# a finalizer reference
seg2 += instance(0x200C, 0x1005, ident(0x2001) + ident(0x200B) + ident(0))
seg2 += prim_array(0x2006, INT, struct.pack(">iii", 1, 2, 3), 3)
seg2 += prim_array(0x2007, CHAR, struct.pack(">HH", 104, 105), 2)
seg2 += obj_array(0x2008, 0x1008, [0x3000, 0, 0x7777, 0x2001])
seg2 += obj_array(0x2009, 0x100B, [0x3001])
seg2 += obj_array(0x200D, 0x100C, [])
# an instance of a class the dump does not hold, one of the unnamed class,
# and one whose fields are cut short
seg2 += instance(0x200E, 0x5555, ident(0x2001))
seg2 += instance(0x200F, 0x1010, b"")
seg2 += instance(0x2010, 0x1007, ident(0x2001) + b"\0\0")
# roots: every ART tag, one the format does not know, one object twice
seg2 += root(0x01, 0x2001, ident(0x10))          # JNI_GLOBAL
seg2 += root(0x03, 0x2001, struct.pack(">II", 1, 0))  # JAVA_FRAME: ranks below JNI_GLOBAL
seg2 += root(0x02, 0x2004, struct.pack(">II", 1, 0))  # JNI_LOCAL
seg2 += root(0x04, 0x2008, struct.pack(">I", 1))  # NATIVE_STACK
seg2 += root(0x06, 0x2009, struct.pack(">I", 1))  # THREAD_BLOCK
seg2 += root(0x07, 0x200A)                       # MONITOR_USED
seg2 += root(0x08, 0x200C, struct.pack(">II", 1, 1))  # THREAD_OBJECT
seg2 += root(0x8A, 0x200D)                       # FINALIZING
seg2 += root(0x8B, 0x2007)                       # DEBUGGER
seg2 += root(0x8D, 0x200F)                       # VM_INTERNAL
seg2 += root(0x8E, 0x2010, struct.pack(">II", 1, 0))  # JNI_MONITOR
seg2 += root(0xFF, 0x2006)                       # UNKNOWN
seg2 += root(0x90, 0x9999)                       # a tag the format does not know, of no object
record(0x1C, bytes(seg2))
record(0x2C, b"")
# a last record cut short: its length runs past the end
out += struct.pack(">BII", 0x1C, 0, 1000) + b"\x21"
if sys.argv[1:] == ["--segments"]:
    print(" ".join(map(str, segments)))
else:
    sys.stdout.buffer.write(bytes(out))
