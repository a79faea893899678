/* cudaquality compute library: SSIM, MSE and PSNR on the CPU.
 *
 * This plain C is the definition. Each plane of both frames is first
 * unpacked into 16-bit sample arrays (and the squared differences summed),
 * then the windows are evaluated in bands of window rows, run on the worker
 * pool, with the expressions of cq-ssim-local.h. Band sums are added in band
 * order.
 *
 * MS-SSIM (where enabled) follows the pair's SSIM: the plane's samples as
 * doubles, then at each scale the gauss11 windows (contrast-structure and
 * SSIM sums) and the 2x2 average into the next scale's buffer, all in bands.
 *
 * Where the CPU has them, the vectorised kernels (cq-cpu-simd.h) take the
 * same bands and give the same bits: 8-bit planes straight from the frames
 * (every window), other planes from the unpacked rows (box8, gauss11), and
 * MS-SSIM's scales (the first from the frames or the unpacked rows).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-ssim.h"
#include "cq-ssim-local.h"
#include "cq-cpu-simd.h"
#include "cq-pool.h"

#include <stdlib.h>
#include <string.h>

#define MIN_ROWS_PER_THREAD 16

typedef struct CqSsimBand CqSsimBand;
typedef void (*BandFunc) (CqSsimBand * band);

struct CqSsimBand
{
  CqSsimCpu *cpu;
  BandFunc func;
  unsigned index;
  /* the current plane */
  const CqSsimPlane *plane;
  const uint8_t *ref, *dist;
  size_t ref_stride, dist_stride;
  uint16_t *a, *b;
  /* results */
  double ssim_sum;
  uint64_t sse;
  /* scratch, sized for the widest plane */
  int64_t *cols;
  double *vert;
  void *simd_scratch;           /* box8, ffmpeg */
  void *gauss_scratch;          /* gauss11, MS-SSIM */
  /* MS-SSIM: the current scale (ms_a, ms_b, ms_w x ms_h), the next one's
   * buffers, and the band's contrast-structure sum */
  const double *ms_a, *ms_b;
  double *ms_next_a, *ms_next_b;
  unsigned ms_scale, ms_w, ms_h;
  double cs_sum;
};

struct CqSsimCpu
{
  CqSsimWindow window;
  CqSsimPlane planes[CQ_SSIM_MAX_PLANES];
  unsigned n_planes, n_threads;
  uint16_t *a[CQ_SSIM_MAX_PLANES], *b[CQ_SSIM_MAX_PLANES];
  CqSsimBand *bands;
  double gauss[11];
  const CqSimdKernels *simd;    /* NULL: plain C only */
  int msssim;
  /* [plane][0 reference, 1 distorted][scale parity]: scales 1, 3, 5 in the
   * first buffer (full size; with the vectorised kernels, which read scale 1
   * from the frames, a sixteenth), 2, 4 in the quarter-size one */
  double *ms[CQ_SSIM_MAX_PLANES][2][2];
};

/* The rows [*r0, *r1) of `rows` that band i of n takes. */
static void
band_range (unsigned rows, unsigned i, unsigned n, unsigned *r0, unsigned *r1)
{
  *r0 = (unsigned) ((uint64_t) rows * i / n);
  *r1 = (unsigned) ((uint64_t) rows * (i + 1) / n);
}

static inline unsigned
fetch_sample (const CqSsimPlane * p, const uint8_t * row, unsigned x)
{
  const CqLayout *l = &p->layout;
  const uint8_t *s = row + (size_t) x * p->sample_stride;

  switch (l->kind) {
    case CQ_LAYOUT_GRAY8:
      return s[p->offset];
    case CQ_LAYOUT_GRAY16:{
      unsigned v = s[p->offset] | (unsigned) s[p->offset + 1] << 8;
      return (v >> l->shift) & ((1u << l->depth) - 1);
    }
    case CQ_LAYOUT_RGB8:
      return cq_gray_rgb8 (s[l->r_offset], s[l->g_offset], s[l->b_offset]);
  }
  return 0;
}

/* Phase 1: unpack the band's rows of both frames and sum (a - b)². GRAY8
 * and GRAY16 samples take the loops of cq-local.h, a loop a sample stride,
 * which the compiler vectorises (where the CPU has them, compiled for its
 * instruction set: cq-cpu-simd.h), RGB the vectorised kernels'
 * conversion; the same values. */
