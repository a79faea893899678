/* GStreamer CUDA video quality: the device plumbing every element shares.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/base/gstqueuearray.h>

#include "gstcudaqadevice.h"
#include "cq-cpu-simd.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_qa_device_debug);
#define GST_CAT_DEFAULT gst_cuda_qa_device_debug

struct _GstCudaQaDevice
{
  GstElement *element;          /* not a reference: the helper is its part */
  const GstCudaQaDeviceFuncs *funcs;
  gint device;                  /* CUDA device, or -1 for the CPU */
  GstCudaContext *context;      /* the shared gst.cuda.context, if usable */
  GstCudaContext *lib_context;  /* where the CUDA object lives */
  gpointer backend;             /* the CUDA object */
  guint in_flight;
  GstQueueArray *pending;       /* items, oldest first */
  gpointer item;                /* one item, completing */
};

static GQuark gst_cuda_qa_device_quark;

static void
gst_cuda_qa_device_init_once (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_cuda_qa_device_debug, "cudaqadevice", 0,
        "cudaquality: backend, CUDA context and frames in flight");
    gst_cuda_qa_device_quark =
        g_quark_from_static_string ("GstCudaQaDevice");
    g_once_init_leave (&done, 1);
  }
}

GstCudaQaDevice *
gst_cuda_qa_device_new (GstElement * element,
    const GstCudaQaDeviceFuncs * funcs)
{
  GstCudaQaDevice *dev = g_new0 (GstCudaQaDevice, 1);

  gst_cuda_qa_device_init_once ();
  dev->element = element;
  dev->funcs = funcs;
  dev->device = -1;
  if (funcs->item_size > 0) {
    dev->pending = gst_queue_array_new_for_struct (funcs->item_size, 2);
    dev->item = g_malloc0 (funcs->item_size);
  }
  g_object_set_qdata (G_OBJECT (element), gst_cuda_qa_device_quark, dev);
  return dev;
}

void
gst_cuda_qa_device_free (GstCudaQaDevice * dev)
{
  gst_cuda_qa_device_stop (dev);
  g_object_set_qdata (G_OBJECT (dev->element), gst_cuda_qa_device_quark,
      NULL);
  if (dev->pending)
    gst_queue_array_free (dev->pending);
  g_free (dev->item);
  g_free (dev);
}

static void
gst_cuda_qa_device_set_context (GstElement * element, GstContext * context)
{
  GstCudaQaDevice *dev =
      g_object_get_qdata (G_OBJECT (element), gst_cuda_qa_device_quark);
  GstElementClass *parent =
      g_type_class_peek_parent (G_OBJECT_GET_CLASS (element));
  gint device_id = -1;

  if (dev) {
    g_object_get (element, "cuda-device-id", &device_id, NULL);
    gst_cuda_qa_context_set (element, context, device_id, &dev->context);
  }
  parent->set_context (element, context);
}

void
gst_cuda_qa_device_install (GstElementClass * klass)
{
  gst_cuda_qa_device_init_once ();
  klass->set_context = GST_DEBUG_FUNCPTR (gst_cuda_qa_device_set_context);
}

gboolean
gst_cuda_qa_device_start (GstCudaQaDevice * dev, GstCudaQaBackend backend,
    gint device_id, gint frames_in_flight)
{
  if (!gst_cuda_qa_backend_choose (dev->element, backend, device_id,
          &dev->device))
    return FALSE;
  /* GStreamer's shared context where its CUDA library works: the kernels
   * then run in the same context as nvcodec's and read its memory */
  if (dev->device >= 0 && gst_cuda_qa_context_ensure (dev->element,
          device_id, &dev->context))
    dev->device = gst_cuda_qa_context_device (dev->context);
  dev->in_flight = frames_in_flight >= 0 ? (guint) frames_in_flight :
      dev->device >= 0 ? 1 : 0;
  return TRUE;
}

void
gst_cuda_qa_device_stop (GstCudaQaDevice * dev)
{
  gst_cuda_qa_device_forget (dev);
  gst_cuda_qa_device_close (dev);
  gst_cuda_qa_context_clear (&dev->context);
}

