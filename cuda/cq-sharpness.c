/* cudaquality compute library: sharpness scores from exact integer sums.
 *
 * This is the one place where sums become doubles, for both backends: that
 * is what makes CUDA and CPU scores bit-identical.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-sharpness.h"

#include <math.h>

static const char *const metric_names[CQ_METRIC_COUNT] = {
  "variance", "roberts", "tenengrad", "laplacian", "smd", "smd2", "maxmin",
  "entropy", "lapvar", "brenner"
};

const char *
cq_metric_name (unsigned index)
{
  return index < CQ_METRIC_COUNT ? metric_names[index] : NULL;
}

unsigned
cq_sharpness_hist_bins (const CqLayout * layout)
{
  return 1u << layout->depth;
}

/* Frames above this many pixels could overflow n·Σg² in 128 bits. */
#define MAX_PIXELS (1ull << 34)

CqStatus
cq_sharpness_check (const CqLayout * layout, unsigned width, unsigned height,
    CqError * err)
{
  if (width == 0 || height == 0)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "frame of %ux%u pixels has nothing to measure", width, height);
  if ((uint64_t) width * height > MAX_PIXELS)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "frame of %ux%u pixels is larger than the supported %llu pixels",
        width, height, (unsigned long long) MAX_PIXELS);
  switch (layout->kind) {
    case CQ_LAYOUT_GRAY8:
      if (layout->depth != 8)
        goto bad_depth;
      break;
    case CQ_LAYOUT_GRAY16:
      if (layout->depth < 9 || layout->depth > 16
          || layout->shift + layout->depth > 16)
        goto bad_depth;
      break;
    case CQ_LAYOUT_RGB8:
      if (layout->depth != 8)
        goto bad_depth;
      if ((layout->pixel_stride != 3 && layout->pixel_stride != 4)
          || layout->r_offset >= layout->pixel_stride
          || layout->g_offset >= layout->pixel_stride
          || layout->b_offset >= layout->pixel_stride)
        return cq_error_set (err, CQ_ERROR_INVALID,
            "packed RGB layout with %u bytes per pixel and offsets "
            "R %u G %u B %u is not supported", layout->pixel_stride,
            layout->r_offset, layout->g_offset, layout->b_offset);
      break;
    default:
      return cq_error_set (err, CQ_ERROR_INVALID, "unknown layout kind %d",
          (int) layout->kind);
  }
  return CQ_OK;

bad_depth:
  return cq_error_set (err, CQ_ERROR_INVALID,
      "depth %u (shift %u) is not supported for layout kind %d",
      layout->depth, layout->shift, (int) layout->kind);
}

static unsigned __int128
u128 (CqInt128 v)
{
  return ((unsigned __int128) v.hi << 64) | v.lo;
}

/* n·Σx² − (Σx)² ≥ 0 (Cauchy-Schwarz), exact in 128 bits. */
static double
population_variance (unsigned __int128 sum_sq, __int128 sum, uint64_t n)
{
  unsigned __int128 abs_sum =
      sum < 0 ? -(unsigned __int128) sum : (unsigned __int128) sum;
  unsigned __int128 num = (unsigned __int128) n * sum_sq - abs_sum * abs_sum;

  return (double) num / (double) n / (double) n;
}

void
cq_sharpness_finish (const CqSharpnessSums * sums, const uint64_t * hist,
    unsigned hist_bins, unsigned width, unsigned height, unsigned metrics,
    double *scores)
{
  uint64_t n = (uint64_t) width * height;
  double dn = (double) n;
  static const struct
  {
    unsigned metric, sum;
  } plain[] = {
    {CQ_METRIC_ROBERTS, CQ_SUM_ROBERTS},
    {CQ_METRIC_TENENGRAD, CQ_SUM_TENENGRAD},
    {CQ_METRIC_LAPLACIAN, CQ_SUM_LAPLACIAN},
    {CQ_METRIC_SMD, CQ_SUM_SMD},
    {CQ_METRIC_SMD2, CQ_SUM_SMD2},
    {CQ_METRIC_MAXMIN, CQ_SUM_MAXMIN},
    {CQ_METRIC_BRENNER, CQ_SUM_BRENNER},
  };
  unsigned i;

  for (i = 0; i < sizeof (plain) / sizeof (plain[0]); i++) {
    if (metrics & plain[i].metric)
      scores[__builtin_ctz (plain[i].metric)] =
          (double) u128 (sums->sum[plain[i].sum]) / dn;
  }
  if (metrics & CQ_METRIC_VARIANCE)
    scores[__builtin_ctz (CQ_METRIC_VARIANCE)] =
        population_variance (u128 (sums->sum[CQ_SUM_VALUE_SQ]),
        (__int128) u128 (sums->sum[CQ_SUM_VALUE]), n);
  if (metrics & CQ_METRIC_LAPVAR)
    scores[__builtin_ctz (CQ_METRIC_LAPVAR)] =
        population_variance (u128 (sums->sum[CQ_SUM_LAP_SQ]),
        (__int128) u128 (sums->sum[CQ_SUM_LAP]), n);
  if (metrics & CQ_METRIC_ENTROPY) {
    double h = 0.0;

    for (i = 0; i < hist_bins; i++) {
      if (hist[i]) {
        double p = (double) hist[i] / dn;

        h -= p * log2 (p);
      }
    }
    /* -0.0 for a constant frame would print as "-0" */
    scores[__builtin_ctz (CQ_METRIC_ENTROPY)] = h == 0.0 ? 0.0 : h;
  }
}

/* ---- the CUDA backend's entry points that are the same in every build ---- */

CqSharpnessCuda *
cq_sharpness_cuda_new (int device, const CqLayout * layout, unsigned width,
    unsigned height, unsigned metrics, CqError * err)
{
  const CqCudaTarget target = CQ_CUDA_TARGET_DEVICE (device);

  return cq_sharpness_cuda_new_for (&target, layout, width, height, metrics,
      err);
}

CqStatus
cq_sharpness_cuda_measure_host (CqSharpnessCuda * cuda, const void *data,
    size_t stride, double *scores, CqError * err)
{
  CQ_RETURN_SUBMIT_COLLECT (cq_sharpness_cuda_submit_host (cuda, data, stride,
          err), cq_sharpness_cuda_collect (cuda, scores, err));
}

CqStatus
cq_sharpness_cuda_measure_device (CqSharpnessCuda * cuda,
    const void *dev_data, size_t pitch, double *scores, CqError * err)
{
  CQ_RETURN_SUBMIT_COLLECT (cq_sharpness_cuda_submit_device (cuda, dev_data,
          pitch, err), cq_sharpness_cuda_collect (cuda, scores, err));
}
