/* core/model/stack.c - stack profiles as the reference keeps them
 * (MappingTracker's dummy mappings, DummyMemoryMapping::InternDummyFrame,
 * StackProfileTracker::InternCallsite), and the samples made on them. */
#include "model/model_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t m_stack_mapping(tm_model *m, const char *name, size_t n, uint32_t file_id)
{
	TM_GROW(m->mappings, m->cap_mappings, m->n_mappings + 1);
	tm_mmapping *mp = &m->mappings[m->n_mappings];
	memset(mp, 0, sizeof *mp);
	mp->name = m_str(&m->str, m_intern(&m->str, name, n));
	mp->file_id = file_id;
	return (uint32_t)m->n_mappings++;
}

uint32_t m_stack_frame(tm_model *m, m_stack_index *ix, uint32_t mapping, const char *name, size_t n)
{
	uint32_t name_id = m_intern(&m->str, name, n);
	int fresh = 1;
	uint64_t *v = ix ? m_map_put(&ix->frames, (uint64_t)mapping << 32 | name_id, &fresh) : NULL;
	if (!fresh)
		return (uint32_t)(*v - 1);
	TM_GROW(m->frames, m->cap_frames, m->n_frames + 1);
	m->frames[m->n_frames] = (tm_mframe){m_str(&m->str, name_id), mapping, 0, NULL};
	if (v)
		*v = m->n_frames + 1;
	return (uint32_t)m->n_frames++;
}

uint32_t m_stack_memory_mapping(tm_model *m, const tm_mmapping *params, const char *name, size_t n, uint32_t file_id)
{
	uint32_t id = m_stack_mapping(m, name, n, file_id);
	tm_mmapping *mp = &m->mappings[id];
	const char *kept = mp->name;
	*mp = *params;
	mp->name = kept;
	mp->file_id = file_id;
	return id;
}

void m_stack_label(const tm_model *m, uint32_t mapping, uint64_t rel_pc, tm_buf *out)
{
	const tm_mmapping *mp = tm_model_mapping(m, mapping);
	const char *base = mp && mp->name ? strrchr(mp->name, '/') : NULL;
	base = base ? base + 1 : mp && mp->name ? mp->name : "";
	out->len = 0;
	tm_buf_puts(out, *base ? base : "[unknown]");
	char hex[24];
	int k = snprintf(hex, sizeof hex, "+0x%" PRIx64, rel_pc);
	tm_buf_put(out, hex, (size_t)k);
}

uint32_t m_stack_frame_at(tm_model *m, uint32_t mapping, uint64_t rel_pc, const char *label, size_t label_n)
{
	TM_GROW(m->frames, m->cap_frames, m->n_frames + 1);
	m->frames[m->n_frames] = (tm_mframe){m_str(&m->str, m_intern(&m->str, "", 0)), mapping, rel_pc,
					     label ? m_str(&m->str, m_intern(&m->str, label, label_n)) : NULL};
	return (uint32_t)m->n_frames++;
}

/* The reference's key is (parent, frame, depth); a parent fixes its
 * children's depth in every importer that makes callsites here (the
 * parent's plus one), and a root's depth is its format's, whose frames
 * are its own: (parent, frame) is the key. */
uint32_t m_stack_callsite(tm_model *m, m_stack_index *ix, uint32_t parent, uint32_t frame, uint32_t depth)
{
	int fresh = 1;
	uint64_t key = (uint64_t)(parent == TM_NO_CALLSITE ? 0 : (uint64_t)parent + 1) << 32 | frame;
	uint64_t *v = ix ? m_map_put(&ix->callsites, key, &fresh) : NULL;
	if (!fresh)
		return (uint32_t)(*v - 1);
	TM_GROW(m->callsites, m->cap_callsites, m->n_callsites + 1);
	m->callsites[m->n_callsites] = (tm_mcallsite){parent, frame, depth};
	if (v)
		*v = m->n_callsites + 1;
	return (uint32_t)m->n_callsites++;
}

