/* GStreamer CUDA video quality: video formats as the compute library sees
 * them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_FORMAT_H__
#define __GST_CUDA_QA_FORMAT_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cq-common.h"
#include "cq-ssim.h"

G_BEGIN_DECLS

/* What plane 0 of a frame holds: the Y (or gray) samples, or packed RGB
 * measured as its gray value. FALSE for a format with neither. */
gboolean gst_cuda_qa_format_layout (const GstVideoInfo * info,
    CqLayout * layout);

/* The planes of a frame to compare: luma only (Y, or the gray value of
 * packed RGB) or every component (Y, U, V or R, G, B). */
typedef struct
{
  CqSsimPlane planes[CQ_SSIM_MAX_PLANES];
  guint video_plane[CQ_SSIM_MAX_PLANES];        /* plane of GstVideoFrame */
  gchar names[CQ_SSIM_MAX_PLANES];      /* 'y', 'u', 'v' or 'r', 'g', 'b' */
  guint n;
} GstCudaQaPlanes;

void gst_cuda_qa_format_planes (const GstVideoInfo * info, gboolean luma,
    GstCudaQaPlanes * planes);

/* Where the compared planes of a frame are: start and stride of each. */
typedef struct
{
  const void *data[CQ_SSIM_MAX_PLANES];
  size_t stride[CQ_SSIM_MAX_PLANES];
} GstCudaQaPlanePointers;

/* Start and stride of each of planes' planes in a mapped frame. */
void gst_cuda_qa_format_plane_pointers (const GstCudaQaPlanes * planes,
    GstVideoFrame * frame, const void **data, size_t * stride);

G_END_DECLS
#endif /* __GST_CUDA_QA_FORMAT_H__ */
