/* cudaquality compute library: SSIM windows of 8-bit planes, vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). The samples
 * are read straight from the frames (no unpacking), a lane per column:
 *  - ffmpeg: the 4x4 block sums of a block row (samples in 16-bit lanes,
 *    neighbouring columns summed by vpmaddwd, then pairs of those by one
 *    shuffle-and-add step), then the windows of a block row pair, V
 *    windows at once;
 *  - box8: the 8-row column sums slid down the band as the plain C does
 *    (Σa and Σb packed in one lane, the squares and products of that lane
 *    by vpmaddwd), V windows of a row at once; one loop a window row
 *    also updates the column sums (AVX2: a window's sums from four shifted
 *    loads of sums of 2 neighbouring columns, the loop pipelined a step;
 *    AVX-512: from registers; see their sections below).
 * The sums are exact 32-bit integers (8-bit samples: every term of the
 * expressions below stays under 2^30), converted and combined exactly as in
 * cq-ssim-local.h. ffmpeg adds each row's local values left to right into a
 * double, box8 into the row's running sums of cq_ssim_box8_row, and both
 * add the rows in order, as the plain C does.
 * Σ (a - b)² comes from the same sums (Σa² + Σb² - 2Σab per column).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-ssim-local.h"

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
  /* 2 V columns a step in 16-bit lanes: vpmaddwd of neighbouring columns
   * gives each pair of columns its a² + b² and ab, and of the 4 rows'
   * summed samples with ones its Σa and Σb; pair_sums then adds the pairs
   * into blocks (V / 2 a quantity) */
  for (x = 0; x + 2 * V <= 4 * w4; x += 2 * V) {
    const vs ones = (vs) splat (0x00010001);
    vs sa = { }, sb = { };
    vi css = { }, cab = { }, q[2];
    int32_t t[2 * V];

    for (j = 0; j < 4; j++) {
      const vs a = ld8w (ra[j] + x), c = ld8w (rb[j] + x);

      sa += a;
      sb += c;
      css += dot16 (a, a) + dot16 (c, c);
      cab += dot16 (a, c);
    }
    if (sse)
      acc += (vu) (css - 2 * cab);
    /* (Σa of blocks, Σb ...), (Σa²+b² ..., Σab ...) */
    q[0] = pair_sums (dot16 (sa, ones), dot16 (sb, ones));
    q[1] = pair_sums (css, cab);
    memcpy (t, q, sizeof (t));
    memcpy (s1 + x / 4, t, 2 * V);
    memcpy (s1 + qs + x / 4, t + V / 2, 2 * V);
    memcpy (s1 + 2 * qs + x / 4, t + V, 2 * V);
    memcpy (s1 + 3 * qs + x / 4, t + 3 * V / 2, 2 * V);
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

/* The local values of windows [bx, bx + V) between block rows top and
 * bottom, as doubles in two halves. */
static inline void
ffmpeg_windows (const int32_t * top, const int32_t * bottom, size_t qs,
    unsigned bx, vi c1, vi c2, vd * lo, vd * hi)
{
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

  *lo = cvtf_lo (f);
  *hi = cvtf_hi (f);
}

/* Windows [bx, w4 - 1) between block rows top and bottom, plain. */
static inline void
ffmpeg_windows_tail (const int32_t * top, const int32_t * bottom, size_t qs,
    unsigned bx, unsigned w4, int64_t c1, int64_t c2, double *row)
{
  for (; bx + 1 < w4; bx++) {
    int64_t s[4];
    unsigned k;

    for (k = 0; k < 4; k++)
      s[k] = (int64_t) top[k * qs + bx] + top[k * qs + bx + 1] +
          bottom[k * qs + bx] + bottom[k * qs + bx + 1];
    *row += cq_ssim_ffmpeg_local (s[0], s[1], s[2], s[3], c1, c2);
  }
}

double
CQ_SIMD_FN (cq_simd_ssim_ffmpeg) (const CqSimdSsimBand * b, uint64_t * sse_out)
{
  const unsigned w4 = b->width / 4;
  const size_t qs = (size_t) w4 + V;
  const vi c1 = splat ((int32_t) b->c1), c2 = splat ((int32_t) b->c2);
  int32_t *rows[3], *tmp;
  uint64_t sse = 0;
  double sum = 0.0;
  unsigned by, bx, y, i;

  rows[0] = b->scratch;
  rows[1] = rows[0] + 4 * qs;
  rows[2] = rows[1] + 4 * qs;
#define OWNED(by) (4 * (by) >= b->sse_y0 && 4 * (by) + 4 <= b->sse_y1)
  if (b->t0 < b->t1)
    ffmpeg_block_row (b, b->t0, w4, rows[0], qs, OWNED (b->t0) ? &sse : NULL);
  /* two window rows at once: two chains of additions, each in its order */
  for (by = b->t0; by + 1 < b->t1; by += 2) {
    double row0 = 0.0, row1 = 0.0;

    ffmpeg_block_row (b, by + 1, w4, rows[1], qs, OWNED (by + 1) ? &sse : NULL);
    ffmpeg_block_row (b, by + 2, w4, rows[2], qs, OWNED (by + 2) ? &sse : NULL);
    for (bx = 0; bx + V < w4; bx += V) {
      vd l0, h0, l1, h1;

      ffmpeg_windows (rows[0], rows[1], qs, bx, c1, c2, &l0, &h0);
      ffmpeg_windows (rows[1], rows[2], qs, bx, c1, c2, &l1, &h1);
      for (i = 0; i < V / 2; i++) {
        row0 += l0[i];
        row1 += l1[i];
      }
      for (i = 0; i < V / 2; i++) {
        row0 += h0[i];
        row1 += h1[i];
      }
    }
    ffmpeg_windows_tail (rows[0], rows[1], qs, bx, w4, b->c1, b->c2, &row0);
    ffmpeg_windows_tail (rows[1], rows[2], qs, bx, w4, b->c1, b->c2, &row1);
    sum += row0;
    sum += row1;
    tmp = rows[0];
    rows[0] = rows[2];
    rows[2] = tmp;
  }
  if (by < b->t1) {
    double row = 0.0;

    ffmpeg_block_row (b, by + 1, w4, rows[1], qs, OWNED (by + 1) ? &sse : NULL);
    for (bx = 0; bx + V < w4; bx += V) {
      vd lo, hi;

      ffmpeg_windows (rows[0], rows[1], qs, bx, c1, c2, &lo, &hi);
      for (i = 0; i < V / 2; i++)
        row += lo[i];
      for (i = 0; i < V / 2; i++)
        row += hi[i];
    }
    ffmpeg_windows_tail (rows[0], rows[1], qs, bx, w4, b->c1, b->c2, &row);
    sum += row;
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

/* ---- box8: one pass over the columns a window row, both sets ---- */

#define B8_INLINE static inline __attribute__ ((always_inline))

typedef struct
{
  int32_t *c[3];                /* Σa + 65536 Σb, 64 Σ (a² + b²), 128 Σ ab
                                 * of the row's windows, replaced by the
                                 * next row's */
  int32_t *ring[3];             /* the same terms of row out, then of row
                                 * in */
  int32_t *h2[3];               /* AVX2: the row's sums of columns x and
                                 * x + 1 (AVX-512 keeps them in registers) */
  const uint8_t *ia, *ib;       /* row in (ref, dist) */
  unsigned w, nw;
  int sse;                      /* AVX-512: whether Σ (a - b)² of the window
                                 * row's 8 image rows is taken (AVX2's strip
                                 * walk takes it itself) */
  double k1, k2;
} B8Pass;

#if V == 16
/* Where a band's arrays are in its scratch: the column sums, ring slot
 * 0's terms (slot r's ring_stride ints further on), the sums of 2
 * columns, a row of values. */
typedef struct
{
  int32_t *c[3], *ring[3], *h2[3];
  size_t ring_stride;
  double *vals;
} B8Layout;

/* the band's arrays (both sets), each in its slot of the scratch
 * (CQ_CPU_SIMD_BOX8_SLOT ints, from a 4 KB boundary) and shifted by its
 * role r (c: 0 ... 2, h2: 3 ... 5 (AVX2's), the ring's: 6 ... 8, the
 * values: 9) times 448 bytes: the arrays a pass touches lie 112 columns
 * apart modulo 4 KB. Packed one after the other (31 KB apart, -256 bytes
 * modulo 4 KB), AVX2's loads from one array waited on recent stores to
 * another (4K aliasing): 6 % of the time. */
static void
b8_layout (const CqSimdSsimBand * b, B8Layout * l)
{
  const size_t slot = CQ_CPU_SIMD_BOX8_SLOT (b->width);
  int32_t *base = (int32_t *) (((uintptr_t) b->scratch + 4095) &
      ~(uintptr_t) 4095);
  unsigned k;

#define B8_ARRAY(j, r) (base + (j) * slot + (r) * 112 % 1024)
  for (k = 0; k < 3; k++) {
    l->c[k] = B8_ARRAY (k, k);
    l->h2[k] = B8_ARRAY (3 + k, 3 + k);
    l->ring[k] = B8_ARRAY (6 + k, 6 + k);
  }
  l->ring_stride = 3 * slot;
  l->vals = (double *) B8_ARRAY (30, 9);
#undef B8_ARRAY
}

/* ---- box8, AVX-512: one pass over the columns a window row ----
 *
 * Each pass reads the column sums of its window row from memory once and,
 * in the same loop, (1) writes the next row's column sums (row in added;
 * row out, whose terms a ring of 8 rows keeps, removed) and (2) evaluates
 * the row's windows into a row of values. The column update shares the
 * vector ports while the divider works on the windows' divisions (see
 * docs/benchmarks.md, "box8 on the CPU, ninth session"). The row's values
 * then go into its running sums of cq_ssim_box8_row, a vector an addition
 * (before, 8 rows were transposed to be added left to right side by side:
 * 6 shuffles and 2 loads more a step).
 *
 * The conversions go through 64-bit lanes: a value v of the even 32-bit
 * lanes, zero-extended, or of the odd lanes, as v · 2^32 (low half zero,
 * sign in place), converts exactly with vcvtqq2pd (one µop, either vector
 * port; vcvtdq2pd from a half register takes two, and the upper half its
 * extraction). The odd lanes' v · 2^32 · 2^-32 + k is one FMA: its product is
 * exact (a power of two), so it rounds v + k once, as the addition
 * (double) v + k of cq_ssim_box8_local does. Each window's value comes from
 * the same four exact conversions, two additions, two multiplies and one
 * division. A 16-window vector is stored as its 8 even windows then its 8
 * odd ones, each a vector of running sums. */

typedef __m512i zi;
typedef __m512d zd;

#define B8_EVEN ((__mmask16) 0x5555)
#define B8_ODD ((__mmask16) 0xaaaa)

/* a + 65536 b of the 16 columns at a and b (only the first of m's bits
 * when masked: the others 0) */
B8_INLINE zi
b8_pack (const uint8_t * a, const uint8_t * b, __mmask16 m, int masked)
{
  zi va, vb;

  if (masked) {
    va = _mm512_cvtepu8_epi32 (_mm_maskz_loadu_epi8 (m, a));
    vb = _mm512_cvtepu8_epi32 (_mm_maskz_loadu_epi8 (m, b));
  } else {
    va = _mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) a));
    vb = _mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) b));
  }
  return _mm512_add_epi32 (va, _mm512_slli_epi32 (vb, 16));
}

