/* GStreamer CUDA video quality: cudasharpness
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-cudasharpness
 * @title: cudasharpness
 *
 * Measures the sharpness of every frame (no reference needed) on the GPU,
 * or on the CPU where no GPU is usable, and attaches the scores to the
 * buffer as a `CudaSharpnessMeta` custom meta. Pixels pass through
 * untouched. The measures are those of the image-sharpness literature
 * (variance, Roberts, Tenengrad, Laplacian, SMD, SMD2, max-min, entropy)
 * plus OpenCV's Laplacian variance and Brenner's gradient; see
 * docs/elements/cudasharpness.md for every formula. CUDA and CPU give
 * bit-identical scores.
 *
 * YUV input is measured on its Y plane, RGB input on its gray value
 * round (0.299 R + 0.587 G + 0.114 B).
 *
 * Scores also leave the element as `cudasharpness` element messages (per
 * frame, or averaged per #GstCudaSharpness:interval), as a CSV or JSON-lines
 * log (#GstCudaSharpness:location), and as a `cudasharpness-summary` message
 * at EOS.
 *
 * The `cudasharpness` message (when #GstCudaSharpness:post-messages):
 *
 * - GstClockTime `timestamp`: the PTS of the (first) frame
 * - GstClockTime `stream-time`: its stream time
 * - GstClockTime `running-time`: its running time
 * - GstClockTime `duration`: the frame's duration, or the running time the
 *   message covers when #GstCudaSharpness:interval > 0
 * - guint64 `frame`: the index of the (last) frame since start
 * - guint64 `frames`: the frames the message covers (1 without interval)
 * - gdouble `<measure>`: one per enabled measure (`tenengrad`, ...): the
 *   score, or its mean over the interval
 *
 * The `cudasharpness-summary` message (at EOS): guint64 `frames` and, per
 * enabled measure, gdouble `<measure>-mean`, `<measure>-min`,
 * `<measure>-max`.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=100 ! cudasharpness metrics=tenengrad+lapvar ! fakesink
 * ]| prints one `cudasharpness` message per frame.
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! cudasharpness location=scores.csv ! fakesink
 * ]| writes the default measures of every frame to scores.csv.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudasharpness.h"
#include "gstcudaqadevice.h"
#include "gstcudaqaformat.h"
#include "gstcudaqareport.h"
#include "gstcudaqasettings.h"
#include "cq-sharpness.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_sharpness_debug);
#define GST_CAT_DEFAULT gst_cuda_sharpness_debug

#define SHARPNESS_FORMATS "{ GRAY8, GRAY16_LE, I420, YV12, NV12, NV21, " \
    "Y42B, Y444, I420_10LE, P010_10LE, RGB, BGR, RGBA, BGRA, RGBx, BGRx, " \
    "xRGB, xBGR, ARGB, ABGR }"

/* CUDAMemory first: a decoder that offers both keeps frames on the GPU */
#if HAVE_GST_CUDA
#define SHARPNESS_CAPS \
    GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CUDA_QA_CAPS_FEATURE, \
        SHARPNESS_FORMATS) "; " GST_VIDEO_CAPS_MAKE (SHARPNESS_FORMATS)
#else
#define SHARPNESS_CAPS GST_VIDEO_CAPS_MAKE (SHARPNESS_FORMATS)
#endif

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (SHARPNESS_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (SHARPNESS_CAPS));

enum
{
  PROP_0,
  PROP_METRICS,
  PROP_ROI_X,
  PROP_ROI_Y,
  PROP_ROI_WIDTH,
  PROP_ROI_HEIGHT,
  PROP_SETTINGS                 /* first of GstCudaQaSettings' properties */
};

#define DEFAULT_PROP_METRICS CQ_METRIC_DEFAULT
#define DEFAULT_PROP_ROI 0

/* A frame between submit (measuring started) and collect (scores read):
 * the buffer stays mapped so that the GPU can read it meanwhile. */
typedef struct
{
  GstBuffer *buf;
  GstVideoFrame frame;
  gdouble scores[CQ_METRIC_COUNT];
} GstCudaSharpnessPending;

