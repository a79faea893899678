/* GStreamer CUDA video quality: GStreamer's CUDA plumbing for the elements.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudaqacuda.h"
#include "cq-common.h"
#include "cq-cuda.h"

#if HAVE_GST_CUDA
#define GST_USE_UNSTABLE_API
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/cuda/gstcudaloader.h>
#endif

GST_DEBUG_CATEGORY_STATIC (gst_cuda_qa_cuda_debug);
#define GST_CAT_DEFAULT gst_cuda_qa_cuda_debug

static void
gst_cuda_qa_cuda_init_debug (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_cuda_qa_cuda_debug, "cudaqacuda", 0,
        "cudaquality: CUDA contexts, CUDAMemory and pinned memory");
    g_once_init_leave (&done, 1);
  }
}

/* Whether the process has a CUDA device for the compute library. */
static gboolean
gst_cuda_qa_have_device (void)
{
  static gsize result = 0;

  if (g_once_init_enter (&result)) {
    CqError err = { CQ_OK, "" };
    gsize have = cq_cuda_device_count (&err) > 0 ? 2 : 1;

    g_once_init_leave (&result, have);
  }
  return result == 2;
}

gboolean
gst_cuda_qa_cuda_memory_usable (void)
{
#if HAVE_GST_CUDA
  static gsize result = 0;

  if (g_once_init_enter (&result)) {
    gsize usable = 1;

    gst_cuda_qa_cuda_init_debug ();
    if (gst_cuda_qa_have_device () && gst_cuda_load_library ()) {
      gst_cuda_memory_init_once ();
      usable = 2;
    }
    GST_INFO ("CUDAMemory %s", usable == 2 ? "usable" :
        "not usable (no CUDA driver or device)");
    g_once_init_leave (&result, usable);
  }
  return result == 2;
#else
  return FALSE;
#endif
}

static gboolean
gst_cuda_qa_features_name_cuda (GstCapsFeatures * f)
{
  return f && !gst_caps_features_is_any (f)
      && gst_caps_features_contains (f, GST_CUDA_QA_CAPS_FEATURE);
}

GstCaps *
gst_cuda_qa_caps_filter_usable (GstCaps * caps)
{
  guint i;

  if (gst_cuda_qa_cuda_memory_usable () || gst_caps_is_any (caps))
    return caps;
  caps = gst_caps_make_writable (caps);
  for (i = gst_caps_get_size (caps); i > 0; i--)
    if (gst_cuda_qa_features_name_cuda (gst_caps_get_features (caps, i - 1)))
      gst_caps_remove_structure (caps, i - 1);
  return caps;
}

gboolean
gst_cuda_qa_caps_is_cuda (const GstCaps * caps)
{
  return caps && gst_caps_get_size (caps) > 0
      && gst_cuda_qa_features_name_cuda (gst_caps_get_features (caps, 0));
}

gboolean
gst_cuda_qa_caps_names_cuda (const GstCaps * caps)
{
  guint i;

  for (i = 0; caps && !gst_caps_is_any (caps) && i < gst_caps_get_size (caps);
      i++)
    if (gst_cuda_qa_features_name_cuda (gst_caps_get_features (caps, i)))
      return TRUE;
  return FALSE;
}

GstCaps *
gst_cuda_qa_caps_order (GstCaps * caps, gboolean device_ok,
    gboolean prefer_device)
{
  GstCaps *device;
  guint i;

  if (device_ok && !prefer_device)
    return caps;
  device = gst_caps_new_empty ();
  caps = gst_caps_make_writable (caps);
  for (i = 0; i < gst_caps_get_size (caps);) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);

    if (gst_cuda_qa_features_name_cuda (f)) {
      f = gst_caps_features_copy (f);
      gst_caps_append_structure_full (device,
          gst_caps_steal_structure (caps, i), f);
    } else {
      i++;
    }
  }
  if (device_ok)
    return gst_caps_merge (device, caps);
  gst_caps_unref (device);
  return caps;
}

