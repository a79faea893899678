/* cudaquality compute library: SSIM windows of 8-bit planes, vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). The samples
 * are read straight from the frames (no unpacking), a lane per column:
 *  - ffmpeg: the 4x4 block sums of a block row (lanes summed in groups of
 *    four by two shuffle-and-add steps), then the windows of a block row
 *    pair, V windows at once;
 *  - box8: the 8-row column sums slid down the band as the plain C does,
 *    V windows of a row at once from eight shifted loads of them.
 * The sums are exact 32-bit integers (8-bit samples: every term of the
 * expressions below stays under 2^30), converted and combined exactly as in
 * cq-ssim-local.h. Each row's local values are added left to right into a
 * double, rows in order, as the plain C does; box8 keeps
 * CQ_CPU_SIMD_BOX8_ROWS rows of values and sums them side by side, which
 * hides the latency of those chains without changing their order.
 * Σ (a - b)² comes from the same sums (Σa² + Σb² - 2Σab per column).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-ssim-local.h"

#define R CQ_CPU_SIMD_BOX8_ROWS

#if V == 8
#define EVEN { 0, 2, 4, 6, 8, 10, 12, 14 }
#define ODD { 1, 3, 5, 7, 9, 11, 13, 15 }
#elif V == 16
#define EVEN { 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 }
#define ODD { 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31 }
#else
#error "CQ_SIMD_LANES must be 8 or 16"
#endif

/* lanes in pairs: (a0 + a1, a2 + a3, ..., b0 + b1, ...) */
static inline vi
pair_sums (vi a, vi b)
{
  const vi even = EVEN, odd = ODD;

  return __builtin_shuffle (a, b, even) + __builtin_shuffle (a, b, odd);
}

/* Σ (a - b)² over columns [x0, w) of one row, plain. */
static inline uint64_t
sse_tail (const uint8_t * ra, const uint8_t * rb, unsigned x0, unsigned w)
{
  uint64_t s = 0;
  unsigned x;

  for (x = x0; x < w; x++) {
    int d = (int) ra[x] - rb[x];
    s += (uint64_t) (d * d);
  }
  return s;
}

/* Σ (a - b)² over the rows [y0, y1) of the band's planes. */
static uint64_t
sse_rows (const CqSimdSsimBand * b, unsigned y0, unsigned y1)
{
  uint64_t s = 0;
  unsigned y, x;

  for (y = y0; y < y1; y++) {
    const uint8_t *ra = b->ref + (size_t) y * b->ref_stride;
    const uint8_t *rb = b->dist + (size_t) y * b->dist_stride;
    vu acc = { };

    for (x = 0; x + V <= b->width; x += V) {
      vi d = ld8 (ra + x) - ld8 (rb + x);
      acc += (vu) (d * d);
    }
    s += hsum_u (acc) + sse_tail (ra, rb, x, b->width);
  }
  return s;
}

/* ---- ffmpeg: 8x8 windows on the 4-sample grid ---- */

/* The 4x4 block sums of block row by into s1[bx], s2 = s1 + qs, ss, s12 (the
 * plain C's blocks[4 bx + k]); adds Σ (a - b)² of its 4 rows, every column,
 * to *sse when sse is not NULL. */
static void
ffmpeg_block_row (const CqSimdSsimBand * b, unsigned by, unsigned w4,
    int32_t * s1, size_t qs, uint64_t * sse)
{
  const uint8_t *ra[4], *rb[4];
  unsigned x, j, i, bx;
  vu acc = { };

  for (j = 0; j < 4; j++) {
    ra[j] = b->ref + (size_t) (4 * by + j) * b->ref_stride;
    rb[j] = b->dist + (size_t) (4 * by + j) * b->dist_stride;
  }
  for (x = 0; x + V <= 4 * w4; x += V) {
    vi ca = { }, cb = { }, css = { }, cab = { }, q;
    int32_t t[V];

    for (j = 0; j < 4; j++) {
      vi a = ld8 (ra[j] + x), c = ld8 (rb[j] + x);

      ca += a;
      cb += c;
      css += a * a + c * c;
      cab += a * c;
    }
    if (sse)
      acc += (vu) (css - 2 * cab);
    /* (Σa of blocks, Σb ..., Σa²+b² ..., Σab ...), V / 4 blocks each */
    q = pair_sums (pair_sums (ca, cb), pair_sums (css, cab));
    memcpy (t, &q, sizeof (t));
    memcpy (s1 + x / 4, t, V);
    memcpy (s1 + qs + x / 4, t + V / 4, V);
    memcpy (s1 + 2 * qs + x / 4, t + V / 2, V);
    memcpy (s1 + 3 * qs + x / 4, t + 3 * V / 4, V);
  }
  for (bx = x / 4; bx < w4; bx++) {
    int32_t a1 = 0, a2 = 0, ass = 0, a12 = 0;

    for (j = 0; j < 4; j++)
      for (i = 0; i < 4; i++) {
        int32_t a = ra[j][4 * bx + i], c = rb[j][4 * bx + i];

        a1 += a;
        a2 += c;
        ass += a * a + c * c;
        a12 += a * c;
      }
    s1[bx] = a1;
    s1[qs + bx] = a2;
    s1[2 * qs + bx] = ass;
    s1[3 * qs + bx] = a12;
    if (sse)
      *sse += (uint64_t) (ass - 2 * a12);
  }
  if (sse) {
    *sse += hsum_u (acc);
    for (j = 0; j < 4; j++)
      *sse += sse_tail (ra[j], rb[j], 4 * w4, b->width);
  }
}

