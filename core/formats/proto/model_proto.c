/* core/formats/proto/model_proto.c - Perfetto proto records into the tables (see
 * model.h TM_PR_*), by the reference's rules (v58.2):
 *
 *   TM_PR_RESERVE       TrackEventTokenizer::TokenizeTrackDescriptorPacket
 *                       and TrackEventTracker::ReserveDescriptorTrack
 *   TM_PR_PACKET        TrackEventParser::ParseTrackDescriptor /
 *                       ParseProcessDescriptor / ParseThreadDescriptor,
 *                       SystemProbesParser::ParseProcessTree
 *   TM_PR_TRACK_EVENT   TrackEventEventImporter (with the tokenizer's
 *                       counter checks), TrackEventTracker's
 *                       ResolveDescriptorTrack / InternDescriptorTrack*
 *   TM_PR_FTRACE        FtraceParser: sched_switch, sched_waking,
 *                       sched_process_free, cpu_frequency, cpu_idle,
 *                       print and zero (SystraceParser), task_newtask,
 *                       task_rename
 *   TM_PR_COMPACT_*     FtraceSchedEventTracker's compact switch / waking
 *
 * The TrackEventTracker's state is per (file, machine), as the reference
 * keeps one per ProtoTraceReader: m_ctx.proto. It holds what the reference
 * must hold: the descriptor reservations, their resolution and interned
 * tracks, the uuids that claimed a thread or process, incremental counter
 * values and the legacy async root names. Messages are decoded whole with
 * protobuf-c.
 */
#include "model/model_internal.h"
#include "formats/proto/proto_format.h"
#include "formats/systrace/systrace_format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/proto/heap_graph.h"
#include "formats/proto/pb_unpack.h"
#include "formats/proto/samples.h"
#include "util/per_thread.h"
#include "sort/spool.h"
#include "formats/systrace/systrace.h"
#include "trace.pb-c.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackDescriptor TrackDescriptor;
typedef Perfetto__Protos__ThreadDescriptor ThreadDescriptor;
typedef Perfetto__Protos__ProcessDescriptor ProcessDescriptor;
typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__TrackEvent__LegacyEvent LegacyEvent;
typedef Perfetto__Protos__DebugAnnotation DebugAnnotation;
typedef Perfetto__Protos__DebugAnnotation__NestedValue NestedValue;
typedef Perfetto__Protos__FtraceEvent FtraceEvent;

/* ---- Chrome process and thread type names (chrome_string_lookup.cc) ------- */

/* chrome_enums.ProcessType: the friendly names, else the enum value's name;
 * NULL for PROCESS_UNSPECIFIED and outside [ProcessType_MIN, _MAX]. */
static const char *const chrome_process_names[] = {
	NULL,
	"Browser",
	"Renderer",
	"Utility",
	"SandboxHelper",
	"PROCESS_SANDBOX_HELPER",
	"Gpu",
	"PpapiPlugin",
	"PpapiBroker",
	"Service: network.mojom.NetworkService",
	"Service: tracing.mojom.TracingService",
	"Service: storage.mojom.StorageService",
	"Service: audio.mojom.AudioService",
	"Service: data_decoder.mojom.DataDecoderService",
	"Service: chrome.mojom.UtilWin",
	"Service: proxy_resolver.mojom.ProxyResolverFactory",
	"Service: media.mojom.CdmServiceBroker",
	"Service: video_capture.mojom.VideoCaptureService",
	"Service: unzip.mojom.Unzipper",
	"Service: mirroring.mojom.MirroringService",
	"Service: patch.mojom.FilePatcher",
	"Service: chromeos.tts.mojom.TtsService",
	"Service: printing.mojom.PrintingService",
	"Service: quarantine.mojom.Quarantine",
	"Service: chromeos.local_search_service.mojom.LocalSearchService",
	"Service: chromeos.assistant.mojom.AssistantAudioDecoderFactory",
	"Service: chrome.mojom.FileUtilService",
	"Service: printing.mojom.PrintCompositor",
	"Service: paint_preview.mojom.PaintPreviewCompositorCollection",
	"Service: media.mojom.SpeechRecognitionService",
	"Service: device.mojom.XRDeviceService",
	"Service: chrome.mojom.UtilReadIcon",
	"Service: language_detection.mojom.LanguageDetectionService",
	"Service: sharing.mojom.Sharing",
	"Service: chrome.mojom.MediaParserFactory",
	"Service: qrcode_generator.mojom.QRCodeService",
	"Service: chrome.mojom.ProfileImport",
	"Service: chromeos.ime.mojom.ImeService",
	"Service: recording.mojom.RecordingService",
	"Service: shape_detection.mojom.ShapeDetectionService",
	"Extension Renderer",
	"Service: media.mojom.MediaFoundationServiceBroker",
	"PROCESS_RENDERER_TOP_WEBUI",
};

/* chrome_enums.ThreadType: as above; values inside the range that the enum
 * does not name get protozero's generated name for an unknown value. */
