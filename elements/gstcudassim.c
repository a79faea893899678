/* GStreamer CUDA video quality: cudassim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-cudassim
 * @title: cudassim
 *
 * Full-reference quality: compares every frame of the `distorted` stream
 * with the frame of the `reference` stream at the same running time and
 * attaches SSIM, SSIM in dB, PSNR and MSE to the distorted buffer as a
 * `CudaSsimMeta` custom meta. The distorted buffers leave on the src pad
 * unchanged, so monitoring can go on downstream. Computed on the GPU, or on
 * the CPU where no GPU is usable; both agree within 1e-9.
 *
 * Three SSIM windows (#GstCudaSsim:window): `box8`, the 8x8 box at every
 * position of seed 004 (computed exactly); `ffmpeg`, the x264/FFmpeg 8x8
 * windows on the 4-pixel grid; `gauss11`, the 11x11 Gaussian of Wang et al.
 * 2004 (as scikit-image). #GstCudaSsim:planes chooses luma only or every
 * plane; see docs/elements/cudassim.md.
 *
 * A frame without a partner is not measured but counted
 * (`unpaired-frames` in the `cudassim-summary` message at EOS); a distorted
 * one still goes downstream, without the meta. A gap is no frame.
 *
 * The `cudassim` message (when #GstCudaSsim:post-messages):
 *
 * - GstClockTime `timestamp`, `stream-time`, `running-time`: of the
 *   (first) distorted frame
 * - GstClockTime `duration`: the frame's, or the running time covered when
 *   #GstCudaSsim:interval > 0
 * - guint64 `frame`, `frames`: the index of the (last) frame, the frames
 *   covered
 * - gdouble `ssim`, `ssim-db`, `psnr`, `mse`, and with planes=all
 *   `ssim-<p>`, `psnr-<p>`, `mse-<p>` for each plane p (y, u, v or r, g,
 *   b): the scores, or their means over the interval
 * - gdouble `ms-ssim` (and `ms-ssim-<p>` with planes=all) when
 *   #GstCudaSsim:ms-ssim: MS-SSIM (Wang et al. 2003)
 * - gdouble `reference-pts` when #GstCudaSsim:align is not none: the PTS
 *   (ns) of the reference frame the distorted frame was paired with
 *
 * The `cudassim-aligned` message (each change of the alignment offset):
 * GstClockTime `timestamp`, `running-time` (distorted frame),
 * `reference-timestamp`; guint64 `distorted-frame`, `reference-frame`
 * (frame numbers from 0); gint64 `offset-frames`,
 * `previous-offset-frames`, `offset` (running time of the reference frame
 * minus the distorted one's, ns); gdouble `margin`.
 *
 * The `cudassim-alert` and `cudassim-alert-cleared` messages (alerts with
 * hysteresis on #GstCudaSsim:alert-metric): see docs/elements/cudassim.md.
 *
 * The `cudassim-summary` message (at EOS): guint64 `frames`; gdouble
 * `<field>-mean`, `<field>-min`, `<field>-max` for every field above;
 * guint64 `unpaired-frames`, `unpaired-reference`, `unpaired-distorted`;
 * gchararray `window`; with alignment gchararray `align`, gint64
 * `offset-frames` (the last), guint64 `offset-changes`, `dropped-frames`,
 * `repeated-frames`, `undecided-frames`.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m cudassim name=q ! fakesink \
 *   videotestsrc num-buffers=100 ! tee name=t \
 *   t. ! queue ! q.reference \
 *   t. ! queue ! jpegenc quality=20 ! jpegdec ! q.distorted
 * ]| prints one `cudassim` message per frame and a summary at the end.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "gstcudassim.h"
#include "gstcudaqadevice.h"
#include "gstcudaqaformat.h"
#include "gstcudaqapairing.h"
#include "gstcudaqareport.h"
#include "gstcudaqasettings.h"
#include "gstcudaqassimfields.h"
#include "gstcudaqaupload.h"
#include "cq-ssim.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_ssim_debug);
#define GST_CAT_DEFAULT gst_cuda_ssim_debug

/* I420 first: upstream picks the first format it can, and a tee feeding
 * both pads then gives the encoder branch the format decoders return. */
#define SSIM_FORMATS "{ I420, NV12, YV12, NV21, Y42B, Y444, GRAY8, " \
    "I420_10LE, P010_10LE, GRAY16_LE, RGB, BGR, RGBA, BGRA, RGBx, BGRx, " \
    "xRGB, xBGR, ARGB, ABGR }"

/* CUDAMemory first: decoders that offer both keep frames on the GPU */
#if HAVE_GST_CUDA
#define SSIM_CAPS \
    GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CUDA_QA_CAPS_FEATURE, \
        SSIM_FORMATS) "; " GST_VIDEO_CAPS_MAKE (SSIM_FORMATS)
#else
#define SSIM_CAPS GST_VIDEO_CAPS_MAKE (SSIM_FORMATS)
#endif

static GstStaticPadTemplate reference_template =
GST_STATIC_PAD_TEMPLATE ("reference", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (SSIM_CAPS));

