/* GStreamer CUDA video quality: pairing the frames of two streams.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaqacuda.h"
#include "gstcudaqapairing.h"
#include "gstcudaqaupload.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_qa_pairing_debug);
#define GST_CAT_DEFAULT gst_cuda_qa_pairing_debug

static GQuark gst_cuda_qa_pairing_quark;

struct _GstCudaQaPairing
{
  GstAggregator *agg;           /* not references: the helper is its part */
  GstAggregatorPad *reference, *distorted;
  GstFlowReturn (*drain) (GstAggregator * agg);
  guint64 unpaired_reference, unpaired_distorted;
  guint64 gaps_reference, gaps_distorted;
  /* properties, under the element's object lock */
  GstCudaQaAlignMode align_mode;
  guint align_window;
  gdouble align_margin;
  /* streaming */
  GstCudaQaAlign *align;
  GstCudaQaAlignMode active_mode;
};

enum
{
  PAIRING_ALIGN,
  PAIRING_ALIGN_WINDOW,
  PAIRING_ALIGN_MARGIN
};

#define DEFAULT_ALIGN GST_CUDA_QA_ALIGN_NONE
#define DEFAULT_ALIGN_WINDOW 15
#define DEFAULT_ALIGN_MARGIN 0.2

/* A fixed, named always-pad (as gstcccombiner.c adds its pads). */
static GstAggregatorPad *
gst_cuda_qa_pairing_add_pad (GstAggregator * agg, const gchar * name)
{
  GstPadTemplate *templ =
      gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (agg), name);
  GstAggregatorPad *pad = g_object_new (GST_TYPE_AGGREGATOR_PAD, "name", name,
      "direction", GST_PAD_SINK, "template", templ, NULL);

  gst_element_add_pad (GST_ELEMENT (agg), GST_PAD (pad));
  return pad;
}

GstCudaQaPairing *
gst_cuda_qa_pairing_new (GstAggregator * agg,
    GstFlowReturn (*drain) (GstAggregator * agg),
    GstAggregatorPad ** reference, GstAggregatorPad ** distorted)
{
  GstCudaQaPairing *pairing = g_new0 (GstCudaQaPairing, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_cuda_qa_pairing_debug, "cudaqapairing", 0,
        "cudaquality: pairing reference and distorted frames");
    gst_cuda_qa_pairing_quark =
        g_quark_from_static_string ("GstCudaQaPairing");
    g_once_init_leave (&done, 1);
  }
  g_object_set_qdata (G_OBJECT (agg), gst_cuda_qa_pairing_quark, pairing);
  pairing->agg = agg;
  pairing->reference = *reference =
      gst_cuda_qa_pairing_add_pad (agg, "reference");
  pairing->distorted = *distorted =
      gst_cuda_qa_pairing_add_pad (agg, "distorted");
  pairing->drain = drain;
  pairing->align_mode = DEFAULT_ALIGN;
  pairing->align_window = DEFAULT_ALIGN_WINDOW;
  pairing->align_margin = DEFAULT_ALIGN_MARGIN;
  /* cudassim's is the only pairing: its messages are cudassim-aligned */
  pairing->align = gst_cuda_qa_align_new (GST_ELEMENT (agg), "cudassim");
  return pairing;
}

void
gst_cuda_qa_pairing_free (GstCudaQaPairing * pairing)
{
  g_object_set_qdata (G_OBJECT (pairing->agg), gst_cuda_qa_pairing_quark,
      NULL);
  gst_cuda_qa_align_free (pairing->align);
  g_free (pairing);
}

void
gst_cuda_qa_pairing_set_device (GstCudaQaPairing * pairing,
    GstCudaQaDevice * dev, gboolean luma)
{
  gst_cuda_qa_align_set_device (pairing->align, dev, luma);
}

void
gst_cuda_qa_pairing_stop (GstCudaQaPairing * pairing)
{
  gst_cuda_qa_align_stop (pairing->align);
}