static const char *const chrome_thread_names[] = {
	NULL,
	"CrProcessMain",
	"ChromeIOThread",
	"ThreadPoolBackgroundWorker&",
	"ThreadPoolForegroundWorker&",
	"ThreadPoolSingleThreadForegroundBlocking&",
	"ThreadPoolSingleThreadBackgroundBlocking&",
	"ThreadPoolService",
	"Compositor",
	"VizCompositorThread",
	"CompositorTileWorker&",
	"ServiceWorkerThread&",
	"NetworkService",
	"Chrome_ChildIOThread",
	"Chrome_IOThread",
	"CrBrowserMain",
	"CrRendererMain",
	"CrUtilityMain",
	"CrGpuMain",
	"CacheThread_BlockFile",
	"Media",
	"AudioOutputDevice",
	"AudioInputDevice",
	"GpuMemoryThread",
	"GpuVSyncThread",
	"DXVAVideoDecoderThread",
	"BrowserWatchdog",
	"WebRTC_Network",
	"Window owner thread",
	"WebRTC_Signaling",
	"WebRTC_Worker",
	"CrPPAPIMain",
	"GpuWatchdog",
	"swapper",
	"Gamepad polling thread",
	"WebCrypto",
	"Database thread",
	"Proxy Resolver",
	"Chrome_DevToolsADBThread",
	"NetworkConfigWatcher",
	"wasapi_render_thread",
	"LoaderLockSampler",
	"VSyncThread",
	"PBZERO_UNKNOWN_ENUM_VALUE", /* 43 .. 49 */
	"PBZERO_UNKNOWN_ENUM_VALUE",
	"PBZERO_UNKNOWN_ENUM_VALUE",
	"PBZERO_UNKNOWN_ENUM_VALUE",
	"PBZERO_UNKNOWN_ENUM_VALUE",
	"PBZERO_UNKNOWN_ENUM_VALUE",
	"PBZERO_UNKNOWN_ENUM_VALUE",
	"MemoryInfra",
	"StackSamplingProfiler",
	"CompositorGpuThread",
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t chrome_process_name(tm_model *m, int64_t type)
{
	if (type < 0 || (uint64_t)type >= N_OF(chrome_process_names) || !chrome_process_names[type])
		return 0;
	return m_intern(&m->str, chrome_process_names[type], strlen(chrome_process_names[type]));
}

static uint32_t chrome_thread_name(tm_model *m, int64_t type)
{
	if (type < 0 || (uint64_t)type >= N_OF(chrome_thread_names) || !chrome_thread_names[type])
		return 0;
	return m_intern(&m->str, chrome_thread_names[type], strlen(chrome_thread_names[type]));
}

/* ---- descriptor tracks (TrackEventTracker) ----------------------------------- */

enum { MERGE_BY_NAME = 0, MERGE_NONE = 1, MERGE_BY_KEY = 2 };
enum { SC_THREAD, SC_PROCESS, SC_GLOBAL };
enum { IN_NONE, IN_TRACK, IN_FACTORY };

typedef struct p_track {
	/* DescriptorTrackReservation */
	uint64_t uuid, parent;
	uint8_t has_pid, has_tid, separate, counter, state, synthetic, merge, has_cd;
	int64_t pid, tid;
	uint32_t name, merge_key;
	uint32_t cd_cat, cd_builtin, cd_yshare; /* CounterDetails */
	uint32_t sum_seq;        /* `sum`'s sequence (in what was padding) */
	int64_t cd_mult;
	uint8_t cd_incr;
	/* ResolveDescriptorTrack, once */
	uint8_t resolved, scope, is_root;
	uint32_t sum_gen;        /* `sum`'s sequence's generation */
	int64_t utid, upid;
	/* InternDescriptorTrack*, once: a track, or a TrackCompressor factory */
	uint8_t interned;
	uint8_t sum_claimed;     /* a sequence has claimed `sum` */
	uint32_t track;
	uint64_t set;
	uint32_t fname;
	tm_mtrack_scope fscope;
	int64_t futid, fupid;
	/* An incremental counter's running sum (TrackEventSequenceState) for
	 * the first sequence that counts on it, here where the lookup of the
	 * track already brought it (with sum_seq, sum_gen and sum_claimed
	 * above, in the struct's holes: 8 bytes more a track, where 32 made
	 * the proto bench's daemon 0.6 MB larger); the sums of other
	 * sequences are in the context's maps. */
	double sum;
} p_track;

typedef struct m_pctx {
	m_map by_uuid;           /* uuid -> index + 1 into t */
	p_track *t;
	size_t n, cap;
	/* the last two uuids found and their index + 1 (0: none): an event
	 * looks up its track and its counters' tracks, the same ones as the
	 * sequence's event before it, and the map's slots were a cache miss
	 * each when the contexts of many machines take turns */
	uint64_t seen_uuid[2];
	uint32_t seen_ix[2];
	uint8_t seen_next;
	m_map uuid_by_utid;      /* descriptor_uuids_by_utid_ */
	m_map uuid_by_upid;      /* descriptor_uuids_by_upid_ */
	m_map incremental;       /* hash(sequence, uuid) -> running value (double bits) */
	m_map incremental_gen;   /* hash(sequence, uuid) -> its sequence's generation + 1 */
	m_map async_root;        /* async_tracks_to_root_string_id_ */
	tm_buf args;             /* the event's debug annotations, rendered */
	/* the metadata the ftrace parser's drops read (MaybeOnFirstFtraceEvent) */
	int has_started, preserve, has_data_start;
	int64_t started_ns;      /* tracing_started_ns */
	int64_t data_start_ns;   /* ftrace_latest_data_start_ns */
	m_psamples *samples;     /* the stacks of its samples (model_sample.c) */
} m_pctx;

#define SALT_THREAD_MERGED 0x746d657267656431ull
#define SALT_PROCESS_MERGED 0x706d657267656432ull
#define SALT_GLOBAL_MERGED 0x676d657267656433ull
#define SALT_ASYNC_PROCESS 0x6170726f63657373ull
#define SALT_ASYNC_GLOBAL 0x61676c6f62616c31ull
#define SALT_ASYNC_ROOT_P 0x726f6f7470726f63ull
#define SALT_ASYNC_ROOT_G 0x726f6f74676c6f62ull

static m_pctx *pctx(m_ctx *c)
{
	if (!c->parsed) {
		c->parsed = tm_xcalloc(1, sizeof(m_pctx));
		c->parsed_kind = TM_MREC_PROTO;
	}
	c->kernel_states = 1;
	return c->parsed;
}

static void m_proto_ctx_free(m_pctx *p)
{
	if (!p)
		return;
	m_map_free(&p->by_uuid);
	free(p->t);
	m_map_free(&p->uuid_by_utid);
	m_map_free(&p->uuid_by_upid);
	m_map_free(&p->incremental);
	m_map_free(&p->incremental_gen);
	m_map_free(&p->async_root);
	tm_buf_free(&p->args);
	m_proto_samples_free(p->samples);
	free(p);
}

static p_track *find(m_pctx *p, uint64_t uuid)
{
	/* a uuid's index never changes: by_uuid only gains entries */
	for (int i = 0; i < 2; i++)
		if (p->seen_ix[i] && p->seen_uuid[i] == uuid)
			return &p->t[p->seen_ix[i] - 1];
	uint64_t *v = m_map_get(&p->by_uuid, uuid);
	if (!v)
		return NULL;
	p->seen_uuid[p->seen_next] = uuid;
	p->seen_ix[p->seen_next] = (uint32_t)*v;
	p->seen_next ^= 1;
	return &p->t[*v - 1];
}

static uint32_t str_id(tm_model *m, const char *s)
{
	return s ? m_intern(&m->str, s, strlen(s)) : 0;
}

static void new_reservation(p_track *r, uint64_t uuid)
{
	memset(r, 0, sizeof(*r));
	r->uuid = uuid;
	r->cd_mult = 1;
	r->utid = r->upid = -1;
	r->track = UINT32_MAX;
}

/* DescriptorTrackReservation::IsForSameTrack */
static int same_track(const p_track *a, const p_track *b)
{
	if (a->has_cd != b->has_cd)
		return 0;
	if (a->has_cd && (a->cd_cat != b->cd_cat || a->cd_mult != b->cd_mult || a->cd_incr != b->cd_incr ||
			  a->cd_builtin != b->cd_builtin || a->cd_yshare != b->cd_yshare))
		return 0;
	return a->parent == b->parent && a->has_pid == b->has_pid && (!a->has_pid || a->pid == b->pid) &&
	       a->has_tid == b->has_tid && (!a->has_tid || a->tid == b->tid) && a->counter == b->counter &&
	       a->state == b->state && a->merge == b->merge && a->merge_key == b->merge_key;
}

/* ReserveDescriptorTrack: the first reservation of a uuid wins; a later one
 * for the same track may name it (always, when it does not merge). */
static void reserve(tm_model *m, m_pctx *p, const p_track *r)
{
	if (r->uuid == 0 && r->parent) {
		m_stat(m, "track_descriptor_default_track_with_parent", 1);
		return;
	}
	int ins;
	uint64_t *v = m_map_put(&p->by_uuid, r->uuid, &ins);
	if (ins) {
		TM_GROW(p->t, p->cap, p->n + 1);
		p->t[p->n] = *r;
		*v = ++p->n;
		return;
	}
	p_track *e = &p->t[*v - 1];
	if (!same_track(e, r)) {
		m_stat(m, "track_descriptor_conflicting_reservation", 1);
		return;
	}
	if (r->name) {
		int none = r->merge == MERGE_NONE;
		if (!e->name || none)
			e->name = r->name;
		if (none && e->interned == IN_TRACK) {
			m->tracks[e->track].name_id = r->name;
			m->tracks[e->track].pub.name = m_str(&m->str, r->name);
		}
	}
}

/* TokenizeTrackDescriptorPacket: 0 when the reference handles the packet
 * there (no reservation, and the parser never sees it). */
static int reserve_descriptor(tm_model *m, m_pctx *p, const TrackDescriptor *d, int do_reserve)
{
	if (!d->has_uuid) {
		if (do_reserve)
			m_stat(m, "track_descriptor_missing_uuid", 1);
		return 0;
	}
	p_track r;
	new_reservation(&r, d->uuid);
	if (d->has_parent_uuid)
		r.parent = d->parent_uuid;
	if (d->has_child_ordering && (d->child_ordering < 0 || d->child_ordering > 3)) {
		if (do_reserve)
			m_stat(m, "track_descriptor_invalid_child_ordering", 1);
		return 0;
	}
	if (d->has_sibling_merge_behavior) {
		switch (d->sibling_merge_behavior) {
		case PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_UNSPECIFIED:
		case PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_BY_TRACK_NAME:
			r.merge = MERGE_BY_NAME;
			break;
		case PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_NONE:
			r.merge = MERGE_NONE;
			break;
		case PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_BY_SIBLING_MERGE_KEY:
			r.merge = MERGE_BY_KEY;
			if (d->sibling_merge_key_field_case ==
			    PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_KEY_FIELD_SIBLING_MERGE_KEY) {
				r.merge_key = str_id(m, d->sibling_merge_key);
			} else if (d->sibling_merge_key_field_case ==
				   PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_KEY_FIELD_SIBLING_MERGE_KEY_INT) {
				char k[64];
				snprintf(k, sizeof k, "sibling_merge_key_int:%" PRIu64, d->sibling_merge_key_int);
				r.merge_key = str_id(m, k);
			}
			break;
		default:
			break;
		}
	}
	switch (d->static_or_dynamic_name_case) {
	case PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME: r.name = str_id(m, d->name); break;
	case PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_STATIC_NAME:
		r.name = str_id(m, d->static_name);
		break;
	case PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_ATRACE_NAME:
		r.name = str_id(m, d->atrace_name);
		break;
	default: break;
	}
	if (d->thread) {
		if (!d->thread->has_pid || !d->thread->has_tid) {
			if (do_reserve)
				m_stat(m, "track_descriptor_thread_missing_pid_tid", 1);
			return 0;
		}
		r.has_pid = r.has_tid = 1;
		r.pid = d->thread->pid;
		r.tid = d->thread->tid;
		r.separate = d->has_disallow_merging_with_system_tracks && d->disallow_merging_with_system_tracks;
		if (d->chrome_thread && d->chrome_thread->has_is_sandboxed_tid)
			r.synthetic = d->chrome_thread->is_sandboxed_tid;
	} else if (d->process) {
		if (!d->process->has_pid) {
			if (do_reserve)
				m_stat(m, "track_descriptor_process_missing_pid", 1);
			return 0;
		}
		r.has_pid = 1;
		r.pid = (uint32_t)d->process->pid;
	} else if (d->counter) {
		const Perfetto__Protos__CounterDescriptor *cd = d->counter;
		if (cd->n_categories) {
			tm_buf cats = {0};
			for (size_t i = 0; i < cd->n_categories; i++) {
				if (cats.len)
					tm_buf_put(&cats, ",", 1);
				tm_buf_puts(&cats, cd->categories[i] ? cd->categories[i] : "");
			}
			if (cats.len)
				r.cd_cat = m_intern(&m->str, cats.data, cats.len);
			tm_buf_free(&cats);
		}
		int type = cd->has_type ? cd->type : 0;
		if (!r.name && type == 1)
			r.name = str_id(m, "thread_time");
		else if (!r.name && type == 2)
			r.name = str_id(m, "thread_instruction_count");
		r.counter = 1;
		r.has_cd = 1;
		r.cd_incr = cd->has_is_incremental && cd->is_incremental;
		r.cd_mult = cd->has_unit_multiplier ? cd->unit_multiplier : 0;
		r.cd_yshare = str_id(m, cd->y_axis_share_key);
		if (type == 1)
			r.cd_builtin = str_id(m, "thread_time");
		else if (type == 2)
			r.cd_builtin = str_id(m, "thread_instruction_count");
	} else if (d->state) {
		r.state = 1;
	}
	if (do_reserve)
		reserve(m, p, &r);
	return 1;
}

/* IsTrackHierarchyValid */
static int hierarchy_valid(tm_model *m, m_pctx *p, uint64_t uuid)
{
	uint64_t seen[100];
	uint64_t cur = uuid;
	for (size_t i = 0; i < 100; i++) {
		if (cur == 0)
			return 1;
		for (size_t j = 0; j < i; j++)
			if (seen[j] == cur) {
				m_stat(m, "track_event_track_hierarchy_loop", 1);
				return 0;
			}
		const p_track *t = find(p, cur);
		if (!t) {
			m_stat(m, "track_hierarchy_missing_uuid", 1);
			return 0;
		}
		seen[i] = cur;
		cur = t->parent;
	}
	m_stat(m, "track_event_track_hierarchy_too_deep", 1);
	return 0;
}

/* ResolveDescriptorTrack: the thread, process or nothing a uuid stands
 * for. A thread or process descriptor claims its thread / process; a
 * second uuid claiming one means its tid / pid was reused. Children take
 * their parent's scope. NULL when the hierarchy is broken. */
static p_track *resolve(tm_model *m, m_ctx *c, m_pctx *p, uint64_t uuid)
{
	p_track *t = find(p, uuid);
	if (t && t->resolved)
		return t;
	if (!t) {
		p_track r;
		new_reservation(&r, uuid);
		r.name = uuid == 0 ? str_id(m, "Default Track") : 0;
		reserve(m, p, &r);
	}
	if (!hierarchy_valid(m, p, uuid))
		return NULL;
	size_t ix = (size_t)(find(p, uuid) - p->t);
	t = &p->t[ix];
	if (t->synthetic && t->has_tid && t->has_pid)
		t->tid = (int64_t)((uint64_t)t->pid << 32 | (uint64_t)t->tid);
	const p_track *parent = NULL;
	if (t->parent) {
		parent = resolve(m, c, p, t->parent);
		t = &p->t[ix];
	}
	m_mach *mc = m_machine(m, c->row);
	if (t->has_tid) {
		int64_t utid = m_update_thread(m, mc, t->tid, t->pid);
		int ins;
		uint64_t *v = m_map_put(&p->uuid_by_utid, (uint64_t)utid, &ins);
		*v = uuid;
		if (!ins) {
			/* one descriptor track per thread: its tid was reused */
			utid = m_start_new_thread(m, mc, -1, t->tid);
			m_update_thread(m, mc, t->tid, t->pid);
			*m_map_put(&p->uuid_by_utid, (uint64_t)utid, NULL) = uuid;
		}
		t->scope = SC_THREAD;
		t->utid = utid;
		t->is_root = 1;
	} else if (t->has_pid) {
		int64_t upid = m_get_or_create_process(m, mc, t->pid);
		int ins;
		uint64_t *v = m_map_put(&p->uuid_by_upid, (uint64_t)upid, &ins);
		*v = uuid;
		if (!ins) {
			upid = m_start_new_process(m, mc, -1, -1, t->pid, 0, TP_TRACK_DESCRIPTOR);
			*m_map_put(&p->uuid_by_upid, (uint64_t)upid, NULL) = uuid;
		}
		t->scope = SC_PROCESS;
		t->upid = upid;
		t->is_root = 1;
	} else if (parent && parent->scope == SC_THREAD) {
		t->scope = SC_THREAD;
		t->utid = parent->utid;
	} else if (parent && parent->scope == SC_PROCESS) {
		t->scope = SC_PROCESS;
		t->upid = parent->upid;
	} else {
		t->scope = SC_GLOBAL;
	}
	t->resolved = 1;
	return t;
}

static uint32_t proto_track(tm_model *m, m_ctx *c, const p_track *t, tm_mtrack_scope scope, int64_t utid,
			    int64_t upid, uint32_t name)
{
	uint32_t id = m_new_track(m, c, TM_MT_PROTO, scope, utid, upid, name);
	m->tracks[id].pub.proto_uuid = t->uuid;
	return id;
}

static void set_factory(p_track *t, uint64_t salt, int64_t dim, uint32_t name, tm_mtrack_scope scope, int64_t utid,
			int64_t upid)
{
	/* GetMergeKey: (by key, the key) or (by name, the name) */
	uint64_t type = t->merge == MERGE_BY_KEY ? 2 : 0;
	uint64_t key = t->merge == MERGE_BY_KEY ? t->merge_key : name;
	t->interned = IN_FACTORY;
	t->set = m_hash2(m_hash2(salt, (uint64_t)dim), m_hash2(t->parent, m_hash2(type, key)));
	t->fname = name;
	t->fscope = scope;
	t->futid = utid;
	t->fupid = upid;
}

static p_track *intern(tm_model *m, m_ctx *c, m_pctx *p, uint64_t uuid, uint32_t event_name);

/* InternDescriptorTrackForParent */
static uint32_t intern_for_parent(tm_model *m, m_ctx *c, m_pctx *p, uint64_t uuid)
{
	p_track *t = intern(m, c, p, uuid, 0);
	if (!t)
		return UINT32_MAX;
	if (t->interned == IN_TRACK)
		return t->track;
	return m_compress_cookie(m, c, t->set, M_COMPRESS_DEFAULT, 0, TM_MT_PROTO, t->fscope, t->futid, t->fupid,
				 t->fname);
}

/* InternDescriptorTrackImpl */
static int intern_impl(tm_model *m, m_ctx *c, m_pctx *p, uint64_t uuid, uint32_t event_name)
{
	p_track *t = resolve(m, c, p, uuid);
	if (!t)
		return 0;
	size_t ix = (size_t)(t - p->t);
	uint32_t parent_track = UINT32_MAX;
	const p_track *parent = NULL;
	if (t->parent) {
		parent_track = intern_for_parent(m, c, p, t->parent);
		parent = resolve(m, c, p, t->parent);
		t = &p->t[ix];
	}
	if (t->is_root) {
		t->interned = IN_TRACK;
		if (t->scope == SC_THREAD) {
			if (t->counter || t->separate)
				t->track = proto_track(m, c, t, TM_SCOPE_THREAD, t->utid, -1, t->name);
			else
				t->track = m_thread_track(m, c, t->utid);
		} else {
			t->track = proto_track(m, c, t, TM_SCOPE_PROCESS, -1, t->upid, t->name);
		}
		return 1;
	}
	uint32_t name = t->name ? t->name : event_name;
	if (parent_track != UINT32_MAX && parent && parent->scope != SC_GLOBAL) {
		int th = parent->scope == SC_THREAD;
		tm_mtrack_scope sc = th ? TM_SCOPE_THREAD : TM_SCOPE_PROCESS;
		int64_t utid = th ? parent->utid : -1, upid = th ? -1 : parent->upid;
		if (t->counter) {
			t->interned = IN_TRACK;
			t->track = proto_track(m, c, t, sc, utid, upid, t->name);
		} else if (t->merge == MERGE_NONE || t->state) {
			t->interned = IN_TRACK;
			t->track = proto_track(m, c, t, sc, utid, upid, name);
		} else {
			set_factory(t, th ? SALT_THREAD_MERGED : SALT_PROCESS_MERGED, th ? utid : upid, name, sc, utid,
				    upid);
		}
		return 1;
	}
	if (t->counter) {
		t->interned = IN_TRACK;
		t->track = proto_track(m, c, t, TM_SCOPE_GLOBAL, -1, -1, t->name);
	} else if (t->merge == MERGE_NONE || t->state) {
		t->interned = IN_TRACK;
		t->track = proto_track(m, c, t, TM_SCOPE_GLOBAL, -1, -1, name);
	} else {
		set_factory(t, SALT_GLOBAL_MERGED, 0, name, TM_SCOPE_GLOBAL, -1, -1);
	}
	return 1;
}

/* EnsureDescriptorTrackInterned */
static p_track *intern(tm_model *m, m_ctx *c, m_pctx *p, uint64_t uuid, uint32_t event_name)
{
	p_track *t = find(p, uuid);
	if (t && t->interned)
		return t;
	if (!intern_impl(m, c, p, uuid, event_name))
		return NULL;
	return find(p, uuid);
}

enum { OP_BEGIN, OP_END, OP_INSTANT, OP_LEGACY, OP_COUNTER };

/* InternDescriptorTrack{Begin,End,Instant,Legacy,Counter}: UINT32_MAX when
 * there is none. */
static uint32_t descriptor_track(tm_model *m, m_ctx *c, m_pctx *p, uint64_t uuid, uint32_t name, int op)
{
	p_track *t = intern(m, c, p, uuid, name);
	if (!t)
		return UINT32_MAX;
	if (t->interned == IN_TRACK)
		return t->track;
	if (op == OP_LEGACY || op == OP_COUNTER)
		return UINT32_MAX;
	uint64_t set = t->set;
	tm_mtrack_scope sc = t->fscope;
	int64_t utid = t->futid, upid = t->fupid;
	uint32_t fname = t->fname;
	if (op == OP_END)
		return m_compress_cookie(m, c, set, M_COMPRESS_END, (int64_t)uuid, TM_MT_PROTO, sc, utid, upid, fname);
	uint32_t id = m_compress_cookie(m, c, set, M_COMPRESS_BEGIN, (int64_t)uuid, TM_MT_PROTO, sc, utid, upid, fname);
	if (op == OP_INSTANT)
		id = m_compress_cookie(m, c, set, M_COMPRESS_END, (int64_t)uuid, TM_MT_PROTO, sc, utid, upid, fname);
	return id;
}

/* ---- threads and processes from descriptors (TrackEventParser) --------------- */

static int64_t parse_thread_descriptor(tm_model *m, m_mach *mc, const ThreadDescriptor *td, int sandboxed)
{
	int64_t pid = td->has_pid ? td->pid : 0, tid = td->has_tid ? td->tid : 0;
	if (sandboxed)
		tid = (int64_t)((uint64_t)pid << 32 | (uint64_t)tid);
	int64_t utid = m_update_thread(m, mc, tid, pid);
	uint32_t name = 0;
	if (td->thread_name && td->thread_name[0])
		name = str_id(m, td->thread_name);
	else if (td->has_chrome_thread_type)
		name = chrome_thread_name(m, td->chrome_thread_type);
	m_update_thread_name(m, utid, name, TP_TRACK_DESCRIPTOR);
	return utid;
}

static int64_t parse_process_descriptor(tm_model *m, m_mach *mc, const ProcessDescriptor *pd)
{
	int64_t upid = m_get_or_create_process(m, mc, (uint32_t)(pd->has_pid ? pd->pid : 0));
	if (pd->process_name && pd->process_name[0])
		m_update_process_name(m, upid, str_id(m, pd->process_name), PP_TRACK_DESCRIPTOR);
	if (pd->has_start_timestamp_ns && pd->start_timestamp_ns > 0)
		m_set_start_ts_if_unset(m, upid, pd->start_timestamp_ns);
	if (pd->has_chrome_process_type) {
		int t = pd->chrome_process_type;
		m_update_process_name(m, upid, chrome_process_name(m, t), t == 2 ? PP_CHROME_LABEL_RENDERER : PP_CHROME_LABEL);
	}
	return upid;
}

/* ParseTrackDescriptor, at the packet's time */
static void parse_track_descriptor(tm_model *m, m_ctx *c, m_pctx *p, const TrackDescriptor *d)
{
	if (!reserve_descriptor(m, p, d, 0))
		return; /* handled by the tokenizer: never parsed */
	if (!resolve(m, c, p, d->uuid)) {
		m_stat(m, "track_event_parser_errors", 1);
		return;
	}
	m_mach *mc = m_machine(m, c->row);
	if (d->thread) {
		if (d->chrome_thread) {
			int sandboxed = d->chrome_thread->has_is_sandboxed_tid && d->chrome_thread->is_sandboxed_tid;
			int64_t utid = parse_thread_descriptor(m, mc, d->thread, sandboxed);
			if (d->chrome_thread->has_thread_type)
				m_update_thread_name(m, utid, chrome_thread_name(m, d->chrome_thread->thread_type),
						     TP_TRACK_DESCRIPTOR_THREAD_TYPE);
		} else {
			parse_thread_descriptor(m, mc, d->thread, 0);
		}
	} else if (d->process) {
		int64_t upid = parse_process_descriptor(m, mc, d->process);
		if (d->chrome_process) {
			int t = d->chrome_process->has_process_type ? d->chrome_process->process_type : 0;
			m_update_process_name(m, upid, chrome_process_name(m, t),
					      t == 2 || t == 40 ? PP_CHROME_LABEL_RENDERER : PP_CHROME_LABEL);
		}
	}
}

/* MaybeTruncateKworkerName: "kworker/45:2-mm_percpu_wq" -> "kworker/45:2" */
static size_t kworker_len(const char *s)
{
	size_t n = strlen(s);
	if (strncmp(s, "kworker/", 8) != 0)
		return n;
	for (size_t i = 8; i < n; i++)
		if (s[i] == '+' || s[i] == '-')
			return i;
	return n;
}

/* SystemProbesParser::ParseProcessTree */
static void parse_process_tree(tm_model *m, m_ctx *c, const Perfetto__Protos__ProcessTree *pt)
{
	m_mach *mc = m_machine(m, c->row);
	m_map kthreads = {0};
	tm_buf joined = {0};
	for (size_t i = 0; i < pt->n_processes; i++) {
		const Perfetto__Protos__ProcessTree__Process *pr = pt->processes[i];
		if (!pr->n_cmdline)
			continue;
		int64_t pid = (uint32_t)(pr->has_pid ? pr->pid : 0);
		int64_t ppid = (uint32_t)(pr->has_ppid ? pr->ppid : 0);
		const char *argv0 = pr->cmdline[0] ? pr->cmdline[0] : "";
		size_t argv0_n = strlen(argv0);
		int joined_set = 0;
		joined.len = 0;
		if (ppid == 2) {
			*m_map_put(&kthreads, (uint64_t)pid, NULL) = 1;
			size_t k = kworker_len(argv0);
			if (k != argv0_n) {
				argv0_n = k;
				tm_buf_put(&joined, argv0, k);
				joined_set = 1;
			}
		}
		/* a single element: a cmdline rewritten with spaces */
		if (pr->n_cmdline == 1) {
			const char *sp = memchr(argv0, ' ', argv0_n);
			if (sp)
				argv0_n = (size_t)(sp - argv0);
		}
		if (!joined_set || !joined.len) {
			joined.len = 0;
			for (size_t k = 0; k < pr->n_cmdline; k++) {
				if (k)
					tm_buf_put(&joined, " ", 1);
				tm_buf_puts(&joined, pr->cmdline[k] ? pr->cmdline[k] : "");
			}
		}
		int64_t pupid = m_get_or_create_process(m, mc, ppid);
		int64_t upid = m_get_or_create_process(m, mc, pid);
		m_set_process_parent(m, upid, pupid);
		m_update_process_name(m, upid, m_intern(&m->str, argv0, argv0_n), PP_SYSTEM);
		if (pr->has_cmdline_is_comm && pr->cmdline_is_comm) {
			int64_t utid = m_get_or_create_thread(m, mc, pid);
			m_update_thread_name(m, utid, m_intern(&m->str, joined.data ? joined.data : "", joined.len),
					     TP_PROCESS_TREE);
		}
	}
	for (size_t i = 0; i < pt->n_threads; i++) {
		const Perfetto__Protos__ProcessTree__Thread *th = pt->threads[i];
		int64_t tid = (uint32_t)(th->has_tid ? th->tid : 0);
		int64_t tgid = (uint32_t)(th->has_tgid ? th->tgid : 0);
		m_update_thread(m, mc, tid, tgid);
		if (th->name) {
			size_t n = strlen(th->name);
			if (tid == tgid && m_map_get(&kthreads, (uint64_t)tid))
				n = kworker_len(th->name);
			int64_t utid = m_get_or_create_thread(m, mc, tid);
			m_update_thread_name(m, utid, m_intern(&m->str, th->name, n), TP_PROCESS_TREE);
		}
	}
	m_map_free(&kthreads);
	tm_buf_free(&joined);
}

static void apply_packet(tm_model *m, const tm_mrec_head *h, const char *payload, size_t len)
{
	/* bytes protobuf-c would follow too deep (core/formats/proto/pb_unpack.h) are
	 * dropped as malformed ones are */
	if (tm_pb_too_deep(&perfetto__protos__trace_packet__descriptor, len, (const uint8_t *)payload))
		return;
	Packet *pk = perfetto__protos__trace_packet__unpack(NULL, len, (const uint8_t *)payload);
	if (!pk)
		return;
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	m_pctx *p = pctx(c);
	m_mach *mc = m_machine(m, c->row);
	switch (pk->data_case) {
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR:
		parse_track_descriptor(m, c, p, pk->track_descriptor);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE:
		parse_process_tree(m, c, pk->process_tree);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_DESCRIPTOR:
		parse_process_descriptor(m, mc, pk->process_descriptor);
		break;
	case PERFETTO__PROTOS__TRACE_PACKET__DATA_THREAD_DESCRIPTOR:
		/* without a sequence the tokenizer handles it */
		if (pk->optional_trusted_packet_sequence_id_case ==
		    PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID)
			parse_thread_descriptor(m, mc, pk->thread_descriptor, 0);
		break;
	default:
		break;
	}
	perfetto__protos__trace_packet__free_unpacked(pk, NULL);
}

/* ---- debug annotations as args ------------------------------------------------ */

static void nested_value(tm_buf *b, const NestedValue *v, int depth)
{
	if (depth > 64) {
		tm_buf_puts(b, "null");
		return;
	}
	if (v->has_nested_type && v->nested_type == PERFETTO__PROTOS__DEBUG_ANNOTATION__NESTED_VALUE__NESTED_TYPE__DICT) {
		tm_buf_put(b, "{", 1);
		for (size_t i = 0; i < v->n_dict_keys && i < v->n_dict_values; i++) {
			if (i)
				tm_buf_put(b, ",", 1);
			const char *k = v->dict_keys[i] ? v->dict_keys[i] : "";
			tm_buf_json_string(b, k, strlen(k));
			tm_buf_put(b, ":", 1);
			nested_value(b, v->dict_values[i], depth + 1);
		}
		tm_buf_put(b, "}", 1);
	} else if (v->has_nested_type &&
		   v->nested_type == PERFETTO__PROTOS__DEBUG_ANNOTATION__NESTED_VALUE__NESTED_TYPE__ARRAY) {
		tm_buf_put(b, "[", 1);
		for (size_t i = 0; i < v->n_array_values; i++) {
			if (i)
				tm_buf_put(b, ",", 1);
			nested_value(b, v->array_values[i], depth + 1);
		}
		tm_buf_put(b, "]", 1);
	} else if (v->has_int_value) {
		tm_buf_put_i64(b, v->int_value);
	} else if (v->has_double_value) {
		tj_write_double(b, v->double_value);
	} else if (v->has_bool_value) {
		tm_buf_puts(b, v->bool_value ? "true" : "false");
	} else if (v->string_value) {
		tm_buf_json_string(b, v->string_value, strlen(v->string_value));
	} else {
		tm_buf_puts(b, "null");
	}
}

static void annotation_value(tm_buf *b, const DebugAnnotation *d, int depth)
{
	if (depth > 64) {
		tm_buf_puts(b, "null");
		return;
	}
	if (d->n_dict_entries) {
		tm_buf_put(b, "{", 1);
		size_t k = 0;
		for (size_t i = 0; i < d->n_dict_entries; i++) {
			const DebugAnnotation *e = d->dict_entries[i];
			if (e->name_field_case != PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME)
				continue;
			if (k++)
				tm_buf_put(b, ",", 1);
			tm_buf_json_string(b, e->name, strlen(e->name));
			tm_buf_put(b, ":", 1);
			annotation_value(b, e, depth + 1);
		}
		tm_buf_put(b, "}", 1);
		return;
	}
	if (d->n_array_values) {
		tm_buf_put(b, "[", 1);
		for (size_t i = 0; i < d->n_array_values; i++) {
			if (i)
				tm_buf_put(b, ",", 1);
			annotation_value(b, d->array_values[i], depth + 1);
		}
		tm_buf_put(b, "]", 1);
		return;
	}
	switch (d->value_case) {
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE:
		tm_buf_puts(b, d->bool_value ? "true" : "false");
		break;
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE:
		tm_buf_printf(b, "%" PRIu64, d->uint_value);
		break;
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE:
		tm_buf_put_i64(b, d->int_value);
		break;
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE:
		tj_write_double(b, d->double_value);
		break;
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE: {
		char t[32];
		snprintf(t, sizeof t, "0x%" PRIx64, d->pointer_value);
		tm_buf_json_string(b, t, strlen(t));
		break;
	}
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE:
		tm_buf_json_string(b, d->string_value, strlen(d->string_value));
		break;
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_LEGACY_JSON_VALUE: {
		tj_value *v = NULL;
		tm_error err;
		if (tj_parse(d->legacy_json_value, strlen(d->legacy_json_value), &v, &err) == 0)
			tj_write(b, v);
		else
			tm_buf_json_string(b, d->legacy_json_value, strlen(d->legacy_json_value));
		tj_free(v);
		break;
	}
	case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_NESTED_VALUE:
		nested_value(b, d->nested_value, depth + 1);
		break;
	default:
		tm_buf_puts(b, "null");
		break;
	}
}

/* The event's debug annotations as compact JSON members into p->args. */
static void render_args(m_pctx *p, const TrackEvent *e)
{
	tm_buf *b = &p->args;
	b->len = 0;
	for (size_t i = 0; i < e->n_debug_annotations; i++) {
		const DebugAnnotation *d = e->debug_annotations[i];
		if (d->name_field_case != PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME)
			continue;
		if (b->len)
			tm_buf_put(b, ",", 1);
		tm_buf_json_string(b, d->name, strlen(d->name));
		tm_buf_put(b, ":", 1);
		annotation_value(b, d, 0);
	}
}

/* ---- track events (TrackEventEventImporter) ------------------------------------- */

typedef struct ev_state {
	tm_model *m;
	m_ctx *c;
	m_pctx *p;
	m_mach *mc;
	const tm_mrec_head *h;
	const tm_pr_event *pe;
	const TrackEvent *e;
	const LegacyEvent *le;
	int64_t ts;
	int lphase;           /* legacy_event.phase, 0 none */
	uint32_t cat, name;
	uint64_t uuid;
	int fallback;         /* fallback_to_legacy_pid_tid_tracks_ */
	int64_t utid, upid;   /* -1 none */
} ev_state;

static int fail(ev_state *s)
{
	m_stat(s->m, "track_event_parser_errors", 1);
	return 0;
}

/* A string id the tokenizer put in a record (tm_model_intern): 0 for
 * one the pool does not have. */
static uint32_t pooled(const tm_model *m, uint64_t id)
{
	return id <= m->str.n ? (uint32_t)id : 0;
}

/* The event's categories as one string: its category_iids are the
 * tokenizer's pool ids (resolve_track_event), in their order, and then
 * the ones that came as text (an event has one form or the other). */
static uint32_t category(tm_model *m, const TrackEvent *e)
{
	if (e->n_category_iids == 1 && !e->n_categories)
		return pooled(m, e->category_iids[0]);
	if (e->n_category_iids) {
		tm_buf *b = &m->scratch;
		b->len = 0;
		for (size_t i = 0; i < e->n_category_iids; i++) {
			size_t n;
			const char *s = tm_model_string(m, pooled(m, e->category_iids[i]), &n);
			if (i)
				tm_buf_put(b, ",", 1);
			if (s)
				tm_buf_put(b, s, n);
		}
		return b->len ? m_intern(&m->str, b->data, b->len) : 0;
	}
	if (!e->n_categories)
		return 0;
	if (e->n_categories == 1)
		return str_id(m, e->categories[0] ? e->categories[0] : "");
	tm_buf *b = &m->scratch;
	b->len = 0;
	for (size_t i = 0; i < e->n_categories; i++) {
		if (b->len)
			tm_buf_put(b, ",", 1);
		tm_buf_puts(b, e->categories[i] ? e->categories[i] : "");
	}
	return b->len ? m_intern(&m->str, b->data, b->len) : 0;
}

/* ParseInitialTrackAssociation: 0 when the event is dropped. */
static int initial_association(ev_state *s)
{
	tm_model *m = s->m;
	const TrackEvent *e = s->e;
	const LegacyEvent *le = s->le;
	int thread_valid = s->pe->has_thread;
	int64_t seq_pid = s->pe->pid < 0 ? 0 : s->pe->pid, seq_tid = s->pe->tid < 0 ? 0 : s->pe->tid;
	s->uuid = e->has_track_uuid ? e->track_uuid : s->pe->has_default_track ? s->pe->default_track : 0;
	s->utid = s->upid = -1;
	if (s->uuid) {
		p_track *t = resolve(m, s->c, s->p, s->uuid);
		if (!t)
			return fail(s);
		if (t->scope == SC_THREAD) {
			s->utid = t->utid;
			s->upid = m->threads[s->utid].pub.upid;
		} else {
			if (t->scope == SC_PROCESS)
				s->upid = t->upid;
			/* the legacy passthrough thread is made, though not kept */
			if (thread_valid)
				m_update_thread(m, s->mc, (uint32_t)seq_tid, (uint32_t)seq_pid);
		}
	} else {
		s->fallback = (!e->has_track_uuid || !e->has_type) && thread_valid;
		s->fallback |= le && le->has_pid_override;
		s->fallback |= le && le->has_tid_override && thread_valid;
		if (s->fallback) {
			int64_t pid = (uint32_t)seq_pid, tid = seq_tid;
			if (le && le->has_pid_override) {
				pid = (uint32_t)le->pid_override;
				tid = (int64_t)((uint64_t)pid << 32 | (uint64_t)(int64_t)-1); /* CreateSyntheticTid(-1, pid) */
			}
			if (le && le->has_tid_override) {
				tid = (uint32_t)le->tid_override;
				if ((uint64_t)seq_tid & 0xffffffff00000000ull)
					tid = (int64_t)((uint64_t)pid << 32 | (uint64_t)tid);
			}
			if (!pid || !tid)
				return fail(s); /* pid/tid 0 is reserved for swapper */
			s->utid = m_update_thread(m, s->mc, tid, pid);
			s->upid = m->threads[s->utid].pub.upid;
		}
	}
	if (!s->lphase)
		return 1;
	if (s->lphase == 'i' || s->lphase == 'I') {
		int scope = le->has_instant_event_scope ? le->instant_event_scope : 0;
		switch (scope) {
		case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_UNSPECIFIED:
		case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_THREAD:
			if (s->utid < 0)
				return fail(s);
			break;
		case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_GLOBAL:
			s->utid = -1;
			break;
		case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_PROCESS:
			if (s->upid < 0)
				return fail(s);
			s->utid = -1;
			break;
		default:
			break;
		}
	}
	return 1;
}

static int legacy_async_phase(int ph)
{
	return ph == 'b' || ph == 'e' || ph == 'n' || ph == 'S' || ph == 'T' || ph == 'p' || ph == 'F';
}

/* TrackCompressor::InternLegacyAsyncTrack */
static uint32_t legacy_async_track(ev_state *s, int op)
{
	tm_model *m = s->m;
	const LegacyEvent *le = s->le;
	int64_t source;
	int process_scoped = 0;
	switch (le->id_case) {
	case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__ID_UNSCOPED_ID: source = (int64_t)le->unscoped_id; break;
	case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__ID_GLOBAL_ID: source = (int64_t)le->global_id; break;
	case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__ID_LOCAL_ID:
		if (s->upid < 0)
			return UINT32_MAX; /* local_id without process association */
		source = (int64_t)le->local_id;
		process_scoped = 1;
		break;
	default:
		return UINT32_MAX; /* async LegacyEvent without ID */
	}
	int ph = s->lphase;
	int legacy = ph == 'S' || ph == 'T' || ph == 'p' || ph == 'F';
	/* AsyncSliceTypeForPhase: the phase decides, not the caller */
	op = ph == 'b' || ph == 'S' ? OP_BEGIN : ph == 'e' || ph == 'T' ? OP_END : OP_INSTANT;
	uint32_t id_scope = legacy ? s->name : s->cat;
	if (le->id_scope) {
		tm_buf *b = &m->scratch;
		b->len = 0;
		const char *cs = m_str(&m->str, s->cat);
		tm_buf_puts(b, cs ? cs : "");
		tm_buf_put(b, ":", 1);
		tm_buf_puts(b, le->id_scope);
		id_scope = m_intern(&m->str, b->data, b->len);
	}
	uint64_t root_key = process_scoped ? m_hash2(SALT_ASYNC_ROOT_P, m_hash2((uint64_t)s->upid, (uint64_t)source))
					   : m_hash2(SALT_ASYNC_ROOT_G, (uint64_t)source);
	int ins;
	uint64_t *root = m_map_put(&s->p->async_root, root_key, &ins);
	if (ins)
		*root = s->name;
	uint64_t set = process_scoped
			       ? m_hash2(m_hash2(SALT_ASYNC_PROCESS, (uint64_t)s->upid), m_hash2(id_scope, *root))
			       : m_hash2(SALT_ASYNC_GLOBAL, m_hash2(id_scope, *root));
	tm_mtrack_scope sc = process_scoped ? TM_SCOPE_PROCESS : TM_SCOPE_GLOBAL;
	int64_t upid = process_scoped ? s->upid : -1;
	if (op == OP_END)
		return m_compress_cookie(m, s->c, set, M_COMPRESS_END, source, TM_MT_PROTO, sc, -1, upid, s->name);
	uint32_t id = m_compress_cookie(m, s->c, set, M_COMPRESS_BEGIN, source, TM_MT_PROTO, sc, -1, upid, s->name);
	if (op == OP_INSTANT)
		id = m_compress_cookie(m, s->c, set, M_COMPRESS_END, source, TM_MT_PROTO, sc, -1, upid, s->name);
	return id;
}

/* ParseTrackAssociation{Begin,End,Instant,Counter,ForLegacy} and
 * ParseTrackAssociationInternal: the event's track, or UINT32_MAX. */
static uint32_t event_track(ev_state *s, int op)
{
	tm_model *m = s->m;
	uint32_t opt = UINT32_MAX;
	if (!(!s->uuid && s->fallback))
		opt = descriptor_track(m, s->c, s->p, s->uuid, s->name, op);
	if (legacy_async_phase(s->lphase)) {
		return legacy_async_track(s, op);
	} else if (s->lphase == 'i' || s->lphase == 'I') {
		int scope = s->le->has_instant_event_scope ? s->le->instant_event_scope : 0;
		if (scope == PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_GLOBAL)
			return m_named_track(m, s->c, TM_MT_GLOBAL_INSTANT, TM_SCOPE_GLOBAL, -1, -1, -1, 0);
		if (scope == PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INSTANT_EVENT_SCOPE__SCOPE_PROCESS)
			return m_named_track(m, s->c, TM_MT_PROCESS_INSTANT, TM_SCOPE_PROCESS, -1, s->upid, -1, 0);
	}
	if (!s->uuid && s->fallback)
		return m_thread_track(m, s->c, s->utid);
	return opt;
}

/* MaybeParseFlowEvents: flow v2 (bind_id), then flow_ids and
 * terminating_flow_ids, on the slice just made or ended. */
static void event_flows(ev_state *s, uint64_t slice, int64_t sts)
{
	tm_model *m = s->m;
	m_ctx *c = s->c;
	const LegacyEvent *le = s->le;
	if (le && le->has_bind_id) {
		if (!le->has_flow_direction) {
			m_stat(m, "flow_without_direction", 1);
		} else {
			switch (le->flow_direction) {
			case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_OUT:
				m_flow_begin_slice(m, c, slice, sts, le->bind_id);
				break;
			case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_INOUT:
				m_flow_step_slice(m, c, slice, sts, le->bind_id);
				break;
			case PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_IN:
				m_flow_end_slice(m, c, slice, sts, le->bind_id, 0);
				break;
			default:
				m_stat(m, "flow_without_direction", 1);
				break;
			}
		}
	}
	const TrackEvent *e = s->e;
	/* flow_ids, else the deprecated flow_ids_old (still read) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	const uint64_t *ids = e->n_flow_ids ? e->flow_ids : e->flow_ids_old;
	size_t n = e->n_flow_ids ? e->n_flow_ids : e->n_flow_ids_old;
	for (size_t i = 0; i < n; i++) {
		if (!m_map_get(&c->flow_to_slice, ids[i]))
			m_flow_begin_slice(m, c, slice, sts, ids[i]);
		else
			m_flow_step_slice(m, c, slice, sts, ids[i]);
	}
	ids = e->n_terminating_flow_ids ? e->terminating_flow_ids : e->terminating_flow_ids_old;
	n = e->n_terminating_flow_ids ? e->n_terminating_flow_ids : e->n_terminating_flow_ids_old;
#pragma GCC diagnostic pop
	for (size_t i = 0; i < n; i++)
		if (m_map_get(&c->flow_to_slice, ids[i]))
			m_flow_end_slice(m, c, slice, sts, ids[i], 1);
}

static double counter_bits(uint64_t v)
{
	double d;
	memcpy(&d, &v, sizeof d);
	return d;
}

/* ConvertToAbsoluteCounterValue: 0 when the uuid is no counter track. An
 * incremental counter sums per sequence, from 0 again after the sequence's
 * incremental state was cleared or lost (TrackEventSequenceState). */
static int absolute_counter(m_pctx *p, const tm_pr_event *pe, uint64_t uuid, double *value)
{
	p_track *t = find(p, uuid);
	if (!t || !t->counter)
		return 0;
	if (t->cd_mult > 0)
		*value *= (double)t->cd_mult;
	if (t->cd_incr) {
		if (!t->sum_claimed) {
			t->sum_claimed = 1;
			t->sum_seq = pe->seq_id;
			t->sum_gen = pe->generation;
			t->sum = 0; /* +0.0 */
		}
		if (t->sum_seq == pe->seq_id) {
			if (t->sum_gen != pe->generation) {
				t->sum_gen = pe->generation;
				t->sum = 0;
			}
			t->sum += *value;
			*value = t->sum;
			return 1;
		}
		uint64_t gen = (uint64_t)pe->generation + 1;
		uint64_t key = m_hash2(pe->seq_id, uuid);
		uint64_t *v = m_map_put(&p->incremental, key, NULL);
		uint64_t *g = m_map_put(&p->incremental_gen, key, NULL);
		if (*g != gen) {
			*g = gen;
			*v = 0; /* +0.0 */
		}
		double sum = counter_bits(*v) + *value;
		memcpy(v, &sum, sizeof sum);
		*value = sum;
	}
	return 1;
}

/* The tokenizer's extra counter checks, values into vals[]; 0 drops the
 * whole event. The scan wrote the uuids the sequence's TrackEventDefaults
 * give into the event when it has none of its own. */
#define MAX_EXTRA_COUNTERS 8
static int extra_counters(tm_model *m, m_pctx *p, const tm_pr_event *pe, const TrackEvent *e, uint64_t *uuids,
			  double *vals, size_t *n_out)
{
	*n_out = 0;
	size_t index = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t nv = pass ? e->n_extra_double_counter_values : e->n_extra_counter_values;
		size_t nu = pass ? e->n_extra_double_counter_track_uuids : e->n_extra_counter_track_uuids;
		const uint64_t *u = pass ? e->extra_double_counter_track_uuids : e->extra_counter_track_uuids;
		if (!nv)
			continue;
		if (!nu) {
			m_stat(m, "track_event_extra_counter_missing_track_uuids", 1);
			return 0;
		}
		for (size_t i = 0; i < nv; i++, index++) {
			if (i >= nu || !u[i]) {
				m_stat(m, "track_event_extra_counter_track_uuid_mismatch", 1);
				return 0;
			}
			if (index >= MAX_EXTRA_COUNTERS) {
				m_stat(m, "track_event_extra_counter_exceeds_max", 1);
				return 0;
			}
			double v = pass ? e->extra_double_counter_values[i] : (double)e->extra_counter_values[i];
			if (!absolute_counter(p, pe, u[i], &v)) {
				m_stat(m, "track_event_extra_counter_invalid_track", 1);
				return 0;
			}
			uuids[index] = u[i];
			vals[index] = v;
		}
	}
	*n_out = index;
	return 1;
}

static void args_of(ev_state *s, const char **a, size_t *n)
{
	if (!m_wants_args(s->m)) {
		*a = NULL;
		*n = 0;
		return;
	}
	render_args(s->p, s->e);
	*a = s->p->args.data;
	*n = s->p->args.len;
}

/* What ParseTrackEventArgs does besides args, once the row it fills is
 * made: the Chrome active processes (chrome_active_processes, and the
 * ChromeTrackEvent active_processes extension its reflection reads). */
static void args_effects(ev_state *s)
{
	const Perfetto__Protos__ChromeActiveProcesses *ap[2] = {s->e->chrome_active_processes, s->e->active_processes};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; ap[k] && i < ap[k]->n_pid; i++)
			m_get_or_create_process(s->m, s->mc, (uint32_t)ap[k]->pid[i]);
}