static GstStaticPadTemplate distorted_template =
GST_STATIC_PAD_TEMPLATE ("distorted", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (SSIM_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (SSIM_CAPS));

enum
{
  PROP_0,
  PROP_WINDOW,
  PROP_PLANES,
  PROP_THRESHOLD,
  PROP_MS_SSIM,
  PROP_PAIRING,                 /* first of the pairing's properties */
  PROP_SETTINGS = PROP_PAIRING + GST_CUDA_QA_PAIRING_N_PROPS
};

#define DEFAULT_PROP_WINDOW GST_CUDA_SSIM_WINDOW_BOX8
#define DEFAULT_PROP_PLANES GST_CUDA_SSIM_PLANES_LUMA
#define DEFAULT_PROP_THRESHOLD 0.0
#define DEFAULT_PROP_MS_SSIM FALSE

#define MAX_FIELDS GST_CUDA_QA_SSIM_MAX_FIELDS

/* A pair between submit (measuring started) and collect (sums read): both
 * frames stay mapped (or their device copies held) while the GPU reads
 * them. */
typedef struct
{
  GstBuffer *ref, *dist;
  gboolean mapped;
  GstVideoFrame rf, df;
  GstSegment segment;           /* the distorted pad's, for the report */
  GstClockTime ref_pts;
  CqSsimPlaneSums sums[CQ_SSIM_MAX_PLANES];
} GstCudaSsimPending;

typedef gboolean (*GstCudaSsimSubmitFunc) (GstCudaSsim * self,
    GstCudaSsimPending * pending, gboolean device, CqError * err);
typedef gboolean (*GstCudaSsimCollectFunc) (GstCudaSsim * self,
    GstCudaSsimPending * pending, CqError * err);

struct _GstCudaSsim
{
  GstAggregator parent;

  GstAggregatorPad *reference_pad, *distorted_pad;

  /* properties, under the object lock */
  GstCudaSsimWindow window;
  GstCudaSsimPlanes planes;
  gboolean ms_ssim;
  GstCudaQaSettings settings;

  /* streaming state, in the aggregate thread */
  GstCudaQaDevice *dev;         /* backend, CUDA context, pairs in flight */
  GstCudaQaPairing *pairing;    /* which frames pair */
  CqSsimWindow active_window;
  GstCudaSsimPlanes active_planes;
  GstCudaQaSsimFields fields;
  gchar *active_location;
  GstCudaQaLogFormat active_log_format;
  GstVideoInfo reference_info, distorted_info;
  gboolean have_reference_info, have_distorted_info;
  gboolean reference_cuda, distorted_cuda;      /* CUDAMemory caps */
  gboolean reconfigure;         /* caps changed: set up the measurement */
  GstVideoInfo measured_info;   /* what the measurement is set up for */
  GstCudaQaPlanes pl;           /* the planes compared */
  CqSsimCpu *cpu;
  GstCudaSsimSubmitFunc submit;
  GstCudaSsimCollectFunc collect;
  gboolean device_input;        /* both pads CUDAMemory, measured on CUDA */
  GstCudaQaReport *report;
  gboolean report_started;
  guint n_fields;
};

#define gst_cuda_ssim_parent_class parent_class
G_DEFINE_TYPE (GstCudaSsim, gst_cuda_ssim, GST_TYPE_AGGREGATOR);
GST_ELEMENT_REGISTER_DEFINE (cudassim, "cudassim", GST_RANK_NONE,
    GST_TYPE_CUDA_SSIM);

static void gst_cuda_ssim_finalize (GObject * object);
static void gst_cuda_ssim_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_cuda_ssim_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static gboolean gst_cuda_ssim_start (GstAggregator * agg);
static gboolean gst_cuda_ssim_stop (GstAggregator * agg);
static gboolean gst_cuda_ssim_sink_event (GstAggregator * agg,
    GstAggregatorPad * pad, GstEvent * event);
static gboolean gst_cuda_ssim_sink_query (GstAggregator * agg,
    GstAggregatorPad * pad, GstQuery * query);
static GstFlowReturn gst_cuda_ssim_update_src_caps (GstAggregator * agg,
    GstCaps * caps, GstCaps ** ret);
static GstFlowReturn gst_cuda_ssim_aggregate (GstAggregator * agg,
    gboolean timeout);
static gboolean gst_cuda_ssim_src_query (GstAggregator * agg, GstQuery * query);
static GstFlowReturn gst_cuda_ssim_flush (GstAggregator * agg);
static gboolean gst_cuda_ssim_propose_allocation (GstAggregator * agg,
    GstAggregatorPad * pad, GstQuery * decide_query, GstQuery * query);
static GstFlowReturn gst_cuda_ssim_drain (GstAggregator * agg);
static gpointer gst_cuda_ssim_open_cuda (GstElement * element,
    const CqCudaTarget * target, CqError * err);
static GstFlowReturn gst_cuda_ssim_complete (GstElement * element,
    gpointer item, GstBuffer ** out);
static void gst_cuda_ssim_forget (gpointer item);
static GstFlowReturn gst_cuda_ssim_push (GstElement * element,
    GstBuffer * buf);

static const GstCudaQaDeviceFuncs device_funcs = {
  gst_cuda_ssim_open_cuda, (GDestroyNotify) cq_ssim_cuda_free,
  sizeof (GstCudaSsimPending), gst_cuda_ssim_complete, gst_cuda_ssim_forget,
  gst_cuda_ssim_push
};

static void
gst_cuda_ssim_class_init (GstCudaSsimClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstAggregatorClass *agg_class = GST_AGGREGATOR_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->finalize = gst_cuda_ssim_finalize;
  gobject_class->set_property = gst_cuda_ssim_set_property;
  gobject_class->get_property = gst_cuda_ssim_get_property;

  /**
   * GstCudaSsim:window:
   *
   * The SSIM window: `box8` (default), `ffmpeg` or `gauss11`.
   */
  g_object_class_install_property (gobject_class, PROP_WINDOW,
      g_param_spec_enum ("window", "Window", "SSIM window",
          GST_TYPE_CUDA_SSIM_WINDOW, DEFAULT_PROP_WINDOW,
          flags | GST_PARAM_MUTABLE_READY));
  /**
   * GstCudaSsim:planes:
   *
   * `luma` measures Y (or the gray value of RGB input); `all` measures every
   * plane and reports `ssim`/`psnr`/`mse` over all of them, weighted by
   * their sample counts as FFmpeg does, plus per-plane fields.
   */
  g_object_class_install_property (gobject_class, PROP_PLANES,
      g_param_spec_enum ("planes", "Planes", "Planes to compare",
          GST_TYPE_CUDA_SSIM_PLANES, DEFAULT_PROP_PLANES,
          flags | GST_PARAM_MUTABLE_READY));
  /**
   * GstCudaSsim:threshold:
   *
   * Deprecated: sets #GstCudaSsim:alert-below (0 = off); the alert now
   * fires once per episode (see alert-frames, alert-clear-frames).
   */
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_double ("threshold", "Threshold",
          "Deprecated alias of alert-below (0 = off)", 0.0, 1.0,
          DEFAULT_PROP_THRESHOLD,
          flags | G_PARAM_DEPRECATED | GST_PARAM_MUTABLE_READY));
  /**
   * GstCudaSsim:ms-ssim:
   *
   * Adds MS-SSIM (five scales of the 11x11 Gaussian window; planes of at
   * least 176x176) as `ms-ssim` (and `ms-ssim-<p>` with planes=all).
   */
  g_object_class_install_property (gobject_class, PROP_MS_SSIM,
      g_param_spec_boolean ("ms-ssim", "MS-SSIM", "Also measure MS-SSIM",
          DEFAULT_PROP_MS_SSIM, flags | GST_PARAM_MUTABLE_READY));
  gst_cuda_qa_pairing_install (gobject_class, PROP_PAIRING);
  gst_cuda_qa_settings_install (gobject_class, PROP_SETTINGS, "cudassim");

  gst_element_class_add_static_pad_template_with_gtype (element_class,
      &reference_template, GST_TYPE_AGGREGATOR_PAD);
  gst_element_class_add_static_pad_template_with_gtype (element_class,
      &distorted_template, GST_TYPE_AGGREGATOR_PAD);
  gst_element_class_add_static_pad_template_with_gtype (element_class,
      &src_template, GST_TYPE_AGGREGATOR_PAD);
  gst_element_class_set_static_metadata (element_class,
      "CUDA SSIM", "Filter/Analyzer/Video",
      "Compares a distorted stream with its reference (SSIM, PSNR, MSE) on "
      "the GPU (or CPU) and attaches the scores as CudaSsimMeta",
      "cudaquality developers");

  agg_class->start = GST_DEBUG_FUNCPTR (gst_cuda_ssim_start);
  agg_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_ssim_stop);
  agg_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_ssim_sink_event);
  agg_class->sink_query = GST_DEBUG_FUNCPTR (gst_cuda_ssim_sink_query);
  agg_class->update_src_caps =
      GST_DEBUG_FUNCPTR (gst_cuda_ssim_update_src_caps);
  agg_class->aggregate = GST_DEBUG_FUNCPTR (gst_cuda_ssim_aggregate);
  agg_class->src_query = GST_DEBUG_FUNCPTR (gst_cuda_ssim_src_query);
  agg_class->flush = GST_DEBUG_FUNCPTR (gst_cuda_ssim_flush);
  agg_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_ssim_propose_allocation);
  gst_cuda_qa_device_install (element_class);
  gst_cuda_qa_pairing_install_link_check (element_class);
  agg_class->get_next_time = gst_aggregator_simple_get_next_time;

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_SSIM_WINDOW, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_SSIM_PLANES, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_QA_ALIGN_MODE, 0);
  gst_cuda_qa_meta_register ("CudaSsimMeta");

  GST_DEBUG_CATEGORY_INIT (gst_cuda_ssim_debug, "cudassim", 0,
      "CUDA SSIM measurement");
}

