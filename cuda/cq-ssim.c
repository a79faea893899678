/* cudaquality compute library: SSIM definitions shared by both backends.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-ssim.h"
#include "cq-ssim-local.h"

#include <math.h>

/* Planes above this many samples could overflow the 64-bit sum of squared
 * 16-bit differences. */
#define MAX_SAMPLES (1ull << 32)

const char *
cq_ssim_window_name (CqSsimWindow window)
{
  switch (window) {
    case CQ_SSIM_BOX8:
      return "box8";
    case CQ_SSIM_FFMPEG:
      return "ffmpeg";
    case CQ_SSIM_GAUSS11:
      return "gauss11";
  }
  return "unknown";
}

/* The smallest plane side holding one window. */
static unsigned
window_min_side (CqSsimWindow window)
{
  return window == CQ_SSIM_GAUSS11 ? 11 : 8;
}

uint64_t
cq_ssim_window_count (CqSsimWindow window, unsigned width, unsigned height)
{
  if (width < window_min_side (window) || height < window_min_side (window))
    return 0;
  switch (window) {
    case CQ_SSIM_BOX8:
      return (uint64_t) (width - 7) * (height - 7);
    case CQ_SSIM_FFMPEG:
      return (uint64_t) (width / 4 - 1) * (height / 4 - 1);
    case CQ_SSIM_GAUSS11:
      return (uint64_t) (width - 10) * (height - 10);
  }
  return 0;
}

unsigned
cq_ssim_peak (const CqSsimPlane * plane)
{
  return (1u << plane->layout.depth) - 1;
}

void
cq_ssim_window_constants (const CqSsimPlane * plane, CqSsimWindow window,
    double *c1, double *c2)
{
  const double peak = cq_ssim_peak (plane);

  switch (window) {
    case CQ_SSIM_GAUSS11:
      *c1 = (0.01 * peak) * (0.01 * peak);
      *c2 = (0.03 * peak) * (0.03 * peak);
      break;
    case CQ_SSIM_BOX8:
      *c1 = 4096.0 * (0.01 * peak) * (0.01 * peak);
      *c2 = 4032.0 * (0.03 * peak) * (0.03 * peak);
      break;
    default:
      *c1 = (double) CQ_SSIM_FFMPEG_C1 ((int64_t) peak);
      *c2 = (double) CQ_SSIM_FFMPEG_C2 ((int64_t) peak);
      break;
  }
}

size_t
cq_ssim_plane_row_bytes (const CqSsimPlane * p)
{
  if (p->layout.kind == CQ_LAYOUT_RGB8)
    return (size_t) p->width * p->sample_stride;
  return (size_t) (p->width - 1) * p->sample_stride + p->offset +
      (p->layout.kind == CQ_LAYOUT_GRAY16 ? 2 : 1);
}