typedef gboolean (*GstCudaSharpnessSubmitFunc) (GstCudaSharpness * self,
    const guint8 * data, gsize stride, GstCudaSharpnessPending * pending,
    CqError * err);
typedef gboolean (*GstCudaSharpnessCollectFunc) (GstCudaSharpness * self,
    GstCudaSharpnessPending * pending, CqError * err);

struct _GstCudaSharpness
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  guint metrics;
  guint roi_x, roi_y, roi_width, roi_height;
  GstCudaQaSettings settings;

  /* streaming state */
  GstCudaQaDevice *dev;         /* backend, CUDA context, frames in flight */
  guint active_metrics;         /* metrics as of start () */
  gboolean device_input;        /* CUDAMemory caps, measured in place */
  GstVideoInfo info;
  CqLayout layout;
  guint rx, ry, rw, rh;         /* the measured region */
  CqSharpnessCpu *cpu;
  GstCudaSharpnessSubmitFunc submit;
  GstCudaSharpnessCollectFunc collect;
  GstCudaQaReport *report;
  guint64 gaps;                 /* GAP events: no frame, passed on */
};

G_DEFINE_TYPE (GstCudaSharpness, gst_cuda_sharpness, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (cudasharpness, "cudasharpness", GST_RANK_NONE,
    GST_TYPE_CUDA_SHARPNESS);

static void gst_cuda_sharpness_finalize (GObject * object);
static void gst_cuda_sharpness_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_cuda_sharpness_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static gboolean gst_cuda_sharpness_start (GstBaseTransform * trans);
static gboolean gst_cuda_sharpness_stop (GstBaseTransform * trans);
static gboolean gst_cuda_sharpness_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
static gboolean gst_cuda_sharpness_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static GstFlowReturn gst_cuda_sharpness_generate_output (GstBaseTransform *
    trans, GstBuffer ** outbuf);
static GstCaps *gst_cuda_sharpness_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter);
static gboolean gst_cuda_sharpness_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query);
static gboolean gst_cuda_sharpness_propose_allocation (GstBaseTransform *
    trans, GstQuery * decide_query, GstQuery * query);
static gpointer gst_cuda_sharpness_open_cuda (GstElement * element,
    const CqCudaTarget * target, CqError * err);
static GstFlowReturn gst_cuda_sharpness_complete (GstElement * element,
    gpointer item, GstBuffer ** out);
static void gst_cuda_sharpness_forget (gpointer item);
static GstFlowReturn gst_cuda_sharpness_push (GstElement * element,
    GstBuffer * buf);

static const GstCudaQaDeviceFuncs device_funcs = {
  gst_cuda_sharpness_open_cuda, (GDestroyNotify) cq_sharpness_cuda_free,
  sizeof (GstCudaSharpnessPending), gst_cuda_sharpness_complete,
  gst_cuda_sharpness_forget, gst_cuda_sharpness_push
};