static void
band_unpack (CqSsimBand * band)
{
  const CqSsimPlane *p = band->plane;
  const CqLayout *l = &p->layout;
  const CqSimdKernels *simd = band->cpu->simd;
  const unsigned w = p->width, ss = p->sample_stride;
  const int words = l->kind == CQ_LAYOUT_GRAY16;
  unsigned y0, y1, y, x;
  uint64_t sse = 0;

  band_range (p->height, band->index, band->cpu->n_threads, &y0, &y1);
  for (y = y0; y < y1; y++) {
    const uint8_t *ra = band->ref + y * band->ref_stride + p->offset;
    const uint8_t *rb = band->dist + y * band->dist_stride + p->offset;
    uint16_t *da = band->a + (size_t) y * w;
    uint16_t *db = band->b + (size_t) y * w;

    if (l->kind != CQ_LAYOUT_RGB8 && simd) {
      simd->unpack_row (l, ss, ra, w, da);
      simd->unpack_row (l, ss, rb, w, db);
    } else if (l->kind != CQ_LAYOUT_RGB8) {
      cq_gray_row (words, ra, ss, l->shift, l->depth, w, da);
      cq_gray_row (words, rb, ss, l->shift, l->depth, w, db);
    } else if (simd) {
      simd->gray_rgb8_row (ra - p->offset, ss, l->r_offset, l->g_offset,
          l->b_offset, w, da);
      simd->gray_rgb8_row (rb - p->offset, ss, l->r_offset, l->g_offset,
          l->b_offset, w, db);
    } else {
      for (x = 0; x < w; x++) {
        da[x] = (uint16_t) fetch_sample (p, ra - p->offset, x);
        db[x] = (uint16_t) fetch_sample (p, rb - p->offset, x);
      }
    }
    sse += simd ? simd->sse_u16_row (da, db, w, l->depth) :
        cq_sse_u16_row (da, db, w, l->depth);
  }
  band->sse = sse;
}

/* Adds (sign +1) or removes (-1) row y to the per-column sums of
 * Σa, Σb, Σa²+Σb², Σab kept in cols[4 * x ...]. */
static inline void
cols_update (const CqSsimBand * band, unsigned y, int64_t sign)
{
  const unsigned w = band->plane->width;
  const uint16_t *ra = band->a + (size_t) y * w;
  const uint16_t *rb = band->b + (size_t) y * w;
  int64_t *c = band->cols;
  unsigned x;

  for (x = 0; x < w; x++, c += 4) {
    int64_t a = ra[x], b = rb[x];

    c[0] += sign * a;
    c[1] += sign * b;
    c[2] += sign * (a * a + b * b);
    c[3] += sign * (a * b);
  }
}

static void
band_box8 (CqSsimBand * band)
{
  const CqSsimPlane *p = band->plane;
  unsigned t0, t1, t, x, y;
  double sum = 0.0, k1, k2;

  cq_ssim_window_constants (p, CQ_SSIM_BOX8, &k1, &k2);
  band_range (p->height - 7, band->index, band->cpu->n_threads, &t0, &t1);
  band->ssim_sum = 0.0;
  if (t0 == t1)
    return;
  memset (band->cols, 0, 4 * sizeof (int64_t) * p->width);
  for (y = t0; y < t0 + 8; y++)
    cols_update (band, y, 1);
  for (t = t0; t < t1; t++) {
    int64_t w[4] = { 0, 0, 0, 0 };
    double phase[CQ_SSIM_BOX8_PHASES] = { 0.0 };

    for (x = 0; x < 8; x++) {
      w[0] += band->cols[4 * x];
      w[1] += band->cols[4 * x + 1];
      w[2] += band->cols[4 * x + 2];
      w[3] += band->cols[4 * x + 3];
    }
    for (x = 0;; x++) {
      phase[x % CQ_SSIM_BOX8_PHASES] +=
          cq_ssim_box8_local (w[0], w[1], w[2], w[3], k1, k2);
      if (x + 8 >= p->width)
        break;
      w[0] += band->cols[4 * (x + 8)] - band->cols[4 * x];
      w[1] += band->cols[4 * (x + 8) + 1] - band->cols[4 * x + 1];
      w[2] += band->cols[4 * (x + 8) + 2] - band->cols[4 * x + 2];
      w[3] += band->cols[4 * (x + 8) + 3] - band->cols[4 * x + 3];
    }
    sum += cq_ssim_box8_row (phase);
    if (t + 1 < t1) {
      cols_update (band, t, -1);
      cols_update (band, t + 8, 1);
    }
  }
  band->ssim_sum = sum;
}