CqStatus
cq_ssim_check (CqSsimWindow window, const CqSsimPlane * planes,
    unsigned n_planes, CqError * err)
{
  unsigned i, side = window_min_side (window);

  if (window > CQ_SSIM_GAUSS11)
    return cq_error_set (err, CQ_ERROR_INVALID, "unknown SSIM window %d",
        (int) window);
  if (n_planes < 1 || n_planes > CQ_SSIM_MAX_PLANES)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "%u planes to compare (1 to %d supported)", n_planes,
        CQ_SSIM_MAX_PLANES);
  for (i = 0; i < n_planes; i++) {
    const CqSsimPlane *p = &planes[i];
    const CqLayout *l = &p->layout;
    unsigned bytes = l->kind == CQ_LAYOUT_GRAY16 ? 2 : 1;

    if (p->width < side || p->height < side)
      return cq_error_set (err, CQ_ERROR_INVALID,
          "plane %u of %ux%u samples is smaller than the %ux%u %s window",
          i, p->width, p->height, side, side, cq_ssim_window_name (window));
    if ((uint64_t) p->width * p->height > MAX_SAMPLES)
      return cq_error_set (err, CQ_ERROR_INVALID,
          "plane %u of %ux%u samples is larger than the supported %llu",
          i, p->width, p->height, (unsigned long long) MAX_SAMPLES);
    switch (l->kind) {
      case CQ_LAYOUT_GRAY8:
        if (l->depth != 8)
          goto bad_depth;
        break;
      case CQ_LAYOUT_GRAY16:
        if (l->depth < 9 || l->depth > 16 || l->shift + l->depth > 16)
          goto bad_depth;
        break;
      case CQ_LAYOUT_RGB8:
        if (l->depth != 8)
          goto bad_depth;
        if ((l->pixel_stride != 3 && l->pixel_stride != 4)
            || p->sample_stride != l->pixel_stride
            || l->r_offset >= l->pixel_stride
            || l->g_offset >= l->pixel_stride || l->b_offset >= l->pixel_stride)
          return cq_error_set (err, CQ_ERROR_INVALID,
              "plane %u: packed RGB of %u bytes a pixel with R, G, B at "
              "%u, %u, %u is not a valid layout", i, l->pixel_stride,
              l->r_offset, l->g_offset, l->b_offset);
        break;
      default:
        return cq_error_set (err, CQ_ERROR_INVALID,
            "plane %u: unknown layout %d", i, (int) l->kind);
    }
    if (p->offset + bytes > p->sample_stride)
      return cq_error_set (err, CQ_ERROR_INVALID,
          "plane %u: samples of %u bytes every %u bytes at offset %u do not "
          "fit", i, bytes, p->sample_stride, p->offset);
    continue;
  bad_depth:
    return cq_error_set (err, CQ_ERROR_INVALID,
        "plane %u: depth %u (shift %u) is not supported for this layout", i,
        l->depth, l->shift);
  }
  return CQ_OK;
}

void
cq_ssim_plane_scores (const CqSsimPlane * plane, const CqSsimPlaneSums * sums,
    double *ssim, double *mse, double *psnr)
{
  double peak = cq_ssim_peak (plane);

  *ssim = sums->windows ? sums->ssim_sum / (double) sums->windows : NAN;
  *mse = (double) sums->sse / (double) sums->samples;
  *psnr = sums->sse == 0 ? INFINITY : 10.0 * log10 (peak * peak / *mse);
}

void
cq_ssim_gauss_weights (double weights[11])
{
  double sum = 0.0;
  int k;

  for (k = 0; k < 11; k++) {
    double x = k - 5;

    weights[k] = exp (-0.5 / (1.5 * 1.5) * x * x);
    sum += weights[k];
  }
  for (k = 0; k < 11; k++)
    weights[k] /= sum;
}

static double
ssim_db (double ssim)
{
  return ssim >= 1.0 ? INFINITY : 10.0 * log10 (1.0 / (1.0 - ssim));
}

void
cq_ssim_frame_scores (const CqSsimPlane * planes, unsigned n_planes,
    const CqSsimPlaneSums * sums, int per_plane, double *values)
{
  double ssim_all = 0.0, peak = cq_ssim_peak (&planes[0]);
  uint64_t samples = 0, sse = 0;
  unsigned i, n = 4;

  for (i = 0; i < n_planes; i++)
    samples += sums[i].samples;
  for (i = 0; i < n_planes; i++) {
    double ssim, mse, psnr;

    cq_ssim_plane_scores (&planes[i], &sums[i], &ssim, &mse, &psnr);
    ssim_all += ssim * (double) sums[i].samples;
    sse += sums[i].sse;
    if (per_plane) {
      values[n++] = ssim;
      values[n++] = psnr;
      values[n++] = mse;
    }
  }
  if (n_planes == 1)            /* exactly the plane's value */
    cq_ssim_plane_scores (&planes[0], &sums[0], &ssim_all, &values[3],
        &values[2]);
  else                          /* weighted by samples, as FFmpeg's All */
    ssim_all /= (double) samples;
  values[0] = ssim_all;
  values[1] = ssim_db (ssim_all);
  if (n_planes > 1) {
    values[3] = (double) sse / samples;
    values[2] = sse == 0 ? INFINITY : 10.0 * log10 (peak * peak / values[3]);
  }
}

