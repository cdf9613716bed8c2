#!/usr/bin/env bash
# tests/tools/encode_fixtures.sh OUTDIR - encode every
# testdata/conformance/*.textproto into OUTDIR/<name>.pb with protoc
# (Debian package protobuf-compiler) and protos/trace.proto.
#
# Concatenating encoded traces gives a valid trace (testdata/conformance/
# README.md lists the composite fixtures built that way).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
out=$1
command -v protoc >/dev/null || { echo "$0: protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }
mkdir -p "$out"
for t in "$root"/testdata/conformance/*.textproto; do
	n=$(basename "$t" .textproto)
	if ! protoc --encode=perfetto.protos.Trace --proto_path="$root/protos" \
		"$root/protos/trace.proto" <"$t" >"$out/$n.pb.tmp"; then
		rm -f "$out/$n.pb.tmp"
		echo "$0: cannot encode $t" >&2
		exit 1
	fi
	mv "$out/$n.pb.tmp" "$out/$n.pb"
done