gboolean
gst_cuda_qa_device_ids (GstCudaQaDevice * dev, const gchar * list,
    gint * ids, guint * n_ids)
{
  CqError err = { CQ_OK, "" };
  CqError why = { CQ_OK, "" };
  gchar *item = g_strstrip (g_strdup (list ? list : ""));
  gint count;
  guint i;

  *n_ids = 0;
  if (*item == '\0') {
    g_free (item);
    return TRUE;
  }
  count = cq_cuda_device_count (&why);
  if (count <= 0 && g_str_equal (item, "all")) {
    GST_INFO_OBJECT (dev->element, "cuda-device-ids=all: %s", why.message);
    g_free (item);
    return TRUE;
  }
  g_free (item);
  if (cq_cuda_parse_devices (list, count, ids, n_ids, &err) != CQ_OK) {
    if (err.status == CQ_ERROR_INVALID)
      GST_ELEMENT_ERROR (dev->element, RESOURCE, SETTINGS,
          ("Bad cuda-device-ids \"%s\"", list), ("%s", err.message));
    else
      GST_ELEMENT_ERROR (dev->element, RESOURCE, NOT_FOUND,
          ("cuda-device-ids \"%s\": %s", list, err.message), ("%s",
              count > 0 ? "" : why.message));
    return FALSE;
  }
  for (i = 0; i < *n_ids; i++)
    if (cq_cuda_device_check (ids[i], &err) != CQ_OK) {
      GST_ELEMENT_ERROR (dev->element, RESOURCE, OPEN_READ_WRITE,
          ("CUDA device %d of cuda-device-ids \"%s\" cannot be used",
              ids[i], list), ("%s", err.message));
      *n_ids = 0;
      return FALSE;
    }
  GST_INFO_OBJECT (dev->element, "cuda-device-ids \"%s\": %u device(s)",
      list, *n_ids);
  return TRUE;
}

gboolean
gst_cuda_qa_device_is_cuda (GstCudaQaDevice * dev)
{
  return dev->device >= 0;
}

gint
gst_cuda_qa_device_id (GstCudaQaDevice * dev)
{
  return dev->device;
}

const gchar *
gst_cuda_qa_device_name (GstCudaQaDevice * dev)
{
  return dev->device >= 0 ? "CUDA" : "the CPU";
}

void
gst_cuda_qa_device_describe (GstCudaQaDevice * dev, GstStructure * s)
{
  const CqSimdKernels *simd = cq_cpu_simd_kernels ();
  gchar *device;

  if (dev->device >= 0)
    device = g_strdup_printf ("CUDA device %d", dev->device);
  else
    device = g_strdup_printf ("the CPU (%u thread(s), %s kernels)",
        g_get_num_processors (), simd ? simd->name : "plain C");
  gst_structure_set (s, "backend", G_TYPE_STRING,
      dev->device >= 0 ? "cuda" : "cpu", "device", G_TYPE_STRING, device,
      NULL);
  g_free (device);
}

GstCudaContext *
gst_cuda_qa_device_context (GstCudaQaDevice * dev)
{
  return dev->context;
}

gboolean
gst_cuda_qa_device_query (GstCudaQaDevice * dev, GstQuery * query)
{
  return gst_cuda_qa_context_query (dev->element, query, dev->context);
}

/* The library's hooks: the context current around each of its calls. */
static int
gst_cuda_qa_device_push (void *ctx)
{
  return gst_cuda_qa_context_push (ctx);
}

static void
gst_cuda_qa_device_pop (void *ctx)
{
  gst_cuda_qa_context_pop (ctx);
}

/* The library's target for ctx, or for the device without a context. */
static void
gst_cuda_qa_device_target_for (GstCudaQaDevice * dev, GstCudaContext * ctx,
    CqCudaTarget * target)
{
  CqCudaTarget device = CQ_CUDA_TARGET_DEVICE (dev->device);

  *target = device;
  if (ctx) {
    target->device = CQ_CUDA_CURRENT_CONTEXT;
    target->push = gst_cuda_qa_device_push;
    target->pop = gst_cuda_qa_device_pop;
    target->user = ctx;
  }
}

void
gst_cuda_qa_device_target (GstCudaQaDevice * dev, CqCudaTarget * target)
{
  gst_cuda_qa_device_target_for (dev, dev->backend ? dev->lib_context :
      dev->context, target);
}

gboolean
gst_cuda_qa_device_open (GstCudaQaDevice * dev, GstCudaContext * ctx,
    CqError * err)
{
  CqCudaTarget target;

  gst_cuda_qa_device_close (dev);
  if (!ctx)
    ctx = dev->context;
  gst_cuda_qa_device_target_for (dev, ctx, &target);
  dev->backend = dev->funcs->open (dev->element, &target, err);
  if (!dev->backend)
    return FALSE;
  dev->lib_context = gst_cuda_qa_context_ref (ctx);
  return TRUE;
}

gpointer
gst_cuda_qa_device_backend (GstCudaQaDevice * dev)
{
  return dev->backend;
}

