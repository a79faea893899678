/* GPU suite: the CUDA backend gives bit-identical scores to the CPU backend,
 * for every layout, metric set and size from 1x1 to 8192x8192 (odd widths,
 * padded strides, host and device input, misaligned device pointers), and
 * for 8-bit frames with every kind of walk length the kernel may be given.
 * Exits 77 (skipped) with the reason where no CUDA device is usable.
 * `--quick` runs the small sizes only (for compute-sanitizer).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "cq-sharpness.h"
#include "cq-test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

typedef struct
{
  const char *name;
  CqLayout layout;
} LayoutCase;

static const LayoutCase layouts[] = {
  {"GRAY8", {CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0}},
  {"GRAY16_LE", {CQ_LAYOUT_GRAY16, 16, 0, 0, 0, 0, 0}},
  {"I420_10LE", {CQ_LAYOUT_GRAY16, 10, 0, 0, 0, 0, 0}},
  {"P010_10LE", {CQ_LAYOUT_GRAY16, 10, 6, 0, 0, 0, 0}},
  {"RGB", {CQ_LAYOUT_RGB8, 8, 0, 3, 0, 1, 2}},
  {"BGRA", {CQ_LAYOUT_RGB8, 8, 0, 4, 2, 1, 0}},
  {"xRGB", {CQ_LAYOUT_RGB8, 8, 0, 4, 1, 2, 3}},
};

static const unsigned metric_sets[] = {
  CQ_METRIC_DEFAULT, CQ_METRIC_ALL, CQ_METRIC_ENTROPY,
  CQ_METRIC_VARIANCE | CQ_METRIC_LAPVAR | CQ_METRIC_BRENNER,
};

static int failures, checks;

/* Random content, with flat and edge regions so that no term is trivially 0. */
static void
fill (uint8_t * data, size_t stride, unsigned w, unsigned h, unsigned bpp)
{
  unsigned x, y, b;
  unsigned style = cq_test_random (&rng) % 3;

  for (y = 0; y < h; y++) {
    uint8_t *row = data + y * stride;
    for (x = 0; x < w * bpp; x++) {
      switch (style) {
        case 0:
          row[x] = (uint8_t) cq_test_random (&rng);
          break;
        case 1:                /* bars with noise */
          row[x] = (uint8_t) (((x / (8 * bpp)) % 2) * 200 +
              (cq_test_random (&rng) % 16));
          break;
        default:               /* a saturated corner */
          row[x] = (x > w * bpp / 2 && y > h / 2) ? 255 :
              (uint8_t) cq_test_random (&rng);
          break;
      }
    }
    for (b = 0; b < stride - w * bpp; b++)      /* padding: never measured */
      row[w * bpp + b] = 0xA5;
  }
}

static void
compare (const char *what, const char *layout, unsigned w, unsigned h,
    unsigned metrics, const double *cpu, const double *gpu)
{
  unsigned i;

  checks++;
  for (i = 0; i < CQ_METRIC_COUNT; i++) {
    if (!(metrics & (1u << i)))
      continue;
    if (memcmp (&cpu[i], &gpu[i], sizeof (double)) != 0) {
      failures++;
      printf ("FAIL %s %s %ux%u %s: cpu %.17g cuda %.17g\n", what, layout, w,
          h, cq_metric_name (i), cpu[i], gpu[i]);
    }
  }
}