double
CQ_SIMD_FN (cq_simd_ssim_ffmpeg) (const CqSimdSsimBand * b, uint64_t * sse_out)
{
  const unsigned w4 = b->width / 4;
  const size_t qs = (size_t) w4 + V;
  const vi c1 = splat ((int32_t) b->c1), c2 = splat ((int32_t) b->c2);
  int32_t *top = b->scratch, *bottom = top + 4 * qs, *tmp;
  uint64_t sse = 0;
  double sum = 0.0;
  unsigned by, bx, y;

#define OWNED(by) (4 * (by) >= b->sse_y0 && 4 * (by) + 4 <= b->sse_y1)
  if (b->t0 < b->t1) {
    ffmpeg_block_row (b, b->t0, w4, top, qs, OWNED (b->t0) ? &sse : NULL);
    for (by = b->t0; by < b->t1; by++) {
      double row = 0.0;

      ffmpeg_block_row (b, by + 1, w4, bottom, qs,
          OWNED (by + 1) ? &sse : NULL);
      for (bx = 0; bx + V < w4; bx += V) {
        vi s1 = ld32 (top + bx) + ld32 (top + bx + 1) + ld32 (bottom + bx) +
            ld32 (bottom + bx + 1);
        vi s2 = ld32 (top + qs + bx) + ld32 (top + qs + bx + 1) +
            ld32 (bottom + qs + bx) + ld32 (bottom + qs + bx + 1);
        vi ss = ld32 (top + 2 * qs + bx) + ld32 (top + 2 * qs + bx + 1) +
            ld32 (bottom + 2 * qs + bx) + ld32 (bottom + 2 * qs + bx + 1);
        vi s12 = ld32 (top + 3 * qs + bx) + ld32 (top + 3 * qs + bx + 1) +
            ld32 (bottom + 3 * qs + bx) + ld32 (bottom + 3 * qs + bx + 1);
        vi vars = ss * 64 - s1 * s1 - s2 * s2;
        vi covar = s12 * 64 - s1 * s2;
        vf f = __builtin_convertvector (2 * s1 * s2 + c1, vf) *
            __builtin_convertvector (2 * covar + c2, vf)
            / (__builtin_convertvector (s1 * s1 + s2 * s2 + c1, vf) *
            __builtin_convertvector (vars + c2, vf));
        unsigned i;

        for (i = 0; i < V; i++)
          row += f[i];
      }
      for (; bx + 1 < w4; bx++) {
        int64_t s[4];
        unsigned k;

        for (k = 0; k < 4; k++)
          s[k] = (int64_t) top[k * qs + bx] + top[k * qs + bx + 1] +
              bottom[k * qs + bx] + bottom[k * qs + bx + 1];
        row += cq_ssim_ffmpeg_local (s[0], s[1], s[2], s[3], b->c1, b->c2);
      }
      sum += row;
      tmp = top;
      top = bottom;
      bottom = tmp;
    }
  }
  /* owned rows no block row above covered */
  for (y = b->sse_y0; y < b->sse_y1; y++) {
    by = y / 4;
    if (!(b->t0 < b->t1 && by >= b->t0 && by <= b->t1 && OWNED (by)))
      sse += sse_rows (b, y, y + 1);
  }
#undef OWNED
  *sse_out = sse;
  return sum;
}

/* ---- box8: 8x8 windows at every position ---- */

/* Column sums over 8 rows: removes row `out` (unless NULL) and adds row
 * `in`; adds Σ (a - b)² of row in to *sse when sse is not NULL. */