static void slice_begin(ev_state *s, uint32_t track)
{
	const char *a;
	size_t an;
	args_of(s, &a, &an);
	if (m_slice_begin_raw(s->m, s->c, track, s->ts, s->cat, s->name, a, an, s->h->file_id)) {
		args_effects(s);
		event_flows(s, s->m->last_slice_id, s->m->last_slice_ts);
	}
}

static void slice_end(ev_state *s, uint32_t track)
{
	const char *a;
	size_t an;
	args_of(s, &a, &an);
	if (m_slice_end_raw(s->m, s->c, track, s->ts, s->cat, s->name, a, an)) {
		args_effects(s);
		event_flows(s, s->m->last_slice_id, s->m->last_slice_ts);
	}
}

static void slice_scoped(ev_state *s, uint32_t track, int64_t dur, int flows)
{
	const char *a;
	size_t an;
	args_of(s, &a, &an);
	if (m_slice_scoped_raw(s->m, s->c, track, s->ts, s->cat, s->name, dur, a, an, NULL, s->h->file_id)) {
		args_effects(s);
		if (flows)
			event_flows(s, s->m->last_slice_id, s->m->last_slice_ts);
	}
}

static void import_event(ev_state *s, double counter_value, const uint64_t *xu, const double *xv, size_t nx)
{
	tm_model *m = s->m;
	const TrackEvent *e = s->e;
	int type = e->has_type ? e->type : 0;
	if (!type && !s->lphase) {
		fail(s); /* TrackEvent without type or phase */
		return;
	}
	s->cat = category(m, e);
	s->name = e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME	   ? str_id(m, e->name)
		  : e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID ? pooled(m, e->name_iid)
											     : 0;
	if (!initial_association(s))
		return;
	/* ParseExtraCounterValues */
	for (size_t i = 0; i < nx; i++) {
		uint32_t t = descriptor_track(m, s->c, s->p, xu[i], 0, OP_COUNTER);
		if (t != UINT32_MAX)
			m_counter(m, t, s->ts, xv[i], s->h->file_id);
	}
	if (type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER) {
		uint32_t t = event_track(s, OP_COUNTER);
		if (t == UINT32_MAX) {
			fail(s);
			return;
		}
		m_counter(m, t, s->ts, counter_value, s->h->file_id);
		args_effects(s);
		return;
	}
	if (type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_STATE) {
		/* the state table is not modelled; its track is interned */
		if (!s->uuid && s->fallback) {
			fail(s);
			return;
		}
		p_track *t = intern(m, s->c, s->p, s->uuid, s->name);
		if (!t || !t->state)
			fail(s);
		return;
	}
	int ph = s->lphase;
	if (!ph) {
		switch (type) {
		case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN: ph = s->utid >= 0 ? 'B' : 'b'; break;
		case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END: ph = s->utid >= 0 ? 'E' : 'e'; break;
		case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT: ph = s->utid >= 0 ? 'i' : 'n'; break;
		default: ph = 0; break;
		}
	}
	uint32_t track;
	switch (ph) {
	case 'B':
		if (s->utid < 0 || (track = event_track(s, OP_BEGIN)) == UINT32_MAX) {
			fail(s);
			return;
		}
		slice_begin(s, track);
		break;
	case 'E':
		if (s->utid < 0 || (track = event_track(s, OP_END)) == UINT32_MAX) {
			fail(s);
			return;
		}
		slice_end(s, track);
		break;
	case 'X': {
		int64_t dur = (s->le->has_duration_us ? s->le->duration_us : 0) * 1000;
		if (s->utid < 0 || dur < 0 || (track = event_track(s, OP_LEGACY)) == UINT32_MAX) {
			fail(s);
			return;
		}
		slice_scoped(s, track, dur, 1);
		break;
	}
	case 's':
	case 't':
	case 'f': {
		if (s->le->id_case != PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__ID_UNSCOPED_ID) {
			m_stat(m, "flow_invalid_id", 1);
			fail(s);
			return;
		}
		uint64_t flow = m_flow_v1_id(s->c, s->le->unscoped_id, s->cat, s->name);
		if ((track = event_track(s, OP_LEGACY)) == UINT32_MAX) {
			fail(s);
			return;
		}
		if (ph == 's')
			m_flow_begin_track(m, s->c, track, flow);
		else if (ph == 't')
			m_flow_step_track(m, s->c, track, flow);
		else
			m_flow_end_track(m, s->c, track, flow,
					 s->le->has_bind_to_enclosing && s->le->bind_to_enclosing, 0);
		break;
	}
	case 'i':
	case 'I':
	case 'R':
	case 'n':
		if ((track = event_track(s, OP_INSTANT)) == UINT32_MAX) {
			fail(s);
			return;
		}
		slice_scoped(s, track, 0, 1);
		break;
	case 'b':
	case 'S':
		if ((track = event_track(s, OP_BEGIN)) == UINT32_MAX) {
			fail(s);
			return;
		}
		slice_begin(s, track);
		break;
	case 'e':
	case 'F':
		if ((track = event_track(s, OP_END)) == UINT32_MAX) {
			fail(s);
			return;
		}
		slice_end(s, track);
		break;
	case 'T':
	case 'p':
		if ((track = event_track(s, OP_INSTANT)) == UINT32_MAX) {
			fail(s);
			return;
		}
		slice_scoped(s, track, 0, 0);
		break;
	case 'M': {
		const char *nm = m_str(&m->str, s->name);
		if (!nm) {
			fail(s);
			return;
		}
		int thread = strcmp(nm, "thread_name") == 0, process = strcmp(nm, "process_name") == 0;
		if (!thread && !process) {
			if (s->utid < 0)
				fail(s); /* a raw legacy event needs its thread */
			else
				args_effects(s);
			return;
		}
		if ((thread && s->utid < 0) || (process && s->upid < 0) || !e->n_debug_annotations) {
			fail(s);
			return;
		}
		const DebugAnnotation *d = e->debug_annotations[0];
		const char *v = d->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE ? d->string_value
												     : "";
		if (!v[0])
			return;
		if (thread)
			m_update_thread_name(m, s->utid, str_id(m, v), TP_TRACK_DESCRIPTOR_THREAD_TYPE);
		else
			m_update_process_name(m, s->upid, str_id(m, v), PP_TRACK_DESCRIPTOR);
		break;
	}
	default:
		/* proxied to the raw table, which needs a thread */
		if (s->utid < 0)
			fail(s);
		else
			args_effects(s);
		break;
	}
}

