#!/usr/bin/env bash
# tests/tools/reference.sh GZ DIR - make the reference trace processor of
# the shared folder runnable for `make check` (issue 33): unpack GZ (the
# gzip'd trace_processor_shell the project's shared/reference holds) into
# DIR, outside the repository, and print the binary's path when it starts
# (`--version` names Perfetto). Prints nothing, and says why on stderr,
# when GZ is missing or the binary does not start here; make check then
# skips the interop comparison, as without a reference. The binary is
# unpacked, never built, and never kept in the repository.
set -u
gz=${1:?usage: reference.sh GZ DIR}
dir=${2:?usage: reference.sh GZ DIR}
if [ ! -f "$gz" ]; then
	echo "make check: no reference at $gz: interop skipped" >&2
	exit 0
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
case "$(mkdir -p "$dir" && cd "$dir" && pwd)/" in
"$repo/"*)
	echo "make check: $dir is inside the repository; the reference is kept outside it: interop skipped" >&2
	exit 0 ;;
esac
bin=$dir/trace_processor_shell
# Unpacked again when the archive is newer than the copy (a new build in
# the shared folder), through a temporary name: a run that stops halfway
# leaves no broken binary behind.
if [ ! -x "$bin" ] || [ "$gz" -nt "$bin" ]; then
	tmp=$(mktemp "$dir/.unpack.XXXXXX") || exit 0
	if ! gzip -dc "$gz" >"$tmp" || ! chmod 0755 "$tmp" || ! mv -f "$tmp" "$bin"; then
		rm -f "$tmp"
		echo "make check: cannot unpack $gz into $dir: interop skipped" >&2
		exit 0
	fi
fi
if ! version=$(timeout 60 "$bin" --version 2>&1) || ! grep -q '^Perfetto v' <<<"$version"; then
	echo "make check: the reference $bin does not start here ($(head -n 1 <<<"$version")): interop skipped" >&2
	exit 0
fi
echo "make check: interop against $(head -n 1 <<<"$version") at $bin" >&2
echo "$bin"
