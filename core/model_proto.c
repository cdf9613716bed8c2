/* core/model_proto.c - Perfetto proto records into the tables (see
 * model.h TM_PR_*): track descriptor reservations, descriptors, process
 * trees, track events and ftrace, by the reference's rules (v58.2:
 * TrackEventTracker, TrackEventParser, TrackEventEventImporter,
 * SystemProbesParser, FtraceParser). Not yet: every record is ignored. */
#include "model_internal.h"

void m_proto_side(tm_model *m, const tm_mrec_head *h, const char *payload, size_t len)
{
	(void)m;
	(void)h;
	(void)payload;
	(void)len;
}

void m_proto_apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *payload, size_t len)
{
	(void)m;
	(void)h;
	(void)ts;
	(void)payload;
	(void)len;
}
