/* cudaquality compute library: box8 and ffmpeg windows of unpacked 16-bit
 * rows (10, 12 and 16-bit planes, interleaved chroma, RGB), vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). band_box8 of
 * cq-ssim-cpu.c sums in int64; every sum and integer term of a window stays
 * below 2^53 (Σa ≤ 64 · 65535, 64 (Σa² + Σb²) < 2^46), so doubles hold them
 * exactly, in any order of addition: a lane is a window (D = V / 2 doubles a
 * vector), its sums and terms exact doubles, then cq_ssim_box8_factors'
 * roundings lane by lane. A band goes in strips of S windows; down each
 * strip, for every window row:
 *  - the 8-row column sums of a, b, a² + b², ab slide down (the row leaving
 *    subtracted, the row entering added), kept in L1 for the strip;
 *  - sums of 2 neighbouring columns, then a window's 8 columns as 4 of
 *    those;
 *  - the expression, and the row's running sums (cq_ssim_box8_row),
 *    carried from strip to strip.
 * ffmpeg's window is the same idea: the 4x4 block sums and a window's four
 * blocks as exact doubles, a lane a block; its integer terms (below 2^46)
 * converted to float exactly as the plain C converts its int64s, then
 * cq_ssim_ffmpeg_local's float operations lane by lane.
 * The 8-bit planes the frames give straight have their own kernels
 * (cq-ssim-cpu-simd.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-ssim-local.h"

#define D (V / 2)
#define S CQ_CPU_SIMD_BOX8_STRIP
#if S % CQ_SSIM_BOX8_PHASES
#error "a strip must start at the first of box8's running sums"
#endif
/* doubles a row of the strip's sums: S + 7 columns, and what the last
 * block's loads reach past them */
#define CW (S + 4 * D + 8)

/* Adds (sign 1) or subtracts (-1) row y's four quantities at columns
 * x0 ... x0 + nc - 1 to the strip's column sums cols[0 ... 3][0 ... nc - 1]
 * (rows of CW doubles). */
static void
cols_row (const CqSimdPlaneBand * b, double *cols, unsigned x0, unsigned nc,
    unsigned y, double sign)
{
  const uint16_t *ra = (const uint16_t *) b->ref + (size_t) y * b->ref_stride
      + x0;
  const uint16_t *rb = (const uint16_t *) b->dist +
      (size_t) y * b->dist_stride + x0;
  const vd s = (vd) { } + sign;
  unsigned x;

  for (x = 0; x + D <= nc; x += D) {
    vd a = ld16d (ra + x), bb = ld16d (rb + x);

    stdd (cols + x, ldd (cols + x) + s * a);
    stdd (cols + CW + x, ldd (cols + CW + x) + s * bb);
    stdd (cols + 2 * CW + x, ldd (cols + 2 * CW + x) + s * (a * a + bb * bb));
    stdd (cols + 3 * CW + x, ldd (cols + 3 * CW + x) + s * (a * bb));
  }
  for (; x < nc; x++) {
    double a = ra[x], bb = rb[x];

    cols[x] += sign * a;
    cols[CW + x] += sign * bb;
    cols[2 * CW + x] += sign * (a * a + bb * bb);
    cols[3 * CW + x] += sign * (a * bb);
  }
}

/* The values of windows x ... x + end - 1 (end <= D) from their sums as
 * exact doubles, added to the row's running sums phase: the integers of
 * cq_ssim_box8_local (exact), then its factors. */
static inline void
box8_values (vd sa, vd sb, vd sss, vd sab, vd k1, vd k2, unsigned x,
    unsigned end, double *phase)
{
  const vd p = sa * sb, sq = sa * sa + sb * sb;
  const vd n1 = 2.0 * p + k1, n2 = 2.0 * (64.0 * sab - p) + k2;
  const vd d1 = sq + k1, d2 = (64.0 * sss - sq) + k2;
  double loc[D];
  unsigned l;

  if (end == D) {
    double *ph = phase + x % CQ_SSIM_BOX8_PHASES;

    stdd (ph, ldd (ph) + (n1 * n2) / (d1 * d2));
  } else {
    stdd (loc, (n1 * n2) / (d1 * d2));
    for (l = 0; l < end; l++)
      phase[(x + l) % CQ_SSIM_BOX8_PHASES] += loc[l];
  }
}

