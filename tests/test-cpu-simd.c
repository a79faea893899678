/* CPU suite: the vectorised kernels (cq-cpu-simd.h) against the plain C,
 * bit for bit. Each case is measured with CQ_CPU_SIMD=none (the plain C),
 * =avx2 and unset (the best the CPU runs), forced through the dispatch, and
 * the SSIM sums (the double's bits, Σ (a - b)², MS-SSIM's five sums) and
 * the sharpness scores (the doubles' bits) must be identical: every window,
 * 8-bit planes and 10, 12 and 16-bit ones (sharpness: RGB too), random
 * sizes around the vector widths, chunks, strips and band splits, row
 * strides with padding, unaligned rows, 1 to 3 threads, random, extreme (0
 * against the largest value, salt and pepper) and smooth content, and a
 * plane set mixing 8-bit planes the kernels read from the frames with one
 * they do not. Where the CPU has no AVX2 (or the build no kernels) the
 * comparisons still run, plain against plain, and say so.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cpu-simd.h"
#include "cq-sharpness.h"
#include "cq-ssim.h"
#include "cq-test.h"

static int failures, cases;
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t
next (void)
{
  return (uint32_t) (cq_test_xorshift (&rng) >> 16);
}

static const char *const levels[] = { "none", "avx2", NULL /* unset */ };

#define N_LEVELS 3

static void
set_level (const char *level)
{
  if (level)
    setenv ("CQ_CPU_SIMD", level, 1);
  else
    unsetenv ("CQ_CPU_SIMD");
}

/* Fills h rows of stride bytes: kind 0 random, 1 constant v, 2 salt and
 * pepper, 3 smooth gradient with noise, 4 all 255 (the largest sample of
 * every depth), 5 255 with one byte in 8 at 254. */
static void
fill (uint8_t * p, unsigned h, size_t stride, int kind, uint8_t v)
{
  unsigned x, y;

  for (y = 0; y < h; y++)
    for (x = 0; x < stride; x++) {
      uint8_t *s = p + (size_t) y * stride + x;

      switch (kind) {
        case 0:
          *s = (uint8_t) next ();
          break;
        case 1:
          *s = v;
          break;
        case 2:
          *s = next () & 1 ? 255 : 0;
          break;
        case 4:
          *s = 255;
          break;
        case 5:
          *s = next () % 8 ? 255 : 254;
          break;
        default:
          *s = (uint8_t) ((x * 3 + y * 5) / 4 + (next () & 7));
          break;
      }
    }
}

/* Bytes a pixel and the layout of a case's "depth": 8 (GRAY8), 9 to 16
 * (GRAY16, the value in the high bits), 24 (RGB) or 32 (BGRx). */
static unsigned
case_bytes (unsigned depth)
{
  return depth >= 24 ? depth / 8 : depth > 8 ? 2 : 1;
}

static CqLayout
case_layout (unsigned depth)
{
  CqLayout l = { CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0 };

  if (depth >= 24) {
    CqLayout rgb = { CQ_LAYOUT_RGB8, 8, 0, depth / 8, depth == 32 ? 2 : 0, 1,
      depth == 32 ? 0 : 2
    };

    l = rgb;
  } else if (depth > 8) {
    l.kind = CQ_LAYOUT_GRAY16;
    l.depth = depth;
    l.shift = 16 - depth;
  }
  return l;
}

/* Sample x of a row of plane p, decoded here on its own (not by the
 * library's code): GRAY8 bytes, GRAY16 little-endian words shifted and
 * masked to their depth, RGB8's gray (299 R + 587 G + 114 B + 500) / 1000. */
