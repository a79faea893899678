/* cudaquality compute library: sharpness sums of 8-bit frames, 10 to 16-bit
 * ones and RGB, vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). 8-bit rows are
 * read straight from the frame (asked for two rows ahead), the others
 * unpacked into a ring of three rows of 16-bit values (the rows above and
 * below reflected as cq-sharpness-cpu.c's load_row does). A lane takes a
 * pixel, with exactly the per-pixel terms of the plain C, and only the
 * enabled measures' terms are formed:
 * - samples up to 10 bits (and RGB's gray) go 2 V pixels a vector in
 *   16-bit lanes, where every term fits, vpmaddwd adding two pixels'
 *   products (or, against ones, two pixels' terms) into a 32-bit lane;
 * - then V pixels a vector in 32-bit lanes, the products of 12 and 16-bit
 *   samples (Tenengrad's Gx² + Gy² ≤ 2 (4 m)² for samples up to m passes
 *   2^32 at 16 bits) added in 64-bit lanes (mul_pairs);
 * - the last columns before the edge rules (fewer than V) as one vector over
 *   copies of the rows, its dead lanes' terms masked;
 * - column 0 and the last two columns (the conditions on x, lapvar's
 *   reflected neighbours) through a per-pixel copy of the plain C.
 * 32-bit lane sums are flushed into 64 bits every chunk of vectors, the
 * largest term a lane adds a vector times the chunk staying under 2^32.
 * Every sum is the plain C's exact integer.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-local.h"
#include "cq-sharpness.h"

/* a row's sample x, 8 or 16 bits (bytes is a constant where inlined) */
#define SAMPLE(row, i) \
  (bytes == 1 ? (int64_t) ((const uint8_t *) (row))[i] : \
      (int64_t) ((const uint16_t *) (row))[i])

#define SHARP_INLINE static inline __attribute__ ((always_inline))
/* sharpness_rows adds the products in 64-bit lanes where fewer vectors than
 * this fit the 32-bit ones (12 bits: 8, 1.65 against 2.29 ms a 1080p frame;
 * 10 bits, in 32-bit lanes: 128, 1.66 against 1.56; 16 bits: none) */
#define SHARP_WIDE_BELOW 32
/* largest sample row_vectors16 takes (10 bits) */
#define SHARP_LANES16_MAX 1023
#define NEXT_METRICS \
  (CQ_METRIC_ROBERTS | CQ_METRIC_SMD | CQ_METRIC_SMD2)
#define INTERIOR_METRICS \
  (CQ_METRIC_TENENGRAD | CQ_METRIC_LAPLACIAN | CQ_METRIC_MAXMIN)

static inline int64_t
iabs (int64_t v)
{
  return v < 0 ? -v : v;
}

/* V samples of a row from x, widened to 32-bit lanes */
SHARP_INLINE vi
lds (const void *row, int x, int bytes)
{
  return bytes == 1 ? ld8 ((const uint8_t *) row + x) :
      ld16 ((const uint16_t *) row + x);
}

