/* End-to-end element throughput: prints figures, asserts nothing.
 *
 * appsrc(s) push the same I420 frames again and again (new timestamps,
 * shallow buffer copies) into cudasharpness or cudassim, then fakesink; the
 * time between the first and the last buffer at fakesink gives frames
 * (pairs) per second through the whole element in the steady state
 * (mapping, uploads, kernels, meta; start-up left out). Frames live in
 *   pageable  malloc'd memory (GstBuffer wrapping it),
 *   pinned    page-locked memory (what the elements' proposed pool gives),
 *   cuda      CUDAMemory of a GstCudaContext shared with the element.
 * "none" is appsrc ! fakesink alone: GStreamer's own per-buffer cost.
 * The gauss11 cases give issue 15's comparisons: align=continuous (window
 * 15) against align=none, and MS-SSIM on. The repeated frames are static
 * content to the alignment: every search runs in full (and stays
 * undecided), which is its cost per pair. With alignment the appsrcs
 * queue align-window + 8 frames (shallow copies) whatever their bytes:
 * the element takes a distorted frame only once the reference stream is
 * `window` frames past it, and the alternate pushes of one thread would
 * otherwise block on the distorted queue (max-bytes' default holds one
 * frame) before the reference stream gets there.
 * Last, cudasfproject ! cudasharpness with the frames in system memory and
 * in CUDAMemory, and cudasfproject at its default geometry with and without
 * noise.
 * Host figures are printed beside the host-to-device bound of the bytes
 * the element uploads (only the measured planes), from a plain cudaMemcpy
 * of 64 MiB timed right after the case.
 *
 *   bench-elements [--quick] [--sfproject] [--only LABEL] [--memory MEM]
 *       [--size WxH]
 *     --sfproject: that part only; --only: the cases whose label contains
 *     LABEL; --memory: pageable, pinned or cuda only; --size: 1920x1080 or
 *     3840x2160 only
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#define GST_USE_UNSTABLE_API
#include <gst/gst.h>
#include <gst/app/app.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/cuda/gstcudamemory.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"

#define N_FRAMES 4              /* distinct frames a stream cycles through */

typedef enum
{ MEM_PAGEABLE, MEM_PINNED, MEM_CUDA } Mem;
static const gchar *mem_names[] = { "pageable", "pinned", "cuda" };

static GstCudaContext *cuda_ctx;

static void
fill_frame (guint8 * d, gsize n, guint seed)
{
  guint64 s = 88172645463325252ull ^ seed;
  gsize i;

  for (i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    d[i] = (guint8) ((i * 7 + ((s >> 40) & 31)) & 0xff);
  }
}

/* N_FRAMES buffers of one stream in the given memory. */
static void
make_frames (Mem mem, const GstVideoInfo * info, guint stream, GstBuffer ** out)
{
  guint i;

  for (i = 0; i < N_FRAMES; i++) {
    if (mem == MEM_CUDA) {
      GstAllocator *alloc = gst_allocator_find (GST_CUDA_MEMORY_TYPE_NAME);
      GstMemory *m = gst_cuda_allocator_alloc (GST_CUDA_ALLOCATOR (alloc),
          cuda_ctx, info);
      GstCudaMemory *cm = GST_CUDA_MEMORY_CAST (m);
      GstVideoFrame f;
      guint p;

      if (!m) {
        fprintf (stderr, "cannot allocate CUDA memory\n");
        exit (1);
      }
      gst_object_unref (alloc);
      out[i] = gst_buffer_new ();
      gst_buffer_append_memory (out[i], m);
      /* the memory's pitched layout */
      gst_buffer_add_video_meta_full (out[i], GST_VIDEO_FRAME_FLAG_NONE,
          GST_VIDEO_INFO_FORMAT (&cm->info), cm->info.width, cm->info.height,
          GST_VIDEO_INFO_N_PLANES (&cm->info), cm->info.offset,
          cm->info.stride);
      gst_video_frame_map (&f, (GstVideoInfo *) info, out[i], GST_MAP_WRITE);
      for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&f); p++)
        fill_frame (GST_VIDEO_FRAME_PLANE_DATA (&f, p),
            (gsize) GST_VIDEO_FRAME_PLANE_STRIDE (&f, p) *
            GST_VIDEO_FRAME_COMP_HEIGHT (&f, p), stream * 16 + i * 3 + p);
      gst_video_frame_unmap (&f);
      /* upload once, now */
      gst_video_frame_map (&f, (GstVideoInfo *) info, out[i],
          GST_MAP_READ | GST_MAP_CUDA);
      gst_video_frame_unmap (&f);
    } else {
      guint8 *d = mem == MEM_PINNED ? cq_cuda_host_alloc (info->size, NULL) :
          g_malloc (info->size);

      fill_frame (d, info->size, stream * 16 + i);
      out[i] = gst_buffer_new_wrapped_full (0, d, info->size, 0, info->size,
          d, mem == MEM_PINNED ? (GDestroyNotify) cq_cuda_host_free : g_free);
      gst_buffer_add_video_meta_full (out[i], GST_VIDEO_FRAME_FLAG_NONE,
          GST_VIDEO_INFO_FORMAT (info), info->width, info->height,
          GST_VIDEO_INFO_N_PLANES (info), (gsize *) info->offset,
          (gint *) info->stride);
    }
  }
}

