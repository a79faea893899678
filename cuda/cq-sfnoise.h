/* cudaquality compute library: detector noise for the SF projector's
 * frames (cudasfproject): Poisson noise on the counts, then Gaussian
 * electronic noise, drawn from a counter-based generator (Philox4x32-10)
 * keyed by (seed, view, cell), so that a frame's noise depends on the seed
 * and the frame's place in the stream only — not on batching, devices or
 * backend. Both backends give bit-identical noisy pixels from the same line
 * integrals: cq-sfnoise-impl.h says how, docs/elements/cudasfproject.md
 * says what.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SFNOISE_H
#define CQ_SFNOISE_H

#include "cq-common.h"
#include "cq-sfproject.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  int poisson;                  /* Poisson draw of the counts */
  double electronic;            /* σ of the Gaussian electronic noise in
                                 * counts (added after the Poisson draw);
                                 * 0 = none */
  uint32_t seed;
  uint64_t view;                /* the frame's index in the whole stream:
                                 * rotation × views + view */
} CqSfNoise;

/* Whether nz (may be NULL) adds any noise. */
int cq_sf_noise_active (const CqSfNoise * nz);

/* One cell's noisy counts for a mean of lambda photons (cell = v·nu + u):
 * Poisson (lambda) if nz->poisson, plus electronic·N(0, 1); not rounded. */
double cq_sf_noise_counts (const CqSfNoise * nz, uint32_t cell,
    double lambda);

/* The mean counts the noisy path uses: px->photons·exp (−px->mu_scale·li)
 * with the library's portable exp (within ~1 ulp of libm's). */
double cq_sf_noise_mean (const CqSfPixels * px, float li);

/* CPU: one view's line integrals (nu·nv floats, u fastest) to pixels, as
 * cq_sf_cuda_pixels converts them (CqSfPixels), with the noise of nz on the
 * counts (nz NULL or inactive, or line-integral output: none). dst: nv rows
 * of pitch bytes, 16-bit values little-endian. */
CqStatus cq_sf_pixels_cpu (const float *li, unsigned nu, unsigned nv,
    const CqSfPixels * px, const CqSfNoise * nz, void *dst, size_t pitch,
    CqError * err);

/* CUDA: cq_sf_cuda_pixels with the noise of nz, drawn on the device
 * (nz NULL or inactive: exactly cq_sf_cuda_pixels). */
CqStatus cq_sf_cuda_pixels_noise (CqSfCuda * cuda, unsigned index,
    const CqSfPixels * px, const CqSfNoise * nz, void *dst, size_t pitch,
    int dst_on_device, CqError * err);

/* ---- for tests: the device's side of the bit-for-bit checks ---- */

/* cq_sf_pixels_cpu's job done by the device's kernel: line integrals
 * uploaded, pixels downloaded (counts output and an active nz only). */
CqStatus cq_sf_noise_cuda_pixels_host (int device, const float *li,
    unsigned nu, unsigned nv, const CqSfPixels * px, const CqSfNoise * nz,
    void *dst, size_t pitch, CqError * err);
/* out[i] = cq_sf_noise_counts (nz, first_cell + i, lambda[i]) on the
 * device. */
CqStatus cq_sf_noise_cuda_counts (int device, const CqSfNoise * nz,
    uint32_t first_cell, const double *lambda, unsigned n, double *out,
    CqError * err);
/* out[4i..] = cuRAND's curand_Philox4x32_10 (ctr[4i..], key[2i..]) on the
 * device. */
CqStatus cq_philox_cuda_curand (int device, const uint32_t * ctr,
    const uint32_t * key, unsigned n, uint32_t * out, CqError * err);

#ifdef __cplusplus
}
#endif
#endif /* CQ_SFNOISE_H */
