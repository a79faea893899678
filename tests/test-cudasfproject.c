/* CPU suite: the cudasfproject source through GstHarness (backend=cpu; the
 * GPU suite reruns it with CUDASFPROJECT_TEST_BACKEND=cuda): caps, the
 * views, rotations and angles in the meta, frames against the library's
 * projector, determinism of the noise, Poisson statistics of a flat field,
 * and the errors.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cq-common.h"
#include "cq-test.h"
#include "cq-phantom.h"
#include "cq-sfproject.h"

static const gchar *backend = "cpu";

/* a small geometry: 32³ voxels of 1 mm, 48x40 cells of 1 mm, D = 2R */
#define SMALL "volume-width=32 volume-height=32 volume-depth=32 " \
  "detector-width=48 detector-height=40 source-origin-distance=200 " \
  "source-detector-distance=400 "

static GstHarness *
harness (const gchar * props, const gchar * caps)
{
  gchar *desc = g_strdup_printf ("cudasfproject backend=%s %s%s%s", backend,
      props, caps ? " ! " : "", caps ? caps : "");
  GstHarness *h = gst_harness_new_parse (desc);

  g_free (desc);
  gst_harness_play (h);
  return h;
}

static const GstStructure *
meta_of (GstBuffer * buf)
{
  GstCustomMeta *m = gst_buffer_get_custom_meta (buf, "CudaSfProjectMeta");

  fail_unless (m != NULL);
  return gst_custom_meta_get_structure (m);
}

static guint
pixel16 (GstBuffer * buf, guint stride, guint u, guint v)
{
  GstMapInfo map;
  guint x;

  gst_buffer_map (buf, &map, GST_MAP_READ);
  x = GST_READ_UINT16_LE (map.data + v * stride + 2 * u);
  gst_buffer_unmap (buf, &map);
  return x;
}

