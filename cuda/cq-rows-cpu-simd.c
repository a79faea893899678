/* cudaquality compute library: rows unpacked to 16-bit samples, vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). GRAY8 and
 * GRAY16 rows at any sample stride, and Σ (a - b)² of two rows, are the
 * plain C's loops of cq-local.h, which the compiler vectorises here for
 * the instruction set. RGB rows as gray values: V pixels a vector, each
 * pixel's 4 bytes from one load (4 bytes a pixel) or one gather, its R, G
 * and B bytes by shifts, then cq_gray_rgb8's (299 R + 587 G + 114 B + 500)
 * / 1000. The quotient comes from a float division, truncated: the
 * dividend is an exact float below 2^18, and a quotient at least 1/1000
 * from the next integer cannot round up to it (the floats near 256 are
 * 2^-15 apart), so it is the integer division's, bit for bit (checked for
 * every dividend up to 300,000).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-local.h"

/* V 16-bit lanes */
typedef uint16_t vh __attribute__ ((vector_size (2 * V)));

/* 4 bytes at base + idx[lane], a lane each */
static inline vi
gather32 (const uint8_t * base, vi idx)
{
#if V == 8
  return (vi) _mm256_i32gather_epi32 ((const int *) base, (__m256i) idx, 1);
#else
  return (vi) _mm512_i32gather_epi32 ((__m512i) idx, base, 1);
#endif
}

void
CQ_SIMD_FN (cq_simd_gray_rgb8_row) (const uint8_t * row, unsigned stride,
    unsigned r_offset, unsigned g_offset, unsigned b_offset, unsigned width,
    uint16_t * out)
{
  const vi lane = iota ();
  const vi rs = splat (8 * (int32_t) r_offset);
  const vi gs = splat (8 * (int32_t) g_offset);
  const vi bs = splat (8 * (int32_t) b_offset);
  unsigned x = 0;

  /* a gather reads 4 bytes a pixel: stop before the row's last pixel where
   * a pixel has fewer */
  for (; x + V + (stride < 4) <= width; x += V) {
    /* 4 bytes a pixel side by side (RGBx and its kin): a plain load */
    vi word = stride == 4 ? ld32 ((const int32_t *) (row + 4 * (size_t) x)) :
        gather32 (row, (lane + (int32_t) x) * (int32_t) stride);
    vi r = (vi) ((vu) word >> (vu) rs) & 255;
    vi g = (vi) ((vu) word >> (vu) gs) & 255;
    vi b = (vi) ((vu) word >> (vu) bs) & 255;
    vi v = 299 * r + 587 * g + 114 * b + 500;
    vf q = __builtin_convertvector (v, vf) / 1000.0f;
    vi gray = __builtin_convertvector (q, vi);
    vh gray16 = __builtin_convertvector (gray, vh);

    memcpy (out + x, &gray16, sizeof (gray16));
  }
  for (; x < width; x++) {
    const uint8_t *p = row + (size_t) x * stride;

    out[x] = (uint16_t) cq_gray_rgb8 (p[r_offset], p[g_offset], p[b_offset]);
  }
}

void
CQ_SIMD_FN (cq_simd_unpack_row) (const CqLayout * layout, unsigned stride,
    const uint8_t * row, unsigned width, uint16_t * out)
{
  cq_gray_row (layout->kind == CQ_LAYOUT_GRAY16, row, stride, layout->shift,
      layout->depth, width, out);
}

uint64_t
CQ_SIMD_FN (cq_simd_sse_u16_row) (const uint16_t * a, const uint16_t * b,
    unsigned width, unsigned depth)
{
  return cq_sse_u16_row (a, b, width, depth);
}
