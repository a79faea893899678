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

/* The same for samples ss bytes apart: P010's interleaved chroma (4) and
 * the rest, each stride a loop of its own. */
static inline void
cq_gray16_strided_row (const uint8_t * row, unsigned ss, unsigned shift,
    unsigned depth, unsigned width, uint16_t * out)
{
  const unsigned mask = (1u << depth) - 1;
  size_t i;

  if (ss == 2) {
    cq_gray16_row (row, shift, depth, width, out);
    return;
  }
  for (i = 0; i < width; i++) {
    const uint8_t *s = row + (ss == 4 ? 4 * i : ss * i);

    out[i] = (uint16_t) (((s[0] | s[1] << 8) >> shift) & mask);
  }
}

/* A row of 8-bit samples ss bytes apart into out: interleaved chroma (2),
 * RGB's channels (3, 4) and the rest, each stride a loop of its own, which
 * compilers vectorise for a constant stride. */
static inline void
cq_gray8_row (const uint8_t * row, unsigned ss, unsigned width, uint16_t * out)
{
  unsigned x;

  switch (ss) {
    case 1:
      for (x = 0; x < width; x++)
        out[x] = row[x];
      break;
    case 2:
      for (x = 0; x < width; x++)
        out[x] = row[2 * (size_t) x];
      break;
    case 3:
      for (x = 0; x < width; x++)
        out[x] = row[3 * (size_t) x];
      break;
    case 4:
      for (x = 0; x < width; x++)
        out[x] = row[4 * (size_t) x];
      break;
    default:
      for (x = 0; x < width; x++)
        out[x] = row[(size_t) x * ss];
  }
}

/* A GRAY16 (words) or GRAY8 row of samples ss bytes apart, unpacked: the
 * one dispatch of the plain C's and the vectorised kernels' copies. */
static inline void
cq_gray_row (int words, const uint8_t * row, unsigned ss, unsigned shift,
    unsigned depth, unsigned width, uint16_t * out)
{
  if (words)
    cq_gray16_strided_row (row, ss, shift, depth, width, out);
  else
    cq_gray8_row (row, ss, width, out);
}

/* Σ (a - b)² of two rows of samples of depth bits (each square below
 * 2^32). Up to 12 bits the squares of a chunk of 128 add in 32 bits
 * (below 2^31), a loop of 16-bit products that compilers vectorise as
 * pmaddwd; the rest of the row, and deeper samples, widen each square to
 * 64 bits. */
static inline uint64_t
cq_sse_u16_row (const uint16_t * a, const uint16_t * b, unsigned width,
    unsigned depth)
{
  uint64_t sse = 0;
  size_t x = 0, i;

  if (depth <= 12)
    for (; x + 128 <= width; x += 128) {
      const uint16_t *ca = a + x, *cb = b + x;
      int32_t chunk = 0;

      for (i = 0; i < 128; i++) {
        const int16_t d = (int16_t) (ca[i] - cb[i]);

        chunk += d * d;
      }
      sse += (uint32_t) chunk;
    }
  for (; x < width; x++) {
    uint32_t d = (uint32_t) ((int32_t) a[x] - (int32_t) b[x]);

    sse += (uint32_t) (d * d);
  }
  return sse;
}
#endif

#endif /* CQ_LOCAL_H */
