/* CPU suite: the cudassim element in pipelines of two appsrcs and an appsink
 * (backend=cpu, so it runs anywhere; the GPU suite repeats the value checks
 * on CUDA). Scores are checked against the naive references of
 * ssim-reference.h; pairing, unpaired frames, errors, alerts, the log and
 * every format are exercised.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/app/app.h>
#include <gst/video/video.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "cq-common.h"
#include "cq-test.h"
#include "ssim-reference.h"

#define FRAME_DURATION (GST_SECOND / 30)

static const gchar *backend = "cpu";

typedef struct
{
  GstElement *pipeline, *ref, *dist, *sink;
  GList *outputs;               /* GstBuffer, in order */
  GList *messages;              /* element and error messages, in order */
} Run;

/* src_props: of both appsrcs ("is-live=true") */
static Run *
run_new_full (const gchar * props, const gchar * ref_caps,
    const gchar * dist_caps, const gchar * src_props)
{
  Run *r = g_new0 (Run, 1);
  gchar *desc = g_strdup_printf ("cudassim name=q backend=%s %s ! "
      "appsink name=sink sync=false wait-on-eos=false "
      "appsrc name=ref format=time %s caps=\"%s\" ! q.reference "
      "appsrc name=dist format=time %s caps=\"%s\" ! q.distorted",
      backend, props, src_props, ref_caps, src_props, dist_caps);
  GError *error = NULL;

  r->pipeline = gst_parse_launch (desc, &error);
  fail_unless (r->pipeline != NULL, "%s: %s", desc,
      error ? error->message : "");
  g_free (desc);
  r->ref = gst_bin_get_by_name (GST_BIN (r->pipeline), "ref");
  r->dist = gst_bin_get_by_name (GST_BIN (r->pipeline), "dist");
  r->sink = gst_bin_get_by_name (GST_BIN (r->pipeline), "sink");
  fail_unless (gst_element_set_state (r->pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  return r;
}

static Run *
run_new (const gchar * props, const gchar * ref_caps, const gchar * dist_caps)
{
  return run_new_full (props, ref_caps, dist_caps, "");
}

static void
run_push (GstElement * src, GstBuffer * buf, guint index)
{
  if (!GST_BUFFER_PTS_IS_VALID (buf))
    GST_BUFFER_PTS (buf) = index * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), buf),
      GST_FLOW_OK);
}

/* Ends both streams, collects every output buffer and message until EOS or
 * an error. Returns TRUE on EOS. */
static gboolean
run_finish (Run * r)
{
  GstBus *bus = gst_element_get_bus (r->pipeline);
  gboolean eos = FALSE, error = FALSE;

  gst_app_src_end_of_stream (GST_APP_SRC (r->ref));
  gst_app_src_end_of_stream (GST_APP_SRC (r->dist));
  while (!eos && !error) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);

    fail_unless (m != NULL, "timeout waiting for EOS");
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS)
      eos = TRUE;
    else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
      error = TRUE;
    if (GST_MESSAGE_TYPE (m) != GST_MESSAGE_EOS)
      r->messages = g_list_append (r->messages, gst_message_ref (m));
    gst_message_unref (m);
  }
  if (eos) {
    GstSample *s;

    while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (r->sink), 0))) {
      r->outputs = g_list_append (r->outputs,
          gst_buffer_ref (gst_sample_get_buffer (s)));
      gst_sample_unref (s);
    }
  }
  gst_object_unref (bus);
  return eos;
}

static void
run_free (Run * r)
{
  gst_element_set_state (r->pipeline, GST_STATE_NULL);
  gst_object_unref (r->ref);
  gst_object_unref (r->dist);
  gst_object_unref (r->sink);
  gst_object_unref (r->pipeline);
  g_list_free_full (r->outputs, (GDestroyNotify) gst_buffer_unref);
  g_list_free_full (r->messages, (GDestroyNotify) gst_message_unref);
  g_free (r);
}

static const GstStructure *
meta_of (GstBuffer * buf)
{
  GstCustomMeta *m = gst_buffer_get_custom_meta (buf, "CudaSsimMeta");

  return m ? gst_custom_meta_get_structure (m) : NULL;
}

static gdouble
field (const GstStructure * s, const gchar * name)
{
  gdouble v;

  fail_unless (s != NULL);
  fail_unless (gst_structure_get_double (s, name, &v), "no %s in %"
      GST_PTR_FORMAT, name, s);
  return v;
}

/* The messages named `name`, in order. */
static GList *
messages_named (Run * r, const gchar * name)
{
  GList *l, *out = NULL;

  for (l = r->messages; l; l = l->next) {
    const GstStructure *s = gst_message_get_structure (l->data);

    if (s && gst_structure_has_name (s, name))
      out = g_list_append (out, (gpointer) s);
  }
  return out;
}

static const GstStructure *
summary_of (Run * r)
{
  GList *l = messages_named (r, "cudassim-summary");
  const GstStructure *s;

  fail_unless_equals_int (g_list_length (l), 1);
  s = l->data;
  g_list_free (l);
  return s;
}