GType
gst_cuda_sharpness_metrics_get_type (void)
{
  static GType type = 0;
  static const GFlagsValue values[] = {
    {CQ_METRIC_VARIANCE, "Gray-level variance (thesis eq. 2-1)", "variance"},
    {CQ_METRIC_ROBERTS, "Roberts cross gradient (eq. 2-4)", "roberts"},
    {CQ_METRIC_TENENGRAD, "Tenengrad: Sobel Gx²+Gy² (eq. 2-7)", "tenengrad"},
    {CQ_METRIC_LAPLACIAN, "Laplacian absolute sum (eq. 2-10)", "laplacian"},
    {CQ_METRIC_SMD, "Gray difference SMD (eq. 2-11)", "smd"},
    {CQ_METRIC_SMD2, "Gray difference product SMD2 (eq. 2-12)", "smd2"},
    {CQ_METRIC_MAXMIN, "Max-min over 3x3 (eq. 2-13)", "maxmin"},
    {CQ_METRIC_ENTROPY, "Gray-level entropy in bits (eq. 2-14)", "entropy"},
    {CQ_METRIC_LAPVAR, "Variance of the Laplacian (OpenCV recipe)", "lapvar"},
    {CQ_METRIC_BRENNER, "Brenner gradient, horizontal", "brenner"},
    {CQ_METRIC_ALL, "All of the above", "all"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_flags_register_static ("GstCudaSharpnessMetrics", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
gst_cuda_sharpness_class_init (GstCudaSharpnessClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->finalize = gst_cuda_sharpness_finalize;
  gobject_class->set_property = gst_cuda_sharpness_set_property;
  gobject_class->get_property = gst_cuda_sharpness_get_property;

  /**
   * GstCudaSharpness:metrics:
   *
   * The measures to compute, e.g. `tenengrad+laplacian+smd2`. Each becomes a
   * double field of the meta, the messages and the log.
   */
  g_object_class_install_property (gobject_class, PROP_METRICS,
      g_param_spec_flags ("metrics", "Metrics", "Sharpness measures to compute",
          GST_TYPE_CUDA_SHARPNESS_METRICS, DEFAULT_PROP_METRICS,
          flags | GST_PARAM_MUTABLE_READY));
  /**
   * GstCudaSharpness:roi-x:
   *
   * Left edge of the measured region, in pixels of the Y (or RGB) plane.
   */
  g_object_class_install_property (gobject_class, PROP_ROI_X,
      g_param_spec_uint ("roi-x", "ROI x", "Left edge of the measured region",
          0, G_MAXINT, DEFAULT_PROP_ROI, flags | GST_PARAM_MUTABLE_READY));
  /**
   * GstCudaSharpness:roi-y:
   *
   * Top edge of the measured region.
   */
  g_object_class_install_property (gobject_class, PROP_ROI_Y,
      g_param_spec_uint ("roi-y", "ROI y", "Top edge of the measured region",
          0, G_MAXINT, DEFAULT_PROP_ROI, flags | GST_PARAM_MUTABLE_READY));
  /**
   * GstCudaSharpness:roi-width:
   *
   * Width of the measured region; 0 = up to the right edge of the frame.
   */
  g_object_class_install_property (gobject_class, PROP_ROI_WIDTH,
      g_param_spec_uint ("roi-width", "ROI width",
          "Width of the measured region (0 = to the frame's right edge)",
          0, G_MAXINT, DEFAULT_PROP_ROI, flags | GST_PARAM_MUTABLE_READY));
  /**
   * GstCudaSharpness:roi-height:
   *
   * Height of the measured region; 0 = down to the bottom of the frame.
   */
  g_object_class_install_property (gobject_class, PROP_ROI_HEIGHT,
      g_param_spec_uint ("roi-height", "ROI height",
          "Height of the measured region (0 = to the frame's bottom edge)",
          0, G_MAXINT, DEFAULT_PROP_ROI, flags | GST_PARAM_MUTABLE_READY));
  gst_cuda_qa_settings_install (gobject_class, PROP_SETTINGS, "cudasharpness");

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "CUDA sharpness", "Filter/Analyzer/Video",
      "Measures no-reference sharpness of every frame on the GPU (or CPU) "
      "and attaches the scores as CudaSharpnessMeta", "cudaquality developers");

  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_sharpness_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_sharpness_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_sharpness_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_sharpness_sink_event);
  trans_class->generate_output =
      GST_DEBUG_FUNCPTR (gst_cuda_sharpness_generate_output);
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_cuda_sharpness_transform_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_sharpness_query);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_sharpness_propose_allocation);
  trans_class->passthrough_on_same_caps = FALSE;
  gst_cuda_qa_device_install (element_class);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_SHARPNESS_METRICS, 0);
  gst_cuda_qa_meta_register ("CudaSharpnessMeta");

  GST_DEBUG_CATEGORY_INIT (gst_cuda_sharpness_debug, "cudasharpness", 0,
      "CUDA sharpness measurement");
}

static void
gst_cuda_sharpness_init (GstCudaSharpness * self)
{
  self->metrics = DEFAULT_PROP_METRICS;
  gst_cuda_qa_settings_init (&self->settings);
  self->dev = gst_cuda_qa_device_new (GST_ELEMENT (self), &device_funcs);
  self->report = gst_cuda_qa_report_new (GST_ELEMENT (self), "cudasharpness",
      "CudaSharpnessMeta");
  /* pixels are only read: in place, the buffer made writable for the meta
   * (a shallow copy at most, never a pixel copy) */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}

