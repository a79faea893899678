/* GPU suite: frames that stay on the GPU. CUDAMemory input (from
 * cudaupload and from NVDEC) gives exactly the scores of the same frames in
 * system memory; cudasfproject's CUDAMemory frames equal its system-memory
 * ones; the elements share GStreamer's CUDA context; the pinned pool
 * reaches a cooperating upstream. Skips (77) without a device or without
 * nvcodec.
 *
 *   test-gpu-cudamemory [--quick]   (--quick: the small cases only, for
 *                                     compute-sanitizer)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#define GST_USE_UNSTABLE_API
#include <gst/check/gstcheck.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/cuda/gstcudaloader.h>
#include <math.h>
#include <string.h>

#include "cq-common.h"
#include "cq-test.h"

static gboolean quick = FALSE;

typedef struct
{
  GPtrArray *metas;             /* GstStructure, in buffer order */
  GPtrArray *frames;            /* GBytes of each frame's pixels, if asked */
  gboolean cuda_caps;           /* the sink saw memory:CUDAMemory */
} Scores;

static void
scores_free (Scores * s)
{
  g_ptr_array_unref (s->metas);
  g_ptr_array_unref (s->frames);
  g_free (s);
}

/* The visible pixels of buf, rows packed (strides differ between system
 * memory and pitched CUDAMemory). CUDAMemory maps to host memory without
 * GST_MAP_CUDA. */
static GBytes *
pack_frame (GstCaps * caps, GstBuffer * buf)
{
  GstVideoInfo info;
  GstVideoFrame frame;
  GByteArray *out;
  guint p, y;

  if (!gst_video_info_from_caps (&info, caps)
      || !gst_video_frame_map (&frame, &info, buf, GST_MAP_READ))
    return NULL;
  out = g_byte_array_new ();
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    guint row_bytes;

    gst_video_format_info_component (frame.info.finfo, p, comp);
    row_bytes = GST_VIDEO_FRAME_COMP_WIDTH (&frame, comp[0]) *
        GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, comp[0]);
    for (y = 0; y < (guint) GST_VIDEO_FRAME_COMP_HEIGHT (&frame, comp[0]); y++)
      g_byte_array_append (out, (const guint8 *)
          GST_VIDEO_FRAME_PLANE_DATA (&frame, p) +
          (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p), row_bytes);
  }
  gst_video_frame_unmap (&frame);
  return g_byte_array_free_to_bytes (out);
}

/* Runs desc (with an appsink named sink) to EOS; keeps every buffer's
 * meta_name structure and, with keep_frames, its pixels (as system
 * memory). The elements named in names (NULL-terminated) are given the CUDA
 * contexts in ctxs before the pipeline starts. The pipeline is stopped
 * before any assertion fails, so that a failure under CK_FORK=no does not
 * leave it running. */
static Scores *
run_scores_in (const gchar * desc, const gchar * meta_name,
    gboolean keep_frames, const gchar * const *names, GstCudaContext ** ctxs)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error);
  GstElement *sink;
  GstBus *bus;
  GstMessage *msg;
  Scores *s = g_new0 (Scores, 1);
  gchar *problem = NULL;
  guint i;

  if (g_getenv ("CUDAMEMORY_TEST_VERBOSE"))
    g_printerr ("%s\n", desc);
  fail_unless (pipeline != NULL && error == NULL, "%s: %s", desc,
      error ? error->message : "");
  for (i = 0; names && names[i]; i++) {
    GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), names[i]);
    GstContext *c = gst_context_new_cuda_context (ctxs[i]);

    fail_unless (e != NULL, "%s: no element %s", desc, names[i]);
    gst_element_set_context (e, c);
    gst_context_unref (c);
    gst_object_unref (e);
  }
  s->metas = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);
  s->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    problem = g_strdup ("does not start");
  while (!problem) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        20 * GST_SECOND);
    GstBuffer *buf;
    GstCustomMeta *meta;
    GstCaps *caps;

    if (!sample) {
      msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
      if (msg) {
        GError *e = NULL;
        gchar *dbg = NULL;

        gst_message_parse_error (msg, &e, &dbg);
        problem = g_strdup_printf ("%s (%s)", e->message, dbg);
        g_clear_error (&e);
        g_free (dbg);
        gst_message_unref (msg);
      } else if (!gst_app_sink_is_eos (GST_APP_SINK (sink)))
        problem = g_strdup ("no sample in 20 s");
      break;
    }
    buf = gst_sample_get_buffer (sample);
    caps = gst_sample_get_caps (sample);
    s->cuda_caps = gst_caps_features_contains (gst_caps_get_features (caps,
            0), "memory:CUDAMemory");
    meta = gst_buffer_get_custom_meta (buf, meta_name);
    if (!meta)
      problem = g_strdup_printf ("a buffer without %s", meta_name);
    else
      g_ptr_array_add (s->metas,
          gst_structure_copy (gst_custom_meta_get_structure (meta)));
    if (meta && keep_frames) {
      GBytes *packed = pack_frame (caps, buf);

      if (packed)
        g_ptr_array_add (s->frames, packed);
      else
        problem = g_strdup ("a buffer does not map for reading");
    }
    gst_sample_unref (sample);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  fail_if (problem != NULL, "%s: %s", desc, problem);
  return s;
}