/* the terms of the columns at a, b: a + 65536 b, 64 (a² + b²) and
 * 64 · 2ab (vpmaddwd of (a, b) and (64 a, 64 b) or (64 b, 64 a): the
 * window's 64 Σ (a² + b²) and 128 Σ ab stay below 2^30) */
B8_INLINE void
b8_terms (const uint8_t * a, const uint8_t * b, __mmask16 m, int masked,
    zi * t)
{
  zi d = b8_pack (a, b, m, masked), d64 = _mm512_slli_epi32 (d, 6);

  t[0] = d;
  t[1] = _mm512_madd_epi16 (d, d64);
  t[2] = _mm512_madd_epi16 (d, _mm512_rol_epi32 (d64, 16));
}

/* columns [X, X + 16): the next row's sums (row in added, row out,
 * whose terms come from the ring and are replaced there by row in's,
 * removed); their sums of 2 neighbours; Σ (a - b)² of the 8 rows of the
 * window row (from its sums) to the lanes of *sse if p->sse */
B8_INLINE void
b8_update (const B8Pass * p, size_t X, __mmask16 m, int masked, zi * h2,
    zi * sse)
{
  zi t[3], o[3], old[3];
  unsigned k;

  b8_terms (p->ia + X, p->ib + X, m, masked, t);
  for (k = 0; k < 3; k++) {
    int32_t *c = p->c[k] + X, *g = p->ring[k] + X;
    zi h;

    old[k] = _mm512_load_si512 (c);
    h = _mm512_add_epi32 (old[k], _mm512_loadu_si512 (c + 1));
    o[k] = _mm512_load_si512 (g);
    _mm512_store_si512 (g, t[k]);
    _mm512_store_si512 (c, _mm512_sub_epi32 (_mm512_add_epi32 (old[k],
                t[k]), o[k]));
    h2[k] = h;
  }
  /* Σ (a² + b² - 2ab) */
  if (p->sse)
    *sse = _mm512_add_epi32 (*sse,
        _mm512_srli_epi32 (_mm512_sub_epi32 (old[1], old[2]), 6));
}

