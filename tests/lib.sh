# tests/lib.sh - helpers for the shell tests (sourced). Each check prints
# one line: "PASS name", "FAIL name: why" or "SKIP name: why".
#
# Environment: TRACEMOUNT (the binary under test; by default BUILD's, else
# ./tracemount), BUILD (its build dir).
set -u
export LC_ALL=C
TRACEMOUNT=$(realpath "${TRACEMOUNT:-${BUILD:+$BUILD/}tracemount}")
BUILD=$(realpath "${BUILD:-build/rel}")
TESTDATA=${TESTDATA:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/testdata}
T_FAILED=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; T_FAILED=1; }
skip() { echo "SKIP $1: ${2:-}"; }

# ok NAME COMMAND... : passes when COMMAND exits 0.
ok() {
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "\`$*\` failed: $(printf '%s' "$out" | head -c 400)"; fi
}

# eq NAME ACTUAL EXPECTED
eq() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got [$2], expected [$3]"; fi
}

# contains NAME HAYSTACK NEEDLE
contains() {
	case "$2" in *"$3"*) pass "$1" ;; *) fail "$1" "[$2] does not contain [$3]" ;; esac
}

# counter_rows ARCHIVE [VIEW]: the counter lines of VIEW (timeline.tsv) of
# ARCHIVE as ts, name, track, value (the V of the args' {"value":V})
counter_rows() {
	"$TRACEMOUNT" cat "$1" "${2:-timeline.tsv}" |
		awk -F'\t' -v OFS='\t' '$5 == "counter" { print $1, $7, $11, $12 }' | sed 's/{"value":\(.*\)}$/\1/'
}

# varint N: the bytes of the unsigned varint N, as printf escapes
# (printf "$(varint 300)" writes them)
varint() {
	local v=$1 o=""
	while [ "$v" -ge 128 ]; do o="$o$(printf '\\x%02x' $(((v & 127) | 128)))"; v=$((v >> 7)); done
	printf '%s\\x%02x' "$o" "$v"
}

# pb_len FIELD FILE...: the files' bytes as one length-delimited protobuf
# field (its tag, its length, the bytes), for what text format cannot say
pb_len() {
	printf "$(varint $(($1 * 8 + 2)))$(varint "$(cat "${@:2}" | wc -c)")"
	cat "${@:2}"
}

# A scratch directory removed at exit.
T_TMP=$(mktemp -d /tmp/tmtest.XXXXXX)
# The index cache of every test is its own (and the user's stays clean).
export XDG_CACHE_HOME=$T_TMP/cache
T_MOUNTS=()
T_PIDS=()

t_cleanup() {
	local m
	for m in "${T_MOUNTS[@]}"; do
		if grep -qs " $m fuse" /proc/mounts; then fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; fi
	done
	local p
	for p in "${T_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	if [ -n "${T_KEEP:-}" ]; then echo "T_KEEP: left $T_TMP" >&2; else rm -rf "$T_TMP"; fi
}
trap t_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

have_fuse() {
	[ -e /dev/fuse ] && command -v fusermount3 >/dev/null 2>&1
}

# tm_mount ARCHIVE MOUNTPOINT [OPTIONS...]: mount in the foreground
# (-f, in the background of this shell) so the daemon's stderr, including
# sanitizer reports, lands in MOUNTPOINT.log. Returns when the mount is up.
tm_mount() {
	local a=$1 m=$2; shift 2
	tm_mount_args "$m" "$a" "$m" "$@"
}

# tm_mount_args MOUNTPOINT ARG...: the same for any command line (several
# inputs, options anywhere): tracemount ARG... -f, MOUNTPOINT among ARGs.
tm_mount_args() {
	local m=$1; shift
	mkdir -p "$m"
	"$TRACEMOUNT" "$@" -f 2>"$m.log" &
	local pid=$!
	T_PIDS+=("$pid"); T_MOUNTS+=("$m")
	local i
	for i in $(seq 1 200); do
		if grep -qs " $m fuse" /proc/mounts; then return 0; fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# tm_umount MOUNTPOINT: unmount and wait for the daemon; fails if the
# daemon exited non-zero or its log has a sanitizer report. A reader that
# has just gone (a process substitution, a jq) can keep the mount busy for
# a moment on a loaded machine: the unmount is tried again for up to five
# seconds, then made lazy and the daemon killed, so that no later wait
# hangs on a daemon whose mount stayed (that once stopped make check).
tm_umount() {
	local m=$1 i busy=1
	for i in $(seq 1 100); do
		if fusermount3 -u "$m" 2>/dev/null; then busy=0; break; fi
		grep -qs " $m fuse" /proc/mounts || { busy=0; break; }
		sleep 0.05
	done
	for i in "${!T_MOUNTS[@]}"; do [ "${T_MOUNTS[$i]}" == "$m" ] && unset 'T_MOUNTS[i]'; done
	local p rc=0
	if [ "$busy" = 1 ]; then
		fusermount3 -uz "$m" 2>/dev/null
		for p in "${T_PIDS[@]}"; do kill "$p" 2>/dev/null; done
		rc=1
	fi
	for p in "${T_PIDS[@]}"; do wait "$p" 2>/dev/null || rc=$?; done
	T_PIDS=()
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$m.log"; then cat "$m.log" >&2; return 1; fi
	return $rc
}