/* Waits for EOS and stops the pipeline; an error ends the benchmark. */
static void
wait_eos (GstElement * pipeline, const gchar * what)
{
  GstMessage *msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
      GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *e;
    gchar *dbg;

    gst_message_parse_error (msg, &e, &dbg);
    fprintf (stderr, "%s: %s (%s)\n", what, e->message, dbg);
    exit (1);
  }
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
}

typedef struct
{
  gint64 first, last;
  guint n;
} Stamps;

static GstPadProbeReturn
stamp_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Stamps *st = user_data;

  (void) pad;
  (void) info;
  st->last = g_get_monotonic_time ();
  if (st->n++ == 0)
    st->first = st->last;
  return GST_PAD_PROBE_OK;
}

/* Frames (pairs) a second through the pipeline, in the steady state:
 * between the first and the last buffer reaching fakesink, so that the
 * start-up (caps, allocations of device frames and pinned staging) is
 * left out. */
/* A pipeline or the end of the benchmark: a missing element (the plugin not
 * on GST_PLUGIN_PATH) would otherwise leave appsrc blocked for ever. */
static GstElement *
parse_or_exit (const gchar * desc)
{
  GError *e = NULL;
  GstElement *pipeline = gst_parse_launch_full (desc, NULL,
      GST_PARSE_FLAG_FATAL_ERRORS, &e);

  if (!pipeline) {
    fprintf (stderr, "cannot make \"%s\": %s (is the plugin on "
        "GST_PLUGIN_PATH?)\n", desc, e ? e->message : "unknown error");
    exit (1);
  }
  return pipeline;
}

/* The appsrcs' queue limits: align-window (default 15) + 8 frames with
 * alignment, else 8 frames (and max-bytes' default). */
static gchar *
queue_limits (const gchar * props)
{
  const gchar *w = strstr (props, "align-window=");

  if (!strstr (props, "align=") || strstr (props, "align=none"))
    return g_strdup ("max-buffers=8");
  return g_strdup_printf ("max-buffers=%u max-bytes=0",
      (w ? (guint) atoi (w + strlen ("align-window=")) : 15) + 8);
}

