/* cudaquality compute library: per-pixel helpers both backends share.
 *
 * Included by the CPU backends (C) and the CUDA kernels (C++), so that a
 * border or a gray value is computed by the same code on the host and on
 * the device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_LOCAL_H
#define CQ_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CQ_LOCAL_FN static __host__ __device__ __forceinline__
#else
#define CQ_LOCAL_FN static inline
#endif

/* OpenCV's BORDER_REFLECT_101 of index i on an axis of n; a 1-pixel axis
 * reflects onto itself. Valid for -n < i < 2n - 1, the reach of the 3x3
 * neighbourhoods. */
CQ_LOCAL_FN int
cq_reflect101 (int i, int n)
{
  if (n == 1)
    return 0;
  if (i < 0)
    i = -i;
  if (i >= n)
    i = 2 * n - 2 - i;
  return i < 0 ? 0 : i;
}

/* The gray value of 8-bit R, G, B: round (0.299 R + 0.587 G + 0.114 B),
 * exactly as (299 R + 587 G + 114 B + 500) / 1000. */
CQ_LOCAL_FN unsigned
cq_gray_rgb8 (unsigned r, unsigned g, unsigned b)
{
  return (299u * r + 587u * g + 114u * b + 500u) / 1000u;
}

#ifndef __CUDACC__
#include <string.h>

/* A GRAY16 row's samples into out: bits shift ... shift + depth - 1 of each
 * little-endian word (a loop compilers vectorise; host only). */
static inline void
cq_gray16_row (const uint8_t * row, unsigned shift, unsigned depth,
    unsigned width, uint16_t * out)
{
  const unsigned mask = (1u << depth) - 1;
  size_t i;

  for (i = 0; i < width; i++) {
    uint16_t word;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy (&word, row + 2 * i, 2);
#else
    word = (uint16_t) (row[2 * i] | row[2 * i + 1] << 8);
#endif
    out[i] = (uint16_t) ((word >> shift) & mask);
  }
}
#endif

#endif /* CQ_LOCAL_H */
