#!/usr/bin/env bash
# testdata/demo/build.sh OUT.zip - pack the demo capture from its sources:
# a phone (Perfetto proto + systrace) and a server (Chrome JSON) with a
# manifest that names both machines, makes the phone's BOOTTIME trace time
# and places the server's clockless JSON 1.05 s after it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
out=$(realpath -m "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
protoc --encode=perfetto.protos.Trace --proto_path="$root/protos" "$root/protos/trace.proto" \
	<"$here/phone.textproto" >"$work/phone.pb"
cp "$here/perfetto_manifest.json" "$here/phone.systrace" "$here/server.json" "$work/"
rm -f "$out"
(cd "$work" && zip -q -X "$out" perfetto_manifest.json phone.pb phone.systrace server.json)
echo "$out"
