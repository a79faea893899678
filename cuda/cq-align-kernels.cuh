/* cudaquality compute library: the alignment search's kernels
 * (definitions in cq-align.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_ALIGN_KERNELS_CUH
#define CQ_ALIGN_KERNELS_CUH

#include "cq-align.h"
#include "cq-grid.cuh"
#include "cq-reduce.cuh"

namespace cq
{

/* Thumbnails: one thread a block of factor x factor samples, neighbouring
 * threads on neighbouring blocks of a row (so a warp reads 32 x factor
 * adjacent samples of each source row). */
constexpr unsigned kAlignThumbX = 32, kAlignThumbY = 8;
/* Distances: a candidate is split into parts of at least
 * kAlignDistPartVecs uint4 (about four a thread), at most kAlignDistParts,
 * a block each, so that 31 candidates fill more than 31 SMs; the host
 * adds a candidate's parts (integers: the order does not matter). */
constexpr unsigned kAlignDistThreads = 512;
constexpr unsigned kAlignDistPartVecs = 4 * kAlignDistThreads;
constexpr unsigned kAlignDistParts = 16;

struct AlignThumbParams
{
  const unsigned char *data;
  size_t pitch;
  unsigned sample_stride;
  unsigned factor, tw, th;
  unsigned shift, mask, down;   /* 16-bit: ((w >> shift) & mask) >> down */
  unsigned *thumb;
};

template < bool WIDE > __global__ void
align_thumb_kernel (AlignThumbParams p)
{
  unsigned tx, ty;

  if (!grid_xy (p.tw, p.th, tx, ty))
    return;
  const unsigned char *row = p.data + (size_t) ty * p.factor * p.pitch +
      (size_t) tx * p.factor * p.sample_stride;
  unsigned sum = 0;

  for (unsigned j = 0; j < p.factor; j++, row += p.pitch) {
    const unsigned char *s = row;

    for (unsigned i = 0; i < p.factor; i++, s += p.sample_stride) {
      if (WIDE) {
        unsigned w = (unsigned) s[0] | (unsigned) s[1] << 8;

        sum += ((w >> p.shift) & p.mask) >> p.down;
      } else {
        sum += *s;
      }
    }
  }
  p.thumb[(size_t) ty * p.tw + tx] = sum;
}

struct AlignDistanceParams
{
  const unsigned *thumbs;       /* slot s at thumbs + s * slot_elems */
  size_t slot_elems;            /* a multiple of 4: slots are 16-byte aligned */
  unsigned elems;               /* tw x th */
  unsigned probe;
  unsigned short slots[CQ_ALIGN_MAX_SLOTS];     /* candidate i: blockIdx.y */
  unsigned part_vecs;           /* uint4 a part (blockIdx.x) */
  unsigned long long *out;      /* candidate c, part k: c * gridDim.x + k */
};

__device__ __forceinline__ unsigned long long
align_square (unsigned a, unsigned b)
{
  unsigned d = a > b ? a - b : b - a;

  return (unsigned long long) d * d;
}

/* Σ (probe - slots[c])² over part k of the elements, c = blockIdx.y,
 * k = blockIdx.x (the last part has the elements past the last uint4):
 * integer sums, so the order of the additions does not matter. */
__global__ void
align_distance_kernel (AlignDistanceParams p)
{
  __shared__ unsigned long long s_warp[kAlignDistThreads / 32];
  const unsigned *a = p.thumbs + p.probe * p.slot_elems;
  const unsigned *b = p.thumbs + p.slots[blockIdx.y] * p.slot_elems;
  const uint4 *a4 = (const uint4 *) a, *b4 = (const uint4 *) b;
  const unsigned vecs = p.elems / 4, first = blockIdx.x * p.part_vecs;
  const unsigned end = blockIdx.x + 1 == gridDim.x ? vecs :
      min (vecs, first + p.part_vecs);
  unsigned long long sum = 0;
  unsigned i;

  for (i = first + threadIdx.x; i < end; i += blockDim.x) {
    uint4 x = __ldg (a4 + i), y = __ldg (b4 + i);

    sum += align_square (x.x, y.x) + align_square (x.y, y.y) +
        align_square (x.z, y.z) + align_square (x.w, y.w);
  }
  for (i = vecs * 4 + threadIdx.x; blockIdx.x + 1 == gridDim.x
      && i < p.elems; i += blockDim.x)
    sum += align_square (__ldg (a + i), __ldg (b + i));
  sum = warp_sum (sum);
  if ((threadIdx.x & 31) == 0)
    s_warp[threadIdx.x / 32] = sum;
  __syncthreads ();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? s_warp[threadIdx.x] : 0;
    sum = warp_sum (sum);
    if (threadIdx.x == 0)
      p.out[blockIdx.y * gridDim.x + blockIdx.x] = sum;
  }
}

}                               /* namespace cq */

#endif /* CQ_ALIGN_KERNELS_CUH */