/* ---- the per-event unpack's memory ------------------------------------------------- */

/* protobuf-c allocates every string, repeated field and submessage of an
 * unpacked message with malloc, and free_unpacked gives each back. For the
 * two messages unpacked once per event (TrackEvent, FtraceEvent) a bump
 * arena, reset before each, does that work once: the model copies what it
 * keeps (names are interned, args copied), as it had to before the free.
 * One per thread (FUSE may build two merges at once), given back when the
 * thread ends. */
typedef struct unpack_arena {
	char *buf;
	size_t cap, used;
	void **big;          /* requests the buffer could not hold */
	size_t n_big, cap_big;
	size_t big_bytes;
	ProtobufCAllocator alloc;
} unpack_arena;

static void arena_destroy(void *p)
{
	unpack_arena *a = p;
	for (size_t i = 0; i < a->n_big; i++)
		free(a->big[i]);
	free(a->big);
	free(a->buf);
	free(a);
}

static tm_per_thread arenas = TM_PER_THREAD(unpack_arena, arena_destroy);

static void *arena_alloc(void *data, size_t size)
{
	unpack_arena *a = data;
	size = (size + 15) & ~(size_t)15;
	if (a->used + size <= a->cap) {
		void *p = a->buf + a->used;
		a->used += size;
		return p;
	}
	TM_GROW(a->big, a->cap_big, a->n_big + 1);
	a->big[a->n_big] = tm_xmalloc(size ? size : 1);
	a->big_bytes += size;
	return a->big[a->n_big++];
}

