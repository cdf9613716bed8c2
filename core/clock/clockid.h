/* core/clock/clockid.h - clock identities shared by the manifest, the clock graph
 * and the readers (spec/clocks.md §2). */
#ifndef TM_CLOCKID_H
#define TM_CLOCKID_H

#include <stdint.h>

enum {
	TM_CLOCK_UNKNOWN = 0,
	TM_CLOCK_REALTIME = 1,
	TM_CLOCK_REALTIME_COARSE = 2,
	TM_CLOCK_MONOTONIC = 3,
	TM_CLOCK_MONOTONIC_COARSE = 4,
	TM_CLOCK_MONOTONIC_RAW = 5,
	TM_CLOCK_BOOTTIME = 6,
	TM_CLOCK_TSC = 9,
	TM_CLOCK_PERF = 10,
	TM_CLOCK_TRACE_FILE = 11,
	TM_CLOCK_MAX_BUILTIN = 63,
	TM_CLOCK_SEQ_FIRST = 64,  /* sequence-scoped custom clocks 64..127 */
	TM_CLOCK_SEQ_LAST = 127,
	TM_CLOCK_GLOBAL_FIRST = 128,
};

/* A node of the clock graph: (clock_id, seq_id, file_id, machine_row),
 * ordered lexicographically in that order (clocks.md §2.2). */
typedef struct tm_clock_node {
	uint32_t clock_id;
	uint32_t seq_id;
	uint32_t file_id;
	uint32_t machine_row;
} tm_clock_node;

/* The six names a manifest may use (manifest.md §5.8) -> id, or 0. */
uint32_t tm_clock_id_from_manifest_name(const char *name);
/* A readable name for any id: "BOOTTIME", "TRACE_FILE", "SEQ_CLOCK_64",
 * "CLOCK_128"... (static storage for builtins; the caller's buffer of at
 * least 32 bytes otherwise). */
const char *tm_clock_name(uint32_t clock_id, char *buf);

#endif