gboolean
gst_cuda_qa_decide_device_pool (GstElement * element, GstQuery * query,
    GstCudaContext * ctx, const GstVideoInfo * info)
{
  GstBufferPool *pool;
  GstStructure *config;
  GstCaps *caps;
  guint size, min = 2, max = 0;

  gst_query_parse_allocation (query, &caps, NULL);
  if (gst_query_get_n_allocation_pools (query) > 0) {
    gst_query_parse_nth_allocation_pool (query, 0, NULL, NULL, &min, &max);
    min = MAX (min, 2);
    if (max)
      max = MAX (max, min);
  }
  pool = gst_cuda_qa_device_pool_new (ctx);
  if (!pool)
    goto no_pool;
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (info),
      min, max);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config))
    goto config_failed;
  /* the pool's size is the pitched one it settled on */
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
  gst_structure_free (config);
  while (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_remove_nth_allocation_pool (query, 0);
  gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return TRUE;

  /* ERRORS */
no_pool:
  {
    GST_ELEMENT_ERROR (element, RESOURCE, FAILED, (NULL),
        ("no CUDA buffer pool for %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
config_failed:
  {
    GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS, (NULL),
        ("the CUDA buffer pool refused %" GST_PTR_FORMAT
            " (could not allocate a %dx%d frame?)", caps,
            GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info)));
    gst_object_unref (pool);
    return FALSE;
  }
}

#if HAVE_GST_CUDA

gboolean
gst_cuda_qa_context_ensure (GstElement * element, gint device_id,
    GstCudaContext ** ctx)
{
  if (!gst_cuda_qa_cuda_memory_usable ())
    return FALSE;
  return gst_cuda_ensure_element_context (element, device_id, ctx);
}

void
gst_cuda_qa_context_set (GstElement * element, GstContext * context,
    gint device_id, GstCudaContext ** ctx)
{
  if (gst_cuda_qa_cuda_memory_usable ())
    gst_cuda_handle_set_context (element, context, device_id, ctx);
}

gboolean
gst_cuda_qa_context_query (GstElement * element, GstQuery * query,
    GstCudaContext * ctx)
{
  if (GST_QUERY_TYPE (query) != GST_QUERY_CONTEXT || !ctx)
    return FALSE;
  return gst_cuda_handle_context_query (element, query, ctx);
}

void
gst_cuda_qa_context_clear (GstCudaContext ** ctx)
{
  gst_clear_object (ctx);
}

GstCudaContext *
gst_cuda_qa_context_ref (GstCudaContext * ctx)
{
  return ctx ? gst_object_ref (ctx) : NULL;
}

gint
gst_cuda_qa_context_device (GstCudaContext * ctx)
{
  guint id = 0;

  if (!ctx)
    return -1;
  g_object_get (ctx, "cuda-device-id", &id, NULL);
  return (gint) id;
}

gboolean
gst_cuda_qa_context_push (GstCudaContext * ctx)
{
  return !ctx || gst_cuda_context_push (ctx);
}

void
gst_cuda_qa_context_pop (GstCudaContext * ctx)
{
  if (ctx)
    gst_cuda_context_pop (NULL);
}

GstCudaContext *
gst_cuda_qa_buffer_context (GstBuffer * buf)
{
  guint i, n = gst_buffer_n_memory (buf);
  GstCudaContext *ctx = NULL;

  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);

    if (!gst_is_cuda_memory (mem))
      return NULL;
    if (ctx && GST_CUDA_MEMORY_CAST (mem)->context != ctx)
      return NULL;
    ctx = GST_CUDA_MEMORY_CAST (mem)->context;
  }
  return ctx;
}

gboolean
gst_cuda_qa_frame_map_device (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buf)
{
  return gst_video_frame_map (frame, (GstVideoInfo *) info, buf,
      GST_MAP_READ | GST_MAP_CUDA);
}

gboolean
gst_cuda_qa_frame_map_device_write (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buf)
{
  return gst_video_frame_map (frame, (GstVideoInfo *) info, buf,
      GST_MAP_WRITE | GST_MAP_CUDA);
}

/* ---- a CUDAMemory pool for single-plane gray frames ----
 *
 * GStreamer 1.22's CUDA allocator lays out only the formats nvcodec uses and
 * aborts on GRAY8/GRAY16_LE. A gray frame is one pitched plane, which is
 * exactly the layout the allocator gives a packed 4-byte format: each
 * memory is allocated as RGBA rows wide enough for a gray row (so the
 * memory stays a well-formed GstCudaMemory that nvcodec can copy), and the
 * buffer's GstVideoMeta describes it as the gray frame with the memory's
 * pitch as stride. Everything downstream maps frames through that meta. */

typedef struct
{
  GstBufferPool parent;
  GstCudaContext *context;
  GstCudaAllocator *allocator;
  GstVideoInfo info;            /* the gray frame */
  GstVideoInfo alloc_info;      /* the RGBA stand-in it is allocated as */
} GstCudaQaDevicePool;

typedef struct
{
  GstBufferPoolClass parent_class;
} GstCudaQaDevicePoolClass;

GType gst_cuda_qa_device_pool_get_type (void);
G_DEFINE_TYPE (GstCudaQaDevicePool, gst_cuda_qa_device_pool,
    GST_TYPE_BUFFER_POOL);

