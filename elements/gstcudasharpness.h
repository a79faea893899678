/* GStreamer CUDA video quality: cudasharpness
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_SHARPNESS_H__
#define __GST_CUDA_SHARPNESS_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_SHARPNESS (gst_cuda_sharpness_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaSharpness, gst_cuda_sharpness, GST,
    CUDA_SHARPNESS, GstBaseTransform);

#define GST_TYPE_CUDA_SHARPNESS_METRICS (gst_cuda_sharpness_metrics_get_type ())
GType gst_cuda_sharpness_metrics_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudasharpness);

G_END_DECLS
#endif /* __GST_CUDA_SHARPNESS_H__ */