/* the integer terms of 16 windows of sums sp (Σa + 65536 Σb), sss
 * (64 Σ (a² + b²)) and s2ab (64 Σ 2ab), per parity: 2p, 2 (64 sab - p),
 * q and 64 sss - q (cq_ssim_box8_local's), each in the 64-bit lanes its
 * conversion takes (t[0 ... 3] even windows, t[4 ... 7] odd ones) */
B8_INLINE void
b8_window_terms (zi sp, zi sss, zi s2ab, zi * t)
{
  zi sw = _mm512_rol_epi32 (sp, 16);
  /* 2p = 2 Σa Σb and q = Σa² + Σb² by vpmaddwd, per parity */
  zi in1e = _mm512_maskz_madd_epi16 (B8_EVEN, sp, sw);
  zi in1o = _mm512_maskz_madd_epi16 (B8_ODD, sp, sw);
  zi qe = _mm512_maskz_madd_epi16 (B8_EVEN, sp, sp);
  zi qo = _mm512_maskz_madd_epi16 (B8_ODD, sp, sp);

  t[0] = in1e;
  t[4] = in1o;
  /* 2 (64 sab - p) (signed: the even lanes moved up), 64 sss - q (>= 0) */
  t[1] = _mm512_slli_epi64 (_mm512_sub_epi32 (s2ab, in1e), 32);
  t[5] = _mm512_maskz_sub_epi32 (B8_ODD, s2ab, in1o);
  t[2] = qe;
  t[6] = qo;
  t[3] = _mm512_maskz_sub_epi32 (B8_EVEN, sss, qe);
  t[7] = _mm512_maskz_sub_epi32 (B8_ODD, sss, qo);
}

/* the 16 windows' values from their terms: cq_ssim_box8_local, even
 * windows to out, odd ones to out + 8 */