/* The strip's n windows of one row from its column sums, added to the
 * row's running sums phase (the strip starts at a multiple of their
 * number); pairs (rows of CW doubles) is scratch. */
static void
windows_row (const CqSimdPlaneBand * b, const double *cols, double *pairs,
    unsigned n, double *phase)
{
  const vd k1 = (vd) { } + b->c1, k2 = (vd) { } + b->c2;
  unsigned x, q;

  /* sums of 2 neighbouring columns, as far as the last block reads */
  for (q = 0; q < 4; q++)
    for (x = 0; x < n + D + 6; x += D)
      stdd (pairs + q * CW + x, ldd (cols + q * CW + x) +
          ldd (cols + q * CW + x + 1));
  for (x = 0; x < n; x += D) {
    vd s[4];

    for (q = 0; q < 4; q++) {
      const double *r = pairs + q * CW + x;

      s[q] = (ldd (r) + ldd (r + 2)) + (ldd (r + 4) + ldd (r + 6));
    }
    box8_values (s[0], s[1], s[2], s[3], k1, k2, x, n - x < D ? n - x : D,
        phase);
  }
}

/* ---- box8 of samples of at most 12 bits: 32-bit sums ----
 * A window's Σ (a² + b²) is then at most 64 · 2 · 4095² = 2,146,435,200
 * < 2^31, so every sum the plain C takes in int64 fits a 32-bit lane: V
 * columns a vector instead of D. Up to 10 bits a window's Σa and Σb are
 * below 2^16 and share a lane (a + 65536 b), as the 8-bit kernels pack
 * them. A row's pass over the strip's column sums takes the row's sums of
 * 2 neighbouring columns before it moves them on (row t + 8 in, row t
 * out); then its windows, whose four sums go to the expression as exact
 * doubles, as windows_row has them. */

/* ints a row of the strip's sums: S + 7 columns, and what the last
 * vector's loads reach past them */
#define CWI (S + 4 * V + 8)
#define I32_INLINE static inline __attribute__ ((always_inline))
#define I32_AHEAD 4

/* The column sums' terms of V samples a, b: with packed a + 65536 b, else a
 * and b; then a² + b² and ab (vpmaddwd: both below 2^15). nq of them. */
I32_INLINE void
terms_i32 (const uint16_t * a, const uint16_t * b, int packed, vi * t)
{
  const vi va = ld16 (a), vb = ld16 (b), d = pack16 (va, vb);
  unsigned q = 0;

  if (packed)
    t[q++] = d;
  else {
    t[q++] = va;
    t[q++] = vb;
  }
  t[q++] = madd16 (d, d);
  t[q] = madd16 (d, (vi) ((vu) d >> 16));
}

/* the same for one column */
I32_INLINE void
terms1_i32 (int32_t a, int32_t b, int packed, int32_t * t)
{
  unsigned q = 0;

  if (packed)
    t[q++] = a + 65536 * b;
  else {
    t[q++] = a;
    t[q++] = b;
  }
  t[q++] = a * a + b * b;
  t[q] = a * b;
}

/* Row y's terms at columns x0 ... x0 + nc - 1 added to the strip's column
 * sums cols (rows of CWI ints). */
