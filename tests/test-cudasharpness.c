/* CPU suite: the cudasharpness element through GstHarness (backend=cpu, so
 * it runs anywhere; the GPU suite repeats the value checks on CUDA).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cq-sharpness.h"
#include "cq-test.h"

#define FRAME_DURATION (GST_SECOND / 30)

static const gchar *all_fields[CQ_METRIC_COUNT] = {
  "variance", "roberts", "tenengrad", "laplacian", "smd", "smd2", "maxmin",
  "entropy", "lapvar", "brenner"
};

/* A buffer of the caps' format with plane 0 filled by fill_y (value of
 * pixel x, y as stored: a byte, or a 16-bit word), other planes random. */
typedef guint (*FillFunc) (guint x, guint y, gpointer user_data);

static GstBuffer *
make_frame (const gchar * caps_str, FillFunc fill_y, gpointer user_data,
    guint index)
{
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstVideoInfo info;
  GstVideoFrame frame;
  GstBuffer *buf;
  GRand *rand = g_rand_new_with_seed (index + 1);
  guint p, x, y;

  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    guint rows = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, p);

    fail_unless (stride > 0);

    for (y = 0; y < rows; y++)
      for (x = 0; x < (guint) stride; x++)
        d[y * (guint) stride + x] = g_rand_int_range (rand, 0, 256);
  }
  if (fill_y) {
    guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
    gboolean wide = GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, 0) == 2;

    for (y = 0; y < (guint) GST_VIDEO_FRAME_HEIGHT (&frame); y++)
      for (x = 0; x < (guint) GST_VIDEO_FRAME_WIDTH (&frame); x++) {
        guint v = fill_y (x, y, user_data);
        if (wide) {
          d[y * stride + 2 * x] = v & 0xff;
          d[y * stride + 2 * x + 1] = v >> 8;
        } else {
          d[y * stride + x] = v;
        }
      }
  }
  gst_video_frame_unmap (&frame);
  g_rand_free (rand);
  GST_BUFFER_PTS (buf) = index * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

/* Pushes one frame through a harness and returns the meta's structure. */
static GstStructure *
measure_frame (const gchar * launch, const gchar * caps, GstBuffer * in)
{
  GstHarness *h = gst_harness_new_parse (launch);
  GstBuffer *out;
  GstCustomMeta *meta;
  GstStructure *s;

  gst_harness_set_src_caps_str (h, caps);
  out = gst_harness_push_and_pull (h, in);
  fail_unless (out != NULL);
  meta = gst_buffer_get_custom_meta (out, "CudaSharpnessMeta");
  fail_unless (meta != NULL, "no CudaSharpnessMeta on the output");
  s = gst_structure_copy (gst_custom_meta_get_structure (meta));
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  return s;
}

static void
get_all (const GstStructure * s, gdouble * v)
{
  guint i;

  for (i = 0; i < CQ_METRIC_COUNT; i++)
    fail_unless (gst_structure_get_double (s, all_fields[i], &v[i]),
        "no field %s in %" GST_PTR_FORMAT, all_fields[i], s);
}

static guint
fill_centre_dot (guint x, guint y, gpointer user_data)
{
  (void) user_data;
  return x == 1 && y == 1 ? 9 : 0;
}