static const gchar **
gst_cuda_qa_device_pool_get_options (GstBufferPool * pool)
{
  static const gchar *options[] = { GST_BUFFER_POOL_OPTION_VIDEO_META, NULL };

  (void) pool;
  return options;
}

static GstMemory *
gst_cuda_qa_device_pool_alloc_memory (GstCudaQaDevicePool * self)
{
  return gst_cuda_allocator_alloc (self->allocator, self->context,
      &self->alloc_info);
}

static gboolean
gst_cuda_qa_device_pool_set_config (GstBufferPool * pool, GstStructure * config)
{
  GstCudaQaDevicePool *self = (GstCudaQaDevicePool *) pool;
  GstCaps *caps = NULL;
  guint min, max, row_bytes;
  GstMemory *probe;

  if (!gst_buffer_pool_config_get_params (config, &caps, NULL, &min, &max)
      || !caps || !gst_video_info_from_caps (&self->info, caps))
    goto bad_caps;
  if (GST_VIDEO_INFO_N_PLANES (&self->info) != 1
      || GST_VIDEO_INFO_N_COMPONENTS (&self->info) != 1)
    goto bad_caps;
  row_bytes = GST_VIDEO_INFO_WIDTH (&self->info) *
      GST_VIDEO_INFO_COMP_PSTRIDE (&self->info, 0);
  gst_video_info_set_format (&self->alloc_info, GST_VIDEO_FORMAT_RGBA,
      (row_bytes + 3) / 4, GST_VIDEO_INFO_HEIGHT (&self->info));

  /* the buffer size (pitch × rows) is the driver's choice: learn it */
  probe = gst_cuda_qa_device_pool_alloc_memory (self);
  if (!probe)
    goto no_memory;
  gst_buffer_pool_config_set_params (config, caps, probe->size, min, max);
  gst_memory_unref (probe);
  return
      GST_BUFFER_POOL_CLASS (gst_cuda_qa_device_pool_parent_class)->set_config
      (pool, config);

  /* ERRORS */
bad_caps:
  {
    GST_WARNING_OBJECT (pool, "not single-plane gray video: %" GST_PTR_FORMAT,
        caps);
    return FALSE;
  }
no_memory:
  {
    GST_WARNING_OBJECT (pool, "cannot allocate a %ux%u CUDA frame",
        GST_VIDEO_INFO_WIDTH (&self->info),
        GST_VIDEO_INFO_HEIGHT (&self->info));
    return FALSE;
  }
}

static GstFlowReturn
gst_cuda_qa_device_pool_alloc_buffer (GstBufferPool * pool,
    GstBuffer ** buffer, GstBufferPoolAcquireParams * params)
{
  GstCudaQaDevicePool *self = (GstCudaQaDevicePool *) pool;
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0, };
  gint stride[GST_VIDEO_MAX_PLANES] = { 0, };
  GstMemory *mem;
  GstBuffer *buf;

  (void) params;
  mem = gst_cuda_qa_device_pool_alloc_memory (self);
  if (!mem)
    return GST_FLOW_ERROR;
  buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, mem);
  stride[0] = (gint) GST_CUDA_MEMORY_CAST (mem)->info.stride[0];
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_INFO_FORMAT (&self->info), GST_VIDEO_INFO_WIDTH (&self->info),
      GST_VIDEO_INFO_HEIGHT (&self->info), 1, offset, stride);
  *buffer = buf;
  return GST_FLOW_OK;
}

static void
gst_cuda_qa_device_pool_finalize (GObject * object)
{
  GstCudaQaDevicePool *self = (GstCudaQaDevicePool *) object;

  gst_clear_object (&self->context);
  gst_clear_object (&self->allocator);
  G_OBJECT_CLASS (gst_cuda_qa_device_pool_parent_class)->finalize (object);
}

static void
gst_cuda_qa_device_pool_class_init (GstCudaQaDevicePoolClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS (klass);

  gobject_class->finalize = gst_cuda_qa_device_pool_finalize;
  pool_class->get_options = gst_cuda_qa_device_pool_get_options;
  pool_class->set_config = gst_cuda_qa_device_pool_set_config;
  pool_class->alloc_buffer = gst_cuda_qa_device_pool_alloc_buffer;
}

static void
gst_cuda_qa_device_pool_init (GstCudaQaDevicePool * self)
{
  (void) self;
}

