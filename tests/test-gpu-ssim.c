/* GPU suite: the CUDA SSIM backend against the CPU backend, for every
 * window, layout (8, 10, 16 bit, interleaved, packed RGB) and size from 8x8
 * to 8192x8192 (odd sizes, padded strides, host and device input, misaligned
 * device pointers): mean SSIM within 1e-9, box8 within 1e-12 (ffmpeg
 * windows are bit-identical and box8 windows within a few units in the
 * last place; the order of the final additions differs) and the sum
 * of squared differences exactly equal. Exits 77 (skipped) with the reason
 * where no CUDA device is usable. `--quick` runs the small sizes only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "cq-ssim.h"
#include "cq-test.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

typedef struct
{
  const char *name;
  CqSsimPlane plane;            /* width/height filled per size */
  unsigned bytes_per_pixel;     /* stored bytes a sample step */
} LayoutCase;

#define GRAY(depth, bytes, stride, offset, shift) \
  { (depth) > 8 ? CQ_LAYOUT_GRAY16 : CQ_LAYOUT_GRAY8, depth, shift, 0, 0, 0, 0 }

static const LayoutCase layouts[] = {
  {"GRAY8", {0, 0, GRAY (8, 1, 1, 0, 0), 1, 0}, 1},
  {"GRAY16_LE", {0, 0, GRAY (16, 2, 2, 0, 0), 2, 0}, 2},
  {"I420_10LE", {0, 0, GRAY (10, 2, 2, 0, 0), 2, 0}, 2},
  {"P010 Y", {0, 0, GRAY (10, 2, 2, 0, 6), 2, 0}, 2},
  {"P010 V", {0, 0, GRAY (10, 2, 4, 2, 6), 4, 2}, 4},
  {"NV12 V", {0, 0, GRAY (8, 1, 2, 1, 0), 2, 1}, 2},
  {"BGRx G", {0, 0, GRAY (8, 1, 4, 1, 0), 4, 1}, 4},
  {"RGB gray", {0, 0, {CQ_LAYOUT_RGB8, 8, 0, 3, 0, 1, 2}, 3, 0}, 3},
};

static const CqSsimWindow windows[] = {
  CQ_SSIM_BOX8, CQ_SSIM_FFMPEG, CQ_SSIM_GAUSS11
};

static int failures, checks;
static int msssim;              /* check_case adds MS-SSIM */
static int extreme;             /* fill_pair: flat saturated blocks */

/* Smooth ramps with noise: realistic SSIM values, both frames related. */
static void
fill_pair (unsigned char *a, unsigned char *b, size_t stride, unsigned w,
    unsigned h, unsigned step)
{
  unsigned x, y;

  /* blocks of 16 at 0 or at the top of the samples' byte, b off by one in
   * one sample of 16: the largest sums, and variances of almost nothing
   * from sums of squares near their maximum */
  if (extreme) {
    for (y = 0; y < h; y++)
      for (x = 0; x < (size_t) w * step; x++) {
        unsigned v = (((x / 16) * 7 + (y / 16) * 3) % 5) ? 0xff : 0;
        unsigned d = (cq_test_random (&rng) & 15) == 0;

        a[y * stride + x] = (unsigned char) v;
        b[y * stride + x] = (unsigned char) (v ? v - d : d);
      }
    return;
  }
  for (y = 0; y < h; y++)
    for (x = 0; x < (size_t) w * step; x++) {
      unsigned v = (x * 3 + y * 5 + (cq_test_random (&rng) & 31)) & 0xff;
      unsigned d = cq_test_random (&rng) & 15;

      a[y * stride + x] = (unsigned char) v;
      b[y * stride + x] = (unsigned char) ((cq_test_random (&rng) & 7) ? v ^ d : v);
    }
}