static gdouble
run (const gchar * element, const gchar * props, Mem mem, guint w, guint h,
    guint count)
{
  GstVideoInfo info;
  GstBuffer *frames[2][N_FRAMES];
  GstElement *pipeline, *src[2];
  GstCaps *caps;
  gchar *caps_str, *desc;
  guint n_src = g_str_equal (element, "cudassim") ? 2 : 1, i, k;
  Stamps st = { 0, 0, 0 };
  GstElement *sink;
  GstPad *sink_pad;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, w, h);
  info.fps_n = 30;
  info.fps_d = 1;
  caps = gst_video_info_to_caps (&info);
  if (mem == MEM_CUDA)
    gst_caps_set_features (caps, 0,
        gst_caps_features_new ("memory:CUDAMemory", NULL));
  caps_str = gst_caps_to_string (caps);
  gst_caps_unref (caps);
  if (n_src == 2) {
    gchar *limits = queue_limits (props);

    desc = g_strdup_printf ("cudassim name=e %s post-messages=false ! "
        "fakesink name=sink sync=false appsrc name=s0 format=time block=true "
        "%s caps=\"%s\" ! e.reference appsrc name=s1 format=time "
        "block=true %s caps=\"%s\" ! e.distorted", props, limits, caps_str,
        limits, caps_str);
    g_free (limits);
  } else if (g_str_equal (element, "none"))
    desc = g_strdup_printf ("appsrc name=s0 format=time block=true "
        "max-buffers=8 caps=\"%s\" ! fakesink name=sink sync=false", caps_str);
  else
    desc = g_strdup_printf ("appsrc name=s0 format=time block=true "
        "max-buffers=8 caps=\"%s\" ! %s %s post-messages=false ! "
        "fakesink name=sink sync=false", caps_str, element, props);
  pipeline = parse_or_exit (desc);
  g_free (desc);
  g_free (caps_str);
  if (mem == MEM_CUDA) {
    GstContext *c = gst_context_new_cuda_context (cuda_ctx);

    gst_element_set_context (pipeline, c);
    gst_context_unref (c);
  }
  for (k = 0; k < n_src; k++) {
    gchar name[4] = { 's', (gchar) ('0' + k), 0 };

    src[k] = gst_bin_get_by_name (GST_BIN (pipeline), name);
    make_frames (mem, &info, k, frames[k]);
  }
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  sink_pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (sink_pad, GST_PAD_PROBE_TYPE_BUFFER, stamp_buffer, &st,
      NULL);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  for (i = 0; i < count; i++)
    for (k = 0; k < n_src; k++) {
      GstBuffer *b = gst_buffer_copy (frames[k][i % N_FRAMES]);

      GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, 30);
      GST_BUFFER_DURATION (b) = GST_SECOND / 30;
      gst_app_src_push_buffer (GST_APP_SRC (src[k]), b);
    }
  for (k = 0; k < n_src; k++)
    gst_app_src_end_of_stream (GST_APP_SRC (src[k]));
  wait_eos (pipeline, element);
  for (k = 0; k < n_src; k++) {
    for (i = 0; i < N_FRAMES; i++)
      gst_buffer_unref (frames[k][i]);
    gst_object_unref (src[k]);
  }
  gst_object_unref (sink_pad);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return st.n > 1 ? (st.n - 1) / ((st.last - st.first) * 1e-6) : 0;
}

/* Frames a second from the first to the last buffer reaching the sink
 * named "sink" (start-up, such as the volume upload, left out). */
static gdouble
run_source (const gchar * desc)
{
  GstElement *pipeline = parse_or_exit (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  Stamps st = { 0, 0, 0 };

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, stamp_buffer, &st, NULL);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  wait_eos (pipeline, desc);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return st.n > 1 ? (st.n - 1) / ((st.last - st.first) * 1e-6) : 0;
}

/* cudasfproject at its default geometry (128³ Shepp-Logan, 256² detector,
 * 360 views) without noise, with Poisson noise and with Poisson plus
 * electronic noise (all drawn on the GPU): to fakesink through system
 * memory, and to cudasharpness through system memory and CUDAMemory. The
 * issue-13 target: noisy ≥ 80 % of noiseless. */
static void
bench_sfproject_noise (gboolean quick)
{
  static const struct
  {
    const gchar *label, *link, *element;
  } sinks[] = {
    {"system ! fakesink", "video/x-raw", "identity"},
    {"system ! cudasharpness", "video/x-raw", "cudasharpness"},
    {"CUDAMemory ! cudasharp.", "video/x-raw(ANY)", "cudasharpness"},
  };
  static const struct
  {
    const gchar *label, *props;
  } noises[] = {
    {"none", ""},
    {"Poisson", "noise=true seed=1"},
    {"Poisson + electronic", "noise=true seed=1 electronic-noise=5"},
  };
  guint s, k, n = quick ? 400 : 3600;

  printf ("\ncudasfproject, default geometry (128^3, 256^2, 360 views), "
      "GRAY16_LE, %u frames\n", n);
  printf ("%-24s %-22s %10s %9s %8s\n", "frames", "noise", "frames/s",
      "us/frame", "of none");
  for (s = 0; s < G_N_ELEMENTS (sinks); s++) {
    gdouble none = 0;

    for (k = 0; k < G_N_ELEMENTS (noises); k++) {
      gchar *desc = g_strdup_printf ("cudasfproject backend=cuda "
          "num-buffers=%u %s ! %s,format=GRAY16_LE ! %s ! fakesink "
          "name=sink sync=false", n, noises[k].props, sinks[s].link,
          sinks[s].element);
      gdouble rate = run_source (desc);

      if (k == 0)
        none = rate;
      printf ("%-24s %-22s %10.0f %9.1f %7.0f%%\n", sinks[s].label,
          noises[k].label, rate, 1e6 / rate, none > 0 ? 100 * rate / none :
          0);
      fflush (stdout);
      g_free (desc);
    }
  }
}

