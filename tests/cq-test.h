/* What the test programs share: plain C helpers (library tests and
 * benchmarks) and, with gstcheck included first, GStreamer ones.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_TEST_H
#define CQ_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <string.h>

#include "cq-common.h"
#include "cq-cuda.h"
#include "cq-sfproject.h"
#include "cq-ssim.h"

/* One packed 8-bit gray plane of w × h for the SSIM library. */
static inline CqSsimPlane
cq_test_gray8_plane (unsigned w, unsigned h)
{
  CqSsimPlane p = {.width = w,.height = h,
    .layout = {.kind = CQ_LAYOUT_GRAY8,.depth = 8},.sample_stride = 1
  };

  return p;
}

/* A circular cone-beam geometry, centred, counter-clockwise from angle 0:
 * nx × ny × nz voxels of dx × dx × dz mm, views of nu × nv cells of du × dv
 * mm, source at sod from the axis and sdd from the detector; the other
 * fields 0. */
static inline CqSfGeometry
cq_test_cone_geometry (unsigned nx, unsigned ny, unsigned nz, double dx,
    double dz, unsigned nu, unsigned nv, double du, double dv, double sod,
    double sdd, unsigned views)
{
  CqSfGeometry g = {.nx = nx,.ny = ny,.nz = nz,.dx = dx,.dz = dz,.nu = nu,
    .nv = nv,.du = du,.dv = dv,.sod = sod,.sdd = sdd,.n_views = views,
    .direction = 1
  };

  return g;
}

/* The seed's CT geometry (seed 000) scaled to n³ voxels of 1 mm and n²
 * cells of 2 mm, R = 4n, D = 8n: magnification 2 at the axis. */
static inline CqSfGeometry
cq_test_seed_geometry (unsigned n, unsigned views)
{
  return cq_test_cone_geometry (n, n, n, 1.0, 1.0, n, n, 2.0, 2.0, 4.0 * n,
      8.0 * n, views);
}

/* The SF tests' asymmetric geometry: offsets everywhere, Δz ≠ Δ,
 * turning clockwise. */
static inline CqSfGeometry
cq_test_asymmetric_geometry (void)
{
  CqSfGeometry g = cq_test_cone_geometry (40, 36, 28, 1.0, 1.3, 72, 50, 1.1,
      1.4, 120, 230, 45);

  g.offset_x = 1.7;
  g.offset_y = -2.2;
  g.offset_z = 0.6;
  g.offset_u = -2.5;
  g.offset_v = 1.1;
  g.start_angle = 0.3;
  g.direction = -1;
  return g;
}

/* Voxels larger than the cells: 3 cells a footprint and more. */
static inline CqSfGeometry
cq_test_wide_geometry (void)
{
  return cq_test_cone_geometry (48, 40, 36, 4.0, 3.0, 150, 130, 1.5, 1.5, 400,
      700, 30);
}

/* Narrow voxels on coarse cells: many columns a projector strip, rows
 * over many slices (the walking projector). */
static inline CqSfGeometry
cq_test_narrow_geometry (void)
{
  CqSfGeometry g = cq_test_cone_geometry (160, 160, 20, 0.25, 0.5, 24, 16,
      4.0, 4.0, 100, 200, 24);

  g.start_angle = 0.2;
  return g;
}

/* The dot test of a float pair with signed data x, y: the ratio
 * ⟨Ax, y⟩ / ⟨x, Aᵀy⟩ into *ratio, and the discrepancy ⟨Ax, y⟩ − ⟨x, Aᵀy⟩
 * in units of σ = √Σ ((Ax)_i y_i)², the spread of ⟨Ax, y⟩ over draws of y
 * (returned). With signed data the ratio divides by a sum of zero mean: a
 * draw that lands near 0 shows the same rounding discrepancy inflated (the
 * narrow geometry's draw gave a ratio of 1 + 3.7e-6 on the H100, two
 * other draws 1 + 6.1e-7 and 1 − 4.9e-7); in σ units it is the ratio's
 * error at a typical draw, whatever the draw. */