static guint64
summary_uint (Run * r, const gchar * name)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (summary_of (r), name, &v));
  return v;
}

/* The summary's measured frames and unpaired counts. */
static void
check_summary (Run * r, guint64 frames, guint64 unpaired_reference,
    guint64 unpaired_distorted)
{
  fail_unless_equals_uint64 (summary_uint (r, "frames"), frames);
  fail_unless_equals_uint64 (summary_uint (r, "unpaired-reference"),
      unpaired_reference);
  fail_unless_equals_uint64 (summary_uint (r, "unpaired-distorted"),
      unpaired_distorted);
  fail_unless_equals_uint64 (summary_uint (r, "unpaired-frames"),
      unpaired_reference + unpaired_distorted);
}

/* GRAY8 frames from int images, rows padded to 4 bytes as GStreamer
 * lays them out. */
static GstBuffer *
gray8_buffer (const int *img, guint w, guint h)
{
  guint stride = GST_ROUND_UP_4 (w);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, stride * h, NULL);
  GstMapInfo map;
  guint x, y;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  memset (map.data, 0xa5, stride * h);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      map.data[y * stride + x] = (guint8) img[y * w + x];
  gst_buffer_unmap (buf, &map);
  return buf;
}

static int *
textured (guint w, guint h, guint seed, int noise)
{
  GRand *rand = g_rand_new_with_seed (seed);
  int *img = g_new (int, w * h);
  guint x, y;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      int v = 128 + (int) (90 * sin (x * 0.3 + y * 0.11)) +
          g_rand_int_range (rand, -noise, noise + 1);
      img[y * w + x] = CLAMP (v, 0, 255);
    }
  g_rand_free (rand);
  return img;
}

#define GRAY8_CAPS(w, h) \
  "video/x-raw,format=GRAY8,width=" #w ",height=" #h ",framerate=30/1"

GST_START_TEST (test_identical_is_one)
{
  Run *r = run_new ("", GRAY8_CAPS (64, 48), GRAY8_CAPS (64, 48));
  GList *l;
  guint i;

  for (i = 0; i < 3; i++) {
    int *img = textured (64, 48, i + 1, 20);

    run_push (r->ref, gray8_buffer (img, 64, 48), i);
    run_push (r->dist, gray8_buffer (img, 64, 48), i);
    g_free (img);
  }
  fail_unless (run_finish (r));
  fail_unless_equals_int (g_list_length (r->outputs), 3);
  for (l = r->outputs, i = 0; l; l = l->next, i++) {
    const GstStructure *s = meta_of (l->data);

    fail_unless (field (s, "ssim") == 1.0);
    fail_unless (isinf (field (s, "ssim-db")) && field (s, "ssim-db") > 0);
    fail_unless (isinf (field (s, "psnr")) && field (s, "psnr") > 0);
    fail_unless (field (s, "mse") == 0.0);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (l->data), i * FRAME_DURATION);
  }
  fail_unless_equals_uint64 (summary_uint (r, "frames"), 3);
  fail_unless_equals_uint64 (summary_uint (r, "unpaired-frames"), 0);
  run_free (r);
}

GST_END_TEST;

/* Each window against the naive references; the output buffer is the
 * distorted one, bytes unchanged. */
GST_START_TEST (test_windows_against_reference)
{
  const gchar *windows[] = { "box8", "ffmpeg", "gauss11" };
  const guint w = 67, h = 45;
  guint k;

  for (k = 0; k < G_N_ELEMENTS (windows); k++) {
    gchar *props = g_strdup_printf ("window=%s", windows[k]);
    gchar *caps = g_strdup_printf ("video/x-raw,format=GRAY8,width=%u,"
        "height=%u,framerate=30/1", w, h);
    Run *r = run_new (props, caps, caps);
    int *a = textured (w, h, 7, 10), *b = textured (w, h, 7, 40);
    const GstStructure *s;
    double want, mse;
    GstMapInfo map;
    guint i;

    run_push (r->ref, gray8_buffer (a, w, h), 0);
    run_push (r->dist, gray8_buffer (b, w, h), 0);
    fail_unless (run_finish (r));
    fail_unless_equals_int (g_list_length (r->outputs), 1);
    s = meta_of (r->outputs->data);
    want = k == 0 ? ref_ssim_box8 (a, b, w, h, 255) :
        k == 1 ? ref_ffmpeg_frame (a, b, w, h, 255) :
        ref_ssim_gauss11 (a, b, w, h, 255);
    mse = ref_mse (a, b, w * h);
    fail_unless (fabs (field (s, "ssim") - want) < (k == 1 ? 1e-6 : 1e-12),
        "%s: %.17g vs %.17g", windows[k], field (s, "ssim"), want);
    fail_unless (fabs (field (s, "mse") - mse) < 1e-12 * mse);
    fail_unless (fabs (field (s, "psnr") - 10 * log10 (255.0 * 255 / mse)) <
        1e-12);
    fail_unless (fabs (field (s, "ssim-db") - 10 * log10 (1 / (1 - want))) <
        (k == 1 ? 1e-3 : 1e-9));
    fail_unless (gst_buffer_map (r->outputs->data, &map, GST_MAP_READ));
    for (i = 0; i < w * h; i++)
      fail_unless_equals_int (map.data[(i / w) * GST_ROUND_UP_4 (w) + i % w],
          b[i]);
    gst_buffer_unmap (r->outputs->data, &map);
    run_free (r);
    g_free (a);
    g_free (b);
    g_free (props);
    g_free (caps);
  }
}

