/* CPU suite: the compute library's sharpness measures against hand-computed
 * cases and the naive double-precision reference in sharpness-reference.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <string.h>

#include "cq-sharpness.h"
#include "cq-test.h"
#include "sharpness-reference.h"

static const CqLayout gray8 = { CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0 };

/* Measures an int image stored as GRAY8 with every metric. */
static void
measure_gray8 (const int *img, unsigned w, unsigned h, unsigned n_threads,
    double *scores)
{
  guint8 *data = g_malloc (w * h);
  CqError err;
  CqSharpnessCpu *cpu;
  unsigned i;

  for (i = 0; i < w * h; i++)
    data[i] = (guint8) img[i];
  cpu = cq_sharpness_cpu_new (&gray8, w, h, CQ_METRIC_ALL, n_threads, &err);
  fail_unless (cpu != NULL, "%s", err.message);
  fail_unless_equals_int (cq_sharpness_cpu_measure (cpu, data, w, scores,
          &err), CQ_OK);
  cq_sharpness_cpu_free (cpu);
  g_free (data);
}

static void
assert_scores (const double *got, const double *want)
{
  unsigned i;

  for (i = 0; i < CQ_METRIC_COUNT; i++)
    fail_unless (ref_close (got[i], want[i], 1e-12),
        "%s: got %.17g, want %.17g", cq_metric_name (i), got[i], want[i]);
}

GST_START_TEST (test_constant_is_zero)
{
  const unsigned sizes[][2] = { {1, 1}, {3, 3}, {2, 5}, {64, 17}, {200, 130} };
  double zero[CQ_METRIC_COUNT] = { 0 }, s[CQ_METRIC_COUNT];
  unsigned k, i;

  for (k = 0; k < G_N_ELEMENTS (sizes); k++) {
    unsigned w = sizes[k][0], h = sizes[k][1];
    int *img = g_new (int, w * h);

    for (i = 0; i < w * h; i++)
      img[i] = 77;
    measure_gray8 (img, w, h, 0, s);
    for (i = 0; i < CQ_METRIC_COUNT; i++)
      fail_unless (s[i] == 0.0 && !signbit (s[i]), "%ux%u %s = %g", w, h,
          cq_metric_name (i), s[i]);
    assert_scores (s, zero);
    g_free (img);
  }
}

GST_END_TEST;

/* Hand-computed: 4x4, columns 0 0 10 10 in every row (MN = 16). */
GST_START_TEST (test_step_edge)
{
  int img[16];
  double s[CQ_METRIC_COUNT];
  const double want[CQ_METRIC_COUNT] = {
    25.0,                       /* variance: every pixel 5 from the mean */
    60.0 / 16,                  /* roberts: 3 rows x (10 + 10) at j = 1 */
    6400.0 / 16,                /* tenengrad: 4 interior pixels, Gx = 40 */
    40.0 / 16,                  /* laplacian: 4 interior pixels, |±10| */
    30.0 / 16,                  /* smd: 3 rows x 10 at j = 1 */
    0.0,                        /* smd2: the vertical difference is 0 */
    40.0 / 16,                  /* maxmin: 4 interior windows span 0..10 */
    1.0,                        /* entropy: two equally likely levels */
    50.0,                       /* lapvar: rows L = 0 10 -10 0 */
    800.0 / 16,                 /* brenner: 4 rows x 2 x 100 */
  };
  unsigned i;

  for (i = 0; i < 16; i++)
    img[i] = (i % 4) >= 2 ? 10 : 0;
  measure_gray8 (img, 4, 4, 1, s);
  assert_scores (s, want);
}

GST_END_TEST;

/* Hand-computed: 4x4 checkerboard of 0 and 1. */
GST_START_TEST (test_checkerboard)
{
  int img[16];
  double s[CQ_METRIC_COUNT];
  const double want[CQ_METRIC_COUNT] = {
    0.25, 0.0, 0.0, 16.0 / 16, 18.0 / 16, 9.0 / 16, 4.0 / 16, 1.0, 16.0, 0.0
  };
  unsigned i;

  for (i = 0; i < 16; i++)
    img[i] = ((i % 4) + (i / 4)) % 2;
  measure_gray8 (img, 4, 4, 1, s);
  assert_scores (s, want);
}

GST_END_TEST;

