#!/usr/bin/env bash
# tests/t_interop.sh - the interop comparison (tests/interop/run.sh) as part
# of make check: run when TRACE_PROCESSOR_SHELL names Perfetto's
# trace_processor_shell (the Makefile sets it to the shared folder's
# reference when there is one: tests/tools/reference.sh), on the rel build only (the reference's imports
# dominate its time; the sanitizer build adds nothing there); otherwise
# say that it was skipped.
. "$(dirname "$0")/lib.sh"
if [ -z "${TRACE_PROCESSOR_SHELL:-}" ]; then
	skip "interop" "no reference: TRACE_PROCESSOR_SHELL is not set and ../shared/reference has none that starts here (make check TRACE_PROCESSOR_SHELL=/path runs it)"
	exit 0
fi
case "$BUILD" in
*san*) skip "interop" "runs on the rel build only"; exit 0 ;;
esac
bash "$(dirname "$0")/interop/run.sh" "$BUILD"
exit $?
