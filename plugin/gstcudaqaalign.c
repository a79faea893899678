/* GStreamer CUDA video quality: frame alignment by content.
 *
 * The thumbnails and distances are the compute library's (cq-align.h):
 * on the CUDA backend, when the reference frames come as CUDAMemory, in
 * device memory of their context, made by a kernel straight from the
 * frame's plane (no download); from system memory on the CUDA backend, by
 * the same kernel from the frame's device copy (gstcudaqaupload.h: the
 * upload the SSIM of its pair then reads too); otherwise on the CPU from a
 * read mapping.
 * Every thumbnail has a slot of the library's object: a reference frame's
 * while it is in the ring, the distorted frame's (the probe) for a search.
 * The decision stays here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "gstcudaqaalign.h"
#include "gstcudaqacuda.h"
#include "gstcudaqaupload.h"
#include "cq-align.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_qa_align_debug);
#define GST_CAT_DEFAULT gst_cuda_qa_align_debug

typedef struct
{
  GstBuffer *buf;
  guint64 index;                /* reference frame number */
  GstClockTime rt;
  gint slot;                    /* of its thumbnail; -1: none */
  gboolean paired;
} GstCudaQaAlignRef;

struct _GstCudaQaAlign
{
  GstElement *element;          /* not a reference: the helper is its part */
  gchar *message_name;
  GstCudaQaDevice *dev;         /* borrowed; NULL: the CPU searches */
  gboolean luma;                /* the element measures luma only */
  GstCudaQaAlignMode mode;
  guint window;
  gdouble min_margin;
  GQueue ring;                  /* GstCudaQaAlignRef, by index */
  guint64 next_ref, next_dist;  /* the next frames' numbers */
  gint64 offset;                /* reference number - distorted number */
  gboolean decided;             /* a search decided (start: searching ends) */
  guint64 changes, dropped, repeated, undecided;

  /* the search, set up at a stream's first thumbnail (setup_done); neither
   * object where the format has no usable first component */
  gboolean setup_done;
  GstVideoFormat format;        /* what it was set up for */
  gint width, height;
  CqAlignCpu *cpu;
  CqAlignCuda *cuda;
  GstCudaContext *cuda_ctx;     /* where cuda lives: device frames of it
                                 * are read in place */
  GstCudaQaUpload *upload;      /* system memory on CUDA: device copies */
  guint thumb_plane;            /* where the first component is in them */
  gsize thumb_offset;
  GstBuffer *coming[2];         /* the pads' next frames, given copies
                                 * early (held: a pool cannot take them
                                 * back and change them meanwhile) */
  GstBuffer *probe_buf;         /* whose thumbnail the probe slot holds */
  gdouble norm;                 /* factor⁴ tw th: distance to mean squared
                                 * difference of the block means */
  guint n_slots, probe;         /* probe: the distorted frame's slot */
  guint *free_slots, n_free;
  guint *cand_slots;            /* a search's candidates (n_slots each) */
  GstCudaQaAlignRef **cands;
  guint64 *distances;
  GPtrArray *queued;            /* frames whose thumbnail kernel may still
                                 * read them (until the next search) */
  /* a search launched ahead on CUDA (gst_cuda_qa_align_launch): the
   * distorted frame, the window it was made for, its candidates in cands
   * and cand_slots; NULL: none */
  GstBuffer *ahead;
  gint64 ahead_lo, ahead_hi;
  guint ahead_n;
};

GType
gst_cuda_qa_align_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_QA_ALIGN_NONE, "Pair frames of the same running time", "none"},
    {GST_CUDA_QA_ALIGN_START,
        "Find the offset by content over the first frames, then keep it",
        "start"},
    {GST_CUDA_QA_ALIGN_CONTINUOUS,
          "Find the offset by content at every frame (follows dropped and "
          "repeated frames)", "continuous"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaQaAlignMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GstCudaQaAlign *
gst_cuda_qa_align_new (GstElement * element, const gchar * message_name)
{
  GstCudaQaAlign *align = g_new0 (GstCudaQaAlign, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_cuda_qa_align_debug, "cudaqaalign", 0,
        "cudaquality: aligning distorted frames with reference frames");
    g_once_init_leave (&done, 1);
  }
  align->element = element;
  align->message_name = g_strdup_printf ("%s-aligned", message_name);
  g_queue_init (&align->ring);
  align->queued = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_cuda_qa_upload_unref);
  return align;
}