static void
box8_cols (const CqSimdSsimBand * b, int32_t * ca, size_t cs, unsigned in,
    const unsigned *out, uint64_t * sse)
{
  const unsigned w = b->width;
  const uint8_t *na = b->ref + (size_t) in * b->ref_stride;
  const uint8_t *nb = b->dist + (size_t) in * b->dist_stride;
  const uint8_t *oa = out ? b->ref + (size_t) * out * b->ref_stride : NULL;
  const uint8_t *ob = out ? b->dist + (size_t) * out * b->dist_stride : NULL;
  int32_t *cb = ca + cs, *css = ca + 2 * cs, *cab = ca + 3 * cs;
  vu acc = { };
  unsigned x;

  for (x = 0; x + V <= w; x += V) {
    vi a = ld8 (na + x), c = ld8 (nb + x);
    vi sq = a * a + c * c, ab = a * c;
    vi da = a, dc = c;

    if (sse)
      acc += (vu) (sq - 2 * ab);
    if (out) {
      vi oa_ = ld8 (oa + x), ob_ = ld8 (ob + x);

      da -= oa_;
      dc -= ob_;
      sq -= oa_ * oa_ + ob_ * ob_;
      ab -= oa_ * ob_;
    }
    st32 (ca + x, ld32 (ca + x) + da);
    st32 (cb + x, ld32 (cb + x) + dc);
    st32 (css + x, ld32 (css + x) + sq);
    st32 (cab + x, ld32 (cab + x) + ab);
  }
  for (; x < w; x++) {
    int32_t a = na[x], c = nb[x];

    ca[x] += a;
    cb[x] += c;
    css[x] += a * a + c * c;
    cab[x] += a * c;
    if (sse)
      *sse += (uint64_t) ((a - c) * (a - c));
    if (out) {
      a = oa[x];
      c = ob[x];
      ca[x] -= a;
      cb[x] -= c;
      css[x] -= a * a + c * c;
      cab[x] -= a * c;
    }
  }
  if (sse)
    *sse += hsum_u (acc);
}

/* The local values of one row of windows from the column sums. */
static void
box8_row (const CqSimdSsimBand * b, const int32_t * ca, size_t cs,
    double *vals)
{
  const unsigned nw = b->width - 7;
  const int32_t *cb = ca + cs, *css = ca + 2 * cs, *cab = ca + 3 * cs;
  unsigned x, i;

  for (x = 0; x + V <= nw; x += V) {
    vi sa = ld32 (ca + x), sb = ld32 (cb + x), sss = ld32 (css + x),
        sab = ld32 (cab + x), p, q;
    vd n1, n2, d1, d2, v;

    for (i = 1; i < 8; i++) {
      sa += ld32 (ca + x + i);
      sb += ld32 (cb + x + i);
      sss += ld32 (css + x + i);
      sab += ld32 (cab + x + i);
    }
    p = sa * sb;
    q = sa * sa + sb * sb;
    n1 = __builtin_convertvector (2 * p, vd) + b->k1;
    n2 = __builtin_convertvector (2 * (64 * sab - p), vd) + b->k2;
    d1 = __builtin_convertvector (q, vd) + b->k1;
    d2 = __builtin_convertvector (64 * sss - q, vd) + b->k2;
    v = (n1 * n2) / (d1 * d2);
    memcpy (vals + x, &v, sizeof (v));
  }
  for (; x < nw; x++) {
    int64_t w[4] = { 0, 0, 0, 0 };

    for (i = 0; i < 8; i++) {
      w[0] += ca[x + i];
      w[1] += cb[x + i];
      w[2] += css[x + i];
      w[3] += cab[x + i];
    }
    vals[x] = cq_ssim_box8_local (w[0], w[1], w[2], w[3], b->k1, b->k2);
  }
}

double
CQ_SIMD_FN (cq_simd_ssim_box8) (const CqSimdSsimBand * b, uint64_t * sse_out)
{
  const unsigned w = b->width, nw = w - 7;
  const size_t cs = (size_t) w + 64;
  int32_t *ca = b->scratch;
  double *vals = (double *) (ca + 4 * cs);
  uint64_t sse = 0;
  double sum = 0.0;
  unsigned t, y, x, r, nr;

#define OWNED(y) ((y) >= b->sse_y0 && (y) < b->sse_y1)
  if (b->t0 < b->t1) {
    memset (ca, 0, 4 * cs * sizeof (int32_t));
    for (y = b->t0; y < b->t0 + 8; y++)
      box8_cols (b, ca, cs, y, NULL, OWNED (y) ? &sse : NULL);
    for (t = b->t0; t < b->t1; t += nr) {
      nr = b->t1 - t < R ? b->t1 - t : R;
      for (r = 0; r < nr; r++) {
        unsigned out = t + r;

        box8_row (b, ca, cs, vals + r * cs);
        if (t + r + 1 < b->t1)
          box8_cols (b, ca, cs, t + r + 8, &out,
              OWNED (t + r + 8) ? &sse : NULL);
      }
      /* each row left to right, as the plain C; the rows side by side */
      if (nr == R) {
        double acc[R] = { 0.0 };

        for (x = 0; x < nw; x++)
          for (r = 0; r < R; r++)
            acc[r] += vals[r * cs + x];
        for (r = 0; r < R; r++)
          sum += acc[r];
      } else {
        for (r = 0; r < nr; r++) {
          double row = 0.0;

          for (x = 0; x < nw; x++)
            row += vals[r * cs + x];
          sum += row;
        }
      }
    }
  }
  /* rows owned but not read (an empty band) */
  for (y = b->sse_y0; y < b->sse_y1; y++)
    if (!(b->t0 < b->t1 && y >= b->t0 && y < b->t1 + 7))
      sse += sse_rows (b, y, y + 1);
#undef OWNED
  *sse_out = sse;
  return sum;
}
