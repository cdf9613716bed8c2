#!/usr/bin/env bash
# tests/t_fuse.sh - one capture packed as ZIP, TAR and tar.gz, mounted and
# looked at the way a user would: ls, find, stat, cmp against unzip/tar, jq
# on metadata.json; writes refused; a corrupt member reads as EIO; a bad
# manifest refuses the mount; every mount unmounted (the trap in lib.sh
# covers failures). Without /dev/fuse or fusermount3 (or with
# TM_NO_FUSE=1) the mount-only checks print SKIP and the same content
# checks run through `tracemount ls -l` and `tracemount cat`.
. "$(dirname "$0")/lib.sh"
tm=$TRACEMOUNT
cd "$T_TMP"

if [ -z "${TM_NO_FUSE:-}" ] && have_fuse; then mode=fuse; else mode=cli; fi

# The capture: a manifest, a JSON trace, systrace text, a nested member,
# a member with a 200-character name, and a hidden member.
long=deep/$(printf 'L%.0s' $(seq 200)).json
mkdir -p src/deep/er && cd src
printf '{"traceEvents":[{"pid":10,"tid":10,"ts":2000,"dur":500,"ph":"X","name":"json_slice"}]}\n' >app.json
printf '# tracer: nop\n#\n  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\n' >sys.systrace
awk 'BEGIN { for (i = 0; i < 20000; i++)
	printf "  app-%d (%5d) [%03d] ...1 %d.%06d: tracing_mark_write: B|%d|slice_%d\n", i % 97, i % 997, i % 8, 1 + i / 1000000, i % 1000000, i % 997, i }' >deep/er/big.systrace
cp app.json "$long"
printf '{"perfetto_manifest": {"version": 1, "attributes": {"run": 7}}}\n' >perfetto_manifest.json
printf 'junk' >.hidden
members=(perfetto_manifest.json app.json sys.systrace deep/er/big.systrace "$long" .hidden)
zip -q -X ../cap.zip "${members[@]}"
tar -cf ../cap.tar "${members[@]}"
tar -czf ../cap.tgz "${members[@]}"
expected_walk=$(find . -mindepth 1 \( -type d -printf 'files/%P/\n' -o -printf 'files/%P\n' \) | sort)
cd ..

# walk_cli ARCHIVE DIR: every path under DIR, directories with a trailing
# '/', read with `tracemount ls -l` (type, size, name).
walk_cli() {
	local type size name
	"$tm" ls -l "$1" "$2" | while read -r type size name; do
		if [ "$type" == d ]; then echo "$2/$name/"; walk_cli "$1" "$2/$name"; else echo "$2/$name"; fi
	done
}