static void
gst_cuda_ssim_init (GstCudaSsim * self)
{
  self->window = DEFAULT_PROP_WINDOW;
  self->planes = DEFAULT_PROP_PLANES;
  gst_cuda_qa_settings_init (&self->settings);
  self->dev = gst_cuda_qa_device_new (GST_ELEMENT (self), &device_funcs);
  self->report = gst_cuda_qa_report_new (GST_ELEMENT (self), "cudassim",
      "CudaSsimMeta");
  self->pairing = gst_cuda_qa_pairing_new (GST_AGGREGATOR (self),
      gst_cuda_ssim_drain, &self->reference_pad, &self->distorted_pad);
}

static void
gst_cuda_ssim_finalize (GObject * object)
{
  GstCudaSsim *self = GST_CUDA_SSIM (object);

  gst_cuda_qa_device_free (self->dev);
  gst_cuda_qa_pairing_free (self->pairing);
  gst_cuda_qa_report_free (self->report);
  gst_cuda_qa_settings_clear (&self->settings);
  g_free (self->active_location);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_ssim_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaSsim *self = GST_CUDA_SSIM (object);

  if (gst_cuda_qa_settings_set_property (&self->settings,
          object, PROP_SETTINGS, prop_id, value, pspec)
      || gst_cuda_qa_pairing_set_property (self->pairing, PROP_PAIRING,
          prop_id, value))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MS_SSIM:
      self->ms_ssim = g_value_get_boolean (value);
      break;
    case PROP_WINDOW:
      self->window = g_value_get_enum (value);
      break;
    case PROP_PLANES:
      self->planes = g_value_get_enum (value);
      break;
    case PROP_THRESHOLD:
      self->settings.alert.below = g_value_get_double (value) > 0.0 ?
          g_value_get_double (value) : -INFINITY;
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_ssim_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaSsim *self = GST_CUDA_SSIM (object);

  if (gst_cuda_qa_settings_get_property (&self->settings,
          object, PROP_SETTINGS, prop_id, value, pspec)
      || gst_cuda_qa_pairing_get_property (self->pairing, PROP_PAIRING,
          prop_id, value))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MS_SSIM:
      g_value_set_boolean (value, self->ms_ssim);
      break;
    case PROP_WINDOW:
      g_value_set_enum (value, self->window);
      break;
    case PROP_PLANES:
      g_value_set_enum (value, self->planes);
      break;
    case PROP_THRESHOLD:
      g_value_set_double (value, CLAMP (self->settings.alert.below, 0, 1));
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_ssim_release_pending (GstCudaSsimPending * p)
{
  if (p->mapped) {
    gst_video_frame_unmap (&p->df);
    gst_video_frame_unmap (&p->rf);
  }
  gst_cuda_qa_upload_unref (p->ref);
}

/* A pair in flight dropped unmeasured (stop). */
static void
gst_cuda_ssim_forget (gpointer item)
{
  GstCudaSsimPending *p = item;

  gst_cuda_ssim_release_pending (p);
  gst_cuda_qa_upload_unref (p->dist);
}

static void
gst_cuda_ssim_free_backends (GstCudaSsim * self)
{
  cq_ssim_cpu_free (self->cpu);
  self->cpu = NULL;
  gst_cuda_qa_device_close (self->dev);
  self->submit = NULL;
  self->collect = NULL;
}

/* Completes every pair in flight (see gst_cuda_qa_device_drain); the
 * pairing's hook before the segment changes. */
static GstFlowReturn
gst_cuda_ssim_drain (GstAggregator * agg)
{
  return gst_cuda_qa_device_drain (GST_CUDA_SSIM (agg)->dev, TRUE);
}

static gboolean
gst_cuda_ssim_start (GstAggregator * agg)
{
  GstCudaSsim *self = GST_CUDA_SSIM (agg);

  GST_OBJECT_LOCK (self);
  self->active_window = (CqSsimWindow) self->window;
  self->active_planes = self->planes;
  self->fields.per_plane = self->planes == GST_CUDA_SSIM_PLANES_ALL;
  self->fields.msssim = self->ms_ssim;
  g_free (self->active_location);
  self->active_location = g_strdup (self->settings.location);
  self->active_log_format = self->settings.log_format;
  GST_OBJECT_UNLOCK (self);

  self->have_reference_info = self->have_distorted_info = FALSE;
  self->reconfigure = TRUE;
  self->report_started = FALSE;
  gst_cuda_qa_pairing_set_device (self->pairing, self->dev,
      self->active_planes == GST_CUDA_SSIM_PLANES_LUMA);
  gst_cuda_qa_pairing_reset (self->pairing);
  self->fields.aligned = gst_cuda_qa_pairing_aligns (self->pairing);
  gst_video_info_init (&self->measured_info);
  return gst_cuda_qa_settings_start_device (&self->settings, G_OBJECT (self),
      self->dev);
}

static gboolean
gst_cuda_ssim_stop (GstAggregator * agg)
{
  GstCudaSsim *self = GST_CUDA_SSIM (agg);

  gst_cuda_qa_pairing_stop (self->pairing);
  gst_cuda_qa_device_stop (self->dev);
  gst_cuda_ssim_free_backends (self);
  gst_cuda_qa_report_stop (self->report);
  self->report_started = FALSE;
  return TRUE;
}

static gboolean
gst_cuda_ssim_sink_event (GstAggregator * agg, GstAggregatorPad * pad,
    GstEvent * event)
{
  GstCudaSsim *self = GST_CUDA_SSIM (agg);

  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    GstVideoInfo info;

    /* pairs in flight leave in the format they came in */
    gst_cuda_qa_device_drain (self->dev, TRUE);
    gst_event_parse_caps (event, &caps);
    if (!gst_video_info_from_caps (&info, caps)) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
          ("invalid caps on %s: %" GST_PTR_FORMAT, GST_PAD_NAME (pad), caps));
      gst_event_unref (event);
      return FALSE;
    }
    if (pad == self->reference_pad) {
      self->reference_info = info;
      self->have_reference_info = TRUE;
      self->reference_cuda = gst_cuda_qa_caps_is_cuda (caps);
    } else {
      self->distorted_info = info;
      self->have_distorted_info = TRUE;
      self->distorted_cuda = gst_cuda_qa_caps_is_cuda (caps);
      gst_cuda_qa_pairing_distorted_caps (self->pairing, &info);
      /* the src pad carries the distorted stream's caps */
      gst_pad_mark_reconfigure (GST_AGGREGATOR_SRC_PAD (agg));
    }
    self->reconfigure = TRUE;
  }
  return GST_AGGREGATOR_CLASS (parent_class)->sink_event (agg, pad, event);
}

