/* CPU suite: the compute library's SSIM, MSE and PSNR against hand-computed
 * cases, the naive double-precision references of ssim-reference.h and the
 * x264 integer formula written in the test.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cq-ssim.h"
#include "cq-test.h"
#include "ssim-reference.h"

static const CqSsimWindow windows[] = {
  CQ_SSIM_BOX8, CQ_SSIM_FFMPEG, CQ_SSIM_GAUSS11
};

static guint32 rng_state = 12345;
static gboolean with_msssim;    /* measure_ints adds MS-SSIM */

static guint32
rng (void)
{
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

static CqSsimPlane
gray_plane (unsigned w, unsigned h, unsigned depth)
{
  CqSsimPlane p;

  memset (&p, 0, sizeof (p));
  p.width = w;
  p.height = h;
  p.layout.kind = depth > 8 ? CQ_LAYOUT_GRAY16 : CQ_LAYOUT_GRAY8;
  p.layout.depth = depth;
  p.sample_stride = depth > 8 ? 2 : 1;
  return p;
}

/* Stores int images in a plane's layout (GRAY8/GRAY16 packed, stride with
 * padding) and measures them. */
static CqSsimPlaneSums
measure_ints (CqSsimWindow window, const int *a, const int *b, unsigned w,
    unsigned h, unsigned depth, unsigned n_threads)
{
  CqSsimPlane p = gray_plane (w, h, depth);
  unsigned bytes = depth > 8 ? 2 : 1;
  size_t stride = (size_t) w * bytes + 5;
  guint8 *da = g_malloc0 (stride * h), *db = g_malloc0 (stride * h);
  const void *ra[1] = { da }, *rb[1] = { db };
  size_t strides[1] = { stride };
  CqSsimPlaneSums sums;
  CqSsimCpu *cpu;
  CqError err;
  unsigned x, y;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      if (bytes == 1) {
        da[y * stride + x] = (guint8) a[y * w + x];
        db[y * stride + x] = (guint8) b[y * w + x];
      } else {
        GST_WRITE_UINT16_LE (da + y * stride + 2 * x, a[y * w + x]);
        GST_WRITE_UINT16_LE (db + y * stride + 2 * x, b[y * w + x]);
      }
    }
  cpu = cq_ssim_cpu_new (window, &p, 1, n_threads, &err);
  fail_unless (cpu != NULL, "%s", err.message);
  if (with_msssim)
    fail_unless_equals_int (cq_ssim_cpu_set_msssim (cpu, 1, &err), CQ_OK);
  fail_unless_equals_int (cq_ssim_cpu_measure (cpu, ra, strides, rb, strides,
          &sums, &err), CQ_OK);
  cq_ssim_cpu_free (cpu);
  g_free (da);
  g_free (db);
  return sums;
}

static double
mean_ssim (const CqSsimPlaneSums * s)
{
  return s->ssim_sum / (double) s->windows;
}

static int *
random_image (unsigned n, unsigned depth)
{
  int *img = g_new (int, n);
  unsigned i;

  for (i = 0; i < n; i++)
    img[i] = rng () & ((1u << depth) - 1);
  return img;
}

/* A distorted copy: noise of +-amp around a, clamped. */
static int *
distort (const int *a, unsigned n, unsigned depth, int amp)
{
  int *b = g_new (int, n), peak = (1 << depth) - 1;
  unsigned i;

  for (i = 0; i < n; i++) {
    int v = a[i] + (int) (rng () % (2 * amp + 1)) - amp;
    b[i] = v < 0 ? 0 : v > peak ? peak : v;
  }
  return b;
}

/* Smooth content with texture, so that SSIM is neither 0 nor 1. */
static int *
smooth_image (unsigned w, unsigned h, unsigned depth)
{
  int *img = g_new (int, w * h), peak = (1 << depth) - 1;
  unsigned x, y;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      double v = 0.5 + 0.35 * sin (x * 0.21 + y * 0.05) * cos (y * 0.17) +
          0.1 * ((rng () % 1000) / 1000.0 - 0.5);
      img[y * w + x] = (int) lround (v * peak);
    }
  return img;
}

