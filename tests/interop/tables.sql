-- tests/interop/tables.sql - the tables the interop comparison holds the
-- reference's import of an archive and of its merged.pftrace to. Every
-- statement yields one column, `row`: a table name, then the row's fields,
-- tab-separated; run.sh compares them as multisets per table.
--
-- Machines are named (NULL for an unnamed one). A track's kind is the
-- dimension it hangs off: thread (utid), process (upid), cpu, or global.
-- Args: JSON args import under `args.`, debug annotations under `debug.`;
-- the comparison reads both as `args.` (tracemount(1), "merged.pftrace"),
-- as it reads a Firefox marker's `data.*` (debug annotation `data` in
-- merged.pftrace), and an strace slice's (`args`, `ret`) without the prefix.

CREATE PERFETTO FUNCTION tm_kind(track_id LONG) RETURNS STRING AS
SELECT CASE
  WHEN EXISTS (SELECT 1 FROM track t JOIN args a ON a.arg_set_id = t.dimension_arg_set_id
               WHERE t.id = $track_id AND a.key = 'utid') THEN 'thread'
  WHEN EXISTS (SELECT 1 FROM track t JOIN args a ON a.arg_set_id = t.dimension_arg_set_id
               WHERE t.id = $track_id AND a.key = 'upid') THEN 'process'
  WHEN EXISTS (SELECT 1 FROM track t JOIN track p ON p.id = t.parent_id
               JOIN args a ON a.arg_set_id = p.dimension_arg_set_id
               WHERE t.id = $track_id AND a.key = 'upid') THEN 'process'
  WHEN EXISTS (SELECT 1 FROM track t JOIN args a ON a.arg_set_id = t.dimension_arg_set_id
               WHERE t.id = $track_id AND a.key = 'ucpu') THEN 'cpu'
  ELSE 'global' END;

CREATE PERFETTO FUNCTION tm_machine(machine_id LONG) RETURNS STRING AS
SELECT ifnull((SELECT name FROM machine WHERE id = $machine_id), '\N');