/* The plain C's terms of pixel x (cq-sharpness-cpu.c band_run). */
SHARP_INLINE void
pixel (const void *a_, const void *g_, const void *c_, int x, int w,
    unsigned metrics, int row_interior, int row_has_next, uint64_t * s,
    int64_t * s_lap, int bytes)
{
#define AT(row, i) SAMPLE (row, cq_reflect101 ((i), w))
#define a(i) SAMPLE (a_, i)
#define g(i) SAMPLE (g_, i)
#define c(i) SAMPLE (c_, i)
  int64_t v = g (x);

  if (metrics & CQ_METRIC_VARIANCE) {
    s[CQ_SUM_VALUE] += v;
    s[CQ_SUM_VALUE_SQ] += v * v;
  }
  if ((metrics & NEXT_METRICS) && row_has_next && x + 1 < w) {
    int64_t dx = iabs (v - g (x + 1)), dy = iabs (v - c (x));

    s[CQ_SUM_ROBERTS] += iabs (c (x + 1) - v) + iabs (c (x) - g (x + 1));
    s[CQ_SUM_SMD] += dx + dy;
    s[CQ_SUM_SMD2] += dx * dy;
  }
  if ((metrics & INTERIOR_METRICS) && row_interior && x >= 1 && x + 1 < w) {
    int64_t gx = (a (x + 1) + 2 * g (x + 1) + c (x + 1)) -
        (a (x - 1) + 2 * g (x - 1) + c (x - 1));
    int64_t gy = (c (x - 1) + 2 * c (x) + c (x + 1)) -
        (a (x - 1) + 2 * a (x) + a (x + 1));

    s[CQ_SUM_TENENGRAD] += gx * gx + gy * gy;
    s[CQ_SUM_LAPLACIAN] +=
        iabs (g (x + 1) + g (x - 1) - 2 * v) + iabs (c (x) + a (x) - 2 * v);
    if (metrics & CQ_METRIC_MAXMIN) {
      int32_t mx = a (x - 1), mn = a (x - 1);
      int i;

      for (i = -1; i <= 1; i++) {
        int32_t p[3] = { a (x + i), g (x + i), c (x + i) };
        int k;

        for (k = 0; k < 3; k++) {
          mx = p[k] > mx ? p[k] : mx;
          mn = p[k] < mn ? p[k] : mn;
        }
      }
      s[CQ_SUM_MAXMIN] += mx - mn;
    }
  }
  if ((metrics & CQ_METRIC_BRENNER) && x + 2 < w) {
    int64_t d = g (x + 2) - v;
    s[CQ_SUM_BRENNER] += d * d;
  }
  if (metrics & CQ_METRIC_LAPVAR) {
    int64_t lap = AT (a_, x) + AT (c_, x) + AT (g_, x - 1) + AT (g_, x + 1) -
        4 * v;
    *s_lap += lap;
    s[CQ_SUM_LAP_SQ] += lap * lap;
  }
#undef AT
#undef a
#undef g
#undef c
}

/* The terms a row's vectors form: its measures', where the row has
 * them (the next row's, the interior's) */
typedef struct
{
  int var, rob, smd, smd2, ten, lpl, mm, bren, lapvar;
} SharpOn;

SHARP_INLINE SharpOn
sharp_on (unsigned metrics, int row_interior, int row_has_next)
{
  SharpOn on;

  on.var = (metrics & CQ_METRIC_VARIANCE) != 0;
  on.rob = (metrics & CQ_METRIC_ROBERTS) && row_has_next;
  on.smd = (metrics & CQ_METRIC_SMD) && row_has_next;
  on.smd2 = (metrics & CQ_METRIC_SMD2) && row_has_next;
  on.ten = (metrics & CQ_METRIC_TENENGRAD) && row_interior;
  on.lpl = (metrics & CQ_METRIC_LAPLACIAN) && row_interior;
  on.mm = (metrics & CQ_METRIC_MAXMIN) && row_interior;
  on.bren = (metrics & CQ_METRIC_BRENNER) != 0;
  on.lapvar = (metrics & CQ_METRIC_LAPVAR) != 0;
  return on;
}

/* A chunk's 32-bit lane sums, in CQ_SUM_* terms */
typedef struct
{
  vu val, sq, rob, smd, smd2, ten, lpl, mm, br, lsq;
  vi lap;
} Lanes32;

/* Adds the lane sums into s and *s_lap: the linear ones, and the products'
 * where they are 32-bit lanes too. */
SHARP_INLINE void
lanes32_flush (const Lanes32 * l, int products, uint64_t * s,
    int64_t * s_lap)
{
  s[CQ_SUM_VALUE] += hsum_u (l->val);
  s[CQ_SUM_ROBERTS] += hsum_u (l->rob);
  s[CQ_SUM_SMD] += hsum_u (l->smd);
  s[CQ_SUM_LAPLACIAN] += hsum_u (l->lpl);
  s[CQ_SUM_MAXMIN] += hsum_u (l->mm);
  *s_lap += hsum_i (l->lap);
  if (products) {
    s[CQ_SUM_VALUE_SQ] += hsum_u (l->sq);
    s[CQ_SUM_SMD2] += hsum_u (l->smd2);
    s[CQ_SUM_TENENGRAD] += hsum_u (l->ten);
    s[CQ_SUM_BRENNER] += hsum_u (l->br);
    s[CQ_SUM_LAP_SQ] += hsum_u (l->lsq);
  }
}

/* Columns [x0, x1) of a row, 1 <= x0, x1 + 2 <= w, V at a time, the lane
 * sums flushed every chunk vectors; only the enabled measures' terms, and
 * with tail only those of the lanes set in live (the caller's one vector
 * over the last columns). The products of values below 2^15 in magnitude
 * (samples up to m < 2^13: every call's but wide's) are formed by vpmaddwd
 * (madd16), one µop; with wide, the products (the variance's squares,
 * SMD2, Tenengrad, Brenner, lapvar's squares) are added in 64-bit lanes
 * (mul_pairs) and only the linear sums stay 32-bit. */