/* cudasfproject at case B of bench-sfproject (512³ Shepp-Logan, 360 views
 * of 512²) on one GPU and on two (cuda-device-ids="0,1": 16 views a
 * device a batch, frames still in view order), two rotations to fakesink
 * through system memory and into CUDAMemory (issue 12). */
static void
bench_sfproject_devices (gboolean quick)
{
  static const gchar *const lists[] = { "", "0,1" };
  static const gchar *const links[][2] = {
    {"system memory", "video/x-raw"},
    {"CUDAMemory", "video/x-raw(memory:CUDAMemory)"},
  };
  guint l, k, n = quick ? 360 : 720;
  gdouble one = 0;

  if (cq_cuda_device_count (NULL) < 2) {
    printf ("\ncudasfproject on two GPUs: skipped, one CUDA device\n");
    return;
  }
  printf ("\ncudasfproject, 512^3, 360 views of 512^2, GRAY16_LE, %u frames "
      "! fakesink\n", n);
  printf ("%-16s %-14s %10s %9s %8s\n", "frames", "cuda-device-ids",
      "frames/s", "us/frame", "speed-up");
  for (k = 0; k < G_N_ELEMENTS (links); k++)
    for (l = 0; l < G_N_ELEMENTS (lists); l++) {
      gchar *desc = g_strdup_printf ("cudasfproject backend=cuda "
          "num-buffers=%u volume-width=512 volume-height=512 "
          "volume-depth=512 detector-width=512 detector-height=512 "
          "views=360 cuda-device-ids=\"%s\" ! %s,format=GRAY16_LE ! "
          "fakesink name=sink sync=false", n, lists[l], links[k][1]);
      gdouble rate = run_source (desc);

      if (l == 0)
        one = rate;
      printf ("%-16s %-14s %10.0f %9.1f %7.2fx\n", links[k][0],
          l == 0 ? "\"\" (one)" : lists[l], rate, 1e6 / rate,
          one > 0 ? rate / one : 0);
      fflush (stdout);
      g_free (desc);
    }
}

/* cudasfproject ! cudasharpness: frames through system memory (downloaded,
 * then uploaded from the pinned pool cudasharpness proposes) or left in
 * CUDAMemory. A 16³ volume keeps the projector's share small, so the
 * figures show the frame transport. */
