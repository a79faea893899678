/* cudaquality compute library: no-reference sharpness measures.
 *
 * Both backends reduce a frame to exact integer sums (CqSharpnessSums and a
 * gray-level histogram); cq_sharpness_finish () turns those into scores with
 * the same host code for both, so CUDA and CPU scores are bit-identical.
 * Definitions: docs/elements/cudasharpness.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SHARPNESS_H
#define CQ_SHARPNESS_H

#include "cq-common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  CQ_METRIC_VARIANCE = 1 << 0,
  CQ_METRIC_ROBERTS = 1 << 1,
  CQ_METRIC_TENENGRAD = 1 << 2,
  CQ_METRIC_LAPLACIAN = 1 << 3,
  CQ_METRIC_SMD = 1 << 4,
  CQ_METRIC_SMD2 = 1 << 5,
  CQ_METRIC_MAXMIN = 1 << 6,
  CQ_METRIC_ENTROPY = 1 << 7,
  CQ_METRIC_LAPVAR = 1 << 8,
  CQ_METRIC_BRENNER = 1 << 9
} CqMetric;

#define CQ_METRIC_COUNT 10
#define CQ_METRIC_ALL ((1u << CQ_METRIC_COUNT) - 1)
#define CQ_METRIC_DEFAULT \
  (CQ_METRIC_TENENGRAD | CQ_METRIC_LAPLACIAN | CQ_METRIC_SMD2)

/* Name of metric bit i ("variance", ..., "brenner"), as used for flags,
 * meta fields, message fields and log columns. */
const char *cq_metric_name (unsigned index);

/* The integer sums both backends produce. 128-bit two's complement (lo, hi)
 * so that no frame size or depth can overflow them. */
typedef struct
{
  uint64_t lo, hi;
} CqInt128;

enum
{
  CQ_SUM_VALUE,                 /* Σ g */
  CQ_SUM_VALUE_SQ,              /* Σ g² */
  CQ_SUM_ROBERTS,
  CQ_SUM_TENENGRAD,
  CQ_SUM_LAPLACIAN,
  CQ_SUM_SMD,
  CQ_SUM_SMD2,
  CQ_SUM_MAXMIN,
  CQ_SUM_BRENNER,
  CQ_SUM_LAP,                   /* Σ L (signed), L the 4-neighbour Laplacian */
  CQ_SUM_LAP_SQ,                /* Σ L² */
  CQ_SUM_COUNT
};

typedef struct
{
  CqInt128 sum[CQ_SUM_COUNT];
} CqSharpnessSums;

/* Bins of the gray-level histogram for a layout: 2^depth. */
unsigned cq_sharpness_hist_bins (const CqLayout * layout);

/* Scores from sums: scores[i] for every metric bit i set in metrics (others
 * are left untouched). hist may be NULL unless CQ_METRIC_ENTROPY is set. */
void cq_sharpness_finish (const CqSharpnessSums * sums, const uint64_t * hist,
    unsigned hist_bins, unsigned width, unsigned height, unsigned metrics,
    double *scores);

/* Checks a layout and a frame size; err names the offending values. */
CqStatus cq_sharpness_check (const CqLayout * layout, unsigned width,
    unsigned height, CqError * err);

/* ---- CPU backend: plain C, rows split over threads ---- */

typedef struct CqSharpnessCpu CqSharpnessCpu;

/* n_threads 0 = one per online CPU. Buffers are sized here, once. */
CqSharpnessCpu *cq_sharpness_cpu_new (const CqLayout * layout,
    unsigned width, unsigned height, unsigned metrics, unsigned n_threads,
    CqError * err);
/* data points at the first measured pixel (the ROI's origin); stride in bytes. */
CqStatus cq_sharpness_cpu_measure (CqSharpnessCpu * cpu, const void *data,
    size_t stride, double *scores, CqError * err);
void cq_sharpness_cpu_free (CqSharpnessCpu * cpu);

/* ---- CUDA backend ---- */

typedef struct CqSharpnessCuda CqSharpnessCuda;

/* Allocates device buffers, pinned staging and a stream on device, once. */
CqSharpnessCuda *cq_sharpness_cuda_new (int device, const CqLayout * layout,
    unsigned width, unsigned height, unsigned metrics, CqError * err);
/* The same where target says (a framework's context and its hooks). */
CqSharpnessCuda *cq_sharpness_cuda_new_for (const CqCudaTarget * target,
    const CqLayout * layout, unsigned width, unsigned height,
    unsigned metrics, CqError * err);
/* Frame in host memory (pageable or pinned: pinned memory is detected and
 * copied from directly). Blocks until the scores are ready. */
CqStatus cq_sharpness_cuda_measure_host (CqSharpnessCuda * cuda,
    const void *data, size_t stride, double *scores, CqError * err);
/* Frame already in device memory of the context's device, complete: work
 * that writes it on other streams must have finished. */
CqStatus cq_sharpness_cuda_measure_device (CqSharpnessCuda * cuda,
    const void *dev_data, size_t pitch, double *scores, CqError * err);
/* The same in two halves (see cq_ssim_cuda_submit_host): submit_* queues
 * a frame and returns, collect waits for the oldest frame in flight. At most
 * two frames are in flight; frames stay valid until collected. */
CqStatus cq_sharpness_cuda_submit_host (CqSharpnessCuda * cuda,
    const void *data, size_t stride, CqError * err);
CqStatus cq_sharpness_cuda_submit_device (CqSharpnessCuda * cuda,
    const void *dev_data, size_t pitch, CqError * err);
CqStatus cq_sharpness_cuda_collect (CqSharpnessCuda * cuda, double *scores,
    CqError * err);
unsigned cq_sharpness_cuda_pending (const CqSharpnessCuda * cuda);
void cq_sharpness_cuda_free (CqSharpnessCuda * cuda);

/* For benchmarks: launches the measurement kernels `iterations` times back to
 * back on a frame already on the device and returns the mean GPU time of one
 * frame in *us (CUDA events; no host round trip per frame). */
CqStatus cq_sharpness_cuda_time_device (CqSharpnessCuda * cuda,
    const void *dev_data, size_t pitch, unsigned iterations, double *us,
    CqError * err);
/* For tuning: rows one warp of the 8-bit kernel walks (3 to
 * cq_sharpness_cuda_walk_rows_max; by default chosen for the frame size). */
CqStatus cq_sharpness_cuda_set_walk_rows (CqSharpnessCuda * cuda,
    unsigned rows, CqError * err);
/* For tuning: pixels a thread of the default set's 8-bit kernel, 4 or 8
 * (by default 8 where the frame does not fit on the SMs at once); the walk
 * goes back to the frame's default length. */
CqStatus cq_sharpness_cuda_set_thread_pixels (CqSharpnessCuda * cuda,
    unsigned pixels, CqError * err);
/* The longest walk the kernel takes (240 pixels a thread: 60 rows, 30 at
 * 8 pixels a thread); 0 where the walk is fixed (16-bit frames). */
unsigned cq_sharpness_cuda_walk_rows_max (const CqSharpnessCuda * cuda);

#ifdef __cplusplus
}
#endif
#endif /* CQ_SHARPNESS_H */
