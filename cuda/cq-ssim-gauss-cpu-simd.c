/* cudaquality compute library: gauss11 windows (SSIM, and MS-SSIM's
 * scales), vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). A lane is a
 * column (D = V / 2 doubles a vector), and every lane performs the plain C's
 * double operations in the plain C's order (band_gauss11 and band_ms_gauss
 * of cq-ssim-cpu.c, -ffp-contract=off), so the sums are the same bits. A
 * band goes in chunks of NR window rows, each a walk over blocks of D
 * columns, left to right; for block c:
 *  - the four quantities a, b, a² + b², ab of the chunk's NR + 10 input
 *    rows, in double (the plain C forms the same values at each use);
 *  - the 11-tap vertical chains of the NR rows, R at a time sharing the
 *    loads of R + 10 rows;
 *  - the horizontal chains of block c - LAG, whose sums are still in a
 *    small ring of blocks, then the window expression and each row's sum,
 *    left to right.
 * Everything a block touches stays in L1; the chunk's 10-row halo is read
 * and converted twice.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-ssim-local.h"

#define D (V / 2)
#define R CQ_CPU_SIMD_GAUSS_ROWS
#define NR CQ_CPU_SIMD_GAUSS_CHUNK
#define QR (NR + 10)
/* blocks between a block's vertical sums and the windows that read them:
 * D windows from x read the sums of x ... x + D + 9 */
#define LAG (1 + 9 / D)
/* the sums' ring: block c in slot c % SLOTS, slots below LAG copied after
 * the last so that LAG + 1 blocks from any slot are contiguous */
#define SLOTS (LAG + 1)
#define SW ((SLOTS + LAG) * D)

#if NR % R || SW > 40
#error "cq_cpu_simd_gauss_scratch () sizes NR rows of SW <= 40 doubles"
#endif

/* inlined, so that each call is specialised to its sample kind */
#define GAUSS_INLINE static inline __attribute__ ((always_inline))

/* 32-bit lanes, one a double of vd */
typedef uint32_t vuh __attribute__ ((vector_size (2 * V)));

/* An input row of a chunk: its samples in both planes, the columns it has
 * (0 past the plane's height), whether its squared differences count. */
typedef struct
{
  const void *a, *b;
  unsigned width;
  int sse;
} SampleRow;

typedef struct
{
  const CqSimdPlaneBand *band;
  vd g[11];
  unsigned n_out;               /* windows a row */
  double *q;                    /* QR rows x 4 quantities x D */
  double *sums;                 /* NR rows x 4 quantities x SW */
} GaussPass;

/* bytes a sample of a kind takes */
static inline size_t
sample_bytes (CqSimdSamples kind)
{
  return kind == CQ_SIMD_SAMPLES_U8 ? 1 :
      kind == CQ_SIMD_SAMPLES_U16 ? 2 : sizeof (double);
}

/* D samples of row r from x, as doubles (exact), in *va and *vb; zeros past
 * its width. Σ (a - b)² of 8-bit samples is added to *sse, lane by lane. */
GAUSS_INLINE void
load_samples (const SampleRow * r, CqSimdSamples kind, unsigned x,
    vd * va, vd * vb, vuh * sse)
{
  double ta[D], tb[D];
  unsigned l;

  if (x + D <= r->width) {
    switch (kind) {
      case CQ_SIMD_SAMPLES_U8:{
        const uint8_t *ra = (const uint8_t *) r->a + x;
        const uint8_t *rb = (const uint8_t *) r->b + x;
        vuh ia, ib, d;
#if V == 8
        int32_t wa, wb;

        memcpy (&wa, ra, 4);
        memcpy (&wb, rb, 4);
        ia = (vuh) _mm_cvtepu8_epi32 (_mm_cvtsi32_si128 (wa));
        ib = (vuh) _mm_cvtepu8_epi32 (_mm_cvtsi32_si128 (wb));
        *va = (vd) _mm256_cvtepi32_pd ((__m128i) ia);
        *vb = (vd) _mm256_cvtepi32_pd ((__m128i) ib);
#else
        ia = (vuh) _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *)
                ra));
        ib = (vuh) _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *)
                rb));
        *va = (vd) _mm512_cvtepi32_pd ((__m256i) ia);
        *vb = (vd) _mm512_cvtepi32_pd ((__m256i) ib);