static const double msssim_weights[CQ_MSSSIM_SCALES] = {
  0.0448, 0.2856, 0.3001, 0.2363, 0.1333
};

double
cq_ssim_msssim_weight (unsigned scale)
{
  return scale < CQ_MSSSIM_SCALES ? msssim_weights[scale] : 0.0;
}

uint64_t
cq_ssim_msssim_windows (unsigned scale, unsigned width, unsigned height)
{
  return cq_ssim_window_count (CQ_SSIM_GAUSS11, width >> scale,
      height >> scale);
}

CqStatus
cq_ssim_msssim_check (const CqSsimPlane * planes, unsigned n_planes,
    CqError * err)
{
  unsigned i;

  for (i = 0; i < n_planes; i++)
    if (planes[i].width < CQ_MSSSIM_MIN_SIDE
        || planes[i].height < CQ_MSSSIM_MIN_SIDE)
      return cq_error_set (err, CQ_ERROR_INVALID,
          "MS-SSIM needs planes of at least %ux%u samples (five scales of "
          "the 11x11 window); plane %u is %ux%u", CQ_MSSSIM_MIN_SIDE,
          CQ_MSSSIM_MIN_SIDE, i, planes[i].width, planes[i].height);
  return CQ_OK;
}

double
cq_ssim_msssim (const CqSsimPlane * plane, const CqSsimPlaneSums * sums)
{
  double v = 1.0;
  unsigned s;

  for (s = 0; s < CQ_MSSSIM_SCALES; s++) {
    double mean = sums->ms_sum[s] / (double) cq_ssim_msssim_windows (s,
        plane->width, plane->height);

    v *= pow (mean > 0.0 ? mean : 0.0, msssim_weights[s]);
  }
  return v;
}

void
cq_ssim_frame_msssim (const CqSsimPlane * planes, unsigned n_planes,
    const CqSsimPlaneSums * sums, int per_plane, double *values)
{
  double all = 0.0;
  uint64_t samples = 0;
  unsigned i;

  for (i = 0; i < n_planes; i++) {
    double v = cq_ssim_msssim (&planes[i], &sums[i]);

    all += v * (double) sums[i].samples;
    samples += sums[i].samples;
    if (per_plane)
      values[1 + i] = v;
  }
  values[0] = n_planes == 1 ? cq_ssim_msssim (&planes[0], &sums[0]) :
      all / (double) samples;
}

/* ---- the CUDA backend's entry points that are the same in every build ---- */

CqSsimCuda *
cq_ssim_cuda_new (int device, CqSsimWindow window, const CqSsimPlane * planes,
    unsigned n_planes, CqError * err)
{
  const CqCudaTarget target = CQ_CUDA_TARGET_DEVICE (device);

  return cq_ssim_cuda_new_for (&target, window, planes, n_planes, err);
}

CqStatus
cq_ssim_cuda_measure_host (CqSsimCuda * cuda, const void *const *ref,
    const size_t *ref_strides, const void *const *dist,
    const size_t *dist_strides, CqSsimPlaneSums * sums, CqError * err)
{
  CQ_RETURN_SUBMIT_COLLECT (cq_ssim_cuda_submit_host (cuda, ref, ref_strides,
          dist, dist_strides, err), cq_ssim_cuda_collect (cuda, sums, err));
}

CqStatus
cq_ssim_cuda_measure_device (CqSsimCuda * cuda, const void *const *ref,
    const size_t *ref_pitches, const void *const *dist,
    const size_t *dist_pitches, CqSsimPlaneSums * sums, CqError * err)
{
  CQ_RETURN_SUBMIT_COLLECT (cq_ssim_cuda_submit_device (cuda, ref,
          ref_pitches, dist, dist_pitches, err), cq_ssim_cuda_collect (cuda,
          sums, err));
}
