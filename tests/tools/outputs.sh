#!/usr/bin/env bash
# tests/tools/outputs.sh TRACEMOUNT INDEX INPUT... - one line per file of
# INPUT's tree that tracemount makes (TAB separated: path, then the
# sha256 of its bytes, or "-> TARGET" for a link, or "error" when a read
# fails), in the order `ls` lists them, after a line "(check)" with the
# exit code and the sha256 of what `tracemount check` prints (an archive
# that does not merge has no tree, only that). The members under files/ are the
# archive's own bytes and are left out. INDEX is the index file the reads
# share (one scan, one stats pass), removed by the caller.
set -u
tm=$1 idx=$2
shift 2
walk() { # dir ("" for the root)
	local line kind size name
	"$tm" ls -l -o index="$idx" "$@" ${dir:+"$dir"} 2>/dev/null | while IFS= read -r line; do
		kind=${line%% *}
		name=$(sed 's/^[-dl] *[0-9]* //' <<<"$line")
		local p=${dir:+$dir/}${name%% -> *}
		case "$kind" in
		d) [ "${p##*/}" = files ] || dir=$p walk "$@" ;;
		l) printf '%s\t-> %s\n' "$p" "${name#* -> }" ;;
		-) if sum=$("$tm" cat -o index="$idx" "$@" "$p" 2>/dev/null | sha256sum); then
			printf '%s\t%s\n' "$p" "${sum%% *}"
		   else printf '%s\terror\n' "$p"; fi ;;
		esac
	done
}
msg=$("$tm" check -o index="$idx" "$@" 2>&1)
printf '(check)\t%s %s\n' "$?" "$(printf '%s' "$msg" | sha256sum | cut -d' ' -f1)"
dir= walk "$@"
