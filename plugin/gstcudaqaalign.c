/* GStreamer CUDA video quality: frame alignment by content.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "gstcudaqaalign.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_qa_align_debug);
#define GST_CAT_DEFAULT gst_cuda_qa_align_debug

/* Thumbnails are at most this wide: a 2x2..NxN average of the luma. */
#define THUMB_MAX_WIDTH 320

typedef struct
{
  GstBuffer *buf;
  guint64 index;                /* reference frame number */
  GstClockTime rt;
  gfloat *thumb;                /* NULL: could not be read */
  gboolean paired;
} GstCudaQaAlignRef;

struct _GstCudaQaAlign
{
  GstElement *element;          /* not a reference: the helper is its part */
  gchar *message_name;
  GstCudaQaAlignMode mode;
  guint window;
  gdouble min_margin;
  GQueue ring;                  /* GstCudaQaAlignRef, by index */
  guint64 next_ref, next_dist;  /* the next frames' numbers */
  gint64 offset;                /* reference number - distorted number */
  gboolean decided;             /* a search decided (start: searching ends) */
  guint factor, tw, th;         /* thumbnails: tw x th averages of factor² */
  gfloat *dist_thumb;
  guint64 changes, dropped, repeated, undecided;
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
  return align;
}

static void
gst_cuda_qa_align_ref_free (GstCudaQaAlignRef * r)
{
  gst_buffer_unref (r->buf);
  g_free (r->thumb);
  g_free (r);
}

/* Drops the oldest entry, counting it into *unpaired if it never paired. */
static void
gst_cuda_qa_align_pop (GstCudaQaAlign * align, guint64 * unpaired)
{
  GstCudaQaAlignRef *r = g_queue_pop_head (&align->ring);

  if (!r->paired) {
    (*unpaired)++;
    GST_LOG_OBJECT (align->element, "reference frame %" G_GUINT64_FORMAT
        " (%" GST_TIME_FORMAT ") matched no distorted frame", r->index,
        GST_TIME_ARGS (GST_BUFFER_PTS (r->buf)));
  }
  gst_cuda_qa_align_ref_free (r);
}

void
gst_cuda_qa_align_flush (GstCudaQaAlign * align, guint64 * unpaired)
{
  while (!g_queue_is_empty (&align->ring))
    gst_cuda_qa_align_pop (align, unpaired);
}

void
gst_cuda_qa_align_free (GstCudaQaAlign * align)
{
  guint64 ignored = 0;

  gst_cuda_qa_align_flush (align, &ignored);
  g_free (align->dist_thumb);
  g_free (align->message_name);
  g_free (align);
}

void
gst_cuda_qa_align_reset (GstCudaQaAlign * align, GstCudaQaAlignMode mode,
    guint window, gdouble min_margin)
{
  guint64 ignored = 0;

  gst_cuda_qa_align_flush (align, &ignored);
  align->mode = mode;
  align->window = window;
  align->min_margin = min_margin;
  align->next_ref = align->next_dist = 0;
  align->offset = 0;
  align->decided = FALSE;
  align->changes = align->dropped = align->repeated = align->undecided = 0;
  align->tw = align->th = 0;
  g_clear_pointer (&align->dist_thumb, g_free);
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

/* The thumbnail of buf: tw x th means of factor x factor blocks of the
 * first component (luma, or R of RGB), in 8-bit units. NULL if buf cannot
 * be read as info. */
static gfloat *
gst_cuda_qa_align_thumbnail (GstCudaQaAlign * align, GstBuffer * buf,
    const GstVideoInfo * info)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  guint depth = GST_VIDEO_FORMAT_INFO_DEPTH (finfo, 0);
  guint shift = GST_VIDEO_FORMAT_INFO_SHIFT (finfo, 0);
  GstVideoFrame frame;
  const guint8 *data;
  gint stride, pstride;
  gfloat *thumb;
  guint x, y, i, j, f;

  if (!align->tw) {
    align->factor = MAX (1, (GST_VIDEO_INFO_WIDTH (info) + THUMB_MAX_WIDTH -
            1) / THUMB_MAX_WIDTH);
    align->tw = GST_VIDEO_INFO_WIDTH (info) / align->factor;
    align->th = GST_VIDEO_INFO_HEIGHT (info) / align->factor;
  }
  if (!gst_video_frame_map (&frame, (GstVideoInfo *) info, buf, GST_MAP_READ))
    return NULL;
  f = align->factor;
  data = GST_VIDEO_FRAME_COMP_DATA (&frame, 0);
  stride = GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0);
  pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, 0);
  thumb = g_new (gfloat, (gsize) align->tw * align->th);
  for (y = 0; y < align->th; y++)
    for (x = 0; x < align->tw; x++) {
      guint64 sum = 0;

      for (j = 0; j < f; j++) {
        const guint8 *row = data + (gsize) (y * f + j) * stride;

        for (i = 0; i < f; i++) {
          const guint8 *s = row + (gsize) (x * f + i) * pstride;

          sum += depth > 8 ? (GST_READ_UINT16_LE (s) >> shift) >> (depth -
              8) : *s;
        }
      }
      thumb[y * align->tw + x] = (gfloat) sum / (gfloat) (f * f);
    }
  gst_video_frame_unmap (&frame);
  return thumb;
}

