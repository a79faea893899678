/* cudaquality compute library: sharpness sums of 8-bit frames, vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). Rows are read
 * straight from the frame (the rows above and below reflected as
 * cq-sharpness-cpu.c's load_row does); columns 1 .. width - 3 go V at a time,
 * a lane per pixel, with exactly the per-pixel terms of the plain C; column
 * 0 and the last columns (where the conditions on x and lapvar's reflected
 * neighbours apply) go through a per-pixel copy of the plain C. Lane sums are
 * unsigned 32-bit and flushed into 64 bits every CHUNK vectors (the largest
 * term, Gx² + Gy² ≤ 2 · 1020², times 1024 stays under 2^32), so every sum is
 * the plain C's exact integer.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-local.h"
#include "cq-sharpness.h"

#define CHUNK 1024
#define NEXT_METRICS \
  (CQ_METRIC_ROBERTS | CQ_METRIC_SMD | CQ_METRIC_SMD2)
#define INTERIOR_METRICS \
  (CQ_METRIC_TENENGRAD | CQ_METRIC_LAPLACIAN | CQ_METRIC_MAXMIN)

static inline int64_t
iabs (int64_t v)
{
  return v < 0 ? -v : v;
}

/* The plain C's terms of pixel x (cq-sharpness-cpu.c band_run). */
static inline void
pixel (const uint8_t * a, const uint8_t * g, const uint8_t * c, int x, int w,
    unsigned metrics, int row_interior, int row_has_next, uint64_t * s,
    int64_t * s_lap)
{
#define AT(row, i) ((int64_t) (row)[cq_reflect101 ((i), w)])
  int64_t v = g[x];

  if (metrics & CQ_METRIC_VARIANCE) {
    s[CQ_SUM_VALUE] += v;
    s[CQ_SUM_VALUE_SQ] += v * v;
  }
  if ((metrics & NEXT_METRICS) && row_has_next && x + 1 < w) {
    int64_t dx = iabs (v - g[x + 1]), dy = iabs (v - c[x]);

    s[CQ_SUM_ROBERTS] += iabs (c[x + 1] - v) + iabs (c[x] - g[x + 1]);
    s[CQ_SUM_SMD] += dx + dy;
    s[CQ_SUM_SMD2] += dx * dy;
  }
  if ((metrics & INTERIOR_METRICS) && row_interior && x >= 1 && x + 1 < w) {
    int64_t gx = (a[x + 1] + 2 * g[x + 1] + c[x + 1]) -
        (a[x - 1] + 2 * g[x - 1] + c[x - 1]);
    int64_t gy = (c[x - 1] + 2 * c[x] + c[x + 1]) -
        (a[x - 1] + 2 * a[x] + a[x + 1]);

    s[CQ_SUM_TENENGRAD] += gx * gx + gy * gy;
    s[CQ_SUM_LAPLACIAN] +=
        iabs (g[x + 1] + g[x - 1] - 2 * v) + iabs (c[x] + a[x] - 2 * v);
    if (metrics & CQ_METRIC_MAXMIN) {
      int32_t mx = a[x - 1], mn = a[x - 1];
      int i;

      for (i = -1; i <= 1; i++) {
        int32_t p[3] = { a[x + i], g[x + i], c[x + i] };
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
    int64_t d = g[x + 2] - v;
    s[CQ_SUM_BRENNER] += d * d;
  }
  if (metrics & CQ_METRIC_LAPVAR) {
    int64_t lap = AT (a, x) + AT (c, x) + AT (g, x - 1) + AT (g, x + 1) - 4 * v;
    *s_lap += lap;
    s[CQ_SUM_LAP_SQ] += lap * lap;
  }
#undef AT
}

/* Columns [x0, x1) of a row, 1 <= x0, x1 + 2 <= w, V at a time. */
static void
row_vectors (const uint8_t * a, const uint8_t * g, const uint8_t * c,
    unsigned x0, unsigned x1, unsigned metrics, int row_interior,
    int row_has_next, uint64_t * s, int64_t * s_lap)
{
  const int var = (metrics & CQ_METRIC_VARIANCE) != 0;
  const int next = (metrics & NEXT_METRICS) && row_has_next;
  const int inner = (metrics & INTERIOR_METRICS) && row_interior;
  const int maxmin = inner && (metrics & CQ_METRIC_MAXMIN);
  const int bren = (metrics & CQ_METRIC_BRENNER) != 0;
  const int lapvar = (metrics & CQ_METRIC_LAPVAR) != 0;
  unsigned x = x0;

  while (x + V <= x1) {
    vu val = { }, sq = { }, rob = { }, smd = { }, smd2 = { }, ten = { },
        lpl = { }, mm = { }, br = { }, lsq = { };
    vi lap = { };
    unsigned n;

    for (n = 0; n < CHUNK && x + V <= x1; n++, x += V) {
      vi G = ld8 (g + x), Gr = ld8 (g + x + 1);

      if (var) {
        val += (vu) G;
        sq += (vu) (G * G);
      }
      if (next) {
        vi C = ld8 (c + x), Cr = ld8 (c + x + 1);
        vi dx = vabs (G - Gr), dy = vabs (G - C);

        rob += (vu) (vabs (Cr - G) + vabs (C - Gr));
        smd += (vu) (dx + dy);
        smd2 += (vu) (dx * dy);
      }
      if (inner) {
        vi Gl = ld8 (g + x - 1);
        vi A = ld8 (a + x), Al = ld8 (a + x - 1), Ar = ld8 (a + x + 1);
        vi C = ld8 (c + x), Cl = ld8 (c + x - 1), Cr = ld8 (c + x + 1);
        vi gx = (Ar + 2 * Gr + Cr) - (Al + 2 * Gl + Cl);
        vi gy = (Cl + 2 * C + Cr) - (Al + 2 * A + Ar);

        ten += (vu) (gx * gx + gy * gy);
        lpl += (vu) (vabs (Gr + Gl - 2 * G) + vabs (C + A - 2 * G));
        if (maxmin) {
          vi mx = vmax (vmax (vmax (Al, A), vmax (Ar, Gl)),
              vmax (vmax (G, Gr), vmax (vmax (Cl, C), Cr)));
          vi mn = vmin (vmin (vmin (Al, A), vmin (Ar, Gl)),
              vmin (vmin (G, Gr), vmin (vmin (Cl, C), Cr)));

          mm += (vu) (mx - mn);
        }
      }
      if (bren) {
        vi d = ld8 (g + x + 2) - G;

        br += (vu) (d * d);
      }
      if (lapvar) {
        vi l = ld8 (a + x) + ld8 (c + x) + ld8 (g + x - 1) + Gr - 4 * G;

        lap += l;
        lsq += (vu) (l * l);
      }
    }
    s[CQ_SUM_VALUE] += hsum_u (val);
    s[CQ_SUM_VALUE_SQ] += hsum_u (sq);
    s[CQ_SUM_ROBERTS] += hsum_u (rob);
    s[CQ_SUM_SMD] += hsum_u (smd);
    s[CQ_SUM_SMD2] += hsum_u (smd2);
    s[CQ_SUM_TENENGRAD] += hsum_u (ten);
    s[CQ_SUM_LAPLACIAN] += hsum_u (lpl);
    s[CQ_SUM_MAXMIN] += hsum_u (mm);
    s[CQ_SUM_BRENNER] += hsum_u (br);
    s[CQ_SUM_LAP_SQ] += hsum_u (lsq);
    *s_lap += hsum_i (lap);
  }
}

void
CQ_SIMD_FN (cq_simd_sharpness) (const uint8_t * data, size_t stride,
    unsigned width, unsigned height, unsigned y0, unsigned y1,
    unsigned metrics, unsigned __int128 * usum, __int128 * lap_sum,
    uint64_t * hist)
{
  const int w = (int) width;
  /* vectors over [1, xv): every condition on x holds there */
  const unsigned xv = width >= V + 3 ? 1 + (width - 3) / V * V : 1;
  unsigned y, k;
  int x;

  for (y = y0; y < y1; y++) {
    const uint8_t *g = data + (size_t) y * stride;
    const uint8_t *a = data + (size_t) cq_reflect101 ((int) y - 1,
        (int) height) * stride;
    const uint8_t *c = data + (size_t) cq_reflect101 ((int) y + 1,
        (int) height) * stride;
    int row_interior = y >= 1 && y + 1 < height;
    int row_has_next = y + 1 < height;
    uint64_t s[CQ_SUM_COUNT] = { 0 };
    int64_t s_lap = 0;

    pixel (a, g, c, 0, w, metrics, row_interior, row_has_next, s, &s_lap);
    row_vectors (a, g, c, 1, xv, metrics, row_interior, row_has_next, s,
        &s_lap);
    for (x = (int) xv; x < w; x++)
      pixel (a, g, c, x, w, metrics, row_interior, row_has_next, s, &s_lap);
    if (hist)
      for (x = 0; x < w; x++)
        hist[g[x]]++;
    for (k = 0; k < CQ_SUM_COUNT; k++)
      usum[k] += s[k];
    *lap_sum += s_lap;
  }
}