/* Caps steer both upstreams to one format (gstcudaqapairing.h). */
static gboolean
gst_cuda_ssim_sink_query (GstAggregator * agg, GstAggregatorPad * pad,
    GstQuery * query)
{
  GstCudaSsim *self = GST_CUDA_SSIM (agg);

  if (gst_cuda_qa_device_query (self->dev, query))
    return TRUE;
  if (gst_cuda_qa_pairing_query_caps (self->pairing, pad, query))
    return TRUE;
  return GST_AGGREGATOR_CLASS (parent_class)->sink_query (agg, pad, query);
}

static GstFlowReturn
gst_cuda_ssim_update_src_caps (GstAggregator * agg, GstCaps * caps,
    GstCaps ** ret)
{
  GstCaps *dist = gst_pad_get_current_caps (GST_PAD (GST_CUDA_SSIM
          (agg)->distorted_pad));

  if (!dist)
    return GST_AGGREGATOR_FLOW_NEED_DATA;
  if (!gst_caps_can_intersect (dist, caps)) {
    GST_ELEMENT_ERROR (agg, CORE, NEGOTIATION, (NULL),
        ("downstream does not accept the distorted stream's caps %"
            GST_PTR_FORMAT, dist));
    gst_caps_unref (dist);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  *ret = dist;
  return GST_FLOW_OK;
}

static void
gst_cuda_ssim_plane_pointers (GstCudaSsim * self, GstVideoFrame * frame,
    GstCudaQaPlanePointers * out)
{
  gst_cuda_qa_format_plane_pointers (&self->pl, frame, out->data,
      out->stride);
}

/* The CPU measures at submit; collect has nothing left to wait for. */
static gboolean
gst_cuda_ssim_submit_cpu (GstCudaSsim * self, GstCudaSsimPending * p,
    gboolean device, CqError * err)
{
  GstCudaQaPlanePointers r, d;

  (void) device;
  gst_cuda_ssim_plane_pointers (self, &p->rf, &r);
  gst_cuda_ssim_plane_pointers (self, &p->df, &d);
  return cq_ssim_cpu_measure (self->cpu, r.data, r.stride, d.data, d.stride,
      p->sums, err) == CQ_OK;
}

static gboolean
gst_cuda_ssim_collect_cpu (GstCudaSsim * self, GstCudaSsimPending * p,
    CqError * err)
{
  (void) self;
  (void) p;
  (void) err;
  return TRUE;
}

/* device: the frames were mapped as CUDAMemory of the library's context,
 * which the library's CUDA object enters itself */
static gboolean
gst_cuda_ssim_submit_cuda (GstCudaSsim * self, GstCudaSsimPending * p,
    gboolean device, CqError * err)
{
  CqSsimCuda *cuda = gst_cuda_qa_device_backend (self->dev);
  GstCudaQaPlanePointers r, d;

  gst_cuda_ssim_plane_pointers (self, &p->rf, &r);
  gst_cuda_ssim_plane_pointers (self, &p->df, &d);
  if (device)
    return cq_ssim_cuda_submit_device (cuda, r.data, r.stride, d.data,
        d.stride, err) == CQ_OK;
  return cq_ssim_cuda_submit_host (cuda, r.data, r.stride, d.data, d.stride,
      err) == CQ_OK;
}

static gboolean
gst_cuda_ssim_collect_cuda (GstCudaSsim * self, GstCudaSsimPending * p,
    CqError * err)
{
  return cq_ssim_cuda_collect (gst_cuda_qa_device_backend (self->dev),
      p->sums, err) == CQ_OK;
}

/* The CUDA measurement where the device helper says: the element's shared
 * context, that of the memory arriving, or the device. */
static gpointer
gst_cuda_ssim_open_cuda (GstElement * element, const CqCudaTarget * target,
    CqError * err)
{
  GstCudaSsim *self = GST_CUDA_SSIM (element);
  CqSsimCuda *cuda = cq_ssim_cuda_new_for (target, self->active_window,
      self->pl.planes, self->pl.n, err);

  if (cuda && self->fields.msssim
      && cq_ssim_cuda_set_msssim (cuda, TRUE, err) != CQ_OK)
    g_clear_pointer (&cuda, cq_ssim_cuda_free);
  return cuda;
}

/* Starts the report with this stream's fields (once per run). */
static gboolean
gst_cuda_ssim_start_report (GstCudaSsim * self)
{
  gchar *names[MAX_FIELDS];
  guint i, n;
  gboolean ret;

  n = gst_cuda_qa_ssim_field_names (&self->fields, &self->pl, names);
  gst_cuda_qa_settings_configure_report (&self->settings, G_OBJECT (self),
      self->report);
  ret = gst_cuda_qa_report_start (self->report, (const gchar **) names, n,
      self->active_location, self->active_log_format);
  for (i = 0; i < n; i++)
    g_free (names[i]);
  self->n_fields = n;
  self->report_started = ret;
  return ret;
}

/* (Re)builds the measurement for the negotiated format. */
static gboolean
gst_cuda_ssim_set_info (GstCudaSsim * self, const GstVideoInfo * info)
{
  CqError err = { CQ_OK, "" };
  guint old_planes = self->pl.n;
  gchar old_names[CQ_SSIM_MAX_PLANES];
  GstClockTime latency;

  memcpy (old_names, self->pl.names, sizeof (old_names));
  gst_cuda_qa_format_planes (info,
      self->active_planes == GST_CUDA_SSIM_PLANES_LUMA, &self->pl);
  if (self->report_started && (old_planes != self->pl.n
          || memcmp (old_names, self->pl.names, self->pl.n) != 0))
    goto planes_changed;
  gst_cuda_ssim_free_backends (self);
  if (gst_cuda_qa_device_is_cuda (self->dev)) {
    if (!gst_cuda_qa_device_open (self->dev, NULL, &err))
      goto backend_failed;
    self->submit = gst_cuda_ssim_submit_cuda;
    self->collect = gst_cuda_ssim_collect_cuda;
  } else {
    self->cpu = cq_ssim_cpu_new (self->active_window, self->pl.planes,
        self->pl.n, 0, &err);
    if (!self->cpu)
      goto backend_failed;
    self->submit = gst_cuda_ssim_submit_cpu;
    self->collect = gst_cuda_ssim_collect_cpu;
  }
  /* (the CUDA object gets MS-SSIM where it is opened) */
  if (self->cpu && self->fields.msssim
      && cq_ssim_cpu_set_msssim (self->cpu, TRUE, &err) != CQ_OK)
    goto backend_failed;
  /* CUDAMemory on the CPU backend, or on one pad only, is read through host
   * mappings */
  self->device_input = gst_cuda_qa_device_is_cuda (self->dev)
      && self->reference_cuda && self->distorted_cuda;
  self->measured_info = *info;
  latency = gst_cuda_qa_device_latency (self->dev,
      GST_VIDEO_INFO_FPS_N (info), GST_VIDEO_INFO_FPS_D (info)) +
      gst_cuda_qa_pairing_latency (self->pairing, info);
  if (latency > 0)
    gst_aggregator_set_latency (GST_AGGREGATOR (self), latency, latency);
  GST_INFO_OBJECT (self, "comparing %u plane(s) of %s %dx%d with the %s "
      "window on %s from %s memory, %u pair(s) in flight", self->pl.n,
      GST_VIDEO_INFO_NAME (info), GST_VIDEO_INFO_WIDTH (info),
      GST_VIDEO_INFO_HEIGHT (info), cq_ssim_window_name (self->active_window),
      gst_cuda_qa_device_name (self->dev),
      self->device_input ? "CUDA" : "system",
      gst_cuda_qa_device_in_flight (self->dev));
  if (!self->report_started && !gst_cuda_ssim_start_report (self))
    return FALSE;
  return TRUE;

  /* ERRORS */
planes_changed:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("The planes to compare changed mid-stream"),
        ("now %s with %u plane(s), the log and messages have %u",
            GST_VIDEO_INFO_NAME (info), self->pl.n, old_planes));
    return FALSE;
  }