#endif
        d = ia - ib;
        if (r->sse)
          *sse += d * d;
        return;
      }
      case CQ_SIMD_SAMPLES_U16:
        *va = ld16d ((const uint16_t *) r->a + x);
        *vb = ld16d ((const uint16_t *) r->b + x);
        return;
      case CQ_SIMD_SAMPLES_F64:
        *va = ldd ((const double *) r->a + x);
        *vb = ldd ((const double *) r->b + x);
        return;
    }
  }
  /* the plane's right edge (or past its last row): lane by lane */
  for (l = 0; l < D; l++) {
    ta[l] = tb[l] = 0.0;
    if (x + l >= r->width)
      continue;
    switch (kind) {
      case CQ_SIMD_SAMPLES_U8:{
        int sa = ((const uint8_t *) r->a)[x + l];
        int sb = ((const uint8_t *) r->b)[x + l];

        if (r->sse)
          (*sse)[l] += (uint32_t) ((sa - sb) * (sa - sb));
        ta[l] = sa;
        tb[l] = sb;
        break;
      }
      case CQ_SIMD_SAMPLES_U16:
        ta[l] = ((const uint16_t *) r->a)[x + l];
        tb[l] = ((const uint16_t *) r->b)[x + l];
        break;
      case CQ_SIMD_SAMPLES_F64:
        ta[l] = ((const double *) r->a)[x + l];
        tb[l] = ((const double *) r->b)[x + l];
        break;
    }
  }
  *va = ldd (ta);
  *vb = ldd (tb);
}

/* The quantities of the chunk's QR rows at block c (columns c D ...). */
GAUSS_INLINE void
quantities_block (const GaussPass * p, CqSimdSamples kind,
    const SampleRow * rows, unsigned c, vuh * sse)
{
  unsigned i;

  for (i = 0; i < QR; i++) {
    double *q = p->q + (size_t) i * 4 * D;
    vd a, b;

    load_samples (&rows[i], kind, c * D, &a, &b, sse);
    stdd (q, a);
    stdd (q + D, b);
    stdd (q + 2 * D, a * a + b * b);
    stdd (q + 3 * D, a * b);
  }
}

/* The vertical sums of block c for the chunk's NR window rows, into slot
 * c % SLOTS of the sums (and its copy): row j's chain takes rows j ... j + 10
 * in order, the first product without an addition (0 + p is p: the
 * products are not negative). Written as whole chains: GCC 12.2 at -O3 got
 * an interleaved form of these loops wrong (test-cpu-simd caught it). */
static inline void
vertical_block (const GaussPass * p, unsigned c)
{
  const unsigned slot = c % SLOTS;
  unsigned r0, qi, i, j, k;

  for (r0 = 0; r0 < NR; r0 += R)
    for (qi = 0; qi < 4; qi++) {
      vd v[R + 10];

      for (i = 0; i < R + 10; i++)
        v[i] = ldd (p->q + ((size_t) (r0 + i) * 4 + qi) * D);
      for (j = 0; j < R; j++) {
        double *out = p->sums + ((size_t) (r0 + j) * 4 + qi) * SW + slot * D;
        vd acc = p->g[0] * v[j];

        for (k = 1; k < 11; k++)
          acc = acc + p->g[k] * v[j + k];
        stdd (out, acc);
        if (slot < LAG)
          stdd (out + SLOTS * D, acc);
      }
    }
}

/* Window row j's local values of block m (windows m D ...) into loc[], and
 * their contrast-structure terms into cs[] when cs is not NULL. */