GST_END_TEST;

/* planes=all on I420: Y, U, V each against the reference, All weighted by
 * samples (4:1:1 for 4:2:0), PSNR from the total squared error. */
GST_START_TEST (test_planes_all_i420)
{
  const guint w = 64, h = 48, cw = 32, ch = 24;
  const gchar *caps =
      "video/x-raw,format=I420,width=64,height=48,framerate=30/1";
  Run *r = run_new ("planes=all window=box8", caps, caps);
  int *ya = textured (w, h, 1, 10), *yb = textured (w, h, 1, 30);
  int *ua = textured (cw, ch, 2, 10), *ub = textured (cw, ch, 2, 25);
  int *va = textured (cw, ch, 3, 10), *vb = textured (cw, ch, 3, 5);
  GstBuffer *bufs[2];
  const GstStructure *s;
  double sy, su, sv, all, sse;
  guint k, i;

  for (k = 0; k < 2; k++) {
    GstMapInfo map;

    bufs[k] = gst_buffer_new_allocate (NULL, w * h * 3 / 2, NULL);
    gst_buffer_map (bufs[k], &map, GST_MAP_WRITE);
    for (i = 0; i < w * h; i++)
      map.data[i] = (k ? yb : ya)[i];
    for (i = 0; i < cw * ch; i++) {
      map.data[w * h + i] = (k ? ub : ua)[i];
      map.data[w * h + cw * ch + i] = (k ? vb : va)[i];
    }
    gst_buffer_unmap (bufs[k], &map);
  }
  run_push (r->ref, bufs[0], 0);
  run_push (r->dist, bufs[1], 0);
  fail_unless (run_finish (r));
  s = meta_of (r->outputs->data);
  sy = ref_ssim_box8 (ya, yb, w, h, 255);
  su = ref_ssim_box8 (ua, ub, cw, ch, 255);
  sv = ref_ssim_box8 (va, vb, cw, ch, 255);
  all = (4 * sy + su + sv) / 6;
  fail_unless (fabs (field (s, "ssim-y") - sy) < 1e-12);
  fail_unless (fabs (field (s, "ssim-u") - su) < 1e-12);
  fail_unless (fabs (field (s, "ssim-v") - sv) < 1e-12);
  fail_unless (fabs (field (s, "ssim") - all) < 1e-12, "%.17g vs %.17g",
      field (s, "ssim"), all);
  fail_unless (fabs (field (s, "mse-u") - ref_mse (ua, ub, cw * ch)) < 1e-9);
  sse = ref_sse (ya, yb, w * h) + ref_sse (ua, ub, cw * ch) +
      ref_sse (va, vb, cw * ch);
  fail_unless (fabs (field (s, "mse") - sse / (w * h * 1.5)) < 1e-9);
  fail_unless (fabs (field (s, "psnr-v") -
          10 * log10 (255.0 * 255 / ref_mse (va, vb, cw * ch))) < 1e-9);
  run_free (r);
  g_free (ya);
  g_free (yb);
  g_free (ua);
  g_free (ub);
  g_free (va);
  g_free (vb);
}

GST_END_TEST;

/* RGB input: luma is the gray value; planes=all gives R, G, B. */
GST_START_TEST (test_rgb)
{
  const guint w = 40, h = 32, n = w * h;
  const gchar *caps =
      "video/x-raw,format=BGRx,width=40,height=32,framerate=30/1";
  int *ch[2][3], *gray[2];
  GstBuffer *bufs[2][2];
  guint k, c, i, pass;

  for (k = 0; k < 2; k++) {
    GstMapInfo map;

    for (c = 0; c < 3; c++)
      ch[k][c] = textured (w, h, 10 + c, k ? 35 : 5);
    gray[k] = g_new (int, n);
    bufs[k][0] = gst_buffer_new_allocate (NULL, n * 4, NULL);
    gst_buffer_map (bufs[k][0], &map, GST_MAP_WRITE);
    for (i = 0; i < n; i++) {
      map.data[4 * i] = ch[k][2][i];    /* B */
      map.data[4 * i + 1] = ch[k][1][i];        /* G */
      map.data[4 * i + 2] = ch[k][0][i];        /* R */
      map.data[4 * i + 3] = 0;
      gray[k][i] = (299 * ch[k][0][i] + 587 * ch[k][1][i] +
          114 * ch[k][2][i] + 500) / 1000;
    }
    gst_buffer_unmap (bufs[k][0], &map);
    bufs[k][1] = gst_buffer_copy_deep (bufs[k][0]);
  }
  for (pass = 0; pass < 2; pass++) {
    Run *r = run_new (pass ? "planes=all" : "", caps, caps);
    const GstStructure *s;

    run_push (r->ref, bufs[0][pass], 0);
    run_push (r->dist, bufs[1][pass], 0);
    fail_unless (run_finish (r));
    s = meta_of (r->outputs->data);
    if (pass == 0) {
      fail_unless (fabs (field (s, "ssim") - ref_ssim_box8 (gray[0], gray[1],
                  w, h, 255)) < 1e-12);
      fail_unless (!gst_structure_has_field (s, "ssim-r"));
    } else {
      fail_unless (fabs (field (s, "ssim-r") - ref_ssim_box8 (ch[0][0],
                  ch[1][0], w, h, 255)) < 1e-12);
      fail_unless (fabs (field (s, "ssim-g") - ref_ssim_box8 (ch[0][1],
                  ch[1][1], w, h, 255)) < 1e-12);
      fail_unless (fabs (field (s, "ssim-b") - ref_ssim_box8 (ch[0][2],
                  ch[1][2], w, h, 255)) < 1e-12);
    }
    run_free (r);
  }
  for (k = 0; k < 2; k++) {
    for (c = 0; c < 3; c++)
      g_free (ch[k][c]);
    g_free (gray[k]);
  }
}

