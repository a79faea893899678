/* GStreamer CUDA video quality: cudassim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_SSIM_H__
#define __GST_CUDA_SSIM_H__

#include <gst/gst.h>
#include <gst/base/gstaggregator.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_SSIM (gst_cuda_ssim_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaSsim, gst_cuda_ssim, GST, CUDA_SSIM,
    GstAggregator);

typedef enum
{
  GST_CUDA_SSIM_WINDOW_BOX8,
  GST_CUDA_SSIM_WINDOW_FFMPEG,
  GST_CUDA_SSIM_WINDOW_GAUSS11
} GstCudaSsimWindow;

typedef enum
{
  GST_CUDA_SSIM_PLANES_LUMA,
  GST_CUDA_SSIM_PLANES_ALL
} GstCudaSsimPlanes;

#define GST_TYPE_CUDA_SSIM_WINDOW (gst_cuda_ssim_window_get_type ())
GType gst_cuda_ssim_window_get_type (void);
#define GST_TYPE_CUDA_SSIM_PLANES (gst_cuda_ssim_planes_get_type ())
GType gst_cuda_ssim_planes_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudassim);

G_END_DECLS
#endif /* __GST_CUDA_SSIM_H__ */