GstBufferPool *
gst_cuda_qa_device_pool_new (GstCudaContext * ctx)
{
  GstCudaQaDevicePool *self;

  g_return_val_if_fail (ctx != NULL, NULL);
  if (!gst_cuda_qa_cuda_memory_usable ())
    return NULL;
  self = g_object_new (gst_cuda_qa_device_pool_get_type (), NULL);
  gst_object_ref_sink (self);
  self->context = gst_object_ref (ctx);
  self->allocator = (GstCudaAllocator *)
      gst_allocator_find (GST_CUDA_MEMORY_TYPE_NAME);
  if (!self->allocator) {
    gst_object_unref (self);
    return NULL;
  }
  return GST_BUFFER_POOL_CAST (self);
}

#else /* !HAVE_GST_CUDA */

gboolean
gst_cuda_qa_context_ensure (GstElement * element, gint device_id,
    GstCudaContext ** ctx)
{
  (void) element;
  (void) device_id;
  (void) ctx;
  return FALSE;
}

void
gst_cuda_qa_context_set (GstElement * element, GstContext * context,
    gint device_id, GstCudaContext ** ctx)
{
  (void) element;
  (void) context;
  (void) device_id;
  (void) ctx;
}

gboolean
gst_cuda_qa_context_query (GstElement * element, GstQuery * query,
    GstCudaContext * ctx)
{
  (void) element;
  (void) query;
  (void) ctx;
  return FALSE;
}

void
gst_cuda_qa_context_clear (GstCudaContext ** ctx)
{
  *ctx = NULL;
}

GstCudaContext *
gst_cuda_qa_context_ref (GstCudaContext * ctx)
{
  return ctx;
}

gint
gst_cuda_qa_context_device (GstCudaContext * ctx)
{
  (void) ctx;
  return -1;
}

gboolean
gst_cuda_qa_context_push (GstCudaContext * ctx)
{
  (void) ctx;
  return TRUE;
}

void
gst_cuda_qa_context_pop (GstCudaContext * ctx)
{
  (void) ctx;
}

GstCudaContext *
gst_cuda_qa_buffer_context (GstBuffer * buf)
{
  (void) buf;
  return NULL;
}

gboolean
gst_cuda_qa_frame_map_device (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buf)
{
  (void) frame;
  (void) info;
  (void) buf;
  return FALSE;
}

gboolean
gst_cuda_qa_frame_map_device_write (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buf)
{
  (void) frame;
  (void) info;
  (void) buf;
  return FALSE;
}

GstBufferPool *
gst_cuda_qa_device_pool_new (GstCudaContext * ctx)
{
  (void) ctx;
  return NULL;
}

#endif /* HAVE_GST_CUDA */

gboolean
gst_cuda_qa_frame_map_read (GstVideoFrame * frame, const GstVideoInfo * info,
    GstBuffer * buf, gboolean device)
{
  if (device)
    return gst_cuda_qa_frame_map_device (frame, info, buf);
  return gst_video_frame_map (frame, (GstVideoInfo *) info, buf, GST_MAP_READ);
}

/* ---- pinned host memory ---- */

typedef struct
{
  GstMemory mem;
  guint8 *data;                 /* of the root memory, shared by sub-memories */
} GstCudaQaPinnedMemory;

typedef struct
{
  GstAllocator parent;
} GstCudaQaPinnedAllocator;

typedef struct
{
  GstAllocatorClass parent_class;
} GstCudaQaPinnedAllocatorClass;

#define GST_CUDA_QA_PINNED_MEMORY_TYPE "CudaQaPinnedMemory"

GType gst_cuda_qa_pinned_allocator_get_type (void);
G_DEFINE_TYPE (GstCudaQaPinnedAllocator, gst_cuda_qa_pinned_allocator,
    GST_TYPE_ALLOCATOR);

static GstMemory *
gst_cuda_qa_pinned_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GstCudaQaPinnedMemory *mem;
  CqError err = { CQ_OK, "" };
  gsize maxsize = size + params->prefix + params->padding;
  guint8 *data;

  /* page-locked memory is page aligned: any alignment GStreamer asks for
   * (at most a page) holds */
  data = cq_cuda_host_alloc (maxsize, &err);
  if (!data) {
    GST_WARNING ("cannot allocate %" G_GSIZE_FORMAT " pinned bytes: %s",
        maxsize, err.message);
    return NULL;
  }
  mem = g_new0 (GstCudaQaPinnedMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (mem), params->flags, allocator, NULL,
      maxsize, params->align, params->prefix, size);
  mem->data = data;
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset (data, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset (data + params->prefix + size, 0, params->padding);
  return GST_MEMORY_CAST (mem);
}

static void
gst_cuda_qa_pinned_free (GstAllocator * allocator, GstMemory * memory)
{
  GstCudaQaPinnedMemory *mem = (GstCudaQaPinnedMemory *) memory;

  (void) allocator;
  if (!memory->parent)
    cq_cuda_host_free (mem->data);
  g_free (mem);
}