for a in cap.zip cap.tar cap.tgz; do
	m=$T_TMP/mnt.$a
	if [ $mode == fuse ]; then
		if ! tm_mount "$a" "$m"; then
			fail "$a: mount" "$(cat "$m.log")"
			continue
		fi
		pass "$a: mount"
		tree_cat() { cat "$m/$1"; }
		tree_size() { stat -c %s "$m/$1"; }
		tree_walk() { (cd "$m" && find files -mindepth 1 \( -type d -printf '%p/\n' -o -printf '%p\n' \)) | sort; }
	else
		tree_cat() { "$tm" cat "$a" "$1"; }
		tree_size() { "$tm" ls -l "$a" "$1" | awk '{ print $2 }'; }
		tree_walk() { walk_cli "$a" files | sort; }
	fi
	case $a in
	cap.zip) extract() { unzip -p cap.zip "$1"; } ;;
	*) extract() { tar -xOf "$a" "$1"; } ;;
	esac

	# The same content, whichever way it is read.
	eq "$a: every member is under files/" "$(tree_walk)" "$expected_walk"
	for f in "${members[@]}"; do
		short=${f:0:40}
		eq "$a: size of files/$short" "$(tree_size "files/$f")" "$(stat -c %s "src/$f")"
		ok "$a: bytes of files/$short equal the archive's" cmp <(tree_cat "files/$f") <(extract "$f")
	done
	meta=$(tree_cat metadata.json)
	eq "$a: metadata status" "$(jq -r .status <<<"$meta")" ok
	eq "$a: metadata error" "$(jq -c .error <<<"$meta")" null
	eq "$a: metadata attributes" "$(jq -c .attributes <<<"$meta")" '{"run":7}'
	eq "$a: metadata ignores the hidden member" "$(jq -c '[.ignored[].path]' <<<"$meta")" '[".hidden"]'
	eq "$a: metadata member types" "$(jq -c '[.files[] | select(.path != null and .path != "") | [.path, .type]] | sort' <<<"$meta")" \
		"[[\"app.json\",\"json\"],[\"$long\",\"json\"],[\"deep/er/big.systrace\",\"systrace\"],[\"perfetto_manifest.json\",\"perfetto_manifest\"],[\"sys.systrace\",\"systrace\"]]"
	case $a in
	cap.zip) containers='["zip"]' inner= ;;
	cap.tar) containers='["tar"]' inner= ;;
	cap.tgz) containers='["gzip","tar"]' inner='"",' ;; # the gzip's inner stream is a file of its own
	esac
	eq "$a: metadata container types" "$(jq -c '[.files[] | select(.path == null or .path == "") | .type]' <<<"$meta")" "$containers"
	eq "$a: processing order" "$(jq -c '[.files | sort_by(.processing_order)[] | .path]' <<<"$meta")" \
		"[null,$inner\"perfetto_manifest.json\",\"app.json\",\"$long\",\"deep/er/big.systrace\",\"sys.systrace\"]"
	eq "$a: metadata.json size equals its length" "$(tree_size metadata.json)" "$(tree_cat metadata.json | wc -c)"

	if [ $mode != fuse ]; then
		skip "$a: ls -R, tracemount cat vs the mount, read-only, concurrent readers, unmount" "no FUSE here"
		continue
	fi
	# What only a mount can show.
	eq "$a: ls root" "$(ls "$m")" "$(printf 'clocks\nfiles\nmachines\nmerged.pftrace\nmetadata.json\nperfetto_manifest.json\ntimeline.tsv')"
	eq "$a: ls -RA files" "$(cd "$m/files" && ls -RA | tr '\n' ' ')" \
		".: .hidden app.json deep perfetto_manifest.json sys.systrace  ./deep: ${long#deep/} er  ./deep/er: big.systrace "
	for f in metadata.json perfetto_manifest.json "${members[@]/#/files/}"; do
		ok "$a: tracemount cat ${f:0:40} equals cat of the mount" cmp <("$tm" cat "$a" "$f") "$m/$f"
	done
	# cat builds one family of generated files by itself, a mount all at once
	for f in merged.pftrace timeline.tsv $(cd "$m" && ls -d machines/*/merged.pftrace machines/*/*.tsv); do
		ok "$a: tracemount cat $f (built alone) equals the mount's" cmp <("$tm" cat "$a" "$f") "$m/$f"
	done
	eq "$a: /proc/mounts names the archive, read-only" \
		"$(awk -v m="$m" '$2 == m { print $1, $3, substr($4, 1, 3) }' /proc/mounts)" "tracemount:$a fuse.tracemount ro,"
	eq "$a: modes" "$(stat -c '%A' "$m/files" "$m/metadata.json" | tr '\n' ' ')" "dr-xr-xr-x -r--r--r-- "
	out=$(touch "$m/files/new" 2>&1); contains "$a: touch is refused" "$out" "Read-only file system"
	out=$( (echo x >"$m/files/app.json") 2>&1); contains "$a: writing is refused" "$out" "Read-only file system"
	out=$(mkdir "$m/d" 2>&1); contains "$a: mkdir is refused" "$out" "Read-only file system"
	out=$(rm "$m/files/app.json" 2>&1); contains "$a: rm is refused" "$out" "Read-only file system"
	readers=()
	for i in 1 2 3 4; do cat "$m/files/deep/er/big.systrace" >"big.$i" & readers+=($!); done
	wait "${readers[@]}"
	ok "$a: 4 concurrent readers get the same bytes" \
		bash -c "cmp big.1 big.2 && cmp big.1 big.3 && cmp big.1 big.4 && cmp big.1 src/deep/er/big.systrace"
	if tm_umount "$m"; then pass "$a: clean unmount"; else fail "$a: clean unmount" "$(cat "$m.log")"; fi
	grep -qs " $m fuse" /proc/mounts && fail "$a: nothing left mounted" || pass "$a: nothing left mounted"