SHARP_INLINE void
row_vectors (const void *a, const void *g, const void *c, unsigned x0,
    unsigned x1, SharpOn on, uint64_t * s, int64_t * s_lap, int bytes,
    unsigned chunk, int wide, int tail, vi live)
{
  /* a lane's term, or 0 outside live */
#define LIVE(t) (tail ? (t) & live : (t))
  unsigned x = x0;

  while (x + V <= x1) {
    Lanes32 acc = { };
    vdl sq64 = { }, smd2_64 = { }, ten64 = { }, br64 = { }, lsq64 = { };
    unsigned n;

    for (n = 0; n < chunk && x + V <= x1; n++, x += V) {
      vi G = lds (g, x, bytes), Gr = lds (g, x + 1, bytes);

      if (on.var) {
        acc.val += (vu) LIVE (G);
        if (wide)
          sq64 += mul_pairs (LIVE (G), G);
        else
          acc.sq += (vu) madd16 (LIVE (G), G);
      }
      if (on.rob || on.smd || on.smd2) {
        vi C = lds (c, x, bytes), Cr = lds (c, x + 1, bytes);
        vi dx = LIVE (vabs (G - Gr)), dy = vabs (G - C);

        if (on.rob)
          acc.rob += (vu) LIVE (vabs (Cr - G) + vabs (C - Gr));
        if (on.smd)
          acc.smd += (vu) (dx + LIVE (dy));
        if (on.smd2) {
          if (wide)
            smd2_64 += mul_pairs (dx, dy);
          else
            acc.smd2 += (vu) madd16 (dx, dy);
        }
      }
      if (on.ten || on.lpl || on.mm) {
        vi Gl = lds (g, x - 1, bytes);
        vi A = lds (a, x, bytes), Al = lds (a, x - 1, bytes);
        vi Ar = lds (a, x + 1, bytes), C = lds (c, x, bytes);
        vi Cl = lds (c, x - 1, bytes), Cr = lds (c, x + 1, bytes);

        if (on.ten) {
          vi gx = LIVE ((Ar + 2 * Gr + Cr) - (Al + 2 * Gl + Cl));
          vi gy = LIVE ((Cl + 2 * C + Cr) - (Al + 2 * A + Ar));

          if (wide)
            ten64 += mul_pairs (gx, gx) + mul_pairs (gy, gy);
          else {
            vi gxy = pack16 (gx, gy);

            acc.ten += (vu) madd16 (gxy, gxy);
          }
        }
        if (on.lpl)
          acc.lpl += (vu) LIVE (vabs (Gr + Gl - 2 * G) + vabs (C + A - 2 * G));
        if (on.mm) {
          vi mx = vmax (vmax (vmax (Al, A), vmax (Ar, Gl)),
              vmax (vmax (G, Gr), vmax (vmax (Cl, C), Cr)));
          vi mn = vmin (vmin (vmin (Al, A), vmin (Ar, Gl)),
              vmin (vmin (G, Gr), vmin (vmin (Cl, C), Cr)));

          acc.mm += (vu) LIVE (mx - mn);
        }
      }
      if (on.bren) {
        vi d = LIVE (lds (g, x + 2, bytes) - G);

        if (wide)
          br64 += mul_pairs (d, d);
        else
          acc.br += (vu) (d * d);
      }
      if (on.lapvar) {
        vi l = LIVE (lds (a, x, bytes) + lds (c, x, bytes) +
            lds (g, x - 1, bytes) + Gr - 4 * G);

        acc.lap += l;
        if (wide)
          lsq64 += mul_pairs (l, l);
        else
          acc.lsq += (vu) (l * l);
      }
    }
    lanes32_flush (&acc, !wide, s, s_lap);
    if (wide) {
      s[CQ_SUM_VALUE_SQ] += hsum_l (sq64);
      s[CQ_SUM_SMD2] += hsum_l (smd2_64);
      s[CQ_SUM_TENENGRAD] += hsum_l (ten64);
      s[CQ_SUM_BRENNER] += hsum_l (br64);
      s[CQ_SUM_LAP_SQ] += hsum_l (lsq64);
    }
  }
#undef LIVE
}