B8_INLINE void
b8_window_values (const zi * t, zd k1, zd k2, zd s32, double *out)
{
  zd n1e = _mm512_add_pd (_mm512_cvtepi64_pd (t[0]), k1);
  zd n1o = _mm512_fmadd_pd (_mm512_cvtepi64_pd (t[4]), s32, k1);
  zd n2e = _mm512_fmadd_pd (_mm512_cvtepi64_pd (t[1]), s32, k2);
  zd n2o = _mm512_fmadd_pd (_mm512_cvtepi64_pd (t[5]), s32, k2);
  zd d1e = _mm512_add_pd (_mm512_cvtepi64_pd (t[2]), k1);
  zd d1o = _mm512_fmadd_pd (_mm512_cvtepi64_pd (t[6]), s32, k1);
  zd d2e = _mm512_add_pd (_mm512_cvtepi64_pd (t[3]), k2);
  zd d2o = _mm512_fmadd_pd (_mm512_cvtepi64_pd (t[7]), s32, k2);

  _mm512_store_pd (out, _mm512_div_pd (_mm512_mul_pd (n1e, n2e),
          _mm512_mul_pd (d1e, d2e)));
  _mm512_store_pd (out + 8, _mm512_div_pd (_mm512_mul_pd (n1o, n2o),
          _mm512_mul_pd (d1o, d2o)));
}

/* the value of a row of nw windows stored by b8_window_values: 16 windows (8
 * even, 8 odd) at a time into phases 16 g ... 16 g + 15 of
 * cq_ssim_box8_row, g going round; a chain of additions a vector */
static double
b8_row_value (const double *vals, unsigned nw)
{
#define B8_ACCS (CQ_SSIM_BOX8_PHASES / 8)
  zd acc[B8_ACCS];
  double phase[CQ_SSIM_BOX8_PHASES];
  unsigned x, k, g;

  for (k = 0; k < B8_ACCS; k++)
    acc[k] = _mm512_setzero_pd ();
  for (x = 0; x + CQ_SSIM_BOX8_PHASES <= nw; x += CQ_SSIM_BOX8_PHASES)
    for (k = 0; k < B8_ACCS; k++)
      acc[k] = _mm512_add_pd (acc[k], _mm512_load_pd (vals + x + 8 * k));
  for (; x < nw; x += 16) {
    /* windows x + 2 i (even) and x + 2 i + 1 (odd) below nw */
    const unsigned n = nw - x >= 16 ? 16 : nw - x;

    g = x % CQ_SSIM_BOX8_PHASES / 8;
    acc[g] = _mm512_mask_add_pd (acc[g], (__mmask8) ((1u << (n + 1) / 2) - 1),
        acc[g], _mm512_load_pd (vals + x));
    acc[g + 1] = _mm512_mask_add_pd (acc[g + 1],
        (__mmask8) ((1u << n / 2) - 1), acc[g + 1],
        _mm512_load_pd (vals + x + 8));
  }
  for (g = 0; g < B8_ACCS / 2; g++)
    for (k = 0; k < 8; k++) {
      phase[16 * g + 2 * k] = acc[2 * g][k];
      phase[16 * g + 2 * k + 1] = acc[2 * g + 1][k];
    }
#undef B8_ACCS
  return cq_ssim_box8_row (phase);
}

/* the windows [x, x + 16) from their terms t; then the sums of 4 at
 * x + 32 from those of 2 at x + 32 (h2) and x + 48 (h2n), the streams
 * moved on a step, and the terms of the windows [x + 16, x + 32) from the
 * sums of 4 at x + 16 and x + 32. The terms are formed a step ahead of
 * their values, so that the integer work of one step runs beside the
 * doubles and divisions of the one before. */
/* the terms t of the 16 windows whose sums of 4 neighbours are h4[0 ... 2]
 * (at x) and h4[3 ... 5] (at x + 16) */
B8_INLINE void
b8_terms_from4 (const zi * h4, zi * t)
{
  zi w8[3];
  unsigned k;

  for (k = 0; k < 3; k++)
    w8[k] = _mm512_add_epi32 (h4[k], _mm512_alignr_epi32 (h4[3 + k], h4[k],
            4));
  b8_window_terms (w8[0], w8[1], w8[2], t);
}

B8_INLINE void
b8_step (unsigned x, const zi * h2n, zi * h2, zi * h4, zi * t, zd k1, zd k2,
    zd s32, double *vals)
{
  unsigned k;

  b8_window_values (t, k1, k2, s32, vals + x);
  for (k = 0; k < 3; k++) {
    h4[k] = h4[3 + k];
    h4[3 + k] = _mm512_add_epi32 (h2[k], _mm512_alignr_epi32 (h2n[k], h2[k],
            2));
    h2[k] = h2n[k];
  }
  b8_terms_from4 (h4, t);
}

/* the first n bits */
static inline __mmask16
b8_mask (unsigned X, unsigned w)
{
  return X >= w ? 0 : w - X >= 16 ? 0xffff : (__mmask16) ((1u << (w - X)) - 1);
}

/* the sums of 2 neighbours at X, the column sums updated there if X < w
 * (beyond: zeros) */
B8_INLINE void
b8_h2 (const B8Pass * p, size_t X, zi * h2, zi * sse)
{
  unsigned k;

  if (X < p->w)
    b8_update (p, X, b8_mask (X, p->w), 1, h2, sse);
  else
    for (k = 0; k < 3; k++)
      h2[k] = _mm512_add_epi32 (_mm512_load_si512 (p->c[k] + X),
          _mm512_loadu_si512 (p->c[k] + X + 1));
}

/* one window row: its values to vals (b8_window_values' order), the next
 * row's column sums, Σ (a - b)² of its 8 image rows to the lanes of *sse
 * if p->sse.
 *
 * The sums of 8 neighbours come in three steps: of 2 by an unaligned load
 * of the column sums (updated in place: column X + 16 is still this row's),
 * 48 columns ahead of the windows, then of 4 (32 ahead) and 8 by shifts
 * (valignd) of those kept in registers: a step's windows start from the
 * terms the step before left in registers. */
