/* cudaquality compute library: gauss11 windows (SSIM, and MS-SSIM's
 * scales), vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). A lane is a
 * column (D = V / 2 doubles a vector), and every lane performs the plain C's
 * double operations in the plain C's order (band_gauss11 and band_ms_gauss
 * of cq-ssim-cpu.c, -ffp-contract=off), so the sums are the same bits:
 *  - each input row enters a ring once, as its four quantities a, b,
 *    a² + b² and ab in double (the plain C forms the same values at each of
 *    the row's 11 uses);
 *  - a pass takes R window rows: their 11-tap vertical chains share the
 *    loads of the ring's R + 10 rows;
 *  - the horizontal chains of a block of D windows run LAG blocks behind
 *    the vertical sums they read, which are then still in L1;
 *  - each row's local values are added to its sum left to right, and the
 *    rows' sums in row order.
 * AVX-512 takes about a fifth of the plain C's time, AVX2 about a quarter
 * (docs/benchmarks.md).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-ssim-local.h"

#define D (V / 2)
#define R CQ_CPU_SIMD_GAUSS_ROWS
#define RING (R + 10)
/* blocks between a block's vertical sums and the windows that read them:
 * D windows from x read the sums of x ... x + D + 9 */
#define LAG (1 + 9 / D)

typedef struct
{
  const CqSimdGaussBand *band;
  vd g[11];
  size_t wp;                    /* doubles a quantity row (ring, sums) */
  double *ring;                 /* RING rows x 4 quantities x wp */
  double *sums;                 /* R window rows x 4 quantities x wp */
  unsigned n_out;               /* windows a row */
} GaussPass;

/* V samples of an unpacked 16-bit row, widened to 32-bit lanes */
static inline vi
ld16 (const uint16_t * p)
{
#if V == 8
  return (vi) _mm256_cvtepu16_epi32 (_mm_loadu_si128 ((const __m128i *) p));
#else
  return (vi) _mm512_cvtepu16_epi32 (_mm256_loadu_si256 ((const __m256i *)
          p));
#endif
}

/* The four quantities of V columns from their samples as doubles. */
static inline void
ring_quantities (double *q, size_t wp, vd a, vd b)
{
  stdd (q, a);
  stdd (q + wp, b);
  stdd (q + 2 * wp, a * a + b * b);
  stdd (q + 3 * wp, a * b);
}

/* The four quantities of column x from its samples, one lane's worth. */
static inline void
ring_column (double *q, size_t wp, unsigned x, double sa, double sb)
{
  q[x] = sa;
  q[x + wp] = sb;
  q[x + 2 * wp] = sa * sa + sb * sb;
  q[x + 3 * wp] = sa * sb;
}

/* Image row y into its ring slot, zeros from the plane's width (and for
 * rows past its height) to the slot's end; returns Σ (a - b)² of the row
 * for 8-bit samples. */
static uint64_t
ring_row (const GaussPass * p, unsigned y)
{
  const CqSimdGaussBand *b = p->band;
  const size_t wp = p->wp;
  double *q = p->ring + (size_t) (y % RING) * 4 * wp;
  const unsigned w = y < b->height ? b->width : 0;
  unsigned x = 0, k;
  vu sse = { };

  switch (b->samples) {
    case CQ_SIMD_SAMPLES_U8:{
      const uint8_t *ra = (const uint8_t *) b->ref + (size_t) y * b->ref_stride;
      const uint8_t *rb = (const uint8_t *) b->dist +
          (size_t) y * b->dist_stride;

      for (; x + V <= w; x += V) {
        vi ia = ld8 (ra + x), ib = ld8 (rb + x), d = ia - ib;

        sse += (vu) (d * d);
        ring_quantities (q + x, wp, cvt_lo (ia), cvt_lo (ib));
        ring_quantities (q + x + D, wp, cvt_hi (ia), cvt_hi (ib));
      }
      for (; x < w; x++) {
        int d = (int) ra[x] - rb[x];

        sse[0] += (uint32_t) (d * d);
        ring_column (q, wp, x, ra[x], rb[x]);
      }
      break;
    }
    case CQ_SIMD_SAMPLES_U16:{
      const uint16_t *ra = (const uint16_t *) b->ref + (size_t) y *
          b->ref_stride;
      const uint16_t *rb = (const uint16_t *) b->dist + (size_t) y *
          b->dist_stride;

      for (; x + V <= w; x += V) {
        vi ia = ld16 (ra + x), ib = ld16 (rb + x);

        ring_quantities (q + x, wp, cvt_lo (ia), cvt_lo (ib));
        ring_quantities (q + x + D, wp, cvt_hi (ia), cvt_hi (ib));
      }
      for (; x < w; x++)
        ring_column (q, wp, x, ra[x], rb[x]);
      break;
    }
    case CQ_SIMD_SAMPLES_F64:{
      const double *ra = (const double *) b->ref + (size_t) y * b->ref_stride;
      const double *rb = (const double *) b->dist + (size_t) y * b->dist_stride;

      for (; x + D <= w; x += D)
        ring_quantities (q + x, wp, ldd (ra + x), ldd (rb + x));
      for (; x < w; x++)
        ring_column (q, wp, x, ra[x], rb[x]);
      break;
    }
  }
  for (k = 0; k < 4; k++)
    memset (q + k * wp + w, 0, (wp - w) * sizeof (double));
  return hsum_u (sse);
}