/* Sums of the 4x4 blocks of block row by: blocks[4 * bx ...]. */
static void
ffmpeg_block_row (const CqSsimBand * band, unsigned by, int64_t * blocks)
{
  const unsigned w = band->plane->width, w4 = w / 4;
  unsigned bx, i, j;

  for (bx = 0; bx < w4; bx++) {
    int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;

    for (j = 0; j < 4; j++) {
      const uint16_t *ra = band->a + (size_t) (4 * by + j) * w + 4 * bx;
      const uint16_t *rb = band->b + (size_t) (4 * by + j) * w + 4 * bx;

      for (i = 0; i < 4; i++) {
        int64_t a = ra[i], b = rb[i];

        s1 += a;
        s2 += b;
        ss += a * a + b * b;
        s12 += a * b;
      }
    }
    blocks[4 * bx] = s1;
    blocks[4 * bx + 1] = s2;
    blocks[4 * bx + 2] = ss;
    blocks[4 * bx + 3] = s12;
  }
}

static void
band_ffmpeg (CqSsimBand * band)
{
  const CqSsimPlane *p = band->plane;
  const unsigned w4 = p->width / 4, h4 = p->height / 4;
  int64_t *top = band->cols, *bottom = band->cols + 4 * (size_t) w4, *tmp;
  unsigned t0, t1, by, bx, k;
  double sum = 0.0, k1, k2;
  int64_t c1, c2;

  cq_ssim_window_constants (p, CQ_SSIM_FFMPEG, &k1, &k2);
  c1 = (int64_t) k1;
  c2 = (int64_t) k2;
  band_range (h4 - 1, band->index, band->cpu->n_threads, &t0, &t1);
  band->ssim_sum = 0.0;
  if (t0 == t1)
    return;
  ffmpeg_block_row (band, t0, top);
  for (by = t0; by < t1; by++) {
    double row = 0.0;

    ffmpeg_block_row (band, by + 1, bottom);
    for (bx = 0; bx + 1 < w4; bx++) {
      int64_t s[4];

      for (k = 0; k < 4; k++)
        s[k] = top[4 * bx + k] + top[4 * bx + 4 + k] + bottom[4 * bx + k] +
            bottom[4 * bx + 4 + k];
      row += cq_ssim_ffmpeg_local (s[0], s[1], s[2], s[3], c1, c2);
    }
    sum += row;
    tmp = top;
    top = bottom;
    bottom = tmp;
  }
  band->ssim_sum = sum;
}

/* Gaussian windows: the 11-tap vertical sums of a, b, a²+b², ab for every
 * column, then the 11-tap horizontal sums of those. */
static void
band_gauss11 (CqSsimBand * band)
{
  const CqSsimPlane *p = band->plane;
  const unsigned w = p->width;
  const double *g = band->cpu->gauss;
  double *v = band->vert, c1, c2;
  unsigned t0, t1, t, x, k;
  double sum = 0.0;

  cq_ssim_window_constants (p, CQ_SSIM_GAUSS11, &c1, &c2);
  band_range (p->height - 10, band->index, band->cpu->n_threads, &t0, &t1);
  for (t = t0; t < t1; t++) {
    double row = 0.0;

    for (x = 0; x < w; x++) {
      double va = 0.0, vb = 0.0, vss = 0.0, vab = 0.0;

      for (k = 0; k < 11; k++) {
        double a = band->a[(size_t) (t + k) * w + x];
        double b = band->b[(size_t) (t + k) * w + x];

        va += g[k] * a;
        vb += g[k] * b;
        vss += g[k] * (a * a + b * b);
        vab += g[k] * (a * b);
      }
      v[4 * x] = va;
      v[4 * x + 1] = vb;
      v[4 * x + 2] = vss;
      v[4 * x + 3] = vab;
    }
    for (x = 0; x + 10 < w; x++) {
      double ua = 0.0, ub = 0.0, uss = 0.0, uab = 0.0;

      for (k = 0; k < 11; k++) {
        ua += g[k] * v[4 * (x + k)];
        ub += g[k] * v[4 * (x + k) + 1];
        uss += g[k] * v[4 * (x + k) + 2];
        uab += g[k] * v[4 * (x + k) + 3];
      }
      row += cq_ssim_gauss_local (ua, ub, uss, uab, c1, c2);
    }
    sum += row;
  }
  band->ssim_sum = sum;
}