done

# Perfetto proto traces on machines the manifest names: their machine ids
# are known before the scan, so a merged.pftrace built with the scan takes
# each packet as it is read and gets its header in front at the end. Its
# bytes equal those built after the scan (from the index cache): the whole
# merge's and, through a mount that builds every machine's at once, each
# machine's, read whole and in odd pieces.
mkdir -p pm
gunzip -c "$TESTDATA/real/capture2/chrome_startup.pftrace.gz" >pm/a.pftrace
cp pm/a.pftrace pm/b.pftrace
printf '{"perfetto_manifest": {"version": 1, "files": [%s, %s]}}\n' \
	'{"path": "a.pftrace", "machine": {"name": "alpha"}}' '{"path": "b.pftrace", "machine": {"name": "beta"}}' \
	>pm/perfetto_manifest.json
(cd pm && tar -cf ../pm.tar perfetto_manifest.json a.pftrace b.pftrace)
"$tm" cat -o noindex pm.tar merged.pftrace >pm.early
"$tm" cat pm.tar metadata.json >/dev/null # the scan, into the index cache
for f in merged.pftrace machines/alpha/merged.pftrace machines/beta/merged.pftrace; do
	"$tm" cat pm.tar "$f" >"pm.after.${f//\//_}"
done
ok "named machines: merged.pftrace built with the scan equals the one built after it" cmp pm.early pm.after.merged.pftrace
if [ $mode == fuse ]; then
	m=$T_TMP/mnt.pm
	if tm_mount pm.tar "$m" -o noindex; then
		ok "named machines: the mount's merged.pftrace, read first" cmp "$m/merged.pftrace" pm.after.merged.pftrace
		for f in machines/alpha/merged.pftrace machines/beta/merged.pftrace; do
			ok "named machines: the mount's $f" cmp "$m/$f" "pm.after.${f//\//_}"
		done
		ok "named machines: merged.pftrace read in pieces of 777 bytes" \
			cmp <(dd if="$m/merged.pftrace" bs=777 status=none) pm.after.merged.pftrace
		eq "named machines: stat size" "$(stat -c %s "$m/merged.pftrace")" "$(stat -c %s pm.after.merged.pftrace)"
		tm_umount "$m" || fail "named machines: clean unmount" "$(cat "$m.log")"
	else
		fail "named machines: mount" "$(cat "$m.log")"
	fi
else
	skip "named machines: each machine's merged.pftrace built with the scan, through a mount" "no FUSE here"
fi

