/* CPU suite: cudassim's alignment on real content (scikit-image's
 * astronaut, panned 3 pixels a frame, JPEG quality 30; made by
 * make-align-frames.py). The distorted stream starts k frames late
 * (k = 1...10), drops one frame and repeats one mid-stream, and is
 * restamped from 0. align=continuous must pair every frame with the right
 * reference frame and give the SSIM of that pair (computed here with the
 * compute library); align=start must find k; align=none must pair by
 * timestamp as before. Live and not live. CUDASSIM_TEST_BACKEND=cuda runs
 * it on CUDA (the gpu suite).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/app/app.h>
#include <gst/video/video.h>
#include <math.h>
#include <string.h>

#include "cq-ssim.h"
#include "cq-test.h"

#define W 256
#define H 192
#define N_REF 40
#define N_DIST 24
#define DROP_AFTER 9            /* the content skips one frame after this */
#define REPEAT_AFTER 16         /* and shows this one twice */
#define FRAME_DURATION (GST_SECOND / 30)
#define CAPS_OF(format) "video/x-raw,format=" format ",width=256," \
  "height=192,framerate=30/1"
#define CAPS CAPS_OF ("GRAY8")

static const gchar *backend = "cpu";
/* run (): frames of this format from buffer pools when set (test_formats),
 * else GRAY8 buffers of their own */
static GstVideoFormat pool_format = GST_VIDEO_FORMAT_UNKNOWN;
static guint8 *ref_frames, *dist_frames;        /* N_REF frames each */

/* The reference frame distorted frame j shows, for a start k late. */
static guint
content_of (guint k, guint j, gboolean drop_repeat)
{
  guint c = k + j;

  if (drop_repeat && j > DROP_AFTER)
    c++;
  if (drop_repeat && j > REPEAT_AFTER)
    c--;
  return c;
}

static gdouble
expected_ssim (guint ref, guint dist)
{
  CqSsimPlane p;
  CqSsimPlaneSums sums;
  CqError err;
  CqSsimCpu *cpu;
  const void *a[1] = { ref_frames + (gsize) ref * W * H };
  const void *b[1] = { dist_frames + (gsize) dist * W * H };
  size_t strides[1] = { W };
  double v;

  p = cq_test_gray8_plane (W, H);
  cpu = cq_ssim_cpu_new (CQ_SSIM_BOX8, &p, 1, 1, &err);
  fail_unless (cpu != NULL);
  fail_unless_equals_int (cq_ssim_cpu_measure (cpu, a, strides, b, strides,
          &sums, &err), CQ_OK);
  cq_ssim_cpu_free (cpu);
  v = sums.ssim_sum / (double) sums.windows;
  return v;
}

/* Frame i of frames in a buffer of pool (pool_format): luma the frame,
 * chroma its 2x2-subsampled samples (U) and their complement (V). A pool
 * hands its buffers out again once released, with new content. */
static GstBuffer *
pool_frame_buffer (GstBufferPool * pool, const guint8 * frames, guint i)
{
  const guint8 *f = frames + (gsize) i * W * H;
  GstBuffer *buf = NULL;
  GstVideoFrame vf;
  GstVideoInfo info;
  guint x, y;

  gst_video_info_set_format (&info, pool_format, W, H);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (gst_video_frame_map (&vf, &info, buf, GST_MAP_WRITE));
  for (y = 0; y < H; y++)
    memcpy ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&vf, 0) + y *
        GST_VIDEO_FRAME_PLANE_STRIDE (&vf, 0), f + y * W, W);
  for (y = 0; y < H / 2; y++) {
    for (x = 0; x < W / 2; x++) {
      guint8 u = f[2 * y * W + 2 * x];
      guint8 *p1 = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&vf, 1) + y *
          GST_VIDEO_FRAME_PLANE_STRIDE (&vf, 1);

      if (pool_format == GST_VIDEO_FORMAT_NV12) {
        p1[2 * x] = u;
        p1[2 * x + 1] = 255 - u;
      } else {
        p1[x] = u;
        ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&vf, 2))[y *
            GST_VIDEO_FRAME_PLANE_STRIDE (&vf, 2) + x] = 255 - u;
      }
    }
  }
  gst_video_frame_unmap (&vf);
  return buf;
}