static void arena_free(void *data, void *p)
{
	(void)data; /* given back all at once, by the next reset */
	(void)p;
}

/* An empty arena, grown to what the last message needed. */
static ProtobufCAllocator *arena_reset(void)
{
	unpack_arena *a = tm_per_thread_get(&arenas);
	for (size_t i = 0; i < a->n_big; i++)
		free(a->big[i]);
	a->n_big = 0;
	if (a->big_bytes || !a->buf) {
		size_t want = a->used + a->big_bytes;
		size_t cap = a->cap ? a->cap : 64 * 1024;
		while (cap < want)
			cap *= 2;
		if (cap != a->cap || !a->buf) {
			free(a->buf);
			a->buf = tm_xmalloc(cap);
			a->cap = cap;
		}
	}
	a->used = a->big_bytes = 0;
	a->alloc = (ProtobufCAllocator){arena_alloc, arena_free, a};
	return &a->alloc;
}

/* A message of the hot path (TrackEvent, FtraceEvent) in the arena: read
 * in one pass (core/formats/proto/pb_unpack.h), else protobuf-c's answer, a message or
 * NULL; NULL for bytes nested too deep for protobuf-c's recursion. */
static ProtobufCMessage *unpack_hot(const ProtobufCMessageDescriptor *d, size_t len, const uint8_t *p)
{
	ProtobufCMessage *m = tm_pb_unpack(d, arena_reset(), len, p);
	if (m || tm_pb_too_deep(d, len, p))
		return m;
	return protobuf_c_message_unpack(d, arena_reset(), len, p);
}