int m_file_stacks_frame(tm_model *m, m_file_stacks *fs, uint32_t id, const char *sym, size_t sym_n, const char *map,
			size_t map_n, const char *dflt, uint32_t file_id)
{
	if (id != fs->n_frame)
		return -1;
	uint32_t mapping;
	if (!map) {
		if (!fs->dflt)
			fs->dflt = m_stack_mapping(m, dflt, strlen(dflt), file_id) + 1;
		mapping = fs->dflt - 1;
	} else {
		int fresh;
		uint64_t *v = m_map_put(&fs->by_name, m_intern(&m->str, map, map_n), &fresh);
		if (fresh)
			*v = (uint64_t)m_stack_mapping(m, map, map_n, file_id) + 1;
		mapping = (uint32_t)(*v - 1);
	}
	TM_GROW(fs->frame, fs->cap_frame, fs->n_frame + 1);
	fs->frame[fs->n_frame++] = m_stack_frame(m, NULL, mapping, sym, sym_n);
	return 0;
}

int m_file_stacks_callsite(tm_model *m, m_file_stacks *fs, uint32_t id, uint32_t parent, uint32_t frame,
			   uint32_t depth)
{
	if (id != fs->n_callsite || frame >= fs->n_frame || (parent != UINT32_MAX && parent >= fs->n_callsite))
		return -1;
	uint32_t p = parent == UINT32_MAX ? TM_NO_CALLSITE : fs->callsite[parent];
	TM_GROW(fs->callsite, fs->cap_callsite, fs->n_callsite + 1);
	fs->callsite[fs->n_callsite++] = m_stack_callsite(m, NULL, p, fs->frame[frame], depth);
	return 0;
}

uint32_t m_file_stacks_get(const m_file_stacks *fs, uint32_t id)
{
	return id < fs->n_callsite ? fs->callsite[id] : TM_NO_CALLSITE;
}

void m_file_stacks_free(m_file_stacks *fs)
{
	m_map_free(&fs->by_name);
	free(fs->frame);
	free(fs->callsite);
}

void m_sample(tm_model *m, int64_t ts, int64_t utid, uint32_t callsite, const char *source)
{
	if (!m->sink.sample)
		return;
	tm_msample s = {m->cur_seq, ts, utid, callsite, source, m->cur_file, m->cur_row};
	m->sink.sample(m->sink.ctx, &s);
}

void m_aggregate(tm_model *m, uint32_t callsite, int64_t value)
{
	TM_GROW(m->aggregates, m->cap_aggregates, m->n_aggregates + 1);
	m->aggregates[m->n_aggregates++] = (tm_maggregate){callsite, value, m->cur_file, m->cur_row};
}

void m_heap_class_at(tm_model *m, const char *name, size_t n, uint64_t objects, int64_t bytes, uint32_t file_id,
		     uint32_t row)
{
	TM_GROW(m->heap_classes, m->cap_heap_classes, m->n_heap_classes + 1);
	m->heap_classes[m->n_heap_classes++] =
		(tm_mheap_class){m_intern(&m->str, name, n), objects, bytes, file_id, row};
}

void m_heap_class(tm_model *m, const char *name, size_t n, uint64_t objects, int64_t bytes)
{
	m_heap_class_at(m, name, n, objects, bytes, m->cur_file, m->cur_row);
}

void m_stack_free(tm_model *m)
{
	free(m->aggregates);
	free(m->heap_classes);
	free(m->mappings);
	free(m->frames);
	free(m->callsites);
}

void m_stack_index_free(m_stack_index *ix)
{
	m_map_free(&ix->frames);
	m_map_free(&ix->callsites);
}

size_t tm_model_n_callsites(const tm_model *m)
{
	return m->n_callsites;
}

const tm_mcallsite *tm_model_callsite(const tm_model *m, uint32_t id)
{
	return id < m->n_callsites ? &m->callsites[id] : NULL;
}

const tm_mframe *tm_model_frame(const tm_model *m, uint32_t id)
{
	return id < m->n_frames ? &m->frames[id] : NULL;
}

const tm_mmapping *tm_model_mapping(const tm_model *m, uint32_t id)
{
	return id < m->n_mappings ? &m->mappings[id] : NULL;
}

size_t tm_model_n_aggregates(const tm_model *m)
{
	return m->n_aggregates;
}

const tm_maggregate *tm_model_aggregate(const tm_model *m, size_t i)
{
	return i < m->n_aggregates ? &m->aggregates[i] : NULL;
}

size_t tm_model_n_heap_classes(const tm_model *m)
{
	return m->n_heap_classes;
}

const tm_mheap_class *tm_model_heap_class(const tm_model *m, size_t i)
{
	return i < m->n_heap_classes ? &m->heap_classes[i] : NULL;
}