backend_failed:
  {
    gst_cuda_qa_device_setup_error (self->dev, &err, "SSIM",
        "%dx%d %s frames with the %s window", GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info),
        cq_ssim_window_name (self->active_window));
    return FALSE;
  }
}

/* Measuring failed: the library's message; dist (taken) is dropped. */
static GstFlowReturn
gst_cuda_ssim_measure_failed (GstCudaSsim * self, const CqError * err,
    GstBuffer * dist)
{
  gst_cuda_qa_device_measure_error (self->dev, err, "SSIM measurement");
  gst_buffer_unref (dist);
  return GST_FLOW_ERROR;
}

/* Reads the sums of a pair in flight; its distorted buffer gets the meta
 * and is handed back (for downstream, or for a flush to drop after the
 * scores are reported). */
static GstFlowReturn
gst_cuda_ssim_complete (GstElement * element, gpointer item, GstBuffer ** out)
{
  GstCudaSsim *self = GST_CUDA_SSIM (element);
  GstCudaSsimPending *p = item;
  gdouble values[MAX_FIELDS];
  CqError err = { CQ_OK, "" };
  gboolean ok;
  GstBuffer *dist;

  ok = self->collect (self, p, &err);
  gst_cuda_ssim_release_pending (p);
  dist = p->dist;
  if (!ok)
    goto measure_failed;

  gst_cuda_qa_ssim_field_values (&self->fields, &self->pl, p->sums,
      p->ref_pts, values);
  /* the frames' mappings are gone, the device copy goes: a shallow copy at
   * most */
  gst_cuda_qa_upload_remove (dist);
  dist = gst_buffer_make_writable (dist);
  gst_cuda_qa_settings_report_frame (&self->settings, G_OBJECT (self),
      self->report, dist, &p->segment, values);
  *out = dist;
  return GST_FLOW_OK;

  /* ERRORS */
measure_failed:
  return gst_cuda_ssim_measure_failed (self, &err, dist);
}