static Scores *
run_scores (const gchar * desc, const gchar * meta_name, gboolean keep_frames)
{
  return run_scores_in (desc, meta_name, keep_frames, NULL, NULL);
}

/* Every double field equal within tol (0: bit for bit, inf included). */
static void
assert_same_scores (const Scores * a, const Scores * b, gdouble tol,
    const gchar * what)
{
  guint i, f;

  fail_unless (a->metas->len > 0, "%s: no frames", what);
  fail_unless_equals_int (a->metas->len, b->metas->len);
  for (i = 0; i < a->metas->len; i++) {
    const GstStructure *x = g_ptr_array_index (a->metas, i);
    const GstStructure *y = g_ptr_array_index (b->metas, i);

    for (f = 0; f < (guint) gst_structure_n_fields (x); f++) {
      const gchar *name = gst_structure_nth_field_name (x, f);
      gdouble u, v;

      if (gst_structure_get_field_type (x, name) != G_TYPE_DOUBLE)
        continue;
      fail_unless (gst_structure_get_double (x, name, &u));
      fail_unless (gst_structure_get_double (y, name, &v), "%s: no %s",
          what, name);
      fail_unless (u == v || (isnan (u) && isnan (v))
          || fabs (u - v) <= tol, "%s: frame %u %s: %.17g vs %.17g", what, i,
          name, u, v);
    }
  }
}

/* sys stays in system memory, dev (its elements in names given the CUDA
 * contexts in ctxs, as run_scores_in) delivers CUDAMemory, and both give
 * the same meta_name scores, bit for bit, and with frames, the same
 * pixels. Returns dev's scores. */
static Scores *
run_same_as_system (const gchar * sys, const gchar * dev,
    const gchar * meta_name, gboolean frames, const gchar * const *names,
    GstCudaContext ** ctxs)
{
  Scores *a = run_scores (sys, meta_name, frames);
  Scores *b = run_scores_in (dev, meta_name, frames, names, ctxs);
  guint i;

  fail_if (a->cuda_caps, "%s is not in system memory", sys);
  fail_unless (b->cuda_caps, "%s did not stay in CUDAMemory", dev);
  assert_same_scores (a, b, 0, dev);
  fail_unless_equals_int (a->frames->len, b->frames->len);
  for (i = 0; i < a->frames->len; i++)
    fail_unless (g_bytes_equal (g_ptr_array_index (a->frames, i),
            g_ptr_array_index (b->frames, i)), "%s: frame %u differs", dev, i);
  scores_free (a);
  return b;
}

/* src ! sys_link ! cudasharpness (backend=cuda metrics=all, then props)
 * against src ! dev_link ! the same: see run_same_as_system. A link is
 * empty or starts with "!". */