B8_INLINE void
b8_row (const B8Pass * pass, double *vals, zi * sse)
{
  const B8Pass pc = *pass, *p = &pc;
  const zd k1 = _mm512_set1_pd (p->k1), k2 = _mm512_set1_pd (p->k2);
  const zd s32 = _mm512_set1_pd (0x1p-32);
  const unsigned w = p->w, nw = p->nw;
  zi h2[3], h4[6], h2n[3], h20[3], t[8];
  unsigned x, k;

  b8_h2 (p, 0, h20, sse);
  b8_h2 (p, 16, h2, sse);
  b8_h2 (p, 32, h2n, sse);
  for (k = 0; k < 3; k++) {
    h4[k] = _mm512_add_epi32 (h20[k], _mm512_alignr_epi32 (h2[k], h20[k], 2));
    h4[3 + k] = _mm512_add_epi32 (h2[k], _mm512_alignr_epi32 (h2n[k], h2[k],
            2));
    h2[k] = h2n[k];
  }
  b8_terms_from4 (h4, t);
  /* two steps a turn: the streams change registers without copies */
  for (x = 0; x + 16 < nw && x + 80 <= w; x += 32) {
    b8_update (p, x + 48, 0xffff, 0, h2n, sse);
    b8_step (x, h2n, h2, h4, t, k1, k2, s32, vals);
    b8_update (p, x + 64, 0xffff, 0, h2n, sse);
    b8_step (x + 16, h2n, h2, h4, t, k1, k2, s32, vals);
  }
  for (; x < nw; x += 16) {
    b8_h2 (p, x + 48, h2n, sse);
    b8_step (x, h2n, h2, h4, t, k1, k2, s32, vals);
  }
}

/* b8_row, Σ (a - b)² of the row's 8 image rows added to *sse_out if
 * p->sse; the row's value */
static double
b8_pass (const B8Pass * p, double *vals, uint64_t * sse_out)
{
  zi sse = _mm512_setzero_si512 ();
  uint32_t lanes[16];
  unsigned k;

  b8_row (p, vals, &sse);
  if (p->sse) {
    _mm512_storeu_si512 (lanes, sse);
    for (k = 0; k < 16; k++)
      *sse_out += lanes[k];
  }
  return b8_row_value (vals, p->nw);
}

/* row y added to the column sums, its terms to its ring slot */
static void
b8_add_row (const CqSimdSsimBand * b, const B8Layout * l, unsigned y)
{
  const uint8_t *ra = b->ref + (size_t) y * b->ref_stride;
  const uint8_t *rb = b->dist + (size_t) y * b->dist_stride;
  unsigned X, k;

  for (X = 0; X < b->width; X += 16) {
    zi t[3];

    b8_terms (ra + X, rb + X, b8_mask (X, b->width), 1, t);
    for (k = 0; k < 3; k++) {
      int32_t *q = l->c[k] + X;

      _mm512_store_si512 (l->ring[k] + y % 8 * l->ring_stride + X, t[k]);
      _mm512_store_si512 (q, _mm512_add_epi32 (_mm512_load_si512 (q), t[k]));
    }
  }
}

/* box8's band: the column sums of its first 8 rows, then a pass a window
 * row, their values added in row order */
double
CQ_SIMD_FN (cq_simd_ssim_box8) (const CqSimdSsimBand * b, uint64_t * sse_out)
{
  B8Layout l;
  uint64_t sse = 0;
  double sum = 0.0;
  /* Σ (a - b)² comes from the column sums of window rows t0, t0 + 8, ...
   * while their 8 image rows are owned: rows [sse_y0, se) */
  unsigned t, y, k, se = b->sse_y0;

  b8_layout (b, &l);
  if (b->t0 < b->t1) {
    /* the passes read the sums up to 57 columns past the plane (AVX-512's
     * at the end of a row) */
    for (k = 0; k < 3; k++)
      memset (l.c[k], 0, ((size_t) b->width + 64) * sizeof (int32_t));
    for (y = b->t0; y < b->t0 + 8; y++)
      b8_add_row (b, &l, y);
    for (t = b->t0; t < b->t1; t++) {
      /* the last row moves no row: in = out */
      const unsigned yi = t + 1 >= b->t1 ? t : t + 8;
      const size_t g = t % 8 * l.ring_stride;
      const int take = (t - b->t0) % 8 == 0 && t == se && t + 8 <= b->sse_y1;
      B8Pass p = { {l.c[0], l.c[1], l.c[2]},
      {l.ring[0] + g, l.ring[1] + g, l.ring[2] + g},
      {l.h2[0], l.h2[1], l.h2[2]},
      b->ref + (size_t) yi * b->ref_stride,
      b->dist + (size_t) yi * b->dist_stride, b->width, b->width - 7, take,
      b->k1, b->k2
      };

      sum += b8_pass (&p, l.vals, &sse);
      if (take)
        se += 8;
    }
  }
  /* owned rows after the last 8 taken */
  sse += sse_rows (b, se, b->sse_y1);
  *sse_out = sse;
  return sum;
}

#else /* V == 8 */