# A member whose deflate stream is damaged mid-way: the archive still
# mounts (the mount tier reads only first bytes), and reading that member
# fails with EIO and the reason, on the daemon's stderr once.
cp src/deep/er/big.systrace dmg.systrace
zip -q -X dmg.zip dmg.systrace
printf '%064d' 0 | tr 0 '\377' | dd of=dmg.zip bs=1 seek=$(($(stat -c %s dmg.zip) / 2)) conv=notrunc status=none
err=$("$tm" cat dmg.zip files/dmg.systrace 2>&1 >/dev/null); rc=$?
eq "damaged member: tracemount cat exits 1" "$rc" 1
contains "damaged member: tracemount cat names the file" "$err" "tracemount: cat: files/dmg.systrace: "
reason=${err#tracemount: cat: files/dmg.systrace: }
if [ $mode == fuse ]; then
	m=$T_TMP/mnt.dmg
	if tm_mount dmg.zip "$m"; then
		out=$(cat "$m/files/dmg.systrace" 2>&1 >/dev/null)
		contains "damaged member: cat of the mount fails with EIO" "$out" "Input/output error"
		cat "$m/files/dmg.systrace" >/dev/null 2>&1
		# The scan reads the member too: the merge fails with the same
		# reason, and metadata.json (which still reads) says so.
		ok "damaged member: metadata.json reports the reason" \
			jq -e --arg r "$reason" '.status == "error" and (.error | contains($r))' "$m/metadata.json"
		tm_umount "$m" || fail "damaged member: clean unmount" "$(cat "$m.log")"
		eq "damaged member: the daemon logs the reason once" "$(grep -c -F -x "tracemount: $reason" "$m.log")" 1
	else
		fail "damaged member: mount" "$(cat "$m.log")"
	fi
else
	skip "damaged member: EIO through the mount" "no FUSE here"
fi

# An input cut short after the mount: a member the cut leaves whole still
# reads, one it cuts fails with EIO and the reason, never as a short file
# (a stored member's bytes go to the kernel by fd, which reads past the
# end as no bytes at all). The same for a loose input.
if [ $mode == fuse ]; then
	cp src/app.json cut.json
	cp src/deep/er/big.systrace cut.systrace
	tar -cf cut.tar cut.json cut.systrace
	m=$T_TMP/mnt.cut
	if tm_mount cut.tar "$m"; then
		size=$(stat -c %s "$m/files/cut.systrace")
		truncate -s $(($(stat -c %s cut.tar) - size / 2)) cut.tar
		ok "cut after mount: a whole member still reads" cmp "$m/files/cut.json" src/app.json
		out=$(cat "$m/files/cut.systrace" 2>&1 >/dev/null)
		contains "cut after mount: a cut member fails with EIO" "$out" "Input/output error"
		eq "cut after mount: its size stays" "$(stat -c %s "$m/files/cut.systrace")" "$size"
		tm_umount "$m" || fail "cut after mount: clean unmount" "$(cat "$m.log")"
		contains "cut after mount: the daemon says why" "$(cat "$m.log")" \
			"tracemount: cut.tar: file is shorter than when it was opened"
	else
		fail "cut after mount: mount" "$(cat "$m.log")"
	fi
	cp src/deep/er/big.systrace loose.systrace
	m=$T_TMP/mnt.loose
	if tm_mount loose.systrace "$m"; then
		truncate -s 100 loose.systrace
		out=$(cat "$m/files/loose.systrace" 2>&1 >/dev/null)
		contains "cut after mount: a loose input fails with EIO" "$out" "Input/output error"
		tm_umount "$m" || fail "cut after mount: loose input: clean unmount" "$(cat "$m.log")"
		contains "cut after mount: loose input: the daemon says why" "$(cat "$m.log")" "file is shorter than"
	else
		fail "cut after mount: loose input: mount" "$(cat "$m.log")"
	fi
else
	skip "cut after mount: EIO through the mount" "no FUSE here"
fi

# $TMPDIR too small for a generation pass (tracemount(1), ENVIRONMENT): a
# read of the file fails with EIO, the daemon says why, and the files of
# the scan still read. A tmpfs of 128 KiB makes it (root only).
small=$T_TMP/small
mkdir -p "$small"
if [ $mode != fuse ]; then
	skip "TMPDIR full: EIO through the mount" "no FUSE here"
elif ! mount -t tmpfs -o size=128k tmpfs "$small" 2>/dev/null; then
	skip "TMPDIR full: EIO through the mount" "cannot mount a tmpfs here (not root?)"
else
	trap 'umount -l "$small" 2>/dev/null; t_cleanup' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	m=$T_TMP/mnt.full
	if TMPDIR=$small tm_mount src/deep/er/big.systrace "$m" -o noindex; then
		out=$(cat "$m/timeline.tsv" 2>&1 >/dev/null)
		contains "TMPDIR full: timeline.tsv fails with EIO" "$out" "Input/output error"
		out=$(stat -c %s "$m/timeline.tsv" 2>&1)
		contains "TMPDIR full: so does its stat (no size of 0)" "$out" "Input/output error"
		ok "TMPDIR full: metadata.json still reads" jq -e '.status == "ok"' "$m/metadata.json"
		tm_umount "$m" || fail "TMPDIR full: clean unmount" "$(cat "$m.log")"
		contains "TMPDIR full: the daemon says why" "$(cat "$m.log")" \
			"cannot write a temporary file: No space left on device"
	else
		fail "TMPDIR full: mount" "$(cat "$m.log")"
	fi
	umount "$small" || umount -l "$small"
fi

# A bad manifest refuses the mount: the exact message, exit 1, nothing
# mounted (checked before FUSE is touched, so this runs everywhere).
printf '{"perfetto_manifest": {"version": 99}}\n' >bad.json
zip -q -X bad.zip bad.json src/app.json
mkdir -p mnt.bad
err=$("$tm" bad.zip mnt.bad 2>&1); rc=$?
eq "bad manifest: exit 1" "$rc" 1
eq "bad manifest: the exact message alone" "$err" 'perfetto_manifest: unsupported version: 99. Only version 1 is supported; set "version": 1.'
grep -qs " $T_TMP/mnt.bad fuse" /proc/mounts && fail "bad manifest: nothing mounted" || pass "bad manifest: nothing mounted"

if [ $mode != fuse ]; then
	skip "daemon mode, -o rw" "no FUSE here"
	exit 0
fi

# A foreground mount ended by SIGTERM, SIGHUP or SIGINT (Ctrl-C) unmounts
# and exits 0, as after an unmount (tracemount(1), EXIT STATUS). A shell
# starts background commands with SIGINT ignored, and `nohup make check`
# leaves SIGHUP ignored (the daemon keeps an ignored signal ignored):
# env --default-signal gives them back.
defsig=(env --default-signal=INT,HUP)
"${defsig[@]}" true 2>/dev/null || defsig=(env)
for sig in TERM HUP INT; do
	m=$T_TMP/mnt.sig$sig
	mkdir -p "$m"
	if [ $sig != TERM ] && [ ${#defsig[@]} -eq 1 ]; then
		skip "SIG$sig: exit 0, unmounted" "env has no --default-signal"
		continue
	fi
	"${defsig[@]}" "$tm" -f cap.zip "$m" 2>"$m.log" &
	pid=$!
	for i in $(seq 1 200); do grep -qs " $m fuse" /proc/mounts && break; sleep 0.05; done
	if ! grep -qs " $m fuse" /proc/mounts; then
		kill "$pid" 2>/dev/null
		fail "SIG$sig: mount" "$(cat "$m.log")"
		continue
	fi
	T_PIDS+=("$pid"); T_MOUNTS+=("$m")
	cmp -s "$m/files/app.json" src/app.json || fail "SIG$sig: serves files"
	kill -$sig "$pid"
	for i in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$pid" 2>/dev/null; then
		fail "SIG$sig: the daemon exits" "still running 10 s after the signal"
		fusermount3 -uz "$m" 2>/dev/null
		kill -9 "$pid" 2>/dev/null
	fi
	wait "$pid"
	eq "SIG$sig: the daemon exits 0" "$?" 0
	grep -qs " $m fuse" /proc/mounts && { fail "SIG$sig: unmounted"; fusermount3 -u "$m"; } || pass "SIG$sig: unmounted"
	grep -q 'Sanitizer' "$m.log" && fail "SIG$sig: no sanitizer report" "$(head -c 400 "$m.log")"
done

# `-o rw` cannot make the mount writable.
m=$T_TMP/mnt.rw
if tm_mount cap.zip "$m" -o rw; then
	contains "-o rw: still mounted read-only" "$(awk -v m="$m" '$2 == m { print $4 }' /proc/mounts)" "ro,"
	out=$(touch "$m/files/app.json" 2>&1); contains "-o rw: touch is refused" "$out" "Read-only file system"
	tm_umount "$m" && pass "-o rw: clean unmount" || fail "-o rw: clean unmount" "$(cat "$m.log")"
else
	fail "-o rw: mount" "$(cat "$m.log")"
fi

# Daemon mode (no -f): the archive is opened before the fork, the shell
# gets exit 0 once the mount is up.
mkdir -p mnt.daemon
if "$tm" cap.zip mnt.daemon; then
	T_MOUNTS+=("$T_TMP/mnt.daemon")
	ok "daemon mode serves files" cmp mnt.daemon/files/app.json src/app.json
	ok "daemon mode unmounts" fusermount3 -u mnt.daemon
else
	fail "daemon mode mount"
fi