/* 2 V samples of a row from x, as 16-bit lanes */
SHARP_INLINE vs
lds16 (const void *row, int x, int bytes)
{
  return bytes == 1 ? ld8w ((const uint8_t *) row + x) :
      ld16w ((const uint16_t *) row + x);
}

/* row_vectors at 2 V pixels a vector, in 16-bit lanes, for samples up to
 * m <= SHARP_LANES16_MAX: every term fits 16 bits (the largest, |Gx|,
 * |Gy| and lapvar's, are at most 4 m) and vpmaddwd (dot16) adds two
 * pixels' products, or against ones two pixels' terms, into a 32-bit lane.
 * Tenengrad's 2 · 2 (4 m)² = 64 m² is the most a lane adds a vector, times
 * the chunk below 2^32. */
SHARP_INLINE void
row_vectors16 (const void *a, const void *g, const void *c, unsigned x0,
    unsigned x1, SharpOn on, uint64_t * s, int64_t * s_lap, int bytes,
    unsigned chunk)
{
  const vs one = (vs) { } + 1;
  unsigned x = x0;

  while (x + 2 * V <= x1) {
    Lanes32 acc = { };
    unsigned n;

    for (n = 0; n < chunk && x + 2 * V <= x1; n++, x += 2 * V) {
      vs G = lds16 (g, x, bytes), Gr = lds16 (g, x + 1, bytes);

      if (on.var) {
        acc.val += (vu) dot16 (G, one);
        acc.sq += (vu) dot16 (G, G);
      }
      if (on.rob || on.smd || on.smd2) {
        vs C = lds16 (c, x, bytes), Cr = lds16 (c, x + 1, bytes);
        vs dx = vabs16 (G - Gr), dy = vabs16 (G - C);

        if (on.rob)
          acc.rob += (vu) dot16 (vabs16 (Cr - G) + vabs16 (C - Gr), one);
        if (on.smd)
          acc.smd += (vu) dot16 (dx + dy, one);
        if (on.smd2)
          acc.smd2 += (vu) dot16 (dx, dy);
      }
      if (on.ten || on.lpl || on.mm) {
        vs Gl = lds16 (g, x - 1, bytes);
        vs A = lds16 (a, x, bytes), Al = lds16 (a, x - 1, bytes);
        vs Ar = lds16 (a, x + 1, bytes), C = lds16 (c, x, bytes);
        vs Cl = lds16 (c, x - 1, bytes), Cr = lds16 (c, x + 1, bytes);

        if (on.ten) {
          vs gx = (Ar + 2 * Gr + Cr) - (Al + 2 * Gl + Cl);
          vs gy = (Cl + 2 * C + Cr) - (Al + 2 * A + Ar);

          acc.ten += (vu) (dot16 (gx, gx) + dot16 (gy, gy));
        }
        if (on.lpl)
          acc.lpl += (vu) dot16 (vabs16 (Gr + Gl - 2 * G) +
              vabs16 (C + A - 2 * G), one);
        if (on.mm) {
          vs mx = vmax16 (vmax16 (vmax16 (Al, A), vmax16 (Ar, Gl)),
              vmax16 (vmax16 (G, Gr), vmax16 (vmax16 (Cl, C), Cr)));
          vs mn = vmin16 (vmin16 (vmin16 (Al, A), vmin16 (Ar, Gl)),
              vmin16 (vmin16 (G, Gr), vmin16 (vmin16 (Cl, C), Cr)));

          acc.mm += (vu) dot16 (mx - mn, one);
        }
      }
      if (on.bren) {
        vs d = lds16 (g, x + 2, bytes) - G;

        acc.br += (vu) dot16 (d, d);
      }
      if (on.lapvar) {
        vs l = lds16 (a, x, bytes) + lds16 (c, x, bytes) +
            lds16 (g, x - 1, bytes) + Gr - 4 * G;

        acc.lap += dot16 (l, one);
        acc.lsq += (vu) dot16 (l, l);
      }
    }
    lanes32_flush (&acc, 1, s, s_lap);
  }
}

/* Entropy's histogram of 8-bit values goes through HIST_WAYS tables, a
 * column's in table x % HIST_WAYS: the pixels of a smooth run, all in one
 * bin, then increment different counters instead of waiting each for the
 * last one's store. */
#define HIST_WAYS 4

typedef uint64_t HistWays[HIST_WAYS][256];