/* MS-SSIM, scale 1: the band's rows of both frames as doubles. */
static void
band_ms_unpack (CqSsimBand * band)
{
  const CqSsimPlane *p = band->plane;
  unsigned y0, y1, y, x;

  band_range (p->height, band->index, band->cpu->n_threads, &y0, &y1);
  for (y = y0; y < y1; y++) {
    const uint8_t *ra = band->ref + y * band->ref_stride;
    const uint8_t *rb = band->dist + y * band->dist_stride;
    double *da = band->ms_next_a + (size_t) y * p->width;
    double *db = band->ms_next_b + (size_t) y * p->width;

    for (x = 0; x < p->width; x++) {
      da[x] = fetch_sample (p, ra, x);
      db[x] = fetch_sample (p, rb, x);
    }
  }
}

/* MS-SSIM, one scale: the gauss11 windows of the band's window rows, the
 * sums of their contrast-structure term and of their SSIM. */
static void
band_ms_gauss (CqSsimBand * band)
{
  const unsigned w = band->ms_w;
  const double *g = band->cpu->gauss, *a = band->ms_a, *b = band->ms_b;
  double *v = band->vert, cs = 0.0, ssim = 0.0, c1, c2;
  unsigned t0, t1, t, x, k;

  cq_ssim_window_constants (band->plane, CQ_SSIM_GAUSS11, &c1, &c2);
  band_range (band->ms_h - 10, band->index, band->cpu->n_threads, &t0, &t1);
  for (t = t0; t < t1; t++) {
    double row_cs = 0.0, row_ssim = 0.0;

    for (x = 0; x < w; x++) {
      double q[4] = { 0.0, 0.0, 0.0, 0.0 };

      for (k = 0; k < 11; k++) {
        double sa = a[(size_t) (t + k) * w + x];
        double sb = b[(size_t) (t + k) * w + x];

        q[0] += g[k] * sa;
        q[1] += g[k] * sb;
        q[2] += g[k] * (sa * sa + sb * sb);
        q[3] += g[k] * (sa * sb);
      }
      memcpy (&v[4 * x], q, sizeof (q));
    }
    for (x = 0; x + 10 < w; x++) {
      double u[4] = { 0.0, 0.0, 0.0, 0.0 };
      unsigned j;

      for (k = 0; k < 11; k++)
        for (j = 0; j < 4; j++)
          u[j] += g[k] * v[4 * (x + k) + j];
      row_cs += cq_ssim_gauss_cs_local (u[0], u[1], u[2], u[3], c2);
      row_ssim += cq_ssim_gauss_local (u[0], u[1], u[2], u[3], c1, c2);
    }
    cs += row_cs;
    ssim += row_ssim;
  }
  band->cs_sum = cs;
  band->ssim_sum = ssim;
}

/* MS-SSIM: the band's rows of the next scale, 2x2 averages. */
static void
band_ms_down (CqSsimBand * band)
{
  const unsigned w = band->ms_w, nw = w / 2;
  unsigned y0, y1, y, x, f;

  band_range (band->ms_h / 2, band->index, band->cpu->n_threads, &y0, &y1);
  for (f = 0; f < 2; f++) {
    const double *in = f ? band->ms_b : band->ms_a;
    double *out = f ? band->ms_next_b : band->ms_next_a;

    for (y = y0; y < y1; y++) {
      const double *r0 = in + (size_t) (2 * y) * w, *r1 = r0 + w;

      for (x = 0; x < nw; x++)
        out[(size_t) y * nw + x] = cq_ssim_down2 (r0[2 * x], r0[2 * x + 1],
            r1[2 * x], r1[2 * x + 1]);
    }
  }
}

/* box8 and ffmpeg windows of an 8-bit plane with the vectorised kernels,
 * straight from the frames: the same bands as band_box8 / band_ffmpeg, the
 * squared differences of the rows band_unpack would take. */