GST_START_TEST (test_caps)
{
  GstHarness *h = harness (SMALL, NULL);
  GstBuffer *buf = gst_harness_pull (h);
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstVideoInfo info;

  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&info),
      GST_VIDEO_FORMAT_GRAY16_LE);
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info), 48);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&info), 40);
  fail_unless_equals_int (GST_VIDEO_INFO_FPS_N (&info), 30);
  fail_unless_equals_uint64 (gst_buffer_get_size (buf), 48 * 40 * 2);
  /* a peer that takes anything gets system memory, GPU or not */
  fail_unless (gst_caps_features_is_equal (gst_caps_get_features (caps, 0),
          GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY), "%" GST_PTR_FORMAT, caps);
  gst_caps_unref (caps);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);

  h = harness (SMALL,
      "capsfilter caps=video/x-raw,format=GRAY8,framerate=10/1");
  buf = gst_harness_pull (h);
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&info),
      GST_VIDEO_FORMAT_GRAY8);
  fail_unless_equals_uint64 (GST_BUFFER_DURATION (buf), GST_SECOND / 10);
  gst_caps_unref (caps);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_views_and_angles)
{
  GstHarness *h = harness (SMALL "views=4 start-angle=0.5", NULL);
  guint n;

  for (n = 0; n < 6; n++) {
    GstBuffer *buf = gst_harness_pull (h);
    const GstStructure *s = meta_of (buf);
    guint view;
    guint64 rotation;
    gdouble angle;

    fail_unless (gst_structure_get_uint (s, "view", &view));
    fail_unless (gst_structure_get_uint64 (s, "rotation", &rotation));
    fail_unless (gst_structure_get_double (s, "angle", &angle));
    fail_unless_equals_int (view, n % 4);
    fail_unless_equals_uint64 (rotation, n / 4);
    fail_unless (fabs (angle - (0.5 + 2 * M_PI * (n % 4) / 4)) < 1e-12);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (buf),
        gst_util_uint64_scale (n, GST_SECOND, 30));
    gst_buffer_unref (buf);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The small geometry's Shepp-Logan line integrals from the library. */
static gdouble *
library_projection (guint views, guint view, gdouble pitch)
{
  CqSfGeometry g;
  gsize n = 32 * 32 * 32, i;
  float *f = g_new (float, n);
  gdouble *vol = g_new (gdouble, n), *proj = g_new (gdouble, 48 * 40);
  CqError err;

  g = cq_test_cone_geometry (32, 32, 32, 1, 1, 48, 40, 1, 1, 200, 400, views);
  g.helical_pitch = pitch;
  cq_phantom_fill (CQ_PHANTOM_SHEPP_LOGAN, &g, f);
  for (i = 0; i < n; i++)
    vol[i] = f[i];
  fail_unless_equals_int (cq_sf_project_cpu (&g, vol, view, 1, proj, 1,
          &err), CQ_OK);
  g_free (f);
  g_free (vol);
  return proj;
}

GST_START_TEST (test_frames_against_library)
{
  GstHarness *h = harness (SMALL "views=8 output=line-integral mu-scale=0.5",
      NULL);
  GstHarness *hc = harness (SMALL "views=8 photons=60000 mu-scale=0.05",
      NULL);
  GstBuffer *li, *cn;
  gdouble *want, scale;
  guint n, u, v, worst = 0;

  for (n = 0; n < 3; n++) {
    li = gst_harness_pull (h);
    cn = gst_harness_pull (hc);
  }
  want = library_projection (8, 2, 0);
  fail_unless (gst_structure_get_double (meta_of (li), "value-scale", &scale));
  for (v = 0; v < 40; v++)
    for (u = 0; u < 48; u++) {
      gdouble w = 0.5 * want[v * 48 + u];
      gdouble counts = 60000 * exp (-0.05 * want[v * 48 + u]);
      gint d1 = (gint) pixel16 (li, 96, u, v) - (gint) floor (w / scale + 0.5);
      gint d2 = (gint) pixel16 (cn, 96, u, v) - (gint) floor (counts + 0.5);

      /* float32 on CUDA may round a value to the next level */
      worst = MAX (worst, (guint) MAX (ABS (d1), ABS (d2)));
    }
  fail_unless (worst <= (g_str_equal (backend, "cpu") ? 0u : 1u),
      "max difference %u levels", worst);
  g_free (want);
  gst_buffer_unref (li);
  gst_buffer_unref (cn);
  gst_harness_teardown (h);
  gst_harness_teardown (hc);
}

GST_END_TEST;

/* A helical orbit, 8 mm a rotation of 8 views: frame 10 is view 10 of the
 * helix (source at z = 10 mm, at the angle of frame 2), the library's
 * projection; the meta carries the source's z. */
GST_START_TEST (test_helical_frames)
{
  GstHarness *h = harness (SMALL "views=8 helical-pitch=8 "
      "output=line-integral mu-scale=0.5", NULL);
  GstBuffer *buf = NULL, *second = NULL;
  gdouble *want, scale, z = -1, pitch = -1;
  guint n, u, v, view, worst = 0;
  GstMapInfo m1, m2;
  gboolean same;

  for (n = 0; n <= 10; n++) {
    const GstStructure *s;

    buf = gst_harness_pull (h);
    s = meta_of (buf);
    fail_unless (gst_structure_get_double (s, "source-z", &z));
    fail_unless (gst_structure_get_double (s, "helical-pitch", &pitch));
    fail_unless (gst_structure_get_uint (s, "view", &view));
    fail_unless (fabs (z - n) < 1e-12 && pitch == 8 && view == n % 8,
        "frame %u: z %g, pitch %g, view %u", n, z, pitch, view);
    if (n == 2)
      second = buf;
    else if (n < 10)
      gst_buffer_unref (buf);
  }
  want = library_projection (8, 10, 8);
  fail_unless (gst_structure_get_double (meta_of (buf), "value-scale", &scale));
  for (v = 0; v < 40; v++)
    for (u = 0; u < 48; u++) {
      gint d = (gint) pixel16 (buf, 96, u, v) -
          (gint) floor (0.5 * want[v * 48 + u] / scale + 0.5);

      worst = MAX (worst, (guint) ABS (d));
    }
  fail_unless (worst <= (g_str_equal (backend, "cpu") ? 0u : 1u),
      "max difference %u levels", worst);
  /* not the frame of the same angle one rotation lower */
  gst_buffer_map (second, &m1, GST_MAP_READ);
  gst_buffer_map (buf, &m2, GST_MAP_READ);
  same = memcmp (m1.data, m2.data, m1.size) == 0;
  gst_buffer_unmap (second, &m1);
  gst_buffer_unmap (buf, &m2);
  fail_if (same);
  g_free (want);
  gst_buffer_unref (second);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
}

GST_END_TEST;

static gchar *
frame_checksum (const gchar * props)
{
  GstHarness *h = harness (props, NULL);
  GstBuffer *buf = gst_harness_pull (h);
  GstMapInfo map;
  gchar *sum;

  gst_buffer_map (buf, &map, GST_MAP_READ);
  sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, map.data, map.size);
  gst_buffer_unmap (buf, &map);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
  return sum;
}

GST_START_TEST (test_noise_determinism)
{
  static const gchar *kinds[] = { "noise=true", "electronic-noise=3.5",
    "noise=true electronic-noise=2"
  };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (kinds); k++) {
    gchar *p7 = g_strdup_printf (SMALL "%s seed=7", kinds[k]);
    gchar *p8 = g_strdup_printf (SMALL "%s seed=8", kinds[k]);
    gchar *a = frame_checksum (p7);
    gchar *b = frame_checksum (p7);
    gchar *c = frame_checksum (p8);

    fail_unless (g_str_equal (a, b), "%s", kinds[k]);
    fail_if (g_str_equal (a, c), "%s", kinds[k]);
    g_free (a);
    g_free (b);
    g_free (c);
    g_free (p7);
    g_free (p8);
  }
}

GST_END_TEST;

/* The noise is keyed by the frame's place in the stream: the same view of
 * the next rotation has noise of its own (without noise it is the same
 * frame). */