/* The vertical sums of block c (columns c D ...) for the pass's R window
 * rows from the ring rows rows[0 ... R + 9], each loaded once: row j's
 * chain takes rows j ... j + 10 in order, the first product without an
 * addition (0 + p is p: the products are not negative). Written as whole
 * chains: GCC 12.2 at -O3 got an interleaved form of these loops wrong
 * (test-cpu-simd caught it). */
static inline void
vertical_block (const GaussPass * p, const double *const *rows, unsigned c)
{
  const size_t wp = p->wp, x = (size_t) c * D;
  unsigned qi, i, j, k;

  for (qi = 0; qi < 4; qi++) {
    vd v[R + 10];

    for (i = 0; i < R + 10; i++)
      v[i] = ldd (rows[i] + qi * wp + x);
    for (j = 0; j < R; j++) {
      vd acc = p->g[0] * v[j];

      for (k = 1; k < 11; k++)
        acc = acc + p->g[k] * v[j + k];
      stdd (p->sums + (j * 4 + qi) * wp + x, acc);
    }
  }
}

/* Window row j's local values of block m (windows m D ...) into loc[], and
 * their contrast-structure terms into cs[] when cs is not NULL. */
static inline void
windows_block (const GaussPass * p, unsigned j, unsigned m, double *loc,
    double *cs)
{
  const CqSimdGaussBand *b = p->band;
  const size_t wp = p->wp, x = (size_t) m * D;
  const double *s = p->sums + (size_t) j * 4 * wp + x;
  vd u[4], uxuy, sq, a1, a2, b1, b2;
  unsigned qi, k;

  for (qi = 0; qi < 4; qi++) {
    const double *sq_row = s + qi * wp;

    u[qi] = p->g[0] * ldd (sq_row);
    for (k = 1; k < 11; k++)
      u[qi] = u[qi] + p->g[k] * ldd (sq_row + k);
  }
  /* cq_ssim_gauss_factors and cq_ssim_gauss_local, lane by lane */
  uxuy = u[0] * u[1];
  sq = u[0] * u[0] + u[1] * u[1];
  a2 = 2.0 * (u[3] - uxuy) + b->c2;
  b2 = (u[2] - sq) + b->c2;
  a1 = 2.0 * uxuy + b->c1;
  b1 = sq + b->c1;
  stdd (loc, (a1 * a2) / (b1 * b2));
  if (cs)
    stdd (cs, a2 / b2);
}

/* One pass: window rows t ... t + n - 1 (n <= R); the rows' local values
 * (and contrast-structure terms) added left to right into row[] (rcs[]). */
static void
pass_rows (const GaussPass * p, unsigned t, unsigned n, double *row,
    double *rcs)
{
  const unsigned n_blocks = (p->n_out + D - 1) / D;
  const double *rows[R + 10];
  double loc[R][D], cs[R][D];
  unsigned i, j, c, l;

  for (i = 0; i < R + 10; i++)
    rows[i] = p->ring + (size_t) ((t + i) % RING) * 4 * p->wp;
  for (j = 0; j < R; j++)
    row[j] = rcs[j] = 0.0;
  for (c = 0; c < n_blocks + LAG; c++) {
    unsigned m, end;

    vertical_block (p, rows, c);
    if (c < LAG)
      continue;
    m = c - LAG;
    for (j = 0; j < n; j++)
      windows_block (p, j, m, loc[j], p->band->cs ? cs[j] : NULL);
    end = p->n_out - m * D < D ? p->n_out - m * D : D;
    for (j = 0; j < n; j++)
      for (l = 0; l < end; l++) {
        row[j] += loc[j][l];
        if (p->band->cs)
          rcs[j] += cs[j][l];
      }
  }
}