static void
assert_sharpness_memory_same (const gchar * src, const gchar * sys_link,
    const gchar * dev_link, const gchar * props, gboolean frames)
{
  gchar *sys = g_strdup_printf ("%s %s ! cudasharpness backend=cuda "
      "metrics=all %s ! appsink name=sink sync=false", src, sys_link, props);
  gchar *dev = g_strdup_printf ("%s %s ! cudasharpness backend=cuda "
      "metrics=all %s ! appsink name=sink sync=false", src, dev_link, props);

  scores_free (run_same_as_system (sys, dev, "CudaSharpnessMeta", frames,
          NULL, NULL));
  g_free (sys);
  g_free (dev);
}

static gboolean
have_nvcodec (void)
{
  GstElementFactory *f = gst_element_factory_find ("cudaupload");

  if (!f)
    return FALSE;
  gst_object_unref (f);
  return TRUE;
}

GST_START_TEST (test_sharpness_cuda_memory_equals_system)
{
  /* formats cudaupload takes (not GRAY8) */
  const gchar *formats[] = { "I420", "NV12", "P010_10LE", "RGBA", "BGRx" };
  const gchar *rois[] = { "", "roi-x=13 roi-y=7 roi-width=301 roi-height=97" };
  guint k, r, n = quick ? 2 : G_N_ELEMENTS (formats);

  for (k = 0; k < n; k++)
    for (r = 0; r < G_N_ELEMENTS (rois); r++) {
      gchar *src = g_strdup_printf ("videotestsrc pattern=ball num-buffers=5 "
          "! video/x-raw,format=%s,width=%d,height=%d,framerate=30/1",
          formats[k], quick ? 352 : 1280, quick ? 288 : 720);

      assert_sharpness_memory_same (src, "", "! cudaupload ! "
          "video/x-raw(memory:CUDAMemory)", rois[r], FALSE);
      g_free (src);
    }
}

GST_END_TEST;

/* Each pad on its own: system memory, CUDAMemory, or one of each (read
 * through host memory). */
GST_START_TEST (test_ssim_cuda_memory_equals_system)
{
  const gchar *windows[] = { "box8", "ffmpeg", "gauss11" };
  const gchar *formats[] = { "I420", "NV12", "RGBA" };
  const gchar *up[2] = { "", "cudaupload ! video/x-raw(memory:CUDAMemory) !" };
  guint w, k, m, nk = quick ? 1 : G_N_ELEMENTS (formats);

  for (w = 0; w < G_N_ELEMENTS (windows); w++)
    for (k = 0; k < nk; k++) {
      Scores *base = NULL;

      for (m = 0; m < 4; m++) {
        gchar *desc = g_strdup_printf ("cudassim name=q backend=cuda "
            "window=%s planes=all ! appsink name=sink sync=false "
            "videotestsrc pattern=ball num-buffers=5 ! video/x-raw,format=%s,"
            "width=%d,height=%d,framerate=30/1 ! %s q.reference "
            "videotestsrc pattern=ball motion=sweep num-buffers=5 ! "
            "video/x-raw,format=%s,width=%d,height=%d,framerate=30/1 ! %s "
            "q.distorted", windows[w], formats[k], quick ? 352 : 1280,
            quick ? 288 : 720, up[m & 1], formats[k], quick ? 352 : 1280,
            quick ? 288 : 720, up[m >> 1]);
        Scores *s = run_scores (desc, "CudaSsimMeta", FALSE);

        fail_unless ((guint) s->cuda_caps == (m >> 1), "%s: output memory",
            desc);
        if (!base)
          base = s;
        else {
          assert_same_scores (base, s, 0, desc);
          scores_free (s);
        }
        g_free (desc);
      }
      scores_free (base);
    }
}

GST_END_TEST;

static GstCudaContext *
query_context (GstPad * pad)
{
  GstQuery *query = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstContext *context = NULL;
  GstCudaContext *ctx = NULL;

  if (gst_pad_query (pad, query)) {
    gst_query_parse_context (query, &context);
    /* GStreamer 1.22 names the field after the context type */
    if (context)
      gst_structure_get (gst_context_get_structure (context),
          GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &ctx, NULL);
  }
  gst_query_unref (query);
  return ctx;
}

