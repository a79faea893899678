/* cudaquality compute library: full-reference SSIM, MSE and PSNR.
 *
 * A frame pair is compared plane by plane. For each plane both backends
 * produce the sum of the local SSIM values over the plane's windows and the
 * exact integer sum of squared differences over every sample. The local
 * values are computed from exact integer window sums (box8, ffmpeg) or from
 * double-precision Gaussian sums (gauss11) with the same expressions on both
 * backends; only the order of the final additions differs, so CUDA and CPU
 * agree to ~1e-15. Definitions: docs/elements/cudassim.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SSIM_H
#define CQ_SSIM_H

#include "cq-common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  CQ_SSIM_BOX8,                 /* 8x8 box at every position, 1/(N²-1) */
  CQ_SSIM_FFMPEG,               /* 8x8 on the 4-pixel grid, x264 formula */
  CQ_SSIM_GAUSS11               /* 11x11 Gaussian, sigma 1.5 (Wang 2004) */
} CqSsimWindow;

#define CQ_SSIM_MAX_PLANES 3

/* Where a plane's samples are in a row: sample x of a row starts at byte
 * offset + x * sample_stride. layout.kind is GRAY8 or GRAY16 for a plane
 * (or one channel of packed RGB, or one of interleaved UV), or RGB8 for the
 * gray value of packed RGB (then sample_stride = layout.pixel_stride). */
typedef struct
{
  unsigned width, height;       /* in samples */
  CqLayout layout;
  unsigned sample_stride;       /* bytes from a sample to the next */
  unsigned offset;              /* bytes before the first sample of a row */
} CqSsimPlane;

typedef struct
{
  double ssim_sum;              /* Σ local SSIM over the windows */
  uint64_t windows;             /* how many windows */
  uint64_t sse;                 /* Σ (a - b)² over every sample */
  uint64_t samples;             /* width * height */
} CqSsimPlaneSums;

/* Name of a window ("box8", "ffmpeg", "gauss11"). */
const char *cq_ssim_window_name (CqSsimWindow window);

/* Windows of a plane of width x height for this window type. */
uint64_t cq_ssim_window_count (CqSsimWindow window, unsigned width,
    unsigned height);

/* Checks a plane set: sizes, layouts, and that every plane holds at least
 * one window; err names the plane and the values. */
CqStatus cq_ssim_check (CqSsimWindow window, const CqSsimPlane * planes,
    unsigned n_planes, CqError * err);

/* The largest value of a plane's samples, L = 2^depth - 1. */
unsigned cq_ssim_peak (const CqSsimPlane * plane);

/* Scores of one plane: mean SSIM, MSE, PSNR in dB (+inf when the planes are
 * identical). */
void cq_ssim_plane_scores (const CqSsimPlane * plane,
    const CqSsimPlaneSums * sums, double *ssim, double *mse, double *psnr);

/* A frame's scores from its planes' sums, in cudassim's field order: ssim
 * (over several planes weighted by their samples, as FFmpeg's All),
 * ssim-db (+inf at 1), psnr, mse, then with per_plane the ssim, psnr and
 * mse of each plane. values has 4 + 3 n_planes entries. */
void cq_ssim_frame_scores (const CqSsimPlane * planes, unsigned n_planes,
    const CqSsimPlaneSums * sums, int per_plane, double *values);

/* The 11 normalised weights of the 1-D Gaussian (sigma 1.5, radius 5), as
 * scipy's gaussian_filter builds them; shared by both backends. */
void cq_ssim_gauss_weights (double weights[11]);

/* ---- CPU backend ---- */

typedef struct CqSsimCpu CqSsimCpu;

/* n_threads 0 = one per online CPU. */
CqSsimCpu *cq_ssim_cpu_new (CqSsimWindow window, const CqSsimPlane * planes,
    unsigned n_planes, unsigned n_threads, CqError * err);
/* ref[i], dist[i]: the start of plane i of each frame (row 0, before the
 * plane's offset); strides in bytes. sums has n_planes entries. */
CqStatus cq_ssim_cpu_measure (CqSsimCpu * cpu, const void *const *ref,
    const size_t * ref_strides, const void *const *dist,
    const size_t * dist_strides, CqSsimPlaneSums * sums, CqError * err);
void cq_ssim_cpu_free (CqSsimCpu * cpu);

/* ---- CUDA backend ---- */

typedef struct CqSsimCuda CqSsimCuda;

CqSsimCuda *cq_ssim_cuda_new (int device, CqSsimWindow window,
    const CqSsimPlane * planes, unsigned n_planes, CqError * err);
/* The same where target says (a framework's context and its hooks). */
CqSsimCuda *cq_ssim_cuda_new_for (const CqCudaTarget * target,
    CqSsimWindow window, const CqSsimPlane * planes, unsigned n_planes,
    CqError * err);
/* Frames in host memory (pageable or pinned, detected per plane). Blocks
 * until the sums are ready. */
CqStatus cq_ssim_cuda_measure_host (CqSsimCuda * cuda,
    const void *const *ref, const size_t * ref_strides,
    const void *const *dist, const size_t * dist_strides,
    CqSsimPlaneSums * sums, CqError * err);
/* Frames already in device memory of the context's device, complete. */
CqStatus cq_ssim_cuda_measure_device (CqSsimCuda * cuda,
    const void *const *ref, const size_t * ref_pitches,
    const void *const *dist, const size_t * dist_pitches,
    CqSsimPlaneSums * sums, CqError * err);
/* The same in two halves, so that the caller works (and the next pair
 * uploads) while the GPU measures: submit_* queues a pair and returns; collect
 * waits for the oldest pair in flight and returns its sums. At most two
 * pairs are in flight. The frames must stay valid and unchanged until their
 * pair is collected (pageable host frames are copied before submit returns). */
CqStatus cq_ssim_cuda_submit_host (CqSsimCuda * cuda,
    const void *const *ref, const size_t * ref_strides,
    const void *const *dist, const size_t * dist_strides, CqError * err);
CqStatus cq_ssim_cuda_submit_device (CqSsimCuda * cuda,
    const void *const *ref, const size_t * ref_pitches,
    const void *const *dist, const size_t * dist_pitches, CqError * err);
CqStatus cq_ssim_cuda_collect (CqSsimCuda * cuda, CqSsimPlaneSums * sums,
    CqError * err);
unsigned cq_ssim_cuda_pending (const CqSsimCuda * cuda);
void cq_ssim_cuda_free (CqSsimCuda * cuda);

/* For benchmarks: mean GPU time in µs of the kernels of one frame pair
 * already on the device, over `iterations` back-to-back launches. */
CqStatus cq_ssim_cuda_time_device (CqSsimCuda * cuda,
    const void *const *ref, const size_t * ref_pitches,
    const void *const *dist, const size_t * dist_pitches,
    unsigned iterations, double *us, CqError * err);

/* For tuning: rows (block rows for ffmpeg) one tile of the kernels walks. */
CqStatus cq_ssim_cuda_set_tile_rows (CqSsimCuda * cuda, unsigned rows,
    CqError * err);

#ifdef __cplusplus
}
#endif
#endif /* CQ_SSIM_H */
