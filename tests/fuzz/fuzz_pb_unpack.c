/* tests/fuzz/fuzz_pb_unpack.c - arbitrary bytes as a message the model
 * decodes whole (the first byte picks TrackEvent, FtraceEvent or
 * DebugAnnotation): tm_pb_unpack must read them as protobuf-c's unpack
 * does, or leave them to it (tests/unit/pb_same.h); tm_pb_too_deep runs
 * on them too. */
#include <stdint.h>
#include <stdlib.h>

#include "../unit/pb_same.h"
#include "trace.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const ProtobufCMessageDescriptor *const descs[] = {
		&perfetto__protos__track_event__descriptor,
		&perfetto__protos__ftrace_event__descriptor,
		&perfetto__protos__debug_annotation__descriptor,
	};
	if (size < 1)
		return 0;
	const ProtobufCMessageDescriptor *d = descs[data[0] % (sizeof descs / sizeof descs[0])];
	int took;
	if (!pb_same(d, data + 1, size - 1, &took))
		abort();
	/* what tm_pb_unpack took nests no deeper than its limit */
	if (took && tm_pb_too_deep(d, size - 1, data + 1))
		abort();
	return 0;
}