GST_START_TEST (test_meta_values)
{
  GstHarness *h = gst_harness_new_parse ("cudasharpness backend=cpu");
  const gchar *caps = "video/x-raw,format=GRAY8,width=3,height=3,"
      "framerate=30/1";
  GstBuffer *out;
  GstCustomMeta *meta;
  const GstStructure *s;
  gdouble v;
  guint64 frame;
  guint i;

  gst_harness_set_src_caps_str (h, caps);
  for (i = 0; i < 2; i++) {
    out = gst_harness_push_and_pull (h, make_frame (caps, fill_centre_dot,
            NULL, i));
    meta = gst_buffer_get_custom_meta (out, "CudaSharpnessMeta");
    fail_unless (meta != NULL);
    s = gst_custom_meta_get_structure (meta);
    /* hand-computed in test-sharpness-cpu.c: the 3x3 centre dot */
    fail_unless (gst_structure_get_double (s, "tenengrad", &v) && v == 0.0);
    fail_unless (gst_structure_get_double (s, "laplacian", &v) && v == 4.0);
    fail_unless (gst_structure_get_double (s, "smd2", &v) && v == 9.0);
    fail_unless (gst_structure_get_uint64 (s, "frame", &frame));
    fail_unless_equals_uint64 (frame, i);
    fail_if (gst_structure_has_field (s, "variance"));
    fail_unless_equals_int (gst_structure_n_fields (s), 4);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_passthrough_bytes)
{
  GstHarness *h = gst_harness_new_parse ("cudasharpness backend=cpu "
      "metrics=all");
  const gchar *caps = "video/x-raw,format=I420,width=67,height=35,"
      "framerate=30/1";
  GstBuffer *in = make_frame (caps, NULL, NULL, 3), *out;
  GstMapInfo b;
  gpointer copy;
  gsize size;

  gst_buffer_extract_dup (in, 0, gst_buffer_get_size (in), &copy, &size);
  gst_harness_set_src_caps_str (h, caps);
  out = gst_harness_push_and_pull (h, in);
  fail_unless (gst_buffer_map (out, &b, GST_MAP_READ));
  fail_unless_equals_uint64 (b.size, size);
  fail_unless (memcmp (b.data, copy, size) == 0, "pixels changed");
  gst_buffer_unmap (out, &b);
  g_free (copy);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

static GstBus *
attach_bus (GstHarness * h)
{
  return cq_test_attach_bus (h->element);
}

#define DOT_CAPS "video/x-raw,format=GRAY8,width=3,height=3,framerate=30/1"

/* A harness of launch with DOT_CAPS input and its element's messages on
 * *bus. */
static GstHarness *
dot_harness (const gchar * launch, GstBus ** bus)
{
  GstHarness *h = gst_harness_new_parse (launch);

  *bus = attach_bus (h);
  gst_harness_set_src_caps_str (h, DOT_CAPS);
  return h;
}

GST_START_TEST (test_messages_and_summary)
{
  GstBus *bus;
  GstHarness *h = dot_harness ("cudasharpness backend=cpu", &bus);
  const gchar *caps = DOT_CAPS;
  GstMessage *msg;
  const GstStructure *s;
  guint64 u;
  gdouble v;
  guint i;

  for (i = 0; i < 3; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (caps,
                fill_centre_dot, NULL, i)));
  for (i = 0; i < 3; i++) {
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
    fail_unless (msg != NULL, "message %u missing", i);
    s = gst_message_get_structure (msg);
    fail_unless (gst_structure_has_name (s, "cudasharpness"));
    fail_unless (gst_structure_get_uint64 (s, "timestamp", &u));
    fail_unless_equals_uint64 (u, i * FRAME_DURATION);
    fail_unless (gst_structure_get_uint64 (s, "running-time", &u));
    fail_unless_equals_uint64 (u, i * FRAME_DURATION);
    fail_unless (gst_structure_get_uint64 (s, "stream-time", &u));
    fail_unless_equals_uint64 (u, i * FRAME_DURATION);
    fail_unless (gst_structure_get_uint64 (s, "duration", &u));
    fail_unless_equals_uint64 (u, FRAME_DURATION);
    fail_unless (gst_structure_get_uint64 (s, "frame", &u));
    fail_unless_equals_uint64 (u, i);
    fail_unless (gst_structure_get_double (s, "laplacian", &v) && v == 4.0);
    fail_unless (gst_structure_get_double (s, "smd2", &v) && v == 9.0);
    gst_message_unref (msg);
  }
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT) == NULL);

  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL);
  s = gst_message_get_structure (msg);
  fail_unless (gst_structure_has_name (s, "cudasharpness-summary"));
  fail_unless (gst_structure_get_uint64 (s, "frames", &u));
  fail_unless_equals_uint64 (u, 3);
  fail_unless (gst_structure_get_double (s, "smd2-mean", &v) && v == 9.0);
  fail_unless (gst_structure_get_double (s, "smd2-min", &v) && v == 9.0);
  fail_unless (gst_structure_get_double (s, "laplacian-max", &v) && v == 4.0);
  fail_unless (gst_structure_get_double (s, "tenengrad-mean", &v) && v == 0);
  fail_unless (gst_structure_get_uint64 (s, "gaps", &u));
  fail_unless_equals_uint64 (u, 0);
  gst_message_unref (msg);

  cq_test_detach_bus (h->element, bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A value of frame i: the dot's value changes so that means are testable. */
static guint
fill_dot_scaled (guint x, guint y, gpointer user_data)
{
  return x == 1 && y == 1 ? GPOINTER_TO_UINT (user_data) : 0;
}

/* The next element message is the summary; the harness is done. */
static void
summary_last (GstHarness * h, GstBus * bus)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);

  fail_unless (msg && gst_structure_has_name (gst_message_get_structure
          (msg), "cudasharpness-summary"));
  gst_message_unref (msg);
  cq_test_detach_bus (h->element, bus);
  gst_harness_teardown (h);
}