void
gst_cuda_qa_align_push_reference (GstCudaQaAlign * align, GstBuffer * ref,
    GstClockTime rt, const GstVideoInfo * info, guint64 * unpaired)
{
  GstCudaQaAlignRef *r = g_new0 (GstCudaQaAlignRef, 1);

  r->buf = ref;
  r->index = align->next_ref++;
  r->rt = rt;
  if (info)
    r->thumb = gst_cuda_qa_align_thumbnail (align, ref, info);
  g_queue_push_tail (&align->ring, r);
  gst_cuda_qa_align_trim (align, unpaired);
}

/* Mean squared difference of two thumbnails. */
static gdouble
gst_cuda_qa_align_distance (GstCudaQaAlign * align, const gfloat * a,
    const gfloat * b)
{
  gsize i, n = (gsize) align->tw * align->th;
  gdouble sum = 0.0;

  for (i = 0; i < n; i++) {
    gdouble d = (gdouble) a[i] - (gdouble) b[i];
    sum += d * d;
  }
  return sum / (gdouble) MAX (n, 1);
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

/* Compares the distorted frame with the candidates; a decisive best match
 * sets the offset. */
static void
gst_cuda_qa_align_search (GstCudaQaAlign * align, GstBuffer * dist,
    GstClockTime dist_rt, const GstVideoInfo * info)
{
  gint64 lo = gst_cuda_qa_align_expected (align) - align->window;
  gint64 hi = gst_cuda_qa_align_expected (align) + align->window;
  GstCudaQaAlignRef *best = NULL;
  gdouble d1 = INFINITY, d2 = INFINITY, margin;
  gint64 previous = align->offset;
  GList *l;

  g_free (align->dist_thumb);
  align->dist_thumb = info ? gst_cuda_qa_align_thumbnail (align, dist,
      info) : NULL;
  if (!align->dist_thumb)
    goto undecided;
  for (l = align->ring.head; l; l = l->next) {
    GstCudaQaAlignRef *r = l->data;
    gdouble d;

    if ((gint64) r->index < lo || (gint64) r->index > hi || !r->thumb)
      continue;
    d = gst_cuda_qa_align_distance (align, align->dist_thumb, r->thumb);
    if (d < d1) {
      d2 = d1;
      d1 = d;
      best = r;
    } else if (d < d2) {
      d2 = d;
    }
  }
  /* one candidate alone, or none: nothing to tell apart */
  margin = best && isfinite (d2) && d2 > 0.0 ? (d2 - d1) / d2 : 0.0;
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

undecided:
  align->undecided++;
  GST_DEBUG_OBJECT (align->element, "distorted frame %" G_GUINT64_FORMAT
      ": no decisive match (best %g, second %g), keeping offset %"
      G_GINT64_FORMAT, align->next_dist, d1, d2, align->offset);
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