void
gst_cuda_qa_align_set_device (GstCudaQaAlign * align, GstCudaQaDevice * dev,
    gboolean luma)
{
  align->dev = dev;
  align->luma = luma;
}

static void
gst_cuda_qa_align_ref_free (GstCudaQaAlign * align, GstCudaQaAlignRef * r)
{
  if (r->slot >= 0)
    align->free_slots[align->n_free++] = (guint) r->slot;
  gst_cuda_qa_upload_unref (r->buf);
  g_free (r);
}

/* Drops the oldest entry, counting it into *unpaired if it never paired. */
static void
gst_cuda_qa_align_pop (GstCudaQaAlign * align, guint64 * unpaired)
{
  GstCudaQaAlignRef *r = g_queue_pop_head (&align->ring);

  gst_clear_buffer (&align->ahead);
  if (!r->paired) {
    (*unpaired)++;
    GST_LOG_OBJECT (align->element, "reference frame %" G_GUINT64_FORMAT
        " (%" GST_TIME_FORMAT ") matched no distorted frame", r->index,
        GST_TIME_ARGS (GST_BUFFER_PTS (r->buf)));
  }
  gst_cuda_qa_align_ref_free (align, r);
}

void
gst_cuda_qa_align_flush (GstCudaQaAlign * align, guint64 * unpaired)
{
  while (!g_queue_is_empty (&align->ring))
    gst_cuda_qa_align_pop (align, unpaired);
}

/* The search's objects go (the CUDA one once its kernels are done, so the
 * frames they read can go too), with the thumbnails of the frames in the
 * ring; the next thumbnail sets it up again. */
static void
gst_cuda_qa_align_drop_search (GstCudaQaAlign * align)
{
  GList *l;

  for (l = align->ring.head; l; l = l->next)
    ((GstCudaQaAlignRef *) l->data)->slot = -1;
  g_clear_pointer (&align->cuda, cq_align_cuda_free);
  g_clear_pointer (&align->cpu, cq_align_cpu_free);
  gst_clear_buffer (&align->probe_buf);
  gst_clear_buffer (&align->ahead);
  /* copies on buffers still held stay valid */
  g_clear_pointer (&align->upload, gst_cuda_qa_upload_free);
  g_ptr_array_set_size (align->queued, 0);
  gst_cuda_qa_context_clear (&align->cuda_ctx);
  g_clear_pointer (&align->free_slots, g_free);
  g_clear_pointer (&align->cand_slots, g_free);
  g_clear_pointer (&align->cands, g_free);
  g_clear_pointer (&align->distances, g_free);
  align->n_slots = align->n_free = 0;
  align->setup_done = FALSE;
}

static void
gst_cuda_qa_align_release (GstCudaQaAlign * align)
{
  guint64 ignored = 0;

  g_clear_pointer (&align->coming[0], gst_cuda_qa_upload_unref);
  g_clear_pointer (&align->coming[1], gst_cuda_qa_upload_unref);
  gst_cuda_qa_align_flush (align, &ignored);
  gst_cuda_qa_align_drop_search (align);
}

void
gst_cuda_qa_align_stop (GstCudaQaAlign * align)
{
  gst_cuda_qa_align_release (align);
}

void
gst_cuda_qa_align_free (GstCudaQaAlign * align)
{
  gst_cuda_qa_align_release (align);
  g_ptr_array_unref (align->queued);
  g_free (align->message_name);
  g_free (align);
}