/* Hand-computed: 3x3 zeros with 9 in the centre (MN = 9). */
GST_START_TEST (test_centre_dot_3x3)
{
  int img[9] = { 0, 0, 0, 0, 9, 0, 0, 0, 0 };
  double s[CQ_METRIC_COUNT];
  const double want[CQ_METRIC_COUNT] = {
    8.0,                        /* variance: (8·1 + 64) / 9 */
    4.0,                        /* roberts: 4 pixels x 9 / 9 */
    0.0,                        /* tenengrad: centre Gx = Gy = 0 */
    4.0,                        /* laplacian: 36 / 9 */
    4.0,                        /* smd: 9 + 9 + 18 */
    9.0,                        /* smd2: 81 at the centre */
    1.0,                        /* maxmin: 9 / 9 */
    -(8.0 / 9 * log2 (8.0 / 9) + 1.0 / 9 * log2 (1.0 / 9)),
    272.0,                      /* lapvar: L = 18 x4, -36, 0 x4 */
    0.0,                        /* brenner: columns 0 and 2 are equal */
  };

  measure_gray8 (img, 3, 3, 1, s);
  assert_scores (s, want);
}

GST_END_TEST;

GST_START_TEST (test_one_pixel)
{
  int img[1] = { 200 };
  double s[CQ_METRIC_COUNT], zero[CQ_METRIC_COUNT] = { 0 };

  measure_gray8 (img, 1, 1, 1, s);
  assert_scores (s, zero);
}

GST_END_TEST;

/* Random frames of odd sizes in every layout kind against the reference. */
typedef struct
{
  const char *name;
  CqLayout layout;
} LayoutCase;

static const LayoutCase layouts[] = {
  {"gray8", {CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0}},
  {"gray16", {CQ_LAYOUT_GRAY16, 16, 0, 0, 0, 0, 0}},
  {"10-bit low", {CQ_LAYOUT_GRAY16, 10, 0, 0, 0, 0, 0}},
  {"10-bit high (P010)", {CQ_LAYOUT_GRAY16, 10, 6, 0, 0, 0, 0}},
  {"RGB", {CQ_LAYOUT_RGB8, 8, 0, 3, 0, 1, 2}},
  {"BGRx", {CQ_LAYOUT_RGB8, 8, 0, 4, 2, 1, 0}},
  {"ARGB", {CQ_LAYOUT_RGB8, 8, 0, 4, 1, 2, 3}},
};

/* Fills a frame with random stored data and returns the values the layout
 * defines (the test's own reading of the layout). */
static int *
random_frame (const CqLayout * l, unsigned w, unsigned h, size_t stride,
    guint8 * data, GRand * rand)
{
  int *vals = g_new (int, (size_t) w * h);
  unsigned x, y;

  for (y = 0; y < h; y++) {
    guint8 *row = data + y * stride;
    for (x = 0; x < w; x++) {
      int v;
      if (l->kind == CQ_LAYOUT_GRAY8) {
        v = g_rand_int_range (rand, 0, 256);
        row[x] = v;
      } else if (l->kind == CQ_LAYOUT_GRAY16) {
        guint word;
        v = g_rand_int_range (rand, 0, 1 << l->depth);
        /* garbage outside the value's bits must be ignored */
        word = (v << l->shift) | (g_rand_int (rand) & ((1u << l->shift) - 1));
        row[2 * x] = word & 0xff;
        row[2 * x + 1] = word >> 8;
      } else {
        guint8 *p = row + x * l->pixel_stride;
        int r = g_rand_int_range (rand, 0, 256), g =
            g_rand_int_range (rand, 0, 256), b = g_rand_int_range (rand, 0,
            256);
        memset (p, g_rand_int_range (rand, 0, 256), l->pixel_stride);
        p[l->r_offset] = r;
        p[l->g_offset] = g;
        p[l->b_offset] = b;
        /* round (0.299 R + 0.587 G + 0.114 B), halves up */
        v = (299 * r + 587 * g + 114 * b + 500) / 1000;
      }
      vals[(size_t) y * w + x] = v;
    }
  }
  return vals;
}

