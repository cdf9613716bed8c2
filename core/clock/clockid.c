/* core/clock/clockid.c - clock names. */
#include "clock/clockid.h"

#include <stdio.h>
#include <string.h>

static const char *const builtin_names[] = {
	[TM_CLOCK_UNKNOWN] = "UNKNOWN",
	[TM_CLOCK_REALTIME] = "REALTIME",
	[TM_CLOCK_REALTIME_COARSE] = "REALTIME_COARSE",
	[TM_CLOCK_MONOTONIC] = "MONOTONIC",
	[TM_CLOCK_MONOTONIC_COARSE] = "MONOTONIC_COARSE",
	[TM_CLOCK_MONOTONIC_RAW] = "MONOTONIC_RAW",
	[TM_CLOCK_BOOTTIME] = "BOOTTIME",
	[TM_CLOCK_TSC] = "TSC",
	[TM_CLOCK_PERF] = "PERF",
	[TM_CLOCK_TRACE_FILE] = "TRACE_FILE",
};

uint32_t tm_clock_id_from_manifest_name(const char *name)
{
	/* manifest.md §5.8: exactly these six, case-sensitive. */
	for (uint32_t id = TM_CLOCK_REALTIME; id <= TM_CLOCK_BOOTTIME; id++)
		if (strcmp(name, builtin_names[id]) == 0)
			return id;
	return 0;
}

const char *tm_clock_name(uint32_t clock_id, char *buf)
{
	if (clock_id < sizeof(builtin_names) / sizeof(builtin_names[0]) && builtin_names[clock_id])
		return builtin_names[clock_id];
	if (clock_id >= TM_CLOCK_SEQ_FIRST && clock_id <= TM_CLOCK_SEQ_LAST)
		snprintf(buf, 32, "SEQ_CLOCK_%u", clock_id);
	else
		snprintf(buf, 32, "CLOCK_%u", clock_id);
	return buf;
}
