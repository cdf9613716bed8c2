#!/usr/bin/env bash
# tests/run.sh BUILD_DIR... - run every test against each build variant
# (build/rel, build/san, build/tsan, build/clang): the unit binaries, the
# fuzz-regression replays and the shell tests (tests/t_*.sh). Every test prints PASS/FAIL/SKIP
# lines; this script counts them and ends with "N passed, N failed, N skipped".
#
# A ThreadSanitizer build (build/tsan) runs the units, the replays and, of
# the shell tests, only t_concurrent.sh (its readers against one daemon's
# generation passes): every other shell test there took six minutes and
# exercises the same threads. Its reports go to files (log_path), so that a
# race in a mounted daemon, whose stderr a test does not read, fails too.
# The clang build (build/clang, ASan and UBSan) runs the units and the
# replays alone: the shell tests run the same code as build/san's.
set -u
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- build/rel
log=$(mktemp)
races=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$races"' EXIT

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:exitcode=0:log_path=$races/race}

run() { # variant label command...
	local v=$1 label=$2; shift 2
	local out rc
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out" | sed -n "s/^\(PASS\|FAIL\|SKIP\) /[$v] \1 /p" | tee -a "$log"
	if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL '; then
		echo "[$v] FAIL $label: exited $rc" | tee -a "$log"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
	elif printf '%s\n' "$out" | grep -q '^FAIL '; then
		printf '%s\n' "$out" | grep -v '^\(PASS\|SKIP\) ' | tail -n 40 | sed 's/^/    /'
	fi
	local r
	for r in "$races"/race.*; do
		[ -f "$r" ] || continue
		echo "[$v] FAIL $label: ThreadSanitizer: $(grep -m 1 'WARNING: ThreadSanitizer' "$r" | sed 's/^WARNING: ThreadSanitizer: //')" | tee -a "$log"
		head -n 40 "$r" | sed 's/^/    /'
		rm -f "$r"
	done
}

# The sanitizers' runtimes (gcc 12) cannot start where the kernel lays out
# memory with more entropy (vm.mmap_rnd_bits 32): ThreadSanitizer stops with
# "FATAL: ThreadSanitizer: unexpected memory mapping", AddressSanitizer
# prints "AddressSanitizer:DEADLYSIGNAL" for ever. Without address
# randomisation they can, and the processes a test starts (a mounted
# daemon) inherit that. Prints the command prefix a build's binaries need
# (none, as a rule), or fails when none works; the probe is the build's
# `tracemount --version`, which does nothing a bug of ours could break.
run_prefix() {
	local probe=$1/tracemount
	[ -x "$probe" ] || return 0
	# by what it prints: TSAN_OPTIONS' exitcode=0 makes a runtime that
	# dies at start exit 0
	if timeout 60 "$probe" --version 2>/dev/null | grep -q '^tracemount '; then
		return 0
	fi
	local arch
	arch=$(uname -m)
	if command -v setarch >/dev/null 2>&1 &&
		timeout 60 setarch "$arch" -R "$probe" --version 2>/dev/null | grep -q '^tracemount '; then
		echo "setarch $arch -R"
		return 0
	fi
	return 1
}

for b in "$@"; do
	v=$(basename "$b")
	pre=()
	if [ ! -x "$b/tracemount" ]; then
		echo "[$v] SKIP every test: $b was not built (make check says why)" | tee -a "$log"
		continue
	fi
	if ! prefix=$(run_prefix "$b"); then
		echo "[$v] SKIP every test: $b/tracemount cannot start here, even without address randomisation (its sanitizer runtime?)" | tee -a "$log"
		continue
	fi
	[ -n "$prefix" ] && echo "[$v] note: run under '$prefix': its sanitizer runtime cannot start with this kernel's address randomisation"
	read -r -a pre <<<"$prefix"
	for t in "$b"/tests/test_*; do
		[ -x "$t" ] && run "$v" "$(basename "$t")" "${pre[@]}" "$t"
	done
	for t in "$b"/tests/fuzz_*-regress; do
		[ -x "$t" ] || continue
		n=$(basename "$t" -regress)
		dirs=()
		for d in tests/fuzz/regress/$n tests/fuzz/corpus/$n; do [ -d "$d" ] && dirs+=("$d"); done
		[ ${#dirs[@]} -gt 0 ] && run "$v" "$n" "${pre[@]}" "$t" "${dirs[@]}"
	done
	for t in tests/t_*.sh; do
		[ "$v" = tsan ] && [ "$(basename "$t")" != t_concurrent.sh ] && continue
		[ "$v" = clang ] && continue
		[ -f "$t" ] && run "$v" "$(basename "$t")" "${pre[@]}" env BUILD="$b" TRACEMOUNT="$b/tracemount" bash "$t"
	done
done

p=$(grep -c '\] PASS ' "$log"); f=$(grep -c '\] FAIL ' "$log"); s=$(grep -c '\] SKIP ' "$log")
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