GST_END_TEST;

/* Frame i of the distorted stream is frame i of the reference plus noise
 * scaled by (i + 1), so its SSIM falls with i and identifies the pair. */
static void
push_indexed (Run * r, GstElement * src, guint i, GstClockTime pts,
    gboolean distorted)
{
  int *img = textured (32, 24, 100 + i, distorted ? 4 * (i + 1) : 0);
  GstBuffer *buf = gray8_buffer (img, 32, 24);

  GST_BUFFER_PTS (buf) = pts;
  run_push (src, buf, i);
  g_free (img);
  (void) r;
}

static double
expected_indexed (guint i)
{
  int *a = textured (32, 24, 100 + i, 0), *b = textured (32, 24, 100 + i,
      4 * (i + 1));
  double v = ref_ssim_box8 (a, b, 32, 24, 255);

  g_free (a);
  g_free (b);
  return v;
}

#define SMALL_CAPS GRAY8_CAPS (32, 24)

/* The distorted stream starts two frames late and has a frame missing;
 * the reference stream is one frame shorter at the end. */
GST_START_TEST (test_pairing)
{
  Run *r = run_new ("", SMALL_CAPS, SMALL_CAPS);
  GList *l;
  guint i, measured = 0, unmeasured = 0;

  /* reference: frames 0..6 */
  for (i = 0; i < 7; i++)
    push_indexed (r, r->ref, i, i * FRAME_DURATION, FALSE);
  /* distorted: frames 2..7 without 4, timestamps off by 1 ms */
  for (i = 2; i < 8; i++)
    if (i != 4)
      push_indexed (r, r->dist, i, i * FRAME_DURATION + GST_MSECOND, TRUE);
  fail_unless (run_finish (r));
  /* every distorted frame goes out; 2, 3, 5, 6 have a partner, 7 not */
  fail_unless_equals_int (g_list_length (r->outputs), 5);
  for (l = r->outputs; l; l = l->next) {
    GstBuffer *buf = l->data;
    guint idx = (GST_BUFFER_PTS (buf) - GST_MSECOND) / FRAME_DURATION;
    const GstStructure *s = meta_of (buf);

    if (idx == 7) {
      fail_unless (s == NULL);
      unmeasured++;
    } else {
      fail_unless (fabs (field (s, "ssim") - expected_indexed (idx)) < 1e-12,
          "frame %u: %.17g vs %.17g", idx, field (s, "ssim"),
          expected_indexed (idx));
      measured++;
    }
  }
  fail_unless_equals_int (measured, 4);
  fail_unless_equals_int (unmeasured, 1);
  /* reference 0, 1, 4 and distorted 7 */
  check_summary (r, 4, 3, 1);
  run_free (r);
}

GST_END_TEST;

/* An appsrc cannot send GAP events itself: an empty buffer flagged GAP
 * becomes a GAP event of its time on the appsrc's pad. */
static GstPadProbeReturn
gap_marker_to_event (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);

  (void) user_data;
  if (gst_buffer_get_size (buf) > 0
      || !GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_GAP))
    return GST_PAD_PROBE_OK;
  gst_pad_push_event (pad, gst_event_new_gap (GST_BUFFER_PTS (buf),
          GST_BUFFER_DURATION (buf)));
  return GST_PAD_PROBE_DROP;
}

static void
push_gap (GstElement * src, guint i, GstClockTime pts)
{
  GstBuffer *buf = gst_buffer_new ();

  GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_GAP);
  GST_BUFFER_PTS (buf) = pts;
  run_push (src, buf, i);
}

/* GAP events on either pad, live or not: no error, a gap is no frame
 * (the distorted one goes on as a gap), the summary counts them. */