GST_START_TEST (test_interval_means)
{
  guint i;
  gdouble v;
  guint64 u;
  const GstStructure *s;
  GstMessage *msg;
  const gchar *caps = DOT_CAPS;
  GstBus *bus;
  GstHarness *h = dot_harness ("cudasharpness backend=cpu "
      "metrics=maxmin interval=66666666", &bus);

  /* maxmin of the 3x3 dot of value d is d / 9 */
  for (i = 0; i < 5; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (caps,
                fill_dot_scaled, GUINT_TO_POINTER (9 * (i + 1)), i)));
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));

  /* frames 0+1, 2+3, then 4 flushed at EOS */
  for (i = 0; i < 3; i++) {
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
    fail_unless (msg != NULL);
    s = gst_message_get_structure (msg);
    fail_unless (gst_structure_has_name (s, "cudasharpness"));
    fail_unless (gst_structure_get_uint64 (s, "frames", &u));
    fail_unless_equals_uint64 (u, i < 2 ? 2 : 1);
    fail_unless (gst_structure_get_uint64 (s, "timestamp", &u));
    fail_unless_equals_uint64 (u, 2 * i * FRAME_DURATION);
    fail_unless (gst_structure_get_double (s, "maxmin", &v));
    fail_unless_equals_float (v, i < 2 ? 2 * i + 1.5 : 5.0);
    gst_message_unref (msg);
  }
  summary_last (h, bus);
}

GST_END_TEST;

/* A flush (a flushing seek back to 0) ends the interval being averaged:
 * it is posted with the frames before the flush, and the frames after it
 * start a new one (no message spans both, none has running time running
 * backwards). */
GST_START_TEST (test_interval_across_flush)
{
  GstBus *bus;
  GstHarness *h = dot_harness ("cudasharpness backend=cpu "
      "metrics=maxmin interval=66666666", &bus);
  guint i;

  for (i = 0; i < 3; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (DOT_CAPS,
                fill_centre_dot, NULL, i)));
  cq_test_flush (&h, 1);
  for (i = 0; i < 2; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (DOT_CAPS,
                fill_centre_dot, NULL, i)));
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  cq_test_check_interval (bus, "cudasharpness", 2, 0, 2 * FRAME_DURATION);
  cq_test_check_interval (bus, "cudasharpness", 1, 2 * FRAME_DURATION,
      FRAME_DURATION);
  cq_test_check_interval (bus, "cudasharpness", 2, 0, 2 * FRAME_DURATION);
  summary_last (h, bus);
}

GST_END_TEST;

/* A GAP event is no frame: passed on as it is, counted in the summary,
 * and the frames around it are measured as usual. */