void
gst_cuda_qa_align_reset (GstCudaQaAlign * align, GstCudaQaAlignMode mode,
    guint window, gdouble min_margin)
{
  gst_cuda_qa_align_release (align);
  align->mode = mode;
  align->window = window;
  align->min_margin = min_margin;
  align->next_ref = align->next_dist = 0;
  align->offset = 0;
  align->decided = FALSE;
  align->changes = align->dropped = align->repeated = align->undecided = 0;
}

/* Frames on each side of the expected one that the next distorted frame
 * is compared with: none once `start` has decided. */
static guint
gst_cuda_qa_align_reach (GstCudaQaAlign * align)
{
  return align->mode == GST_CUDA_QA_ALIGN_START && align->decided ? 0 :
      align->window;
}

/* The reference number the next distorted frame is expected at. */
static gint64
gst_cuda_qa_align_expected (GstCudaQaAlign * align)
{
  return (gint64) align->next_dist + align->offset;
}

gboolean
gst_cuda_qa_align_wants_reference (GstCudaQaAlign * align)
{
  return (gint64) align->next_ref <= gst_cuda_qa_align_expected (align) +
      gst_cuda_qa_align_reach (align);
}

gboolean
gst_cuda_qa_align_ready (GstCudaQaAlign * align)
{
  return !gst_cuda_qa_align_wants_reference (align);
}

/* Reference frames before the next distorted frame's first candidate
 * leave the ring. */
static void
gst_cuda_qa_align_trim (GstCudaQaAlign * align, guint64 * unpaired)
{
  gint64 first = gst_cuda_qa_align_expected (align) -
      gst_cuda_qa_align_reach (align);
  GstCudaQaAlignRef *r;

  while ((r = g_queue_peek_head (&align->ring)) && (gint64) r->index < first)
    gst_cuda_qa_align_pop (align, unpaired);
}

static int
gst_cuda_qa_align_push_context (void *ctx)
{
  return gst_cuda_qa_context_push (ctx);
}

static void
gst_cuda_qa_align_pop_context (void *ctx)
{
  gst_cuda_qa_context_pop (ctx);
}

/* System memory on CUDA: each frame the search reads goes up once, as a
 * device copy of the planes the element measures in the context it
 * measures in (gstcudaqaupload.h), which the SSIM of its pair reads too;
 * the search runs there. */
static void
gst_cuda_qa_align_setup_upload (GstCudaQaAlign * align,
    const GstVideoInfo * info, const CqAlignPlane * plane)
{
  CqError err = { CQ_OK, "" };
  CqCudaTarget target;
  GstCudaQaPlanes planes;

  gst_cuda_qa_device_target (align->dev, &target);
  gst_cuda_qa_format_planes (info, align->luma, &planes);
  /* the ring's frames, the probe, the pairs in flight and a margin; when
   * they are all taken a frame is searched and measured from host memory */
  align->upload = gst_cuda_qa_upload_new (&target, info, &planes,
      align->n_slots + 8, &err);
  if (align->upload)
    align->cuda = cq_align_cuda_new_for (&target, plane, align->n_slots, &err);
  if (!align->cuda) {
    GST_WARNING_OBJECT (align->element, "no device copies, searching on "
        "the CPU: %s", err.message);
    g_clear_pointer (&align->upload, gst_cuda_qa_upload_free);
    return;
  }
  align->thumb_plane = GST_VIDEO_INFO_COMP_PLANE (info, 0);
  align->thumb_offset = GST_VIDEO_INFO_COMP_POFFSET (info, 0);
}

/* The search for frames of info, at the first thumbnail (buf): on CUDA
 * when the element measures there, in the context of buf's CUDAMemory
 * or, for system memory, on device copies; else on the CPU. Thumbnails
 * are block means of the first component (luma, or R of RGB) in 8-bit
 * units (cq-align.h). FALSE: no
 * thumbnails this stream (every search undecided). */