void
gst_cuda_qa_pairing_install (GObjectClass * klass, guint first_prop_id)
{
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  /**
   * GstCudaSsim:align:
   *
   * How distorted frames find their reference frame: `none` by running
   * time; `start` by content over the first frames, then at that offset;
   * `continuous` by content at every frame, following dropped and repeated
   * frames. See docs/elements/cudassim.md.
   */
  g_object_class_install_property (klass, first_prop_id + PAIRING_ALIGN,
      g_param_spec_enum ("align", "Align",
          "Pair frames by running time (none) or find the offset by content "
          "(start: once; continuous: every frame)",
          GST_TYPE_CUDA_QA_ALIGN_MODE, DEFAULT_ALIGN, flags));
  /**
   * GstCudaSsim:align-window:
   *
   * Reference frames searched on each side of the expected one; also the
   * reference frames held (and, live, the latency added: this many frame
   * durations).
   */
  g_object_class_install_property (klass,
      first_prop_id + PAIRING_ALIGN_WINDOW,
      g_param_spec_uint ("align-window", "Align window",
          "Reference frames searched on each side of the expected one", 1,
          250, DEFAULT_ALIGN_WINDOW, flags));
  /**
   * GstCudaSsim:align-margin:
   *
   * A match decides only when the second-best distance exceeds the best
   * by this fraction of it ((second - best) / second); otherwise the offset
   * stays (static content).
   */
  g_object_class_install_property (klass,
      first_prop_id + PAIRING_ALIGN_MARGIN,
      g_param_spec_double ("align-margin", "Align margin",
          "Relative margin of the best match over the second best needed to "
          "change the offset", 0.0, 1.0, DEFAULT_ALIGN_MARGIN, flags));
}

/* The pairing's property prop_id names, or -1. */
static gint
gst_cuda_qa_pairing_prop (guint first_prop_id, guint prop_id)
{
  return prop_id >= first_prop_id
      && prop_id < first_prop_id + GST_CUDA_QA_PAIRING_N_PROPS ?
      (gint) (prop_id - first_prop_id) : -1;
}

/* Sets (set) or gets one of the pairing's properties under the object
 * lock; FALSE when prop_id is not the pairing's. */
static gboolean
gst_cuda_qa_pairing_property (GstCudaQaPairing * pairing,
    guint first_prop_id, guint prop_id, GValue * value, gboolean set)
{
  const gint prop = gst_cuda_qa_pairing_prop (first_prop_id, prop_id);

  if (prop < 0)
    return FALSE;
  GST_OBJECT_LOCK (pairing->agg);
  switch (prop) {
    case PAIRING_ALIGN:
      if (set)
        pairing->align_mode = g_value_get_enum (value);
      else
        g_value_set_enum (value, pairing->align_mode);
      break;
    case PAIRING_ALIGN_WINDOW:
      if (set)
        pairing->align_window = g_value_get_uint (value);
      else
        g_value_set_uint (value, pairing->align_window);
      break;
    case PAIRING_ALIGN_MARGIN:
      if (set)
        pairing->align_margin = g_value_get_double (value);
      else
        g_value_set_double (value, pairing->align_margin);
      break;
  }
  GST_OBJECT_UNLOCK (pairing->agg);
  return TRUE;
}

gboolean
gst_cuda_qa_pairing_set_property (GstCudaQaPairing * pairing,
    guint first_prop_id, guint prop_id, const GValue * value)
{
  return gst_cuda_qa_pairing_property (pairing, first_prop_id, prop_id,
      (GValue *) value, TRUE);
}

gboolean
gst_cuda_qa_pairing_get_property (GstCudaQaPairing * pairing,
    guint first_prop_id, guint prop_id, GValue * value)
{
  return gst_cuda_qa_pairing_property (pairing, first_prop_id, prop_id,
      value, FALSE);
}