GST_START_TEST (test_gap)
{
  GstBus *bus;
  GstHarness *h = dot_harness ("cudasharpness backend=cpu", &bus);
  GstMessage *msg;
  GstEvent *ev;
  guint64 u;
  gboolean gap = FALSE;

  gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (DOT_CAPS,
              fill_centre_dot, NULL, 0)));
  fail_unless (gst_harness_push_event (h, gst_event_new_gap (FRAME_DURATION,
              FRAME_DURATION)));
  gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (DOT_CAPS,
              fill_centre_dot, NULL, 2)));
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while ((ev = gst_harness_try_pull_event (h))) {
    gap |= GST_EVENT_TYPE (ev) == GST_EVENT_GAP;
    gst_event_unref (ev);
  }
  fail_unless (gap);
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))) {
    const GstStructure *s = gst_message_get_structure (msg);

    if (gst_structure_has_name (s, "cudasharpness-summary")) {
      fail_unless (gst_structure_get_uint64 (s, "frames", &u));
      fail_unless_equals_uint64 (u, 2);
      fail_unless (gst_structure_get_uint64 (s, "gaps", &u));
      fail_unless_equals_uint64 (u, 1);
      gap = FALSE;
    }
    gst_message_unref (msg);
  }
  fail_if (gap, "no summary");
  cq_test_detach_bus (h->element, bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Reverse playback: the interval's running time and duration come from
 * the frames' spans at the segment's rate (a frame's pts is its last
 * instant), not from the timestamps read forwards. */
GST_START_TEST (test_interval_reverse)
{
  GstBus *bus;
  GstHarness *h = dot_harness ("cudasharpness backend=cpu "
      "metrics=maxmin interval=66666666", &bus);
  GstSegment seg;
  GstMessage *msg;
  guint64 rt;
  gint i;

  gst_segment_init (&seg, GST_FORMAT_TIME);
  seg.rate = -2.0;
  seg.stop = 4 * FRAME_DURATION;
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  for (i = 3; i >= 0; i--)
    gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (DOT_CAPS,
                fill_centre_dot, NULL, i)));
  /* at rate 2, four frames cover 2 frame durations of running time */
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL);
  fail_unless (gst_structure_get_uint64 (gst_message_get_structure (msg),
          "running-time", &rt));
  fail_unless_equals_uint64 (rt, 0);
  gst_message_unref (msg);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT) == NULL);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  cq_test_detach_bus (h->element, bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

static gchar *
run_with_log (const gchar * format, GstStructure ** last_meta)
{
  gchar *path = g_build_filename (g_get_tmp_dir (), "cudasharpness-XXXXXX",
      NULL);
  gchar *launch, *contents = NULL;
  GstHarness *h;
  const gchar *caps = "video/x-raw,format=GRAY8,width=21,height=13,"
      "framerate=30/1";
  GRand *rand = g_rand_new_with_seed (3);
  guint i;
  gint fd = g_mkstemp (path);

  close (fd);
  launch = g_strdup_printf ("cudasharpness backend=cpu metrics=all "
      "location=%s log-format=%s", path, format);
  h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, caps);
  for (i = 0; i < 2; i++) {
    GstBuffer *out = gst_harness_push_and_pull (h, make_frame (caps, NULL,
            rand, i));
    if (i == 1)
      *last_meta = gst_structure_copy (gst_custom_meta_get_structure
          (gst_buffer_get_custom_meta (out, "CudaSharpnessMeta")));
    /* flushed per frame: readable while the pipeline runs */
    fail_unless (g_file_get_contents (path, &contents, NULL, NULL));
    fail_unless_equals_int (g_strv_length (g_strsplit (contents, "\n", -1)),
        (g_str_equal (format, "csv") ? 2 : 1) + i + 1);
    g_free (contents);
    gst_buffer_unref (out);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  gst_harness_teardown (h);
  fail_unless (g_file_get_contents (path, &contents, NULL, NULL));
  g_unlink (path);
  g_free (path);
  g_free (launch);
  g_rand_free (rand);
  return contents;
}

GST_START_TEST (test_log_csv)
{
  GstStructure *meta = NULL;
  gchar *log = run_with_log ("csv", &meta);
  gchar **lines = g_strsplit (log, "\n", -1), **cols;
  gdouble want;
  guint i;

  fail_unless_equals_int (g_strv_length (lines), 5);
  fail_unless_equals_string (lines[0], "frame,pts,running-time,variance,"
      "roberts,tenengrad,laplacian,smd,smd2,maxmin,entropy,lapvar,brenner");
  cols = g_strsplit (lines[2], ",", -1);
  fail_unless_equals_int (g_strv_length (cols), 13);
  fail_unless_equals_string (cols[0], "1");
  fail_unless_equals_string (cols[1], "33333333");
  for (i = 0; i < CQ_METRIC_COUNT; i++) {
    fail_unless (gst_structure_get_double (meta, all_fields[i], &want));
    /* %.17g round-trips exactly */
    fail_unless (g_ascii_strtod (cols[3 + i], NULL) == want, "%s: %s vs %.17g",
        all_fields[i], cols[3 + i], want);
  }
  fail_unless (g_str_has_prefix (lines[3],
          "# summary,frames=2,variance-mean="));
  fail_unless_equals_string (lines[4], "");
  g_strfreev (cols);
  g_strfreev (lines);
  g_free (log);
  gst_structure_free (meta);
}

GST_END_TEST;

GST_START_TEST (test_log_jsonl)
{
  GstStructure *meta = NULL;
  gchar *log = run_with_log ("jsonl", &meta);
  gchar **lines = g_strsplit (log, "\n", -1);
  gchar *key;
  gdouble want;
  const gchar *at;

  fail_unless_equals_int (g_strv_length (lines), 4);
  fail_unless (g_str_has_prefix (lines[0],
          "{\"frame\":0,\"pts\":0,\"running-time\":0,\"variance\":"));
  fail_unless (g_str_has_prefix (lines[1],
          "{\"frame\":1,\"pts\":33333333,\"running-time\":33333333,"));
  fail_unless (g_str_has_suffix (lines[1], "}"));
  fail_unless (gst_structure_get_double (meta, "entropy", &want));
  key = g_strdup ("\"entropy\":");
  at = strstr (lines[1], key);
  fail_unless (at != NULL);
  fail_unless (g_ascii_strtod (at + strlen (key), NULL) == want);
  fail_unless (g_str_has_prefix (lines[2], "{\"summary\":{\"frames\":2,"));
  fail_unless (g_str_has_suffix (lines[2], "}}"));
  g_free (key);
  g_strfreev (lines);
  g_free (log);
  gst_structure_free (meta);
}

GST_END_TEST;

typedef struct
{
  guint w, x0, y0;
  GRand *rand;
} DotInNoise;

static guint
fill_dot_at (guint x, guint y, gpointer user_data)
{
  const DotInNoise *d = user_data;

  if (x >= d->x0 && x < d->x0 + 3 && y >= d->y0 && y < d->y0 + 3)
    return fill_centre_dot (x - d->x0, y - d->y0, NULL);
  return g_rand_int_range (d->rand, 0, 256);
}

GST_START_TEST (test_roi)
{
  DotInNoise d = { 16, 5, 7, g_rand_new_with_seed (9) };
  const gchar *caps = "video/x-raw,format=GRAY8,width=16,height=16,"
      "framerate=30/1";
  GstStructure *s;
  gdouble v;

  s = measure_frame ("cudasharpness backend=cpu roi-x=5 roi-y=7 "
      "roi-width=3 roi-height=3 metrics=all", caps, make_frame (caps,
          fill_dot_at, &d, 0));
  fail_unless (gst_structure_get_double (s, "variance", &v) && v == 8.0);
  fail_unless (gst_structure_get_double (s, "lapvar", &v) && v == 272.0);
  fail_unless (gst_structure_get_double (s, "smd2", &v) && v == 9.0);
  fail_unless (gst_structure_get_double (s, "roberts", &v) && v == 4.0);
  gst_structure_free (s);
  g_rand_free (d.rand);
}

GST_END_TEST;

/* roi-width/height 0 reach the frame's edges: compare with the library on
 * the cropped region. */
GST_START_TEST (test_roi_to_edge)
{
  const gchar *caps = "video/x-raw,format=GRAY8,width=40,height=30,"
      "framerate=30/1";
  GstBuffer *in = make_frame (caps, NULL, NULL, 4);
  GstMapInfo map;
  const CqLayout gray8 = { CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0 };
  CqSharpnessCpu *cpu;
  CqError err;
  gdouble want[CQ_METRIC_COUNT], got[CQ_METRIC_COUNT];
  GstStructure *s;

  gst_buffer_map (in, &map, GST_MAP_READ);
  cpu = cq_sharpness_cpu_new (&gray8, 40 - 13, 30 - 11, CQ_METRIC_ALL, 1, &err);
  cq_sharpness_cpu_measure (cpu, map.data + 11 * 40 + 13, 40, want, &err);
  cq_sharpness_cpu_free (cpu);
  gst_buffer_unmap (in, &map);
  s = measure_frame ("cudasharpness backend=cpu roi-x=13 roi-y=11 "
      "metrics=all", caps, in);
  get_all (s, got);
  fail_unless (memcmp (got, want, sizeof (got)) == 0);
  gst_structure_free (s);
}

GST_END_TEST;

static GstMessage *
pop_error (GstBus * bus)
{
  return gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
}

GST_START_TEST (test_bad_roi)
{
  GstHarness *h = gst_harness_new_parse ("cudasharpness backend=cpu "
      "roi-x=10 roi-y=4 roi-width=30 roi-height=8");
  GstBus *bus = attach_bus (h);
  GstMessage *msg;
  GError *gerr = NULL;
  gchar *debug = NULL;

  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=32,"
      "height=24,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (h, make_frame
          ("video/x-raw,format=GRAY8,width=32,height=24", NULL, NULL, 0)),
      GST_FLOW_NOT_NEGOTIATED);
  msg = pop_error (bus);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &gerr, &debug);
  fail_unless (g_error_matches (gerr, GST_CORE_ERROR,
          GST_CORE_ERROR_NEGOTIATION));
  fail_unless (strstr (debug, "x=10 y=4 width=30 height=8") != NULL, "%s",
      debug);
  fail_unless (strstr (debug, "32x24") != NULL, "%s", debug);
  g_error_free (gerr);
  g_free (debug);
  gst_message_unref (msg);
  cq_test_detach_bus (h->element, bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* State change to PAUSED of a lone element fails with an error of domain
 * and code whose message contains in_message (unless NULL). */
static void
assert_start_error (const gchar * launch, GQuark domain, gint code,
    const gchar * in_message)
{
  GstElement *e = gst_parse_launch (launch, NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *gerr = NULL;

  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = pop_error (bus);
  fail_unless (msg != NULL, "no error message");
  gst_message_parse_error (msg, &gerr, NULL);
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  fail_unless (g_error_matches (gerr, domain, code), "%s: %s", launch,
      gerr->message);
  fail_unless (!in_message || strstr (gerr->message, in_message) != NULL,
      "%s: %s", launch, gerr->message);
  g_error_free (gerr);
}

GST_START_TEST (test_unwritable_log)
{
  assert_start_error ("cudasharpness backend=cpu "
      "location=/nonexistent-dir/scores.csv", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_OPEN_WRITE, "/nonexistent-dir/scores.csv");
}

GST_END_TEST;

GST_START_TEST (test_no_metrics)
{
  assert_start_error ("cudasharpness backend=cpu metrics=0",
      GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, NULL);
}

GST_END_TEST;

GST_START_TEST (test_cuda_backend_without_device)
{
  if (cq_cuda_device_count (NULL) > 0) {
    g_print ("skipped: a CUDA device is usable here\n");
    return;
  }
  assert_start_error ("cudasharpness backend=cuda", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NOT_FOUND, "backend=cuda");
}

GST_END_TEST;

GST_START_TEST (test_auto_falls_back_with_warning)
{
  GstHarness *h;
  GstBus *bus;
  GstMessage *msg;
  GstBuffer *out;
  const gchar *caps = "video/x-raw,format=GRAY8,width=3,height=3";

  if (cq_cuda_device_count (NULL) > 0) {
    g_print ("skipped: a CUDA device is usable here\n");
    return;
  }
  h = gst_harness_new_empty ();
  bus = gst_bus_new ();
  gst_harness_add_parse (h, "cudasharpness");
  gst_element_set_bus (h->element, bus);
  /* the warning was posted at start, before the bus was ours: restart */
  gst_element_set_state (h->element, GST_STATE_NULL);
  gst_harness_play (h);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_unref (msg);
  gst_harness_set_src_caps_str (h, caps);
  out = gst_harness_push_and_pull (h, make_frame (caps, fill_centre_dot, NULL,
          0));
  fail_unless (gst_buffer_get_custom_meta (out, "CudaSharpnessMeta"));
  gst_buffer_unref (out);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  cq_test_detach_bus (h->element, bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Every YUV format is measured on its Y plane: the same luma as GRAY8 (or
 * GRAY16_LE for 10-bit formats) gives the same scores, whatever the chroma. */
typedef struct
{
  guint w;
  const guint16 *luma;
  guint shift;
} LumaPlane;

static guint
fill_luma (guint x, guint y, gpointer user_data)
{
  const LumaPlane *p = user_data;
  return (guint) p->luma[y * p->w + x] << p->shift;
}

/* Every score of a w × h frame of format whose luma is p's. */
static void
measure_luma (const gchar * format, guint w, guint h, LumaPlane * p,
    guint index, gdouble * scores)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,height=%u",
      format, w, h);
  GstStructure *s = measure_frame ("cudasharpness backend=cpu metrics=all",
      caps, make_frame (caps, fill_luma, p, index));

  get_all (s, scores);
  gst_structure_free (s);
  g_free (caps);
}

GST_START_TEST (test_formats_same_luma)
{
  const gchar *formats8[] = { "I420", "YV12", "NV12", "NV21", "Y42B", "Y444" };
  const guint w = 37, h = 22;
  guint16 luma8[37 * 22], luma10[37 * 22];
  LumaPlane p8 = { w, luma8, 0 }, p10 = { w, luma10, 0 };
  GRand *rand = g_rand_new_with_seed (5);
  gdouble ref[CQ_METRIC_COUNT], got[CQ_METRIC_COUNT];
  guint i;

  for (i = 0; i < w * h; i++) {
    luma8[i] = g_rand_int_range (rand, 0, 256);
    luma10[i] = g_rand_int_range (rand, 0, 1024);
  }

  measure_luma ("GRAY8", w, h, &p8, 0, ref);
  for (i = 0; i < G_N_ELEMENTS (formats8); i++) {
    measure_luma (formats8[i], w, h, &p8, i + 1, got);
    fail_unless (memcmp (got, ref, sizeof (ref)) == 0, "%s differs",
        formats8[i]);
  }

  /* 10-bit: GRAY16_LE of the same values is the reference; P010 keeps
   * them in the high bits */
  measure_luma ("GRAY16_LE", w, h, &p10, 0, ref);
  measure_luma ("I420_10LE", w, h, &p10, 1, got);
  fail_unless (memcmp (got, ref, sizeof (ref)) == 0, "I420_10LE differs");
  p10.shift = 6;
  measure_luma ("P010_10LE", w, h, &p10, 2, got);
  fail_unless (memcmp (got, ref, sizeof (ref)) == 0, "P010_10LE differs");
  g_rand_free (rand);
}

GST_END_TEST;

/* RGB is measured on round (0.299 R + 0.587 G + 0.114 B): the same as a
 * GRAY8 frame of those values, computed here from the documented rule. */
GST_START_TEST (test_rgb_gray)
{
  const gchar *formats[] = { "RGB", "BGR", "RGBA", "BGRA", "RGBx", "BGRx",
    "xRGB", "xBGR", "ARGB", "ABGR"
  };
  const guint w = 29, h = 17;
  guint f;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,height=%u",
        formats[f], w, h);
    GstBuffer *in = make_frame (caps, NULL, NULL, f);
    GstVideoInfo info;
    GstVideoFrame frame;
    GstCaps *c = gst_caps_from_string (caps);
    guint16 gray[29 * 17];
    LumaPlane p = { w, gray, 0 };
    gdouble ref[CQ_METRIC_COUNT], got[CQ_METRIC_COUNT];
    GstStructure *s;
    guint x, y;

    gst_video_info_from_caps (&info, c);
    gst_caps_unref (c);
    gst_video_frame_map (&frame, &info, in, GST_MAP_READ);
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++) {
        const guint8 *px = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
            0) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0) +
            x * GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, 0);
        guint r = px[GST_VIDEO_FRAME_COMP_POFFSET (&frame, 0)];
        guint g = px[GST_VIDEO_FRAME_COMP_POFFSET (&frame, 1)];
        guint b = px[GST_VIDEO_FRAME_COMP_POFFSET (&frame, 2)];
        gray[y * w + x] = (299 * r + 587 * g + 114 * b + 500) / 1000;
      }
    gst_video_frame_unmap (&frame);

    s = measure_frame ("cudasharpness backend=cpu metrics=all", caps, in);
    get_all (s, got);
    gst_structure_free (s);
    measure_luma ("GRAY8", w, h, &p, 0, ref);
    fail_unless (memcmp (got, ref, sizeof (ref)) == 0, "%s differs",
        formats[f]);
    g_free (caps);
  }
}