/* walk_rows, pixels (a thread): 0 for what the library picks, else that */
static int
run_case (int device, const LayoutCase * lc, unsigned w, unsigned h,
    unsigned metrics, int device_input, unsigned pixels, unsigned walk_rows)
{
  const unsigned bpp = cq_layout_bytes_per_pixel (&lc->layout);
  const size_t stride = (size_t) w * bpp + (cq_test_random (&rng) % 3) * 2;
  const size_t bytes = stride * h;
  uint8_t *host = malloc (bytes + 8);
  double cpu_s[CQ_METRIC_COUNT], gpu_s[CQ_METRIC_COUNT];
  CqError err;
  CqSharpnessCpu *cpu;
  CqSharpnessCuda *cu;

  if (!host)
    return 0;
  fill (host, stride, w, h, bpp);
  memset (cpu_s, 0, sizeof (cpu_s));
  memset (gpu_s, 0, sizeof (gpu_s));
  cpu = cq_sharpness_cpu_new (&lc->layout, w, h, metrics, 0, &err);
  cu = cq_sharpness_cuda_new (device, &lc->layout, w, h, metrics, &err);
  if (cu && pixels
      && cq_sharpness_cuda_set_thread_pixels (cu, pixels, &err) != CQ_OK)
    goto setup_failed;
  if (cu && walk_rows > cq_sharpness_cuda_walk_rows_max (cu))
    goto done;                  /* longer than this kernel walks */
  if (!cpu || !cu || (walk_rows
          && cq_sharpness_cuda_set_walk_rows (cu, walk_rows, &err) != CQ_OK)) {
  setup_failed:
    printf ("FAIL setup %s %ux%u pixels %u rows %u: %s\n", lc->name, w, h,
        pixels, walk_rows, err.message);
    failures++;
    goto done;
  }
  if (cq_sharpness_cpu_measure (cpu, host, stride, cpu_s, &err) != CQ_OK
      || cq_sharpness_cuda_measure_host (cu, host, stride, gpu_s,
          &err) != CQ_OK) {
    printf ("FAIL measure %s %ux%u: %s\n", lc->name, w, h, err.message);
    failures++;
    goto done;
  }
  compare (walk_rows || pixels ? "host, set walk" : "host", lc->name, w, h,
      metrics,
      cpu_s, gpu_s);

  if (device_input) {
    /* on the device, 1 byte off alignment: exercises the aligned copy */
    uint8_t *dev = cq_cuda_malloc (device, bytes + 8, &err);
    int misaligned;

    for (misaligned = 0; dev && misaligned <= 1; misaligned++) {
      uint8_t *at = dev + (misaligned ? 1 : 0);
      memset (gpu_s, 0, sizeof (gpu_s));
      if (cq_cuda_upload (device, at, host, bytes, &err) != CQ_OK
          || cq_sharpness_cuda_measure_device (cu, at, stride, gpu_s,
              &err) != CQ_OK) {
        printf ("FAIL device %s %ux%u: %s\n", lc->name, w, h, err.message);
        failures++;
        break;
      }
      compare (misaligned ? "device+1" : "device", lc->name, w, h, metrics,
          cpu_s, gpu_s);
    }
    cq_cuda_free (device, dev);
  }
done:
  cq_sharpness_cpu_free (cpu);
  cq_sharpness_cuda_free (cu);
  free (host);
  return 1;
}

/* Frames back to back, two in flight (submit, submit, collect, ...): on
 * the H100 each frame's kernel starts while the previous one finishes
 * (cq_cuda_launch's overlap). Every frame must score as the CPU does.
 * Then a burst of 300 launches on one frame (cq_sharpness_cuda_time_device:
 * frames ahead of their sets' release, cq-reduce.cuh) and another frame,
 * which must find its set of accumulators clean. */
static void
check_in_flight (int device, unsigned w, unsigned h, unsigned metrics)
{
  enum
  { N = 6 };
  const CqLayout *gray8 = &layouts[0].layout;
  const size_t stride = w + 32, bytes = stride * h;
  uint8_t *host = malloc (bytes);
  uint8_t *dev[N] = { NULL };
  double want[N][CQ_METRIC_COUNT], got[CQ_METRIC_COUNT];
  CqError err;
  CqSharpnessCpu *cpu = cq_sharpness_cpu_new (gray8, w, h, metrics, 0, &err);
  CqSharpnessCuda *cu = cq_sharpness_cuda_new (device, gray8, w, h, metrics,
      &err);
  unsigned i, next = 0, done = 0;
  int ok = cpu && cu && host;

  for (i = 0; i < N && ok; i++) {
    fill (host, stride, w, h, 1);
    memset (want[i], 0, sizeof (want[i]));
    dev[i] = cq_cuda_malloc (device, bytes, &err);
    ok = dev[i] && cq_cuda_upload (device, dev[i], host, bytes, &err) == CQ_OK
        && cq_sharpness_cpu_measure (cpu, host, stride, want[i],
        &err) == CQ_OK;
  }
  while (ok && done < N) {
    if (next < N && cq_sharpness_cuda_pending (cu) < 2) {
      ok = cq_sharpness_cuda_submit_device (cu, dev[next], stride,
          &err) == CQ_OK;
      next++;
      continue;
    }
    memset (got, 0, sizeof (got));
    ok = cq_sharpness_cuda_collect (cu, got, &err) == CQ_OK;
    if (ok)
      compare ("in flight", "GRAY8", w, h, metrics, want[done], got);
    done++;
  }
  for (i = 0; i < 2 && ok; i++) {
    double us;

    memset (got, 0, sizeof (got));
    ok = cq_sharpness_cuda_time_device (cu, dev[i], stride, 300, &us,
        &err) == CQ_OK
        && cq_sharpness_cuda_submit_device (cu, dev[N - 1 - i], stride,
        &err) == CQ_OK && cq_sharpness_cuda_collect (cu, got, &err) == CQ_OK;
    if (ok)
      compare ("after a burst", "GRAY8", w, h, metrics, want[N - 1 - i],
          got);
  }
  if (!ok) {
    printf ("FAIL in flight %ux%u: %s\n", w, h,
        cpu && cu ? err.message : "setup");
    failures++;
  }
  for (i = 0; i < N; i++)
    cq_cuda_free (device, dev[i]);
  cq_sharpness_cpu_free (cpu);
  cq_sharpness_cuda_free (cu);
  free (host);
}