static void
band_simd (CqSsimBand * band)
{
  const CqSsimPlane *p = band->plane;
  const CqSsimCpu *cpu = band->cpu;
  const int box8 = cpu->window == CQ_SSIM_BOX8;
  const unsigned unit = box8 ? 1 : 4;
  CqSimdSsimBand s;
  double c1, c2;

  s.ref = band->ref + p->offset;
  s.dist = band->dist + p->offset;
  s.ref_stride = band->ref_stride;
  s.dist_stride = band->dist_stride;
  s.width = p->width;
  s.height = p->height;
  band_range (box8 ? p->height - 7 : p->height / 4 - 1, band->index,
      cpu->n_threads, &s.t0, &s.t1);
  s.sse_y0 = unit * s.t0;
  s.sse_y1 = band->index + 1 == cpu->n_threads ? p->height : unit * s.t1;
  cq_ssim_window_constants (p, CQ_SSIM_BOX8, &s.k1, &s.k2);
  cq_ssim_window_constants (p, CQ_SSIM_FFMPEG, &c1, &c2);
  s.c1 = (int64_t) c1;
  s.c2 = (int64_t) c2;
  s.scratch = band->simd_scratch;
  band->ssim_sum = box8 ? cpu->simd->ssim_box8 (&s, &band->sse) :
      cpu->simd->ssim_ffmpeg (&s, &band->sse);
}

/* Whether the vectorised kernels read plane p straight from the frames. */
static int
use_simd (const CqSsimCpu * cpu, const CqSsimPlane * p)
{
  return cpu->simd && p->layout.kind == CQ_LAYOUT_GRAY8 &&
      p->layout.depth == 8 && p->sample_stride == 1 &&
      p->width <= CQ_CPU_SIMD_MAX_WIDTH;
}

/* The vectorised kernels' view of the band's plane pair: 8-bit planes
 * straight from the frames, others as band_unpack's rows. */
static void
simd_source (const CqSsimBand * band, CqSimdPlaneBand * s)
{
  const CqSsimPlane *p = band->plane;

  memset (s, 0, sizeof (*s));
  s->width = p->width;
  s->height = p->height;
  s->depth = p->layout.depth;
  if (use_simd (band->cpu, p)) {
    s->samples = CQ_SIMD_SAMPLES_U8;
    s->ref = band->ref + p->offset;
    s->dist = band->dist + p->offset;
    s->ref_stride = band->ref_stride;
    s->dist_stride = band->dist_stride;
  } else {
    s->samples = CQ_SIMD_SAMPLES_U16;
    s->ref = band->a;
    s->dist = band->b;
    s->ref_stride = s->dist_stride = p->width;
  }
  s->gauss = band->cpu->gauss;
  s->scratch = band->gauss_scratch;
}

/* gauss11 windows with the vectorised kernel (with the squared differences
 * band_unpack would sum, for 8-bit planes it did not unpack); with MS-SSIM,
 * also the contrast-structure sum of its first scale (the same windows). */
static void
band_gauss11_simd (CqSsimBand * band)
{
  const CqSsimCpu *cpu = band->cpu;
  const unsigned h = band->plane->height;
  CqSimdPlaneBand s;
  uint64_t sse;

  simd_source (band, &s);
  cq_ssim_window_constants (band->plane, CQ_SSIM_GAUSS11, &s.c1, &s.c2);
  band_range (h - 10, band->index, cpu->n_threads, &s.t0, &s.t1);
  s.sse_y1 = s.samples != CQ_SIMD_SAMPLES_U8 ? s.t0 :
      band->index + 1 == cpu->n_threads ? h : s.t1;
  s.cs = cpu->msssim;
  band->ssim_sum = cpu->simd->ssim_gauss11 (&s, &band->cs_sum, &sse);
  if (s.samples == CQ_SIMD_SAMPLES_U8)
    band->sse = sse;
}

/* The vectorised kernels' view of MS-SSIM's current scale: the first from
 * the frames (or band_unpack's rows), the others from their doubles. */
static void
simd_scale_source (const CqSsimBand * band, CqSimdPlaneBand * s)
{
  simd_source (band, s);
  if (band->ms_scale > 0) {
    s->samples = CQ_SIMD_SAMPLES_F64;
    s->ref = band->ms_a;
    s->dist = band->ms_b;
    s->ref_stride = s->dist_stride = band->ms_w;
    s->width = band->ms_w;
    s->height = band->ms_h;
  }
}