static gboolean
gst_cuda_qa_align_setup (GstCudaQaAlign * align, GstBuffer * buf,
    const GstVideoInfo * info)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  CqError err = { CQ_OK, "" };
  CqAlignPlane plane = { 0, };
  GstCudaContext *ctx = NULL;
  guint factor, tw, th, i;

  align->setup_done = TRUE;
  align->format = GST_VIDEO_INFO_FORMAT (info);
  align->width = GST_VIDEO_INFO_WIDTH (info);
  align->height = GST_VIDEO_INFO_HEIGHT (info);
  plane.width = GST_VIDEO_INFO_WIDTH (info);
  plane.height = GST_VIDEO_INFO_HEIGHT (info);
  plane.layout.depth = GST_VIDEO_FORMAT_INFO_DEPTH (finfo, 0);
  plane.layout.shift = GST_VIDEO_FORMAT_INFO_SHIFT (finfo, 0);
  plane.layout.kind = plane.layout.depth > 8 ? CQ_LAYOUT_GRAY16 :
      CQ_LAYOUT_GRAY8;
  plane.sample_stride = MAX (GST_VIDEO_INFO_COMP_PSTRIDE (info, 0), 0);
  /* every reference frame a search may need, and the distorted one */
  align->n_slots = MIN (2 * align->window + 3, CQ_ALIGN_MAX_SLOTS);
  if (cq_align_check (&plane, align->n_slots, &err) != CQ_OK)
    goto unusable;

  if (align->dev && gst_cuda_qa_device_is_cuda (align->dev)) {
    ctx = gst_cuda_qa_buffer_context (buf);
    if (!ctx)
      gst_cuda_qa_align_setup_upload (align, info, &plane);
  }
  if (ctx) {
    CqCudaTarget target = { CQ_CUDA_CURRENT_CONTEXT,
      gst_cuda_qa_align_push_context, gst_cuda_qa_align_pop_context, ctx
    };

    align->cuda = cq_align_cuda_new_for (&target, &plane, align->n_slots, &err);
    if (align->cuda)
      align->cuda_ctx = gst_cuda_qa_context_ref (ctx);
    else
      GST_WARNING_OBJECT (align->element, "searching on the CPU: %s",
          err.message);
  }
  if (!align->cuda) {
    align->cpu = cq_align_cpu_new (&plane, align->n_slots, &err);
    if (!align->cpu)
      goto unusable;
  }
  cq_align_thumb_size (&plane, &factor, &tw, &th);
  align->norm = MAX ((gdouble) factor * factor * factor * factor * tw * th,
      1.0);
  align->probe = align->n_slots - 1;
  align->free_slots = g_new (guint, align->n_slots);
  for (i = 0; i < align->probe; i++)
    align->free_slots[i] = align->probe - 1 - i;
  align->n_free = align->probe;
  align->cand_slots = g_new (guint, align->n_slots);
  align->cands = g_new (GstCudaQaAlignRef *, align->n_slots);
  align->distances = g_new (guint64, align->n_slots);
  GST_INFO_OBJECT (align->element, "searching with %ux%u thumbnails "
      "(%ux%u blocks) of %s %ux%u on %s", tw, th, factor, factor,
      GST_VIDEO_INFO_NAME (info), plane.width, plane.height,
      align->upload ? "CUDA from device copies" : align->cuda ? "CUDA" :
      "the CPU");
  return TRUE;

unusable:
  GST_WARNING_OBJECT (align->element, "no alignment thumbnails of %s: %s",
      GST_VIDEO_INFO_NAME (info), err.message);
  align->n_slots = 0;
  return FALSE;
}

/* The thumbnail of a system-memory frame from its device copy (made
 * here). FALSE: no copy (all taken, or the upload failed), the host
 * thumbnail then. */
