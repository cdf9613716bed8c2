#!/usr/bin/env bash
# tests/t_fuse.sh - real mounts: ZIP, TAR and tar.gz forms of one capture,
# checked with ls, stat, cmp and jq; writes refused; a bad manifest refuses
# the mount; every mount unmounted (trap in lib.sh). Without /dev/fuse the
# same content checks run through `tracemount cat`.
. "$(dirname "$0")/lib.sh"
tm=$(realpath "$TRACEMOUNT")
cd "$T_TMP"

mkdir -p src/deep/er && cd src
printf '{"traceEvents":[{"pid":10,"tid":10,"ts":2000,"dur":500,"ph":"X","name":"json_slice"}]}\n' >app.json
printf '# tracer: nop\n#\n  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\n' >sys.systrace
head -c 300000 /dev/urandom | base64 | sed 's/^/  x-1 [000] 1.000000: y: /' >deep/er/big.systrace
printf '{"perfetto_manifest": {"version": 1, "attributes": {"run": 7}}}\n' >perfetto_manifest.json
printf 'junk' >.hidden
members="perfetto_manifest.json app.json sys.systrace deep/er/big.systrace .hidden"
zip -q -X ../cap.zip $members
tar -cf ../cap.tar $members
tar -czf ../cap.tgz $members
cd ..

if ! have_fuse; then
	skip "fuse mounts" "no /dev/fuse or fusermount3 here"
	for a in cap.zip cap.tar cap.tgz; do
		for f in $members; do
			ok "$a: cat files/$f" cmp <("$tm" cat "$a" "files/$f") "src/$f"
		done
	done
	exit 0
fi

for a in cap.zip cap.tar cap.tgz; do
	m=$T_TMP/mnt.$a
	if ! tm_mount "$a" "$m"; then
		fail "$a: mount" "$(cat "$m.log")"
		continue
	fi
	pass "$a: mount"
	eq "$a: ls root" "$(ls "$m")" "$(printf 'files\nmetadata.json\nperfetto_manifest.json')"
	eq "$a: ls -R files" "$(cd "$m/files" && ls -RA | tr '\n' ' ')" \
		".: .hidden app.json deep perfetto_manifest.json sys.systrace  ./deep: er  ./deep/er: big.systrace "
	for f in $members; do
		eq "$a: stat size of $f" "$(stat -c %s "$m/files/$f")" "$(stat -c %s "src/$f")"
	done
	case $a in
	cap.zip) x() { unzip -p cap.zip "$1"; } ;;
	*) x() { tar -xOf "$a" "$1"; } ;;
	esac
	for f in $members; do
		ok "$a: bytes of $f equal the archive's" cmp "$m/files/$f" <(x "$f")
	done
	ok "$a: tracemount cat equals cat of the mount" cmp <("$tm" cat "$a" metadata.json) "$m/metadata.json"
	eq "$a: metadata status" "$(jq -r .status "$m/metadata.json")" ok
	eq "$a: metadata attributes" "$(jq -c .attributes "$m/metadata.json")" '{"run":7}'
	eq "$a: metadata ignores the hidden member" "$(jq -c '[.ignored[].path]' "$m/metadata.json")" '[".hidden"]'
	eq "$a: metadata size equals stat" "$(stat -c %s "$m/metadata.json")" "$(wc -c <"$m/metadata.json")"
	inner=; [ $a == cap.tgz ] && inner='"",'  # the gzip's inner stream is a file of its own
	eq "$a: processing order" "$(jq -c '[.files | sort_by(.processing_order)[] | .path]' "$m/metadata.json")" \
		"[null,$inner\"perfetto_manifest.json\",\"app.json\",\"deep/er/big.systrace\",\"sys.systrace\"]"
	# Read-only everywhere.
	out=$(touch "$m/files/new" 2>&1); contains "$a: touch is refused" "$out" "Read-only file system"
	out=$( (echo x >"$m/files/app.json") 2>&1); contains "$a: writing is refused" "$out" "Read-only file system"
	out=$(mkdir "$m/d" 2>&1); contains "$a: mkdir is refused" "$out" "Read-only file system"
	out=$(rm "$m/files/app.json" 2>&1); contains "$a: rm is refused" "$out" "Read-only file system"
	# Concurrent readers see the same bytes.
	readers=()
	for i in 1 2 3 4; do cat "$m/files/deep/er/big.systrace" >"big.$i" & readers+=($!); done
	wait "${readers[@]}"
	ok "$a: 4 concurrent readers" bash -c "cmp big.1 big.2 && cmp big.1 big.3 && cmp big.1 big.4 && cmp big.1 src/deep/er/big.systrace"
	if tm_umount "$m"; then pass "$a: clean unmount"; else fail "$a: clean unmount" "$(cat "$m.log")"; fi
	grep -qs " $m fuse" /proc/mounts && fail "$a: nothing left mounted" || pass "$a: nothing left mounted"
done

# A bad manifest refuses the mount: exact message, exit 1, nothing mounted.
printf '{"perfetto_manifest": {"version": 99}}\n' >bad.json
zip -q -X bad.zip bad.json src/app.json
mkdir -p mnt.bad
err=$("$tm" bad.zip mnt.bad 2>&1); rc=$?
eq "bad manifest: exit 1" "$rc" 1
eq "bad manifest: exact message" "$err" 'perfetto_manifest: unsupported version: 99. Only version 1 is supported; set "version": 1.'
grep -qs " $T_TMP/mnt.bad fuse" /proc/mounts && fail "bad manifest: nothing mounted" || pass "bad manifest: nothing mounted"

# Daemon mode (no -f): mount, read, unmount.
mkdir -p mnt.daemon
if "$tm" cap.zip mnt.daemon; then
	T_MOUNTS+=("$T_TMP/mnt.daemon")
	ok "daemon mode serves files" cmp mnt.daemon/files/app.json src/app.json
	ok "daemon mode unmounts" fusermount3 -u mnt.daemon
else
	fail "daemon mode mount"
fi
