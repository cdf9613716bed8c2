/* core/export/render.h - the generated text files of the tree: metadata.json,
 * perfetto_manifest.json, machines/<dir>/machine.json, clocks/graph.dot,
 * clocks/edges.csv and the `tracemount check` summary. Each renders the
 * session's results into `out`; -1 with err set when the content cannot be
 * produced. `s` is the scan's result (NULL when the scan has not run: then
 * only the mount-tier fields are printed). Field lists: tracemount(1). */
#ifndef TM_RENDER_H
#define TM_RENDER_H

#include <stdint.h>

#include "input/merge.h"
#include "scan/scan.h"
#include "util/tm.h"

/* metadata.json. `parsed`: the stats the parse counted per file and
 * machine (core/model/model.h), or NULL when the merge did not get that far. */
int tm_render_metadata(tm_merge *m, const tm_scan *s, const tm_statlist *parsed, tm_buf *out, tm_error *err);

/* A view that may be large (metadata.json of an archive of 100,000
 * members is 44 MB) goes out as it is rendered: fn takes the bytes of
 * `out` each time it holds more than TM_RENDER_SPILL of them, and leaves
 * it empty. */
#define TM_RENDER_SPILL ((size_t)1 << 20)
typedef struct tm_render_spill {
	void (*fn)(void *ctx, tm_buf *out);
	void *ctx;
} tm_render_spill;
/* tm_render_metadata, giving the bytes to `spill` as it goes (NULL: all
 * of them stay in `out`); what is left at the end is in `out`.
 * parse_failed: why `parsed` is NULL although the scan did not fail (the
 * pass that counts them failed), or NULL. */
int tm_render_metadata_spill(tm_merge *m, const tm_scan *s, const tm_statlist *parsed, const char *parse_failed,
			     tm_buf *out, const tm_render_spill *spill, tm_error *err);
/* The archive's own manifest (s unused), or without one the manifest
 * equivalent to what the scan applied (s required). */
int tm_render_manifest(tm_merge *m, const tm_scan *s, tm_buf *out, tm_error *err);
int tm_render_summary(tm_merge *m, const tm_scan *s, tm_buf *out, tm_error *err);
/* How messages name file f: its member name, "<member> (decompressed)"
 * for the stream of a compressed member, the input's path for the input. */
void tm_render_file_label(const tm_merge *m, const tm_file *f, tm_buf *out);
/* One line per trace file whose events no output holds (a format
 * tracemount only recognises: tm_type_unexported), "<input>: <file>:
 * <type> events not exported: ..."; returns how many. Mount tier: needs
 * no scan. */
size_t tm_render_unexported(const tm_merge *m, tm_buf *out);
/* machines/<dir>/machine.json of machine row `row` (< s->machines.n). */
int tm_render_machine(tm_merge *m, const tm_scan *s, uint32_t row, tm_buf *out, tm_error *err);
/* clocks/graph.dot and clocks/edges.csv; machines are labelled by name,
 * else by their machines/ folder name. */
void tm_render_clocks_dot(const tm_merge *m, const tm_scan *s, tm_buf *out);
void tm_render_clocks_csv(const tm_merge *m, const tm_scan *s, tm_buf *out);
/* tm_render_clocks_csv giving its bytes to `spill` as it goes, as
 * tm_render_metadata_spill does (NULL: all of them stay in `out`). */
void tm_render_clocks_csv_spill(const tm_merge *m, const tm_scan *s, tm_buf *out, const tm_render_spill *spill);

#endif