static gboolean
gst_cuda_qa_align_thumbnail_copy (GstCudaQaAlign * align, GstBuffer * buf,
    guint slot)
{
  CqError err = { CQ_OK, "" };
  CqFramesCuda *frames;
  guint frame, i;

  /* a copy made while we held the buffer is current; any other may be of
   * earlier content */
  i = buf == align->coming[0] ? 0 : buf == align->coming[1] ? 1 : 2;
  if (i < 2 && gst_cuda_qa_upload_get (buf, &frame) ==
      gst_cuda_qa_upload_frames (align->upload))
    g_clear_pointer (&align->coming[i], gst_buffer_unref);
  else if (!gst_cuda_qa_upload_frame (align->upload, buf, &err))
    goto failed;
  frames = gst_cuda_qa_upload_get (buf, &frame);
  if (cq_align_cuda_thumbnail_frame (align->cuda, slot, frames, frame,
          align->thumb_plane, align->thumb_offset, &err) != CQ_OK)
    goto failed;
  /* the kernel reads the copy later: it stays until the next search */
  g_ptr_array_add (align->queued, gst_buffer_ref (buf));
  return TRUE;

  /* ERRORS */
failed:
  {
    GST_LOG_OBJECT (align->element, "thumbnail from host memory: %s",
        err.message);
    return FALSE;
  }
}

/* The thumbnail of buf (read as info) into slot. FALSE if it cannot be
 * made. */
static gboolean
gst_cuda_qa_align_thumbnail (GstCudaQaAlign * align, GstBuffer * buf,
    const GstVideoInfo * info, guint slot)
{
  CqError err = { CQ_OK, "" };
  GstVideoFrame frame;
  gboolean device;
  CqStatus ret;

  if (align->upload && gst_cuda_qa_align_thumbnail_copy (align, buf, slot))
    return TRUE;
  device = align->cuda_ctx
      && gst_cuda_qa_buffer_context (buf) == align->cuda_ctx;
  if (!gst_cuda_qa_frame_map_read (&frame, info, buf, device))
    goto map_failed;
  if (device)
    ret = cq_align_cuda_thumbnail_device (align->cuda, slot,
        GST_VIDEO_FRAME_COMP_DATA (&frame, 0),
        GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0), &err);
  else if (align->cuda)
    ret = cq_align_cuda_thumbnail_host (align->cuda, slot,
        GST_VIDEO_FRAME_COMP_DATA (&frame, 0),
        GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0), &err);
  else
    ret = cq_align_cpu_thumbnail (align->cpu, slot,
        GST_VIDEO_FRAME_COMP_DATA (&frame, 0),
        GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0), &err);
  gst_video_frame_unmap (&frame);
  if (ret != CQ_OK)
    goto failed;
  /* the kernel reads the frame later: it stays until the next search */
  if (device)
    g_ptr_array_add (align->queued, gst_buffer_ref (buf));
  return TRUE;

  /* ERRORS */
map_failed:
  {
    GST_WARNING_OBJECT (align->element, "cannot map a %" G_GSIZE_FORMAT
        "-byte buffer as %s for its thumbnail", gst_buffer_get_size (buf),
        GST_VIDEO_INFO_NAME (info));
    return FALSE;
  }
failed:
  {
    GST_WARNING_OBJECT (align->element, "no thumbnail: %s", err.message);
    return FALSE;
  }
}

/* Whether thumbnails can be made for info (setting the search up at the
 * stream's first, buf). */
static gboolean
gst_cuda_qa_align_can_search (GstCudaQaAlign * align, GstBuffer * buf,
    const GstVideoInfo * info)
{
  if (!info)
    return FALSE;
  /* new caps: earlier thumbnails compare with nothing of the new size */
  if (align->setup_done && (align->format != GST_VIDEO_INFO_FORMAT (info)
          || align->width != GST_VIDEO_INFO_WIDTH (info)
          || align->height != GST_VIDEO_INFO_HEIGHT (info))) {
    GST_INFO_OBJECT (align->element, "the format changed: searching again "
        "from the next reference frames");
    gst_cuda_qa_align_drop_search (align);
  }
  if (!align->setup_done)
    gst_cuda_qa_align_setup (align, buf, info);
  return align->n_slots > 0;
}

