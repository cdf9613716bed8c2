#!/usr/bin/env bash
# tests/t_stats.sh - metadata.json's stats per file and in total (issue
# 33, part 3): every error and data-loss stat the reference counts on
# import of the archive, with its value, for the file that caused it:
#   mismatched_sched_switch_tids   per kernel text, also two of one machine
#   slice_spill_overlapping_complete_event   a JSON import's, while parsing
#   json_parser_failure            counted by the scan (an X without dur)
#                                  and by the parse (a C without args): the sum
#   config_write_into_file_discard per DISCARD buffer index of a TraceConfig
#   config_write_into_file_no_flush unless a SystemInfo of the same machine
#                                  names a service of v54 or later
#   traced_*, filter_errors        a TraceStats packet's, with the losses
#                                  of the sequences it names, per buffer
# The values are those the reference gives this archive (make interop
# compares every fixture with it: its meta_stats and file_stats tables).
# The same bytes through `tracemount cat`, from the index cache, and
# through a real mount before and after merged.pftrace is generated.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/scenario.sh"
tm=$TRACEMOUNT
here=$(cd "$(dirname "$0")" && pwd)
cd "$T_TMP"

if ! command -v protoc >/dev/null 2>&1; then
	skip "stats" "protoc (protobuf-compiler) is missing: the proto fixtures cannot be encoded"
	exit 0
fi
scenario_init || { fail "stats: encode the fixtures"; exit 1; }
# the scenario of make interop (tests/interop/captures/stats): two kernel
# texts of one machine, each with a switch from a pid that was not
# switched to; a JSON file; two protos with a TraceConfig, the second with
# a v54 service's SystemInfo; a proto with sequence losses and TraceStats
build_archive "$here/interop/captures/stats" "$T_TMP/one.tar" || { fail "stats: build the archive"; exit 1; }
# the v54 service on another machine: old.pftrace's machine knows no version
mkdir in
cp "$enc/stats_config.pb" in/old.pftrace
cat "$enc/stats_config.pb" "$enc/stats_service_v54.pb" >in/new.pftrace
printf '{"perfetto_manifest": {"version": 1, "files": [{"path": "new.pftrace", "machine": {"name": "other"}}]}}\n' \
	>in/perfetto_manifest.json
(cd in && tar cf ../two.tar perfetto_manifest.json old.pftrace new.pftrace)
encode() { protoc --encode=perfetto.protos.Trace --proto_path="$here/../protos" "$here/../protos/trace.proto"; }

meta=$("$tm" cat -o noindex one.tar metadata.json 2>cat.err)
eq "cat one.tar metadata.json" "$(cat cat.err)" ""
file_stats() { jq -c --arg p "$2" '.files[] | select(.path == $p) | .stats' <<<"$1"; }
eq "a kernel text's mismatched sched_switch tids, its own" "$(file_stats "$meta" kernel_a.txt)" \
	'{"mismatched_sched_switch_tids":1}'
eq "another kernel text of the same machine keeps its own count" "$(file_stats "$meta" kernel_b.txt)" \
	'{"mismatched_sched_switch_tids":1}'
eq "JSON: the scan's and the parse's json_parser_failure summed, and the parse's spill" \
	"$(file_stats "$meta" app.json)" '{"json_parser_failure":2,"slice_spill_overlapping_complete_event":1}'
eq "TraceConfig: one discard per DISCARD buffer index; a v54 service flushes" \
	"$(file_stats "$meta" new.pftrace)" '{"config_write_into_file_discard":{"0":1,"2":1}}'
eq "the v54 SystemInfo of the same machine also clears no_flush of the other file" \
	"$(file_stats "$meta" old.pftrace)" '{"config_write_into_file_discard":{"0":1,"2":1}}'
