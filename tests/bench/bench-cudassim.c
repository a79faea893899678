/* cudassim end to end: prints figures, asserts nothing.
 *
 * Two appsrcs push the same GRAY8 frame pair again and again (new
 * timestamps, no copies) into cudassim ! fakesink; the wall time from the
 * first push to EOS gives pairs per second through the whole element
 * (mapping, uploads, kernels, meta, messages off). Frames live in pageable
 * memory (GstBuffer's default allocator) or in pinned memory wrapped into
 * GstBuffers. Printed beside the host-to-device bound of the pair.
 *
 *   bench-cudassim [--pairs N] [--size WxH] [--window box8|ffmpeg|gauss11]
 *                  [--backend cuda|cpu]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <gst/app/app.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "../cq-test.h"

/* The frame's memory as is (pageable or pinned), not owned. */
static GstBuffer *
frame_buffer (guint8 * data, gsize size)
{
  return gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, data, size,
      0, size, NULL, NULL);
}


/* Seconds for `pairs` pairs through the element. */
static gdouble
run (guint w, guint h, const gchar * window, const gchar * backend,
    guint8 * a, guint8 * b, guint pairs)
{
  gchar *desc = g_strdup_printf ("cudassim name=q window=%s backend=%s "
      "post-messages=false ! fakesink sync=false name=sink "
      "appsrc name=ref format=time block=true max-buffers=2 "
      "caps=video/x-raw,format=GRAY8,width=%u,height=%u,framerate=30/1 ! "
      "q.reference "
      "appsrc name=dist format=time block=true max-buffers=2 "
      "caps=video/x-raw,format=GRAY8,width=%u,height=%u,framerate=30/1 ! "
      "q.distorted", window, backend, w, h, w, h);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstElement *ref = gst_bin_get_by_name (GST_BIN (p), "ref");
  GstElement *dist = gst_bin_get_by_name (GST_BIN (p), "dist");
  GstBuffer *fa = frame_buffer (a, (gsize) w * h);
  GstBuffer *fb = frame_buffer (b, (gsize) w * h);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m;
  gint64 t0;
  gdouble secs;
  guint i;

  gst_element_set_state (p, GST_STATE_PLAYING);
  t0 = g_get_monotonic_time ();
  for (i = 0; i < pairs; i++) {
    GstBuffer *ba = gst_buffer_copy (fa), *bb = gst_buffer_copy (fb);

    GST_BUFFER_PTS (ba) = GST_BUFFER_PTS (bb) = i * (GST_SECOND / 30);
    GST_BUFFER_DURATION (ba) = GST_BUFFER_DURATION (bb) = GST_SECOND / 30;
    gst_app_src_push_buffer (GST_APP_SRC (ref), ba);
    gst_app_src_push_buffer (GST_APP_SRC (dist), bb);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (ref));
  gst_app_src_end_of_stream (GST_APP_SRC (dist));
  m = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  secs = (g_get_monotonic_time () - t0) / 1e6;
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
    GError *err;
    gchar *dbg;

    gst_message_parse_error (m, &err, &dbg);
    g_printerr ("error: %s (%s)\n", err->message, dbg);
    secs = -1;
  }
  gst_message_unref (m);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_buffer_unref (fa);
  gst_buffer_unref (fb);
  gst_object_unref (bus);
  gst_object_unref (ref);
  gst_object_unref (dist);
  gst_object_unref (p);
  g_free (desc);
  return secs;
}

int
main (int argc, char **argv)
{
  static const guint sizes[][2] = { {1920, 1080}, {3840, 2160},
  {7680, 4320}
  };
  const gchar *windows[] = { "ffmpeg", "box8", "gauss11" };
  const gchar *only_window = NULL, *backend = "cuda";
  guint pairs = 300, only_w = 0, only_h = 0, si, wi;
  gdouble bw[2] = { 0, 0 };
  CqError err;
  gint i;

  gst_init (&argc, &argv);
  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--pairs") == 0 && i + 1 < argc)
      pairs = atoi (argv[++i]);
    else if (strcmp (argv[i], "--size") == 0 && i + 1 < argc)
      sscanf (argv[++i], "%ux%u", &only_w, &only_h);
    else if (strcmp (argv[i], "--window") == 0 && i + 1 < argc)
      only_window = argv[++i];
    else if (strcmp (argv[i], "--backend") == 0 && i + 1 < argc)
      backend = argv[++i];

  if (cq_cuda_device_count (&err) > 0) {
    cq_cuda_h2d_bandwidth (0, 64u << 20, 0, &bw[0], &err);
    cq_cuda_h2d_bandwidth (0, 64u << 20, 1, &bw[1], &err);
  } else if (strcmp (backend, "cuda") == 0) {
    printf ("no CUDA device: %s\n", err.message);
    return 0;
  }
  printf ("host->device bandwidth: pageable %.2f GB/s, pinned %.2f GB/s\n",
      bw[0], bw[1]);
  printf ("cudassim backend=%s, %u GRAY8 pairs a run, messages off\n\n",
      backend, pairs);
  printf ("| pair | window | memory | pairs/s | ms/pair | pair bound ms | "
      "%% of bound |\n|---|---|---|---|---|---|---|\n");
  for (si = 0; si < G_N_ELEMENTS (sizes); si++) {
    guint w = sizes[si][0], h = sizes[si][1];
    gsize n = (gsize) w * h;
    guint8 *page_a, *page_b, *pin_a = NULL, *pin_b = NULL;

    if (only_w && (w != only_w || h != only_h))
      continue;
    page_a = g_malloc (n);
    page_b = g_malloc (n);
    cq_test_fill_pair (page_a, page_b, n, 0);
    if (bw[1] > 0) {
      pin_a = cq_cuda_host_alloc (n, &err);
      pin_b = cq_cuda_host_alloc (n, &err);
      memcpy (pin_a, page_a, n);
      memcpy (pin_b, page_b, n);
    }
    for (wi = 0; wi < G_N_ELEMENTS (windows); wi++) {
      gint pinned;

      if (only_window && strcmp (only_window, windows[wi]) != 0)
        continue;
      for (pinned = 0; pinned < (pin_a ? 2 : 1); pinned++) {
        guint count = strcmp (backend, "cpu") == 0 ? 10 : pairs;
        gdouble s = run (w, h, windows[wi], backend,
            pinned ? pin_a : page_a, pinned ? pin_b : page_b, count);
        gdouble ms = s / count * 1e3;
        gdouble bound = bw[pinned] > 0 ? 2.0 * n / (bw[pinned] * 1e9) * 1e3 : 0;

        printf ("| %ux%u | %s | %s | %.0f | %.3f | %.3f | %.0f %% |\n", w, h,
            windows[wi], pinned ? "pinned" : "pageable", count / s, ms, bound,
            bound > 0 ? 100.0 * bound / ms : 0);
        fflush (stdout);
      }
    }
    g_free (page_a);
    g_free (page_b);
    cq_cuda_host_free (pin_a);
    cq_cuda_host_free (pin_b);
  }
  return 0;
}