static void
check_gaps (const gchar * src_props)
{
  /* live: the aggregator waits up to its latency for the other pad, not
   * timing out on the first frame to arrive */
  Run *r = run_new_full (*src_props ? "latency=500000000" : "", SMALL_CAPS,
      SMALL_CAPS, src_props);
  GstElement *srcs[2] = { r->ref, r->dist };
  GList *l;
  guint i, k, gaps = 0, measured = 0;

  for (k = 0; k < 2; k++) {
    GstPad *pad = gst_element_get_static_pad (srcs[k], "src");

    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, gap_marker_to_event,
        NULL, NULL);
    gst_object_unref (pad);
  }
  /* reference: 0 1 gap 3 4; distorted: 0 1 2 gap 4 */
  for (i = 0; i < 5; i++) {
    if (i == 2)
      push_gap (r->ref, i, i * FRAME_DURATION);
    else
      push_indexed (r, r->ref, i, i * FRAME_DURATION, FALSE);
    if (i == 3)
      push_gap (r->dist, i, i * FRAME_DURATION);
    else
      push_indexed (r, r->dist, i, i * FRAME_DURATION, TRUE);
  }
  fail_unless (run_finish (r), "%s: no EOS", src_props);
  fail_unless_equals_int (g_list_length (r->outputs), 5);
  for (l = r->outputs; l; l = l->next) {
    GstBuffer *buf = l->data;

    if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_GAP)) {
      fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), 3 * FRAME_DURATION);
      gaps++;
    }
    if (meta_of (buf))
      measured++;
  }
  fail_unless_equals_int (gaps, 1);
  fail_unless_equals_int (measured, 3);
  /* reference 3 (distorted gap), distorted 2 (reference gap) */
  check_summary (r, 3, 1, 1);
  fail_unless_equals_uint64 (summary_uint (r, "gaps"), 2);
  fail_unless_equals_uint64 (summary_uint (r, "gaps-reference"), 1);
  fail_unless_equals_uint64 (summary_uint (r, "gaps-distorted"), 1);
  run_free (r);
}

GST_START_TEST (test_gaps)
{
  check_gaps ("");
}

GST_END_TEST;

GST_START_TEST (test_gaps_live)
{
  check_gaps ("is-live=true");
}

GST_END_TEST;

/* EOS on one pad before any frame: the other stream's frames are counted,
 * and the pipeline ends cleanly. */
GST_START_TEST (test_one_stream_empty)
{
  Run *r = run_new ("", SMALL_CAPS, SMALL_CAPS);
  guint i;

  for (i = 0; i < 3; i++)
    push_indexed (r, r->dist, i, i * FRAME_DURATION, TRUE);
  fail_unless (run_finish (r));
  fail_unless_equals_int (g_list_length (r->outputs), 3);
  fail_unless_equals_uint64 (summary_uint (r, "frames"), 0);
  fail_unless_equals_uint64 (summary_uint (r, "unpaired-distorted"), 3);
  run_free (r);
}

GST_END_TEST;

static const gchar *
error_debug (Run * r, GError ** error)
{
  GList *l;

  for (l = r->messages; l; l = l->next)
    if (GST_MESSAGE_TYPE (l->data) == GST_MESSAGE_ERROR) {
      gchar *debug;
      const gchar *ret;

      gst_message_parse_error (l->data, error, &debug);
      ret = g_intern_string (debug);
      g_free (debug);
      return ret;
    }
  return NULL;
}

GST_START_TEST (test_mismatch_errors)
{
  const gchar *cases[][4] = {
    {GRAY8_CAPS (64, 48), GRAY8_CAPS (32, 24), "64x48 GRAY8", "32x24 GRAY8"},
    {GRAY8_CAPS (32, 24),
          "video/x-raw,format=I420,width=32,height=24,framerate=30/1",
        "32x24 GRAY8", "32x24 I420"},
  };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (cases); k++) {
    Run *r = run_new ("", cases[k][0], cases[k][1]);
    GstVideoInfo info;
    GError *error = NULL;
    const gchar *debug;
    GstCaps *caps = gst_caps_from_string (cases[k][1]);

    gst_video_info_from_caps (&info, caps);
    gst_caps_unref (caps);
    push_indexed (r, r->ref, 0, 0, FALSE);
    run_push (r->dist, gst_buffer_new_allocate (NULL,
            GST_VIDEO_INFO_SIZE (&info), NULL), 0);
    fail_if (run_finish (r));
    debug = error_debug (r, &error);
    fail_unless (debug != NULL);
    fail_unless (error->domain == GST_CORE_ERROR
        && error->code == GST_CORE_ERROR_NEGOTIATION, "%s", error->message);
    fail_unless (strstr (debug, cases[k][2]) && strstr (debug, cases[k][3]),
        "%s", debug);
    g_error_free (error);
    run_free (r);
  }
}

GST_END_TEST;

