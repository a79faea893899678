/* GStreamer CUDA video quality: cudasfproject
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-cudasfproject
 * @title: cudasfproject
 *
 * A live cone-beam CT detector: one frame per view, view after view,
 * rotation after rotation (on a circle, or on a helix: helical-pitch),
 * projected from a phantom or a volume file by the
 * Separable Footprint projector (SF-TR, A2) on the GPU, or on the CPU where
 * no GPU is usable. Frames are detector counts I = I0·exp(−∫μ) (optionally
 * with Poisson noise and Gaussian electronic noise, drawn where the frames
 * are made, the same on either backend for a seed) or scaled line
 * integrals, in GRAY16_LE or GRAY8; each
 * carries a `CudaSfProjectMeta` with its view, rotation, angle and the
 * geometry. Frames stay on the GPU (`video/x-raw(memory:CUDAMemory)`, in
 * the `gst.cuda.context` shared with nvcodec) when the element downstream
 * asks for CUDAMemory, as cudasharpness does. See
 * docs/elements/cudasfproject.md.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 cudasfproject num-buffers=360 ! videoconvert ! autovideosink
 * ]| one rotation of the 3D Shepp-Logan phantom.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudasfproject.h"
#include "gstcudaqadevice.h"
#include "gstcudaqareport.h"
#include "gstcudaqasfgeometry.h"
#include "gstcudaqasfsetup.h"
#include "cq-phantom.h"
#include "cq-sfproject.h"
#include "cq-sfnoise.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_sf_project_debug);
#define GST_CAT_DEFAULT gst_cuda_sf_project_debug

#define SF_FORMATS "{ GRAY16_LE, GRAY8 }"
#if HAVE_GST_CUDA
#define SF_CAPS GST_VIDEO_CAPS_MAKE (SF_FORMATS) "; " \
    GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CUDA_QA_CAPS_FEATURE, SF_FORMATS)
#else
#define SF_CAPS GST_VIDEO_CAPS_MAKE (SF_FORMATS)
#endif

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (SF_CAPS));

enum
{
  PROP_0,
  PROP_OUTPUT,
  PROP_PHOTONS,
  PROP_NOISE,
  PROP_SEED,
  PROP_MU_SCALE,
  PROP_PHANTOM,
  PROP_VOLUME_LOCATION,
  PROP_GEOMETRY,                /* first of the geometry's properties */
  PROP_IS_LIVE = PROP_GEOMETRY + GST_CUDA_QA_SF_GEOMETRY_N_PROPS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_ELECTRONIC_NOISE,
  PROP_CUDA_DEVICE_IDS,
  PROP_DEVICE_MEMORY_LIMIT
};

#define DEFAULT_OUTPUT GST_CUDA_SF_PROJECT_OUTPUT_COUNTS
#define DEFAULT_PHOTONS 50000.0
#define DEFAULT_ELECTRONIC_NOISE 0.0
#define MAX_ELECTRONIC_NOISE 1e6
#define DEFAULT_MU_SCALE 0.02   /* water at ~70 keV, 1/mm */
#define DEFAULT_PHANTOM CQ_PHANTOM_SHEPP_LOGAN
/* views projected together: one launch (or one CPU call) a batch, a
 * device's share when the volume is resident (streamed, the library says
 * how many a pass over its slabs serves) */
#define BATCH_VIEWS 16

struct _GstCudaSfProject
{
  GstPushSrc parent;

  /* properties, under the object lock */
  CqSfGeometry geometry;
  GstCudaSfProjectOutput output;
  gdouble photons, mu_scale;
  gboolean noise;
  gdouble electronic_noise;
  guint seed;
  CqPhantom phantom;
  gchar *volume_location;
  GstCudaQaBackend backend;
  gint cuda_device_id;
  gchar *cuda_device_ids;
  guint64 device_memory_limit;

  /* streaming state */
  CqSfGeometry g;               /* as of start () */
  GstCudaSfProjectOutput active_output;
  gdouble active_photons, active_mu_scale;
  gboolean active_noise;
  gdouble active_electronic;
  guint active_seed;
  GstCudaQaDevice *dev;         /* backend, CUDA context, the projector */
  gboolean gpu_pixels;          /* pixels (and noise) made on the GPU */
  gboolean prefer_device;       /* downstream names CUDAMemory */
  gboolean device_output;       /* CUDAMemory caps */
  float *volume;
  gdouble *volume_d, *batch_d;  /* CPU backend */
  CqSfCuda *cuda;               /* the device helper's, while open */
  float *batch;                 /* line integrals of the batch's views */
  guint batch_first, batch_count;
  guint batch_views;            /* views a batch */
  gint device_ids[CQ_CUDA_MAX_DEVICES];   /* cuda-device-ids, as of start () */
  guint n_device_ids;           /* 0: the helper's device alone */
  guint64 active_limit;
  gdouble max_integral;         /* for line-integral scaling */
  GstVideoInfo info;
  guint64 frame;
};