GST_START_TEST (test_noise_per_rotation)
{
  static const gchar *kinds[] = { "", "noise=true seed=5" };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (kinds); k++) {
    gchar *props = g_strdup_printf (SMALL "views=3 %s", kinds[k]);
    GstHarness *h = harness (props, NULL);
    GstBuffer *first = gst_harness_pull (h), *buf;
    guint n;

    for (n = 1; n < 3; n++)
      gst_buffer_unref (gst_harness_pull (h));
    buf = gst_harness_pull (h);
    {
      GstMapInfo m1, m2;
      gboolean same;

      gst_buffer_map (first, &m1, GST_MAP_READ);
      gst_buffer_map (buf, &m2, GST_MAP_READ);
      same = m1.size == m2.size && memcmp (m1.data, m2.data, m1.size) == 0;
      gst_buffer_unmap (first, &m1);
      gst_buffer_unmap (buf, &m2);
      fail_unless (same == (k == 0), "%s: rotation 2 %s rotation 1",
          kinds[k], same ? "repeats" : "differs from");
    }
    gst_buffer_unref (first);
    gst_buffer_unref (buf);
    gst_harness_teardown (h);
    g_free (props);
  }
}

GST_END_TEST;

/* A flat field (no attenuation): every cell receives I0 photons on
 * average; mean and variance of Poisson(I0) plus the electronic noise's σ²
 * (and 1/12 for rounding a continuous value), for a large and a small I0.
 * Bounds: 5 standard errors, test-sfnoise-cpu.c says how. */
static void
check_flat_field (gdouble photons, gboolean poisson, gdouble sigma)
{
  gchar *props = g_strdup_printf (SMALL "mu-scale=0 noise=%s seed=3 "
      "photons=%g electronic-noise=%g", poisson ? "true" : "false", photons,
      sigma);
  const gdouble V = (poisson ? photons : 0) + sigma * sigma +
      (sigma > 0 ? 1.0 / 12 : 0), k4 = poisson ? photons : 0;
  GstHarness *h = harness (props, NULL);
  gdouble sum = 0, sum2 = 0, mean, var;
  guint n = 0, f, u, v;

  for (f = 0; f < 8; f++) {
    GstBuffer *buf = gst_harness_pull (h);

    for (v = 0; v < 40; v++)
      for (u = 0; u < 48; u++) {
        gdouble x = pixel16 (buf, 96, u, v);

        sum += x;
        sum2 += x * x;
        n++;
      }
    gst_buffer_unref (buf);
  }
  mean = sum / n;
  var = sum2 / n - mean * mean;
  fail_unless (fabs (mean - photons) < 5 * sqrt (V / n),
      "I0 %g sigma %g: mean %g over %u cells", photons, sigma, mean, n);
  fail_unless (fabs (var - V) < 5 * sqrt ((k4 + 2 * V * V) / n),
      "I0 %g sigma %g: variance %g, want %g", photons, sigma, var, V);
  gst_harness_teardown (h);
  g_free (props);
}

GST_START_TEST (test_poisson_flat_field)
{
  check_flat_field (1000, TRUE, 0);
  check_flat_field (4, TRUE, 0);
  check_flat_field (1000, TRUE, 20);
  check_flat_field (1000, FALSE, 10);
}

GST_END_TEST;

/* Plays the pipeline desc (freed) and returns the error it posts, its
 * debug text in *debug; fails where none comes (props names the case). */
static GError *
play_error (gchar * desc, const gchar * props, gchar ** debug)
{
  GstElement *p = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m;
  GError *error = NULL;

  gst_element_set_state (p, GST_STATE_PLAYING);
  m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (m != NULL, "no error for %s", props);
  gst_message_parse_error (m, &error, debug);
  gst_message_unref (m);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  g_free (desc);
  return error;
}

static void
expect_start_error (const gchar * props, const gchar * needle1,
    const gchar * needle2)
{
  gchar *debug = NULL, *text;
  GError *error = play_error (g_strdup_printf ("cudasfproject backend=%s "
          "%s ! fakesink", backend, props), props, &debug);

  text = g_strdup_printf ("%s\n%s", error->message, debug);
  fail_unless (strstr (text, needle1) && strstr (text, needle2),
      "%s: %s", props, text);
  g_free (text);
  g_error_free (error);
  g_free (debug);
}