GST_START_TEST (test_identical_is_one)
{
  const unsigned sizes[][2] = { {11, 11}, {16, 8 + 8}, {37, 29}, {64, 48} };
  unsigned k, i;

  for (k = 0; k < G_N_ELEMENTS (sizes); k++) {
    unsigned w = sizes[k][0], h = sizes[k][1];
    int *a = smooth_image (w, h, 8);

    for (i = 0; i < G_N_ELEMENTS (windows); i++) {
      CqSsimPlane p = gray_plane (w, h, 8);
      CqSsimPlaneSums s = measure_ints (windows[i], a, a, w, h, 8, 0);
      double ssim, mse, psnr;

      cq_ssim_plane_scores (&p, &s, &ssim, &mse, &psnr);
      fail_unless (ssim == 1.0, "%s %ux%u: ssim %.17g",
          cq_ssim_window_name (windows[i]), w, h, ssim);
      fail_unless (mse == 0.0 && isinf (psnr) && psnr > 0,
          "mse %g psnr %g", mse, psnr);
      fail_unless_equals_uint64 (s.windows,
          cq_ssim_window_count (windows[i], w, h));
    }
    g_free (a);
  }
}

GST_END_TEST;

/* Two constant frames: the structure term is C2/C2 = 1, SSIM is the
 * luminance term alone: (2·100·50 + C1) / (100² + 50² + C1). */
GST_START_TEST (test_constant_frames_by_hand)
{
  const double c1 = (0.01 * 255) * (0.01 * 255);
  const double want = (2 * 100.0 * 50.0 + c1) / (100.0 * 100 + 50.0 * 50 + c1);
  /* x264: s1 = 6400, s2 = 3200, vars = covar = 0, c1 = 416, c2 = 235963 */
  const float want_x264 = (float) (2 * 6400 * 3200 + 416) * (float) 235963 /
      ((float) (6400 * 6400 + 3200 * 3200 + 416) * (float) 235963);
  int a[12 * 12], b[12 * 12];
  unsigned i;

  for (i = 0; i < 144; i++) {
    a[i] = 100;
    b[i] = 50;
  }
  {
    CqSsimPlaneSums s = measure_ints (CQ_SSIM_BOX8, a, b, 8, 8, 8, 1);
    fail_unless_equals_uint64 (s.windows, 1);
    fail_unless (fabs (mean_ssim (&s) - want) < 1e-15, "box8 %.17g vs %.17g",
        mean_ssim (&s), want);
    fail_unless_equals_uint64 (s.sse, 64 * 2500);
  }
  {
    CqSsimPlaneSums s = measure_ints (CQ_SSIM_FFMPEG, a, b, 8, 8, 8, 1);
    fail_unless_equals_uint64 (s.windows, 1);
    fail_unless (s.ssim_sum == (double) want_x264, "ffmpeg %.17g vs %.17g",
        s.ssim_sum, (double) want_x264);
  }
  {
    CqSsimPlaneSums s = measure_ints (CQ_SSIM_GAUSS11, a, b, 11, 11, 8, 1);
    fail_unless_equals_uint64 (s.windows, 1);
    fail_unless (fabs (mean_ssim (&s) - want) < 1e-13,
        "gauss11 %.17g vs %.17g", mean_ssim (&s), want);
  }
}

GST_END_TEST;

/* An 8x8 checkerboard of 0/255 against its inverse: equal means 127.5,
 * variances σ² = 64·127.5²/63, covariance -σ²:
 * SSIM = 1 · (C2 - 2σ²) / (C2 + 2σ²). */
GST_START_TEST (test_inverted_checkerboard_by_hand)
{
  const double c2 = (0.03 * 255) * (0.03 * 255);
  const double var = 64.0 * 127.5 * 127.5 / 63.0;
  const double want = (c2 - 2 * var) / (c2 + 2 * var);
  int a[64], b[64];
  unsigned i;

  for (i = 0; i < 64; i++) {
    a[i] = ((i % 8) + (i / 8)) % 2 ? 255 : 0;
    b[i] = 255 - a[i];
  }
  {
    CqSsimPlaneSums s = measure_ints (CQ_SSIM_BOX8, a, b, 8, 8, 8, 1);
    fail_unless (fabs (mean_ssim (&s) - want) < 1e-15, "%.17g vs %.17g",
        mean_ssim (&s), want);
    fail_unless_equals_uint64 (s.sse, 64ull * 255 * 255);
  }
}

GST_END_TEST;

/* Random and smooth frames of odd sizes at 8, 10 and 16 bits against the
 * naive references. */