static GstFlowReturn
gst_cuda_ssim_push (GstElement * element, GstBuffer * buf)
{
  return gst_aggregator_finish_buffer (GST_AGGREGATOR (element), buf);
}

static GstFlowReturn
gst_cuda_ssim_flush (GstAggregator * agg)
{
  gst_cuda_qa_device_drain (GST_CUDA_SSIM (agg)->dev, FALSE);
  gst_cuda_qa_report_flush (GST_CUDA_SSIM (agg)->report);
  return GST_FLOW_OK;
}

/* Whether the pair is measured in place on the device: both frames
 * CUDAMemory of one context, which the measurement moves into if it is not
 * the one in use. Other pairs are read through host mappings. */
static gboolean
gst_cuda_ssim_pair_on_device (GstCudaSsim * self, GstBuffer * ref,
    GstBuffer * dist, CqError * err, gboolean * failed)
{
  GstCudaContext *rc, *dc;

  *failed = FALSE;
  if (!self->device_input)
    return FALSE;
  rc = gst_cuda_qa_buffer_context (ref);
  dc = gst_cuda_qa_buffer_context (dist);
  if (!rc || rc != dc) {
    GST_LOG_OBJECT (self, "frames in different CUDA contexts: compared "
        "through host memory");
    return FALSE;
  }
  *failed = !gst_cuda_qa_device_follow (self->dev, rc, err);
  return !*failed;
}