GST_END_TEST;

/* The meta has no tags, so videoconvert copies it. */
GST_START_TEST (test_meta_survives_videoconvert)
{
  GstStructure *s = measure_frame ("cudasharpness backend=cpu ! videoconvert "
      "! capsfilter caps=video/x-raw,format=RGBA", DOT_CAPS,
      make_frame (DOT_CAPS, fill_centre_dot, NULL, 0));
  gdouble v;

  fail_unless (gst_structure_get_double (s, "smd2", &v) && v == 9.0);
  gst_structure_free (s);
}

GST_END_TEST;

/* New caps mid-stream: the backend is set up again for the new size, the
 * frame count goes on. */
GST_START_TEST (test_renegotiation)
{
  GstHarness *h = gst_harness_new_parse ("cudasharpness backend=cpu "
      "metrics=all");
  const gchar *small = "video/x-raw,format=GRAY8,width=3,height=3";
  const gchar *large = "video/x-raw,format=GRAY16_LE,width=16,height=16";
  DotInNoise d = { 16, 5, 7, g_rand_new_with_seed (9) };
  GstBuffer *out;
  const GstStructure *s;
  gdouble v;
  guint64 frame;

  gst_harness_set_src_caps_str (h, small);
  gst_buffer_unref (gst_harness_push_and_pull (h, make_frame (small,
              fill_centre_dot, NULL, 0)));
  gst_harness_set_src_caps_str (h, large);
  out = gst_harness_push_and_pull (h, make_frame (large, fill_dot_at, &d, 1));
  s = gst_custom_meta_get_structure (gst_buffer_get_custom_meta (out,
          "CudaSharpnessMeta"));
  fail_unless (gst_structure_get_uint64 (s, "frame", &frame));
  fail_unless_equals_uint64 (frame, 1);
  /* 16-bit values up to 255 over 256 pixels: a real, non-3x3 result */
  fail_unless (gst_structure_get_double (s, "entropy", &v) && v > 5.0);
  gst_buffer_unref (out);
  gst_harness_set_src_caps_str (h, small);
  out = gst_harness_push_and_pull (h, make_frame (small, fill_centre_dot,
          NULL, 2));
  s = gst_custom_meta_get_structure (gst_buffer_get_custom_meta (out,
          "CudaSharpnessMeta"));
  fail_unless (gst_structure_get_double (s, "lapvar", &v) && v == 272.0);
  gst_buffer_unref (out);
  g_rand_free (d.rand);
  gst_harness_teardown (h);
}