/* cudaupload and the measuring elements end up in one CUDA context,
 * whichever of them creates it. */
GST_START_TEST (test_context_shared_with_cudaupload)
{
  GstElement *pipeline = gst_parse_launch ("videotestsrc num-buffers=-1 ! "
      "video/x-raw,width=320,height=240 ! tee name=t "
      "t. ! queue ! cudaupload name=up ! cudasharpness name=s backend=cuda ! "
      "fakesink t. ! queue ! cudaupload name=up2 ! q.reference "
      "t. ! queue ! q.distorted "
      "cudassim name=q backend=cuda ! fakesink", NULL);
  const gchar *names[4] = { "up", "up2", "s", "q" };
  const gchar *pads[4] = { "src", "src", "sink", "reference" };
  GstCudaContext *ctx[4];
  GstStateChangeReturn ret;
  guint i;

  fail_unless (pipeline != NULL);
  gst_element_set_state (pipeline, GST_STATE_PAUSED);
  ret = gst_element_get_state (pipeline, NULL, NULL, 10 * GST_SECOND);
  for (i = 0; i < 4; i++) {
    GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), names[i]);
    GstPad *pad = gst_element_get_static_pad (e, pads[i]);

    ctx[i] = query_context (pad);
    gst_object_unref (pad);
    gst_object_unref (e);
  }
  /* stopped before asserting: a failure must not leave the source running */
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);

  fail_unless (ret == GST_STATE_CHANGE_SUCCESS, "no preroll: %s",
      gst_element_state_change_return_get_name (ret));
  fail_unless (ctx[0] && ctx[1] && ctx[2] && ctx[3], "a context is missing: "
      "%p %p %p %p", ctx[0], ctx[1], ctx[2], ctx[3]);
  fail_unless (ctx[0] == ctx[2], "cudasharpness has its own context");
  fail_unless (ctx[1] == ctx[3], "cudassim has its own context");
  fail_unless (ctx[2] == ctx[3], "the two measuring elements differ");
  for (i = 0; i < 4; i++)
    gst_object_unref (ctx[i]);
}

GST_END_TEST;

static GstPadProbeReturn
count_pinned (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint *counts = user_data;
  GstMapInfo map;

  (void) pad;
  if (gst_buffer_map (buf, &map, GST_MAP_READ)) {
    counts[cq_cuda_is_pinned (map.data) ? 0 : 1]++;
    gst_buffer_unmap (buf, &map);
  }
  return GST_PAD_PROBE_OK;
}

/* videotestsrc takes the pool cudasharpness / cudassim propose: every frame
 * arrives in page-locked memory, and the scores equal the CPU backend's.
 * cudasfproject uses pinned memory where downstream offers none. */
GST_START_TEST (test_pinned_pool)
{
  const gchar *launch[] = {
    "videotestsrc pattern=ball num-buffers=8 ! video/x-raw,format=NV12,"
        "width=640,height=360 ! cudasharpness name=e backend=cuda ! "
        "appsink name=sink sync=false",
    "cudassim name=e backend=cuda ! appsink name=sink sync=false "
        "videotestsrc pattern=ball num-buffers=8 ! video/x-raw,format=I420,"
        "width=640,height=360 ! e.reference videotestsrc pattern=ball "
        "motion=sweep num-buffers=8 ! video/x-raw,format=I420,width=640,"
        "height=360 ! e.distorted",
    /* nothing downstream offers memory: cudasfproject downloads its frames
     * into a pinned pool of its own */
    "cudasfproject name=e backend=cuda num-buffers=8 volume-width=32 "
        "volume-height=32 volume-depth=32 detector-width=203 "
        "detector-height=64 views=8 ! appsink name=sink sync=false"
  };
  const gchar *pads[3] = { "sink", "distorted", "src" };
  const gchar *metas[3] =
      { "CudaSharpnessMeta", "CudaSsimMeta", "CudaSfProjectMeta" };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (launch); k++) {
    GstElement *pipeline, *e, *sink;
    GstPad *pad;
    guint counts[2] = { 0, 0 }, frames = 0;
    GstSample *sample;
    gchar *on_cpu, **parts;
    Scores *a, *b;

    pipeline = gst_parse_launch (launch[k], NULL);
    e = gst_bin_get_by_name (GST_BIN (pipeline), "e");
    sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
    pad = gst_element_get_static_pad (e, pads[k]);

    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_pinned, counts,
        NULL);
    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
                20 * GST_SECOND))) {
      frames++;
      gst_sample_unref (sample);
    }
    gst_element_set_state (pipeline, GST_STATE_NULL);
    fail_unless_equals_int (frames, 8);
    fail_unless_equals_int (counts[0], 8);
    fail_unless_equals_int (counts[1], 0);
    gst_object_unref (pad);
    gst_object_unref (e);
    gst_object_unref (sink);
    gst_object_unref (pipeline);

    /* the same frames on the CPU backend: exactly the same scores */
    parts = g_strsplit (launch[k], "backend=cuda", -1);
    on_cpu = g_strjoinv ("backend=cpu", parts);
    g_strfreev (parts);
    a = run_scores (launch[k], metas[k], FALSE);
    b = run_scores (on_cpu, metas[k], FALSE);
    /* sharpness sums are exact integers on both backends; SSIM is summed
     * in a different order (1e-9: the GPU suite's SSIM tolerance) */
    assert_same_scores (a, b, k == 0 ? 0 : 1e-9, launch[k]);
    scores_free (a);
    scores_free (b);
    g_free (on_cpu);
  }
}