GST_START_TEST (test_against_naive_reference)
{
  const unsigned sizes[][2] = { {8, 8}, {11, 11}, {13, 9}, {37, 29},
  {64, 40}, {101, 23}
  };
  const unsigned depths[] = { 8, 10, 16 };
  unsigned k, d, pass;

  for (k = 0; k < G_N_ELEMENTS (sizes); k++)
    for (d = 0; d < G_N_ELEMENTS (depths); d++)
      for (pass = 0; pass < 2; pass++) {
        unsigned w = sizes[k][0], h = sizes[k][1], n = w * h;
        unsigned depth = depths[d];
        int peak = (1 << depth) - 1;
        int *a = pass ? smooth_image (w, h, depth) : random_image (n, depth);
        int *b = distort (a, n, depth, peak / 8 + 1);
        CqSsimPlaneSums s;

        s = measure_ints (CQ_SSIM_BOX8, a, b, w, h, depth, 0);
        fail_unless (fabs (mean_ssim (&s) - ref_ssim_box8 (a, b, w, h,
                    peak)) < 1e-12, "box8 %ux%u@%u: %.17g vs %.17g", w, h,
            depth, mean_ssim (&s), ref_ssim_box8 (a, b, w, h, peak));
        fail_unless (fabs ((double) s.sse / n - ref_mse (a, b, n)) <
            1e-9 * (1 + ref_mse (a, b, n)));

        s = measure_ints (CQ_SSIM_FFMPEG, a, b, w, h, depth, 0);
        fail_unless (fabs (mean_ssim (&s) - ref_ffmpeg_frame (a, b, w, h,
                    peak)) < 1e-6, "ffmpeg %ux%u@%u: %.17g vs %.17g", w, h,
            depth, mean_ssim (&s), ref_ffmpeg_frame (a, b, w, h, peak));
        fail_unless_equals_uint64 (s.sse, ref_sse (a, b, n));

        if (w >= 11 && h >= 11) {
          s = measure_ints (CQ_SSIM_GAUSS11, a, b, w, h, depth, 0);
          fail_unless (fabs (mean_ssim (&s) - ref_ssim_gauss11 (a, b, w, h,
                      peak)) < 1e-12, "gauss11 %ux%u@%u: %.17g vs %.17g", w,
              h, depth, mean_ssim (&s), ref_ssim_gauss11 (a, b, w, h, peak));
        }
        g_free (a);
        g_free (b);
      }
}

GST_END_TEST;

/* Per-window x264 values: one thread adds them in the order the test does,
 * so the sums are equal only if every float window value is. */
GST_START_TEST (test_ffmpeg_windows_bit_identical)
{
  const unsigned sizes[][2] = { {8, 8}, {19, 14}, {64, 36}, {130, 66} };
  const unsigned depths[] = { 8, 10, 12, 16 };
  unsigned k, d;

  for (k = 0; k < G_N_ELEMENTS (sizes); k++)
    for (d = 0; d < G_N_ELEMENTS (depths); d++) {
      unsigned w = sizes[k][0], h = sizes[k][1], n = w * h;
      unsigned depth = depths[d];
      int peak = (1 << depth) - 1;
      int *a = smooth_image (w, h, depth);
      int *b = distort (a, n, depth, peak / 10 + 1);
      CqSsimPlaneSums s = measure_ints (CQ_SSIM_FFMPEG, a, b, w, h, depth, 1);
      double want = ref_ffmpeg_sum_exact_order (a, b, w, h, peak);

      fail_unless (s.ssim_sum == want, "%ux%u@%u: %.17g vs %.17g", w, h,
          depth, s.ssim_sum, want);
      g_free (a);
      g_free (b);
    }
}

GST_END_TEST;

GST_START_TEST (test_symmetry_and_threads)
{
  const unsigned w = 93, h = 71, n = w * h;
  int *a = smooth_image (w, h, 8), *b = distort (a, n, 8, 20);
  unsigned i;

  for (i = 0; i < G_N_ELEMENTS (windows); i++) {
    CqSsimPlaneSums ab = measure_ints (windows[i], a, b, w, h, 8, 1);
    CqSsimPlaneSums ba = measure_ints (windows[i], b, a, w, h, 8, 1);
    CqSsimPlaneSums t4 = measure_ints (windows[i], a, b, w, h, 8, 4);

    fail_unless (ab.ssim_sum == ba.ssim_sum, "%s: %.17g vs %.17g",
        cq_ssim_window_name (windows[i]), ab.ssim_sum, ba.ssim_sum);
    fail_unless_equals_uint64 (ab.sse, ba.sse);
    fail_unless (fabs (ab.ssim_sum - t4.ssim_sum) < 1e-12 * ab.windows,
        "threads change %s", cq_ssim_window_name (windows[i]));
    fail_unless_equals_uint64 (ab.sse, t4.sse);
  }
  g_free (a);
  g_free (b);
}