static void apply_track_event(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *payload, size_t len)
{
	tm_pr_event pe;
	size_t pn = tm_pr_event_unpack(payload, len, &pe);
	if (!pn)
		return;
	TrackEvent *e = (TrackEvent *)unpack_hot(&perfetto__protos__track_event__descriptor, len - pn,
						 (const uint8_t *)payload + pn);
	if (!e)
		return;
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	ev_state s = {m, c, pctx(c), m_machine(m, h->machine_row), h, &pe, e, e->legacy_event, ts, 0, 0, 0, 0, 0, -1, -1};
	s.lphase = s.le && s.le->has_phase ? s.le->phase : 0;
	/* the tokenizer's checks: a counter needs its counter track and value */
	double value = 0;
	int ok = 1;
	if (e->has_type && e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER) {
		uint64_t uuid = e->has_track_uuid ? e->track_uuid : pe.default_track;
		if (!e->has_track_uuid && !pe.has_default_track) {
			m_stat(m, "track_event_counter_missing_track_uuid", 1);
			ok = 0;
		} else if (e->counter_value_field_case == PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD__NOT_SET) {
			m_stat(m, "track_event_counter_missing_value", 1);
			ok = 0;
		} else {
			value = e->counter_value_field_case ==
					PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE
				? (double)e->counter_value
				: e->double_counter_value;
			if (!absolute_counter(s.p, &pe, uuid, &value)) {
				m_stat(m, "track_event_counter_invalid_track_uuid", 1);
				ok = 0;
			}
		}
	}
	if (ok && e->has_type && e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_STATE && !e->has_track_uuid &&
	    !pe.has_default_track) {
		m_stat(m, "track_event_state_missing_track_uuid", 1);
		ok = 0;
	}
	uint64_t xu[MAX_EXTRA_COUNTERS];
	double xv[MAX_EXTRA_COUNTERS];
	size_t nx = 0;
	if (ok)
		ok = extra_counters(m, s.p, &pe, e, xu, xv, &nx);
	if (ok)
		import_event(&s, value, xu, xv, nx);
	/* its memory is the arena's, given back by the next reset */
}