GST_END_TEST;

/* Frames in a CUDA context other than the measuring element's: the
 * measurement moves into the frames' context (both frames of a pair in one
 * other context) or reads them through host memory (a pair split across
 * two contexts), with the scores of the same frames in system memory. */
GST_START_TEST (test_memory_of_another_context)
{
  GstCudaContext *ctx[2];
  const gchar *src = "videotestsrc pattern=ball num-buffers=6 ! "
      "video/x-raw,format=NV12,width=640,height=360,framerate=30/1";
  const gchar *src2 = "videotestsrc pattern=ball motion=sweep num-buffers=6 "
      "! video/x-raw,format=NV12,width=640,height=360,framerate=30/1";
  const gchar *names[] = { "up", "m", NULL };
  const gchar *names_ssim[] = { "up", "up2", "q", NULL };
  GstCudaContext *ssim_ctx[3];
  gchar *sys, *dev;
  Scores *a, *b;
  guint k;

  /* nvcodec loads the driver library when its elements are made; this
   * test may run before any is */
  fail_unless (gst_cuda_load_library ());
  ctx[0] = gst_cuda_context_new (0);
  ctx[1] = gst_cuda_context_new (0);
  fail_unless (ctx[0] && ctx[1]);
  fail_unless (ctx[0] != ctx[1]);

  /* cudasharpness in context 1, frames uploaded in context 0 */
  sys = g_strdup_printf ("%s ! cudasharpness backend=cuda metrics=all ! "
      "appsink name=sink sync=false", src);
  dev = g_strdup_printf ("%s ! cudaupload name=up ! "
      "video/x-raw(memory:CUDAMemory) ! cudasharpness name=m backend=cuda "
      "metrics=all ! appsink name=sink sync=false", src);
  scores_free (run_same_as_system (sys, dev, "CudaSharpnessMeta", FALSE,
          names, ctx));
  g_free (sys);
  g_free (dev);

  /* cudassim in context 1; the pair in context 0, then split over 0 and 1 */
  sys = g_strdup_printf ("cudassim name=q backend=cuda planes=all ! "
      "appsink name=sink sync=false %s ! q.reference %s ! q.distorted", src,
      src2);
  dev = g_strdup_printf ("cudassim name=q backend=cuda planes=all ! "
      "appsink name=sink sync=false %s ! cudaupload name=up ! "
      "video/x-raw(memory:CUDAMemory) ! q.reference %s ! "
      "cudaupload name=up2 ! video/x-raw(memory:CUDAMemory) ! q.distorted",
      src, src2);
  a = run_scores (sys, "CudaSsimMeta", FALSE);
  for (k = 0; k < 2; k++) {
    ssim_ctx[0] = ctx[0];
    ssim_ctx[1] = ctx[k];
    ssim_ctx[2] = ctx[1];
    b = run_scores_in (dev, "CudaSsimMeta", FALSE, names_ssim, ssim_ctx);
    fail_unless (b->cuda_caps);
    assert_same_scores (a, b, 0, k ? "pair split over two contexts" :
        "pair in another context");
    scores_free (b);
  }
  scores_free (a);
  g_free (sys);
  g_free (dev);
  gst_object_unref (ctx[0]);
  gst_object_unref (ctx[1]);
}