int
main (int argc, char **argv)
{
  static const unsigned small[][2] = {
    {1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 3}, {4, 4}, {5, 7}, {8, 8}, {9, 3},
    {31, 17}, {33, 9}, {63, 65}, {127, 255}, {255, 33}, {256, 32}, {257, 31},
    {513, 67}, {1000, 3}, {3, 1000}, {1023, 129},
  };
  static const unsigned large[][2] = {
    {1920, 1080}, {1921, 1081}, {3840, 2160}, {4095, 2161}, {8191, 4097},
    {8192, 8192},
  };
  /* 256 and 512 wide: tiles at both sides of the frame, or one tile
   * touching both (the walks at the sides, Edges8's kSides) */
  static const unsigned walk_sizes[][2] = {
    {1921, 1081}, {257, 31}, {1000, 3}, {130, 67}, {3, 200}, {256, 67},
    {512, 41},
  };
  static const unsigned walk_rows[] = {
    3, 4, 5, 7, 8, 12, 13, 24, 30, 31, 60
  };
  int quick = argc > 1 && strcmp (argv[1], "--quick") == 0;
  CqError err;
  char desc[256];
  int skip = cq_test_skip_without_cuda ();
  unsigned li, si, mi, ri, pi;

  if (skip)
    return skip;
  cq_cuda_device_describe (0, desc, sizeof (desc), &err);
  printf ("device 0: %s\n", desc);

  for (li = 0; li < sizeof (layouts) / sizeof (layouts[0]); li++)
    for (si = 0; si < sizeof (small) / sizeof (small[0]); si++)
      for (mi = 0; mi < sizeof (metric_sets) / sizeof (metric_sets[0]); mi++)
        run_case (0, &layouts[li], small[si][0], small[si][1],
            metric_sets[mi], 1, 0, 0);
  if (!quick) {
    for (li = 0; li < sizeof (layouts) / sizeof (layouts[0]); li++)
      for (si = 0; si < sizeof (large) / sizeof (large[0]); si++)
        for (mi = 0; mi < 2; mi++)
          run_case (0, &layouts[li], large[si][0], large[si][1],
              metric_sets[mi], si == 0, 0, 0);
  }
  /* walk lengths: the shortest, around the ring of three rows, the
   * defaults' (6, 8, 12, 24), the longest (30 at 8 pixels a thread, 60),
   * on frames shorter and taller than a tile (--quick: not the 1921x1081
   * one); the default set at 4 and 8 pixels a thread */
  for (si = quick ? 1 : 0; si < sizeof (walk_sizes) / sizeof (walk_sizes[0]);
      si++)
    for (ri = 0; ri < sizeof (walk_rows) / sizeof (walk_rows[0]); ri++)
      for (mi = 0; mi < sizeof (metric_sets) / sizeof (metric_sets[0]); mi++)
        for (pi = 0; pi < (mi == 0 ? 2u : 1u); pi++)
          run_case (0, &layouts[0], walk_sizes[si][0], walk_sizes[si][1],
              metric_sets[mi], 0, mi == 0 ? 4 + 4 * pi : 0, walk_rows[ri]);
  /* walks of 240 pixels a thread at most: 60 rows of 4, 30 of 8; 8 pixels
   * for the default set's kernel only */
  for (mi = 0; mi < sizeof (metric_sets) / sizeof (metric_sets[0]); mi++)
    for (pi = 0; pi < (mi == 0 ? 2u : 1u); pi++) {
      CqSharpnessCuda *cu = cq_sharpness_cuda_new (0, &layouts[0].layout, 64,
          64, metric_sets[mi], &err);
      const unsigned most = pi ? 30 : 60;

      checks++;
      if (!cu || (pi && cq_sharpness_cuda_set_thread_pixels (cu, 8,
                  &err) != CQ_OK)
          || (!pi && mi && cq_sharpness_cuda_set_thread_pixels (cu, 8,
                  &err) == CQ_OK)
          || cq_sharpness_cuda_set_thread_pixels (cu, 6, &err) == CQ_OK
          || cq_sharpness_cuda_walk_rows_max (cu) != most
          || cq_sharpness_cuda_set_walk_rows (cu, 2, &err) == CQ_OK
          || cq_sharpness_cuda_set_walk_rows (cu, most + 1, &err) == CQ_OK
          || cq_sharpness_cuda_set_walk_rows (cu, most, &err) != CQ_OK) {
        printf ("FAIL walk limits of metrics 0x%x at %u pixels a thread\n",
            metric_sets[mi], pi ? 8 : 4);
        failures++;
      }
      cq_sharpness_cuda_free (cu);
    }
  for (mi = 0; mi < sizeof (metric_sets) / sizeof (metric_sets[0]); mi++) {
    check_in_flight (0, 640, 480, metric_sets[mi]);
    if (!quick) {
      check_in_flight (0, 1920, 1080, metric_sets[mi]);
      check_in_flight (0, 3840, 2160, metric_sets[mi]);
    }
  }
  printf ("%d comparisons, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