GST_START_TEST (test_errors)
{
  gchar *dir = g_dir_make_tmp ("cudasfproject-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "vol.raw", NULL);
  gchar *props;

  fail_unless (g_file_set_contents (path, "0123456789", 10, NULL));
  props = g_strdup_printf (SMALL "volume-location=%s", path);
  expect_start_error (props, "131072 bytes", "10 bytes");
  g_free (props);
  expect_start_error (SMALL "source-detector-distance=150", "150", "200");
  expect_start_error (SMALL "source-origin-distance=20", "inside", "20");
  expect_start_error (SMALL "views=0", "0 views", "");
  expect_start_error (SMALL "volume-offset-z=300", "no detector row sees",
      "300");
  expect_start_error (SMALL "detector-offset-u=200", "no view sees",
      "200");
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* A double property's range and default (0), and a value set and read
 * back; a maximum of NAN is not checked. */
static void
check_double_property (const gchar * name, gdouble minimum, gdouble maximum,
    gdouble value)
{
  GstElement *e = gst_element_factory_make ("cudasfproject", NULL);
  GParamSpecDouble *ps = G_PARAM_SPEC_DOUBLE (g_object_class_find_property
      (G_OBJECT_GET_CLASS (e), name));
  gdouble got;

  fail_unless (ps->minimum == minimum && (isnan (maximum)
          || ps->maximum == maximum) && ps->default_value == 0, "%s", name);
  g_object_set (e, name, value, NULL);
  g_object_get (e, name, &got, NULL);
  fail_unless (got == value, "%s", name);
  gst_object_unref (e);
}

/* helical-pitch: mm a rotation, 0 (circular, the default) to 1e4; GLib
 * refuses a negative one through the range. */
GST_START_TEST (test_helical_pitch_range)
{
  check_double_property ("helical-pitch", 0, 1e4, 37.5);
}

GST_END_TEST;

/* A helical scan that has not yet reached a volume above its rows sends
 * frames of air (every cell I0); one whose num-buffers frames never reach
 * it, or whose volume lies below the first view's rows, does not start. */
GST_START_TEST (test_helical_out_of_view)
{
  GstHarness *h = harness (SMALL "helical-pitch=4 volume-offset-z=300", NULL);
  GstBuffer *buf = gst_harness_pull (h);
  guint u, v, worst = 0;

  for (v = 0; v < 40; v++)
    for (u = 0; u < 48; u++)
      worst = MAX (worst, (guint) ABS ((gint) pixel16 (buf, 96, u, v) - 50000));
  fail_unless_equals_int (worst, 0);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
  expect_start_error (SMALL "helical-pitch=4 num-buffers=720 "
      "volume-offset-z=300", "no detector row sees", "the source from z 0 "
      "to 7.98889 mm");
  expect_start_error (SMALL "helical-pitch=4 volume-offset-z=-300",
      "no detector row sees", "helical");
}

GST_END_TEST;

/* electronic-noise is a standard deviation: GLib refuses a negative one
 * (or NaN) through the property's range, naming the value. */
GST_START_TEST (test_electronic_noise_range)
{
  check_double_property ("electronic-noise", 0, NAN, 12.5);
}

GST_END_TEST;

/* A volume file is projected like the same values from memory. */
GST_START_TEST (test_volume_file)
{
  gchar *dir = g_dir_make_tmp ("cudasfproject-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "vol.raw", NULL);
  CqSfGeometry g;
  float *f = g_new (float, 32 * 32 * 32);
  guint8 *le = g_new (guint8, 4 * 32 * 32 * 32);
  gchar *props, *a, *b;
  guint i;

  memset (&g, 0, sizeof (g));
  g.nx = g.ny = g.nz = 32;
  g.dx = g.dz = 1;
  cq_phantom_fill (CQ_PHANTOM_CYLINDER, &g, f);
  for (i = 0; i < 32 * 32 * 32; i++) {
    guint32 bits;
    memcpy (&bits, &f[i], 4);
    GST_WRITE_UINT32_LE (le + 4 * i, bits);
  }
  fail_unless (g_file_set_contents (path, (gchar *) le, 4 * 32 * 32 * 32,
          NULL));
  props = g_strdup_printf (SMALL "volume-location=%s", path);
  a = frame_checksum (props);
  b = frame_checksum (SMALL "phantom=cylinder");
  fail_unless (g_str_equal (a, b));
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  g_free (props);
  g_free (a);
  g_free (b);
  g_free (f);
  g_free (le);
}

GST_END_TEST;

/* A raw little-endian float volume of the small geometry, 1 everywhere
 * but at the n (index, value) pairs of at. */
static gchar *
write_volume (const gchar * dir, const gchar * name, const gfloat * at,
    guint n)
{
  gchar *path = g_build_filename (dir, name, NULL);
  guint8 *le = g_new0 (guint8, 4 * 32 * 32 * 32);
  guint i;

  for (i = 0; i < 32 * 32 * 32 + n; i++) {
    guint idx = i < 32 * 32 * 32 ? i : (guint) at[2 * (i - 32 * 32 * 32)];
    gfloat v = i < 32 * 32 * 32 ? 1.0f : at[2 * (i - 32 * 32 * 32) + 1];
    guint32 bits;

    memcpy (&bits, &v, 4);
    GST_WRITE_UINT32_LE (le + 4 * idx, bits);
  }
  fail_unless (g_file_set_contents (path, (gchar *) le, 4 * 32 * 32 * 32,
          NULL));
  g_free (le);
  return path;
}

static void
expect_volume_error (const gchar * path, const gchar * more,
    const gchar * needle1, const gchar * needle2)
{
  gchar *props = g_strdup_printf (SMALL "volume-location=%s %s", path, more);

  expect_start_error (props, needle1, needle2);
  g_free (props);
}

/* NaN and infinite voxels are refused, saying how many and where the
 * first is (voxel x=3 y=2 z=1 is index 1091), in either output. */
GST_START_TEST (test_volume_not_finite)
{
  gchar *dir = g_dir_make_tmp ("cudasfproject-XXXXXX", NULL);
  const gfloat nans[] = { 1091, NAN, 5000, NAN };
  const gfloat inf[] = { 1091, INFINITY };
  gchar *a = write_volume (dir, "nan.raw", nans, 2);
  gchar *b = write_volume (dir, "inf.raw", inf, 1);

  expect_volume_error (a, "", "2 values that are not finite",
      "NaN, at x=3 y=2 z=1");
  expect_volume_error (b, "output=line-integral",
      "1 values that are not finite", "+inf, at x=3 y=2 z=1");
  g_unlink (a);
  g_unlink (b);
  g_rmdir (dir);
  g_free (a);
  g_free (b);
  g_free (dir);
}

GST_END_TEST;

/* Values so large that line integrals overflow float32 are refused. */
GST_START_TEST (test_volume_too_large_values)
{
  gchar *dir = g_dir_make_tmp ("cudasfproject-XXXXXX", NULL);
  const gfloat big[] = { 7, 3e38f };
  gchar *a = write_volume (dir, "big.raw", big, 1);

  expect_volume_error (a, "", "too large", "overflows float32");
  g_unlink (a);
  g_rmdir (dir);
  g_free (a);
  g_free (dir);
}

GST_END_TEST;

/* Negative attenuation is projected as 0, with a warning saying how many
 * values and where the first is: the frames of a volume with negative
 * voxels are those of the same volume with zeros there. */
GST_START_TEST (test_volume_negative)
{
  gchar *dir = g_dir_make_tmp ("cudasfproject-XXXXXX", NULL);
  const gfloat neg[] = { 1091, -3, 20000, -0.5f };
  const gfloat zero[] = { 1091, 0, 20000, 0 };
  gchar *a = write_volume (dir, "neg.raw", neg, 2);
  gchar *b = write_volume (dir, "zero.raw", zero, 2);
  gchar *pa = g_strdup_printf (SMALL "output=line-integral "
      "volume-location=%s", a);
  gchar *pb = g_strdup_printf (SMALL "output=line-integral "
      "volume-location=%s", b);
  gchar *desc = g_strdup_printf ("cudasfproject backend=%s %s num-buffers=1 "
      "! fakesink", backend, pa);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m;
  GError *error = NULL;
  gchar *debug = NULL, *ca, *cb;

  gst_element_set_state (p, GST_STATE_PLAYING);
  m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_WARNING
      | GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING);
  gst_message_parse_warning (m, &error, &debug);
  fail_unless (strstr (error->message, "2 negative values"), "%s",
      error->message);
  fail_unless (strstr (debug, "x=3 y=2 z=1"), "%s", debug);
  g_error_free (error);
  g_free (debug);
  gst_message_unref (m);
  gst_element_set_state (p, GST_STATE_NULL);
  ca = frame_checksum (pa);
  cb = frame_checksum (pb);
  fail_unless (g_str_equal (ca, cb));
  gst_object_unref (bus);
  gst_object_unref (p);
  g_unlink (a);
  g_unlink (b);
  g_rmdir (dir);
  g_free (a);
  g_free (b);
  g_free (pa);
  g_free (pb);
  g_free (ca);
  g_free (cb);
  g_free (desc);
  g_free (dir);
}

GST_END_TEST;

/* Files of the wrong size are refused before they are read: a sparse
 * 4 GiB file at once, /dev/zero after one byte more than the volume, a
 * directory as one. */
GST_START_TEST (test_volume_oversized)
{
  gchar *dir = g_dir_make_tmp ("cudasfproject-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "huge.raw", NULL);
  int fd = g_open (path, O_CREAT | O_WRONLY, 0644);
  gint64 t0;

  fail_unless (fd >= 0);
  fail_unless (ftruncate (fd, (off_t) 4 << 30) == 0);
  close (fd);
  t0 = g_get_monotonic_time ();
  expect_volume_error (path, "", "131072 bytes", "4294967296 bytes");
  fail_unless (g_get_monotonic_time () - t0 < 5 * G_USEC_PER_SEC);
  expect_volume_error ("/dev/zero", "", "131072 bytes", "the file has more");
  expect_volume_error (dir, "", "Could not open", "directory");
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* The error for memory that cannot be had names what it was for and its
 * size: here the batch of detector frames (16 views of 65535² float32
 * cells), not the 8³ volume. The address space is capped so that no
 * overcommitting kernel grants it. */
GST_START_TEST (test_out_of_memory_names_batch)
{
  struct rlimit old, cap;
  gchar *statm = NULL;
  guint64 pages = 0;

  /* 32 GiB above what the process maps already (CUDA maps much) */
  fail_unless (g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL));
  pages = g_ascii_strtoull (statm, NULL, 10);
  g_free (statm);
  fail_unless (getrlimit (RLIMIT_AS, &old) == 0);
  cap = old;
  cap.rlim_cur = (rlim_t) (pages * sysconf (_SC_PAGESIZE) + ((guint64) 32
          << 30));
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < cap.rlim_cur)
    cap.rlim_cur = old.rlim_cur;
  fail_unless (setrlimit (RLIMIT_AS, &cap) == 0);
  expect_start_error ("volume-width=8 volume-height=8 volume-depth=8 "
      "detector-width=65535 detector-height=65535",
      "a batch of detector frames", "274869518400 bytes");
  setrlimit (RLIMIT_AS, &old);
}

GST_END_TEST;

/* Live: the latency query says live, one frame at least, and no bound on
 * how long a frame may wait, so that a synchronising sink keeps its
 * processing deadline (no "Pipeline construction is invalid"). */
GST_START_TEST (test_live_latency)
{
  gchar *desc = g_strdup_printf ("cudasfproject name=src backend=%s " SMALL
      "is-live=true num-buffers=3 ! fakesink sync=true", backend);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  GstBus *bus = gst_element_get_bus (p);
  GstQuery *q = gst_query_new_latency ();
  GstClockTime min, max;
  gboolean live;
  GstMessage *m;

  gst_element_set_state (p, GST_STATE_PLAYING);
  fail_unless (gst_element_get_state (p, NULL, NULL, 10 * GST_SECOND) ==
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_element_query (src, q));
  gst_query_parse_latency (q, &live, &min, &max);
  fail_unless (live);
  fail_unless_equals_uint64 (min, GST_SECOND / 30);
  fail_unless (!GST_CLOCK_TIME_IS_VALID (max), "max latency %"
      GST_TIME_FORMAT, GST_TIME_ARGS (max));
  m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_EOS |
      GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
  fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS,
      "%" GST_PTR_FORMAT, m);
  gst_message_unref (m);
  gst_query_unref (q);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (bus);
  gst_object_unref (p);
  g_free (desc);
}

GST_END_TEST;

/* A raw little-endian float volume of the small geometry: 1 in the
 * voxel columns farther than `radius` mm from the axis, 0 elsewhere. */
static gchar *
write_ring_volume (const gchar * dir, const gchar * name, gdouble radius)
{
  gchar *path = g_build_filename (dir, name, NULL);
  guint8 *le = g_new0 (guint8, 4 * 32 * 32 * 32);
  guint i, j, k;

  for (k = 0; k < 32; k++)
    for (j = 0; j < 32; j++)
      for (i = 0; i < 32; i++) {
        gdouble x = i - 15.5, y = j - 15.5;
        gfloat one = 1.0f;
        guint32 bits;

        memcpy (&bits, &one, 4);
        if (x * x + y * y > radius * radius)
          GST_WRITE_UINT32_LE (le + 4 * ((k * 32 + j) * 32 + i), bits);
      }
  fail_unless (g_file_set_contents (path, (gchar *) le, 4 * 32 * 32 * 32,
          NULL));
  g_free (le);
  return path;
}

/* fov-mask: the small geometry's cylinder has radius
 * 200·24/√(24² + 400²) = 11.98 mm; a volume that is non-zero only beyond
 * 13 mm gives the frames of an empty volume with the mask, not without. */
GST_START_TEST (test_fov_mask)
{
  gchar *dir = g_dir_make_tmp ("cudasfproject-XXXXXX", NULL);
  gchar *ring = write_ring_volume (dir, "ring.raw", 13.0);
  gchar *empty = write_ring_volume (dir, "empty.raw", 100.0);
  gchar *masked = g_strdup_printf (SMALL "fov-mask=true volume-location=%s",
      ring);
  gchar *open = g_strdup_printf (SMALL "volume-location=%s", ring);
  gchar *none = g_strdup_printf (SMALL "volume-location=%s", empty);
  gchar *a = frame_checksum (masked), *b = frame_checksum (none);
  gchar *c = frame_checksum (open);
  GstElement *e = gst_element_factory_make ("cudasfproject", NULL);
  gboolean on = TRUE;

  fail_unless (g_str_equal (a, b));
  fail_if (g_str_equal (c, b));
  g_object_get (e, "fov-mask", &on, NULL);
  fail_if (on);
  gst_object_unref (e);
  g_unlink (ring);
  g_unlink (empty);
  g_rmdir (dir);
  g_free (ring);
  g_free (empty);
  g_free (dir);
  g_free (masked);
  g_free (open);
  g_free (none);
  g_free (a);
  g_free (b);
  g_free (c);
}

GST_END_TEST;

/* is-live paces the frames at the framerate: 6 frames at 30/1 take at
 * least 5/30 s of the clock. */
GST_START_TEST (test_live_pacing)
{
  gchar *desc = g_strdup_printf ("cudasfproject backend=%s " SMALL
      "is-live=true num-buffers=6 ! fakesink sync=false", backend);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m;
  gint64 t0 = g_get_monotonic_time ();

  gst_element_set_state (p, GST_STATE_PLAYING);
  m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS);
  fail_unless (g_get_monotonic_time () - t0 >= 5 * G_USEC_PER_SEC / 30,
      "6 live frames in %" G_GINT64_FORMAT " us", g_get_monotonic_time () - t0);
  gst_message_unref (m);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  g_free (desc);
}