CREATE PERFETTO FUNCTION tm_s(v STRING) RETURNS STRING AS
SELECT ifnull(replace(replace(replace($v, '\', '\\'), char(9), '\t'), char(10), '\n'), '\N');

SELECT 'slice' || char(9) || tm_s(s.name) || char(9) || s.ts || char(9) || s.dur || char(9) ||
       tm_s(s.category) || char(9) || s.depth || char(9) || tm_machine(t.machine_id) || char(9) ||
       tm_kind(s.track_id) AS row
FROM slice s JOIN track t ON t.id = s.track_id WHERE s.dur != 0;

-- The thread a thread track's slice is on (a ninja job's inferred
-- worker, a JSON event's tid, ...).
SELECT 'thread_slice' || char(9) || tm_s(s.name) || char(9) || s.ts || char(9) || tm_machine(t.machine_id) ||
       char(9) || th.tid AS row
FROM slice s JOIN thread_track t ON t.id = s.track_id JOIN thread th USING (utid);

SELECT 'instant' || char(9) || tm_s(s.name) || char(9) || s.ts || char(9) || tm_s(s.category) ||
       char(9) || s.depth || char(9) || tm_machine(t.machine_id) || char(9) || tm_kind(s.track_id) AS row
FROM slice s JOIN track t ON t.id = s.track_id WHERE s.dur = 0;

SELECT 'thread' || char(9) || tm_machine(machine_id) || char(9) || tid || char(9) || tm_s(name) AS row
FROM thread;

SELECT 'process' || char(9) || tm_machine(machine_id) || char(9) || pid || char(9) || tm_s(name) AS row
FROM process;

-- The row ids the reference gives threads and processes, in the order it
-- makes them (issue 33): args such as legacy_event.passthrough_utid hold
-- them, so merged.pftrace must make its threads and processes in the
-- archive's order. A thread with its process's pid (\N for none).
SELECT 'thread_ids' || char(9) || tm_machine(machine_id) || char(9) || utid || char(9) || tid || char(9) ||
       ifnull((SELECT p.pid FROM process p WHERE p.upid = thread.upid), '\N') AS row
FROM thread;

SELECT 'process_ids' || char(9) || tm_machine(machine_id) || char(9) || upid || char(9) || pid AS row
FROM process;

SELECT 'counter' || char(9) || tm_machine(t.machine_id) || char(9) || tm_s(t.name) || char(9) ||
       ifnull(cct.cpu, '\N') || char(9) || c.ts || char(9) || printf('%.17g', c.value) AS row
FROM counter c JOIN track t ON t.id = c.track_id LEFT JOIN cpu_counter_track cct ON cct.id = t.id;

-- The CPU as its machine numbers it (sched.cpu is the ucpu: a second
-- machine's CPU 0 is 4096), as tools/tm_model prints it.
SELECT 'sched' || char(9) || tm_machine(th.machine_id) || char(9) || s.ts || char(9) || s.dur || char(9) ||
       ifnull((SELECT c.cpu FROM cpu c WHERE c.id = s.ucpu), '\N') || char(9) || th.tid || char(9) ||
       tm_s(s.end_state) AS row
FROM sched s JOIN thread th USING (utid);

SELECT 'thread_state' || char(9) || tm_machine(th.machine_id) || char(9) || ts.ts || char(9) || ts.dur ||
       char(9) || ifnull(ts.cpu, '\N') || char(9) || th.tid || char(9) || tm_s(ts.state) AS row
FROM thread_state ts JOIN thread th USING (utid);

SELECT 'flow' || char(9) || tm_s(so.name) || char(9) || so.ts || char(9) || tm_s(si.name) || char(9) ||
       si.ts || char(9) || tm_machine(t.machine_id) AS row
FROM flow f JOIN slice so ON so.id = f.slice_out JOIN slice si ON si.id = f.slice_in
JOIN track t ON t.id = so.track_id;

SELECT 'args' || char(9) || tm_s(s.name) || char(9) || s.ts || char(9) ||
       tm_s(CASE WHEN a.key GLOB 'debug.*' AND s.category = 'strace' THEN substr(a.key, 7)
                 WHEN a.key GLOB 'debug.*' THEN 'args.' || substr(a.key, 7)
                 WHEN a.key GLOB 'data[.[]*' AND (SELECT t.type FROM track t WHERE t.id = s.track_id) = 'firefox_marker'
                   THEN 'args.' || a.key
                 ELSE a.key END) || char(9) ||
       tm_s(a.display_value) AS row
FROM slice s JOIN args a ON a.arg_set_id = s.arg_set_id;

-- Stack samples (cpu_profile_stack_sample: perf script's, Gecko's, ...):
-- the thread, the leaf frame and its mapping, the stack from the root;
-- the callsites the samples use, with their depth from their stack's root
-- and their path; the names of the mappings of their frames. (The
-- reference makes callsites no sample uses, which no Perfetto packet makes
-- alone: a Gecko profile's unsampled stacks; and mappings and frames of a
-- perf script sample never ended.) A mapping's name is compared
-- without a leading '/' (merged.pftrace names a mapping by one path
-- component, which the reference prefixes with '/'), depths from each
-- root (perf script's start at 1, a Callstack's at 0), and callsites and
-- mappings as sets (the reference makes perf script's mappings per file,
-- merged.pftrace's by name): tracemount(1), "Divergences".
CREATE PERFETTO FUNCTION tm_map(name STRING) RETURNS STRING AS
SELECT CASE WHEN substr($name, 1, 1) = '/' THEN substr($name, 2) ELSE ifnull($name, '') END;

-- fold: the path as profile.folded writes it, a ';' or control character
-- inside a name written '_'
CREATE PERFETTO FUNCTION tm_fold(name STRING) RETURNS STRING AS
SELECT replace(replace(replace(replace(ifnull($name, ''), ';', '_'), char(9), '_'), char(10), '_'), char(13), '_');

CREATE PERFETTO TABLE tm_cs AS
WITH RECURSIVE up(id, at, d, path, fold) AS (
  SELECT c.id, c.parent_id, 0, f.name, tm_fold(f.name)
  FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id
  UNION ALL
  SELECT up.id, c.parent_id, up.d + 1, f.name || ';' || up.path, tm_fold(f.name) || ';' || up.fold
  FROM up JOIN stack_profile_callsite c ON c.id = up.at JOIN stack_profile_frame f ON f.id = c.frame_id
)
SELECT id, d AS depth, path, fold FROM up WHERE at IS NULL;

SELECT 'sample' || char(9) || tm_machine(th.machine_id) || char(9) || s.ts || char(9) || th.tid || char(9) ||
       tm_s(f.name) || char(9) || tm_s(tm_map(m.name)) || char(9) || tm_s(cs.path) AS row
FROM cpu_profile_stack_sample s JOIN thread th USING (utid)
JOIN stack_profile_callsite c ON c.id = s.callsite_id JOIN stack_profile_frame f ON f.id = c.frame_id
JOIN stack_profile_mapping m ON m.id = f.mapping JOIN tm_cs cs ON cs.id = s.callsite_id;

-- the callsites samples use: their leaves and every ancestor
CREATE PERFETTO TABLE tm_used AS
WITH RECURSIVE used(id) AS (
  SELECT callsite_id FROM cpu_profile_stack_sample
  UNION SELECT callsite_id FROM __intrinsic_aggregate_sample
  UNION SELECT c.parent_id FROM used JOIN stack_profile_callsite c ON c.id = used.id WHERE c.parent_id IS NOT NULL
)
SELECT id FROM used;

SELECT DISTINCT 'callsite' || char(9) || cs.depth || char(9) || tm_s(cs.path) || char(9) ||
       tm_s(tm_map(m.name)) AS row
FROM tm_cs cs JOIN tm_used u ON u.id = cs.id JOIN stack_profile_callsite c ON c.id = cs.id
JOIN stack_profile_frame f ON f.id = c.frame_id JOIN stack_profile_mapping m ON m.id = f.mapping;

SELECT DISTINCT 'mapping' || char(9) || tm_s(tm_map(m.name)) AS row
FROM stack_profile_mapping m
WHERE EXISTS (SELECT 1 FROM stack_profile_frame f JOIN stack_profile_callsite c ON c.frame_id = f.id
              JOIN tm_used u ON u.id = c.id WHERE f.mapping = m.id);

-- Perf samples (perf_sample: perf.data's): the thread, CPU and mode, the
-- stack from the root with each frame as tracemount's text views name an
-- unsymbolized address (the last path component of its mapping, or
-- [unknown], then +0x and the address in it), each callsite the samples
-- use, and the mappings of their frames with every field (compared as
-- sets: merged.pftrace makes a kernel mapping per process, the reference
-- one for the file; a mapping name without its leading '/', as above).
CREATE PERFETTO FUNCTION tm_base(name STRING) RETURNS STRING AS
SELECT substr(ifnull($name, ''), length(rtrim(ifnull($name, ''), replace(ifnull($name, ''), '/', ''))) + 1);

CREATE PERFETTO FUNCTION tm_label(name STRING, rel_pc LONG) RETURNS STRING AS
SELECT CASE WHEN tm_base($name) = '' THEN '[unknown]' ELSE tm_base($name) END || '+0x' || printf('%x', $rel_pc);

-- a perf frame as the text views show it: its function's name, else
-- tm_label (perf.data's frames have no name; a PerfSample packet's may)
CREATE PERFETTO FUNCTION tm_pframe(fname STRING, mname STRING, rel_pc LONG) RETURNS STRING AS
SELECT CASE WHEN ifnull($fname, '') = '' THEN tm_label($mname, $rel_pc) ELSE $fname END;

CREATE PERFETTO TABLE tm_pcs AS
WITH RECURSIVE up(id, at, d, path) AS (
  SELECT c.id, c.parent_id, 0, tm_fold(tm_pframe(f.name, m.name, f.rel_pc))
  FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id
  JOIN stack_profile_mapping m ON m.id = f.mapping
  UNION ALL
  SELECT up.id, c.parent_id, up.d + 1, tm_fold(tm_pframe(f.name, m.name, f.rel_pc)) || ';' || up.path
  FROM up JOIN stack_profile_callsite c ON c.id = up.at JOIN stack_profile_frame f ON f.id = c.frame_id
  JOIN stack_profile_mapping m ON m.id = f.mapping
)
SELECT id, d AS depth, path FROM up WHERE at IS NULL;

SELECT 'perf_sample' || char(9) || tm_machine(th.machine_id) || char(9) || s.ts || char(9) || th.tid || char(9) ||
       ifnull(s.cpu, '\N') || char(9) || s.cpu_mode || char(9) || ifnull(pcs.path, '') AS row
FROM perf_sample s JOIN thread th USING (utid) LEFT JOIN tm_pcs pcs ON pcs.id = s.callsite_id;

CREATE PERFETTO TABLE tm_pused AS
WITH RECURSIVE used(id) AS (
  SELECT callsite_id FROM perf_sample WHERE callsite_id IS NOT NULL
  UNION SELECT c.parent_id FROM used JOIN stack_profile_callsite c ON c.id = used.id WHERE c.parent_id IS NOT NULL
)
SELECT id FROM used;

SELECT DISTINCT 'perf_callsite' || char(9) || pcs.depth || char(9) || pcs.path AS row
FROM tm_pcs pcs JOIN tm_pused u ON u.id = pcs.id;

SELECT DISTINCT 'perf_mapping' || char(9) || tm_s(tm_map(m.name)) || char(9) || m.build_id || char(9) ||
       m.exact_offset || char(9) || m.start_offset || char(9) || m.start || char(9) || m.end || char(9) ||
       m.load_bias AS row
FROM stack_profile_mapping m
WHERE EXISTS (SELECT 1 FROM stack_profile_frame f JOIN stack_profile_callsite c ON c.frame_id = f.id
              JOIN tm_pused u ON u.id = c.id WHERE f.mapping = m.id);

-- Heap graphs (an hprof file's; merged.pftrace's HeapGraph packets): per
-- class, its kind (no kind: an hprof import says "[unknown class kind]", a
-- HeapGraph import KIND_UNKNOWN; the same), its objects and their self
-- sizes; per class, root type (an hprof import's name without the ROOT_
-- of a HeapGraph import's), reachability and self size, the objects and
-- their native sizes; per (owner's class, field, field type, owned
-- object's class or none), the references. Object ids differ (an hprof
-- import's are in hash order), the root distance a HeapGraph import does
-- not work out, the superclass it takes from a static field an hprof file
-- does not have (tracemount(1), "Divergences").
CREATE PERFETTO FUNCTION tm_hkind(kind STRING) RETURNS STRING AS
SELECT CASE WHEN $kind = '[unknown class kind]' THEN 'KIND_UNKNOWN' ELSE $kind END;

SELECT 'heap_class' || char(9) || tm_s(c.name) || char(9) || tm_hkind(c.kind) || char(9) ||
       (SELECT count(*) FROM heap_graph_object o WHERE o.type_id = c.id) || char(9) ||
       (SELECT ifnull(sum(o.self_size), 0) FROM heap_graph_object o WHERE o.type_id = c.id) AS row
FROM heap_graph_class c;

SELECT 'heap_object' || char(9) || tm_machine(p.machine_id) || char(9) || o.graph_sample_ts || char(9) ||
       tm_s(c.name) || char(9) || ifnull(replace(o.root_type, 'ROOT_', ''), '\N') || char(9) || o.reachable ||
       char(9) || o.self_size || char(9) || o.native_size || char(9) || count(*) AS row
FROM heap_graph_object o JOIN heap_graph_class c ON c.id = o.type_id JOIN process p ON p.upid = o.upid
GROUP BY p.machine_id, o.graph_sample_ts, c.name, o.root_type, o.reachable, o.self_size, o.native_size;

SELECT 'heap_reference' || char(9) || tm_s(oc.name) || char(9) || tm_s(r.field_name) || char(9) ||
       tm_s(r.field_type_name) || char(9) || tm_s(tc.name) || char(9) || count(*) AS row
FROM heap_graph_reference r JOIN heap_graph_object o ON o.id = r.owner_id
JOIN heap_graph_class oc ON oc.id = o.type_id
LEFT JOIN heap_graph_object t ON t.id = r.owned_id LEFT JOIN heap_graph_class tc ON tc.id = t.type_id
GROUP BY oc.name, r.field_name, r.field_type_name, tc.name;

-- Aggregate samples (collapsed stacks): the stack from the root and the
-- value. No Perfetto packet makes one, so merged.pftrace holds none
-- (tests/interop/differences); profile.folded shows them (tsv_profile).
SELECT 'aggregate' || char(9) || tm_s(cs.path) || char(9) || printf('%.17g', a.value) AS row
FROM __intrinsic_aggregate_sample a JOIN tm_cs cs ON cs.id = a.callsite_id;

-- Summed over trace files and machines: one trace (merged.pftrace) has one
-- row where the archive's import has one per file.
SELECT 'stats' || char(9) || name || char(9) || ifnull(idx, '\N') || char(9) || severity || char(9) ||
       sum(value) AS row
FROM stats WHERE severity IN ('error', 'data_loss') GROUP BY name, idx, severity HAVING sum(value) > 0;

-- What tracemount's text views must equal (issue 9): timeline.tsv's slice
-- and instant rows as (name, ts, dur, machine), its sample rows as
-- (machine, ts, tid, leaf frame), profile.folded's lines, and the thread and
-- process tables as machines/<dir>/threads.tsv and processes.tsv show
-- them (a NULL name empty).
-- Every stack sample but perf's (perf_sample's): cpu_profile_stack_sample's
-- sources and a StackSample packet's others, a sample of no thread too.
CREATE PERFETTO TABLE tm_stack_sample AS
SELECT ps.ts, ps.callsite_id, tc.utid FROM __intrinsic_profiler_sample ps
LEFT JOIN __intrinsic_profiler_task_context tc ON tc.id = ps.task_context_id
WHERE ps.source IS NOT 'linux.perf';

CREATE PERFETTO FUNCTION tm_e(v STRING) RETURNS STRING AS
SELECT replace(replace(replace(ifnull($v, ''), '\', '\\'), char(9), '\t'), char(10), '\n');

SELECT 'tsv_slice' || char(9) || tm_e(s.name) || char(9) || s.ts || char(9) || s.dur || char(9) ||
       tm_machine(t.machine_id) AS row
FROM slice s JOIN track t ON t.id = s.track_id;

SELECT 'tsv_sample' || char(9) || tm_machine(th.machine_id) || char(9) || s.ts || char(9) || ifnull(th.tid, '') ||
       char(9) || tm_e(CASE WHEN s.callsite_id IS NULL THEN '' ELSE f.name END) AS row
FROM tm_stack_sample s LEFT JOIN thread th USING (utid)
LEFT JOIN stack_profile_callsite c ON c.id = s.callsite_id LEFT JOIN stack_profile_frame f ON f.id = c.frame_id
UNION ALL
SELECT 'tsv_sample' || char(9) || tm_machine(th.machine_id) || char(9) || s.ts || char(9) || th.tid ||
       char(9) || tm_e(CASE WHEN s.callsite_id IS NULL THEN '' ELSE tm_pframe(f.name, m.name, f.rel_pc) END) AS row
FROM perf_sample s JOIN thread th USING (utid)
LEFT JOIN stack_profile_callsite c ON c.id = s.callsite_id LEFT JOIN stack_profile_frame f ON f.id = c.frame_id
LEFT JOIN stack_profile_mapping m ON m.id = f.mapping;

-- timeline.tsv's counter rows: (machine, track name, CPU of a CPU's
-- counter, ts, value), the value an integer when it is a whole one (as
-- run.sh prints timeline.tsv's).
SELECT 'tsv_counter' || char(9) || tm_machine(t.machine_id) || char(9) || tm_e(t.name) || char(9) ||
       ifnull(cct.cpu, '\N') || char(9) || c.ts || char(9) ||
       (CASE WHEN c.value = CAST(c.value AS INT) AND abs(c.value) < 9007199254740992
             THEN printf('%d', CAST(c.value AS INT)) ELSE printf('%.17g', c.value) END) AS row
FROM counter c JOIN track t ON t.id = c.track_id LEFT JOIN cpu_counter_track cct ON cct.id = t.id;

-- timeline.tsv's sched lines: (machine, ts, dur, CPU, tid, end state,
-- priority), the CPU as its machine numbers it (the cpu table's row of the
-- slice's ucpu: a second machine's CPU 0 is ucpu 4096), the end state
-- empty while the thread still runs.
SELECT 'tsv_sched' || char(9) || tm_machine(th.machine_id) || char(9) || s.ts || char(9) || s.dur || char(9) ||
       ifnull((SELECT c.cpu FROM cpu c WHERE c.id = s.ucpu), '\N') || char(9) || th.tid || char(9) ||
       tm_e(s.end_state) || char(9) || s.priority AS row
FROM sched s JOIN thread th USING (utid);

-- profile.folded over every machine: each stack from the root (names
-- joined by ';') with its stack samples and aggregate samples summed.
SELECT 'tsv_profile' || char(9) || tm_e(path) || char(9) || printf('%d', sum(n)) AS row
FROM (SELECT cs.fold AS path, 1 AS n FROM tm_stack_sample s JOIN tm_cs cs ON cs.id = s.callsite_id
      UNION ALL
      SELECT cs.fold, a.value FROM __intrinsic_aggregate_sample a JOIN tm_cs cs ON cs.id = a.callsite_id
      UNION ALL
      SELECT pcs.path, 1 FROM perf_sample s JOIN tm_pcs pcs ON pcs.id = s.callsite_id)
GROUP BY path;

-- heap.tsv over every machine: per class name with objects, its objects
-- and their self sizes.
SELECT 'tsv_heap' || char(9) || tm_machine(p.machine_id) || char(9) || tm_e(c.name) || char(9) || count(*) ||
       char(9) || sum(o.self_size) AS row
FROM heap_graph_object o JOIN heap_graph_class c ON c.id = o.type_id JOIN process p ON p.upid = o.upid
GROUP BY p.machine_id, c.name;

SELECT 'tsv_thread' || char(9) || tm_machine(machine_id) || char(9) || tid || char(9) || tm_e(name) AS row
FROM thread;

SELECT 'tsv_process' || char(9) || tm_machine(machine_id) || char(9) || pid || char(9) || tm_e(name) AS row
FROM process;

-- What metadata.json's stats must equal (issue 33): every error and
-- data-loss stat of the import in total (name, index, value), and per
-- trace file (path, name, index, value; the input itself has no path) for
-- the stats the reference counts per trace. stat_kind tells run.sh which
-- of metadata.json's names the comparison holds: a name's severity, and
-- whether the reference keeps it per trace (its rows carry a trace_id).
SELECT 'meta_stats' || char(9) || name || char(9) || ifnull(idx, '\N') || char(9) || sum(value) AS row
FROM stats WHERE severity IN ('error', 'data_loss') GROUP BY name, idx HAVING sum(value) > 0;

SELECT 'file_stats' || char(9) || ifnull(f.name, '\N') || char(9) || s.name || char(9) ||
       ifnull(s.idx, '\N') || char(9) || sum(s.value) AS row
FROM stats s JOIN __intrinsic_trace_file f ON f.id = s.trace_id
WHERE s.severity IN ('error', 'data_loss') GROUP BY f.name, s.name, s.idx HAVING sum(s.value) > 0;

SELECT 'stat_kind' || char(9) || name || char(9) || severity || char(9) || max(trace_id IS NOT NULL) AS row
FROM stats GROUP BY name, severity;