GST_START_TEST (test_planes_too_small)
{
  /* 4:2:0 chroma of a 12x12 frame is 6x6: too small for 8x8 windows */
  const gchar *caps =
      "video/x-raw,format=I420,width=12,height=12,framerate=30/1";
  Run *r = run_new ("planes=all", caps, caps);
  GError *error = NULL;
  const gchar *debug;

  run_push (r->ref, gst_buffer_new_allocate (NULL, 12 * 12 * 3 / 2, NULL), 0);
  run_push (r->dist, gst_buffer_new_allocate (NULL, 12 * 12 * 3 / 2, NULL), 0);
  fail_if (run_finish (r));
  debug = error_debug (r, &error);
  fail_unless (debug && strstr (debug, "6x6") && strstr (debug, "8x8"), "%s",
      debug);
  g_error_free (error);
  run_free (r);
}

GST_END_TEST;

GST_START_TEST (test_threshold_alert)
{
  Run *r;
  GList *alerts;
  gdouble threshold, ssim, bound;
  guint i, first_below = G_MAXUINT;
  guint64 ts, frame;

  /* between the SSIM of frames 1 and 2; threshold (deprecated) is
   * alert-below: one alert where the run of frames below it starts */
  threshold = (expected_indexed (1) + expected_indexed (2)) / 2;
  {
    gchar *props = g_strdup_printf ("threshold=%.17g", threshold);
    r = run_new (props, SMALL_CAPS, SMALL_CAPS);
    g_free (props);
  }
  for (i = 0; i < 5; i++) {
    push_indexed (r, r->ref, i, i * FRAME_DURATION, FALSE);
    push_indexed (r, r->dist, i, i * FRAME_DURATION, TRUE);
    if (expected_indexed (i) < threshold && first_below == G_MAXUINT)
      first_below = i;
  }
  fail_unless (run_finish (r));
  alerts = messages_named (r, "cudassim-alert");
  fail_unless_equals_int (g_list_length (alerts), 1);
  fail_unless (gst_structure_get_uint64 (alerts->data, "timestamp", &ts));
  fail_unless (gst_structure_get_uint64 (alerts->data, "frame", &frame));
  fail_unless (gst_structure_get_double (alerts->data, "value", &ssim));
  fail_unless (gst_structure_get_double (alerts->data, "bound", &bound));
  fail_unless_equals_uint64 (frame, first_below);
  fail_unless_equals_uint64 (ts, frame * FRAME_DURATION);
  fail_unless (fabs (ssim - expected_indexed (frame)) < 1e-12);
  fail_unless_equals_float (bound, threshold);
  g_list_free (alerts);
  fail_unless_equals_uint64 (summary_uint (r, "alerts"), 1);
  run_free (r);
}

GST_END_TEST;