static unsigned
naive_sample (const CqSsimPlane * p, const uint8_t * row, unsigned x)
{
  const uint8_t *s = row + (size_t) x * p->sample_stride;

  if (p->layout.kind == CQ_LAYOUT_RGB8)
    return (299u * s[p->layout.r_offset] + 587u * s[p->layout.g_offset] +
        114u * s[p->layout.b_offset] + 500u) / 1000u;
  if (p->layout.kind == CQ_LAYOUT_GRAY16)
    return ((s[p->offset] | (unsigned) s[p->offset + 1] << 8) >>
        p->layout.shift) & ((1u << p->layout.depth) - 1);
  return s[p->offset];
}

/* Σ (a - b)² of the plane pair (rows stride bytes apart from a and b), in
 * 64 bits, a sample at a time: the reference for every layout's SSE. */
static uint64_t
naive_sse (const CqSsimPlane * p, const uint8_t * a, const uint8_t * b,
    size_t stride)
{
  uint64_t sse = 0;
  unsigned x, y;

  for (y = 0; y < p->height; y++)
    for (x = 0; x < p->width; x++) {
      const int64_t d = (int64_t) naive_sample (p, a + y * stride, x) -
          naive_sample (p, b + y * stride, x);

      sse += (uint64_t) (d * d);
    }
  return sse;
}

/* A window's SSIM and, where msssim, MS-SSIM's five scales (gauss11), for
 * a plane of a case depth: 8-bit planes are read straight from the frames,
 * the others from the plain C's unpacked rows. */
static void
ssim_case (CqSsimWindow window, unsigned w, unsigned h, size_t pad,
    unsigned offset, unsigned threads, int kind_a, int kind_b,
    unsigned depth, int msssim)
{
  const unsigned bytes = case_bytes (depth);
  size_t stride = (size_t) w * bytes + offset + pad;
  uint8_t *a = malloc (stride * h), *b = malloc (stride * h);
  CqSsimPlaneSums sums[N_LEVELS];
  CqSsimPlane p;
  CqError err;
  unsigned l, s;

  fill (a, h, stride, kind_a, 0);
  fill (b, h, stride, kind_b, 255);
  p = cq_test_gray8_plane (w, h);
  p.layout = case_layout (depth);
  p.sample_stride = bytes;
  for (l = 0; l < N_LEVELS; l++) {
    const void *ra[1] = { a + offset }, *rb[1] = { b + offset };
    size_t st[1] = { stride };
    CqSsimCpu *cpu;

    set_level (levels[l]);
    cpu = cq_ssim_cpu_new (window, &p, 1, threads, &err);
    if (!cpu || (msssim && cq_ssim_cpu_set_msssim (cpu, 1, &err) != CQ_OK)
        || cq_ssim_cpu_measure (cpu, ra, st, rb, st, &sums[l],
            &err) != CQ_OK) {
      fprintf (stderr, "FAIL: %s %ux%u: %s\n", cq_ssim_window_name (window),
          w, h, err.message);
      failures++;
      cq_ssim_cpu_free (cpu);
      goto out;
    }
    cq_ssim_cpu_free (cpu);
    if (l == 0) {
      const uint64_t sse = naive_sse (&p, a + offset, b + offset, stride);

      if (sums[0].sse != sse) {
        fprintf (stderr, "FAIL: %s %ux%u depth %u stride %zu offset %u: "
            "the plain C's Σ (a - b)² %llu, a sample at a time %llu\n",
            cq_ssim_window_name (window), w, h, depth, stride, offset,
            (unsigned long long) sums[0].sse, (unsigned long long) sse);
        failures++;
      }
      continue;
    }
    for (s = 0; msssim && s < CQ_MSSSIM_SCALES; s++)
      if (memcmp (&sums[l].ms_sum[s], &sums[0].ms_sum[s],
              sizeof (double)) != 0) {
        fprintf (stderr, "FAIL: MS-SSIM (%s) %ux%u depth %u, %u threads, "
            "content %d/%d: scale %u, CQ_CPU_SIMD=%s gives %.17g, the plain "
            "C %.17g\n", cq_ssim_window_name (window), w, h, depth, threads,
            kind_a, kind_b, s,
            levels[l] ? levels[l] : "(unset)", sums[l].ms_sum[s],
            sums[0].ms_sum[s]);
        failures++;
      }
    if (memcmp (&sums[l].ssim_sum, &sums[0].ssim_sum, sizeof (double)) != 0
        || sums[l].sse != sums[0].sse || sums[l].windows != sums[0].windows) {
      fprintf (stderr, "FAIL: %s %ux%u depth %u stride %zu offset %u, "
          "%u threads, content %d/%d: CQ_CPU_SIMD=%s gives Σssim %.17g sse "
          "%llu, the plain C %.17g %llu\n", cq_ssim_window_name (window), w,
          h, depth, stride, offset,
          threads, kind_a, kind_b, levels[l] ? levels[l] : "(unset)",
          sums[l].ssim_sum, (unsigned long long) sums[l].sse,
          sums[0].ssim_sum, (unsigned long long) sums[0].sse);
      failures++;
    }
  }
out:
  cases++;
  free (a);
  free (b);
}