static inline double
cq_test_signed_dot (const float *ax, const float *y, size_t ncell,
    const float *x, const float *aty, size_t nvox, double *ratio)
{
  double lhs = 0, rhs = 0, s2 = 0;
  size_t i;

  for (i = 0; i < ncell; i++) {
    double t = (double) ax[i] * y[i];

    lhs += t;
    s2 += t * t;
  }
  for (i = 0; i < nvox; i++)
    rhs += (double) x[i] * aty[i];
  *ratio = lhs / rhs;
  return s2 > 0 ? (lhs - rhs) / sqrt (s2) : 0.0;
}

/* One xorshift64 step of *state (nonzero): the new state. */
static inline uint64_t
cq_test_xorshift (uint64_t * state)
{
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* A uniform double in [0, 1): 53 bits of a xorshift64 step of *state. */
static inline double
cq_test_uniform (uint64_t * state)
{
  return (cq_test_xorshift (state) >> 11) * (1.0 / 9007199254740992.0);
}

/* The SF tests' phantom at voxel (i, j, k): an ellipsoid with texture
 * inside (smooth and sharp structure), 1 + 0.3 sin 5x cos 3z + 0.2 u with
 * u drawn from *state (only inside); 0 outside. */
static inline double
cq_test_ellipsoid (const CqSfGeometry * g, unsigned i, unsigned j,
    unsigned k, uint64_t * state)
{
  double x = cq_sf_voxel_x (g, i) / (0.4 * g->nx * g->dx);
  double y = cq_sf_voxel_y (g, j) / (0.3 * g->ny * g->dx);
  double z = cq_sf_voxel_z (g, k) / (0.45 * g->nz * g->dz);

  return x * x + y * y + z * z <= 1 ? 1.0 + 0.3 * sin (5 * x) * cos (3 * z)
      + 0.2 * cq_test_uniform (state) : 0.0;
}

/* Benchmarks: a textured frame a (texture: with a slow ramp) and a noisy
 * copy b, n bytes each. */
static inline void
cq_test_fill_pair (uint8_t * a, uint8_t * b, size_t n, unsigned texture)
{
  uint64_t s = 88172645463325252ull;
  size_t i;

  for (i = 0; i < n; i++) {
    cq_test_xorshift (&s);
    a[i] = (uint8_t) ((i * 7 + texture * (i >> 12) * 3 + ((s >> 40) & 31))
        & 0xff);
    b[i] = (uint8_t) (a[i] ^ ((s >> 20) & 7));
  }
}

/* 32 random bits. */
static inline uint32_t
cq_test_random (uint64_t * state)
{
  return (uint32_t) (cq_test_xorshift (state) >> 11);
}

static inline double
cq_test_now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Benchmarks: mean seconds per call of call (user) over iters calls after
 * one warm-up; exits with the library's message on a failure. */
static inline double
cq_test_time_calls (CqStatus (*call) (void *user, CqError * err), void *user,
    int iters)
{
  CqError err;
  double t0;
  int i;

  call (user, &err);
  t0 = cq_test_now_s ();
  for (i = 0; i < iters; i++)
    if (call (user, &err) != CQ_OK) {
      fprintf (stderr, "measure failed: %s\n", err.message);
      exit (1);
    }
  return (cq_test_now_s () - t0) / iters;
}

/* Benchmarks: `--iterations N` and `--size WxH` (the only frame size to
 * run) wherever they stand in argv; the others are left to the caller. */
static inline void
cq_test_bench_size_args (int argc, char **argv, int *iters,
    unsigned *only_w, unsigned *only_h)
{
  int i;

  for (i = 1; i < argc - 1; i++)
    if (strcmp (argv[i], "--iterations") == 0)
      *iters = atoi (argv[i + 1]);
    else if (strcmp (argv[i], "--size") == 0)
      sscanf (argv[i + 1], "%ux%u", only_w, only_h);
}

/* Benchmarks: a Markdown table's header row of the columns named up to
 * NULL, and its rule (as many cells as columns). */
static inline void
cq_test_table_header (const char *column, ...)
{
  va_list ap;
  unsigned n = 0;

  va_start (ap, column);
  for (; column; n++) {
    printf ("| %s ", column);
    column = va_arg (ap, const char *);
  }
  va_end (ap);
  printf ("|\n");
  while (n-- > 0)
    printf ("|---");
  printf ("|\n");
}

/* Benchmarks: prints device 0 (or why there is none) and its host-to-device
 * bandwidths in GB/s, which it returns. */
static inline void
cq_test_bench_device (int have_cuda, const CqError * why, double *pageable,
    double *pinned)
{
  char desc[256] = "none";
  CqError err;

  *pageable = *pinned = 0;
  if (have_cuda) {
    cq_cuda_device_describe (0, desc, sizeof (desc), &err);
    cq_cuda_h2d_bandwidth (0, 64u << 20, 0, pageable, &err);
    cq_cuda_h2d_bandwidth (0, 64u << 20, 1, pinned, &err);
  } else {
    printf ("no CUDA: %s (CPU figures only)\n", why->message);
  }
  printf ("device: %s\n", desc);
  printf ("host->device bandwidth (cudaMemcpy, 64 MiB): pageable %.2f GB/s, "
      "pinned %.2f GB/s\n", *pageable, *pinned);
}

/* 0 where a CUDA device is usable; else prints "SKIP: <why>" and returns
 * 77, meson's skip status. */
static inline int
cq_test_skip_without_cuda (void)
{
  CqError err;

  if (cq_cuda_device_count (&err) > 0)
    return 0;
  printf ("SKIP: %s\n", err.message);
  return 77;
}

#ifdef __GST_CHECK_H__

/* The backend a suite runs on: $env if set, else *backend. -1 to run;
 * otherwise the exit status (77: it names CUDA and no device is usable). */
static inline int
cq_test_backend (const gchar * env, const gchar ** backend)
{
  if (g_getenv (env))
    *backend = g_getenv (env);
  if (g_str_has_prefix (*backend, "cuda") && cq_test_skip_without_cuda ())
    return 77;
  return -1;
}

/* Whether this build's plugin is in the registry; if not (it failed to
 * load: a library it links is missing, say), says so: the element suites
 * then fail at once instead of failing check by check, where a check's
 * failure leaves its pipeline running and the program can hang at exit. */
static inline gboolean
cq_test_have_plugin (void)
{
  GstPlugin *plugin = gst_registry_find_plugin (gst_registry_get (),
      "cudaquality");

  if (!plugin) {
    g_printerr ("FAIL: the cudaquality plugin is not in the registry (did "
        "it fail to load? GST_PLUGIN_PATH_1_0=%s; the warnings above say "
        "why)\n", g_getenv ("GST_PLUGIN_PATH_1_0"));
    return FALSE;
  }
  gst_object_unref (plugin);
  return TRUE;
}

/* gst_check_init, the plugin (exit status 1 without it), then the backend
 * as cq_test_backend. */
static inline int
cq_test_init (int *argc, char ***argv, const gchar * env,
    const gchar ** backend)
{
  gst_check_init (argc, argv);
  if (!cq_test_have_plugin ())
    return 1;
  return cq_test_backend (env, backend);
}

/* A new test case of s, for its tests. */
static inline TCase *
cq_test_case (Suite * s, const gchar * name)
{
  TCase *tc = tcase_create (name);

  suite_add_tcase (s, tc);
  return tc;
}

/* A suite of one test case, "general", which *tc gets for the tests. */
static inline Suite *
cq_test_suite (const gchar * name, TCase ** tc)
{
  Suite *s = suite_create (name);

  *tc = cq_test_case (s, "general");
  return s;
}

/* Runs the suite `name` that add_tests fills (its test cases through
 * cq_test_case); file: the program's __FILE__, as gst_check_run_suite. */
static inline int
cq_test_run_suite (const gchar * name, void (*add_tests) (Suite * s),
    const gchar * file)
{
  Suite *s = suite_create (name);

  add_tests (s);
  return gst_check_run_suite (s, name, file);
}

/* main () of an element suite: the backend from $env (skipping without a
 * device where it names CUDA), then the suite `name` that add_tests
 * fills. */
#define CQ_TEST_MAIN(env, backend, add_tests, name)                   \
int                                                                   \
main (int argc, char **argv)                                          \
{                                                                     \
  int status;                                                         \
                                                                      \
  if ((status = cq_test_init (&argc, &argv, env, &(backend))) >= 0)   \
    return status;                                                    \
  return cq_test_run_suite (name, add_tests, __FILE__);               \
}

/* Whether CUDAMemory can be offered here: a CUDA device and nvcodec's
 * cudaupload (GStreamer's CUDA library loads). */
static inline gboolean
cq_test_cuda_memory_usable (void)
{
  GstElementFactory *up = gst_element_factory_find ("cudaupload");

  if (up)
    gst_object_unref (up);
  return cq_cuda_device_count (NULL) > 0 && up != NULL;
}

/* The pad of a new `factory` element offers system memory always, and
 * CUDAMemory exactly where device says. */
static inline void
cq_test_check_memories (const gchar * factory, const gchar * pad_name,
    gboolean device)
{
  GstElement *e = gst_element_factory_make (factory, NULL);
  GstPad *pad = gst_element_get_static_pad (e, pad_name);
  GstCaps *caps = gst_pad_query_caps (pad, NULL);
  gboolean has_cuda = FALSE, has_sys = FALSE;
  guint i;

  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);

    if (gst_caps_features_contains (f, "memory:CUDAMemory"))
      has_cuda = TRUE;
    if (gst_caps_features_is_equal (f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))
      has_sys = TRUE;
  }
  fail_unless (has_sys);
  if (!device)
    fail_if (has_cuda, "CUDAMemory offered without a device: %"
        GST_PTR_FORMAT, caps);
  else
    fail_unless (has_cuda, "no CUDAMemory on a CUDA host: %" GST_PTR_FORMAT,
        caps);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (e);
}