GST_END_TEST;

/* CUDAMemory output is offered only where a CUDA device and GStreamer's
 * CUDA library are; elsewhere asking for it fails negotiation with an
 * error, not a crash. */
GST_START_TEST (test_cuda_memory_caps)
{
  gboolean device = cq_test_cuda_memory_usable ();

  cq_test_check_memories ("cudasfproject", "src", device);
  if (!device || g_str_equal (backend, "cpu")) {
    GstElement *pipeline = gst_parse_launch ("cudasfproject backend=cpu "
        "num-buffers=2 " SMALL "! video/x-raw(memory:CUDAMemory) ! fakesink",
        NULL);
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *msg;

    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
        "CUDAMemory output without a CUDA context did not fail");
    gst_message_unref (msg);
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (bus);
    gst_object_unref (pipeline);
  }
}

GST_END_TEST;

/* cuda-device-ids and device-memory-limit: defaults, ranges, round trip. */
GST_START_TEST (test_device_properties)
{
  GstElement *e = gst_element_factory_make ("cudasfproject", NULL);
  GParamSpecUInt64 *ps = G_PARAM_SPEC_UINT64 (g_object_class_find_property
      (G_OBJECT_GET_CLASS (e), "device-memory-limit"));
  gchar *ids = NULL;
  guint64 limit = 1;

  fail_unless (ps->minimum == 0 && ps->maximum == G_MAXUINT64
      && ps->default_value == 0);
  g_object_get (e, "cuda-device-ids", &ids, "device-memory-limit", &limit,
      NULL);
  fail_unless (g_str_equal (ids, "") && limit == 0);
  g_free (ids);
  g_object_set (e, "cuda-device-ids", "1,0", "device-memory-limit",
      (guint64) 8 << 30, NULL);
  g_object_get (e, "cuda-device-ids", &ids, "device-memory-limit", &limit,
      NULL);
  fail_unless (g_str_equal (ids, "1,0") && limit == (guint64) 8 << 30);
  g_free (ids);
  gst_object_unref (e);
}