/* Every size of [w0, w1] x [h0, h1] (heights in steps of 4), then n random
 * sizes up to rw x rh larger, random content, pads, offsets and threads;
 * the depths cycle through 8, 10 (in the high bits), 12 and 16 bits. */
static void
ssim_sweep (CqSsimWindow window, unsigned w0, unsigned w1, unsigned h0,
    unsigned h1, unsigned n, unsigned rw, unsigned rh)
{
  static const unsigned depths[] = { 8, 10, 12, 16 };
  unsigned w, h, i;

  for (w = w0; w <= w1; w++)
    for (h = h0; h <= h1; h += 4)
      ssim_case (window, w, h, next () % 5, next () % 4, 1 + next () % 3,
          next () % 4, next () % 4, depths[(w + h) % 4], 0);
  for (i = 0; i < n; i++)
    ssim_case (window, w0 + next () % rw, h0 + next () % rh, next () % 70,
        next () % 4, 1 + next () % 3, next () % 4, next () % 4,
        depths[i % 4], 0);
}

/* Three planes: two 8-bit planes the kernels take (different sizes) and one
 * with a sample stride of 2 (interleaved, the plain C's). */
static void
ssim_mixed_planes (CqSsimWindow window, unsigned threads)
{
  const unsigned w = 203, h = 77;
  size_t stride = 2 * w + 13;
  uint8_t *a = malloc (stride * h), *b = malloc (stride * h);
  CqSsimPlaneSums sums[N_LEVELS][3];
  CqSsimPlane p[3];
  CqError err;
  unsigned l, i;

  fill (a, h, stride, 0, 0);
  fill (b, h, stride, 3, 0);
  memset (p, 0, sizeof (p));
  for (i = 0; i < 3; i++) {
    p[i].layout.kind = CQ_LAYOUT_GRAY8;
    p[i].layout.depth = 8;
    p[i].sample_stride = 1;
  }
  p[0].width = w;
  p[0].height = h;
  p[1].width = w / 2 + 1;
  p[1].height = h / 2 + 3;
  p[2].width = w;
  p[2].height = h / 2;
  p[2].sample_stride = 2;
  p[2].offset = 1;
  for (l = 0; l < N_LEVELS; l++) {
    const void *ra[3] = { a, b + 5, a }, *rb[3] = { b, a + 5, b };
    size_t st[3] = { stride, stride, stride };
    CqSsimCpu *cpu;

    set_level (levels[l]);
    cpu = cq_ssim_cpu_new (window, p, 3, threads, &err);
    if (!cpu || cq_ssim_cpu_measure (cpu, ra, st, rb, st, sums[l],
            &err) != CQ_OK) {
      fprintf (stderr, "FAIL: mixed planes: %s\n", err.message);
      failures++;
      cq_ssim_cpu_free (cpu);
      break;
    }
    cq_ssim_cpu_free (cpu);
    for (i = 0; l > 0 && i < 3; i++)
      if (memcmp (&sums[l][i].ssim_sum, &sums[0][i].ssim_sum,
              sizeof (double)) != 0 || sums[l][i].sse != sums[0][i].sse) {
        fprintf (stderr, "FAIL: mixed planes, %s, plane %u, CQ_CPU_SIMD=%s: "
            "%.17g %llu against %.17g %llu\n", cq_ssim_window_name (window),
            i, levels[l] ? levels[l] : "(unset)", sums[l][i].ssim_sum,
            (unsigned long long) sums[l][i].sse, sums[0][i].ssim_sum,
            (unsigned long long) sums[0][i].sse);
        failures++;
      }
  }
  cases++;
  free (a);
  free (b);
}