/* ---- ftrace (FtraceParser) --------------------------------------------------------- */

/* ParseTaskNewTask */
static void task_newtask(tm_model *m, m_mach *mc, int64_t ts, int64_t source_tid,
			 const Perfetto__Protos__TaskNewtaskFtraceEvent *t)
{
	int64_t new_tid = (uint32_t)(t->has_pid ? t->pid : 0);
	uint32_t comm = str_id(m, t->comm);
	if (new_tid == 0)
		return; /* boot-time swapper tasks */
	uint32_t flags = (uint32_t)(t->has_clone_flags ? t->clone_flags : 0);
	if (!(flags & 0x00010000)) { /* not CLONE_THREAD: a new process */
		int64_t upid = m_start_new_process(m, mc, ts, -1, new_tid, comm, TP_FTRACE);
		int64_t source_utid = m_get_or_create_thread(m, mc, source_tid);
		m_get_or_create_thread(m, mc, new_tid);
		m_associate_created_process(m, mc, upid, source_utid);
		return;
	}
	int64_t source_utid = m_get_or_create_thread(m, mc, source_tid);
	int64_t new_utid = m_start_new_thread(m, mc, ts, new_tid);
	m_update_thread_name(m, new_utid, comm, TP_FTRACE);
	m_associate_threads(m, mc, source_utid, new_utid, 1);
}

/* MaybeOnFirstFtraceEvent: ftrace events before the trace's start are
 * dropped (unless the buffer was preserved), those before every CPU's data
 * is valid only reach the raw table. */
static int64_t drop_before(const m_pctx *p)
{
	return p->preserve || !p->has_started ? 0 : p->started_ns;
}

static int64_t soft_drop_before(const m_pctx *p)
{
	int64_t d = drop_before(p), s = p->has_data_start ? p->data_start_ns : 0;
	return s > d ? s : d;
}

