/* GStreamer CUDA video quality: cudassim's value fields (and the GTypes
 * of its window and planes enums).
 *
 * The names and values of the fields a measured pair reports (meta,
 * messages, log), in one order: ssim, ssim-db, psnr, mse; with per-plane
 * fields ssim-/psnr-/mse-<p> a plane; with MS-SSIM ms-ssim (and
 * ms-ssim-<p> a plane with per-plane fields); with alignment
 * reference-pts, the PTS (ns) of the reference frame paired with.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_SSIM_FIELDS_H__
#define __GST_CUDA_QA_SSIM_FIELDS_H__

#include <gst/gst.h>

#include "gstcudaqaformat.h"

G_BEGIN_DECLS

#define GST_CUDA_QA_SSIM_MAX_FIELDS (4 + 4 * CQ_SSIM_MAX_PLANES + 2)

typedef struct
{
  gboolean per_plane;           /* planes=all */
  gboolean msssim;
  gboolean aligned;
} GstCudaQaSsimFields;

/* The field names (g_free each); returns how many. */
guint gst_cuda_qa_ssim_field_names (const GstCudaQaSsimFields * f,
    const GstCudaQaPlanes * pl, gchar ** names);

/* A pair's values from its planes' sums, in the order of the names. */
void gst_cuda_qa_ssim_field_values (const GstCudaQaSsimFields * f,
    const GstCudaQaPlanes * pl, const CqSsimPlaneSums * sums,
    GstClockTime reference_pts, gdouble * values);

G_END_DECLS
#endif /* __GST_CUDA_QA_SSIM_FIELDS_H__ */