/* An interleaved plane (samples ss bytes apart: NV12's chroma, RGB's
 * channels, P010's chroma) against the same samples side by side (GRAY8
 * at stride 1, GRAY16 at 2): the same sums at every level, so that the
 * strided unpacking (cq_gray8_row, cq_gray16_strided_row) is checked
 * against the one the frames' own kernels take. */
static void
ssim_strided_case (CqSsimWindow window, unsigned w, unsigned h, unsigned ss,
    unsigned offset, unsigned depth, unsigned threads)
{
  const unsigned bytes = depth > 8 ? 2 : 1;
  const size_t ds = (size_t) w * bytes + 3, is = (size_t) w * ss + 5;
  uint8_t *da = malloc (ds * h), *db = malloc (ds * h);
  uint8_t *ia = malloc (is * h), *ib = malloc (is * h);
  CqSsimPlane pd = cq_test_gray8_plane (w, h), pi;
  CqSsimPlaneSums dense, inter;
  CqError err;
  unsigned l, x, y, k;

  fill (da, h, ds, 0, 0);
  fill (db, h, ds, 3, 0);
  fill (ia, h, is, 2, 0);
  fill (ib, h, is, 0, 0);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      for (k = 0; k < bytes; k++) {
        ia[y * is + offset + (size_t) x * ss + k] = da[y * ds + x * bytes + k];
        ib[y * is + offset + (size_t) x * ss + k] = db[y * ds + x * bytes + k];
      }
  pd.layout = case_layout (depth);
  pd.sample_stride = bytes;
  pi = pd;
  pi.sample_stride = ss;
  pi.offset = offset;
  for (l = 0; l < N_LEVELS; l++) {
    const void *a1[1] = { da }, *b1[1] = { db };
    const void *a2[1] = { ia }, *b2[1] = { ib };
    size_t s1[1] = { ds }, s2[1] = { is };
    CqSsimCpu *cd, *ci;

    set_level (levels[l]);
    cd = cq_ssim_cpu_new (window, &pd, 1, threads, &err);
    ci = cq_ssim_cpu_new (window, &pi, 1, threads, &err);
    if (!cd || !ci || cq_ssim_cpu_measure (cd, a1, s1, b1, s1, &dense,
            &err) != CQ_OK || cq_ssim_cpu_measure (ci, a2, s2, b2, s2,
            &inter, &err) != CQ_OK) {
      fprintf (stderr, "FAIL: strided %s %ux%u: %s\n",
          cq_ssim_window_name (window), w, h, err.message);
      failures++;
    } else if (memcmp (&dense.ssim_sum, &inter.ssim_sum, sizeof (double))
        != 0 || dense.sse != inter.sse) {
      fprintf (stderr, "FAIL: %s %ux%u depth %u, samples %u bytes apart, "
          "CQ_CPU_SIMD=%s: Σssim %.17g sse %llu, side by side %.17g %llu\n",
          cq_ssim_window_name (window), w, h, depth, ss,
          levels[l] ? levels[l] : "(unset)", inter.ssim_sum,
          (unsigned long long) inter.sse, dense.ssim_sum,
          (unsigned long long) dense.sse);
      failures++;
    }
    cq_ssim_cpu_free (cd);
    cq_ssim_cpu_free (ci);
  }
  cases++;
  free (da);
  free (db);
  free (ia);
  free (ib);
}

