#!/usr/bin/env bash
# tests/tools/encode_fixtures.sh OUTDIR - encode every
# testdata/conformance/*.textproto into OUTDIR/<name>.pb with protoc and
# protos/trace.proto. Two encoded traces concatenated are one valid trace.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
mkdir -p "$out"
for t in "$root"/testdata/conformance/*.textproto; do
	n=$(basename "$t" .textproto)
	protoc --encode=perfetto.protos.Trace --proto_path="$root/protos" "$root/protos/trace.proto" <"$t" >"$out/$n.pb"
done