static GstBufferPool *
frame_pool (void)
{
  GstBufferPool *pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstVideoInfo info;
  GstCaps *caps;

  gst_video_info_set_format (&info, pool_format, W, H);
  caps = gst_video_info_to_caps (&info);
  gst_buffer_pool_config_set_params (config, caps, info.size, 0, 0);
  gst_caps_unref (caps);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  return pool;
}

static GstBuffer *
frame_buffer (GstBufferPool * pool, const guint8 * frames, guint i,
    GstClockTime pts)
{
  GstBuffer *buf = pool ? pool_frame_buffer (pool, frames, i) :
      gst_buffer_new_memdup (frames + (gsize) i * W * H, W * H);

  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

typedef struct
{
  GList *outputs;
  GList *messages;
} Result;

/* Runs cudassim with props on the reference frames and the distorted
 * stream of a start k late (with a drop and a repeat where drop_repeat),
 * restamped from 0; live pushes at the frame rate. */
static Result
run (const gchar * props, guint k, gboolean drop_repeat, gboolean live)
{
  const gchar *format = pool_format == GST_VIDEO_FORMAT_UNKNOWN ? "GRAY8" :
      gst_video_format_to_string (pool_format);
  gchar *caps = g_strdup_printf (CAPS_OF ("%s"), format);
  gchar *desc = g_strdup_printf ("cudassim name=q backend=%s %s ! "
      "appsink name=sink sync=false wait-on-eos=false "
      "appsrc name=ref format=time is-live=%d caps=\"%s\" ! q.reference "
      "appsrc name=dist format=time is-live=%d caps=\"%s\" ! "
      "q.distorted", backend, props, live, caps, live, caps);
  GstBufferPool *ref_pool = NULL, *dist_pool = NULL;
  GstElement *p = gst_parse_launch (desc, NULL);
  GstElement *ref = gst_bin_get_by_name (GST_BIN (p), "ref");
  GstElement *dist = gst_bin_get_by_name (GST_BIN (p), "dist");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstBus *bus = gst_element_get_bus (p);
  Result r = { NULL, NULL };
  GstMessage *m;
  GstSample *s;
  guint i;

  fail_unless (p != NULL, "%s", desc);
  if (pool_format != GST_VIDEO_FORMAT_UNKNOWN) {
    ref_pool = frame_pool ();
    dist_pool = frame_pool ();
  }
  fail_if (gst_element_set_state (p, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < N_REF; i++) {
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (ref),
            frame_buffer (ref_pool, ref_frames, i, i * FRAME_DURATION)),
        GST_FLOW_OK);
    if (i < N_DIST)
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (dist),
              frame_buffer (dist_pool, dist_frames, content_of (k, i,
                      drop_repeat), i * FRAME_DURATION)), GST_FLOW_OK);
    if (live)
      g_usleep (FRAME_DURATION / GST_USECOND);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (ref));
  gst_app_src_end_of_stream (GST_APP_SRC (dist));
  while ((m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
              GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT))) {
    gboolean done = GST_MESSAGE_TYPE (m) != GST_MESSAGE_ELEMENT;

    fail_if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    if (!done)
      r.messages = g_list_append (r.messages, gst_message_ref (m));
    gst_message_unref (m);
    if (done)
      break;
  }
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 0))) {
    r.outputs = g_list_append (r.outputs,
        gst_buffer_ref (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (ref);
  gst_object_unref (dist);
  gst_object_unref (sink);
  gst_object_unref (p);
  if (ref_pool) {
    gst_buffer_pool_set_active (ref_pool, FALSE);
    gst_buffer_pool_set_active (dist_pool, FALSE);
    gst_object_unref (ref_pool);
    gst_object_unref (dist_pool);
  }
  g_free (desc);
  g_free (caps);
  return r;
}

static void
result_clear (Result * r)
{
  g_list_free_full (r->outputs, (GDestroyNotify) gst_buffer_unref);
  g_list_free_full (r->messages, (GDestroyNotify) gst_message_unref);
}

static const GstStructure *
message (Result * r, const gchar * name, guint nth)
{
  GList *l;

  for (l = r->messages; l; l = l->next) {
    const GstStructure *s = gst_message_get_structure (l->data);

    if (gst_structure_has_name (s, name) && nth-- == 0)
      return s;
  }
  return NULL;
}

static guint64
summary_uint (Result * r, const gchar * name)
{
  const GstStructure *s = message (r, "cudassim-summary", 0);
  guint64 v = G_MAXUINT64;

  fail_unless (s != NULL);
  fail_unless (gst_structure_get_uint64 (s, name, &v), "no %s", name);
  return v;
}

static const GstStructure *
meta_of (GstBuffer * buf)
{
  GstCustomMeta *m = gst_buffer_get_custom_meta (buf, "CudaSsimMeta");

  return m ? gst_custom_meta_get_structure (m) : NULL;
}

/* Every distorted frame paired with the frame it shows, with that pair's
 * SSIM; the summary counts the offset changes, the drop and the repeat. */
static void
check_continuous (guint k, gboolean live)
{
  Result r = run ("align=continuous", k, TRUE, live);
  const GstStructure *s;
  GList *l;
  guint j = 0;
  gint64 off;

  fail_unless_equals_int (g_list_length (r.outputs), N_DIST);
  for (l = r.outputs; l; l = l->next, j++) {
    guint want = content_of (k, j, TRUE);
    gdouble pts, ssim;

    s = meta_of (l->data);
    fail_unless (s != NULL, "k=%u: frame %u not measured", k, j);
    fail_unless (gst_structure_get_double (s, "reference-pts", &pts));
    fail_unless (gst_structure_get_double (s, "ssim", &ssim));
    fail_unless_equals_uint64 ((guint64) pts, want * FRAME_DURATION);
    fail_unless (fabs (ssim - expected_ssim (want, want)) < 1e-12,
        "k=%u frame %u: %.17g vs %.17g", k, j, ssim, expected_ssim (want,
            want));
  }
  fail_unless_equals_uint64 (summary_uint (&r, "offset-changes"), 3);
  fail_unless_equals_uint64 (summary_uint (&r, "dropped-frames"), 1);
  fail_unless_equals_uint64 (summary_uint (&r, "repeated-frames"), 1);
  fail_unless_equals_uint64 (summary_uint (&r, "frames"), N_DIST);
  fail_unless_equals_uint64 (summary_uint (&r, "unpaired-distorted"), 0);
  /* N_DIST - 1 distinct frames paired */
  fail_unless_equals_uint64 (summary_uint (&r, "unpaired-reference"),
      N_REF - (N_DIST - 1));
  s = message (&r, "cudassim-aligned", 0);
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_int64 (s, "offset-frames", &off));
  fail_unless_equals_int64 (off, k);
  fail_unless (gst_structure_get_int64 (s, "offset", &off));
  fail_unless_equals_int64 (off, (gint64) k * FRAME_DURATION);
  s = message (&r, "cudassim-aligned", 1);
  fail_unless (gst_structure_get_int64 (s, "offset-frames", &off));
  fail_unless_equals_int64 (off, k + 1);
  s = message (&r, "cudassim-aligned", 2);
  fail_unless (gst_structure_get_int64 (s, "offset-frames", &off));
  fail_unless_equals_int64 (off, k);
  fail_unless (message (&r, "cudassim-aligned", 3) == NULL);
  result_clear (&r);
}

GST_START_TEST (test_continuous_late_drop_repeat)
{
  check_continuous (__i__ + 1, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_continuous_live)
{
  check_continuous (__i__ ? 10 : 3, TRUE);
}

GST_END_TEST;

/* align=start finds k over the first frames and keeps it. */
GST_START_TEST (test_start_finds_offset)
{
  guint k = __i__ + 1;
  Result r = run ("align=start", k, FALSE, FALSE);
  const GstStructure *s = message (&r, "cudassim-summary", 0);
  gint64 off = -1;
  GList *l;
  guint j = 0;

  fail_unless (gst_structure_get_int64 (s, "offset-frames", &off));
  fail_unless_equals_int64 (off, k);
  fail_unless_equals_uint64 (summary_uint (&r, "offset-changes"), 1);
  for (l = r.outputs; l; l = l->next, j++) {
    gdouble pts;

    fail_unless (gst_structure_get_double (meta_of (l->data),
            "reference-pts", &pts));
    fail_unless_equals_uint64 ((guint64) pts, (k + j) * FRAME_DURATION);
  }
  result_clear (&r);
}

GST_END_TEST;

/* align=none pairs by timestamp, as before: the wrong frames, and no
 * alignment fields. */
GST_START_TEST (test_none_unchanged)
{
  Result r = run ("", 3, TRUE, FALSE);
  const GstStructure *s;
  GList *l;
  guint j = 0;

  fail_unless_equals_int (g_list_length (r.outputs), N_DIST);
  for (l = r.outputs; l; l = l->next, j++) {
    gdouble ssim;

    s = meta_of (l->data);
    fail_unless (gst_structure_get_double (s, "ssim", &ssim));
    fail_unless (!gst_structure_has_field (s, "reference-pts"));
    fail_unless (fabs (ssim - expected_ssim (j, content_of (3, j, TRUE))) <
        1e-12);
  }
  s = message (&r, "cudassim-summary", 0);
  fail_unless (!gst_structure_has_field (s, "align"));
  fail_unless (message (&r, "cudassim-aligned", 0) == NULL);
  fail_unless_equals_uint64 (summary_uint (&r, "unpaired-reference"),
      N_REF - N_DIST);
  result_clear (&r);
}

GST_END_TEST;

/* Static content: nothing tells the frames apart, the offset stays. */
GST_START_TEST (test_static_content_keeps_offset)
{
  guint8 *saved_ref = ref_frames, *saved_dist = dist_frames;
  guint8 *still = g_malloc ((gsize) N_REF * W * H);
  Result r;
  guint i;

  for (i = 0; i < N_REF; i++)
    memcpy (still + (gsize) i * W * H, saved_ref, W * H);
  ref_frames = dist_frames = still;
  r = run ("align=continuous", 2, FALSE, FALSE);
  ref_frames = saved_ref;
  dist_frames = saved_dist;
  fail_unless_equals_uint64 (summary_uint (&r, "offset-changes"), 0);
  fail_unless_equals_uint64 (summary_uint (&r, "undecided-frames"), N_DIST);
  fail_unless_equals_uint64 (summary_uint (&r, "frames"), N_DIST);
  result_clear (&r);
  g_free (still);
}

GST_END_TEST;

/* MS-SSIM on the element: the library's value for the pair. */
GST_START_TEST (test_msssim_field)
{
  Result r = run ("align=continuous ms-ssim=true", 2, FALSE, FALSE);
  CqSsimPlane p;
  CqSsimPlaneSums sums;
  CqError err;
  CqSsimCpu *cpu;
  const void *a[1] = { ref_frames + (gsize) 2 * W * H };
  const void *b[1] = { dist_frames + (gsize) 2 * W * H };
  size_t strides[1] = { W };
  gdouble v;

  p = cq_test_gray8_plane (W, H);
  cpu = cq_ssim_cpu_new (CQ_SSIM_BOX8, &p, 1, 1, &err);
  fail_unless_equals_int (cq_ssim_cpu_set_msssim (cpu, 1, &err), CQ_OK);
  fail_unless_equals_int (cq_ssim_cpu_measure (cpu, a, strides, b, strides,
          &sums, &err), CQ_OK);
  cq_ssim_cpu_free (cpu);
  fail_unless (gst_structure_get_double (meta_of (r.outputs->data),
          "ms-ssim", &v));
  fail_unless (fabs (v - cq_ssim_msssim (&p, &sums)) < 1e-12, "%.17g", v);
  fail_unless (v > 0.5 && v < 1.0, "%.17g", v);
  fail_unless (gst_structure_has_field (message (&r, "cudassim-summary", 0),
          "ms-ssim-mean"));
  result_clear (&r);
}

GST_END_TEST;

/* Planar and semi-planar frames from buffer pools, every plane compared:
 * pairing by content (on CUDA from system memory: the device copies the
 * search made, which the pools' recycled buffers must not leave stale)
 * gives, frame by frame, the scores of pairing by timestamp when the
 * timestamps are right. */
GST_START_TEST (test_formats)
{
  static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_I420,
    GST_VIDEO_FORMAT_NV12
  };
  static const gchar *fields[] = { "ssim", "ssim-y", "ssim-u", "ssim-v",
    "psnr-u", "mse-v"
  };
  Result aligned, timed;
  GList *a, *t;
  guint f, j = 0;

  pool_format = formats[__i__];
  aligned = run ("align=continuous planes=all", 0, FALSE, FALSE);
  timed = run ("planes=all", 0, FALSE, FALSE);
  pool_format = GST_VIDEO_FORMAT_UNKNOWN;
  fail_unless_equals_int (g_list_length (aligned.outputs), N_DIST);
  fail_unless_equals_int (g_list_length (timed.outputs), N_DIST);
  for (a = aligned.outputs, t = timed.outputs; a && t; a = a->next,
      t = t->next, j++) {
    const GstStructure *sa = meta_of (a->data), *st = meta_of (t->data);
    gdouble pts, va, vt;

    fail_unless (sa != NULL && st != NULL, "frame %u not measured", j);
    fail_unless (gst_structure_get_double (sa, "reference-pts", &pts));
    fail_unless_equals_uint64 ((guint64) pts, j * FRAME_DURATION);
    for (f = 0; f < G_N_ELEMENTS (fields); f++) {
      fail_unless (gst_structure_get_double (sa, fields[f], &va)
          && gst_structure_get_double (st, fields[f], &vt), "%s", fields[f]);
      fail_unless (va == vt, "%s frame %u %s: %.17g aligned, %.17g by "
          "timestamp", gst_video_format_to_string (formats[__i__]), j,
          fields[f], va, vt);
    }
  }
  result_clear (&aligned);
  result_clear (&timed);
}

GST_END_TEST;

static gboolean
load_frames (void)
{
  const gchar *dir = g_getenv ("CQ_ALIGN_FRAMES");
  gchar *path;
  gsize len = 0;
  gboolean ok;

  if (!dir)
    return FALSE;
  path = g_build_filename (dir, "reference.gray", NULL);
  ok = g_file_get_contents (path, (gchar **) & ref_frames, &len, NULL) &&
      len == (gsize) N_REF * W * H;
  g_free (path);
  path = g_build_filename (dir, "distorted.gray", NULL);
  ok = ok && g_file_get_contents (path, (gchar **) & dist_frames, &len, NULL)
      && len == (gsize) N_REF * W * H;
  g_free (path);
  return ok;
}

static void
cudassim_align_tests (Suite * s)
{
  TCase *tc = cq_test_case (s, "general");

  tcase_add_loop_test (tc, test_continuous_late_drop_repeat, 0, 10);
  tcase_add_loop_test (tc, test_continuous_live, 0, 2);
  tcase_add_loop_test (tc, test_start_finds_offset, 0, 10);
  tcase_add_test (tc, test_none_unchanged);
  tcase_add_test (tc, test_static_content_keeps_offset);
  tcase_add_test (tc, test_msssim_field);
  tcase_add_loop_test (tc, test_formats, 0, 2);
}

/* CQ_ALIGN_FRAMES: the folder make-align-frames.py wrote (skipped, 77,
 * without it). */
int
main (int argc, char **argv)
{
  int status;

  /* the frames first: without them there is nothing to run */
  if (!load_frames ()) {
    g_print ("SKIP: no test frames (CQ_ALIGN_FRAMES, make-align-frames.py)\n");
    return 77;
  }
  if ((status = cq_test_init (&argc, &argv, "CUDASSIM_TEST_BACKEND",
              &backend)) >= 0)
    return status;
  return cq_test_run_suite ("cudassim-align", cudassim_align_tests, __FILE__);
}