/* ---- box8, AVX2: one pass a window row of a strip ----
 *
 * (The strips: cq_simd_ssim_box8 below.) A strip's pass over a window row
 * reads its column sums once and replaces them in place by the next
 * row's (row in added, row out's terms taken back from a ring of 8 rows),
 * and evaluates the row's windows in the same loop, B8_LAG columns behind,
 * so that the update's µops run beside the divisions. AVX2 has no shift
 * across its two 128-bit halves in one µop, so the sums of 2 neighbouring
 * columns go through a row in memory (h2, written by the update) and a
 * window's 8 columns are four of them, loaded unaligned; the lag keeps
 * those loads clear of stores still in flight. The window expression is
 * cq_ssim_box8_local's, 4 windows a vector of doubles (vcvtdq2pd from each
 * half). The values of a strip's row go into the row's running sums
 * (cq_ssim_box8_row), carried from strip to strip. */

#define B8_LAG 32

/* a + 65536 b, 64 (a² + b²) and 128 ab of the 8 columns at a, b
 * (vpmaddwd of (a, b) with (64 a, 64 b) and with (128 b, 0); a window's
 * sums of them stay below 2^30) */
static inline void
b8_terms (const uint8_t * a, const uint8_t * b, vi * t)
{
  vi d = ld8 (a) + (ld8 (b) << 16), d64 = d << 6;

  t[0] = d;
  t[1] = madd16 (d, d64);
  t[2] = madd16 (d, (vi) ((vu) d64 >> 15));
}

/* the same for one column */
static inline void
b8_terms1 (const uint8_t * a, const uint8_t * b, int32_t * t)
{
  t[0] = a[0] + (b[0] << 16);
  t[1] = 64 * (a[0] * a[0] + b[0] * b[0]);
  t[2] = 128 * a[0] * b[0];
}

/* columns [X, X + 8): the next row's sums, the row's sums of 2 neighbours
 * to h2 */
B8_INLINE void
b8_update (const B8Pass * p, size_t X)
{
  vi t[3];
  unsigned k;

  b8_terms (p->ia + X, p->ib + X, t);
  for (k = 0; k < 3; k++) {
    int32_t *c = p->c[k] + X, *g = p->ring[k] + X;
    vi o = ld32 (g), old = ld32 (c);

    st32 (p->h2[k] + X, old + ld32 (c + 1));
    st32 (g, t[k]);
    st32 (c, old + t[k] - o);
  }
}

/* the same for column X alone (the last columns of a row) */
static inline void
b8_update1 (const B8Pass * p, size_t X)
{
  int32_t t[3];
  unsigned k;

  b8_terms1 (p->ia + X, p->ib + X, t);
  for (k = 0; k < 3; k++) {
    int32_t *c = p->c[k] + X, *g = p->ring[k] + X;

    p->h2[k][X] = c[0] + c[1];
    c[0] += t[k] - g[0];
    g[0] = t[k];
  }
}

/* the 8 windows' sums at x, from the sums of 2 neighbours */
B8_INLINE void
b8_sums (const B8Pass * p, size_t x, vi * w)
{
  unsigned k;

  for (k = 0; k < 3; k++) {
    const int32_t *h = p->h2[k] + x;

    w[k] = (ld32 (h) + ld32 (h + 2)) + (ld32 (h + 4) + ld32 (h + 6));
  }
}

/* their integer terms (cq_ssim_box8_local's): 2 Σa Σb, 2 (64 Σab - Σa Σb),
 * Σa² + Σb², 64 Σ (a² + b²) - Σa² - Σb²; Σa Σb and Σa² + Σb² by vpmaddwd
 * of the halves of w[0] */
B8_INLINE void
b8_window_terms (const vi * w, vi * t)
{
  const vi pp = madd16 (w[0], (vi) ((vu) w[0] >> 16));
  const vi q = madd16 (w[0], w[0]);

  t[0] = pp + pp;
  t[1] = w[2] - t[0];
  t[2] = q;
  t[3] = w[1] - q;
}

/* the windows' values from their terms, to vals (4 windows a vector of
 * doubles, vcvtdq2pd from each half) */
B8_INLINE void
b8_values (const vi * t, vd k1, vd k2, double *vals)
{
  vd n1, n2, d1, d2, v;

  n1 = cvt_lo (t[0]) + k1;
  n2 = cvt_lo (t[1]) + k2;
  d1 = cvt_lo (t[2]) + k1;
  d2 = cvt_lo (t[3]) + k2;
  v = (n1 * n2) / (d1 * d2);
  memcpy (vals, &v, sizeof (v));
  n1 = cvt_hi (t[0]) + k1;
  n2 = cvt_hi (t[1]) + k2;
  d1 = cvt_hi (t[2]) + k1;
  d2 = cvt_hi (t[3]) + k2;
  v = (n1 * n2) / (d1 * d2);
  memcpy (vals + V / 2, &v, sizeof (v));
}

/* the 8 windows at x from the sums of 2 neighbours, to vals + x */
static inline void
b8_windows (const B8Pass * p, size_t x, vd k1, vd k2, double *vals)
{
  vi w[3], t[4];

  b8_sums (p, x, w);
  b8_window_terms (w, t);
  b8_values (t, k1, k2, vals + x);
}

