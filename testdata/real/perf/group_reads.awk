# the read values of each PERF_RECORD_SAMPLE of `perf script -D`: time
# (ns), the event its id belongs to (ids.txt: name and ids, from perf
# report --header-only), the value
function hex(s,   i, n) {
	n = 0
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return n
}
BEGIN { OFS = "\t"; while ((getline l < "ids.txt") > 0) { k = split(l, a, " "); for (i = 2; i <= k; i++) ev[a[i]] = a[1] } }
/PERF_RECORD_SAMPLE/ { t = $2 }
/^\.\.\.\.\. id / { id = $3; sub(/,$/, "", id); v = $5; sub(/,$/, "", v); printf "%s\t%s\t%.0f\n", t, ev[hex(id)], hex(v) }
