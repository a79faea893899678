/* GStreamer CUDA video quality: cudasfproject
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_SF_PROJECT_H__
#define __GST_CUDA_SF_PROJECT_H__

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_SF_PROJECT (gst_cuda_sf_project_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaSfProject, gst_cuda_sf_project, GST,
    CUDA_SF_PROJECT, GstPushSrc);

typedef enum
{
  GST_CUDA_SF_PROJECT_OUTPUT_COUNTS,
  GST_CUDA_SF_PROJECT_OUTPUT_LINE_INTEGRAL
} GstCudaSfProjectOutput;

#define GST_TYPE_CUDA_SF_PROJECT_OUTPUT (gst_cuda_sf_project_output_get_type ())
GType gst_cuda_sf_project_output_get_type (void);
#define GST_TYPE_CUDA_SF_PROJECT_PHANTOM (gst_cuda_sf_project_phantom_get_type ())
GType gst_cuda_sf_project_phantom_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudasfproject);

G_END_DECLS
#endif /* __GST_CUDA_SF_PROJECT_H__ */