static void
gst_cuda_sharpness_finalize (GObject * object)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (object);

  gst_cuda_qa_device_free (self->dev);
  gst_cuda_qa_report_free (self->report);
  gst_cuda_qa_settings_clear (&self->settings);
  G_OBJECT_CLASS (gst_cuda_sharpness_parent_class)->finalize (object);
}

static void
gst_cuda_sharpness_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (object);

  if (gst_cuda_qa_settings_set_property (&self->settings,
          object, PROP_SETTINGS, prop_id, value, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_METRICS:
      self->metrics = g_value_get_flags (value);
      break;
    case PROP_ROI_X:
      self->roi_x = g_value_get_uint (value);
      break;
    case PROP_ROI_Y:
      self->roi_y = g_value_get_uint (value);
      break;
    case PROP_ROI_WIDTH:
      self->roi_width = g_value_get_uint (value);
      break;
    case PROP_ROI_HEIGHT:
      self->roi_height = g_value_get_uint (value);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_sharpness_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (object);

  if (gst_cuda_qa_settings_get_property (&self->settings,
          object, PROP_SETTINGS, prop_id, value, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_METRICS:
      g_value_set_flags (value, self->metrics);
      break;
    case PROP_ROI_X:
      g_value_set_uint (value, self->roi_x);
      break;
    case PROP_ROI_Y:
      g_value_set_uint (value, self->roi_y);
      break;
    case PROP_ROI_WIDTH:
      g_value_set_uint (value, self->roi_width);
      break;
    case PROP_ROI_HEIGHT:
      g_value_set_uint (value, self->roi_height);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_sharpness_free_backends (GstCudaSharpness * self)
{
  cq_sharpness_cpu_free (self->cpu);
  self->cpu = NULL;
  gst_cuda_qa_device_close (self->dev);
  self->submit = NULL;
  self->collect = NULL;
}

static gboolean
gst_cuda_sharpness_start (GstBaseTransform * trans)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (trans);
  const gchar *fields[CQ_METRIC_COUNT];
  GstCudaQaLogFormat log_format;
  gchar *location;
  guint metrics, i, n = 0;
  gboolean ret;

  GST_OBJECT_LOCK (self);
  metrics = self->metrics;
  location = g_strdup (self->settings.location);
  log_format = self->settings.log_format;
  GST_OBJECT_UNLOCK (self);

  if (metrics == 0)
    goto no_metrics;
  if (!gst_cuda_qa_settings_start_device (&self->settings, G_OBJECT (self),
          self->dev))
    goto no_backend;

  self->active_metrics = metrics;
  self->gaps = 0;
  for (i = 0; i < CQ_METRIC_COUNT; i++)
    if (metrics & (1u << i))
      fields[n++] = cq_metric_name (i);
  gst_cuda_qa_settings_configure_report (&self->settings, G_OBJECT (self),
      self->report);
  ret = gst_cuda_qa_report_start (self->report, fields, n, location,
      log_format);
  g_free (location);
  return ret;

  /* ERRORS */
no_metrics:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("No sharpness measure selected"), ("metrics is empty"));
    g_free (location);
    return FALSE;
  }
no_backend:
  {
    g_free (location);
    return FALSE;
  }
}

static gboolean
gst_cuda_sharpness_stop (GstBaseTransform * trans)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (trans);

  gst_cuda_qa_device_stop (self->dev);
  gst_cuda_sharpness_free_backends (self);
  gst_cuda_qa_report_stop (self->report);
  return TRUE;
}

/* The CPU measures at submit; collect has nothing left to wait for. */
static gboolean
gst_cuda_sharpness_submit_cpu (GstCudaSharpness * self, const guint8 * data,
    gsize stride, GstCudaSharpnessPending * pending, CqError * err)
{
  return cq_sharpness_cpu_measure (self->cpu, data, stride, pending->scores,
      err) == CQ_OK;
}

static gboolean
gst_cuda_sharpness_collect_cpu (GstCudaSharpness * self,
    GstCudaSharpnessPending * pending, CqError * err)
{
  (void) self;
  (void) pending;
  (void) err;
  return TRUE;
}

/* CUDAMemory frames are read in place, host frames uploaded. The
 * library's CUDA object enters its context itself (the hooks the device
 * helper gave it). */