/* the window at x, alone */
static inline double
b8_window1 (const B8Pass * p, size_t x)
{
  int64_t w[3];
  unsigned k;

  for (k = 0; k < 3; k++) {
    const int32_t *h = p->h2[k] + x;

    w[k] = (int64_t) h[0] + h[2] + h[4] + h[6];
  }
  return cq_ssim_box8_local (w[0] & 0xffff, w[0] >> 16, w[1] / 64,
      w[2] / 128, p->k1, p->k2);
}

/* nw windows' values in vals added on to their row's running sums (window
 * x into phase x % 32, as cq_ssim_box8_row adds them; the strip starts at
 * a multiple of 32), a vector of 4 a chain */
static void
b8_row_phases (const double *vals, unsigned nw, double *phase)
{
  vd acc[CQ_SSIM_BOX8_PHASES / 4];
  unsigned x, k;

  for (k = 0; k < CQ_SSIM_BOX8_PHASES / 4; k++)
    acc[k] = ldd (phase + 4 * k);
  for (x = 0; x + CQ_SSIM_BOX8_PHASES <= nw; x += CQ_SSIM_BOX8_PHASES)
    for (k = 0; k < CQ_SSIM_BOX8_PHASES / 4; k++)
      acc[k] += ldd (vals + x + 4 * k);
  for (k = 0; k < CQ_SSIM_BOX8_PHASES / 4; k++)
    stdd (phase + 4 * k, acc[k]);
  for (; x < nw; x++)
    phase[x % CQ_SSIM_BOX8_PHASES] += vals[x];
}

/* the windows [0, xe), whole vectors, each step with the update of a whole
 * vector B8_LAG columns ahead (the updates of [0, B8_LAG) done). The loop
 * is pipelined by hand: a step forms the next windows' sums and terms
 * while the doubles of its own are worked, which the out-of-order window
 * of the Zen 3 host did not reach on its own (1080p, one thread: 3.25 ->
 * 2.88 ms a pair, docs/benchmarks.md, fortieth session). The last step's
 * sums read columns the updates have already written, unused. */
B8_INLINE void
b8_steady (const B8Pass * p, size_t xe, vd k1, vd k2, double *vals)
{
  vi w[3], t[4];
  size_t x;

  b8_sums (p, 0, w);
  b8_window_terms (w, t);
  for (x = 0; x < xe; x += V) {
    b8_update (p, x + B8_LAG);
    b8_sums (p, x + V, w);
    b8_values (t, k1, k2, vals + x);
    b8_window_terms (w, t);
  }
}

/* one window row of a strip: its values added on to the row's running
 * sums phase; the next row's column sums.
 *
 * The pass works on a copy of *pass, which the arrays' stores cannot alias,
 * and its steady part is a loop of its own: with the row's ends in the same
 * loop, GCC kept the arrays' pointers on the stack and reloaded them a
 * step (about 40 scalar instructions a step on the vector ports' ALUs,
 * 10-13 % of the time). */
static void
b8_pass (const B8Pass * pass, double *vals, double *phase)
{
  const B8Pass pc = *pass, *p = &pc;
  const vd k1 = (vd) { } + p->k1, k2 = (vd) { } + p->k2;
  const unsigned w = p->w, nw = p->nw;
  unsigned x = 0, X = 0;

  if (nw >= V && w >= B8_LAG + V) {
    const unsigned last = nw - V < w - B8_LAG - V ? nw - V : w - B8_LAG - V;

    for (; X < B8_LAG; X += V)
      b8_update (p, X);
    x = (last / V + 1) * V;
    b8_steady (p, x, k1, k2, vals);
    X = x + B8_LAG;
  }
  for (; x + V <= nw; x += V) {
    const unsigned end = x + B8_LAG + V < w ? x + B8_LAG + V : w;

    for (; X + V <= end; X += V)
      b8_update (p, X);
    for (; X < end && end == w; X++)
      b8_update1 (p, X);
    b8_windows (p, x, k1, k2, vals);
  }
  for (; X + V <= w; X += V)
    b8_update (p, X);
  for (; X < w; X++)
    b8_update1 (p, X);
  for (; x < nw; x++)
    vals[x] = b8_window1 (p, x);
  b8_row_phases (vals, nw, phase);
}

/* Σ (a - b)² of a window row's 8 image rows over its first n columns, from
 * their column sums 64 Σ (a² + b²) and 128 Σ ab */
static uint64_t
b8_cols_sse (const int32_t * c1, const int32_t * c2, unsigned n)
{
  vu acc = { };
  uint64_t sum = 0;
  unsigned X;

  for (X = 0; X + V <= n; X += V)
    acc += (vu) (ld32 (c1 + X) - ld32 (c2 + X)) >> 6;
  for (; X < n; X++)
    sum += (uint32_t) (c1[X] - c2[X]) >> 6;
  return sum + hsum_u (acc);
}

/* columns [x0, x0 + n) of row y added to the column sums, their terms to
 * the row's ring slot (the arrays' column 0 is x0) */