#define gst_cuda_sf_project_parent_class parent_class
G_DEFINE_TYPE (GstCudaSfProject, gst_cuda_sf_project, GST_TYPE_PUSH_SRC);
GST_ELEMENT_REGISTER_DEFINE (cudasfproject, "cudasfproject", GST_RANK_NONE,
    GST_TYPE_CUDA_SF_PROJECT);

static void gst_cuda_sf_project_finalize (GObject * object);
static void gst_cuda_sf_project_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_cuda_sf_project_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static GstCaps *gst_cuda_sf_project_get_caps (GstBaseSrc * src,
    GstCaps * filter);
static GstCaps *gst_cuda_sf_project_fixate (GstBaseSrc * src, GstCaps * caps);
static gboolean gst_cuda_sf_project_set_caps (GstBaseSrc * src, GstCaps * caps);
static void gst_cuda_sf_project_get_times (GstBaseSrc * src, GstBuffer * buf,
    GstClockTime * start, GstClockTime * end);
static gboolean gst_cuda_sf_project_start (GstBaseSrc * src);
static gboolean gst_cuda_sf_project_stop (GstBaseSrc * src);
static gboolean gst_cuda_sf_project_query (GstBaseSrc * src, GstQuery * query);
static gboolean gst_cuda_sf_project_negotiate (GstBaseSrc * src);
static gboolean gst_cuda_sf_project_decide_allocation (GstBaseSrc * src,
    GstQuery * query);
static gpointer gst_cuda_sf_project_open_cuda (GstElement * element,
    const CqCudaTarget * target, CqError * err);

static const GstCudaQaDeviceFuncs device_funcs = {
  gst_cuda_sf_project_open_cuda, (GDestroyNotify) cq_sf_cuda_free,
  0, NULL, NULL, NULL
};
static GstFlowReturn gst_cuda_sf_project_fill (GstPushSrc * src,
    GstBuffer * buf);