static gboolean
gst_cuda_sharpness_submit_cuda (GstCudaSharpness * self, const guint8 * data,
    gsize stride, GstCudaSharpnessPending * pending, CqError * err)
{
  CqSharpnessCuda *cuda = gst_cuda_qa_device_backend (self->dev);

  (void) pending;
  if (self->device_input)
    return cq_sharpness_cuda_submit_device (cuda, data, stride, err) == CQ_OK;
  return cq_sharpness_cuda_submit_host (cuda, data, stride, err) == CQ_OK;
}

static gboolean
gst_cuda_sharpness_collect_cuda (GstCudaSharpness * self,
    GstCudaSharpnessPending * pending, CqError * err)
{
  return cq_sharpness_cuda_collect (gst_cuda_qa_device_backend (self->dev),
      pending->scores, err) == CQ_OK;
}

/* The CUDA measurement where the device helper says: the element's shared
 * context, that of the memory arriving, or the device. */
static gpointer
gst_cuda_sharpness_open_cuda (GstElement * element,
    const CqCudaTarget * target, CqError * err)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (element);

  return cq_sharpness_cuda_new_for (target, &self->layout, self->rw,
      self->rh, self->active_metrics, err);
}

static gboolean
gst_cuda_sharpness_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (trans);
  CqError err = { CQ_OK, "" };
  guint roi_x, roi_y, roi_w, roi_h, width, height;

  (void) outcaps;               /* in place: the same as incaps */
  if (!gst_video_info_from_caps (&self->info, incaps))
    goto invalid_caps;
  if (!gst_cuda_qa_format_layout (&self->info, &self->layout))
    goto unknown_format;

  width = GST_VIDEO_INFO_WIDTH (&self->info);
  height = GST_VIDEO_INFO_HEIGHT (&self->info);
  GST_OBJECT_LOCK (self);
  roi_x = self->roi_x;
  roi_y = self->roi_y;
  roi_w = self->roi_width;
  roi_h = self->roi_height;
  GST_OBJECT_UNLOCK (self);
  if (roi_x >= width || roi_y >= height
      || (guint64) roi_x + roi_w > width || (guint64) roi_y + roi_h > height)
    goto bad_roi;
  self->rx = roi_x;
  self->ry = roi_y;
  self->rw = roi_w ? roi_w : width - roi_x;
  self->rh = roi_h ? roi_h : height - roi_y;

  gst_cuda_sharpness_free_backends (self);
  /* CUDAMemory on the CPU backend is read through a host mapping */
  self->device_input = gst_cuda_qa_device_is_cuda (self->dev)
      && gst_cuda_qa_caps_is_cuda (incaps);
  if (gst_cuda_qa_device_is_cuda (self->dev)) {
    if (!gst_cuda_qa_device_open (self->dev, NULL, &err))
      goto backend_failed;
    self->submit = gst_cuda_sharpness_submit_cuda;
    self->collect = gst_cuda_sharpness_collect_cuda;
  } else {
    self->cpu = cq_sharpness_cpu_new (&self->layout, self->rw, self->rh,
        self->active_metrics, 0, &err);
    if (!self->cpu)
      goto backend_failed;
    self->submit = gst_cuda_sharpness_submit_cpu;
    self->collect = gst_cuda_sharpness_collect_cpu;
  }
  GST_INFO_OBJECT (self, "measuring %ux%u at %u,%u of %s %ux%u on %s from "
      "%s memory, %u frame(s) in flight", self->rw, self->rh, self->rx,
      self->ry, GST_VIDEO_INFO_NAME (&self->info), width, height,
      gst_cuda_qa_device_name (self->dev),
      gst_cuda_qa_caps_is_cuda (incaps) ? "CUDA" : "system",
      gst_cuda_qa_device_in_flight (self->dev));
  return TRUE;

  /* ERRORS */
invalid_caps:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("invalid caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
unknown_format:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("format %s is not supported", GST_VIDEO_INFO_NAME (&self->info)));
    return FALSE;
  }
bad_roi:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Region of interest lies outside the frame"),
        ("ROI x=%u y=%u width=%u height=%u does not fit in the %ux%u frame",
            roi_x, roi_y, roi_w, roi_h, width, height));
    return FALSE;
  }