/* Columns of pixels of bpp bytes, 0, 0, the largest value, the largest
 * value, and so on: Gx = ±4 m at every pixel, Tenengrad's largest sum for
 * a frame. */
static void
fill_stripes (uint8_t * p, unsigned h, size_t stride, unsigned bpp)
{
  unsigned x, y;

  for (y = 0; y < h; y++)
    for (x = 0; x < stride; x++)
      p[(size_t) y * stride + x] = (x / bpp) % 4 < 2 ? 0 : 255;
}

/* kind: fill's, or 4 fill_stripes */
static void
sharpness_case (unsigned metrics, unsigned w, unsigned h, size_t pad,
    unsigned threads, int kind, unsigned depth)
{
  const CqLayout layout = case_layout (depth);
  size_t stride = (size_t) w * case_bytes (depth) + pad;
  uint8_t *f = malloc (stride * h);
  double scores[N_LEVELS][CQ_METRIC_COUNT];
  CqError err;
  unsigned l, k;

  if (kind == 4)
    fill_stripes (f, h, stride, case_bytes (depth));
  else
    fill (f, h, stride, kind, 128);
  memset (scores, 0, sizeof (scores));
  for (l = 0; l < N_LEVELS; l++) {
    CqSharpnessCpu *cpu;

    set_level (levels[l]);
    cpu = cq_sharpness_cpu_new (&layout, w, h, metrics, threads, &err);
    if (!cpu || cq_sharpness_cpu_measure (cpu, f, stride, scores[l],
            &err) != CQ_OK) {
      fprintf (stderr, "FAIL: sharpness %ux%u: %s\n", w, h, err.message);
      failures++;
      cq_sharpness_cpu_free (cpu);
      break;
    }
    cq_sharpness_cpu_free (cpu);
    for (k = 0; l > 0 && k < CQ_METRIC_COUNT; k++)
      if ((metrics & (1u << k)) && memcmp (&scores[l][k], &scores[0][k],
              sizeof (double)) != 0) {
        fprintf (stderr, "FAIL: sharpness %s %ux%u depth %u stride %zu, %u "
            "threads, content %d, metrics 0x%x: CQ_CPU_SIMD=%s gives %.17g, "
            "the plain C %.17g\n", cq_metric_name (k), w, h, depth, stride,
            threads, kind, metrics, levels[l] ? levels[l] : "(unset)",
            scores[l][k], scores[0][k]);
        failures++;
      }
  }
  cases++;
  free (f);
}