GType
gst_cuda_sf_project_output_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_SF_PROJECT_OUTPUT_COUNTS,
        "Detector counts I0 exp(-line integral of mu)", "counts"},
    {GST_CUDA_SF_PROJECT_OUTPUT_LINE_INTEGRAL,
          "Line integral of mu, scaled into the format (scale in the meta)",
        "line-integral"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaSfProjectOutput", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cuda_sf_project_phantom_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {CQ_PHANTOM_SHEPP_LOGAN, "3D Shepp-Logan, Yu-Ye-Wang values",
        "shepp-logan"},
    {CQ_PHANTOM_SHEPP_LOGAN_KAK, "3D Shepp-Logan, Kak-Slaney values",
        "shepp-logan-kak"},
    {CQ_PHANTOM_SPHERE, "Uniform sphere", "sphere"},
    {CQ_PHANTOM_CYLINDER, "Uniform cylinder along z", "cylinder"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaSfProjectPhantom", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
gst_cuda_sf_project_class_init (GstCudaSfProjectClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *src_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *push_class = GST_PUSH_SRC_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->finalize = gst_cuda_sf_project_finalize;
  gobject_class->set_property = gst_cuda_sf_project_set_property;
  gobject_class->get_property = gst_cuda_sf_project_get_property;

  g_object_class_install_property (gobject_class, PROP_OUTPUT,
      g_param_spec_enum ("output", "Output", "What a pixel holds",
          GST_TYPE_CUDA_SF_PROJECT_OUTPUT, DEFAULT_OUTPUT, flags));
  g_object_class_install_property (gobject_class, PROP_PHOTONS,
      g_param_spec_double ("photons", "photons",
          "Photons a detector cell receives without an object (I0)", 1.0, 1e9,
          DEFAULT_PHOTONS, flags));
  g_object_class_install_property (gobject_class, PROP_NOISE,
      g_param_spec_boolean ("noise", "Noise", "Poisson noise on the counts",
          FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_ELECTRONIC_NOISE,
      g_param_spec_double ("electronic-noise", "Electronic noise",
          "Standard deviation of the Gaussian electronic noise added to the "
          "counts after the Poisson draw, in counts (0 = none)", 0.0,
          MAX_ELECTRONIC_NOISE, DEFAULT_ELECTRONIC_NOISE, flags));
  g_object_class_install_property (gobject_class, PROP_SEED,
      g_param_spec_uint ("seed", "Seed", "Seed of the noise (reproducible)",
          0, G_MAXUINT, 0, flags));
  g_object_class_install_property (gobject_class, PROP_MU_SCALE,
      g_param_spec_double ("mu-scale", "mu-scale",
          "Attenuation per unit of volume value per mm (1/mm)", 0.0, 1e6,
          DEFAULT_MU_SCALE, flags));
  g_object_class_install_property (gobject_class, PROP_PHANTOM,
      g_param_spec_enum ("phantom", "Phantom",
          "Object to project (unless volume-location is set)",
          GST_TYPE_CUDA_SF_PROJECT_PHANTOM, DEFAULT_PHANTOM, flags));
  g_object_class_install_property (gobject_class, PROP_VOLUME_LOCATION,
      g_param_spec_string ("volume-location", "Volume location",
          "Raw little-endian float32 volume, x fastest, "
          "volume-width x volume-height x volume-depth values", NULL, flags));
  gst_cuda_qa_sf_geometry_install (gobject_class, PROP_GEOMETRY);
  g_object_class_install_property (gobject_class, PROP_IS_LIVE,
      g_param_spec_boolean ("is-live", "Is live",
          "Pace frames in real time at the caps' framerate", FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend", "Compute backend",
          GST_TYPE_CUDA_QA_BACKEND, GST_CUDA_QA_BACKEND_AUTO, flags));
  g_object_class_install_property (gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device ID",
          "CUDA device to use (-1 = the first)", -1, G_MAXINT, -1, flags));
  /**
   * GstCudaSfProject:cuda-device-ids:
   *
   * CUDA devices to spread the projection over: "" (default) uses
   * cuda-device-id alone, "all" every device present, or a list such as
   * "0,1" (a device may come twice). The views of a batch are split
   * between them (each view projected whole on one device, so frames are
   * the same as on one device) and leave in view order; frames in
   * CUDAMemory are in the first device's context. A device that does not
   * exist or cannot be used is a RESOURCE error at start naming it.
   */
  g_object_class_install_property (gobject_class, PROP_CUDA_DEVICE_IDS,
      g_param_spec_string ("cuda-device-ids", "CUDA device IDs",
          "CUDA devices to split the views over: \"\" = cuda-device-id, "
          "\"all\", or a list such as \"0,1\"", "", flags));
  /**
   * GstCudaSfProject:device-memory-limit:
   *
   * Bytes of memory each CUDA device may use for the volume, the
   * projections and their scratch; 0 (default) = what the device has free
   * at start, less 256 MiB. A volume that does not fit is streamed
   * through the device in z-slabs from pinned host memory, a batch of
   * views a pass over the slabs; a limit too small for even that is a
   * RESOURCE error at start naming the sizes.
   */
  g_object_class_install_property (gobject_class, PROP_DEVICE_MEMORY_LIMIT,
      g_param_spec_uint64 ("device-memory-limit", "Device memory limit",
          "Bytes of memory a CUDA device may use (0 = what it has free); "
          "a volume that does not fit is streamed through in z-slabs", 0,
          G_MAXUINT64, 0, flags));

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "CUDA SF cone-beam projector", "Source/Video",
      "Simulated cone-beam CT detector frames from the Separable Footprint "
      "projector, with CudaSfProjectMeta", "cudaquality developers");

  src_class->get_caps = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_get_caps);
  src_class->fixate = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_fixate);
  src_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_set_caps);
  src_class->get_times = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_get_times);
  src_class->start = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_start);
  src_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_stop);
  push_class->fill = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_fill);
  src_class->query = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_query);
  src_class->negotiate = GST_DEBUG_FUNCPTR (gst_cuda_sf_project_negotiate);
  src_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_sf_project_decide_allocation);
  gst_cuda_qa_device_install (element_class);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_SF_PROJECT_OUTPUT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_SF_PROJECT_PHANTOM, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_QA_BACKEND, 0);
  gst_cuda_qa_meta_register ("CudaSfProjectMeta");

  GST_DEBUG_CATEGORY_INIT (gst_cuda_sf_project_debug, "cudasfproject", 0,
      "CUDA SF cone-beam projector source");
}

static void
gst_cuda_sf_project_init (GstCudaSfProject * self)
{
  gst_cuda_qa_sf_geometry_init (&self->geometry);
  self->output = DEFAULT_OUTPUT;
  self->photons = DEFAULT_PHOTONS;
  self->mu_scale = DEFAULT_MU_SCALE;
  self->phantom = DEFAULT_PHANTOM;
  self->backend = GST_CUDA_QA_BACKEND_AUTO;
  self->cuda_device_id = -1;
  self->cuda_device_ids = g_strdup ("");
  self->dev = gst_cuda_qa_device_new (GST_ELEMENT (self), &device_funcs);
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_TIME);
}