backend_failed:
  {
    gst_cuda_qa_device_setup_error (self->dev, &err, "sharpness measurement",
        "%ux%u %s frames", self->rw, self->rh,
        GST_VIDEO_INFO_NAME (&self->info));
    return FALSE;
  }
}

/* Reads the scores of a frame in flight, attaches them and hands the
 * buffer back. */
static GstFlowReturn
gst_cuda_sharpness_complete (GstElement * element, gpointer item,
    GstBuffer ** out)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (element);
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstCudaSharpnessPending *p = item;
  CqError err = { CQ_OK, "" };
  gdouble values[CQ_METRIC_COUNT];
  gboolean ok;
  guint i, n = 0;

  ok = self->collect (self, p, &err);
  gst_video_frame_unmap (&p->frame);
  if (!ok)
    goto measure_failed;

  for (i = 0; i < CQ_METRIC_COUNT; i++)
    if (self->active_metrics & (1u << i))
      values[n++] = p->scores[i];
  /* the frame's mapping is gone: a shallow copy at most */
  *out = gst_buffer_make_writable (p->buf);
  gst_cuda_qa_settings_report_frame (&self->settings, G_OBJECT (self),
      self->report, *out, &trans->segment, values);
  return GST_FLOW_OK;

  /* ERRORS */
measure_failed:
  {
    gst_cuda_qa_device_measure_error (self->dev, &err,
        "Sharpness measurement");
    gst_buffer_unref (p->buf);
    return GST_FLOW_ERROR;
  }
}

/* A frame in flight dropped unmeasured (stop). */
static void
gst_cuda_sharpness_forget (gpointer item)
{
  GstCudaSharpnessPending *p = item;

  gst_video_frame_unmap (&p->frame);
  gst_buffer_unref (p->buf);
}

static GstFlowReturn
gst_cuda_sharpness_push (GstElement * element, GstBuffer * buf)
{
  return gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (element), buf);
}

static gboolean
gst_cuda_sharpness_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (trans);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_STOP:
      gst_cuda_qa_device_drain (self->dev, FALSE);
      gst_cuda_qa_report_flush (self->report);
      break;
    case GST_EVENT_EOS:{
      GstStructure *extra;

      gst_cuda_qa_device_drain (self->dev, TRUE);
      extra = gst_structure_new ("extra", "gaps", G_TYPE_UINT64, self->gaps,
          NULL);
      gst_cuda_qa_device_describe (self->dev, extra);
      gst_cuda_qa_settings_finish_report (&self->settings, G_OBJECT (self),
          self->report, extra);
      gst_structure_free (extra);
      break;
    }
    case GST_EVENT_GAP:
      /* no frame: passed on after the frames in flight, counted */
      gst_cuda_qa_device_drain (self->dev, TRUE);
      self->gaps++;
      break;
    default:
      /* frames in flight go before any event that follows them */
      if (GST_EVENT_IS_SERIALIZED (event))
        gst_cuda_qa_device_drain (self->dev, TRUE);
      break;
  }
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_sharpness_parent_class)->sink_event
      (trans, event);
}

/* Maps the frame for the measurement's side: device pointers for CUDAMemory
 * on CUDA (moving the measurement into the memory's own context if it is
 * not the one in use), host pointers otherwise. */
static gboolean
gst_cuda_sharpness_map (GstCudaSharpness * self, GstBuffer * buf,
    GstVideoFrame * frame, CqError * err)
{
  GstCudaContext *ctx;

  if (!self->device_input)
    return gst_video_frame_map (frame, &self->info, buf, GST_MAP_READ) ||
        (cq_error_set (err, CQ_ERROR_INVALID, "cannot map the frame"), FALSE);

  ctx = gst_cuda_qa_buffer_context (buf);
  if (!ctx)
    return cq_error_set (err, CQ_ERROR_INVALID, "the caps say CUDAMemory but "
        "the buffer holds other memory"), FALSE;
  if (!gst_cuda_qa_device_follow (self->dev, ctx, err))
    return FALSE;
  return gst_cuda_qa_frame_map_device (frame, &self->info, buf) ||
      (cq_error_set (err, CQ_ERROR_CUDA, "cannot map the CUDA memory"), FALSE);
}

