/* GPU suite: the cudasharpness element with backend=cuda gives exactly the
 * scores of backend=cpu for every format, odd sizes and a ROI (with
 * frames-in-flight=0: a harness pull wants each frame back at once).
 * Exits 77 (skipped) with the reason where no CUDA device is usable.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <string.h>

#include "cq-sharpness.h"
#include "cq-test.h"

static const gchar *formats[] = {
  "GRAY8", "GRAY16_LE", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444",
  "I420_10LE", "P010_10LE", "RGB", "BGR", "RGBA", "BGRA", "RGBx", "BGRx",
  "xRGB", "xBGR", "ARGB", "ABGR"
};

static GstBuffer *
random_frame (const gchar * caps_str, guint seed)
{
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstVideoInfo info;
  GstBuffer *buf;
  GstMapInfo map;
  GRand *rand = g_rand_new_with_seed (seed);
  gsize i;

  gst_video_info_from_caps (&info, caps);
  gst_caps_unref (caps);
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (i = 0; i < map.size; i++)
    map.data[i] = g_rand_int_range (rand, 0, 256);
  gst_buffer_unmap (buf, &map);
  g_rand_free (rand);
  GST_BUFFER_PTS (buf) = 0;
  return buf;
}

static void
measure (const gchar * launch, const gchar * caps, GstBuffer * in, gdouble * v)
{
  GstHarness *h = gst_harness_new_parse (launch);
  GstBuffer *out;
  const GstStructure *s;
  guint i;

  gst_harness_set_src_caps_str (h, caps);
  out = gst_harness_push_and_pull (h, in);
  fail_unless (out != NULL);
  s = gst_custom_meta_get_structure (gst_buffer_get_custom_meta (out,
          "CudaSharpnessMeta"));
  for (i = 0; i < CQ_METRIC_COUNT; i++)
    fail_unless (gst_structure_get_double (s, cq_metric_name (i), &v[i]));
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_START_TEST (test_cuda_equals_cpu_every_format)
{
  const guint sizes[][2] = { {1, 1}, {3, 2}, {17, 9}, {333, 101},
  {1920, 1080}
  };
  guint f, k;

  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    for (k = 0; k < G_N_ELEMENTS (sizes); k++) {
      gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,"
          "height=%u", formats[f], sizes[k][0], sizes[k][1]);
      GstBuffer *in = random_frame (caps, f * 31 + k);
      gdouble cpu[CQ_METRIC_COUNT], cuda[CQ_METRIC_COUNT];
      guint i;

      measure ("cudasharpness backend=cpu metrics=all", caps,
          gst_buffer_ref (in), cpu);
      measure ("cudasharpness backend=cuda frames-in-flight=0 metrics=all",
          caps, in, cuda);
      for (i = 0; i < CQ_METRIC_COUNT; i++)
        fail_unless (memcmp (&cpu[i], &cuda[i], sizeof (gdouble)) == 0,
            "%s %ux%u %s: cpu %.17g cuda %.17g", formats[f], sizes[k][0],
            sizes[k][1], cq_metric_name (i), cpu[i], cuda[i]);
      g_free (caps);
    }
}

GST_END_TEST;

GST_START_TEST (test_cuda_roi)
{
  const gchar *caps = "video/x-raw,format=NV12,width=640,height=360";
  const gchar *roi = "roi-x=101 roi-y=37 roi-width=333 roi-height=211";
  GstBuffer *in = random_frame (caps, 77);
  gdouble cpu[CQ_METRIC_COUNT], cuda[CQ_METRIC_COUNT];
  gchar *a = g_strdup_printf ("cudasharpness backend=cpu metrics=all %s", roi);
  gchar *b =
      g_strdup_printf
      ("cudasharpness backend=cuda frames-in-flight=0 metrics=all %s", roi);

  measure (a, caps, gst_buffer_ref (in), cpu);
  measure (b, caps, in, cuda);
  fail_unless (memcmp (cpu, cuda, sizeof (cpu)) == 0);
  g_free (a);
  g_free (b);
}

GST_END_TEST;

/* New caps mid-stream set the CUDA backend up again for the new size. */
GST_START_TEST (test_cuda_renegotiation)
{
  const gchar *caps[] = { "video/x-raw,format=GRAY8,width=3,height=3",
    "video/x-raw,format=GRAY16_LE,width=1921,height=1081",
    "video/x-raw,format=BGRx,width=640,height=480"
  };
  GstHarness *hc = gst_harness_new_parse ("cudasharpness backend=cpu "
      "metrics=all");
  GstHarness *hg =
      gst_harness_new_parse ("cudasharpness backend=cuda frames-in-flight=0 "
      "metrics=all");
  guint k, i;

  for (k = 0; k < 2 * G_N_ELEMENTS (caps); k++) {
    const gchar *c = caps[k % G_N_ELEMENTS (caps)];
    GstBuffer *in = random_frame (c, 100 + k), *oc, *og;
    const GstStructure *sc, *sg;

    gst_harness_set_src_caps_str (hc, c);
    gst_harness_set_src_caps_str (hg, c);
    oc = gst_harness_push_and_pull (hc, gst_buffer_ref (in));
    og = gst_harness_push_and_pull (hg, in);
    sc = gst_custom_meta_get_structure (gst_buffer_get_custom_meta (oc,
            "CudaSharpnessMeta"));
    sg = gst_custom_meta_get_structure (gst_buffer_get_custom_meta (og,
            "CudaSharpnessMeta"));
    for (i = 0; i < CQ_METRIC_COUNT; i++) {
      gdouble a, b;
      gst_structure_get_double (sc, cq_metric_name (i), &a);
      gst_structure_get_double (sg, cq_metric_name (i), &b);
      fail_unless (memcmp (&a, &b, sizeof (a)) == 0, "%s %s: %.17g vs %.17g",
          c, cq_metric_name (i), a, b);
    }
    gst_buffer_unref (oc);
    gst_buffer_unref (og);
  }
  gst_harness_teardown (hc);
  gst_harness_teardown (hg);
}

GST_END_TEST;

static void
gpu_cudasharpness_tests (Suite * s)
{
  TCase *tc = cq_test_case (s, "general");

  tcase_add_test (tc, test_cuda_equals_cpu_every_format);
  tcase_add_test (tc, test_cuda_roi);
  tcase_add_test (tc, test_cuda_renegotiation);
}

int
main (int argc, char **argv)
{
  if (cq_test_skip_without_cuda ())
    return 77;
  gst_check_init (&argc, &argv);
  return cq_test_run_suite ("gpu-cudasharpness", gpu_cudasharpness_tests,
      __FILE__);
}