static void
b8_add_row (const CqSimdSsimBand * b, int32_t * const *c,
    int32_t * const *ring, size_t ring_stride, unsigned x0, unsigned n,
    unsigned y)
{
  const uint8_t *ra = b->ref + (size_t) y * b->ref_stride + x0;
  const uint8_t *rb = b->dist + (size_t) y * b->dist_stride + x0;
  const size_t slot = y % 8 * ring_stride;
  unsigned X, k;

  for (X = 0; X + V <= n; X += V) {
    vi t[3];

    b8_terms (ra + X, rb + X, t);
    for (k = 0; k < 3; k++) {
      st32 (ring[k] + slot + X, t[k]);
      st32 (c[k] + X, ld32 (c[k] + X) + t[k]);
    }
  }
  for (; X < n; X++) {
    int32_t t[3];

    b8_terms1 (ra + X, rb + X, t);
    for (k = 0; k < 3; k++) {
      ring[k][slot + X] = t[k];
      c[k][X] += t[k];
    }
  }
}

/* ---- box8, AVX2: the band in strips ----
 *
 * The band goes in strips of CQ_CPU_SIMD_BOX8_STRIP windows, each walked
 * down the band with its arrays (column sums, sums of 2, ring of 8 rows'
 * terms, values: rows of CQ_CPU_SIMD_BOX8_STRIP_COLS) near the core; a
 * strip's pass updates 8 columns past its windows (whole vectors: the 7
 * it needs and one more) where the plane has them. The rows a strip reads
 * are fetched B8_AHEAD passes ahead: down a strip the hardware prefetchers
 * do not follow them. Each window row's running sums are carried from
 * strip to strip, so that its windows are added in the plain C's order,
 * and Σ (a - b)² is taken from the column sums of the columns a strip owns
 * (its windows' first columns; the last strip: to the plane's edge). On
 * Zen 3, 5-10 % less time than passes over whole rows (docs/benchmarks.md,
 * twenty-fourth session). */
#define B8_STRIP CQ_CPU_SIMD_BOX8_STRIP
#define B8_STRIP_COLS CQ_CPU_SIMD_BOX8_STRIP_COLS
#define B8_AHEAD 4
#if B8_STRIP % CQ_SSIM_BOX8_PHASES
#error "a strip must start at the first of box8's running sums"
#endif

double
CQ_SIMD_FN (cq_simd_ssim_box8) (const CqSimdSsimBand * b, uint64_t * sse_out)
{
  const unsigned nw = b->width - 7, rows = b->t1 - b->t0;
  double *row = (double *) (((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63);
  int32_t *arrays = (int32_t *) (row + (size_t) rows * CQ_SSIM_BOX8_PHASES);
  int32_t *c[3], *h2[3], *ring[3];
  double *vals = (double *) (arrays +
      CQ_CPU_SIMD_BOX8_STRIP_INT_ROWS * B8_STRIP_COLS);
  const size_t ring_stride = 3 * B8_STRIP_COLS;
  uint64_t sse = 0;
  double sum = 0.0;
  unsigned x0, t, y, k, se = b->sse_y0;

  if (b->t0 >= b->t1) {
    *sse_out = sse_rows (b, b->sse_y0, b->sse_y1);
    return 0.0;
  }
  for (k = 0; k < 3; k++) {
    c[k] = arrays + k * B8_STRIP_COLS;
    h2[k] = arrays + (3 + k) * B8_STRIP_COLS;
    ring[k] = arrays + (6 + k) * B8_STRIP_COLS;
  }
  memset (row, 0, (size_t) rows * CQ_SSIM_BOX8_PHASES * sizeof (double));
  for (x0 = 0; x0 < nw; x0 += B8_STRIP) {
    const int last = nw - x0 <= B8_STRIP;
    const unsigned ns = last ? nw - x0 : B8_STRIP;
    const unsigned cols = last ? b->width - x0 : B8_STRIP + 8;
    const unsigned own = last ? cols : B8_STRIP;

    se = b->sse_y0;
    for (k = 0; k < 3; k++)
      memset (c[k], 0, B8_STRIP_COLS * sizeof (int32_t));
    for (y = b->t0; y < b->t0 + 8; y++)
      b8_add_row (b, c, ring, ring_stride, x0, cols, y);
    for (t = b->t0; t < b->t1; t++) {
      /* the last row moves no row: in = out */
      const unsigned yi = t + 1 >= b->t1 ? t : t + 8;
      const size_t g = t % 8 * ring_stride;
      B8Pass p = { {c[0], c[1], c[2]},
      {ring[0] + g, ring[1] + g, ring[2] + g},
      {h2[0], h2[1], h2[2]},
      b->ref + (size_t) yi * b->ref_stride + x0,
      b->dist + (size_t) yi * b->dist_stride + x0, cols, ns, 0,
      b->k1, b->k2
      };

      /* the strip's columns of the rows B8_AHEAD passes ahead */
      if (t + 8 + B8_AHEAD < b->height) {
        prefetch_span (p.ia + B8_AHEAD * b->ref_stride, cols);
        prefetch_span (p.ib + B8_AHEAD * b->dist_stride, cols);
      }
      if ((t - b->t0) % 8 == 0 && t == se && t + 8 <= b->sse_y1) {
        sse += b8_cols_sse (c[1], c[2], own);
        se += 8;
      }
      b8_pass (&p, vals, row + (size_t) (t - b->t0) * CQ_SSIM_BOX8_PHASES);
    }
  }
  for (t = 0; t < rows; t++)
    sum += cq_ssim_box8_row (row + (size_t) t * CQ_SSIM_BOX8_PHASES);
  /* owned rows after the last 8 taken */
  sse += sse_rows (b, se, b->sse_y1);
  *sse_out = sse;
  return sum;
}

#endif /* V */