void
gst_cuda_qa_pairing_reset (GstCudaQaPairing * pairing)
{
  GstCudaQaAlignMode mode;
  guint window;
  gdouble margin;

  GST_OBJECT_LOCK (pairing->agg);
  mode = pairing->align_mode;
  window = pairing->align_window;
  margin = pairing->align_margin;
  GST_OBJECT_UNLOCK (pairing->agg);
  pairing->unpaired_reference = pairing->unpaired_distorted = 0;
  pairing->gaps_reference = pairing->gaps_distorted = 0;
  pairing->active_mode = mode;
  gst_cuda_qa_align_reset (pairing->align, mode, window, margin);
}

gboolean
gst_cuda_qa_pairing_aligns (GstCudaQaPairing * pairing)
{
  return pairing->active_mode != GST_CUDA_QA_ALIGN_NONE;
}

GstClockTime
gst_cuda_qa_pairing_latency (GstCudaQaPairing * pairing,
    const GstVideoInfo * info)
{
  return gst_cuda_qa_align_latency (pairing->align, info);
}

void
gst_cuda_qa_pairing_distorted_caps (GstCudaQaPairing * pairing,
    const GstVideoInfo * info)
{
  GstClockTime latency = gst_cuda_qa_pairing_latency (pairing, info);

  if (latency > 0)
    gst_aggregator_set_latency (pairing->agg, latency, latency);
}

void
gst_cuda_qa_pairing_summary (GstCudaQaPairing * pairing, GstStructure * s)
{
  gst_structure_set (s, "unpaired-frames", G_TYPE_UINT64,
      pairing->unpaired_reference + pairing->unpaired_distorted,
      "unpaired-reference", G_TYPE_UINT64, pairing->unpaired_reference,
      "unpaired-distorted", G_TYPE_UINT64, pairing->unpaired_distorted,
      "gaps", G_TYPE_UINT64, pairing->gaps_reference + pairing->gaps_distorted,
      "gaps-reference", G_TYPE_UINT64, pairing->gaps_reference,
      "gaps-distorted", G_TYPE_UINT64, pairing->gaps_distorted, NULL);
  if (gst_cuda_qa_pairing_aligns (pairing))
    gst_cuda_qa_align_summary (pairing->align, s);
}

static GstClockTime
gst_cuda_qa_pairing_running_time (GstAggregatorPad * pad, GstBuffer * buf)
{
  GstClockTime pts = GST_BUFFER_PTS (buf), rt;

  if (!GST_CLOCK_TIME_IS_VALID (pts))
    return GST_CLOCK_TIME_NONE;
  GST_OBJECT_LOCK (pad);
  rt = gst_segment_to_running_time (&pad->segment, GST_FORMAT_TIME, pts);
  GST_OBJECT_UNLOCK (pad);
  return rt;
}

/* Two frames pair when their running times are closer than half a frame of
 * the distorted stream (exactly equal when its rate is unknown). */
static GstClockTime
gst_cuda_qa_pairing_tolerance (const GstVideoInfo * info, GstBuffer * dist)
{
  if (info && GST_VIDEO_INFO_FPS_N (info) > 0)
    return gst_util_uint64_scale (GST_SECOND / 2, GST_VIDEO_INFO_FPS_D (info),
        GST_VIDEO_INFO_FPS_N (info));
  if (GST_BUFFER_DURATION_IS_VALID (dist))
    return GST_BUFFER_DURATION (dist) / 2;
  return 0;
}

static gboolean
gst_cuda_qa_pairing_same_segment (const GstSegment * a, const GstSegment * b)
{
  return a->format == b->format && a->flags == b->flags && a->rate == b->rate
      && a->applied_rate == b->applied_rate && a->base == b->base
      && a->offset == b->offset && a->start == b->start && a->stop == b->stop
      && a->time == b->time;
}

