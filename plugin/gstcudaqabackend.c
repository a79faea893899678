/* GStreamer CUDA video quality: choosing the compute backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaqabackend.h"
#include "cq-common.h"

GType
gst_cuda_qa_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_QA_BACKEND_AUTO,
        "CUDA where a device is usable, else the CPU (with a warning)", "auto"},
    {GST_CUDA_QA_BACKEND_CUDA, "CUDA; fail if no device is usable", "cuda"},
    {GST_CUDA_QA_BACKEND_CPU, "CPU (plain C, bands of rows on a worker pool)", "cpu"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaQaBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

gboolean
gst_cuda_qa_backend_choose (GstElement * element, GstCudaQaBackend backend,
    gint device_id, gint * device)
{
  CqError err = { CQ_OK, "" };
  gint count;

  *device = -1;
  if (backend == GST_CUDA_QA_BACKEND_CPU)
    return TRUE;

  count = cq_cuda_device_count (&err);
  if (count > 0 && device_id >= count) {
    cq_error_set (&err, CQ_ERROR_NO_CUDA,
        "cuda-device-id %d does not exist: %d CUDA device%s present",
        device_id, count, count == 1 ? " is" : "s are");
  } else if (count > 0) {
    *device = device_id < 0 ? 0 : device_id;
    GST_INFO_OBJECT (element, "using CUDA device %d of %d", *device, count);
    return TRUE;
  }

  if (backend == GST_CUDA_QA_BACKEND_CUDA) {
    GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND,
        ("backend=cuda but no usable CUDA device"), ("%s", err.message));
    return FALSE;
  }
  GST_ELEMENT_WARNING (element, RESOURCE, NOT_FOUND,
      ("no usable CUDA device, measuring on the CPU"), ("%s", err.message));
  return TRUE;
}