GST_END_TEST;


/* Backend of the frames-in-flight checks: CUDASHARPNESS_TEST_BACKEND=cuda
 * reruns them on the GPU (gpu suite, CK_RUN_CASE=inflight). */
static const gchar *inflight_backend = "cpu";

static void
check_same_scores (GstBuffer * out, const GstStructure * expect, guint64 frame)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (out, "CudaSharpnessMeta");
  const GstStructure *s;
  gdouble v[CQ_METRIC_COUNT], w[CQ_METRIC_COUNT];
  guint64 f;
  guint i;

  fail_unless (meta != NULL);
  s = gst_custom_meta_get_structure (meta);
  get_all (s, v);
  get_all (expect, w);
  for (i = 0; i < CQ_METRIC_COUNT; i++)
    fail_unless (fabs (v[i] - w[i]) <= 1e-12 * fabs (w[i]),
        "%s: %.17g, alone %.17g", all_fields[i], v[i], w[i]);
  fail_unless (gst_structure_get_uint64 (s, "frame", &f));
  fail_unless_equals_uint64 (f, frame);
}

static guint
count_frame_messages (GstBus * bus, const gchar * name)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))) {
    if (gst_structure_has_name (gst_message_get_structure (msg), name))
      n++;
    gst_message_unref (msg);
  }
  return n;
}