/* segment := the distorted pad's; the src pad's follows it. */
static void
gst_cuda_qa_pairing_sync_segment (GstCudaQaPairing * pairing,
    GstSegment * segment)
{
  GstAggregator *agg = pairing->agg;
  GstSegment *src = &GST_AGGREGATOR_PAD (agg->srcpad)->segment;
  gboolean changed;

  GST_OBJECT_LOCK (pairing->distorted);
  *segment = pairing->distorted->segment;
  GST_OBJECT_UNLOCK (pairing->distorted);
  GST_OBJECT_LOCK (agg);
  changed = !gst_cuda_qa_pairing_same_segment (src, segment);
  GST_OBJECT_UNLOCK (agg);
  if (changed && segment->format == GST_FORMAT_TIME) {
    /* frames in flight leave in the segment they came in */
    pairing->drain (agg);
    gst_aggregator_update_segment (agg, segment);
  }
}

/* Takes the distorted frame off its pad; the src position follows it. */
static void
gst_cuda_qa_pairing_take_distorted (GstCudaQaPairing * pairing,
    GstBuffer * dist)
{
  GstAggregator *agg = pairing->agg;
  GstClockTime pts = GST_BUFFER_PTS (dist);

  gst_aggregator_pad_drop_buffer (pairing->distorted);
  if (!GST_CLOCK_TIME_IS_VALID (pts))
    return;
  if (GST_BUFFER_DURATION_IS_VALID (dist))
    pts += GST_BUFFER_DURATION (dist);
  GST_OBJECT_LOCK (agg);
  GST_AGGREGATOR_PAD (agg->srcpad)->segment.position = pts;
  GST_OBJECT_UNLOCK (agg);
}

static GstCudaQaPairResult
gst_cuda_qa_pairing_distorted_alone (GstCudaQaPairing * pairing,
    GstBuffer * dist)
{
  gst_cuda_qa_pairing_take_distorted (pairing, dist);
  /* the search may have given it a device copy: not for downstream */
  gst_cuda_qa_upload_remove (dist);
  pairing->unpaired_distorted++;
  GST_LOG_OBJECT (pairing->agg, "distorted frame %" GST_TIME_FORMAT " has no "
      "reference", GST_TIME_ARGS (GST_BUFFER_PTS (dist)));
  return GST_CUDA_QA_PAIR_DISTORTED_ALONE;
}

static GstCudaQaPairResult
gst_cuda_qa_pairing_drop_reference (GstCudaQaPairing * pairing,
    GstBuffer ** ref)
{
  pairing->unpaired_reference++;
  GST_LOG_OBJECT (pairing->agg, "reference frame %" GST_TIME_FORMAT " has no "
      "distorted partner", GST_TIME_ARGS (GST_BUFFER_PTS (*ref)));
  gst_aggregator_pad_drop_buffer (pairing->reference);
  gst_clear_buffer (ref);
  return GST_CUDA_QA_PAIR_REFERENCE_DROPPED;
}

/* Reference frames from the pad's head (*ref, peeked; the next one
 * after) into the ring while it wants them (GAP buffers dropped). */
static void
gst_cuda_qa_pairing_fill_ring (GstCudaQaPairing * pairing,
    const GstVideoInfo * info, GstBuffer ** ref)
{
  GstCudaQaAlign *align = pairing->align;
  GstClockTime rt;

  while (*ref && gst_cuda_qa_align_wants_reference (align)) {
    if (!GST_BUFFER_FLAG_IS_SET (*ref, GST_BUFFER_FLAG_GAP)) {
      rt = gst_cuda_qa_pairing_running_time (pairing->reference, *ref);
      gst_cuda_qa_align_push_reference (align, gst_buffer_ref (*ref), rt,
          info, &pairing->unpaired_reference);
    }
    gst_aggregator_pad_drop_buffer (pairing->reference);
    gst_buffer_unref (*ref);
    *ref = gst_aggregator_pad_peek_buffer (pairing->reference);
  }
}