static void
check_case (int device, CqSsimWindow window, const LayoutCase * lc,
    unsigned w, unsigned h)
{
  CqSsimPlane p = lc->plane;
  size_t row = (size_t) w * lc->bytes_per_pixel;
  size_t stride = row + 64 + (cq_test_random (&rng) & 7) * 8;
  size_t bytes = stride * h;
  unsigned char *a = malloc (bytes + 16), *b = malloc (bytes + 16);
  unsigned char *da = NULL, *db = NULL;
  CqSsimPlaneSums cpu_s, host_s, dev_s, mis_s;
  CqSsimCpu *cpu;
  CqSsimCuda *cu;
  CqError err;
  double want, tol;
  int ok = 1;

  p.width = w;
  p.height = h;
  fill_pair (a, b, stride, w, h, lc->bytes_per_pixel);
  cpu = cq_ssim_cpu_new (window, &p, 1, 0, &err);
  cu = cq_ssim_cuda_new (device, window, &p, 1, &err);
  if (cpu && cu && msssim
      && (cq_ssim_cpu_set_msssim (cpu, 1, &err) != CQ_OK
          || cq_ssim_cuda_set_msssim (cu, 1, &err) != CQ_OK)) {
    cq_ssim_cpu_free (cpu);
    cpu = NULL;
  }
  if (!cpu || !cu) {
    printf ("FAIL %s %s %ux%u: %s\n", cq_ssim_window_name (window), lc->name,
        w, h, err.message);
    failures++;
    goto out;
  }
  {
    const void *ra[1] = { a }, *rb[1] = { b };
    size_t st[1] = { stride };

    ok &= cq_ssim_cpu_measure (cpu, ra, st, rb, st, &cpu_s, &err) == CQ_OK;
    ok &= cq_ssim_cuda_measure_host (cu, ra, st, rb, st, &host_s,
        &err) == CQ_OK;
  }
  da = cq_cuda_malloc (device, bytes + 16, &err);
  db = cq_cuda_malloc (device, bytes + 16, &err);
  ok &= da && db;
  if (ok) {
    const void *ra[1] = { da }, *rb[1] = { db };
    const void *ma[1] = { da + 1 }, *mb[1] = { db + 3 };
    size_t st[1] = { stride };

    ok &= cq_cuda_upload (device, da, a, bytes, &err) == CQ_OK;
    ok &= cq_cuda_upload (device, db, b, bytes, &err) == CQ_OK;
    ok &= cq_ssim_cuda_measure_device (cu, ra, st, rb, st, &dev_s,
        &err) == CQ_OK;
    /* the same samples one and three bytes further on */
    ok &= cq_cuda_upload (device, da + 1, a, bytes, &err) == CQ_OK;
    ok &= cq_cuda_upload (device, db + 3, b, bytes, &err) == CQ_OK;
    ok &= cq_ssim_cuda_measure_device (cu, ma, st, mb, st, &mis_s,
        &err) == CQ_OK;
  }
  if (!ok) {
    printf ("FAIL %s %s %ux%u: %s\n", cq_ssim_window_name (window), lc->name,
        w, h, err.message);
    failures++;
    goto out;
  }
  want = cpu_s.ssim_sum / cpu_s.windows;
  /* box8's windows are the CPU's within a few units in the last place
   * (the 8-bit kernel adds four windows as one quotient), so the means
   * differ by the order of the additions only */
  tol = window == CQ_SSIM_BOX8 ? 1e-12 : 1e-9;
  {
    const CqSsimPlaneSums *got[3] = { &host_s, &dev_s, &mis_s };
    const char *how[3] = { "host", "device", "misaligned" };
    int i;

    for (i = 0; i < 3; i++) {
      double m = got[i]->ssim_sum / got[i]->windows;

      if (msssim) {
        double ms = cq_ssim_msssim (&p, got[i]), ms_cpu =
            cq_ssim_msssim (&p, &cpu_s);

        checks++;
        if (!(fabs (ms - ms_cpu) <= 1e-9)) {
          printf ("FAIL ms-ssim %s %ux%u %s: %.17g vs cpu %.17g\n",
              lc->name, w, h, how[i], ms, ms_cpu);
          failures++;
        }
      }
      checks++;
      if (!(fabs (m - want) <= tol) || got[i]->sse != cpu_s.sse
          || got[i]->windows != cpu_s.windows) {
        printf ("FAIL %s %s %ux%u %s: ssim %.17g vs cpu %.17g (diff %.3g), "
            "sse %llu vs %llu\n", cq_ssim_window_name (window), lc->name, w,
            h, how[i], m, want, m - want,
            (unsigned long long) got[i]->sse, (unsigned long long) cpu_s.sse);
        failures++;
      }
    }
    if (w * h >= 1920 * 1080)
      printf ("ok %s %s %ux%u: ssim %.12f, |cuda - cpu| = %.2g\n",
          cq_ssim_window_name (window), lc->name, w, h, want,
          fabs (host_s.ssim_sum / host_s.windows - want));
  }
out:
  cq_cuda_free (device, da);
  cq_cuda_free (device, db);
  cq_ssim_cpu_free (cpu);
  cq_ssim_cuda_free (cu);
  free (a);
  free (b);
}