/* MS-SSIM, one scale, with the vectorised kernel. */
static void
band_ms_gauss_simd (CqSsimBand * band)
{
  CqSimdPlaneBand s;

  simd_scale_source (band, &s);
  cq_ssim_window_constants (band->plane, CQ_SSIM_GAUSS11, &s.c1, &s.c2);
  band_range (band->ms_h - 10, band->index, band->cpu->n_threads, &s.t0,
      &s.t1);
  s.cs = 1;
  band->ssim_sum = band->cpu->simd->ssim_gauss11 (&s, &band->cs_sum, NULL);
}

/* MS-SSIM: the band's rows of the next scale with the vectorised kernel. */
static void
band_ms_down_simd (CqSsimBand * band)
{
  CqSimdPlaneBand s;
  unsigned y0, y1;

  simd_scale_source (band, &s);
  band_range (band->ms_h / 2, band->index, band->cpu->n_threads, &y0, &y1);
  band->cpu->simd->ssim_ms_down (&s, y0, y1, band->ms_next_a,
      band->ms_next_b);
}

/* box8 and ffmpeg windows of band_unpack's rows with the vectorised kernels
 * (planes they do not read straight from the frames). */
static void
band_u16_simd (CqSsimBand * band)
{
  const CqSsimPlane *p = band->plane;
  const int box8 = band->cpu->window == CQ_SSIM_BOX8;
  CqSimdPlaneBand s;

  simd_source (band, &s);
  cq_ssim_window_constants (band->plane, band->cpu->window, &s.c1, &s.c2);
  band_range (box8 ? p->height - 7 : p->height / 4 - 1, band->index,
      band->cpu->n_threads, &s.t0, &s.t1);
  s.scratch = band->simd_scratch;
  band->ssim_sum = box8 ? band->cpu->simd->ssim_box8_u16 (&s) :
      band->cpu->simd->ssim_ffmpeg_u16 (&s);
}

/* Allocates the bands' gauss11 scratch. */
static int
alloc_gauss_scratch (CqSsimCpu * cpu)
{
  unsigned i;

  for (i = 0; i < cpu->n_threads; i++)
    if (!cpu->bands[i].gauss_scratch &&
        !(cpu->bands[i].gauss_scratch = malloc (cq_cpu_simd_gauss_scratch ())))
      return 0;
  return 1;
}

static void
band_task (void *user, unsigned index)
{
  CqSsimCpu *cpu = user;

  cpu->bands[index].func (&cpu->bands[index]);
}

/* Runs func on every band, on the worker pool. */
static void
run_bands (CqSsimCpu * cpu, BandFunc func)
{
  unsigned i;

  for (i = 0; i < cpu->n_threads; i++)
    cpu->bands[i].func = func;
  cq_pool_run (cpu->n_threads, band_task, cpu);
}

/* MS-SSIM of plane i (the bands already point at its frames). Scale s
 * is read from buffer s % 2 and the next one written into the other; the
 * vectorised kernels read the first scale from the frames (or band_unpack's
 * rows) instead of its doubles, and gauss11's SSIM pass has already summed
 * its contrast-structure terms. */