/* Row g's values into hist, or into ways where given (values below 256). */
SHARP_INLINE void
hist_row (const void *g, unsigned width, uint64_t * hist, HistWays * ways,
    int bytes)
{
  unsigned x = 0, k;

  if (ways)
    for (; x + HIST_WAYS <= width; x += HIST_WAYS)
      for (k = 0; k < HIST_WAYS; k++)
        (*ways)[k][SAMPLE (g, x + k)]++;
  for (; x < width; x++)
    hist[SAMPLE (g, x)]++;
}

static void
hist_ways_add (const HistWays * ways, uint64_t * hist)
{
  unsigned v, k;

  for (v = 0; v < 256; v++)
    for (k = 0; k < HIST_WAYS; k++)
      hist[v] += (*ways)[k][v];
}

/* The sums of row g (a above, c below, reflected) into usum, lap_sum and
 * hist (or ways). */
SHARP_INLINE void
sharp_row (const void *a, const void *g, const void *c, unsigned width,
    int row_interior, int row_has_next, unsigned metrics,
    unsigned __int128 * usum, __int128 * lap_sum, uint64_t * hist,
    HistWays * ways, int bytes, unsigned chunk, int wide, unsigned chunk16)
{
  const int w = (int) width;
  /* vectors over [1, xv), every condition on x holding there: of 2 V
   * pixels in 16-bit lanes over [1, x16) where chunk16 is given, then of
   * V */
  const unsigned x16 = chunk16 && width >= 2 * V + 3 ?
      1 + (width - 3) / (2 * V) * (2 * V) : 1;
  unsigned xv = width >= x16 + V + 2 ? x16 + (width - 2 - x16) / V * V : x16;
  const SharpOn on = sharp_on (metrics, row_interior, row_has_next);
  uint64_t s[CQ_SUM_COUNT] = { 0 };
  int64_t s_lap = 0;
  unsigned k;
  int x;

  pixel (a, g, c, 0, w, metrics, row_interior, row_has_next, s, &s_lap, bytes);
  if (chunk16)
    row_vectors16 (a, g, c, 1, x16, on, s, &s_lap, bytes, chunk16);
  row_vectors (a, g, c, x16, xv, on, s, &s_lap, bytes, chunk, wide, 0,
      splat (0));
  if (width >= xv + 3) {
    /* columns [xv, w - 2), fewer than V, as one vector over copies of the
     * rows' columns xv - 1 .. w - 1 (zeros after them), live in its first
     * w - 2 - xv lanes */
    const unsigned r = width - 2 - xv, n = (r + 3) * (unsigned) bytes;
    uint8_t tail[3][2 * V + 16] __attribute__ ((aligned (64)));
    const void *rows[3] = { a, g, c };

    for (k = 0; k < 3; k++) {
      memset (tail[k], 0, sizeof (tail[k]));
      memcpy (tail[k], (const uint8_t *) rows[k] + (xv - 1) * bytes, n);
    }
    row_vectors (tail[0], tail[1], tail[2], 1, 1 + V, on, s, &s_lap, bytes, 1,
        wide, 1, iota () < (int) r);
    xv += r;
  }
  for (x = (int) xv; x < w; x++)
    pixel (a, g, c, x, w, metrics, row_interior, row_has_next, s, &s_lap,
        bytes);
  if (hist)
    hist_row (g, width, hist, ways, bytes);
  for (k = 0; k < CQ_SUM_COUNT; k++)
    usum[k] += s[k];
  *lap_sum += s_lap;
}

/* The frame's rows are asked for this many rows ahead of the row
 * measured: frames streamed from memory (60 real 1080p frames, one core of
 * the development host's Xeon, AVX-512) took 0.93 ms a frame with the
 * hardware's prefetchers alone, 0.66 with this (one or three rows ahead:
 * 0.72-0.74 in a probe); AVX2 within 1 % either way. */
#define SHARP_PREFETCH_ROWS 2

static inline void
prefetch_row (const uint8_t * row, size_t bytes)
{
  size_t o;

  for (o = 0; o < bytes; o += 64)
    __builtin_prefetch (row + o);
}

