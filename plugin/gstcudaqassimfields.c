/* GStreamer CUDA video quality: cudassim's value fields.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaqassimfields.h"
#include "gstcudassim.h"

/* The element's enums (declared in gstcudassim.h). */

GType
gst_cuda_ssim_window_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_SSIM_WINDOW_BOX8,
        "8x8 box at every position, sample (co)variances (seed 004)", "box8"},
    {GST_CUDA_SSIM_WINDOW_FFMPEG,
        "8x8 on the 4-pixel grid, the x264/FFmpeg integer formula", "ffmpeg"},
    {GST_CUDA_SSIM_WINDOW_GAUSS11,
          "11x11 Gaussian, sigma 1.5 (Wang et al. 2004, scikit-image)",
        "gauss11"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaSsimWindow", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cuda_ssim_planes_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_SSIM_PLANES_LUMA,
        "Luma only (Y, or the gray value of RGB)", "luma"},
    {GST_CUDA_SSIM_PLANES_ALL,
          "Every plane (Y, U, V or R, G, B) and All, weighted by samples",
        "all"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaSsimPlanes", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

guint
gst_cuda_qa_ssim_field_names (const GstCudaQaSsimFields * f,
    const GstCudaQaPlanes * pl, gchar ** names)
{
  guint i, n = 0;

  names[n++] = g_strdup ("ssim");
  names[n++] = g_strdup ("ssim-db");
  names[n++] = g_strdup ("psnr");
  names[n++] = g_strdup ("mse");
  for (i = 0; f->per_plane && i < pl->n; i++) {
    names[n++] = g_strdup_printf ("ssim-%c", pl->names[i]);
    names[n++] = g_strdup_printf ("psnr-%c", pl->names[i]);
    names[n++] = g_strdup_printf ("mse-%c", pl->names[i]);
  }
  if (f->msssim) {
    names[n++] = g_strdup ("ms-ssim");
    for (i = 0; f->per_plane && i < pl->n; i++)
      names[n++] = g_strdup_printf ("ms-ssim-%c", pl->names[i]);
  }
  if (f->aligned)
    names[n++] = g_strdup ("reference-pts");
  return n;
}

void
gst_cuda_qa_ssim_field_values (const GstCudaQaSsimFields * f,
    const GstCudaQaPlanes * pl, const CqSsimPlaneSums * sums,
    GstClockTime reference_pts, gdouble * values)
{
  guint n = 4 + (f->per_plane ? 3 * pl->n : 0);

  cq_ssim_frame_scores (pl->planes, pl->n, sums, f->per_plane, values);
  if (f->msssim) {
    cq_ssim_frame_msssim (pl->planes, pl->n, sums, f->per_plane,
        values + n);
    n += 1 + (f->per_plane ? pl->n : 0);
  }
  if (f->aligned)
    values[n] = GST_CLOCK_TIME_IS_VALID (reference_pts) ?
        (gdouble) reference_pts : -1.0;
}