static void
gst_cuda_ssim_map_error (GstCudaSsim * self, const gchar * which,
    GstBuffer * buf, const GstVideoInfo * info, gboolean device)
{
  GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL),
      ("could not map a %" G_GSIZE_FORMAT "-byte %s buffer as %s %dx%d (%s "
          "memory)", gst_buffer_get_size (buf), which,
          GST_VIDEO_INFO_NAME (info), GST_VIDEO_INFO_WIDTH (info),
          GST_VIDEO_INFO_HEIGHT (info), device ? "CUDA" : "host"));
}

/* On CUDA, a pair whose frames carry device copies (the alignment search
 * uploaded them, gstcudaqaupload.h) is measured from those: TRUE when it
 * was submitted or *failed. */
static gboolean
gst_cuda_ssim_submit_copies (GstCudaSsim * self, GstBuffer * ref,
    GstBuffer * dist, CqError * err, gboolean * failed)
{
  CqSsimCuda *cuda = gst_cuda_qa_device_backend (self->dev);
  GstCudaQaPlanePointers r, d;
  CqCudaTarget target;

  *failed = FALSE;
  if (self->submit != gst_cuda_ssim_submit_cuda)
    return FALSE;
  gst_cuda_qa_device_target (self->dev, &target);
  if (!gst_cuda_qa_upload_pair (ref, dist, &target, cuda, &self->pl, &r, &d,
          err))
    return *failed = err->status != CQ_OK;
  *failed = cq_ssim_cuda_submit_device (cuda, r.data, r.stride, d.data,
      d.stride, err) != CQ_OK;
  return TRUE;
}

/* Starts measuring a pair (ref borrowed, dist taken); the oldest pair
 * leaves once more than in_flight are in flight. */
static GstFlowReturn
gst_cuda_ssim_submit_pair (GstCudaSsim * self, GstBuffer * ref,
    GstBuffer * dist, const GstSegment * segment)
{
  GstCudaSsimPending p;
  CqError err = { CQ_OK, "" };
  gboolean device = FALSE, failed;

  if (!self->have_reference_info || !self->have_distorted_info)
    goto not_negotiated;
  if (!gst_cuda_qa_pairing_check_formats (self->pairing,
          &self->reference_info, &self->distorted_info))
    goto mismatch;
  if (self->reconfigure) {
    if (!gst_video_info_is_equal (&self->measured_info,
            &self->distorted_info) || !self->submit
        || self->device_input != (gst_cuda_qa_device_is_cuda (self->dev)
            && self->reference_cuda
            && self->distorted_cuda)) {
      if (!gst_cuda_ssim_set_info (self, &self->distorted_info))
        goto setup_failed;
    }
    self->reconfigure = FALSE;
  }

  p.mapped = !gst_cuda_ssim_submit_copies (self, ref, dist, &err, &failed);
  if (p.mapped && !failed)
    device = gst_cuda_ssim_pair_on_device (self, ref, dist, &err, &failed);
  if (failed)
    goto measure_failed;
  if (p.mapped) {
    if (!gst_cuda_qa_frame_map_read (&p.rf, &self->reference_info, ref, device))
      goto map_failed_ref;
    if (!gst_cuda_qa_frame_map_read (&p.df, &self->distorted_info, dist,
            device)) {
      gst_video_frame_unmap (&p.rf);
      goto map_failed_dist;
    }
    if (!self->submit (self, &p, device, &err)) {
      gst_video_frame_unmap (&p.df);
      gst_video_frame_unmap (&p.rf);
      goto measure_failed;
    }
  }
  p.ref = gst_buffer_ref (ref);
  p.ref_pts = GST_BUFFER_PTS (ref);
  p.dist = dist;
  p.segment = *segment;
  gst_cuda_qa_pairing_prefetch (self->pairing, &self->distorted_info);
  return gst_cuda_qa_device_add_pending (self->dev, &p, NULL);

  /* ERRORS */
not_negotiated:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("received a buffer before caps on the %s pad",
            self->have_reference_info ? "distorted" : "reference"));
    gst_buffer_unref (dist);
    return GST_FLOW_NOT_NEGOTIATED;
  }