GST_END_TEST;

/* A device that is not there, or a list that is not one, is a RESOURCE
 * error at start naming it (backend=auto on a host without CUDA too:
 * devices named explicitly are not a fallback; backend=cpu ignores the
 * list). */
static void
expect_device_error (const gchar * props, GQuark domain, gint code,
    const gchar * needle)
{
  const gchar *be = g_str_equal (backend, "cpu") ? "auto" : backend;
  gchar *debug = NULL;
  GError *error = play_error (g_strdup_printf ("cudasfproject backend=%s "
          SMALL "views=4 %s ! fakesink", be, props), props, &debug);

  fail_unless (error->domain == domain && error->code == code,
      "%s: %s (%s)", props, error->message, g_quark_to_string
      (error->domain));
  fail_unless (strstr (error->message, needle) != NULL, "%s: %s", props,
      error->message);
  g_error_free (error);
  g_free (debug);
}

GST_START_TEST (test_device_ids_errors)
{
  expect_device_error ("cuda-device-ids=99", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NOT_FOUND, "device 99");
  expect_device_error ("cuda-device-ids=\"0,x\"", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_SETTINGS, "\"0,x\"");
  expect_device_error ("cuda-device-ids=\"0,-1\"", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_SETTINGS, "cuda-device-ids");
}