/* Element messages of element go to a bus of their own. */
static inline GstBus *
cq_test_attach_bus (GstElement * element)
{
  GstBus *bus = gst_bus_new ();

  gst_element_set_bus (element, bus);
  return bus;
}

static inline void
cq_test_detach_bus (GstElement * element, GstBus * bus)
{
  gst_element_set_bus (element, NULL);
  gst_object_unref (bus);
}

/* The next element message on bus named `name` covers `frames` frames
 * from `timestamp` over `duration` (an interval message). */
static inline void
cq_test_check_interval (GstBus * bus, const gchar * name, guint64 frames,
    GstClockTime timestamp, GstClockTime duration)
{
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  const GstStructure *s;
  guint64 u;

  fail_unless (m != NULL, "no %s message (%" G_GUINT64_FORMAT " frames at %"
      GST_TIME_FORMAT ")", name, frames, GST_TIME_ARGS (timestamp));
  s = gst_message_get_structure (m);
  fail_unless (gst_structure_has_name (s, name), "%" GST_PTR_FORMAT, s);
  fail_unless (gst_structure_get_uint64 (s, "frames", &u));
  fail_unless_equals_uint64 (u, frames);
  fail_unless (gst_structure_get_uint64 (s, "timestamp", &u));
  fail_unless_equals_uint64 (u, timestamp);
  fail_unless (gst_structure_get_uint64 (s, "duration", &u));
  fail_unless_equals_uint64 (u, duration);
  gst_message_unref (m);
}

#ifdef __GST_HARNESS_H__
/* What a flushing seek sends down each of the n harnesses: FLUSH_START,
 * FLUSH_STOP (running time reset), one seqnum for all, then a new TIME
 * segment from 0. */
static inline void
cq_test_flush (GstHarness ** hs, guint n)
{
  guint32 seqnum = gst_util_seqnum_next ();
  GstSegment seg;
  GstEvent *ev;
  guint i;

  for (i = 0; i < n; i++) {
    ev = gst_event_new_flush_start ();
    gst_event_set_seqnum (ev, seqnum);
    gst_harness_push_event (hs[i], ev);
  }
  for (i = 0; i < n; i++) {
    ev = gst_event_new_flush_stop (TRUE);
    gst_event_set_seqnum (ev, seqnum);
    fail_unless (gst_harness_push_event (hs[i], ev));
  }
  gst_segment_init (&seg, GST_FORMAT_TIME);
  for (i = 0; i < n; i++)
    fail_unless (gst_harness_push_event (hs[i], gst_event_new_segment (&seg)));
}
#endif /* __GST_HARNESS_H__ */

#endif /* __GST_CHECK_H__ */
#endif /* CQ_TEST_H */