mismatch:
  {
    gst_buffer_unref (dist);
    return GST_FLOW_NOT_NEGOTIATED;
  }
setup_failed:
  {
    gst_buffer_unref (dist);
    return GST_FLOW_ERROR;
  }
map_failed_ref:
  {
    gst_cuda_ssim_map_error (self, "reference", ref, &self->reference_info,
        device);
    gst_buffer_unref (dist);
    return GST_FLOW_ERROR;
  }
map_failed_dist:
  {
    gst_cuda_ssim_map_error (self, "distorted", dist, &self->distorted_info,
        device);
    gst_buffer_unref (dist);
    return GST_FLOW_ERROR;
  }
measure_failed:
  return gst_cuda_ssim_measure_failed (self, &err, dist);
}

static void
gst_cuda_ssim_finish (GstCudaSsim * self)
{
  GstStructure *extra;

  if (!self->report_started)
    gst_cuda_ssim_start_report (self);
  extra = gst_structure_new_empty ("extra");
  gst_cuda_qa_pairing_summary (self->pairing, extra);
  gst_structure_set (extra, "window", G_TYPE_STRING,
      cq_ssim_window_name (self->active_window), NULL);
  gst_cuda_qa_device_describe (self->dev, extra);
  gst_cuda_qa_settings_finish_report (&self->settings, G_OBJECT (self),
      self->report, extra);
  gst_structure_free (extra);
}

/* The pairing decides which frames meet (gstcudaqapairing.h); a pair is
 * measured, a distorted frame alone goes downstream without scores, after
 * the pairs before it. */
static GstFlowReturn
gst_cuda_ssim_aggregate (GstAggregator * agg, gboolean timeout)
{
  GstCudaSsim *self = GST_CUDA_SSIM (agg);
  GstBuffer *ref, *dist;
  GstSegment segment;
  GstFlowReturn ret;

  switch (gst_cuda_qa_pairing_next (self->pairing, timeout,
          self->have_distorted_info ? &self->distorted_info : NULL, &ref,
          &dist, &segment)) {
    case GST_CUDA_QA_PAIR_NEED_DATA:
      return GST_AGGREGATOR_FLOW_NEED_DATA;
    case GST_CUDA_QA_PAIR_EOS:
      ret = gst_cuda_qa_device_drain (self->dev, TRUE);
      gst_cuda_ssim_finish (self);
      return ret == GST_FLOW_OK ? GST_FLOW_EOS : ret;
    case GST_CUDA_QA_PAIR_MATCHED:
      ret = gst_cuda_ssim_submit_pair (self, ref, dist, &segment);
      gst_buffer_unref (ref);
      return ret;
    case GST_CUDA_QA_PAIR_DISTORTED_ALONE:
      ret = gst_cuda_qa_device_drain (self->dev, TRUE);
      if (ret != GST_FLOW_OK) {
        gst_buffer_unref (dist);
        return ret;
      }
      gst_cuda_qa_report_unpaired (self->report);
      return gst_aggregator_finish_buffer (agg, dist);
    case GST_CUDA_QA_PAIR_REFERENCE_DROPPED:
      break;
  }
  return GST_FLOW_OK;
}

static gboolean
gst_cuda_ssim_src_query (GstAggregator * agg, GstQuery * query)
{
  GstCudaSsim *self = GST_CUDA_SSIM (agg);

  if (gst_cuda_qa_device_query (self->dev, query))
    return TRUE;
  return GST_AGGREGATOR_CLASS (parent_class)->src_query (agg, query);
}

static gboolean
gst_cuda_ssim_propose_allocation (GstAggregator * agg, GstAggregatorPad * pad,
    GstQuery * decide_query, GstQuery * query)
{
  GstCudaSsim *self = GST_CUDA_SSIM (agg);

  (void) pad;
  (void) decide_query;
  if (!gst_cuda_qa_device_is_cuda (self->dev))
    return FALSE;
  return gst_cuda_qa_propose_pinned_pool (GST_ELEMENT (self), query);
}