static void
bench_sfproject (gboolean quick)
{
  static const guint sizes[][2] = { {1024, 768}, {2048, 1536} };
  static const struct
  {
    const gchar *label, *link, *element;
  } cases[] = {
    {"system memory", "video/x-raw", "cudasharpness"},
    {"CUDAMemory", "video/x-raw(ANY)", "cudasharpness"},
    {"system, no element", "video/x-raw", "identity"},
  };
  guint s, c, n = quick ? 200 : 2000;

  printf ("\ncudasfproject (16^3 volume, GRAY16_LE) ! X ! fakesink\n");
  printf ("%-22s %-9s %10s %9s\n", "frames", "size", "frames/s", "us/frame");
  for (s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (c = 0; c < G_N_ELEMENTS (cases); c++) {
      gchar *desc = g_strdup_printf ("cudasfproject backend=cuda "
          "num-buffers=%u volume-width=16 volume-height=16 volume-depth=16 "
          "detector-width=%u detector-height=%u views=64 ! %s,"
          "format=GRAY16_LE ! %s ! fakesink name=sink sync=false", n,
          sizes[s][0], sizes[s][1], cases[c].link, cases[c].element);
      gdouble rate = run_source (desc);

      printf ("%-22s %4ux%-4u %10.0f %9.1f\n", cases[c].label, sizes[s][0],
          sizes[s][1], rate, 1e6 / rate);
      fflush (stdout);
      g_free (desc);
    }
  bench_sfproject_noise (quick);
  bench_sfproject_devices (quick);
}

int
main (int argc, char **argv)
{
  static const guint sizes[][2] = { {1920, 1080}, {3840, 2160} };
  static const struct
  {
    const gchar *element, *props, *label;
    gdouble plane_bytes;        /* uploaded bytes a frame, × w·h */
  } cases[] = {
    {"none", "", "appsrc ! fakesink", 0},
    {"cudasharpness", "", "cudasharpness (luma)", 1.0},
    {"cudassim", "window=ffmpeg", "cudassim ffmpeg luma", 2.0},
    {"cudassim", "window=box8", "cudassim box8 luma", 2.0},
    {"cudassim", "window=box8 planes=all", "cudassim box8 all", 3.0},
    {"cudassim", "window=ffmpeg planes=all", "cudassim ffmpeg all", 3.0},
    {"cudassim", "window=gauss11", "cudassim gauss11 luma", 2.0},
    {"cudassim", "window=gauss11 align=continuous align-window=15",
        "cudassim gauss11 align", 2.0},
    {"cudassim", "window=gauss11 ms-ssim=true", "cudassim ms-ssim luma", 2.0},
  };
  gboolean quick = FALSE, sf_only = FALSE;
  const gchar *only = NULL, *only_mem = NULL, *only_size = NULL;
  gdouble bw[2];
  char dev[128];
  guint s, c, m;

  gst_init (&argc, &argv);
  for (s = 1; s < (guint) argc; s++) {
    quick |= g_str_equal (argv[s], "--quick");
    sf_only |= g_str_equal (argv[s], "--sfproject");
    if (g_str_equal (argv[s], "--only") && s + 1 < (guint) argc)
      only = argv[++s];
    else if (g_str_equal (argv[s], "--memory") && s + 1 < (guint) argc)
      only_mem = argv[++s];
    else if (g_str_equal (argv[s], "--size") && s + 1 < (guint) argc)
      only_size = argv[++s];
  }
  if (cq_cuda_device_count (NULL) < 1 || !gst_cuda_load_library ()) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  gst_cuda_memory_init_once ();
  cuda_ctx = gst_cuda_context_new (0);
  cq_cuda_device_describe (0, dev, sizeof (dev), NULL);
  cq_cuda_h2d_bandwidth (0, 64u << 20, 0, &bw[0], NULL);
  cq_cuda_h2d_bandwidth (0, 64u << 20, 1, &bw[1], NULL);
  printf ("device: %s\nhost-to-device: pageable %.1f GB/s, pinned %.1f "
      "GB/s (64 MiB cudaMemcpy)\n", dev, bw[0], bw[1]);
  printf ("%-22s %-9s %-9s %10s %9s %12s %6s\n", "element", "size", "memory",
      "frames/s", "us/frame", "bound/s", "of");
  for (s = 0; s < (sf_only ? 0 : G_N_ELEMENTS (sizes)); s++)
    for (c = 0; c < G_N_ELEMENTS (cases); c++)
      for (m = 0; m < 3; m++) {
        guint w = sizes[s][0], h = sizes[s][1];
        gchar *size = g_strdup_printf ("%ux%u", w, h);
        gboolean skip = only_size && !g_str_equal (only_size, size);
        guint count = m == MEM_CUDA ? 4000 : s == 0 ? 1500 :
            m == MEM_PINNED ? 1000 : 400;
        gdouble rate, bound = 0;

        g_free (size);
        if (skip || (only && !strstr (cases[c].label, only))
            || (only_mem && !g_str_equal (only_mem, mem_names[m])))
          continue;
        if (quick)
          count /= 10;
        rate = run (cases[c].element, cases[c].props, (Mem) m, w, h, count);
        /* the host's copy speed drifts from run to run (pageable: 5.7 to
         * 13.5 GB/s seen on one H100 host): the bound is measured again
         * right after each host case */
        if (m != MEM_CUDA && cases[c].plane_bytes > 0
            && cq_cuda_h2d_bandwidth (0, 64u << 20, m == MEM_PINNED, &bw[m],
                NULL) == CQ_OK)
          bound = bw[m] * 1e9 / (cases[c].plane_bytes * w * h);
        printf ("%-22s %4ux%-4u %-9s %10.0f %9.1f", cases[c].label, w, h,
            mem_names[m], rate, 1e6 / rate);
        if (bound > 0)
          printf (" %12.0f %5.0f%%\n", bound, 100.0 * rate / bound);
        else
          printf ("\n");
        fflush (stdout);
      }
  if (!only && !only_mem && !only_size)
    bench_sfproject (quick);
  gst_object_unref (cuda_ctx);
  return 0;
}