GST_END_TEST;

/* cudasfproject's frames to cudasharpness in system memory, then in any
 * memory (CUDAMemory, as cudasharpness takes it): 16, then 8 bit */
static const gchar *const sf_links[][2] = {
  {"! video/x-raw,format=GRAY16_LE", "! video/x-raw(ANY),format=GRAY16_LE"},
  {"! video/x-raw,format=GRAY8", "! video/x-raw(ANY),format=GRAY8"}
};

/* cudasfproject writes its frames into CUDAMemory when cudasharpness
 * downstream asks for it: the same pixels (pitched rows read back) and the
 * same scores as through system memory, with and without noise (drawn on
 * the device, keyed by the frame: the same either way), 8 and 16 bit. */
GST_START_TEST (test_sfproject_cuda_memory)
{
  const gchar *noise[] = { "", "noise=true seed=7 photons=5000",
    "noise=true seed=7 photons=5000 electronic-noise=4"
  };
  guint k, n;

  for (k = 0; k < G_N_ELEMENTS (sf_links); k++)
    for (n = 0; n < G_N_ELEMENTS (noise); n++) {
      gchar *src = g_strdup_printf ("cudasfproject backend=cuda "
          "num-buffers=%d volume-width=48 volume-height=48 volume-depth=32 "
          "detector-width=%d detector-height=45 views=16 %s", quick ? 3 : 20,
          quick ? 61 : 301, noise[n]);

      assert_sharpness_memory_same (src, sf_links[k][0], sf_links[k][1], "",
          TRUE);
      g_free (src);
    }
}

GST_END_TEST;

/* cudasfproject's views split over two workers ("0,0": the second
 * worker's frames reach CUDAMemory through pinned host memory; where two
 * GPUs are usable also "0,1" and "1,0", whose CUDAMemory is on the first
 * device of the list)
 * and its volume streamed in z-slabs (a device-memory-limit below the
 * resident layout's): CUDAMemory frames equal the system-memory ones,
 * with noise and without (issue 12). */
GST_START_TEST (test_sfproject_cuda_memory_split)
{
  const gchar *split[] = { "cuda-device-ids=\"0,0\"",
    "device-memory-limit=400000",
    "cuda-device-ids=\"0,0\" device-memory-limit=400000",
    "cuda-device-ids=\"0,1\"", "cuda-device-ids=\"1,0\"",
    "cuda-device-ids=\"0,1\" device-memory-limit=400000"
  };
  const gchar *noise[] = { "", "noise=true seed=5 photons=4000" };
  CqError err;
  guint k, n, n_split = cq_cuda_device_count (&err) >= 2 ?
      G_N_ELEMENTS (split) : 3;

  if (n_split < G_N_ELEMENTS (split))
    g_print ("skipped devices 0,1 and 1,0: one usable CUDA device\n");
  for (k = 0; k < n_split; k++)
    for (n = 0; n < G_N_ELEMENTS (noise); n++) {
      gchar *src = g_strdup_printf ("cudasfproject backend=cuda "
          "num-buffers=%d volume-width=48 volume-height=48 volume-depth=32 "
          "detector-width=61 detector-height=45 views=16 %s %s",
          quick ? 5 : 20, split[k], noise[n]);

      assert_sharpness_memory_same (src, sf_links[0][0], sf_links[0][1], "",
          TRUE);
      g_free (src);
    }
}

GST_END_TEST;