GST_START_TEST (test_random_against_reference)
{
  const unsigned sizes[][2] = { {1, 1}, {2, 2}, {3, 3}, {1, 9}, {9, 1},
  {7, 5}, {33, 17}, {101, 67}, {255, 129}, {640, 3}
  };
  GRand *rand = g_rand_new_with_seed (42);
  unsigned k, li;

  for (li = 0; li < G_N_ELEMENTS (layouts); li++) {
    const CqLayout *l = &layouts[li].layout;
    for (k = 0; k < G_N_ELEMENTS (sizes); k++) {
      unsigned w = sizes[k][0], h = sizes[k][1], i;
      size_t stride = w * cq_layout_bytes_per_pixel (l) + 5;    /* padded */
      guint8 *data = g_malloc (stride * h);
      int *vals = random_frame (l, w, h, stride, data, rand);
      double want[REF_COUNT], got[CQ_METRIC_COUNT];
      CqError err;
      CqSharpnessCpu *cpu =
          cq_sharpness_cpu_new (l, w, h, CQ_METRIC_ALL, 3, &err);

      fail_unless (cpu != NULL, "%s", err.message);
      fail_unless_equals_int (cq_sharpness_cpu_measure (cpu, data, stride,
              got, &err), CQ_OK);
      ref_sharpness (vals, w, h, 1 << l->depth, want);
      for (i = 0; i < CQ_METRIC_COUNT; i++)
        fail_unless (ref_close (got[i], want[i], 1e-12),
            "%s %ux%u %s: got %.17g, want %.17g", layouts[li].name, w, h,
            cq_metric_name (i), got[i], want[i]);
      cq_sharpness_cpu_free (cpu);
      g_free (vals);
      g_free (data);
    }
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Threads split the rows; the sums are integers, so any split is exact. */
GST_START_TEST (test_threads_identical)
{
  const unsigned w = 517, h = 1031;
  GRand *rand = g_rand_new_with_seed (7);
  guint8 *data = g_malloc (w * h * 2);
  int *vals = random_frame (&layouts[1].layout, w, h, w * 2, data, rand);
  double one[CQ_METRIC_COUNT], many[CQ_METRIC_COUNT];
  unsigned n;

  for (n = 2; n <= 16; n *= 2) {
    CqError err;
    CqSharpnessCpu *a = cq_sharpness_cpu_new (&layouts[1].layout, w, h,
        CQ_METRIC_ALL, 1, &err);
    CqSharpnessCpu *b = cq_sharpness_cpu_new (&layouts[1].layout, w, h,
        CQ_METRIC_ALL, n, &err);
    cq_sharpness_cpu_measure (a, data, w * 2, one, &err);
    cq_sharpness_cpu_measure (b, data, w * 2, many, &err);
    fail_unless (memcmp (one, many, sizeof (one)) == 0, "%u threads differ", n);
    cq_sharpness_cpu_free (a);
    cq_sharpness_cpu_free (b);
  }
  g_free (vals);
  g_free (data);
  g_rand_free (rand);
}

GST_END_TEST;

/* Only the requested metrics are written. */
GST_START_TEST (test_subset_untouched)
{
  guint8 data[64];
  double s[CQ_METRIC_COUNT];
  CqError err;
  CqSharpnessCpu *cpu;
  unsigned i;

  for (i = 0; i < 64; i++)
    data[i] = i * 3;
  for (i = 0; i < CQ_METRIC_COUNT; i++)
    s[i] = -1.0;
  cpu = cq_sharpness_cpu_new (&gray8, 8, 8, CQ_METRIC_DEFAULT, 1, &err);
  cq_sharpness_cpu_measure (cpu, data, 8, s, &err);
  for (i = 0; i < CQ_METRIC_COUNT; i++) {
    if (CQ_METRIC_DEFAULT & (1u << i))
      fail_unless (s[i] >= 0.0);
    else
      fail_unless (s[i] == -1.0, "%s was written", cq_metric_name (i));
  }
  cq_sharpness_cpu_free (cpu);
}

GST_END_TEST;

GST_START_TEST (test_bad_arguments)
{
  CqError err;
  CqLayout bad = { CQ_LAYOUT_GRAY16, 17, 0, 0, 0, 0, 0 };
  CqSharpnessCpu *cpu;
  guint8 data[16] = { 0 };
  double s[CQ_METRIC_COUNT];

  fail_unless (cq_sharpness_cpu_new (&gray8, 0, 4, CQ_METRIC_ALL, 1,
          &err) == NULL);
  fail_unless_equals_int (err.status, CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "0x4") != NULL, "%s", err.message);
  fail_unless (cq_sharpness_cpu_new (&bad, 4, 4, CQ_METRIC_ALL, 1,
          &err) == NULL);
  fail_unless (strstr (err.message, "depth 17") != NULL, "%s", err.message);
  cpu = cq_sharpness_cpu_new (&gray8, 4, 4, CQ_METRIC_ALL, 1, &err);
  fail_unless_equals_int (cq_sharpness_cpu_measure (cpu, data, 3, s, &err),
      CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "stride 3") != NULL, "%s", err.message);
  cq_sharpness_cpu_free (cpu);
}

GST_END_TEST;

static Suite *
sharpness_cpu_suite (void)
{
  TCase *tc;
  Suite *s = cq_test_suite ("sharpness-cpu", &tc);

  tcase_add_test (tc, test_constant_is_zero);
  tcase_add_test (tc, test_step_edge);
  tcase_add_test (tc, test_checkerboard);
  tcase_add_test (tc, test_centre_dot_3x3);
  tcase_add_test (tc, test_one_pixel);
  tcase_add_test (tc, test_random_against_reference);
  tcase_add_test (tc, test_threads_identical);
  tcase_add_test (tc, test_subset_untouched);
  tcase_add_test (tc, test_bad_arguments);
  return s;
}

GST_CHECK_MAIN (sharpness_cpu);