void
gst_cuda_qa_align_push_reference (GstCudaQaAlign * align, GstBuffer * ref,
    GstClockTime rt, const GstVideoInfo * info, guint64 * unpaired)
{
  GstCudaQaAlignRef *r = g_new0 (GstCudaQaAlignRef, 1);

  /* a search launched ahead did not see this frame */
  gst_clear_buffer (&align->ahead);
  r->buf = ref;
  r->index = align->next_ref++;
  r->rt = rt;
  r->slot = -1;
  /* start searches no more once it decided */
  if (gst_cuda_qa_align_reach (align) > 0
      && gst_cuda_qa_align_can_search (align, ref, info) && align->n_free > 0) {
    guint slot = align->free_slots[--align->n_free];

    if (gst_cuda_qa_align_thumbnail (align, ref, info, slot))
      r->slot = (gint) slot;
    else
      align->free_slots[align->n_free++] = slot;
  }
  g_queue_push_tail (&align->ring, r);
  gst_cuda_qa_align_trim (align, unpaired);
}

static void
gst_cuda_qa_align_post (GstCudaQaAlign * align, GstBuffer * dist,
    GstClockTime dist_rt, GstCudaQaAlignRef * r, gint64 previous,
    gdouble margin)
{
  gint64 ns = GST_CLOCK_TIME_IS_VALID (r->rt)
      && GST_CLOCK_TIME_IS_VALID (dist_rt) ? (gint64) r->rt -
      (gint64) dist_rt : 0;
  GstStructure *s = gst_structure_new (align->message_name,
      "timestamp", G_TYPE_UINT64, GST_BUFFER_PTS (dist),
      "running-time", G_TYPE_UINT64, dist_rt,
      "distorted-frame", G_TYPE_UINT64, align->next_dist,
      "reference-frame", G_TYPE_UINT64, r->index,
      "reference-timestamp", G_TYPE_UINT64, GST_BUFFER_PTS (r->buf),
      "offset-frames", G_TYPE_INT64, align->offset,
      "previous-offset-frames", G_TYPE_INT64, previous,
      "offset", G_TYPE_INT64, ns,
      "margin", G_TYPE_DOUBLE, margin, NULL);

  GST_INFO_OBJECT (align->element, "distorted frame %" G_GUINT64_FORMAT
      " shows reference frame %" G_GUINT64_FORMAT ": offset %" G_GINT64_FORMAT
      " frames (was %" G_GINT64_FORMAT "), %" G_GINT64_FORMAT " ns, margin "
      "%.3f", align->next_dist, r->index, align->offset, previous, ns, margin);
  gst_element_post_message (align->element,
      gst_message_new_element (GST_OBJECT (align->element), s));
}

/* The ring's frames with thumbnails in [lo, hi] (ring order) into cands
 * and cand_slots; their count. */
static guint
gst_cuda_qa_align_candidates (GstCudaQaAlign * align, gint64 lo, gint64 hi)
{
  guint n = 0;
  GList *l;

  for (l = align->ring.head; l; l = l->next) {
    GstCudaQaAlignRef *r = l->data;

    if ((gint64) r->index < lo || (gint64) r->index > hi || r->slot < 0)
      continue;
    align->cands[n] = r;
    align->cand_slots[n++] = (guint) r->slot;
  }
  return n;
}

/* On CUDA, the search of dist, the next distorted frame, queued now: its
 * thumbnail, then its distances, which its match collects unless the ring
 * changed meanwhile. The host goes on with the pairs before while the
 * kernels wait for the frame's upload and for the SMs the SSIM kernels
 * hold. */