static void
measure_msssim (CqSsimCpu * cpu, unsigned i, CqSsimPlaneSums * sums)
{
  const CqSsimPlane *p = &cpu->planes[i];
  double **a = cpu->ms[i][0], **b = cpu->ms[i][1];
  unsigned s, k;

  for (s = 0; s < CQ_MSSSIM_SCALES; s++) {
    for (k = 0; k < cpu->n_threads; k++) {
      CqSsimBand *band = &cpu->bands[k];

      band->ms_scale = s;
      band->ms_a = a[s % 2];
      band->ms_b = b[s % 2];
      band->ms_next_a = a[(s + 1) % 2];
      band->ms_next_b = b[(s + 1) % 2];
      band->ms_w = p->width >> s;
      band->ms_h = p->height >> s;
    }
    if (cpu->simd) {
      if (s > 0 || cpu->window != CQ_SSIM_GAUSS11)
        run_bands (cpu, band_ms_gauss_simd);
    } else {
      if (s == 0) {
        for (k = 0; k < cpu->n_threads; k++) {
          cpu->bands[k].ms_next_a = a[0];
          cpu->bands[k].ms_next_b = b[0];
        }
        run_bands (cpu, band_ms_unpack);
        for (k = 0; k < cpu->n_threads; k++) {
          cpu->bands[k].ms_next_a = a[1];
          cpu->bands[k].ms_next_b = b[1];
        }
      }
      run_bands (cpu, band_ms_gauss);
    }
    sums->ms_sum[s] = 0.0;
    for (k = 0; k < cpu->n_threads; k++)
      sums->ms_sum[s] += s + 1 < CQ_MSSSIM_SCALES ? cpu->bands[k].cs_sum :
          cpu->bands[k].ssim_sum;
    if (s + 1 < CQ_MSSSIM_SCALES)
      run_bands (cpu, cpu->simd ? band_ms_down_simd : band_ms_down);
  }
}

CqStatus
cq_ssim_cpu_set_msssim (CqSsimCpu * cpu, int enable, CqError * err)
{
  unsigned i, f, k;

  if (enable && cq_ssim_msssim_check (cpu->planes, cpu->n_planes,
          err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  cpu->msssim = enable;
  for (i = 0; enable && i < cpu->n_planes; i++) {
    const CqSsimPlane *p = &cpu->planes[i];

    for (f = 0; f < 2; f++)
      for (k = 0; k < 2; k++) {
        const unsigned shift = k == 0 && cpu->simd ? 2 : k;
        size_t n = (size_t) (p->width >> shift) * (p->height >> shift);

        if (!cpu->ms[i][f][k] && !(cpu->ms[i][f][k] = malloc (n *
                    sizeof (double))))
          goto oom;
      }
  }
  if (enable && cpu->simd && !alloc_gauss_scratch (cpu))
    goto oom;
  return CQ_OK;

oom:
  cpu->msssim = 0;
  return cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY,
      "out of host memory for the MS-SSIM scales of a %ux%u plane",
      cpu->planes[0].width, cpu->planes[0].height);
}

CqSsimCpu *
cq_ssim_cpu_new (CqSsimWindow window, const CqSsimPlane * planes,
    unsigned n_planes, unsigned n_threads, CqError * err)
{
  CqSsimCpu *cpu;
  unsigned i, max_w = 0, max_h = 0, min_h = ~0u;

  if (cq_ssim_check (window, planes, n_planes, err) != CQ_OK)
    return NULL;
  for (i = 0; i < n_planes; i++) {
    if (planes[i].width > max_w)
      max_w = planes[i].width;
    if (planes[i].height > max_h)
      max_h = planes[i].height;
    if (planes[i].height < min_h)
      min_h = planes[i].height;
  }
  n_threads = cq_pool_split (n_threads, min_h / MIN_ROWS_PER_THREAD);

  cpu = calloc (1, sizeof (*cpu));
  if (!cpu)
    goto oom;
  cpu->window = window;
  cpu->n_planes = n_planes;
  cpu->n_threads = n_threads;
  memcpy (cpu->planes, planes, n_planes * sizeof (*planes));
  cq_ssim_gauss_weights (cpu->gauss);
  cpu->simd = cq_cpu_simd_kernels ();
  for (i = 0; i < n_planes; i++) {
    size_t n = (size_t) planes[i].width * planes[i].height;

    cpu->a[i] = malloc (n * sizeof (uint16_t));
    cpu->b[i] = malloc (n * sizeof (uint16_t));
    if (!cpu->a[i] || !cpu->b[i])
      goto oom;
  }
  cpu->bands = calloc (n_threads, sizeof (CqSsimBand));
  if (!cpu->bands)
    goto oom;
  for (i = 0; i < n_threads; i++) {
    CqSsimBand *b = &cpu->bands[i];

    b->cpu = cpu;
    b->index = i;
    b->cols = malloc (4 * sizeof (int64_t) * ((size_t) max_w + 4));
    b->vert = malloc (4 * sizeof (double) * ((size_t) max_w + 4));
    if (!b->cols || !b->vert)
      goto oom;
    if (cpu->simd && window != CQ_SSIM_GAUSS11) {
      size_t n = cq_cpu_simd_ssim_scratch (max_w, max_h);

      if (n < cq_cpu_simd_box8_u16_scratch (max_h))
        n = cq_cpu_simd_box8_u16_scratch (max_h);
      b->simd_scratch = malloc (n);
      if (!b->simd_scratch)
        goto oom;
    }
  }
  if (cpu->simd && window == CQ_SSIM_GAUSS11 && !alloc_gauss_scratch (cpu))
    goto oom;
  return cpu;

oom:
  cq_ssim_cpu_free (cpu);
  cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY,
      "out of host memory for the SSIM buffers of %u planes (%ux%u first)",
      n_planes, planes[0].width, planes[0].height);
  return NULL;
}