/* NVDEC output measured in place equals the same frames downloaded. */
GST_START_TEST (test_nvdec)
{
  const gchar *dir = g_getenv ("H264_DIR");
  GstElementFactory *f = gst_element_factory_find ("nvh264dec");
  gchar *ref, *dist, *dec_ref, *dec_dist, *dev_desc, *sys_desc;
  Scores *dev;
  gdouble ssim;
  guint i;

  if (!f || !dir) {
    g_print ("skipped: %s\n", f ? "H264_DIR not set" : "no nvh264dec");
    if (f)
      gst_object_unref (f);
    return;
  }
  gst_object_unref (f);
  ref = g_build_filename (dir, "reference.mp4", NULL);
  dist = g_build_filename (dir, "distorted.mp4", NULL);
  dec_ref = g_strdup_printf ("filesrc location=%s ! qtdemux ! h264parse ! "
      "nvh264dec ! video/x-raw(memory:CUDAMemory)", ref);
  dec_dist = g_strdup_printf ("filesrc location=%s ! qtdemux ! h264parse ! "
      "nvh264dec ! video/x-raw(memory:CUDAMemory)", dist);

  dev_desc = g_strdup_printf ("%s ! cudasharpness metrics=all ! "
      "appsink name=sink sync=false", dec_dist);
  sys_desc = g_strdup_printf ("%s ! cudadownload ! video/x-raw ! "
      "cudasharpness metrics=all ! appsink name=sink sync=false", dec_dist);
  dev = run_same_as_system (sys_desc, dev_desc, "CudaSharpnessMeta", FALSE,
      NULL, NULL);
  fail_unless_equals_int (dev->metas->len, 60);
  scores_free (dev);
  g_free (dev_desc);
  g_free (sys_desc);

  dev_desc = g_strdup_printf ("cudassim name=q planes=all ! appsink name=sink "
      "sync=false %s ! q.reference %s ! q.distorted", dec_ref, dec_dist);
  sys_desc = g_strdup_printf ("cudassim name=q planes=all ! appsink name=sink "
      "sync=false %s ! cudadownload ! video/x-raw ! q.reference %s ! "
      "cudadownload ! video/x-raw ! q.distorted", dec_ref, dec_dist);
  dev = run_same_as_system (sys_desc, dev_desc, "CudaSsimMeta", FALSE, NULL,
      NULL);
  fail_unless_equals_int (dev->metas->len, 60);
  /* a 300 kbit/s re-encode of a near-lossless reference */
  for (i = 0; i < dev->metas->len; i++) {
    fail_unless (gst_structure_get_double (g_ptr_array_index (dev->metas, i),
            "ssim", &ssim));
    fail_unless (ssim > 0.5 && ssim < 1.0, "frame %u: ssim %g", i, ssim);
  }
  scores_free (dev);
  g_free (dev_desc);
  g_free (sys_desc);
  g_free (dec_ref);
  g_free (dec_dist);
  g_free (ref);
  g_free (dist);
}

GST_END_TEST;

static void
cudamemory_tests (Suite * s)
{
  TCase *tc = cq_test_case (s, "general");

  tcase_add_test (tc, test_sharpness_cuda_memory_equals_system);
  tcase_add_test (tc, test_ssim_cuda_memory_equals_system);
  tcase_add_test (tc, test_context_shared_with_cudaupload);
  tcase_add_test (tc, test_pinned_pool);
  tcase_add_test (tc, test_memory_of_another_context);
  tcase_add_test (tc, test_sfproject_cuda_memory);
  tcase_add_test (tc, test_sfproject_cuda_memory_split);
  if (!quick)
    tcase_add_test (tc, test_nvdec);
}

int
main (int argc, char **argv)
{
  CqError err;
  int i;

  for (i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--quick"))
      quick = TRUE;
  gst_check_init (NULL, NULL);
  if (!cq_test_have_plugin ())
    return 1;
  if (cq_cuda_device_count (&err) < 1) {
    g_print ("SKIP: %s\n", err.message);
    return 77;
  }
  if (!have_nvcodec ()) {
    g_print ("SKIP: no nvcodec plugin (cudaupload)\n");
    return 77;
  }
  return cq_test_run_suite ("cudamemory", cudamemory_tests, __FILE__);
}