GST_END_TEST;

/* Interleaved chroma, a packed RGB channel and the gray of packed RGB give
 * the values of the same samples stored as a plain plane. */
GST_START_TEST (test_layouts)
{
  const unsigned w = 40, h = 24, n = w * h;
  int *r = smooth_image (w, h, 8), *g = smooth_image (w, h, 8);
  int *bl = random_image (n, 8);
  int *r2 = distort (r, n, 8, 9), *g2 = distort (g, n, 8, 9);
  int *b2 = distort (bl, n, 8, 9);
  guint8 *rgb[2];
  int *gray[2];
  unsigned i, k;

  for (k = 0; k < 2; k++) {
    const int *cr = k ? r2 : r, *cg = k ? g2 : g, *cb = k ? b2 : bl;

    rgb[k] = g_malloc (n * 4);
    gray[k] = g_new (int, n);
    for (i = 0; i < n; i++) {
      /* BGRx */
      rgb[k][4 * i] = (guint8) cb[i];
      rgb[k][4 * i + 1] = (guint8) cg[i];
      rgb[k][4 * i + 2] = (guint8) cr[i];
      rgb[k][4 * i + 3] = 0xee;
      gray[k][i] = (299 * cr[i] + 587 * cg[i] + 114 * cb[i] + 500) / 1000;
    }
  }
  for (k = 0; k < G_N_ELEMENTS (windows); k++) {
    CqSsimPlane planes[2];
    const void *ra[2] = { rgb[0], rgb[0] }, *rb[2] = { rgb[1], rgb[1] };
    size_t strides[2] = { 4 * w, 4 * w };
    CqSsimPlaneSums sums[2], want_g, want_gray;
    CqSsimCpu *cpu;
    CqError err;

    memset (planes, 0, sizeof (planes));
    planes[0] = gray_plane (w, h, 8);
    planes[0].sample_stride = 4;
    planes[0].offset = 1;       /* G of BGRx */
    planes[1] = gray_plane (w, h, 8);
    planes[1].layout.kind = CQ_LAYOUT_RGB8;
    planes[1].layout.pixel_stride = 4;
    planes[1].layout.r_offset = 2;
    planes[1].layout.g_offset = 1;
    planes[1].layout.b_offset = 0;
    planes[1].sample_stride = 4;
    cpu = cq_ssim_cpu_new (windows[k], planes, 2, 0, &err);
    fail_unless (cpu != NULL, "%s", err.message);
    fail_unless_equals_int (cq_ssim_cpu_measure (cpu, ra, strides, rb,
            strides, sums, &err), CQ_OK);
    cq_ssim_cpu_free (cpu);
    want_g = measure_ints (windows[k], g, g2, w, h, 8, 0);
    want_gray = measure_ints (windows[k], gray[0], gray[1], w, h, 8, 0);
    fail_unless (sums[0].ssim_sum == want_g.ssim_sum);
    fail_unless_equals_uint64 (sums[0].sse, want_g.sse);
    fail_unless (sums[1].ssim_sum == want_gray.ssim_sum);
    fail_unless_equals_uint64 (sums[1].sse, want_gray.sse);
  }
  for (k = 0; k < 2; k++) {
    g_free (rgb[k]);
    g_free (gray[k]);
  }
  g_free (r);
  g_free (g);
  g_free (bl);
  g_free (r2);
  g_free (g2);
  g_free (b2);
}

GST_END_TEST;

/* MS-SSIM against the naive two-pass reference, odd sizes (the floor at
 * each halving), every depth, one thread and many; the SSIM of the pair
 * is unchanged by adding it. */