CqStatus
cq_ssim_cpu_measure (CqSsimCpu * cpu, const void *const *ref,
    const size_t *ref_strides, const void *const *dist,
    const size_t *dist_strides, CqSsimPlaneSums * sums, CqError * err)
{
  BandFunc windows = cpu->window == CQ_SSIM_BOX8 ? band_box8 :
      cpu->window == CQ_SSIM_FFMPEG ? band_ffmpeg : band_gauss11;
  unsigned i, k;

  for (i = 0; i < cpu->n_planes; i++) {
    const CqSsimPlane *p = &cpu->planes[i];
    size_t row_bytes = (size_t) (p->width - 1) * p->sample_stride +
        (p->layout.kind == CQ_LAYOUT_RGB8 ? p->sample_stride :
        p->offset + (p->layout.kind == CQ_LAYOUT_GRAY16 ? 2 : 1));

    if (ref_strides[i] < row_bytes || dist_strides[i] < row_bytes)
      return cq_error_set (err, CQ_ERROR_INVALID,
          "plane %u: row strides %zu and %zu are shorter than a row of %u "
          "samples (%zu bytes)", i, ref_strides[i], dist_strides[i],
          p->width, row_bytes);
  }
  for (i = 0; i < cpu->n_planes; i++) {
    CqSsimPlaneSums *s = &sums[i];

    for (k = 0; k < cpu->n_threads; k++) {
      CqSsimBand *b = &cpu->bands[k];

      b->plane = &cpu->planes[i];
      b->ref = ref[i];
      b->dist = dist[i];
      b->ref_stride = ref_strides[i];
      b->dist_stride = dist_strides[i];
      b->a = cpu->a[i];
      b->b = cpu->b[i];
    }
    if (cpu->simd && cpu->window == CQ_SSIM_GAUSS11) {
      if (!use_simd (cpu, &cpu->planes[i]))
        run_bands (cpu, band_unpack);
      run_bands (cpu, band_gauss11_simd);
    } else if (use_simd (cpu, &cpu->planes[i])) {
      run_bands (cpu, band_simd);
    } else if (cpu->simd) {
      run_bands (cpu, band_unpack);
      run_bands (cpu, band_u16_simd);
    } else {
      run_bands (cpu, band_unpack);
      run_bands (cpu, windows);
    }
    memset (s, 0, sizeof (*s));
    for (k = 0; k < cpu->n_threads; k++) {
      s->ssim_sum += cpu->bands[k].ssim_sum;
      s->sse += cpu->bands[k].sse;
    }
    if (cpu->msssim)
      measure_msssim (cpu, i, s);
    s->windows = cq_ssim_window_count (cpu->window, cpu->planes[i].width,
        cpu->planes[i].height);
    s->samples = (uint64_t) cpu->planes[i].width * cpu->planes[i].height;
  }
  return CQ_OK;
}

void
cq_ssim_cpu_free (CqSsimCpu * cpu)
{
  unsigned i;

  if (!cpu)
    return;
  if (cpu->bands) {
    for (i = 0; i < cpu->n_threads; i++) {
      free (cpu->bands[i].cols);
      free (cpu->bands[i].vert);
      free (cpu->bands[i].simd_scratch);
      free (cpu->bands[i].gauss_scratch);
    }
    free (cpu->bands);
  }
  for (i = 0; i < cpu->n_planes; i++) {
    free (cpu->a[i]);
    free (cpu->b[i]);
    free (cpu->ms[i][0][0]);
    free (cpu->ms[i][0][1]);
    free (cpu->ms[i][1][0]);
    free (cpu->ms[i][1][1]);
  }
  free (cpu);
}