static inline void
windows_block (const GaussPass * p, unsigned j, unsigned m, double *loc,
    double *cs)
{
  const CqSimdPlaneBand *b = p->band;
  const double *s = p->sums + (size_t) j * 4 * SW + (m % SLOTS) * D;
  vd u[4], uxuy, sq, a1, a2, b1, b2;
  unsigned qi, k;

  for (qi = 0; qi < 4; qi++) {
    const double *sq_row = s + qi * SW;

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

/* One chunk: window rows t ... t + n - 1 (n <= NR); the rows' local values
 * (and contrast-structure terms) added left to right into row[] (rcs[]).
 * Returns Σ (a - b)² of the 8-bit rows the chunk owns: its first NR, and
 * for the band's last chunk all it reads, up to sse_y1. */
GAUSS_INLINE uint64_t
chunk_rows (const GaussPass * p, CqSimdSamples kind,
    unsigned t, unsigned n, double *row, double *rcs)
{
  const CqSimdPlaneBand *b = p->band;
  const unsigned n_blocks = (p->n_out + D - 1) / D;
  const size_t es = sample_bytes (kind);
  const int last = t + n >= b->t1;
  SampleRow rows[QR];
  double loc[NR][D], cs[NR][D];
  unsigned i, j, c, l;
  uint64_t sse = 0;

  for (i = 0; i < QR; i++) {
    const unsigned y = t + i;

    rows[i].a = (const uint8_t *) b->ref + (size_t) y * b->ref_stride * es;
    rows[i].b = (const uint8_t *) b->dist + (size_t) y * b->dist_stride * es;
    rows[i].width = y < b->height ? b->width : 0;
    rows[i].sse = y < b->sse_y1 && (i < NR || last);
  }
  for (j = 0; j < NR; j++)
    row[j] = rcs[j] = 0.0;
  for (c = 0; c < n_blocks + LAG; c++) {
    unsigned m, end;
    vuh block_sse = { };

    quantities_block (p, kind, rows, c, &block_sse);
    for (l = 0; l < D; l++)
      sse += block_sse[l];
    vertical_block (p, c);
    if (c < LAG)
      continue;
    m = c - LAG;
    for (j = 0; j < n; j++)
      windows_block (p, j, m, loc[j], b->cs ? cs[j] : NULL);
    end = p->n_out - m * D < D ? p->n_out - m * D : D;
    for (j = 0; j < n; j++)
      for (l = 0; l < end; l++) {
        row[j] += loc[j][l];
        if (b->cs)
          rcs[j] += cs[j][l];
      }
  }
  return sse;
}

/* The band's windows from samples of one kind. */
GAUSS_INLINE double
band_windows (const GaussPass * p, CqSimdSamples kind,
    double *cs_sum, uint64_t * sse_out)
{
  const CqSimdPlaneBand *b = p->band;
  double ssim = 0.0, cs = 0.0, row[NR], rcs[NR];
  uint64_t sse = 0;
  unsigned t;

  for (t = b->t0; t < b->t1; t += NR) {
    unsigned n = b->t1 - t < NR ? b->t1 - t : NR, j;

    sse += chunk_rows (p, kind, t, n, row, rcs);
    for (j = 0; j < n; j++) {
      ssim += row[j];
      cs += rcs[j];
    }
  }
  *cs_sum = cs;
  *sse_out = sse;
  return ssim;
}

double
CQ_SIMD_FN (cq_simd_ssim_gauss11) (const CqSimdPlaneBand * b,
    double *cs_sum, uint64_t * sse_out)
{
  GaussPass p;
  uintptr_t base = ((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63;
  double ssim, cs;
  uint64_t sse;
  unsigned k;

  p.band = b;
  for (k = 0; k < 11; k++)
    p.g[k] = (vd) { } + b->gauss[k];
  p.n_out = b->width - 10;
  p.q = (double *) base;
  p.sums = p.q + QR * 4 * D;
  switch (b->samples) {
    case CQ_SIMD_SAMPLES_U8:
      ssim = band_windows (&p, CQ_SIMD_SAMPLES_U8, &cs, &sse);
      break;
    case CQ_SIMD_SAMPLES_U16:
      ssim = band_windows (&p, CQ_SIMD_SAMPLES_U16, &cs, &sse);
      break;
    default:
      ssim = band_windows (&p, CQ_SIMD_SAMPLES_F64, &cs, &sse);
      break;
  }
  if (cs_sum)
    *cs_sum = cs;
  if (sse_out)
    *sse_out = sse;
  return ssim;
}

/* ---- MS-SSIM's 2x2 averages ---- */

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
  vd lo0, hi0, lo1, hi1;

  load_pair (kind, r0, x, &lo0, &hi0);
  load_pair (kind, r1, x, &lo1, &hi1);
  return (pairs_d (lo0, hi0) + pairs_d (lo1, hi1)) * 0.25;
}

GAUSS_INLINE void
ms_down_rows (const CqSimdPlaneBand * b, CqSimdSamples kind,
    unsigned y0, unsigned y1, double *out_a, double *out_b)
{
  const size_t es = sample_bytes (kind);
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
CQ_SIMD_FN (cq_simd_ssim_ms_down) (const CqSimdPlaneBand * b, unsigned y0,
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