void
CQ_SIMD_FN (cq_simd_sharpness) (const uint8_t * data, size_t stride,
    unsigned width, unsigned height, unsigned y0, unsigned y1,
    unsigned metrics, unsigned __int128 * usum, __int128 * lap_sum,
    uint64_t * hist)
{
  const int bytes = 1;
  HistWays ways;
  unsigned y;

  if (hist)
    memset (ways, 0, sizeof (ways));
  for (y = y0; y < y1; y++) {
    const uint8_t *g = data + (size_t) y * stride;
    const uint8_t *a = data + (size_t) cq_reflect101 ((int) y - 1,
        (int) height) * stride;
    const uint8_t *c = data + (size_t) cq_reflect101 ((int) y + 1,
        (int) height) * stride;

    if (y + SHARP_PREFETCH_ROWS < height)
      prefetch_row (data + (size_t) (y + SHARP_PREFETCH_ROWS) * stride, width);
    sharp_row (a, g, c, width, y >= 1 && y + 1 < height, y + 1 < height,
        metrics, usum, lap_sum, hist, &ways, bytes, 1024, 0,
        (unsigned) (UINT32_MAX / (64 * 255 * 255)));
  }
  if (hist)
    hist_ways_add (&ways, hist);
}

/* Row y's values (GRAY16: (word >> shift) & mask; RGB8: its gray) into
 * out. */
static void
unpack_row (const CqLayout * l, const uint8_t * data, size_t stride,
    unsigned width, unsigned y, uint16_t * out)
{
  const uint8_t *row = data + (size_t) y * stride;

  if (l->kind == CQ_LAYOUT_GRAY16)
    cq_gray16_row (row, l->shift, l->depth, width, out);
  else
    CQ_SIMD_FN (cq_simd_gray_rgb8_row) (row, l->pixel_stride, l->r_offset,
        l->g_offset, l->b_offset, width, out);
}

void
CQ_SIMD_FN (cq_simd_sharpness_rows) (const CqLayout * layout,
    const uint8_t * data, size_t stride, unsigned width, unsigned height,
    unsigned y0, unsigned y1, unsigned metrics, unsigned __int128 * usum,
    __int128 * lap_sum, uint64_t * hist, uint16_t * rows)
{
  const int bytes = 2;
  const uint64_t m = layout->kind == CQ_LAYOUT_GRAY16 ?
      (1u << layout->depth) - 1 : 255;
  /* Tenengrad's 2 (4 m)² is the largest term a lane adds a vector */
  const unsigned chunk32 = (unsigned) (UINT32_MAX / (32 * m * m));
  const int wide = chunk32 < SHARP_WIDE_BELOW;
  /* wide: the linear sums' largest term is 4 m a vector (lapvar's signed) */
  const unsigned chunk = wide ? (unsigned) (INT32_MAX / (4 * m)) : chunk32;
  const size_t rw = (size_t) width + 8;
  HistWays ways_of_8bit, *ways = m < 256 && hist ? &ways_of_8bit : NULL;
  int held[3] = { -1, -1, -1 };
  unsigned y;

  if (ways)
    memset (ways, 0, sizeof (*ways));
  for (y = y0; y < y1; y++) {
    const int want[3] = { cq_reflect101 ((int) y - 1, (int) height), (int) y,
      cq_reflect101 ((int) y + 1, (int) height)
    };
    const uint16_t *r[3];
    unsigned k;

    /* rows y - 1, y, y + 1 in slots by row % 3 (the reflected rows are
     * among them) */
    for (k = 0; k < 3; k++) {
      unsigned slot = (unsigned) want[k] % 3;

      if (held[slot] != want[k]) {
        unpack_row (layout, data, stride, width, (unsigned) want[k],
            rows + slot * rw);
        held[slot] = want[k];
      }
      r[k] = rows + slot * rw;
    }
    if (wide)
      sharp_row (r[0], r[1], r[2], width, y >= 1 && y + 1 < height,
          y + 1 < height, metrics, usum, lap_sum, hist, ways, bytes, chunk,
          1, 0);
    else if (m <= SHARP_LANES16_MAX)
      sharp_row (r[0], r[1], r[2], width, y >= 1 && y + 1 < height,
          y + 1 < height, metrics, usum, lap_sum, hist, ways, bytes, chunk,
          0, (unsigned) (UINT32_MAX / (64 * m * m)));
    else
      sharp_row (r[0], r[1], r[2], width, y >= 1 && y + 1 < height,
          y + 1 < height, metrics, usum, lap_sum, hist, ways, bytes, chunk,
          0, 0);
  }
  if (hist && ways)
    hist_ways_add (ways, hist);
}