static void
gst_cuda_qa_align_launch (GstCudaQaAlign * align, GstBuffer * dist,
    const GstVideoInfo * info)
{
  gint64 lo = gst_cuda_qa_align_expected (align) - align->window;
  gint64 hi = gst_cuda_qa_align_expected (align) + align->window;
  CqError err = { CQ_OK, "" };
  guint n;

  /* only where its match searches (gst_cuda_qa_align_match) */
  if (!dist || dist == align->ahead || GST_BUFFER_FLAG_IS_SET (dist,
          GST_BUFFER_FLAG_GAP)
      || (align->mode != GST_CUDA_QA_ALIGN_CONTINUOUS && align->decided)
      || !gst_cuda_qa_align_can_search (align, dist, info) || !align->cuda)
    return;
  gst_clear_buffer (&align->ahead);
  if (dist != align->probe_buf) {
    gst_clear_buffer (&align->probe_buf);
    if (!gst_cuda_qa_align_thumbnail (align, dist, info, align->probe))
      return;
    align->probe_buf = gst_buffer_ref (dist);
  }
  n = gst_cuda_qa_align_candidates (align, lo, hi);
  if (cq_align_cuda_distances_launch (align->cuda, align->probe,
          align->cand_slots, n, &err) != CQ_OK) {
    GST_WARNING_OBJECT (align->element, "alignment search failed: %s",
        err.message);
    return;
  }
  align->ahead = gst_buffer_ref (dist);
  align->ahead_lo = lo;
  align->ahead_hi = hi;
  align->ahead_n = n;
}

/* Compares the distorted frame with the candidates (ring order: of
 * equal distances the first wins); a decisive best match sets the
 * offset. */
static void
gst_cuda_qa_align_search (GstCudaQaAlign * align, GstBuffer * dist,
    GstClockTime dist_rt, const GstVideoInfo * info)
{
  gint64 lo = gst_cuda_qa_align_expected (align) - align->window;
  gint64 hi = gst_cuda_qa_align_expected (align) + align->window;
  CqError err = { CQ_OK, "" };
  GstCudaQaAlignRef *best = NULL;
  guint64 d1 = 0, d2 = 0;
  gboolean have2 = FALSE;
  gdouble margin;
  gint64 previous = align->offset;
  guint i, n = 0;
  CqStatus ret;

  if (align->ahead == dist && align->ahead_lo == lo && align->ahead_hi == hi) {
    /* launched ahead, the ring as it was then */
    gst_clear_buffer (&align->ahead);
    gst_clear_buffer (&align->probe_buf);
    n = align->ahead_n;
    ret = cq_align_cuda_distances_collect (align->cuda, align->distances,
        &err);
    goto compare;
  }
  gst_clear_buffer (&align->ahead);
  if (!gst_cuda_qa_align_can_search (align, dist, info)
      || (dist != align->probe_buf
          && !gst_cuda_qa_align_thumbnail (align, dist, info, align->probe)))
    goto undecided;
  gst_clear_buffer (&align->probe_buf);

  n = gst_cuda_qa_align_candidates (align, lo, hi);
  if (align->cuda)
    ret = cq_align_cuda_distances (align->cuda, align->probe,
        align->cand_slots, n, align->distances, &err);
  else
    ret = cq_align_cpu_distances (align->cpu, align->probe,
        align->cand_slots, n, align->distances, &err);
compare:
  /* the kernels that read queued frames are done */
  g_ptr_array_set_size (align->queued, 0);
  if (ret != CQ_OK)
    goto failed;
  for (i = 0; i < n; i++) {
    guint64 d = align->distances[i];

    if (!best || d < d1) {
      have2 = best != NULL;
      d2 = d1;
      d1 = d;
      best = align->cands[i];
    } else if (!have2 || d < d2) {
      have2 = TRUE;
      d2 = d;
    }
  }
  /* one candidate alone, or none: nothing to tell apart */
  margin = best && have2 && d2 > 0 ? (gdouble) (d2 - d1) / (gdouble) d2 : 0.0;
  if (!best || margin < align->min_margin)
    goto undecided;
  align->offset = (gint64) best->index - (gint64) align->next_dist;
  if (align->offset != previous) {
    align->changes++;
    if (align->decided && align->offset > previous)
      align->dropped += align->offset - previous;
    else if (align->decided)
      align->repeated += previous - align->offset;
    gst_cuda_qa_align_post (align, dist, dist_rt, best, previous, margin);
  }
  align->decided = TRUE;
  return;

failed:
  GST_WARNING_OBJECT (align->element, "alignment search failed: %s",
      err.message);
undecided:
  align->undecided++;
  GST_DEBUG_OBJECT (align->element, "distorted frame %" G_GUINT64_FORMAT
      ": no decisive match (best %g, second %g), keeping offset %"
      G_GINT64_FORMAT, align->next_dist, best ? d1 / align->norm : INFINITY,
      have2 ? d2 / align->norm : INFINITY, align->offset);
}