static void
gst_cuda_sf_project_finalize (GObject * object)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (object);

  gst_cuda_qa_device_free (self->dev);
  g_free (self->volume_location);
  g_free (self->cuda_device_ids);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_sf_project_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_OUTPUT:
      self->output = g_value_get_enum (value);
      break;
    case PROP_PHOTONS:
      self->photons = g_value_get_double (value);
      break;
    case PROP_NOISE:
      self->noise = g_value_get_boolean (value);
      break;
    case PROP_ELECTRONIC_NOISE:
      self->electronic_noise = g_value_get_double (value);
      break;
    case PROP_SEED:
      self->seed = g_value_get_uint (value);
      break;
    case PROP_MU_SCALE:
      self->mu_scale = g_value_get_double (value);
      break;
    case PROP_PHANTOM:
      self->phantom = g_value_get_enum (value);
      break;
    case PROP_VOLUME_LOCATION:
      g_free (self->volume_location);
      self->volume_location = g_value_dup_string (value);
      break;
    case PROP_IS_LIVE:
      GST_OBJECT_UNLOCK (self);
      gst_base_src_set_live (GST_BASE_SRC (self), g_value_get_boolean (value));
      return;
    case PROP_BACKEND:
      self->backend = g_value_get_enum (value);
      break;
    case PROP_CUDA_DEVICE_ID:
      self->cuda_device_id = g_value_get_int (value);
      break;
    case PROP_CUDA_DEVICE_IDS:
      g_free (self->cuda_device_ids);
      self->cuda_device_ids = g_value_dup_string (value);
      break;
    case PROP_DEVICE_MEMORY_LIMIT:
      self->device_memory_limit = g_value_get_uint64 (value);
      break;
    default:
      if (!gst_cuda_qa_sf_geometry_set_property (&self->geometry,
              PROP_GEOMETRY, prop_id, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_sf_project_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (object);

  if (prop_id == PROP_IS_LIVE) {
    g_value_set_boolean (value, gst_base_src_is_live (GST_BASE_SRC (self)));
    return;
  }
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_OUTPUT:
      g_value_set_enum (value, self->output);
      break;
    case PROP_PHOTONS:
      g_value_set_double (value, self->photons);
      break;
    case PROP_NOISE:
      g_value_set_boolean (value, self->noise);
      break;
    case PROP_ELECTRONIC_NOISE:
      g_value_set_double (value, self->electronic_noise);
      break;
    case PROP_SEED:
      g_value_set_uint (value, self->seed);
      break;
    case PROP_MU_SCALE:
      g_value_set_double (value, self->mu_scale);
      break;
    case PROP_PHANTOM:
      g_value_set_enum (value, self->phantom);
      break;
    case PROP_VOLUME_LOCATION:
      g_value_set_string (value, self->volume_location);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, self->cuda_device_id);
      break;
    case PROP_CUDA_DEVICE_IDS:
      g_value_set_string (value, self->cuda_device_ids);
      break;
    case PROP_DEVICE_MEMORY_LIMIT:
      g_value_set_uint64 (value, self->device_memory_limit);
      break;
    default:
      if (!gst_cuda_qa_sf_geometry_get_property (&self->geometry,
              PROP_GEOMETRY, prop_id, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* The frame size is the detector's: caps fix it from the properties.
 * CUDAMemory needs GStreamer's CUDA library, a device and, once started, the
 * CUDA backend in the shared context; it comes first only for a peer that
 * names it (a sink that takes anything gets plain system memory). */
static GstCaps *
gst_cuda_sf_project_get_caps (GstBaseSrc * src, GstCaps * filter)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);
  GstCaps *caps = gst_pad_get_pad_template_caps (GST_BASE_SRC_PAD (src));
  gboolean device_ok, prefer_device;
  guint nu, nv;

  GST_OBJECT_LOCK (self);
  nu = self->geometry.nu;
  nv = self->geometry.nv;
  device_ok = !GST_BASE_SRC_IS_STARTED (src)
      || gst_cuda_qa_device_context (self->dev) != NULL;
  prefer_device = self->prefer_device;
  GST_OBJECT_UNLOCK (self);
  caps = gst_cuda_qa_caps_order (gst_cuda_qa_caps_filter_usable (caps),
      device_ok, prefer_device);
  if (nu > 0 && nv > 0) {
    caps = gst_caps_make_writable (caps);
    gst_caps_set_simple (caps, "width", G_TYPE_INT, (gint) nu, "height",
        G_TYPE_INT, (gint) nv, NULL);
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, caps,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (caps);
    caps = tmp;
  }
  return caps;
}

static GstCaps *
gst_cuda_sf_project_fixate (GstBaseSrc * src, GstCaps * caps)
{
  GstStructure *s;

  caps = gst_caps_make_writable (caps);
  s = gst_caps_get_structure (caps, 0);
  gst_structure_fixate_field_string (s, "format", "GRAY16_LE");
  gst_structure_fixate_field_nearest_fraction (s, "framerate", 30, 1);
  return GST_BASE_SRC_CLASS (parent_class)->fixate (src, caps);
}

/* Whether downstream names CUDAMemory itself (not merely takes anything):
 * then get_caps puts CUDAMemory first and the default negotiation picks
 * it. */
static gboolean
gst_cuda_sf_project_negotiate (GstBaseSrc * src)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);
  GstCaps *peer = gst_pad_peer_query_caps (GST_BASE_SRC_PAD (src), NULL);
  gboolean prefer = gst_cuda_qa_caps_names_cuda (peer);

  if (peer)
    gst_caps_unref (peer);
  GST_OBJECT_LOCK (self);
  self->prefer_device = prefer;
  GST_OBJECT_UNLOCK (self);
  return GST_BASE_SRC_CLASS (parent_class)->negotiate (src);
}