GST_START_TEST (test_messages_and_log)
{
  gchar *dir = g_dir_make_tmp ("cudassim-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "scores.csv", NULL);
  gchar *props = g_strdup_printf ("location=%s interval=%" G_GUINT64_FORMAT,
      path, 2 * FRAME_DURATION);
  Run *r = run_new (props, SMALL_CAPS, SMALL_CAPS);
  gchar *contents, **lines;
  GList *msgs;
  guint i;

  for (i = 0; i < 5; i++) {
    push_indexed (r, r->ref, i, i * FRAME_DURATION, FALSE);
    push_indexed (r, r->dist, i, i * FRAME_DURATION, TRUE);
  }
  fail_unless (run_finish (r));
  /* 2 + 2 + 1 frames */
  msgs = messages_named (r, "cudassim");
  fail_unless_equals_int (g_list_length (msgs), 3);
  fail_unless (fabs (field (msgs->data, "ssim") - (expected_indexed (0) +
              expected_indexed (1)) / 2) < 1e-12);
  g_list_free (msgs);
  fail_unless (g_file_get_contents (path, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  fail_unless (strstr (lines[0], "ssim") && strstr (lines[0], "psnr"),
      "%s", lines[0]);
  for (i = 1; i <= 5; i++)
    fail_unless (lines[i] && lines[i][0] != '#', "line %u: %s", i, lines[i]);
  fail_unless (lines[6] && g_str_has_prefix (lines[6], "# summary"), "%s",
      lines[6]);
  fail_unless (strstr (lines[6], "unpaired-frames"), "%s", lines[6]);
  g_strfreev (lines);
  g_free (contents);
  run_free (r);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  g_free (props);
}

GST_END_TEST;

/* Every format through real sources: identical streams give exactly 1 and
 * PSNR +inf; two different patterns give a value strictly inside (-1, 1). */
GST_START_TEST (test_every_format)
{
  const gchar *formats[] = { "GRAY8", "GRAY16_LE", "I420", "YV12", "NV12",
    "NV21", "Y42B", "Y444", "I420_10LE", "P010_10LE", "RGB", "BGR", "RGBA",
    "BGRA", "RGBx", "BGRx", "xRGB", "xBGR", "ARGB", "ABGR"
  };
  guint k, same;

  for (k = 0; k < G_N_ELEMENTS (formats); k++)
    for (same = 0; same < 2; same++) {
      /* both sources' caps */
      gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=48,"
          "height=32", formats[k]);
      gchar *desc = g_strdup_printf ("cudassim name=q backend=%s planes=all "
          "! appsink name=sink sync=false "
          "videotestsrc num-buffers=2 pattern=smpte ! %s ! q.reference "
          "videotestsrc num-buffers=2 pattern=%s ! %s ! q.distorted",
          backend, caps, same ? "smpte" : "ball", caps);
      GstElement *p = gst_parse_launch (desc, NULL);
      GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
      GstSample *sample;
      const GstStructure *s;
      gdouble ssim;

      fail_unless (p != NULL, "%s", desc);
      gst_element_set_state (p, GST_STATE_PLAYING);
      sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
          10 * GST_SECOND);
      fail_unless (sample != NULL, "%s: no output", formats[k]);
      s = meta_of (gst_sample_get_buffer (sample));
      ssim = field (s, "ssim");
      if (same) {
        fail_unless (ssim == 1.0, "%s: %.17g", formats[k], ssim);
        fail_unless (isinf (field (s, "psnr")));
      } else {
        fail_unless (ssim > -1.0 && ssim < 1.0, "%s: %g", formats[k], ssim);
        fail_unless (isfinite (field (s, "psnr")) && field (s, "mse") > 0);
      }
      gst_sample_unref (sample);
      gst_element_set_state (p, GST_STATE_NULL);
      gst_object_unref (sink);
      gst_object_unref (p);
      g_free (desc);
      g_free (caps);
    }
}

GST_END_TEST;

/* Both streams change size mid-stream: the measurement follows. */
GST_START_TEST (test_renegotiation)
{
  Run *r = run_new ("", GRAY8_CAPS (64, 48), GRAY8_CAPS (64, 48));
  int *a = textured (64, 48, 5, 0), *b = textured (64, 48, 5, 30);
  int *c = textured (40, 24, 6, 0), *d = textured (40, 24, 6, 30);
  GstCaps *small = gst_caps_from_string (GRAY8_CAPS (40, 24));
  GList *l;

  run_push (r->ref, gray8_buffer (a, 64, 48), 0);
  run_push (r->dist, gray8_buffer (b, 64, 48), 0);
  g_object_set (r->ref, "caps", small, NULL);
  g_object_set (r->dist, "caps", small, NULL);
  run_push (r->ref, gray8_buffer (c, 40, 24), 1);
  run_push (r->dist, gray8_buffer (d, 40, 24), 1);
  fail_unless (run_finish (r));
  fail_unless_equals_int (g_list_length (r->outputs), 2);
  l = r->outputs;
  fail_unless (fabs (field (meta_of (l->data), "ssim") -
          ref_ssim_box8 (a, b, 64, 48, 255)) < 1e-12);
  fail_unless (fabs (field (meta_of (l->next->data), "ssim") -
          ref_ssim_box8 (c, d, 40, 24, 255)) < 1e-12);
  gst_caps_unref (small);
  run_free (r);
  g_free (a);
  g_free (b);
  g_free (c);
  g_free (d);
}

GST_END_TEST;

/* CUDAMemory caps: offered only where a CUDA device and GStreamer's CUDA
 * library are usable (system memory always). */
GST_START_TEST (test_cuda_memory_caps)
{
  GstElement *e = gst_element_factory_make ("cudassim", NULL);
  const gchar *names[] = { "reference", "distorted" };
  gboolean device = cq_test_cuda_memory_usable ();
  guint i, k;

  for (k = 0; k < 2; k++) {
    GstPad *pad = gst_element_get_static_pad (e, names[k]);
    GstCaps *caps = gst_pad_query_caps (pad, NULL);
    gboolean has_cuda = FALSE, has_sys = FALSE;

    for (i = 0; i < gst_caps_get_size (caps); i++) {
      GstCapsFeatures *f = gst_caps_get_features (caps, i);

      has_cuda |= gst_caps_features_contains (f, "memory:CUDAMemory");
      has_sys |= gst_caps_features_is_equal (f,
          GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY);
    }
    fail_unless (has_sys);
    fail_unless (has_cuda == device, "%s pad: CUDAMemory %s with%s a "
        "device: %" GST_PTR_FORMAT, names[k], has_cuda ? "offered" :
        "missing", device ? "" : "out", caps);
    gst_caps_unref (caps);
    gst_object_unref (pad);
  }
  gst_object_unref (e);
}

GST_END_TEST;

/* The state change of launch's pipeline to PAUSED: FAILURE with an error
 * naming `pad` when pad is set. */
static void
check_unlinked (const gchar * launch, const gchar * pad)
{
  gchar *desc = g_strdup_printf ("cudassim name=q backend=%s ! fakesink %s",
      backend, launch);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (p);
  GstStateChangeReturn ret = gst_element_set_state (p, GST_STATE_PAUSED);
  GstMessage *m;

  if (pad) {
    GError *error = NULL;
    gchar *want = g_strdup_printf ("The %s pad is not linked", pad);

    fail_unless_equals_int (ret, GST_STATE_CHANGE_FAILURE);
    m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    fail_unless (m != NULL, "no error for %s", launch);
    gst_message_parse_error (m, &error, NULL);
    fail_unless (g_str_equal (error->message, want), "%s", error->message);
    g_error_free (error);
    g_free (want);
    gst_message_unref (m);
  } else {
    fail_if (ret == GST_STATE_CHANGE_FAILURE, "%s", launch);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  g_free (desc);
}

/* One pad unlinked would wait for ever: going to PAUSED is an error naming
 * it, unless an element that adds pads as it runs (decodebin) may link it
 * later. */
GST_START_TEST (test_unlinked_pad)
{
  GstElementFactory *decodebin = gst_element_factory_find ("decodebin");

  check_unlinked ("videotestsrc ! q.reference", "distorted");
  check_unlinked ("videotestsrc ! q.distorted", "reference");
  check_unlinked ("videotestsrc ! tee name=t ! queue ! q.reference "
      "t. ! queue ! q.distorted", NULL);
  if (decodebin) {
    check_unlinked ("videotestsrc ! q.reference "
        "filesrc location=/dev/null ! decodebin", NULL);
    gst_object_unref (decodebin);
  }
}

GST_END_TEST;

/* Two live sources: frames pair, the pipeline reports itself live with
 * the aggregator's latency. */
GST_START_TEST (test_live)
{
  gchar *desc = g_strdup_printf ("cudassim name=q backend=%s ! "
      "fakesink name=sink sync=true "
      "videotestsrc is-live=true num-buffers=6 ! "
      "video/x-raw,format=I420,width=64,height=48,framerate=30/1 ! "
      "q.reference "
      "videotestsrc is-live=true num-buffers=6 pattern=ball ! "
      "video/x-raw,format=I420,width=64,height=48,framerate=30/1 ! "
      "q.distorted", backend);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (p);
  GstQuery *q;
  GstMessage *m;
  gboolean live = FALSE, summary = FALSE;
  guint64 frames = 0, unpaired = 99;

  fail_if (gst_element_set_state (p, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  fail_if (gst_element_get_state (p, NULL, NULL, 5 * GST_SECOND) ==
      GST_STATE_CHANGE_FAILURE);
  q = gst_query_new_latency ();
  fail_unless (gst_element_query (p, q));
  gst_query_parse_latency (q, &live, NULL, NULL);
  gst_query_unref (q);
  fail_unless (live);
  while ((m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
              GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT))) {
    const GstStructure *s = gst_message_get_structure (m);
    gboolean done = GST_MESSAGE_TYPE (m) != GST_MESSAGE_ELEMENT;

    fail_if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    if (s && gst_structure_has_name (s, "cudassim-summary")) {
      summary = TRUE;
      gst_structure_get_uint64 (s, "frames", &frames);
      gst_structure_get_uint64 (s, "unpaired-frames", &unpaired);
    }
    gst_message_unref (m);
    if (done)
      break;
  }
  fail_unless (summary);
  /* every frame is either measured with its partner or counted */
  fail_unless_equals_uint64 (2 * frames + unpaired, 12);
  fail_unless (frames >= 5, "only %" G_GUINT64_FORMAT " pairs", frames);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  g_free (desc);
}

GST_END_TEST;

static void
cudassim_tests (Suite * s)
{
  TCase *tc = cq_test_case (s, "general");

  tcase_add_test (tc, test_identical_is_one);
  tcase_add_test (tc, test_windows_against_reference);
  tcase_add_test (tc, test_planes_all_i420);
  tcase_add_test (tc, test_rgb);
  tcase_add_test (tc, test_pairing);
  tcase_add_test (tc, test_one_stream_empty);
  tcase_add_test (tc, test_gaps);
  tcase_add_test (tc, test_gaps_live);
  tcase_add_test (tc, test_mismatch_errors);
  tcase_add_test (tc, test_planes_too_small);
  tcase_add_test (tc, test_threshold_alert);
  tcase_add_test (tc, test_messages_and_log);
  tcase_add_test (tc, test_every_format);
  tcase_add_test (tc, test_renegotiation);
  tcase_add_test (tc, test_live);
  tcase_add_test (tc, test_unlinked_pad);
  tcase_add_test (tc, test_cuda_memory_caps);
}

/* CUDASSIM_TEST_BACKEND=cuda runs the same checks on the GPU (the gpu
 * suite); without a device that run is skipped (77). */
int
main (int argc, char **argv)
{
  int status;

  if ((status = cq_test_init (&argc, &argv, "CUDASSIM_TEST_BACKEND",
              &backend)) >= 0)
    return status;
  /* CUDASSIM_TEST_FRAMES_IN_FLIGHT=1: every check with a pair in flight */
  if (g_getenv ("CUDASSIM_TEST_FRAMES_IN_FLIGHT"))
    backend = g_strdup_printf ("%s frames-in-flight=%s", backend,
        g_getenv ("CUDASSIM_TEST_FRAMES_IN_FLIGHT"));
  return cq_test_run_suite ("cudassim", cudassim_tests, __FILE__);
}