double
CQ_SIMD_FN (cq_simd_ssim_gauss11) (const CqSimdGaussBand * b,
    double *cs_sum, uint64_t * sse_out)
{
  GaussPass p;
  uintptr_t base = ((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63;
  double ssim = 0.0, cs = 0.0, row[R], rcs[R];
  uint64_t sse = 0;
  unsigned k, t, y;

  p.band = b;
  for (k = 0; k < 11; k++)
    p.g[k] = (vd) { } + b->gauss[k];
  p.n_out = b->width - 10;
  /* the sums of the last block's windows reach LAG blocks further */
  p.wp = ((size_t) ((p.n_out + D - 1) / D + LAG) * D + 7) & ~(size_t) 7;
  p.ring = (double *) base;
  p.sums = p.ring + (size_t) RING * 4 * p.wp;

  for (y = b->t0; y < b->t0 + 10 && b->t0 < b->t1; y++) {
    uint64_t s = ring_row (&p, y);

    if (y < b->sse_y1)
      sse += s;
  }
  for (t = b->t0; t < b->t1; t += R) {
    unsigned n = b->t1 - t < R ? b->t1 - t : R, j;

    for (y = t + 10; y < t + 10 + R; y++) {
      uint64_t s = ring_row (&p, y);

      if (y < b->sse_y1)
        sse += s;
    }
    pass_rows (&p, t, n, row, rcs);
    for (j = 0; j < n; j++) {
      ssim += row[j];
      cs += rcs[j];
    }
  }
  if (cs_sum)
    *cs_sum = cs;
  if (sse_out)
    *sse_out = sse;
  return ssim;
}

/* ---- MS-SSIM's 2x2 averages ---- */

#if V == 8
#define EVEN_D { 0, 2, 4, 6 }
#define ODD_D { 1, 3, 5, 7 }
#else
#define EVEN_D { 0, 2, 4, 6, 8, 10, 12, 14 }
#define ODD_D { 1, 3, 5, 7, 9, 11, 13, 15 }
#endif

typedef int64_t vdl __attribute__ ((vector_size (4 * V)));

/* 2D samples from x of a row as doubles: lanes [0, D) in *lo, [D, 2D) in
 * *hi. */
static inline void
load_pair (CqSimdSamples kind, const void *row, size_t x, vd * lo, vd * hi)
{
  switch (kind) {
    case CQ_SIMD_SAMPLES_U8:{
      vi v = ld8 ((const uint8_t *) row + x);

      *lo = cvt_lo (v);
      *hi = cvt_hi (v);
      break;
    }
    case CQ_SIMD_SAMPLES_U16:{
      vi v = ld16 ((const uint16_t *) row + x);

      *lo = cvt_lo (v);
      *hi = cvt_hi (v);
      break;
    }
    default:
      *lo = ldd ((const double *) row + x);
      *hi = ldd ((const double *) row + x + D);
      break;
  }
}

static inline double
sample_at (CqSimdSamples kind, const void *row, size_t x)
{
  return kind == CQ_SIMD_SAMPLES_U8 ? ((const uint8_t *) row)[x] :
      kind == CQ_SIMD_SAMPLES_U16 ? ((const uint16_t *) row)[x] :
      ((const double *) row)[x];
}

/* cq_ssim_down2 of D outputs from 2D samples of rows r0, r1 */
static inline vd
down2 (CqSimdSamples kind, const void *r0, const void *r1, size_t x)
{
  const vdl even = EVEN_D, odd = ODD_D;
  vd lo0, hi0, lo1, hi1, ab, cd;

  load_pair (kind, r0, x, &lo0, &hi0);
  load_pair (kind, r1, x, &lo1, &hi1);
  ab = __builtin_shuffle (lo0, hi0, even) + __builtin_shuffle (lo0, hi0, odd);
  cd = __builtin_shuffle (lo1, hi1, even) + __builtin_shuffle (lo1, hi1, odd);
  return (ab + cd) * 0.25;
}

static inline __attribute__ ((always_inline))
     void ms_down_rows (const CqSimdGaussBand * b, CqSimdSamples kind,
    unsigned y0, unsigned y1, double *out_a, double *out_b)
{
  const size_t es = kind == CQ_SIMD_SAMPLES_U8 ? 1 :
      kind == CQ_SIMD_SAMPLES_U16 ? 2 : sizeof (double);
  const unsigned nw = b->width / 2;
  unsigned y, x, f;

  for (f = 0; f < 2; f++) {
    const uint8_t *in = f ? b->dist : b->ref;
    const size_t stride = (f ? b->dist_stride : b->ref_stride) * es;
    double *out = f ? out_b : out_a;

    for (y = y0; y < y1; y++) {
      const uint8_t *r0 = in + (size_t) (2 * y) * stride, *r1 = r0 + stride;
      double *o = out + (size_t) y * nw;

      for (x = 0; 2 * x + 2 * D <= b->width; x += D)
        stdd (o + x, down2 (kind, r0, r1, 2 * (size_t) x));
      for (; x < nw; x++)
        o[x] = cq_ssim_down2 (sample_at (kind, r0, 2 * x),
            sample_at (kind, r0, 2 * x + 1), sample_at (kind, r1, 2 * x),
            sample_at (kind, r1, 2 * x + 1));
    }
  }
}

void
CQ_SIMD_FN (cq_simd_ssim_ms_down) (const CqSimdGaussBand * b, unsigned y0,
    unsigned y1, double *out_a, double *out_b)
{
  switch (b->samples) {
    case CQ_SIMD_SAMPLES_U8:
      ms_down_rows (b, CQ_SIMD_SAMPLES_U8, y0, y1, out_a, out_b);
      break;
    case CQ_SIMD_SAMPLES_U16:
      ms_down_rows (b, CQ_SIMD_SAMPLES_U16, y0, y1, out_a, out_b);
      break;
    default:
      ms_down_rows (b, CQ_SIMD_SAMPLES_F64, y0, y1, out_a, out_b);
      break;
  }
}