GST_START_TEST (test_msssim_against_naive_reference)
{
  const unsigned sizes[][2] = { {176, 176}, {181, 203}, {230, 177} };
  unsigned k, c;

  /* depth 8, 10, 16; random, then smooth content */
  for (k = 0; k < G_N_ELEMENTS (sizes); k++)
    for (c = 0; c < 6; c++) {
      unsigned w = sizes[k][0], h = sizes[k][1], depth = c / 2 == 0 ? 8 :
          c / 2 == 1 ? 10 : 16;
      int peak = (1 << depth) - 1;
      int *a = c % 2 ? smooth_image (w, h, depth) : random_image (w * h,
          depth);
      int *b = distort (a, w * h, depth, peak / 8 + 1);
      CqSsimPlane p = gray_plane (w, h, depth);
      double want = ref_msssim (a, b, w, h, peak), got;
      CqSsimPlaneSums plain, s1, sn;

      plain = measure_ints (CQ_SSIM_GAUSS11, a, b, w, h, depth, 1);
      with_msssim = TRUE;
      s1 = measure_ints (CQ_SSIM_GAUSS11, a, b, w, h, depth, 1);
      sn = measure_ints (CQ_SSIM_BOX8, a, b, w, h, depth, 0);
      with_msssim = FALSE;
      got = cq_ssim_msssim (&p, &s1);
      fail_unless (want > 0.0 && want < 1.0, "%.17g", want);
      fail_unless (fabs (got - want) < 1e-9, "%ux%u@%u: %.17g vs %.17g",
          w, h, depth, got, want);
      fail_unless (fabs (cq_ssim_msssim (&p, &sn) - want) < 1e-9);
      fail_unless (plain.ssim_sum == s1.ssim_sum && plain.sse == s1.sse);
      g_free (a);
      g_free (b);
    }
}

GST_END_TEST;

GST_START_TEST (test_msssim_identical_and_too_small)
{
  const unsigned w = 190, h = 180;
  int *a = smooth_image (w, h, 8);
  CqSsimPlane p = gray_plane (w, h, 8);
  CqSsimPlaneSums s;
  CqSsimCpu *cpu;
  CqError err;
  double v[2];

  with_msssim = TRUE;
  s = measure_ints (CQ_SSIM_GAUSS11, a, a, w, h, 8, 0);
  with_msssim = FALSE;
  cq_ssim_frame_msssim (&p, 1, &s, 1, v);
  fail_unless (fabs (v[0] - 1.0) < 1e-12 && v[1] == v[0], "%.17g", v[0]);
  g_free (a);

  p = gray_plane (175, 400, 8);
  cpu = cq_ssim_cpu_new (CQ_SSIM_GAUSS11, &p, 1, 1, &err);
  fail_unless (cpu != NULL);
  fail_unless_equals_int (cq_ssim_cpu_set_msssim (cpu, 1, &err),
      CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "176x176") != NULL
      && strstr (err.message, "175x400") != NULL, "%s", err.message);
  cq_ssim_cpu_free (cpu);
}

GST_END_TEST;

GST_START_TEST (test_errors)
{
  CqSsimPlane p = gray_plane (7, 30, 8);
  CqError err;

  fail_unless (cq_ssim_cpu_new (CQ_SSIM_BOX8, &p, 1, 1, &err) == NULL);
  fail_unless_equals_int (err.status, CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "7x30") != NULL, "%s", err.message);
  p = gray_plane (10, 10, 8);
  fail_unless (cq_ssim_cpu_new (CQ_SSIM_GAUSS11, &p, 1, 1, &err) == NULL);
  fail_unless (strstr (err.message, "11x11") != NULL, "%s", err.message);
  fail_unless (cq_ssim_cpu_new (CQ_SSIM_BOX8, &p, 0, 1, &err) == NULL);
  p = gray_plane (10, 10, 12);
  p.layout.shift = 6;
  fail_unless (cq_ssim_cpu_new (CQ_SSIM_BOX8, &p, 1, 1, &err) == NULL);
  fail_unless (strstr (err.message, "depth 12") != NULL, "%s", err.message);
}

GST_END_TEST;

static Suite *
ssim_cpu_suite (void)
{
  TCase *tc;
  Suite *s = cq_test_suite ("ssim-cpu", &tc);

  tcase_add_test (tc, test_identical_is_one);
  tcase_add_test (tc, test_constant_frames_by_hand);
  tcase_add_test (tc, test_inverted_checkerboard_by_hand);
  tcase_add_test (tc, test_against_naive_reference);
  tcase_add_test (tc, test_ffmpeg_windows_bit_identical);
  tcase_add_test (tc, test_symmetry_and_threads);
  tcase_add_test (tc, test_layouts);
  tcase_add_test (tc, test_msssim_against_naive_reference);
  tcase_add_test (tc, test_msssim_identical_and_too_small);
  tcase_add_test (tc, test_errors);
  return s;
}

GST_CHECK_MAIN (ssim_cpu);