/* Pairing by content (gstcudaqaalign.h): the reference frames the ring
 * wants come off their pad into it; a distorted frame is matched once
 * every candidate is in the ring (or the reference stream ended, or, live,
 * its time is up). *ref (peeked) and *dist (peeked) are not gaps. */
static GstCudaQaPairResult
gst_cuda_qa_pairing_next_aligned (GstCudaQaPairing * pairing,
    gboolean timeout, const GstVideoInfo * info, GstBuffer ** ref,
    GstBuffer ** dist, gboolean ref_eos, gboolean dist_eos)
{
  GstCudaQaAlign *align = pairing->align;
  GstClockTime rt;

  gst_cuda_qa_pairing_fill_ring (pairing, info, ref);
  ref_eos = !*ref && gst_aggregator_pad_is_eos (pairing->reference);
  if (!*dist) {
    if (!dist_eos)
      goto need_data;
    /* no distorted frame will come: nothing held can pair */
    gst_cuda_qa_align_flush (align, &pairing->unpaired_reference);
    if (!*ref)
      goto need_data;
    return gst_cuda_qa_pairing_drop_reference (pairing, ref);
  }
  if (!gst_cuda_qa_align_ready (align) && !ref_eos && !timeout)
    goto need_data;
  gst_cuda_qa_align_prefetch (align, *ref, *dist, info);
  gst_clear_buffer (ref);
  rt = gst_cuda_qa_pairing_running_time (pairing->distorted, *dist);
  *ref = gst_cuda_qa_align_match (align, *dist, rt, info);
  if (!*ref)
    return gst_cuda_qa_pairing_distorted_alone (pairing, *dist);
  gst_cuda_qa_pairing_take_distorted (pairing, *dist);
  return GST_CUDA_QA_PAIR_MATCHED;

need_data:
  gst_clear_buffer (ref);
  gst_clear_buffer (dist);
  return GST_CUDA_QA_PAIR_NEED_DATA;
}

GstCudaQaPairResult
gst_cuda_qa_pairing_next (GstCudaQaPairing * pairing, gboolean timeout,
    const GstVideoInfo * distorted_info, GstBuffer ** ref, GstBuffer ** dist,
    GstSegment * segment)
{
  GstClockTime ref_rt, dist_rt, tol;
  gboolean ref_eos, dist_eos;

  *ref = gst_aggregator_pad_peek_buffer (pairing->reference);
  *dist = gst_aggregator_pad_peek_buffer (pairing->distorted);
  ref_eos = gst_aggregator_pad_is_eos (pairing->reference);
  dist_eos = gst_aggregator_pad_is_eos (pairing->distorted);
  if (!*ref && !*dist && !(ref_eos && dist_eos))
    return GST_CUDA_QA_PAIR_NEED_DATA;
  if (!*ref && !*dist) {
    /* reference frames held for alignment that never paired */
    gst_cuda_qa_align_flush (pairing->align, &pairing->unpaired_reference);
    return GST_CUDA_QA_PAIR_EOS;
  }
  if (*dist)
    gst_cuda_qa_pairing_sync_segment (pairing, segment);

  /* a gap (GstAggregator queues a GAP event as an empty GAP buffer) is no
   * frame: a reference gap is dropped, a distorted one goes on as it is;
   * neither counts as unpaired, both count as gaps */
  if (*ref && GST_BUFFER_FLAG_IS_SET (*ref, GST_BUFFER_FLAG_GAP)) {
    pairing->gaps_reference++;
    gst_aggregator_pad_drop_buffer (pairing->reference);
    gst_clear_buffer (ref);
    gst_clear_buffer (dist);
    return GST_CUDA_QA_PAIR_REFERENCE_DROPPED;
  }
  if (*dist && GST_BUFFER_FLAG_IS_SET (*dist, GST_BUFFER_FLAG_GAP)) {
    pairing->gaps_distorted++;
    gst_clear_buffer (ref);
    gst_cuda_qa_pairing_take_distorted (pairing, *dist);
    return GST_CUDA_QA_PAIR_DISTORTED_ALONE;
  }
  if (pairing->active_mode != GST_CUDA_QA_ALIGN_NONE)
    return gst_cuda_qa_pairing_next_aligned (pairing, timeout,
        distorted_info, ref, dist, ref_eos, dist_eos);

  if (!*ref) {
    /* no reference frame: it ended, or (live) it is late */
    if (!ref_eos && !timeout)
      goto need_data;
    return gst_cuda_qa_pairing_distorted_alone (pairing, *dist);
  }
  if (!*dist) {
    if (!dist_eos && !timeout)
      goto need_data;
    return gst_cuda_qa_pairing_drop_reference (pairing, ref);
  }

  ref_rt = gst_cuda_qa_pairing_running_time (pairing->reference, *ref);
  dist_rt = gst_cuda_qa_pairing_running_time (pairing->distorted, *dist);
  tol = gst_cuda_qa_pairing_tolerance (distorted_info, *dist);
  if (!GST_CLOCK_TIME_IS_VALID (ref_rt) || !GST_CLOCK_TIME_IS_VALID (dist_rt)
      || (ref_rt >= dist_rt ? ref_rt - dist_rt : dist_rt - ref_rt) <=
      (tol ? tol - 1 : 0)) {
    gst_aggregator_pad_drop_buffer (pairing->reference);
    gst_cuda_qa_pairing_take_distorted (pairing, *dist);
    return GST_CUDA_QA_PAIR_MATCHED;
  }
  if (ref_rt < dist_rt) {
    gst_clear_buffer (dist);
    return gst_cuda_qa_pairing_drop_reference (pairing, ref);
  }
  gst_clear_buffer (ref);
  return gst_cuda_qa_pairing_distorted_alone (pairing, *dist);

need_data:
  gst_clear_buffer (ref);
  gst_clear_buffer (dist);
  return GST_CUDA_QA_PAIR_NEED_DATA;
}

