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
#include "cq-frames.h"

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
  /* MS-SSIM, where enabled (cq_ssim_*_set_msssim): the sum of the local
   * contrast-structure term over the gauss11 windows of scales 1 to 4 and
   * of the local SSIM over those of scale 5; zero otherwise */
  double ms_sum[5];
} CqSsimPlaneSums;

/* MS-SSIM (Wang, Simoncelli, Bovik 2003): five scales, the 11x11 Gaussian
 * (sigma 1.5) at each, 2x2 average downsampling (floor of odd sizes), the
 * paper's exponents; a plane needs CQ_MSSSIM_MIN_SIDE samples a side so
 * that scale 5 holds one window. */
#define CQ_MSSSIM_SCALES 5
#define CQ_MSSSIM_MIN_SIDE (11u << (CQ_MSSSIM_SCALES - 1))

/* The exponent of scale s (0-based): 0.0448, 0.2856, 0.3001, 0.2363,
 * 0.1333. */
double cq_ssim_msssim_weight (unsigned scale);

/* Windows of scale s (0-based) of a plane of width x height. */
uint64_t cq_ssim_msssim_windows (unsigned scale, unsigned width,
    unsigned height);

/* Whether every plane is large enough for five scales; err names the plane
 * and the minimum size. */
CqStatus cq_ssim_msssim_check (const CqSsimPlane * planes, unsigned n_planes,
    CqError * err);

/* A plane's MS-SSIM from its sums: prod_s max(mean_s, 0)^weight_s, mean_s
 * the mean contrast-structure term (s < 4) or SSIM (s = 4); negative means
 * count as 0, as torchmetrics' normalize="relu". */
double cq_ssim_msssim (const CqSsimPlane * plane,
    const CqSsimPlaneSums * sums);

/* A frame's MS-SSIM, in cudassim's field order: ms-ssim (over several
 * planes weighted by their samples, as ssim is), then with per_plane one
 * value a plane. values has 1 + n_planes entries. */
void cq_ssim_frame_msssim (const CqSsimPlane * planes, unsigned n_planes,
    const CqSsimPlaneSums * sums, int per_plane, double *values);

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

/* A window's constants for a plane, as its local expression
 * (cq-ssim-local.h) takes them: gauss11 C1 = (0.01 L)², C2 = (0.03 L)²;
 * box8 4096 C1, 4032 C2; ffmpeg FFmpeg's integers (exact as doubles). */
void cq_ssim_window_constants (const CqSsimPlane * plane,
    CqSsimWindow window, double *c1, double *c2);

/* The bytes of a row of the plane that its samples span (from the row's
 * start, its offset included). */
size_t cq_ssim_plane_row_bytes (const CqSsimPlane * plane);

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
/* Adds MS-SSIM to every measurement (ms_sum of the sums) where enable;
 * fails (naming the minimum) for planes too small for five scales. */
CqStatus cq_ssim_cpu_set_msssim (CqSsimCpu * cpu, int enable, CqError * err);

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
/* The next submit's kernels start once frame of frames (a device copy,
 * cq-frames.h, in cuda's context) is uploaded: the device waits, not the
 * host, so that the host can queue the next uploads meanwhile. */
CqStatus cq_ssim_cuda_after_upload (CqSsimCuda * cuda,
    CqFramesCuda * frames, unsigned frame, CqError * err);
unsigned cq_ssim_cuda_pending (const CqSsimCuda * cuda);
/* As cq_ssim_cpu_set_msssim; with no pair in flight. The scales are
 * measured after the pair's SSIM kernels on the same stream: a 2x2
 * downsampling kernel and the gauss11 kernel (contrast-structure or SSIM
 * sums) a scale. */
CqStatus cq_ssim_cuda_set_msssim (CqSsimCuda * cuda, int enable,
    CqError * err);
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