/* One frame in flight: a frame leaves when the next arrives, with the scores
 * it gets alone; EOS pushes the last one, a flush drops it but still reports
 * its scores; the latency grows by a frame. */
GST_START_TEST (test_frames_in_flight)
{
  gchar *launch = g_strdup_printf ("cudasharpness backend=%s metrics=all "
      "frames-in-flight=1", inflight_backend);
  GstHarness *h = gst_harness_new_parse (launch);
  GstBus *bus = attach_bus (h);
  const gchar *caps = "video/x-raw,format=GRAY8,width=64,height=48,"
      "framerate=30/1";
  GstStructure *expect[3];
  GstBuffer *in[3], *out;
  GstQuery *query;
  GstPad *srcpad;
  GstClockTime min, max;
  GstSegment segment;
  gboolean live;
  guint i;

  for (i = 0; i < 3; i++) {
    in[i] = make_frame (caps, NULL, NULL, 10 + i);
    expect[i] = measure_frame ("cudasharpness backend=cpu metrics=all "
        "frames-in-flight=0", caps, gst_buffer_copy_deep (in[i]));
  }
  gst_harness_set_src_caps_str (h, caps);
  gst_harness_set_upstream_latency (h, 0);

  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in[0])),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (h), 0);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in[1])),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (h), 1);
  out = gst_harness_pull (h);
  check_same_scores (out, expect[0], 0);
  gst_buffer_unref (out);

  query = gst_query_new_latency ();
  srcpad = gst_element_get_static_pad (h->element, "src");
  fail_unless (gst_pad_query (srcpad, query));
  gst_object_unref (srcpad);
  gst_query_parse_latency (query, &live, &min, &max);
  fail_unless_equals_uint64 (min, FRAME_DURATION);
  gst_query_unref (query);

  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in[2])),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  check_same_scores (out, expect[1], 1);
  gst_buffer_unref (out);

  /* frame 2 is in flight: a flush drops it, its scores are still posted */
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  fail_unless_equals_int (gst_harness_buffers_received (h), 2);
  fail_unless_equals_int (count_frame_messages (bus, "cudasharpness"), 3);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_harness_push (h, in[0]), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (h), 2);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_received (h), 3);
  out = gst_harness_pull (h);
  check_same_scores (out, expect[0], 3);
  gst_buffer_unref (out);
  fail_unless_equals_int (count_frame_messages (bus, "cudasharpness"), 1);

  gst_buffer_unref (in[1]);
  gst_buffer_unref (in[2]);
  for (i = 0; i < 3; i++)
    gst_structure_free (expect[i]);
  cq_test_detach_bus (h->element, bus);
  gst_harness_teardown (h);
  g_free (launch);
}