static gpointer
gst_cuda_qa_pinned_map (GstMemory * memory, gsize maxsize, GstMapFlags flags)
{
  (void) maxsize;
  (void) flags;
  return ((GstCudaQaPinnedMemory *) memory)->data;
}

static void
gst_cuda_qa_pinned_unmap (GstMemory * memory)
{
  (void) memory;
}

static GstMemory *
gst_cuda_qa_pinned_share (GstMemory * memory, gssize offset, gssize size)
{
  GstCudaQaPinnedMemory *mem = (GstCudaQaPinnedMemory *) memory, *sub;
  GstMemory *parent = memory->parent ? memory->parent : memory;

  if (size == -1)
    size = memory->size - offset;
  sub = g_new0 (GstCudaQaPinnedMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (sub),
      GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
      memory->allocator, parent, memory->maxsize, memory->align,
      memory->offset + offset, size);
  sub->data = mem->data;
  return GST_MEMORY_CAST (sub);
}

/* A copy is ordinary system memory: only frames from the pool need to be
 * pinned. */
static GstMemory *
gst_cuda_qa_pinned_copy (GstMemory * memory, gssize offset, gssize size)
{
  GstMemory *copy;
  GstMapInfo map;

  if (size == -1)
    size = memory->size > (gsize) offset ? memory->size - offset : 0;
  copy = gst_allocator_alloc (NULL, size, NULL);
  if (copy && gst_memory_map (copy, &map, GST_MAP_WRITE)) {
    memcpy (map.data, ((GstCudaQaPinnedMemory *) memory)->data +
        memory->offset + offset, size);
    gst_memory_unmap (copy, &map);
  }
  return copy;
}

static void
gst_cuda_qa_pinned_allocator_class_init (GstCudaQaPinnedAllocatorClass * klass)
{
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);

  allocator_class->alloc = gst_cuda_qa_pinned_alloc;
  allocator_class->free = gst_cuda_qa_pinned_free;
}

static void
gst_cuda_qa_pinned_allocator_init (GstCudaQaPinnedAllocator * self)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST (self);

  alloc->mem_type = GST_CUDA_QA_PINNED_MEMORY_TYPE;
  alloc->mem_map = gst_cuda_qa_pinned_map;
  alloc->mem_unmap = gst_cuda_qa_pinned_unmap;
  alloc->mem_share = gst_cuda_qa_pinned_share;
  alloc->mem_copy = gst_cuda_qa_pinned_copy;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstAllocator *
gst_cuda_qa_pinned_allocator_get (void)
{
  static GstAllocator *allocator = NULL;

  if (!gst_cuda_qa_have_device ())
    return NULL;
  if (g_once_init_enter (&allocator)) {
    GstAllocator *a = g_object_new (gst_cuda_qa_pinned_allocator_get_type (),
        NULL);

    gst_object_ref_sink (a);
    /* process-wide: GStreamer keeps registered allocators alive */
    gst_allocator_register (GST_CUDA_QA_PINNED_MEMORY_TYPE, gst_object_ref (a));
    g_once_init_leave (&allocator, a);
  }
  return gst_object_ref (allocator);
}

gboolean
gst_cuda_qa_propose_pinned_pool (GstElement * element, GstQuery * query)
{
  GstCaps *caps;
  GstVideoInfo info;
  GstAllocator *allocator;
  GstAllocationParams params;
  GstBufferPool *pool;
  GstStructure *config;
  gboolean need_pool;

  gst_cuda_qa_cuda_init_debug ();
  gst_query_parse_allocation (query, &caps, &need_pool);
  if (!caps || gst_cuda_qa_caps_is_cuda (caps)
      || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  allocator = gst_cuda_qa_pinned_allocator_get ();
  if (!allocator)
    return FALSE;

  gst_allocation_params_init (&params);
  gst_query_add_allocation_param (query, allocator, &params);
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  if (need_pool) {
    pool = gst_video_buffer_pool_new ();
    config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, info.size, 0, 0);
    gst_buffer_pool_config_set_allocator (config, allocator, &params);
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config)) {
      GST_WARNING_OBJECT (element, "pinned pool rejected its configuration");
    } else {
      /* at least the frame being measured and the one being filled */
      gst_query_add_allocation_pool (query, pool, info.size, 2, 0);
      GST_DEBUG_OBJECT (element, "proposing a pinned pool of %"
          G_GSIZE_FORMAT "-byte buffers", info.size);
    }
    gst_object_unref (pool);
  }
  gst_object_unref (allocator);
  return TRUE;
}