void
gst_cuda_qa_device_close (GstCudaQaDevice * dev)
{
  if (dev->backend)
    dev->funcs->close (dev->backend);
  dev->backend = NULL;
  gst_cuda_qa_context_clear (&dev->lib_context);
}

gboolean
gst_cuda_qa_device_follow (GstCudaQaDevice * dev, GstCudaContext * ctx,
    CqError * err)
{
  if (dev->backend && ctx == dev->lib_context)
    return TRUE;
  GST_INFO_OBJECT (dev->element, "memory of another CUDA context (device "
      "%d): measuring in that context", gst_cuda_qa_context_device (ctx));
  if (gst_cuda_qa_device_drain (dev, TRUE) != GST_FLOW_OK)
    GST_DEBUG_OBJECT (dev->element, "downstream refused frames in flight");
  return gst_cuda_qa_device_open (dev, ctx, err);
}

void
gst_cuda_qa_device_setup_error (GstCudaQaDevice * dev, const CqError * err,
    const gchar * what, const gchar * for_what, ...)
{
  va_list args;
  gchar *subject;

  va_start (args, for_what);
  subject = g_strdup_vprintf (for_what, args);
  va_end (args);
  if (err->status == CQ_ERROR_OUT_OF_MEMORY)
    GST_ELEMENT_ERROR (dev->element, RESOURCE, NO_SPACE_LEFT,
        ("Out of memory for %s", subject), ("%s", err->message));
  else
    GST_ELEMENT_ERROR (dev->element, RESOURCE, FAILED,
        ("Could not set up %s for %s", what, subject), ("%s",
            err->message));
  g_free (subject);
}

void
gst_cuda_qa_device_measure_error (GstCudaQaDevice * dev, const CqError * err,
    const gchar * what, ...)
{
  va_list args;
  gchar *subject;

  va_start (args, what);
  subject = g_strdup_vprintf (what, args);
  va_end (args);
  GST_ELEMENT_ERROR (dev->element, RESOURCE, FAILED,
      ("%s failed on %s", subject, gst_cuda_qa_device_name (dev)),
      ("%s", err->message));
  g_free (subject);
}

guint
gst_cuda_qa_device_in_flight (GstCudaQaDevice * dev)
{
  return dev->in_flight;
}

guint
gst_cuda_qa_device_n_pending (GstCudaQaDevice * dev)
{
  return dev->pending ? gst_queue_array_get_length (dev->pending) : 0;
}

GstClockTime
gst_cuda_qa_device_latency (GstCudaQaDevice * dev, gint fps_n, gint fps_d)
{
  if (dev->in_flight == 0 || fps_n <= 0)
    return 0;
  /* a frame leaves when the next one arrives */
  return gst_util_uint64_scale_int (GST_SECOND * dev->in_flight, fps_d,
      fps_n);
}

/* Completes the oldest item: its buffer in *out, or pushed (push) or
 * dropped. */
static GstFlowReturn
gst_cuda_qa_device_complete_oldest (GstCudaQaDevice * dev, GstBuffer ** out,
    gboolean push)
{
  GstBuffer *buf = NULL;
  GstFlowReturn ret;

  memcpy (dev->item, gst_queue_array_pop_head_struct (dev->pending),
      dev->funcs->item_size);
  ret = dev->funcs->complete (dev->element, dev->item, &buf);
  if (out) {
    *out = buf;
    return ret;
  }
  if (ret == GST_FLOW_OK && push && buf)
    return dev->funcs->push (dev->element, buf);
  if (buf)
    gst_buffer_unref (buf);
  return ret;
}

GstFlowReturn
gst_cuda_qa_device_add_pending (GstCudaQaDevice * dev, gconstpointer item,
    GstBuffer ** out)
{
  gst_queue_array_push_tail_struct (dev->pending, (gpointer) item);
  if (gst_queue_array_get_length (dev->pending) > dev->in_flight)
    return gst_cuda_qa_device_complete_oldest (dev, out, TRUE);
  return GST_FLOW_OK;
}

GstFlowReturn
gst_cuda_qa_device_drain (GstCudaQaDevice * dev, gboolean push)
{
  GstFlowReturn ret = GST_FLOW_OK;

  while (gst_cuda_qa_device_n_pending (dev) > 0) {
    GstFlowReturn r = gst_cuda_qa_device_complete_oldest (dev, NULL, push);

    if (ret == GST_FLOW_OK)
      ret = r;
  }
  return ret;
}

void
gst_cuda_qa_device_forget (GstCudaQaDevice * dev)
{
  while (gst_cuda_qa_device_n_pending (dev) > 0)
    dev->funcs->forget (gst_queue_array_pop_head_struct (dev->pending));
}