/* With device copies: next, the frame due next on pad i (0: distorted,
 * 1: reference), goes up now unless it has. */
static void
gst_cuda_qa_align_upload_coming (GstCudaQaAlign * align, guint i,
    GstBuffer * next)
{
  /* (a distorted frame whose thumbnail is made has used its copy) */
  if (!align->upload || next == align->coming[i] || (i == 0
          && next == align->probe_buf))
    return;
  g_clear_pointer (&align->coming[i], gst_cuda_qa_upload_unref);
  if (!next || GST_BUFFER_FLAG_IS_SET (next, GST_BUFFER_FLAG_GAP)
      || gst_cuda_qa_buffer_context (next)
      || !gst_cuda_qa_upload_frame (align->upload, next, NULL))
    return;
  align->coming[i] = gst_buffer_ref (next);
}

void
gst_cuda_qa_align_prefetch (GstCudaQaAlign * align, GstBuffer * ref,
    GstBuffer * dist, const GstVideoInfo * info)
{
  /* the distorted frame first: its search waits for its DMA, which a
   * host copy beside it slows */
  gst_cuda_qa_align_upload_coming (align, 0, dist);
  gst_cuda_qa_align_launch (align, dist, info);
  gst_cuda_qa_align_upload_coming (align, 1, ref);
}

GstBuffer *
gst_cuda_qa_align_match (GstCudaQaAlign * align, GstBuffer * dist,
    GstClockTime rt, const GstVideoInfo * info)
{
  GstBuffer *ref = NULL;
  gint64 want;
  GList *l;

  if (align->mode == GST_CUDA_QA_ALIGN_CONTINUOUS || !align->decided)
    gst_cuda_qa_align_search (align, dist, rt, info);
  want = gst_cuda_qa_align_expected (align);
  for (l = align->ring.head; l; l = l->next) {
    GstCudaQaAlignRef *r = l->data;

    if ((gint64) r->index == want) {
      r->paired = TRUE;
      ref = gst_buffer_ref (r->buf);
      break;
    }
  }
  /* frames this leaves behind are counted when the ring next trims */
  align->next_dist++;
  return ref;
}

GstClockTime
gst_cuda_qa_align_latency (GstCudaQaAlign * align, const GstVideoInfo * info)
{
  if (align->mode == GST_CUDA_QA_ALIGN_NONE || !info
      || GST_VIDEO_INFO_FPS_N (info) <= 0)
    return 0;
  return gst_util_uint64_scale (GST_SECOND, (guint64) align->window *
      GST_VIDEO_INFO_FPS_D (info), GST_VIDEO_INFO_FPS_N (info));
}

void
gst_cuda_qa_align_summary (GstCudaQaAlign * align, GstStructure * s)
{
  GEnumClass *klass = g_type_class_ref (GST_TYPE_CUDA_QA_ALIGN_MODE);

  gst_structure_set (s, "align", G_TYPE_STRING,
      g_enum_get_value (klass, align->mode)->value_nick,
      "offset-frames", G_TYPE_INT64, align->offset,
      "offset-changes", G_TYPE_UINT64, align->changes,
      "dropped-frames", G_TYPE_UINT64, align->dropped,
      "repeated-frames", G_TYPE_UINT64, align->repeated,
      "undecided-frames", G_TYPE_UINT64, align->undecided, NULL);
  g_type_class_unref (klass);
}
