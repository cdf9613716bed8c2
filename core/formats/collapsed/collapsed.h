/* core/formats/collapsed/collapsed.h - a collapsed-stack line (the input
 * of flamegraph.pl: "main;parse;read 12") as the reference's
 * CollapsedStackTraceReader::ParseLine reads it: trimmed of ' ', '\t' and
 * '\n'; blank and '#' lines skipped; the count after the last space (a
 * positive integer, strtoll's), the frames before it split on ';' with
 * empty ones dropped, the root first. A line it cannot read is skipped,
 * unsaid. */
#ifndef TM_COLLAPSED_H
#define TM_COLLAPSED_H

#include <stddef.h>
#include <stdint.h>

/* 1 with the stack's text (frames and ';', pointing into the line) and
 * its count when the line is a stack, else 0. */
int collapsed_parse_line(const char *p, size_t n, const char **stack, size_t *stack_n, int64_t *count);

/* The next frame of stack[*at..n) (empty ones skipped): 1 and the frame,
 * or 0 at the end. */
int collapsed_next_frame(const char *stack, size_t n, size_t *at, const char **frame, size_t *frame_n);

#endif