I32_INLINE void
cols_add_i32 (const CqSimdPlaneBand * b, int32_t * cols, unsigned x0,
    unsigned nc, unsigned y, int packed)
{
  const unsigned nq = packed ? 3 : 4;
  const uint16_t *ra = (const uint16_t *) b->ref + x0 +
      (size_t) y * b->ref_stride;
  const uint16_t *rb = (const uint16_t *) b->dist + x0 +
      (size_t) y * b->dist_stride;
  unsigned x, q;

  for (x = 0; x + V <= nc; x += V) {
    vi t[4];

    terms_i32 (ra + x, rb + x, packed, t);
    for (q = 0; q < nq; q++)
      st32 (cols + q * CWI + x, ld32 (cols + q * CWI + x) + t[q]);
  }
  for (; x < nc; x++) {
    int32_t t[4];

    terms1_i32 (ra[x], rb[x], packed, t);
    for (q = 0; q < nq; q++)
      cols[q * CWI + x] += t[q];
  }
}

/* Window row t's sums of 2 neighbouring columns into pairs, whole vectors
 * up to np columns at least; with step, the column sums (of nc columns)
 * then moved on to row t + 1. */
I32_INLINE void
pass_i32 (const CqSimdPlaneBand * b, int32_t * cols, int32_t * pairs,
    unsigned x0, unsigned nc, unsigned np, unsigned t, int step, int packed)
{
  const unsigned nq = packed ? 3 : 4;
  const uint16_t *ra = (const uint16_t *) b->ref + x0;
  const uint16_t *rb = (const uint16_t *) b->dist + x0;
  const uint16_t *ia = ra + (size_t) (t + 8) * b->ref_stride;
  const uint16_t *ib = rb + (size_t) (t + 8) * b->dist_stride;
  const uint16_t *oa = ra + (size_t) t * b->ref_stride;
  const uint16_t *ob = rb + (size_t) t * b->dist_stride;
  unsigned x = 0, xv, q;

  if (step)
    for (; x + V <= nc; x += V) {
      vi ti[4], to[4];

      terms_i32 (ia + x, ib + x, packed, ti);
      terms_i32 (oa + x, ob + x, packed, to);
      for (q = 0; q < nq; q++) {
        int32_t *c = cols + q * CWI + x;
        const vi old = ld32 (c);

        /* c + 1 is still row t's: the next vector's sums move on after */
        st32 (pairs + q * CWI + x, old + ld32 (c + 1));
        st32 (c, old + (ti[q] - to[q]));
      }
    }
  /* the rest of the pairs from row t's sums, before they move on */
  for (xv = x; x < np; x += V)
    for (q = 0; q < nq; q++)
      st32 (pairs + q * CWI + x, ld32 (cols + q * CWI + x) +
          ld32 (cols + q * CWI + x + 1));
  if (step)
    for (x = xv; x < nc; x++) {
      int32_t ti[4], to[4];

      terms1_i32 (ia[x], ib[x], packed, ti);
      terms1_i32 (oa[x], ob[x], packed, to);
      for (q = 0; q < nq; q++)
        cols[q * CWI + x] += ti[q] - to[q];
    }
}

/* The n windows of a row from its sums of 2 columns, added to the row's
 * running sums phase (the strip starts at a multiple of their number). */
I32_INLINE void
windows_i32 (const CqSimdPlaneBand * b, const int32_t * pairs, unsigned n,
    int packed, double *phase)
{
  const unsigned nq = packed ? 3 : 4;
  const vd k1 = (vd) { } + b->c1, k2 = (vd) { } + b->c2;
  unsigned x, q, h;

  for (x = 0; x < n; x += V) {
    vu s[4];
    vi w[4];

    /* packed, Σa + 65536 Σb wraps past 2^31: unsigned */
    for (q = 0; q < nq; q++) {
      const int32_t *r = pairs + q * CWI + x;

      s[q] = ((vu) ld32 (r) + (vu) ld32 (r + 2)) +
          ((vu) ld32 (r + 4) + (vu) ld32 (r + 6));
    }
    if (packed) {
      w[0] = (vi) (s[0] & 0xffff);
      w[1] = (vi) (s[0] >> 16);
      w[2] = (vi) s[1];
      w[3] = (vi) s[2];
    } else
      for (q = 0; q < 4; q++)
        w[q] = (vi) s[q];
    for (h = 0; h < 2 && x + h * D < n; h++) {
      const unsigned xh = x + h * D;

      box8_values (h ? cvt_hi (w[0]) : cvt_lo (w[0]),
          h ? cvt_hi (w[1]) : cvt_lo (w[1]),
          h ? cvt_hi (w[2]) : cvt_lo (w[2]),
          h ? cvt_hi (w[3]) : cvt_lo (w[3]), k1, k2, xh,
          n - xh < D ? n - xh : D, phase);
    }
  }
}

