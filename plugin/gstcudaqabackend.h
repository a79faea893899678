/* GStreamer CUDA video quality: choosing the compute backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_BACKEND_H__
#define __GST_CUDA_QA_BACKEND_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef enum
{
  GST_CUDA_QA_BACKEND_AUTO,
  GST_CUDA_QA_BACKEND_CUDA,
  GST_CUDA_QA_BACKEND_CPU
} GstCudaQaBackend;

#define GST_TYPE_CUDA_QA_BACKEND (gst_cuda_qa_backend_get_type ())
GType gst_cuda_qa_backend_get_type (void);

/* The device an element should use, or -1 for the CPU. `auto` falls back to
 * the CPU with one GST_ELEMENT_WARNING; `cuda` without a usable device posts
 * GST_ELEMENT_ERROR and returns FALSE. */
gboolean gst_cuda_qa_backend_choose (GstElement * element,
    GstCudaQaBackend backend, gint device_id, gint * device);

G_END_DECLS
#endif /* __GST_CUDA_QA_BACKEND_H__ */
