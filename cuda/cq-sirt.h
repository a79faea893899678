/* cudaquality compute library: SIRT (simultaneous iterative reconstruction
 * technique) with the matched SF projector pair of cq-sfproject.h, on the
 * CPU (double) and on CUDA (float32):
 *
 *   x ← x + λ · C · Aᵀ R (b − A x),   R = 1 / (A 1),  C = 1 / (Aᵀ 1)
 *
 * (rays and voxels that the other side never reaches get R = 0, C = 0, so
 * they stay as they started), optionally clamped at 0 after each update.
 * With 0 < λ < 2 the iterates converge to the R-weighted least-squares
 * solution nearest the start (Jiang & Wang, IEEE TIP 12(8), 2003): the
 * normalised operator R^½ A C^½ of a non-negative A has norm ≤ 1. Starts
 * from x = 0. See docs/sf-projector.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SIRT_H
#define CQ_SIRT_H

#include "cq-common.h"
#include "cq-sfproject.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  double relaxation;            /* λ, 0 < λ < 2 (LEAP uses 0.9) */
  int nonnegative;              /* x = max (x, 0) after each update */
} CqSirtParams;

/* An impossible λ is CQ_ERROR_INVALID naming the value. */
CqStatus cq_sirt_params_check (const CqSirtParams * p, CqError * err);

/* ---- CPU, double precision ---- */

typedef struct CqSirtCpu CqSirtCpu;

/* proj: the measured line integrals of every view of g (n_views·nv·nu
 * floats, u fastest); copied. R and C are computed here (one projection and
 * one backprojection). n_threads 0 = one per online CPU. */
CqSirtCpu *cq_sirt_cpu_new (const CqSfGeometry * g, const float *proj,
    const CqSirtParams * p, unsigned n_threads, CqError * err);
/* `iterations` more updates. */
CqStatus cq_sirt_cpu_iterate (CqSirtCpu * s, unsigned iterations,
    CqError * err);
/* The current x (nx·ny·nz floats, x fastest). */
void cq_sirt_cpu_volume (const CqSirtCpu * s, float *volume);
void cq_sirt_cpu_free (CqSirtCpu * s);

/* ---- CUDA, float32: everything stays on the device; the projector's
 * device-resident calls plus small elementwise kernels ---- */

typedef struct CqSirtCuda CqSirtCuda;

/* As cq_sirt_cpu_new; at most 2048 views (one projector launch). */
CqSirtCuda *cq_sirt_cuda_new (int device, const CqSfGeometry * g,
    const float *proj, const CqSirtParams * p, CqError * err);
/* The same where target says (a framework's context and its hooks). */
CqSirtCuda *cq_sirt_cuda_new_for (const CqCudaTarget * target,
    const CqSfGeometry * g, const float *proj, const CqSirtParams * p,
    CqError * err);
CqStatus cq_sirt_cuda_iterate (CqSirtCuda * s, unsigned iterations,
    CqError * err);
/* Downloads the current x. */
CqStatus cq_sirt_cuda_volume (CqSirtCuda * s, float *volume, CqError * err);
/* For benchmarks: GPU time in ms (CUDA events) of computing R and C again
 * (setup_ms, may be NULL) and the mean of `iterations` updates (ms), which
 * change the reconstruction. */
CqStatus cq_sirt_cuda_time (CqSirtCuda * s, unsigned iterations,
    double *setup_ms, double *ms, CqError * err);
void cq_sirt_cuda_free (CqSirtCuda * s);

#ifdef __cplusplus
}
#endif
#endif /* CQ_SIRT_H */
