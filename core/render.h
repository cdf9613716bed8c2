/* core/render.h - the generated text files of the tree: metadata.json,
 * perfetto_manifest.json and the `tracemount check` summary. Each renders
 * the session's current results into `out`; -1 with err set when the
 * content cannot be produced. */
#ifndef TM_RENDER_H
#define TM_RENDER_H

#include "merge.h"
#include "tm.h"

int tm_render_metadata(tm_merge *m, tm_buf *out, tm_error *err);
int tm_render_manifest(tm_merge *m, tm_buf *out, tm_error *err);
int tm_render_summary(tm_merge *m, tm_buf *out, tm_error *err);

#endif