/* Pairs back to back, two in flight (submit, submit, collect, ...): on
 * the H100 each pair's kernel starts while the previous one finishes
 * (cq_cuda_launch's overlap). Every pair must sum what it sums alone
 * (with_ms: MS-SSIM's scales too). Then bursts of 300 launches on one
 * pair (cq_ssim_cuda_time_device: pairs ahead of their sets' release,
 * cq-reduce.cuh), each followed by another pair, which must find its set
 * of accumulators clean. CQ_TEST_BURST sets the launches a burst (300):
 * racecheck keeps a record of each queued launch, and 300 of them took
 * the host's 128 GB (the test was killed). */
static void
check_in_flight (int device, CqSsimWindow window, unsigned w, unsigned h,
    int with_ms)
{
  enum
  { N = 6 };
  CqSsimPlane p = layouts[0].plane;
  const size_t stride = w + 64, bytes = stride * h;
  unsigned char *host = malloc (2 * bytes);
  unsigned char *dev[N][2] = { {NULL} };
  CqSsimPlaneSums alone[N], got;
  CqSsimCuda *cu;
  CqError err;
  const char *burst_env = getenv ("CQ_TEST_BURST");
  const unsigned burst = burst_env ? (unsigned) atoi (burst_env) : 300;
  unsigned i, next = 0, done = 0;
  int ok;

  p.width = w;
  p.height = h;
  cu = cq_ssim_cuda_new (device, window, &p, 1, &err);
  ok = cu && host && (!with_ms || cq_ssim_cuda_set_msssim (cu, 1,
          &err) == CQ_OK);
  for (i = 0; i < N && ok; i++) {
    const void *ra[1], *rb[1];
    size_t st[1] = { stride };

    fill_pair (host, host + bytes, stride, w, h, 1);
    dev[i][0] = cq_cuda_malloc (device, bytes, &err);
    dev[i][1] = cq_cuda_malloc (device, bytes, &err);
    ok = dev[i][0] && dev[i][1]
        && cq_cuda_upload (device, dev[i][0], host, bytes, &err) == CQ_OK
        && cq_cuda_upload (device, dev[i][1], host + bytes, bytes,
        &err) == CQ_OK;
    ra[0] = dev[i][0];
    rb[0] = dev[i][1];
    ok = ok && cq_ssim_cuda_measure_device (cu, ra, st, rb, st, &alone[i],
        &err) == CQ_OK;
  }
  while (ok && done < N) {
    if (next < N && cq_ssim_cuda_pending (cu) < 2) {
      const void *ra[1] = { dev[next][0] }, *rb[1] = { dev[next][1] };
      size_t st[1] = { stride };

      ok = cq_ssim_cuda_submit_device (cu, ra, st, rb, st, &err) == CQ_OK;
      next++;
      continue;
    }
    ok = cq_ssim_cuda_collect (cu, &got, &err) == CQ_OK;
    checks++;
    if (ok && (memcmp (&got.ssim_sum, &alone[done].ssim_sum,
                sizeof (double)) != 0 || got.sse != alone[done].sse
            || memcmp (got.ms_sum, alone[done].ms_sum,
                sizeof (got.ms_sum)) != 0)) {
      printf ("FAIL in flight %s %ux%u pair %u: ssim sum %.17g alone "
          "%.17g, sse %llu alone %llu\n", cq_ssim_window_name (window), w,
          h, done, got.ssim_sum, alone[done].ssim_sum,
          (unsigned long long) got.sse, (unsigned long long) alone[done].sse);
      failures++;
    }
    done++;
  }
  for (i = 0; i < 2 && ok; i++) {
    const void *ra[1] = { dev[i][0] }, *rb[1] = { dev[i][1] };
    const void *rc[1] = { dev[N - 1 - i][0] }, *rd[1] = { dev[N - 1 - i][1] };
    size_t st[1] = { stride };
    double us;

    ok = cq_ssim_cuda_time_device (cu, ra, st, rb, st, burst, &us,
        &err) == CQ_OK
        && cq_ssim_cuda_submit_device (cu, rc, st, rd, st, &err) == CQ_OK
        && cq_ssim_cuda_collect (cu, &got, &err) == CQ_OK;
    checks++;
    if (ok && (memcmp (&got.ssim_sum, &alone[N - 1 - i].ssim_sum,
                sizeof (double)) != 0 || got.sse != alone[N - 1 - i].sse
            || memcmp (got.ms_sum, alone[N - 1 - i].ms_sum,
                sizeof (got.ms_sum)) != 0)) {
      printf ("FAIL after a burst %s %ux%u: ssim sum %.17g alone %.17g\n",
          cq_ssim_window_name (window), w, h, got.ssim_sum,
          alone[N - 1 - i].ssim_sum);
      failures++;
    }
  }
  if (!ok) {
    printf ("FAIL in flight %s %ux%u: %s\n", cq_ssim_window_name (window),
        w, h, cu ? err.message : "no CUDA object");
    failures++;
  }
  for (i = 0; i < N; i++) {
    cq_cuda_free (device, dev[i][0]);
    cq_cuda_free (device, dev[i][1]);
  }
  cq_ssim_cuda_free (cu);
  free (host);
}

