/* tests/fuzz/fuzz_pb_unpack.c - arbitrary bytes as a message the model
 * decodes whole (the first byte picks TrackEvent, FtraceEvent or
 * DebugAnnotation): tm_pb_unpack must read them as protobuf-c's unpack
 * does, or leave them to it (tests/unit/pb_same.h). */
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
	int took;
	if (!pb_same(descs[data[0] % (sizeof descs / sizeof descs[0])], data + 1, size - 1, &took))
		abort();
	return 0;
}