static void apply_ftrace(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *payload, size_t len)
{
	tm_pr_ftrace pf;
	if (len < sizeof pf)
		return;
	memcpy(&pf, payload, sizeof pf);
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	m_pctx *p = pctx(c);
	if (ts < drop_before(p)) {
		m_stat(m, "ftrace_packet_before_tracing_start", 1);
		return;
	}
	FtraceEvent *ev = (FtraceEvent *)unpack_hot(&perfetto__protos__ftrace_event__descriptor, len - sizeof pf,
						    (const uint8_t *)payload + sizeof pf);
	if (!ev)
		return;
	m_mach *mc = m_machine(m, h->machine_row);
	uint32_t file = h->file_id, cpu = pf.cpu;
	if (!ev->has_pid) {
		/* "Pid field not found in ftrace packet" */
		if (ev->event_case != PERFETTO__PROTOS__FTRACE_EVENT__EVENT__NOT_SET)
			m_stat(m, "ftrace_parse_errors", 1);
		return;
	}
	int64_t pid = (uint32_t)ev->pid;
	if (ev->event_case == PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC) {
		/* ParseLegacyGenericFtrace: only a raw row, of its pid's thread,
		 * also before every CPU's data is valid */
		m_get_or_create_thread(m, mc, pid);
		return;
	}
	/* before every CPU's data is valid: the raw table only */
	Perfetto__Protos__FtraceEvent__EventCase which =
		ts < soft_drop_before(p) ? PERFETTO__PROTOS__FTRACE_EVENT__EVENT__NOT_SET : ev->event_case;
	switch (which) {
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH: {
		const Perfetto__Protos__SchedSwitchFtraceEvent *sw = ev->sched_switch;
		m_sched_switch(m, c, cpu, ts, (uint32_t)sw->prev_pid, sw->prev_comm ? sw->prev_comm : "", sw->prev_prio,
			       sw->prev_state, (uint32_t)sw->next_pid, sw->next_comm ? sw->next_comm : "", sw->next_prio,
			       file);
		break;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_WAKING: {
		const Perfetto__Protos__SchedWakingFtraceEvent *wk = ev->sched_waking;
		int64_t wakee = m_get_or_create_thread(m, mc, (uint32_t)wk->pid);
		m_update_thread_name(m, wakee, str_id(m, wk->comm), TP_FTRACE);
		m_get_or_create_thread(m, mc, pid);
		break;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_PROCESS_FREE:
		m_end_thread(m, mc, ts, (uint32_t)ev->sched_process_free->pid);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CPU_FREQUENCY:
		m_counter_cpu(m, c, "cpufreq", ev->cpu_frequency->cpu_id, ts, ev->cpu_frequency->state, file);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CPU_IDLE:
		m_counter_cpu(m, c, "cpuidle", ev->cpu_idle->cpu_id, ts, ev->cpu_idle->state, file);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CPU_FREQUENCY_LIMITS: {
		/* ParseCpuFrequencyLimits: both, absent ones as 0 */
		const Perfetto__Protos__CpuFrequencyLimitsFtraceEvent *fl = ev->cpu_frequency_limits;
		m_cpu_freq_limit(m, c, 1, fl->cpu_id, ts, fl->max_freq, file);
		m_cpu_freq_limit(m, c, 0, fl->cpu_id, ts, fl->min_freq, file);
		break;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CLOCK_SET_RATE:
		m_counter_keyed(m, c, ev->clock_set_rate->name ? ev->clock_set_rate->name : "", M_CLOCK_FREQUENCY, ts,
				(double)ev->clock_set_rate->state, file);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CLOCK_ENABLE:
		m_counter_keyed(m, c, ev->clock_enable->name ? ev->clock_enable->name : "", M_CLOCK_STATE, ts,
				(double)ev->clock_enable->state, file);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CLOCK_DISABLE:
		m_counter_keyed(m, c, ev->clock_disable->name ? ev->clock_disable->name : "", M_CLOCK_STATE, ts,
				(double)ev->clock_disable->state, file);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_THERMAL_TEMPERATURE: {
		const Perfetto__Protos__ThermalTemperatureFtraceEvent *th = ev->thermal_temperature;
		m_counter_keyed(m, c, th->thermal_zone ? th->thermal_zone : "", M_THERMAL_TEMPERATURE, ts, th->temp, file);
		break;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_CDEV_UPDATE:
		m_counter_keyed(m, c, ev->cdev_update->type ? ev->cdev_update->type : "", M_COOLING_DEVICE, ts,
				(double)ev->cdev_update->target, file);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_PRINT: {
		const char *buf = ev->print->buf ? ev->print->buf : "";
		char *text = tm_xstrdup(buf);
		systrace_event l;
		systrace_line_result r = systrace_parse_print(text, &l);
		/* a print the reference cannot parse (systrace_parse_failure)
		 * is counted by the scan, which reads every print already */
		if (r == SYSTRACE_LINE_EVENT)
			m_systrace_print(m, c, mc, ts, (uint32_t)pid, &l, file);
		free(text);
		break;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_ZERO: {
		const Perfetto__Protos__ZeroFtraceEvent *z = ev->zero;
		int flag = z->has_flag ? z->flag : 0;
		systrace_event l;
		memset(&l, 0, sizeof l);
		l.print_phase = flag & 1 ? 'B' : flag & 2 ? 'E' : flag & 4 ? 'C' : 0;
		if (!l.print_phase) {
			m_stat(m, "systrace_parse_failure", 1);
			break;
		}
		l.print_has_tgid = 1;
		l.print_tgid = (uint32_t)z->pid;
		l.print_name = z->name ? z->name : "";
		l.print_track = "";
		l.print_value = z->value;
		l.task = l.event_name = l.args = "";
		m_systrace_print(m, c, mc, ts, (uint32_t)pid, &l, file);
		break;
	}
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_NEWTASK:
		task_newtask(m, mc, ts, pid, ev->task_newtask);
		break;
	case PERFETTO__PROTOS__FTRACE_EVENT__EVENT_TASK_RENAME: {
		int64_t utid = m_get_or_create_thread(m, mc, (uint32_t)ev->task_rename->pid);
		m_update_thread_name_and_maybe_process_name(m, utid, str_id(m, ev->task_rename->newcomm), TP_FTRACE);
		break;
	}
	default:
		break;
	}
}

/* ---- records ----------------------------------------------------------------------- */

static void m_proto_side(tm_model *m, const tm_mrec_head *h, const char *payload, size_t len)
{
	m_ctx *c = m_context(m, h->file_id, h->machine_row);
	m_pctx *p = pctx(c);
	switch (h->sub) {
	case TM_PR_RESERVE: {
		TrackDescriptor *d = perfetto__protos__track_descriptor__unpack(NULL, len, (const uint8_t *)payload);
		if (!d)
			return;
		reserve_descriptor(m, p, d, 1);
		perfetto__protos__track_descriptor__free_unpacked(d, NULL);
		break;
	}
	case TM_PR_SERVICE: {
		int64_t ts;
		if (len < sizeof ts)
			return;
		memcpy(&ts, payload, sizeof ts);
		Perfetto__Protos__TracingServiceEvent *e = perfetto__protos__tracing_service_event__unpack(
			NULL, len - sizeof ts, (const uint8_t *)payload + sizeof ts);
		if (!e)
			return;
		if (e->event_type_case == PERFETTO__PROTOS__TRACING_SERVICE_EVENT__EVENT_TYPE_TRACING_STARTED &&
		    e->tracing_started) {
			p->has_started = 1;
			p->started_ns = ts;
		}
		perfetto__protos__tracing_service_event__free_unpacked(e, NULL);
		break;
	}
	case TM_PR_FTRACE_STATS: {
		Perfetto__Protos__FtraceStats *fs = perfetto__protos__ftrace_stats__unpack(NULL, len, (const uint8_t *)payload);
		if (!fs)
			return;
		if (fs->has_phase && fs->phase == PERFETTO__PROTOS__FTRACE_STATS__PHASE__START_OF_TRACE &&
		    fs->has_preserve_ftrace_buffer && fs->preserve_ftrace_buffer)
			p->preserve = 1;
		perfetto__protos__ftrace_stats__free_unpacked(fs, NULL);
		break;
	}
	case TM_PR_FTRACE_START: {
		int64_t ts;
		if (len < sizeof ts)
			return;
		memcpy(&ts, payload, sizeof ts);
		if (!p->has_data_start || ts > p->data_start_ns)
			p->data_start_ns = ts;
		p->has_data_start = 1;
		break;
	}
	case TM_PR_STAT:
		if (len >= 1 && payload[0] == TM_PR_STAT_STACK_PARSER_ERROR)
			m_stat(m, "stackprofile_parser_error", 1);
		else if (len >= 1 && payload[0] == TM_PR_STAT_STREAMING_TIMESTAMP)
			m_stat(m, "streaming_profile_invalid_timestamp", 1);
		break;
	default:
		break;
	}
}

static void m_proto_apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *payload, size_t len)
{
	switch (h->sub) {
	case TM_PR_PACKET:
		apply_packet(m, h, payload, len);
		break;
	case TM_PR_TRACK_EVENT:
		apply_track_event(m, h, ts, payload, len);
		break;
	case TM_PR_FTRACE:
		apply_ftrace(m, h, ts, payload, len);
		break;
	case TM_PR_SAMPLE:
		m_proto_sample(m, h, ts, payload, len, &pctx(m_context(m, h->file_id, h->machine_row))->samples);
		break;
	case TM_PR_HEAP_GRAPH: {
		uint32_t seq;
		if (len < sizeof seq)
			return;
		memcpy(&seq, payload, sizeof seq);
		m_heap_graph_packet(m, h, ts, seq, (const uint8_t *)payload + sizeof seq, len - sizeof seq);
		break;
	}
	case TM_PR_COMPACT_SWITCH: {
		tm_pr_switch sw;
		if (len < sizeof sw)
			return;
		memcpy(&sw, payload, sizeof sw);
		m_ctx *c = m_context(m, h->file_id, h->machine_row);
		m_pctx *p = pctx(c);
		if (ts < drop_before(p)) {
			m_stat(m, "ftrace_packet_before_tracing_start", 1);
			return;
		}
		char *comm = tm_xstrndup(payload + sizeof sw, len - sizeof sw);
		m_sched_switch_compact(m, c, sw.cpu, ts, sw.prev_state, (uint32_t)sw.next_pid, comm, sw.next_prio,
				       ts < soft_drop_before(p), h->file_id);
		free(comm);
		break;
	}
	case TM_PR_COMPACT_WAKING: {
		tm_pr_waking wk;
		if (len < sizeof wk)
			return;
		memcpy(&wk, payload, sizeof wk);
		m_ctx *c = m_context(m, h->file_id, h->machine_row);
		m_pctx *p = pctx(c);
		if (ts < drop_before(p)) {
			m_stat(m, "ftrace_packet_before_tracing_start", 1);
			return;
		}
		m_sched_waking_compact(m, c, wk.cpu, (uint32_t)wk.pid, ts < soft_drop_before(p));
		break;
	}
	default:
		break;
	}
}

static void apply(tm_model *m, const tm_mrec_head *h, int64_t ts, const char *body, size_t n, const void *pre,
		  size_t pre_len)
{
	m_proto_apply(m, h, ts, body, n);
}

static void ctx_free(m_ctx *c)
{
	m_proto_ctx_free(c->parsed);
}

const tm_parser tm_proto_parser = {.apply = apply,
				   .side = m_proto_side,
				   .ctx_free = ctx_free,
				   .finish = m_heap_graph_finish,
				   .state_free = m_heap_graph_free};