GST_END_TEST;

/* Caps with memory:CUDAMemory: offered only where a CUDA device and
 * GStreamer's CUDA library are usable; without them system memory is all
 * there is and CUDAMemory caps are refused. */
GST_START_TEST (test_cuda_memory_caps)
{
  gboolean device = cq_test_cuda_memory_usable ();
  GstHarness *h;

  cq_test_check_memories ("cudasharpness", "sink", device);
  if (!device) {
    GstEvent *ev;

    h = gst_harness_new_parse ("cudasharpness backend=cpu");
    gst_harness_set_src_caps_str (h, "video/x-raw(memory:CUDAMemory),"
        "format=GRAY8,width=8,height=8,framerate=30/1");
    ev = gst_harness_try_pull_event (h);
    while (ev && GST_EVENT_TYPE (ev) != GST_EVENT_CAPS) {
      gst_event_unref (ev);
      ev = gst_harness_try_pull_event (h);
    }
    fail_if (ev != NULL, "CUDAMemory caps went through");
    fail_unless_equals_int (gst_harness_push (h, make_frame ("video/x-raw,"
                "format=GRAY8,width=8,height=8", NULL, NULL, 0)),
        GST_FLOW_NOT_NEGOTIATED);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

static void
cudasharpness_tests (Suite * s)
{
  TCase *tc = cq_test_case (s, "general");

  tcase_add_test (tc, test_meta_values);
  tcase_add_test (tc, test_passthrough_bytes);
  tcase_add_test (tc, test_messages_and_summary);
  tcase_add_test (tc, test_interval_means);
  tcase_add_test (tc, test_interval_across_flush);
  tcase_add_test (tc, test_interval_reverse);
  tcase_add_test (tc, test_gap);
  tcase_add_test (tc, test_log_csv);
  tcase_add_test (tc, test_log_jsonl);
  tcase_add_test (tc, test_roi);
  tcase_add_test (tc, test_roi_to_edge);
  tcase_add_test (tc, test_bad_roi);
  tcase_add_test (tc, test_unwritable_log);
  tcase_add_test (tc, test_no_metrics);
  tcase_add_test (tc, test_cuda_backend_without_device);
  tcase_add_test (tc, test_auto_falls_back_with_warning);
  tcase_add_test (tc, test_formats_same_luma);
  tcase_add_test (tc, test_rgb_gray);
  tcase_add_test (tc, test_meta_survives_videoconvert);
  tcase_add_test (tc, test_renegotiation);
  tcase_add_test (tc, test_cuda_memory_caps);
  tc = cq_test_case (s, "inflight");
  tcase_add_test (tc, test_frames_in_flight);
}

CQ_TEST_MAIN ("CUDASHARPNESS_TEST_BACKEND", inflight_backend,
    cudasharpness_tests, "cudasharpness");