GST_END_TEST;

/* n frames of props, concatenated. */
static GByteArray *
frames (const gchar * props, guint n)
{
  GstHarness *h = harness (props, NULL);
  GByteArray *all = g_byte_array_new ();
  guint i;

  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_harness_pull (h);
    GstMapInfo map;

    fail_unless (buf != NULL, "%s: frame %u", props, i);
    gst_buffer_map (buf, &map, GST_MAP_READ);
    g_byte_array_append (all, map.data, map.size);
    gst_buffer_unmap (buf, &map);
    gst_buffer_unref (buf);
  }
  gst_harness_teardown (h);
  return all;
}

/* The largest difference of two runs' GRAY16 frames, in levels. */
static guint
worst_level (GByteArray * a, GByteArray * b)
{
  guint i, worst = 0;

  fail_unless_equals_int (a->len, b->len);
  for (i = 0; i + 1 < a->len; i += 2) {
    gint d = (gint) GST_READ_UINT16_LE (a->data + i) -
        (gint) GST_READ_UINT16_LE (b->data + i);

    worst = MAX (worst, (guint) ABS (d));
  }
  return worst;
}

/* Two usable CUDA devices, and the CUDA backend. */
static gboolean
two_gpus (void)
{
  CqError err;

  return !g_str_equal (backend, "cpu") && cq_cuda_device_count (&err) >= 2;
}