/* Each input frame starts measuring at once; a frame leaves when the one
 * after it (in_flight = 1) has started, or at once (in_flight = 0). */
static GstFlowReturn
gst_cuda_sharpness_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (trans);
  GstBuffer *buf = trans->queued_buf;
  GstCudaSharpnessPending p;
  CqError err = { CQ_OK, "" };
  const guint8 *data;
  gsize stride;

  trans->queued_buf = NULL;
  *outbuf = NULL;
  if (!buf)
    return GST_FLOW_OK;
  if (!self->submit)
    goto not_negotiated;

  if (!gst_cuda_sharpness_map (self, buf, &p.frame, &err))
    goto map_failed;
  stride = GST_VIDEO_FRAME_PLANE_STRIDE (&p.frame, 0);
  data = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&p.frame, 0) +
      (gsize) self->ry * stride +
      (gsize) self->rx * cq_layout_bytes_per_pixel (&self->layout);
  if (!self->submit (self, data, stride, &p, &err)) {
    gst_video_frame_unmap (&p.frame);
    goto measure_failed;
  }
  p.buf = buf;
  return gst_cuda_qa_device_add_pending (self->dev, &p, outbuf);

  /* ERRORS */
not_negotiated:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("received a buffer before caps"));
    gst_buffer_unref (buf);
    return GST_FLOW_NOT_NEGOTIATED;
  }
map_failed:
  {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL),
        ("could not map a %" G_GSIZE_FORMAT "-byte buffer as %s %dx%d: %s",
            gst_buffer_get_size (buf), GST_VIDEO_INFO_NAME (&self->info),
            GST_VIDEO_INFO_WIDTH (&self->info),
            GST_VIDEO_INFO_HEIGHT (&self->info), err.message));
    gst_buffer_unref (buf);
    return GST_FLOW_ERROR;
  }
measure_failed:
  {
    gst_cuda_qa_device_measure_error (self->dev, &err,
        "Sharpness measurement");
    gst_buffer_unref (buf);
    return GST_FLOW_ERROR;
  }
}

/* In place: the same caps both ways, CUDAMemory only where usable. */
static GstCaps *
gst_cuda_sharpness_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *allowed, *result, *tmp;

  (void) direction;
  allowed = gst_cuda_qa_caps_filter_usable (gst_pad_get_pad_template_caps
      (GST_BASE_TRANSFORM_SINK_PAD (trans)));
  result = gst_caps_intersect_full (caps, allowed, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (allowed);
  if (filter) {
    tmp = gst_caps_intersect_full (filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (result);
    result = tmp;
  }
  return result;
}

static gboolean
gst_cuda_sharpness_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (trans);
  GstClockTime frame = gst_cuda_qa_device_latency (self->dev,
      GST_VIDEO_INFO_FPS_N (&self->info), GST_VIDEO_INFO_FPS_D (&self->info));
  gboolean ret;

  if (gst_cuda_qa_device_query (self->dev, query))
    return TRUE;
  ret = GST_BASE_TRANSFORM_CLASS (gst_cuda_sharpness_parent_class)->query
      (trans, direction, query);
  if (ret && direction == GST_PAD_SRC
      && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && frame > 0) {
    GstClockTime min, max;
    gboolean live;

    gst_query_parse_latency (query, &live, &min, &max);
    gst_query_set_latency (query, live, min + frame,
        GST_CLOCK_TIME_IS_VALID (max) ? max + frame : max);
  }
  return ret;
}

static gboolean
gst_cuda_sharpness_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstCudaSharpness *self = GST_CUDA_SHARPNESS (trans);

  gboolean ret;

  /* in place: downstream's answer first (a sink may have no opinion) */
  ret = GST_BASE_TRANSFORM_CLASS (gst_cuda_sharpness_parent_class)
      ->propose_allocation (trans, decide_query, query);
  if (gst_cuda_qa_device_is_cuda (self->dev)
      && gst_query_get_n_allocation_pools (query) == 0)
    ret |= gst_cuda_qa_propose_pinned_pool (GST_ELEMENT (self), query);
  return ret;
}