static gboolean
gst_cuda_sf_project_set_caps (GstBaseSrc * src, GstCaps * caps)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);

  if (!gst_video_info_from_caps (&self->info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("invalid caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  self->device_output = gst_cuda_qa_caps_is_cuda (caps);
  if (self->device_output && !gst_cuda_qa_device_context (self->dev)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("CUDAMemory output needs the CUDA backend in GStreamer's CUDA "
            "context; caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  GST_INFO_OBJECT (self, "frames in %s", self->device_output ?
      "CUDAMemory" : "system memory");
  /* the base class's pool then recycles frame-sized buffers */
  gst_base_src_set_blocksize (src, GST_VIDEO_INFO_SIZE (&self->info));
  return TRUE;
}

static gboolean
gst_cuda_sf_project_query (GstBaseSrc * src, GstQuery * query)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);

  if (gst_cuda_qa_device_query (self->dev, query))
    return TRUE;
  /* live: a frame leaves one frame duration after its time (as a camera's
   * exposure); it can wait downstream as long as it must */
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY
      && gst_base_src_is_live (src)) {
    gint fps_n = GST_VIDEO_INFO_FPS_N (&self->info);
    gint fps_d = GST_VIDEO_INFO_FPS_D (&self->info);

    gst_query_set_latency (query, TRUE, fps_n > 0 ?
        gst_util_uint64_scale (GST_SECOND, fps_d, fps_n) : 0,
        GST_CLOCK_TIME_NONE);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS (parent_class)->query (src, query);
}

/* CUDAMemory comes from a pool of pitched gray frames in our context (with
 * a video meta); system memory from whatever downstream offers or, where it
 * offers nothing and frames are downloaded from the GPU, from a pool of
 * pinned memory (a download into pageable memory runs at a fraction of
 * the PCIe speed). */
static gboolean
gst_cuda_sf_project_decide_allocation (GstBaseSrc * src, GstQuery * query)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);

  if (!self->device_output) {
    if (self->gpu_pixels && gst_query_get_n_allocation_pools (query) == 0
        && gst_query_get_n_allocation_params (query) == 0)
      gst_cuda_qa_propose_pinned_pool (GST_ELEMENT (self), query);
  } else if (!gst_cuda_qa_decide_device_pool (GST_ELEMENT (self), query,
          gst_cuda_qa_device_context (self->dev), &self->info)) {
    return FALSE;
  }
  return GST_BASE_SRC_CLASS (parent_class)->decide_allocation (src, query);
}

/* Live: the base class waits for each frame's time on the clock, which
 * paces the frames at the caps' framerate. */
static void
gst_cuda_sf_project_get_times (GstBaseSrc * src, GstBuffer * buf,
    GstClockTime * start, GstClockTime * end)
{
  GstClockTime ts = GST_BUFFER_PTS (buf);

  if (!gst_base_src_is_live (src) || !GST_CLOCK_TIME_IS_VALID (ts))
    return;
  *start = ts;
  if (GST_BUFFER_DURATION_IS_VALID (buf))
    *end = ts + GST_BUFFER_DURATION (buf);
}

/* count items of size bytes, or NULL and an error naming what could not
 * be allocated and its size. */