/* The formats of caps, nothing else. */
static GstCaps *
gst_cuda_qa_pairing_formats_of (GstCaps * caps)
{
  GstCaps *formats = gst_caps_new_empty ();
  guint i;

  for (i = 0; i < gst_caps_get_size (caps); i++) {
    const GValue *f = gst_structure_get_value (gst_caps_get_structure (caps,
            i), "format");
    GstStructure *s = gst_structure_new_empty ("video/x-raw");

    if (f)
      gst_structure_set_value (s, "format", f);
    formats = gst_caps_merge_structure (formats, s);
  }
  return formats;
}

/* The template restricted to its first format (in template order) that
 * both `formats` and `filter` allow; the whole template if there is none. */
static GstCaps *
gst_cuda_qa_pairing_first_common_format (GstCaps * templ, GstCaps * formats,
    GstCaps * filter)
{
  const GValue *list = gst_structure_get_value (gst_caps_get_structure (templ,
          0), "format");
  guint i;

  for (i = 0; list && i < gst_value_list_get_size (list); i++) {
    GstCaps *one = gst_caps_copy (templ);

    gst_caps_set_value (one, "format", gst_value_list_get_value (list, i));
    if (gst_caps_can_intersect (one, formats)
        && (!filter || gst_caps_can_intersect (one, filter)))
      return one;
    gst_caps_unref (one);
  }
  return gst_caps_ref (templ);
}

/* Set while this thread asks the other pad's upstream, so that a tee
 * feeding both pads cannot send the query round in circles. */
static GPrivate gst_cuda_qa_pairing_in_peer_query;

/* A pad's caps steer both upstreams to one format without converting:
 * - the other pad negotiated: its format and size first, then anything the
 *   template allows;
 * - it has not: the first template format its upstream can also produce
 *   (so a tee feeding both pads picks one a decoder on the other branch
 *   can return: I420 before the rest). Only for negotiation (a query with
 *   a filter, the other pad linked); link checks get the template.
 * Whatever a fixed upstream insists on stays possible, so that a mismatch
 * reaches the element and gets an error naming both streams. */