int
main (void)
{
  const CqSimdKernels *k;
  unsigned i, w, h, m, d;

  unsetenv ("CQ_CPU_SIMD");
  k = cq_cpu_simd_kernels ();
  printf ("kernels: %s\n", k ? k->name : "none (plain C against itself)");
  setenv ("CQ_CPU_SIMD", "avx2", 1);
  k = cq_cpu_simd_kernels ();
  printf ("CQ_CPU_SIMD=avx2: %s\n", k ? k->name : "none");

  /* every small size around the vector widths, both windows */
  for (w = 8; w <= 44; w++)
    for (h = 8; h <= 44; h += 3) {
      ssim_case (CQ_SSIM_BOX8, w, h, next () % 5, next () % 4,
          1 + next () % 3, 0, 0, 8, 0);
      ssim_case (CQ_SSIM_FFMPEG, w, h, next () % 5, next () % 4,
          1 + next () % 3, 0, 3, 8, 0);
    }
  /* random larger sizes and content, extremes included */
  for (i = 0; i < 150; i++) {
    w = 8 + next () % 700;
    h = 8 + next () % 200;
    ssim_case (i & 1 ? CQ_SSIM_BOX8 : CQ_SSIM_FFMPEG, w, h, next () % 70,
        next () % 4, 1 + next () % 3, next () % 4, next () % 4, 8, 0);
  }
  for (i = 0; i < 4; i++) {
    /* 0 against 255, salt and pepper */
    ssim_case (CQ_SSIM_BOX8, 300 + i, 40 + i, 0, 0, 2, 1, 1, 8, 0);
    ssim_case (CQ_SSIM_FFMPEG, 300 + i, 40 + i, 0, 0, 2, 1, 1, 8, 0);
    ssim_case (CQ_SSIM_BOX8, 300 + i, 40 + i, 0, 0, 2, 2, 2, 8, 0);
    ssim_case (CQ_SSIM_FFMPEG, 300 + i, 40 + i, 0, 0, 2, 2, 2, 8, 0);
  }
  ssim_case (CQ_SSIM_FFMPEG, 1920, 1080, 64, 0, 2, 3, 0, 8, 0);
  ssim_case (CQ_SSIM_BOX8, 1920, 1080, 0, 0, 1, 3, 0, 8, 0);
  ssim_case (CQ_SSIM_FFMPEG, CQ_CPU_SIMD_MAX_WIDTH, 24, 0, 0, 1, 2, 2, 8, 0);
  ssim_case (CQ_SSIM_BOX8, CQ_CPU_SIMD_MAX_WIDTH, 16, 0, 0, 1, 2, 2, 8, 0);
  ssim_case (CQ_SSIM_BOX8, CQ_CPU_SIMD_MAX_WIDTH + 5, 16, 0, 0, 1, 2, 2, 8,
      0);
  for (i = 1; i <= 3; i++) {
    ssim_mixed_planes (CQ_SSIM_BOX8, i);
    ssim_mixed_planes (CQ_SSIM_FFMPEG, i);
    ssim_mixed_planes (CQ_SSIM_GAUSS11, i);
  }

  /* gauss11: sizes around the vector widths, the chunks and the band
   * splits; 8-bit, 10-bit in the high bits and 16-bit samples */
  ssim_sweep (CQ_SSIM_GAUSS11, 11, 45, 11, 27, 60, 500, 120);
  for (i = 0; i < 4; i++) {
    /* 0 against 255, salt and pepper */
    ssim_case (CQ_SSIM_GAUSS11, 300 + i, 40 + i, 0, 0, 2, 1, 1, 8, 0);
    ssim_case (CQ_SSIM_GAUSS11, 300 + i, 40 + i, 0, 0, 2, 2, 2, 8, 0);
    ssim_case (CQ_SSIM_GAUSS11, 300 + i, 40 + i, 0, 0, 2, 2, 2, 16, 0);
  }
  /* box8 and ffmpeg on unpacked rows (and 8-bit planes), sizes around the
   * vector widths and the strips */
  ssim_sweep (CQ_SSIM_BOX8, 8, 30, 8, 20, 30, 600, 100);
  /* 8-bit box8 around the strips' edges (AVX2 walks the band in strips of
   * CQ_CPU_SIMD_BOX8_STRIP windows): the last strip with 0 to 9 windows
   * past the others and a part of a vector of columns */
  for (w = CQ_CPU_SIMD_BOX8_STRIP + 2; w <= CQ_CPU_SIMD_BOX8_STRIP + 17; w++)
    ssim_case (CQ_SSIM_BOX8, w, 9 + w % 13, next () % 9, next () % 4,
        1 + w % 3, next () % 4, next () % 4, 8, 0);
  for (w = 2 * CQ_CPU_SIMD_BOX8_STRIP + 5; w <= 2 * CQ_CPU_SIMD_BOX8_STRIP + 9;
      w++)
    ssim_case (CQ_SSIM_BOX8, w, 30 + w % 7, next () % 9, next () % 4,
        1 + w % 3, next () % 4, next () % 4, 8, 0);
  /* tall and narrow: a band's running sums outweigh the full-row arrays in
   * the scratch */
  ssim_case (CQ_SSIM_BOX8, 64, 1500, 0, 0, 1, 0, 3, 8, 0);
  ssim_case (CQ_SSIM_BOX8, 300, 2100, 5, 1, 2, 3, 0, 8, 0);
  ssim_sweep (CQ_SSIM_FFMPEG, 8, 40, 8, 20, 30, 600, 100);
  for (i = 0; i < 3; i++) {
    ssim_case (CQ_SSIM_BOX8, 300 + i, 40 + i, 0, 0, 2, 2, 2, 16, 0);
    ssim_case (CQ_SSIM_BOX8, 300 + i, 40 + i, 0, 0, 2, 1, 1, 16, 0);
  }
  /* box8 and ffmpeg on unpacked rows at the largest sums of their 32-bit
   * lanes (12 bits: a window's Σ (a² + b²) up to 64 · 2 · 4095², below
   * 2^31; up to 10 bits box8's Σa and Σb share a lane, up to 65,472 each):
   * both planes at or near their largest value, 10, 12 and 16 bits and
   * RGB's gray, sizes across the strips' edges */
  for (i = 0; i < 32; i++)
    ssim_case (i % 2 ? CQ_SSIM_FFMPEG : CQ_SSIM_BOX8, i < 16 ? 8 + 21 * i :
        CQ_CPU_SIMD_BOX8_STRIP + i, 8 + 5 * (i % 7), i % 5, i % 4, 1 + i % 3,
        i % 8 < 4 ? 4 : 5, i % 4 < 2 ? 4 : 5, i / 2 % 4 == 0 ? 10 :
        i / 2 % 4 == 1 ? 12 : i / 2 % 4 == 2 ? 16 : 24, 0);
  /* interleaved planes against the same samples side by side: 8-bit
   * samples 2, 3 and 4 bytes apart, 10 and 16-bit ones 4 and 6 */
  for (i = 0; i < 30; i++) {
    static const unsigned ss8[] = { 2, 3, 4 }, ss16[] = { 4, 6 };
    const unsigned depth = i % 3 == 0 ? 8 : i % 3 == 1 ? 10 : 16;
    const unsigned ss = depth == 8 ? ss8[i / 3 % 3] : ss16[i / 3 % 2];

    ssim_strided_case (i % 5 == 0 ? CQ_SSIM_GAUSS11 : i % 2 ? CQ_SSIM_BOX8 :
        CQ_SSIM_FFMPEG, 11 + next () % 300, 11 + next () % 40, ss,
        next () % (ss - (depth > 8 ? 1 : 0)), depth, 1 + next () % 3);
  }
  /* RGB and BGRx planes (converted to gray by the kernels), every window */
  for (i = 0; i < 30; i++)
    ssim_case (i % 3 == 0 ? CQ_SSIM_GAUSS11 : i % 3 == 1 ? CQ_SSIM_BOX8 :
        CQ_SSIM_FFMPEG, 11 + next () % 300, 11 + next () % 50, next () % 9,
        next () % 4, 1 + next () % 3, next () % 4, next () % 4,
        i % 2 ? 24 : 32, 0);
  /* MS-SSIM after each window (its first scale from the frames, or the
   * unpacked rows; gauss11's from the SSIM pass), odd sizes on the way */
  for (i = 0; i < 18; i++)
    ssim_case (i % 3 == 0 ? CQ_SSIM_GAUSS11 : i % 3 == 1 ? CQ_SSIM_BOX8 :
        CQ_SSIM_FFMPEG, 176 + next () % 200, 176 + next () % 60,
        next () % 9, next () % 4, 1 + next () % 3, next () % 4, 3,
        i % 6 < 3 ? 8 : i % 6 == 3 ? 10 : 16, 1);
  ssim_case (CQ_SSIM_GAUSS11, 1920, 1080, 64, 0, 2, 3, 0, 8, 0);
  ssim_case (CQ_SSIM_GAUSS11, 1920, 1080, 0, 0, 1, 3, 0, 8, 1);
  ssim_case (CQ_SSIM_BOX8, 1920, 1080, 0, 0, 2, 3, 0, 8, 1);
  ssim_case (CQ_SSIM_GAUSS11, CQ_CPU_SIMD_MAX_WIDTH + 5, 12, 0, 0, 1, 2, 2,
      8, 0);
  ssim_case (CQ_SSIM_GAUSS11, CQ_CPU_SIMD_MAX_WIDTH + 5, 180, 0, 0, 2, 0, 3, 8,
      1);

  /* sharpness: tiny frames (every edge rule), sizes around V + 3; 8-bit
   * frames, and 10, 12 and 16-bit ones (unpacked by the kernels; 12 and
   * 16 bits add their products in 64-bit lanes) */
  for (d = 0; d < 4; d++)
    for (w = 1; w <= 40; w++)
      for (h = 1; h <= 9; h += 2)
        sharpness_case (CQ_METRIC_ALL, w, h, next () % 5, 1 + next () % 3,
            next () % 4, d < 3 ? 8 + 2 * d : 16);
  for (i = 0; i < 180; i++) {
    m = i % 3 == 0 ? CQ_METRIC_ALL : i % 3 == 1 ? CQ_METRIC_DEFAULT :
        1u << (next () % CQ_METRIC_COUNT);
    sharpness_case (m, 1 + next () % 1100, 1 + next () % 300, next () % 70,
        1 + next () % 3, next () % 4, i < 120 ? 8 : i % 3 == 0 ? 10 :
        i % 3 == 1 ? 12 : 16);
  }
  sharpness_case (CQ_METRIC_ALL, 1920, 1080, 0, 2, 0, 8);
  sharpness_case (CQ_METRIC_ALL, 1920, 1080, 32, 1, 2, 8);
  sharpness_case (CQ_METRIC_DEFAULT, 4100, 64, 0, 1, 2, 8);
  /* RGB and BGRx, converted to gray by the kernels */
  for (i = 0; i < 40; i++)
    sharpness_case (i % 2 ? CQ_METRIC_ALL : CQ_METRIC_DEFAULT,
        1 + next () % 300, 1 + next () % 60, next () % 9, 1 + next () % 3,
        next () % 4, i % 4 < 2 ? 24 : 32);
  /* the largest 12-bit terms: salt and pepper of 0 and 4095 */
  sharpness_case (CQ_METRIC_ALL, 1920, 40, 0, 1, 2, 12);
  sharpness_case (CQ_METRIC_ALL, 4100, 24, 0, 2, 2, 10);
  sharpness_case (CQ_METRIC_ALL, 333, 50, 0, 2, 0, 16);
  /* the largest 16-bit terms (salt and pepper of 0, 255, 65280 and 65535),
   * and the widest rows */
  sharpness_case (CQ_METRIC_ALL, 1920, 40, 0, 1, 2, 16);
  sharpness_case (CQ_METRIC_ALL, 1001, 30, 6, 3, 2, 16);
  sharpness_case (CQ_METRIC_ALL, CQ_CPU_SIMD_MAX_WIDTH, 5, 0, 1, 2, 16);
  sharpness_case (CQ_METRIC_ALL, CQ_CPU_SIMD_MAX_WIDTH, 5, 0, 1, 2, 12);
  /* Tenengrad's largest terms at every pixel, the lane sums' worst case */
  for (d = 0; d < 6; d++)
    sharpness_case (CQ_METRIC_ALL, CQ_CPU_SIMD_MAX_WIDTH, 4, 0, 1, 4,
        d < 3 ? 8 + 2 * d : d == 3 ? 16 : d == 4 ? 24 : 32);

  printf ("%d cases, %d failures\n", cases, failures);
  return failures ? 1 : 0;
}