static gpointer
gst_cuda_sf_project_alloc (GstCudaSfProject * self, gsize count, gsize size,
    const gchar * what)
{
  gpointer p = g_try_malloc (count * size);

  if (!p)
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Out of memory for %s: %" G_GSIZE_FORMAT " bytes", what,
            count * size), ("a %ux%ux%u volume, a %ux%u detector, %u views "
            "a batch", self->g.nx, self->g.ny, self->g.nz, self->g.nu,
            self->g.nv, BATCH_VIEWS));
  return p;
}

/* The projector, and the volume in it, where the device helper says
 * (and on the other devices of cuda-device-ids). */
static gpointer
gst_cuda_sf_project_open_cuda (GstElement * element,
    const CqCudaTarget * target, CqError * err)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (element);
  CqCudaTarget targets[CQ_CUDA_MAX_DEVICES];
  CqSfCudaOptions options = { (size_t) self->active_limit };
  guint i, n = MAX (self->n_device_ids, 1);
  CqSfCuda *cuda;

  targets[0] = *target;
  for (i = 1; i < n; i++) {
    CqCudaTarget t = CQ_CUDA_TARGET_DEVICE (self->device_ids[i]);

    targets[i] = t;
  }
  cuda = cq_sf_cuda_new_multi (targets, n, &self->g, &options, err);

  if (cuda && cq_sf_cuda_set_volume (cuda, self->volume, err) != CQ_OK)
    g_clear_pointer (&cuda, cq_sf_cuda_free);
  return cuda;
}

static void
gst_cuda_sf_project_free (GstCudaSfProject * self)
{
  gst_cuda_qa_device_close (self->dev);
  self->cuda = NULL;
  g_clear_pointer (&self->volume, g_free);
  g_clear_pointer (&self->volume_d, g_free);
  g_clear_pointer (&self->batch_d, g_free);
  g_clear_pointer (&self->batch, g_free);
}

static gboolean
gst_cuda_sf_project_start (GstBaseSrc * src)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);
  GstCudaQaBackend backend;
  g_autofree gchar *location = NULL;
  g_autofree gchar *ids = NULL;
  CqPhantom phantom;
  gint device_id;
  gsize n, i, cells;
  gint num_buffers;

  g_object_get (self, "num-buffers", &num_buffers, NULL);
  GST_OBJECT_LOCK (self);
  self->g = self->geometry;
  self->active_output = self->output;
  self->active_photons = self->photons;
  self->active_mu_scale = self->mu_scale;
  self->active_noise = self->noise;
  self->active_electronic = self->electronic_noise;
  self->active_seed = self->seed;
  phantom = self->phantom;
  location = g_strdup (self->volume_location);
  backend = self->backend;
  device_id = self->cuda_device_id;
  ids = g_strdup (self->cuda_device_ids);
  self->active_limit = self->device_memory_limit;
  GST_OBJECT_UNLOCK (self);
  self->batch_views = BATCH_VIEWS;

  if (!gst_cuda_qa_sf_geometry_check (GST_ELEMENT (self), &self->g,
          num_buffers))
    goto failed;
  n = (gsize) self->g.nx * self->g.ny * self->g.nz;
  cells = (gsize) self->g.nu * self->g.nv;
  self->volume = gst_cuda_sf_project_alloc (self, n, sizeof (float),
      "the volume (float32 voxels)");
  if (self->volume)
    self->batch = gst_cuda_sf_project_alloc (self, cells * BATCH_VIEWS,
        sizeof (float), "a batch of detector frames (float32 cells)");
  if (!self->batch)
    goto failed;
  if (!gst_cuda_qa_sf_setup_volume (GST_ELEMENT (self), &self->g, location,
          phantom, self->active_mu_scale, self->volume, &self->max_integral))
    goto failed;
  /* on CUDA this opens the projector (gst_cuda_sf_project_open_cuda) */
  if (!gst_cuda_qa_sf_setup_devices (self->dev, GST_ELEMENT (self), backend,
          device_id, ids, self->device_ids, &self->n_device_ids, &self->g))
    goto failed;
  if (gst_cuda_qa_device_is_cuda (self->dev)) {
    self->cuda = gst_cuda_qa_device_backend (self->dev);
    /* resident: a batch a device; streamed: what a pass over the
     * slabs serves, so that frames keep flowing pass after pass */
    self->batch_views = cq_sf_cuda_batch_views (self->cuda);
    if (self->batch_views == 0)
      self->batch_views = MIN (BATCH_VIEWS * cq_sf_cuda_n_devices
          (self->cuda), cq_sf_cuda_keep_views (self->cuda));
    {
      gchar plan[1024];

      cq_sf_cuda_describe (self->cuda, plan, sizeof (plan));
      GST_INFO_OBJECT (self, "%u views a batch; %s", self->batch_views,
          plan);
    }
  } else {
    self->volume_d = gst_cuda_sf_project_alloc (self, n, sizeof (gdouble),
        "the CPU projector's volume (float64 voxels)");
    if (self->volume_d)
      self->batch_d = gst_cuda_sf_project_alloc (self, cells * BATCH_VIEWS,
          sizeof (gdouble), "the CPU projector's batch of detector frames "
          "(float64 cells)");
    if (!self->batch_d)
      goto failed;
    for (i = 0; i < n; i++)
      self->volume_d[i] = self->volume[i];
  }
  /* frames are converted, and their noise drawn, where the projections
   * are */
  self->gpu_pixels = self->cuda != NULL;
  self->batch_first = self->batch_count = 0;
  self->frame = 0;
  GST_INFO_OBJECT (self, "projecting %ux%ux%u voxels onto %ux%u cells, %u "
      "views a rotation, helical pitch %g mm, on %s", self->g.nx, self->g.ny,
      self->g.nz, self->g.nu, self->g.nv, self->g.n_views,
      self->g.helical_pitch, gst_cuda_qa_device_name (self->dev));
  return TRUE;

  /* ERRORS */