gboolean
gst_cuda_qa_pairing_query_caps (GstCudaQaPairing * pairing,
    GstAggregatorPad * pad, GstQuery * query)
{
  GstAggregatorPad *other;
  GstCaps *templ, *other_caps, *filter, *result, *tmp;

  if (GST_QUERY_TYPE (query) != GST_QUERY_CAPS)
    return FALSE;
  other = pad == pairing->reference ? pairing->distorted :
      pairing->reference;
  templ = gst_cuda_qa_caps_filter_usable (gst_pad_get_pad_template_caps
      (GST_PAD (pad)));
  gst_query_parse_caps (query, &filter);
  other_caps = gst_pad_get_current_caps (GST_PAD (other));
  if (other_caps) {
    GstStructure *o = gst_caps_get_structure (other_caps, 0);

    result = gst_caps_copy (templ);
    gst_caps_set_value (result, "format", gst_structure_get_value (o,
            "format"));
    gst_caps_set_value (result, "width", gst_structure_get_value (o, "width"));
    gst_caps_set_value (result, "height", gst_structure_get_value (o,
            "height"));
    result = gst_caps_merge (result, gst_caps_ref (templ));
    gst_caps_unref (other_caps);
  } else if (filter && gst_pad_is_linked (GST_PAD (other))
      && !g_private_get (&gst_cuda_qa_pairing_in_peer_query)) {
    GstCaps *peer, *formats;

    g_private_set (&gst_cuda_qa_pairing_in_peer_query, GINT_TO_POINTER (1));
    peer = gst_pad_peer_query_caps (GST_PAD (other), templ);
    g_private_set (&gst_cuda_qa_pairing_in_peer_query, NULL);
    formats = gst_cuda_qa_pairing_formats_of (peer);
    result = gst_cuda_qa_pairing_first_common_format (templ, formats, filter);
    gst_caps_unref (formats);
    gst_caps_unref (peer);
  } else {
    result = gst_caps_ref (templ);
  }
  if (filter) {
    tmp = gst_caps_intersect_full (result, filter, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (result);
    result = tmp;
  }
  GST_DEBUG_OBJECT (pad, "caps %" GST_PTR_FORMAT, result);
  gst_query_set_caps_result (query, result);
  gst_caps_unref (result);
  gst_caps_unref (templ);
  return TRUE;
}

/* Whether some element of the bin (at any depth) has a sometimes src pad
 * (decodebin, a demuxer): a pad of ours may then be linked once that pad
 * appears, after the state change. */
static gboolean
gst_cuda_qa_pairing_links_later (GstBin * bin)
{
  GstIterator *it = gst_bin_iterate_recurse (bin);
  GValue item = G_VALUE_INIT;
  gboolean found = FALSE;

  while (!found && gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GList *t = gst_element_class_get_pad_template_list (GST_ELEMENT_GET_CLASS
        (g_value_get_object (&item)));

    for (; t && !found; t = t->next)
      found = GST_PAD_TEMPLATE_DIRECTION (t->data) == GST_PAD_SRC
          && GST_PAD_TEMPLATE_PRESENCE (t->data) == GST_PAD_SOMETIMES;
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  return found;
}

/* An unlinked sink pad would wait for ever: going to PAUSED is an error
 * unless a pad may still be linked by an element that adds pads as it
 * runs; going to PLAYING, it is one in any case. Elements outside a bin
 * (driven by hand, as GstHarness does) are linked as their user goes. */
static gboolean
gst_cuda_qa_pairing_check_linked (GstCudaQaPairing * pairing,
    GstStateChange transition)
{
  GstObject *top = gst_object_get_parent (GST_OBJECT (pairing->agg)), *up;
  GstAggregatorPad *pads[2] = { pairing->reference, pairing->distorted };
  gboolean later = FALSE;
  guint i;

  if (!top || (transition != GST_STATE_CHANGE_READY_TO_PAUSED
          && transition != GST_STATE_CHANGE_PAUSED_TO_PLAYING))
    goto done;
  while ((up = gst_object_get_parent (top))) {
    gst_object_unref (top);
    top = up;
  }
  for (i = 0; i < 2; i++) {
    if (gst_pad_is_linked (GST_PAD (pads[i])))
      continue;
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && GST_IS_BIN (top)
        && (later || (later =
                gst_cuda_qa_pairing_links_later (GST_BIN (top))))) {
      GST_INFO_OBJECT (pads[i], "not linked yet: an element of the "
          "pipeline adds pads as it runs");
      continue;
    }
    goto not_linked;
  }
done:
  gst_clear_object (&top);
  return TRUE;

  /* ERRORS */
not_linked:
  {
    GST_ELEMENT_ERROR (pairing->agg, CORE, PAD,
        ("The %s pad is not linked", GST_PAD_NAME (pads[i])),
        ("%s compares two streams: link both reference and distorted "
            "before %s", GST_ELEMENT_NAME (pairing->agg),
            gst_state_change_get_name (transition)));
    gst_object_unref (top);
    return FALSE;
  }
}

static GstStateChangeReturn
gst_cuda_qa_pairing_change_state (GstElement * element,
    GstStateChange transition)
{
  GstCudaQaPairing *pairing =
      g_object_get_qdata (G_OBJECT (element), gst_cuda_qa_pairing_quark);
  GstElementClass *parent =
      g_type_class_peek_parent (G_OBJECT_GET_CLASS (element));

  if (pairing && !gst_cuda_qa_pairing_check_linked (pairing, transition))
    return GST_STATE_CHANGE_FAILURE;
  return parent->change_state (element, transition);
}

void
gst_cuda_qa_pairing_install_link_check (GstElementClass * klass)
{
  klass->change_state = GST_DEBUG_FUNCPTR (gst_cuda_qa_pairing_change_state);
}

gboolean
gst_cuda_qa_pairing_check_formats (GstCudaQaPairing * pairing,
    const GstVideoInfo * reference, const GstVideoInfo * distorted)
{
  if (GST_VIDEO_INFO_FORMAT (reference) == GST_VIDEO_INFO_FORMAT (distorted)
      && GST_VIDEO_INFO_WIDTH (reference) == GST_VIDEO_INFO_WIDTH (distorted)
      && GST_VIDEO_INFO_HEIGHT (reference) ==
      GST_VIDEO_INFO_HEIGHT (distorted))
    return TRUE;
  GST_ELEMENT_ERROR (pairing->agg, CORE, NEGOTIATION,
      ("The reference and distorted streams differ in size or format"),
      ("reference is %dx%d %s, distorted is %dx%d %s: both pads need the "
          "same width, height and format", GST_VIDEO_INFO_WIDTH (reference),
          GST_VIDEO_INFO_HEIGHT (reference), GST_VIDEO_INFO_NAME (reference),
          GST_VIDEO_INFO_WIDTH (distorted), GST_VIDEO_INFO_HEIGHT (distorted),
          GST_VIDEO_INFO_NAME (distorted)));
  return FALSE;
}

void
gst_cuda_qa_pairing_prefetch (GstCudaQaPairing * pairing,
    const GstVideoInfo * info)
{
  GstBuffer *ref, *dist;

  if (pairing->active_mode == GST_CUDA_QA_ALIGN_NONE)
    return;
  ref = gst_aggregator_pad_peek_buffer (pairing->reference);
  /* as the next call would, before its search */
  gst_cuda_qa_pairing_fill_ring (pairing, info, &ref);
  dist = gst_aggregator_pad_peek_buffer (pairing->distorted);
  gst_cuda_qa_align_prefetch (pairing->align, ref, dist, info);
  gst_clear_buffer (&ref);
  gst_clear_buffer (&dist);
}
