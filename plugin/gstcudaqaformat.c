/* GStreamer CUDA video quality: video formats as the compute library sees
 * them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudaqaformat.h"

/* Packed 8-bit RGB, measured as its gray value. */
static void
gst_cuda_qa_format_rgb_layout (const GstVideoInfo * info, CqLayout * layout)
{
  layout->kind = CQ_LAYOUT_RGB8;
  layout->depth = 8;
  layout->pixel_stride = GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  layout->r_offset = GST_VIDEO_INFO_COMP_POFFSET (info, GST_VIDEO_COMP_R);
  layout->g_offset = GST_VIDEO_INFO_COMP_POFFSET (info, GST_VIDEO_COMP_G);
  layout->b_offset = GST_VIDEO_INFO_COMP_POFFSET (info, GST_VIDEO_COMP_B);
}

/* Component comp as its own samples: 8 or 16 bits, depth and shift. */
static void
gst_cuda_qa_format_gray_layout (const GstVideoInfo * info, guint comp,
    CqLayout * layout)
{
  guint depth = GST_VIDEO_FORMAT_INFO_DEPTH (info->finfo, comp);

  layout->kind = depth > 8 ? CQ_LAYOUT_GRAY16 : CQ_LAYOUT_GRAY8;
  layout->depth = depth;
  layout->shift = GST_VIDEO_FORMAT_INFO_SHIFT (info->finfo, comp);
}

gboolean
gst_cuda_qa_format_layout (const GstVideoInfo * info, CqLayout * layout)
{
  memset (layout, 0, sizeof (*layout));
  if (GST_VIDEO_INFO_IS_RGB (info)) {
    if (GST_VIDEO_INFO_N_PLANES (info) != 1
        || GST_VIDEO_INFO_COMP_DEPTH (info, 0) != 8)
      return FALSE;
    gst_cuda_qa_format_rgb_layout (info, layout);
    return TRUE;
  }
  if (!GST_VIDEO_INFO_IS_YUV (info) && !GST_VIDEO_INFO_IS_GRAY (info))
    return FALSE;
  gst_cuda_qa_format_gray_layout (info, 0, layout);
  return TRUE;
}

void
gst_cuda_qa_format_planes (const GstVideoInfo * info, gboolean luma,
    GstCudaQaPlanes * planes)
{
  gboolean rgb = GST_VIDEO_INFO_IS_RGB (info);
  guint n_comps = GST_VIDEO_INFO_IS_GRAY (info) || luma ? 1 : 3;
  guint i;

  memset (planes, 0, sizeof (*planes));
  if (luma && rgb) {
    CqSsimPlane *p = &planes->planes[0];

    p->width = GST_VIDEO_INFO_WIDTH (info);
    p->height = GST_VIDEO_INFO_HEIGHT (info);
    gst_cuda_qa_format_rgb_layout (info, &p->layout);
    p->sample_stride = p->layout.pixel_stride;
    planes->video_plane[0] = 0;
    planes->names[0] = 'y';
    planes->n = 1;
    return;
  }
  for (i = 0; i < n_comps; i++) {
    CqSsimPlane *p = &planes->planes[i];
    guint comp = rgb ? (i == 0 ? GST_VIDEO_COMP_R : i == 1 ? GST_VIDEO_COMP_G :
        GST_VIDEO_COMP_B) : i;

    p->width = GST_VIDEO_INFO_COMP_WIDTH (info, comp);
    p->height = GST_VIDEO_INFO_COMP_HEIGHT (info, comp);
    gst_cuda_qa_format_gray_layout (info, comp, &p->layout);
    p->sample_stride = GST_VIDEO_INFO_COMP_PSTRIDE (info, comp);
    p->offset = GST_VIDEO_INFO_COMP_POFFSET (info, comp);
    planes->video_plane[i] = GST_VIDEO_INFO_COMP_PLANE (info, comp);
    planes->names[i] = rgb ? "rgb"[i] : "yuv"[i];
  }
  planes->n = n_comps;
}

void
gst_cuda_qa_format_plane_pointers (const GstCudaQaPlanes * planes,
    GstVideoFrame * frame, const void **data, size_t * stride)
{
  guint i;

  for (i = 0; i < planes->n; i++) {
    data[i] = GST_VIDEO_FRAME_PLANE_DATA (frame, planes->video_plane[i]);
    stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE (frame, planes->video_plane[i]);
  }
}