eq "TraceStats and sequence losses: what the service and the sequences lost, per buffer" \
	"$(file_stats "$meta" loss.pftrace)" \
	'{"packet_skipped_seq_needs_incremental_state_invalid":2,"traced_flushes_failed":6,"filter_errors":5,"traced_final_flush_failed":2,"traced_buf_patches_failed":{"0":2},"traced_buf_abi_violations":{"0":3,"1":1},"traced_buf_trace_writer_packet_loss":{"0":4},"traced_buf_sequence_packet_loss":{"0":1,"1":1},"traced_buf_incremental_sequences_dropped":{"0":1,"1":1},"traced_buf_data_loss_read_gap":{"0":1},"traced_buf_data_loss_overwrite":{"0":1},"traced_buf_data_loss_smb_full":{"1":1}}'
eq "in total: the scan's stats first, zeros included, in their order" \
	"$(jq -c '.stats | keys_unsorted | [.[0], .[22], .[23]]' <<<"$meta")" \
	'["trace_sorter_negative_timestamp_dropped","previous_packet_dropped_missing_sequence_id","traced_flushes_failed"]'
eq "in total: per index, summed over files" "$(jq -c '.stats.config_write_into_file_discard' <<<"$meta")" '{"0":2,"2":2}'
eq "in total: the parse's, summed over files" "$(jq -c '[.stats.mismatched_sched_switch_tids, .stats.slice_spill_overlapping_complete_event]' <<<"$meta")" '[2,1]'
eq "in total: the scan's 23 stats always, then 14 other names counted" "$(jq '.stats | length' <<<"$meta")" 37
eq "no stats_incomplete when the parse ran" "$(jq -c 'has("stats_incomplete")' <<<"$meta")" false

m2=$("$tm" cat -o noindex two.tar metadata.json)
eq "no_flush counts where the machine's service version is unknown" "$(file_stats "$m2" old.pftrace)" \
	'{"config_write_into_file_discard":{"0":1,"2":1},"config_write_into_file_no_flush":1}'
eq "and not on the machine with the v54 service" "$(file_stats "$m2" new.pftrace)" \
	'{"config_write_into_file_discard":{"0":1,"2":1}}'

# the index cache keeps the parse's stats: the same bytes from it
"$tm" cat -o index="$T_TMP/one.idx" one.tar metadata.json >ix1.json 2>ix.err
"$tm" cat -o index="$T_TMP/one.idx" one.tar metadata.json >ix2.json 2>>ix.err
eq "index: no warning" "$(cat ix.err)" ""
eq "index: metadata.json as read without it" "$(cat ix1.json)" "$meta"
eq "index: the same bytes read back from it" "$(cat ix2.json)" "$meta"

# a merge that fails has no parse to count: the scan's stats alone
printf 'packet { timestamp: 5 timestamp_clock_id: 64 track_event { type: TYPE_INSTANT name: "x" } }\n' | encode >bad.pftrace
bad=$("$tm" cat -o noindex bad.pftrace metadata.json 2>/dev/null)
eq "a failed merge: status error, no parse stats, no stats_incomplete" \
	"$(jq -c '[.status, (.stats | length), has("stats_incomplete")]' <<<"$bad")" '["error",23,false]'

if have_fuse; then
	if tm_mount one.tar "$T_TMP/mnt" -o noindex; then
		eq "mount: metadata.json as cat gives it" "$(cat "$T_TMP/mnt/metadata.json")" "$meta"
		eq "mount: stat gives its exact size" "$(stat -c %s "$T_TMP/mnt/metadata.json")" "$(printf '%s\n' "$meta" | wc -c)"
		cat "$T_TMP/mnt/merged.pftrace" >/dev/null
		eq "mount: the same after merged.pftrace is generated" "$(cat "$T_TMP/mnt/metadata.json")" "$meta"
		if tm_umount "$T_TMP/mnt"; then pass "mount: clean unmount"; else fail "mount: clean unmount" "$(cat "$T_TMP/mnt.log")"; fi
	else
		fail "mount one.tar" "$(cat "$T_TMP/mnt.log")"
	fi
else
	skip "mount: metadata.json's stats" "/dev/fuse or fusermount3 is missing; the same checks ran through tracemount cat"
fi
exit $T_FAILED