/* On two GPUs ("0,1", "1,0", "all"; streamed on "0,1") the frames of one
 * device (a: resident, c: streamed), byte for byte. */
static void
assert_two_gpus_same (const gchar * base, GByteArray * a, GByteArray * c,
    const gchar * kind)
{
  const gchar *lists[] = { "0,1", "1,0", "all" };
  guint i;

  for (i = 0; i <= G_N_ELEMENTS (lists); i++) {
    gchar *props = i < G_N_ELEMENTS (lists) ?
        g_strdup_printf ("%s cuda-device-ids=\"%s\"", base, lists[i]) :
        g_strdup_printf ("%s cuda-device-ids=\"0,1\" "
        "device-memory-limit=120000", base);
    GByteArray *f = frames (props, 26);
    GByteArray *want = i < G_N_ELEMENTS (lists) ? a : c;

    fail_unless (f->len == want->len
        && memcmp (f->data, want->data, f->len) == 0,
        "%s changed the frames (%s)", props, kind);
    g_byte_array_unref (f);
    g_free (props);
  }
}

/* The views split over two workers on one device ("0,0") give the same
 * frames as one device, in view order (each view is projected whole);
 * a device-memory-limit that streams the 32³ volume through 4-slice slabs,
 * 4 views a pass, gives frames within one level of the resident ones
 * (the slabs' shares of a ray summed in float), noise and all, on one and
 * on two workers; where two GPUs are usable, on devices 0,1, 1,0 and
 * "all" too. On the CPU backend both properties are ignored. */
GST_START_TEST (test_device_split_frames)
{
  const gchar *kinds[] = { "", "noise=true seed=3 photons=3000 " };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (kinds); k++) {
    gchar *base = g_strdup_printf (SMALL "views=12 %s", kinds[k]);
    gchar *two = g_strdup_printf ("%s cuda-device-ids=\"0,0\"", base);
    gchar *capped = g_strdup_printf ("%s device-memory-limit=120000", base);
    gchar *both = g_strdup_printf ("%s cuda-device-ids=\"0,0\" "
        "device-memory-limit=120000", base);
    GByteArray *a = frames (base, 26);
    GByteArray *b = frames (two, 26);
    GByteArray *c = frames (capped, 26);
    GByteArray *d = frames (both, 26);
    guint w;

    fail_unless (a->len == b->len && memcmp (a->data, b->data, a->len) == 0,
        "two workers changed the frames (%s)", kinds[k]);
    w = worst_level (a, c);
    fail_unless (w <= (g_str_equal (backend, "cpu") ? 0u : 1u),
        "streamed frames %u levels off (%s)", w, kinds[k]);
    fail_unless (c->len == d->len && memcmp (c->data, d->data, c->len) == 0,
        "two streaming workers changed the frames (%s)", kinds[k]);
    if (two_gpus ())
      assert_two_gpus_same (base, a, c, kinds[k]);
    g_byte_array_unref (a);
    g_byte_array_unref (b);
    g_byte_array_unref (c);
    g_byte_array_unref (d);
    g_free (base);
    g_free (two);
    g_free (capped);
    g_free (both);
  }
}

GST_END_TEST;

/* A limit that leaves no room for even a view and two slices: a RESOURCE
 * error at start naming the sizes (CUDA only). */
GST_START_TEST (test_device_memory_too_small)
{
  if (g_str_equal (backend, "cpu"))
    return;
  expect_device_error ("device-memory-limit=20000", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NO_SPACE_LEFT, "Out of memory");
}

GST_END_TEST;

static void
cudasfproject_tests (Suite * s)
{
  TCase *tc = cq_test_case (s, "general");

  tcase_add_test (tc, test_caps);
  tcase_add_test (tc, test_views_and_angles);
  tcase_add_test (tc, test_frames_against_library);
  tcase_add_test (tc, test_helical_frames);
  tcase_add_test (tc, test_helical_pitch_range);
  tcase_add_test (tc, test_helical_out_of_view);
  tcase_add_test (tc, test_noise_determinism);
  tcase_add_test (tc, test_noise_per_rotation);
  tcase_add_test (tc, test_electronic_noise_range);
  tcase_add_test (tc, test_poisson_flat_field);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_volume_file);
  tcase_add_test (tc, test_volume_not_finite);
  tcase_add_test (tc, test_volume_too_large_values);
  tcase_add_test (tc, test_volume_negative);
  tcase_add_test (tc, test_volume_oversized);
  tcase_add_test (tc, test_out_of_memory_names_batch);
  tcase_add_test (tc, test_live_latency);
  tcase_add_test (tc, test_fov_mask);
  tcase_add_test (tc, test_live_pacing);
  tcase_add_test (tc, test_cuda_memory_caps);
  tcase_add_test (tc, test_device_properties);
  tcase_add_test (tc, test_device_ids_errors);
  tcase_add_test (tc, test_device_split_frames);
  tcase_add_test (tc, test_device_memory_too_small);
}

CQ_TEST_MAIN ("CUDASFPROJECT_TEST_BACKEND", backend, cudasfproject_tests,
    "cudasfproject");
