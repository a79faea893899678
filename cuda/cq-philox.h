/* cudaquality compute library: Philox4x32-10 (Salmon, Moraes, Dror, Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
 * counter-based generator of cuRAND's curandStatePhilox4_32_10_t.
 *
 * A pure function of a 128-bit counter and a 64-bit key, integer
 * operations only, so the same four words come out on any host and any
 * device. On the device the noise code calls cuRAND's own
 * curand_Philox4x32_10 (curand_kernel.h); this C version, for the host, is
 * written round for round after it (W = 0x9E3779B9, 0xBB67AE85;
 * M = 0xD2511F53, 0xCD9E8D57). The CPU suite checks it against the Random123
 * known-answer vectors, the GPU suite against curand_Philox4x32_10 itself.
 *
 * Plain C (no CUDA types): usable from the tests.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_PHILOX_H
#define CQ_PHILOX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CQ_PHILOX_W0 0x9E3779B9u
#define CQ_PHILOX_W1 0xBB67AE85u
#define CQ_PHILOX_M0 0xD2511F53u
#define CQ_PHILOX_M1 0xCD9E8D57u

/* out = Philox4x32-10 (ctr, key); out may alias ctr. */
static inline void
cq_philox4x32_10 (const uint32_t ctr[4], const uint32_t key[2],
    uint32_t out[4])
{
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  int r;

  for (r = 0; r < 10; r++) {
    const uint64_t p0 = (uint64_t) CQ_PHILOX_M0 * c0;
    const uint64_t p1 = (uint64_t) CQ_PHILOX_M1 * c2;
    const uint32_t n0 = (uint32_t) (p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = (uint32_t) (p0 >> 32) ^ c3 ^ k1;

    c1 = (uint32_t) p1;
    c3 = (uint32_t) p0;
    c0 = n0;
    c2 = n2;
    k0 += CQ_PHILOX_W0;
    k1 += CQ_PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

#ifdef __cplusplus
}
#endif
#endif /* CQ_PHILOX_H */