failed:
  {
    gst_cuda_sf_project_free (self);
    return FALSE;
  }
}

static gboolean
gst_cuda_sf_project_stop (GstBaseSrc * src)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);

  gst_cuda_sf_project_free (self);
  gst_cuda_qa_device_stop (self->dev);
  return TRUE;
}

/* Line integrals (value·mm) of views [first, first + count) into batch. */
static gboolean
gst_cuda_sf_project_compute (GstCudaSfProject * self, guint first,
    guint count, CqError * err)
{
  gsize cells = (gsize) self->g.nu * self->g.nv * count, i;

  if (self->cuda) {
    if (self->gpu_pixels)
      return cq_sf_cuda_project_keep (self->cuda, first, count, err) == CQ_OK;
    return cq_sf_cuda_project (self->cuda, first, count, self->batch,
        err) == CQ_OK;
  }
  if (cq_sf_project_cpu (&self->g, self->volume_d, first, count,
          self->batch_d, 0, err) != CQ_OK)
    return FALSE;
  for (i = 0; i < cells; i++)
    self->batch[i] = (float) self->batch_d[i];
  return TRUE;
}

static GstFlowReturn
gst_cuda_sf_project_fill (GstPushSrc * src, GstBuffer * buf)
{
  GstCudaSfProject *self = GST_CUDA_SF_PROJECT (src);
  const CqSfGeometry *g = &self->g;
  const guint view = (guint) (self->frame % g->n_views);
  /* a helical orbit's frames are views of their own (the source rises
   * along z), a circular orbit's repeat every rotation */
  const gboolean helical = g->helical_pitch > 0;
  const guint index = helical ? (guint) self->frame : view;
  const gboolean gray8 = GST_VIDEO_INFO_FORMAT (&self->info) ==
      GST_VIDEO_FORMAT_GRAY8;
  const gdouble levels = gray8 ? 255.0 : 65535.0;
  const gboolean counts =
      self->active_output == GST_CUDA_SF_PROJECT_OUTPUT_COUNTS;
  const gdouble I0 = self->active_photons, mu = self->active_mu_scale;
  gdouble value_scale;
  CqError err = { CQ_OK, "" };
  CqSfPixels px;
  CqSfNoise nz;
  GstVideoFrame frame;
  GstCustomMeta *meta;
  GstStructure *s;
  const float *li;
  gboolean ok;
  gint fps_n = GST_VIDEO_INFO_FPS_N (&self->info);
  gint fps_d = GST_VIDEO_INFO_FPS_D (&self->info);

  if (helical && self->frame > G_MAXUINT)
    goto helix_ended;
  if (index < self->batch_first
      || index - self->batch_first >= self->batch_count) {
    guint count = MIN (self->batch_views, g->n_views - view);

    if (helical)
      count = (guint) MIN (count, (guint64) G_MAXUINT - index + 1);
    if (!gst_cuda_sf_project_compute (self, index, count, &err))
      goto compute_failed;
    self->batch_first = index;
    self->batch_count = count;
  }
  li = self->batch + (gsize) (index - self->batch_first) * g->nu * g->nv;

  /* how a pixel value turns back into a line integral of mu: counts,
   * ∫μ = ln (value-scale / pixel), value-scale = the pixel value of I0
   * (pixels saturate at the format's maximum); line-integral,
   * ∫μ = pixel × value-scale */
  value_scale = counts ? (gray8 ? 255.0 : I0) :
      (self->max_integral > 0 ? self->max_integral / levels : 1.0 / levels);

  px.counts = counts;
  px.photons = I0;
  px.mu_scale = mu;
  px.integral_scale = value_scale;
  px.levels = levels;
  px.bytes = gray8 ? 1 : 2;
  /* keyed by the frame's place in the stream: every rotation draws anew */
  nz.poisson = self->active_noise;
  nz.electronic = self->active_electronic;
  nz.seed = self->active_seed;
  nz.view = self->frame;

  if (self->gpu_pixels) {
    if (self->device_output)
      ok = gst_cuda_qa_frame_map_device_write (&frame, &self->info, buf);
    else
      ok = gst_video_frame_map (&frame, &self->info, buf, GST_MAP_WRITE);
    if (!ok)
      goto map_failed;
    ok = cq_sf_cuda_pixels_noise (self->cuda, index - self->batch_first, &px,
        &nz, GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
        GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), self->device_output,
        &err) == CQ_OK;
    gst_video_frame_unmap (&frame);
    if (!ok)
      goto compute_failed;
    goto done;
  }

  /* the CPU backend: on the host (CUDAMemory is uploaded when downstream
   * maps it for the device) */
  if (!gst_video_frame_map (&frame, &self->info, buf, GST_MAP_WRITE))
    goto map_failed;
  ok = cq_sf_pixels_cpu (li, g->nu, g->nv, &px, &nz,
      GST_VIDEO_FRAME_PLANE_DATA (&frame, 0),
      GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), &err) == CQ_OK;
  gst_video_frame_unmap (&frame);
  if (!ok)
    goto compute_failed;