I32_INLINE double
box8_i32 (const CqSimdPlaneBand * b, int packed)
{
  const unsigned n = b->width - 7, rows = b->t1 - b->t0;
  double *row = (double *) (((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63);
  int32_t *cols = (int32_t *) (row + (size_t) rows * CQ_SSIM_BOX8_PHASES);
  int32_t *pairs = cols + 4 * CWI;
  double sum = 0.0;
  unsigned x0, t, y;

  memset (row, 0, (size_t) rows * CQ_SSIM_BOX8_PHASES * sizeof (double));
  for (x0 = 0; x0 < n; x0 += S) {
    const unsigned ns = n - x0 < S ? n - x0 : S;
    /* pairs as far as the last vector of windows reads */
    const unsigned np = (ns + V - 1) / V * V + 8;

    memset (cols, 0, 4 * CWI * sizeof (int32_t));
    for (y = b->t0; y < b->t0 + 8; y++)
      cols_add_i32 (b, cols, x0, ns + 7, y, packed);
    for (t = b->t0; t < b->t1; t++) {
      /* the strip's columns of the row I32_AHEAD passes ahead */
      if (t + 8 + I32_AHEAD < b->height) {
        const size_t y = t + 8 + I32_AHEAD;

        prefetch_span ((const uint16_t *) b->ref + x0 + y * b->ref_stride,
            2 * (ns + 7));
        prefetch_span ((const uint16_t *) b->dist + x0 + y * b->dist_stride,
            2 * (ns + 7));
      }
      pass_i32 (b, cols, pairs, x0, ns + 7, np, t, t + 1 < b->t1, packed);
      windows_i32 (b, pairs, ns, packed,
          row + (size_t) (t - b->t0) * CQ_SSIM_BOX8_PHASES);
    }
  }
  for (t = 0; t < rows; t++)
    sum += cq_ssim_box8_row (row + (size_t) t * CQ_SSIM_BOX8_PHASES);
  return sum;
}

static double
box8_u16_i32 (const CqSimdPlaneBand * b)
{
  return b->depth <= 10 ? box8_i32 (b, 1) : box8_i32 (b, 0);
}

/* A band in strips of S windows, each walked down the band's rows with its
 * column sums in L1; each row's running sums carried from strip to strip,
 * so that its windows are added in the plain C's order. Samples of at most
 * 12 bits sum in 32-bit lanes (box8_u16_i32), wider ones in doubles. */
double
CQ_SIMD_FN (cq_simd_ssim_box8_u16) (const CqSimdPlaneBand * b)
{
  const unsigned n = b->width - 7, rows = b->t1 - b->t0;
  double *row = (double *) (((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63);
  double *cols = row + (size_t) rows * CQ_SSIM_BOX8_PHASES;
  double *pairs = cols + 4 * CW;
  double sum = 0.0;
  unsigned x0, t, y;

  if (b->t0 >= b->t1)
    return 0.0;
  if (b->depth <= 12)
    return box8_u16_i32 (b);
  memset (row, 0, (size_t) rows * CQ_SSIM_BOX8_PHASES * sizeof (double));
  for (x0 = 0; x0 < n; x0 += S) {
    const unsigned ns = n - x0 < S ? n - x0 : S;

    memset (cols, 0, 4 * CW * sizeof (double));
    for (y = b->t0; y < b->t0 + 8; y++)
      cols_row (b, cols, x0, ns + 7, y, 1.0);
    for (t = b->t0; t < b->t1; t++) {
      windows_row (b, cols, pairs, ns,
          row + (size_t) (t - b->t0) * CQ_SSIM_BOX8_PHASES);
      if (t + 1 < b->t1) {
        cols_row (b, cols, x0, ns + 7, t, -1.0);
        cols_row (b, cols, x0, ns + 7, t + 8, 1.0);
      }
    }
  }
  for (t = 0; t < rows; t++)
    sum += cq_ssim_box8_row (row + (size_t) t * CQ_SSIM_BOX8_PHASES);
  return sum;
}

/* ---- ffmpeg: 8x8 windows on the 4-sample grid ---- */

/* floats, one a double of vd */
typedef float vfh __attribute__ ((vector_size (2 * V)));

/* The 4x4 block sums of block row by into blocks[q * bw + bx] (q: Σa, Σb,
 * Σa² + Σb², Σab), for the blocks from bx0 (a multiple of D) to n4 and up
 * to D - 1 more (zeros past the plane); exact. */
static void
ffmpeg_blocks (const CqSimdPlaneBand * b, unsigned by, unsigned bx0,
    unsigned n4, double *blocks, size_t bw)
{
  unsigned bx, j, i, q;

  for (bx = bx0; bx < n4; bx += D) {
    vd blk[4] = { };

    if (4 * (bx + D) <= b->width) {
      for (j = 0; j < 4; j++) {
        const size_t y = 4 * (size_t) by + j;
        const uint16_t *ra = (const uint16_t *) b->ref + y * b->ref_stride +
            4 * bx;
        const uint16_t *rb = (const uint16_t *) b->dist +
            y * b->dist_stride + 4 * bx;
        vd qv[4][4];

        /* 4 D columns: vectors of D, their quantities */
        for (i = 0; i < 4; i++) {
          vd a = ld16d (ra + i * D), bb = ld16d (rb + i * D);

          qv[0][i] = a;
          qv[1][i] = bb;
          qv[2][i] = a * a + bb * bb;
          qv[3][i] = a * bb;
        }
        /* columns in pairs, then pairs in pairs: D blocks' row sums */
        for (q = 0; q < 4; q++)
          blk[q] += pairs_d (pairs_d (qv[q][0], qv[q][1]),
              pairs_d (qv[q][2], qv[q][3]));
      }
    } else {
      double t[4][D];
      unsigned l;

      for (q = 0; q < 4; q++)
        for (l = 0; l < D; l++)
          t[q][l] = 0.0;
      for (l = 0; l < D && 4 * (bx + l) + 4 <= b->width; l++)
        for (j = 0; j < 4; j++) {
          const size_t y = 4 * (size_t) by + j;
          const uint16_t *ra = (const uint16_t *) b->ref +
              y * b->ref_stride + 4 * (bx + l);
          const uint16_t *rb = (const uint16_t *) b->dist +
              y * b->dist_stride + 4 * (bx + l);

          for (i = 0; i < 4; i++) {
            double a = ra[i], bb = rb[i];

            t[0][l] += a;
            t[1][l] += bb;
            t[2][l] += a * a + bb * bb;
            t[3][l] += a * bb;
          }
        }
      for (q = 0; q < 4; q++)
        blk[q] = ldd (t[q]);
    }
    for (q = 0; q < 4; q++)
      stdd (blocks + q * bw + bx, blk[q]);
  }
}

/* ffmpeg_blocks of a whole row (samples of any depth) */
static void
ffmpeg_blocks_d (const CqSimdPlaneBand * b, unsigned by, unsigned n4,
    double *blocks, size_t bw)
{
  ffmpeg_blocks (b, by, 0, n4, blocks, bw);
}

/* The same for samples of at most 12 bits: a block's sums in 32-bit lanes
 * (a window's, four blocks, stay below 2^31 as box8's do), V blocks a step
 * from the column sums of their 4 rows, then the doubles the windows
 * take; the row's last blocks as ffmpeg_blocks has them. */
static void
ffmpeg_blocks_i32 (const CqSimdPlaneBand * b, unsigned by, unsigned n4,
    double *blocks, size_t bw)
{
  const uint16_t *ra[4], *rb[4];
  unsigned bx, j, i, h, q;

  for (j = 0; j < 4; j++) {
    ra[j] = (const uint16_t *) b->ref + (4 * (size_t) by + j) * b->ref_stride;
    rb[j] = (const uint16_t *) b->dist + (4 * (size_t) by + j) * b->dist_stride;
  }
  for (bx = 0; bx + V <= n4; bx += V) {
    vi half[2][4];

    /* columns 4 bx + 2 h V ... in pairs of vectors, each pair's column
     * sums in pairs */
    for (h = 0; h < 2; h++) {
      vi c[2][4] = { };

      for (i = 0; i < 2; i++)
        for (j = 0; j < 4; j++) {
          const size_t x = 4 * (size_t) bx + (2 * h + i) * V;
          const vi a = ld16 (ra[j] + x), bb = ld16 (rb[j] + x);
          const vi d = pack16 (a, bb);

          c[i][0] += a;
          c[i][1] += bb;
          c[i][2] += madd16 (d, d);
          c[i][3] += madd16 (d, (vi) ((vu) d >> 16));
        }
      for (q = 0; q < 4; q++)
        half[h][q] = pair_sums (c[0][q], c[1][q]);
    }
    for (q = 0; q < 4; q++) {
      const vi s = pair_sums (half[0][q], half[1][q]);

      stdd (blocks + q * bw + bx, cvt_lo (s));
      stdd (blocks + q * bw + bx + D, cvt_hi (s));
    }
  }
  ffmpeg_blocks (b, by, bx, n4, blocks, bw);
}

double
CQ_SIMD_FN (cq_simd_ssim_ffmpeg_u16) (const CqSimdPlaneBand * b)
{
  const unsigned w4 = b->width / 4, n = w4 - 1;
  const size_t bw = ((size_t) w4 + 2 * D + 7) & ~(size_t) 7;
  double *top = (double *) (((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63);
  double *bottom = top + 4 * bw, *tmp;
  const vd c1 = (vd) { } + b->c1, c2 = (vd) { } + b->c2;
  void (*blocks) (const CqSimdPlaneBand *, unsigned, unsigned, double *,
      size_t) = b->depth <= 12 ? ffmpeg_blocks_i32 : ffmpeg_blocks_d;
  double sum = 0.0;
  unsigned by, x, q, l;

  if (b->t0 >= b->t1)
    return 0.0;
  /* the last windows' lanes past the plane read zeros */
  memset (top, 0, 8 * bw * sizeof (double));
  blocks (b, b->t0, w4, top, bw);
  for (by = b->t0; by < b->t1; by++) {
    double row = 0.0;

    blocks (b, by + 1, w4, bottom, bw);
    for (x = 0; x < n; x += D) {
      const unsigned end = n - x < D ? n - x : D;
      vd s[4], vars, covar;
      vfh f1, f2, f3, f4, val;

      for (q = 0; q < 4; q++)
        s[q] = ldd (top + q * bw + x) + ldd (top + q * bw + x + 1) +
            ldd (bottom + q * bw + x) + ldd (bottom + q * bw + x + 1);
      /* cq_ssim_ffmpeg_local: its int64 terms (exact here), each converted
       * to float once, then its float operations */
      vars = s[2] * 64.0 - s[0] * s[0] - s[1] * s[1];
      covar = s[3] * 64.0 - s[0] * s[1];
      f1 = __builtin_convertvector (2.0 * s[0] * s[1] + c1, vfh);
      f2 = __builtin_convertvector (2.0 * covar + c2, vfh);
      f3 = __builtin_convertvector (s[0] * s[0] + s[1] * s[1] + c1, vfh);
      f4 = __builtin_convertvector (vars + c2, vfh);
      val = f1 * f2 / (f3 * f4);
      for (l = 0; l < end; l++)
        row += val[l];
    }
    sum += row;
    tmp = top;
    top = bottom;
    bottom = tmp;
  }
  return sum;
}