int
main (int argc, char **argv)
{
  static const unsigned sizes[][2] = {
    {8, 8}, {9, 13}, {11, 11}, {12, 12}, {31, 17}, {64, 64}, {127, 65},
    {250, 97}, {640, 480}, {1921, 1081}, {3840, 2160}, {8192, 8192}
  };
  int quick = argc > 1 && strcmp (argv[1], "--quick") == 0;
  unsigned n_sizes = quick ? 9 : sizeof (sizes) / sizeof (sizes[0]);
  CqError err;
  char name[256];
  unsigned s, l, wi;

  if (cq_test_skip_without_cuda ())
    return 77;
  cq_cuda_device_describe (0, name, sizeof (name), &err);
  printf ("device 0: %s\n", name);
  for (s = 0; s < n_sizes; s++)
    for (wi = 0; wi < 3; wi++)
      for (l = 0; l < sizeof (layouts) / sizeof (layouts[0]); l++) {
        unsigned w = sizes[s][0], h = sizes[s][1];

        if (w < 11 && windows[wi] == CQ_SSIM_GAUSS11)
          continue;
        /* the largest size on the plain layouts only */
        if (w == 8192 && l > 2)
          continue;
        check_case (0, windows[wi], &layouts[l], w, h);
      }
  /* MS-SSIM on CUDA against the CPU: sizes of five scales and more */
  msssim = 1;
  for (s = 0; s < n_sizes; s++)
    for (l = 0; l < sizeof (layouts) / sizeof (layouts[0]); l++) {
      unsigned w = sizes[s][0], h = sizes[s][1];

      if (w < CQ_MSSSIM_MIN_SIDE || h < CQ_MSSSIM_MIN_SIDE
          || (w == 8192 && l > 2))
        continue;
      check_case (0, CQ_SSIM_GAUSS11, &layouts[l], w, h);
      /* with another window MS-SSIM's first scale is a pass of its own
       * (with gauss11 the SSIM pass sums it too) */
      if (l <= 2)
        check_case (0, CQ_SSIM_BOX8, &layouts[l], w, h);
    }
  msssim = 0;
  /* saturated frames, every window, with MS-SSIM too */
  extreme = 1;
  for (msssim = 0; msssim < 2; msssim++)
    for (wi = 0; wi < 3; wi++)
      for (l = 0; l < 2; l++) {
        check_case (0, windows[wi], &layouts[l], 640, 480);
        if (!msssim)
          check_case (0, windows[wi], &layouts[l], 127, 65);
      }
  extreme = 0;
  msssim = 0;
  for (wi = 0; wi < 3; wi++) {
    check_in_flight (0, windows[wi], 640, 480, 0);
    if (!quick) {
      check_in_flight (0, windows[wi], 1920, 1080, 0);
      check_in_flight (0, windows[wi], 3840, 2160, 0);
    }
    check_in_flight (0, windows[wi], 640, 480, 1);
  }
  printf ("%d comparisons, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