done:
  if (fps_n > 0) {
    GST_BUFFER_PTS (buf) = gst_util_uint64_scale (self->frame,
        fps_d * GST_SECOND, fps_n);
    GST_BUFFER_DURATION (buf) = gst_util_uint64_scale (self->frame + 1,
        fps_d * GST_SECOND, fps_n) - GST_BUFFER_PTS (buf);
  }
  GST_BUFFER_OFFSET (buf) = self->frame;
  GST_BUFFER_OFFSET_END (buf) = self->frame + 1;

  meta = gst_buffer_add_custom_meta (buf, "CudaSfProjectMeta");
  s = gst_custom_meta_get_structure (meta);
  gst_structure_set (s,
      "view", G_TYPE_UINT, view,
      "rotation", G_TYPE_UINT64, self->frame / g->n_views,
      "angle", G_TYPE_DOUBLE, cq_sf_view_angle (g, view),
      "source-z", G_TYPE_DOUBLE, cq_sf_source_z (g, index),
      "helical-pitch", G_TYPE_DOUBLE, g->helical_pitch,
      "output", G_TYPE_STRING, counts ? "counts" : "line-integral",
      "value-scale", G_TYPE_DOUBLE, value_scale,
      "photons", G_TYPE_DOUBLE, I0,
      "mu-scale", G_TYPE_DOUBLE, mu,
      "source-detector-distance", G_TYPE_DOUBLE, g->sdd,
      "source-origin-distance", G_TYPE_DOUBLE, g->sod,
      "pixel-pitch-u", G_TYPE_DOUBLE, g->du,
      "pixel-pitch-v", G_TYPE_DOUBLE, g->dv,
      "views", G_TYPE_UINT, g->n_views,
      "volume-width", G_TYPE_UINT, g->nx,
      "volume-height", G_TYPE_UINT, g->ny,
      "volume-depth", G_TYPE_UINT, g->nz,
      "voxel-size", G_TYPE_DOUBLE, g->dx,
      "voxel-size-z", G_TYPE_DOUBLE, g->dz, NULL);
  self->frame++;
  return GST_FLOW_OK;

  /* ERRORS */
compute_failed:
  {
    gst_cuda_qa_device_measure_error (self->dev, &err,
        "Projection of views %u..", index);
    return GST_FLOW_ERROR;
  }
helix_ended:
  {
    GST_ELEMENT_WARNING (self, STREAM, FAILED,
        ("Helical scan ended after %" G_GUINT64_FORMAT " views",
            (guint64) G_MAXUINT + 1),
        ("a helical orbit's view index ends at %u (the source at z %g mm); "
            "set num-buffers to end the scan before", G_MAXUINT,
            cq_sf_source_z (g, G_MAXUINT)));
    return GST_FLOW_EOS;
  }
map_failed:
  {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL),
        ("could not map a %" G_GSIZE_FORMAT "-byte output buffer",
            gst_buffer_get_size (buf)));
    return GST_FLOW_ERROR;
  }
}
