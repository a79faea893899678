/* Sharpness benchmark: prints figures, asserts nothing.
 *
 * For GRAY8 1080p, 4K and 8192², default and all measures (and all but
 * entropy: the difference is its histogram's cost): CUDA time per
 * frame with the frame already on the GPU (kernel only, back to back, CUDA
 * events) and per call with the result copied back; end to end from
 * pageable and from pinned host memory beside the measured host-to-device
 * bandwidth; and the CPU backend.
 *
 *   bench-sharpness [--iterations N] [--size WxH (any)] [--rows N]
 *                   [--pixels 4|8 (a thread, default set)]
 *                   [--kernel-only (no end to end or CPU timing: sweeps)]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "cq-sharpness.h"
#include "../cq-test.h"

static void
fill (uint8_t * p, size_t n)
{
  uint64_t s = 88172645463325252ull;
  size_t i;

  for (i = 0; i < n; i++)
    p[i] = (uint8_t) (cq_test_xorshift (&s) >> 32);
}

typedef struct
{
  CqSharpnessCuda *cu;
  const void *frame;
  size_t stride;
} HostCall;

static CqStatus
measure_host (void *user, CqError * err)
{
  HostCall *c = user;
  double scores[CQ_METRIC_COUNT];

  return cq_sharpness_cuda_measure_host (c->cu, c->frame, c->stride, scores,
      err);
}

/* Mean seconds per call of measure_host over iterations, after one
 * warm-up. */
static double
time_host (CqSharpnessCuda * cu, const void *frame, size_t stride, int iters)
{
  HostCall c = { cu, frame, stride };

  return cq_test_time_calls (measure_host, &c, iters);
}

int
main (int argc, char **argv)
{
  static const unsigned sizes[][2] = { {1920, 1080}, {3840, 2160},
  {8192, 8192}
  };
  static const struct
  {
    const char *name;
    unsigned metrics;
  } sets[] = { {"default", CQ_METRIC_DEFAULT}, {"all", CQ_METRIC_ALL},
  {"all but entropy", CQ_METRIC_ALL & ~CQ_METRIC_ENTROPY},
  {"entropy", CQ_METRIC_ENTROPY}
  };
  const CqLayout gray8 = { CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0 };
  int iters = 50, i, rows = 0, pixels = 0, kernel_only = 0;
  unsigned only_w = 0, only_h = 0;
  unsigned si, mi;
  CqError err;
  int have_cuda = cq_cuda_device_count (&err) > 0;
  double bw_pageable = 0, bw_pinned = 0;

  cq_test_bench_size_args (argc, argv, &iters, &only_w, &only_h);
  for (i = 1; i < argc; i++) {
    if (i < argc - 1 && strcmp (argv[i], "--rows") == 0)
      rows = atoi (argv[i + 1]);
    if (i < argc - 1 && strcmp (argv[i], "--pixels") == 0)
      pixels = atoi (argv[i + 1]);
    kernel_only |= strcmp (argv[i], "--kernel-only") == 0;
  }
  cq_test_bench_device (have_cuda, &err, &bw_pageable, &bw_pinned);
  printf ("\n");
  cq_test_table_header ("frame", "measures", "GPU kernel µs", "GPU call µs",
      "kernel GB/s", "pageable e2e ms", "% of bound", "pinned e2e ms",
      "% of bound", "fps (pinned)", "CPU ms", NULL);

  /* --size: that frame alone, listed or not */
  for (si = 0; si < (only_w ? 1 : sizeof (sizes) / sizeof (sizes[0])); si++) {
    unsigned w = only_w ? only_w : sizes[si][0];
    unsigned h = only_w ? only_h : sizes[si][1];
    size_t bytes = (size_t) w * h;
    uint8_t *pageable;

    pageable = malloc (bytes);
    uint8_t *pinned = have_cuda ? cq_cuda_host_alloc (bytes, &err) : NULL;
    void *dev = have_cuda ? cq_cuda_malloc (0, bytes, &err) : NULL;


    fill (pageable, bytes);
    if (pinned)
      memcpy (pinned, pageable, bytes);
    if (dev)
      cq_cuda_upload (0, dev, pageable, bytes, &err);

    for (mi = 0; mi < sizeof (sets) / sizeof (sets[0]); mi++) {
      double kernel_us = 0, call_us = 0, page_s = 0, pin_s = 0, cpu_s, t0;
      double scores[CQ_METRIC_COUNT], gpu_scores[CQ_METRIC_COUNT];
      CqSharpnessCpu *cpu =
          cq_sharpness_cpu_new (&gray8, w, h, sets[mi].metrics, 0, &err);
      int cpu_iters = kernel_only ? 0 : bytes > (16u << 20) ? 3 : 10;

      if (pixels && sets[mi].metrics != CQ_METRIC_DEFAULT) {
        cq_sharpness_cpu_free (cpu);    /* only the default set has a choice */
        continue;
      }
      if (dev) {
        CqSharpnessCuda *cu = cq_sharpness_cuda_new (0, &gray8, w, h,
            sets[mi].metrics, &err);
        if (!cu || (pixels && cq_sharpness_cuda_set_thread_pixels (cu,
                    (unsigned) pixels, &err) != CQ_OK)
            || (rows && cq_sharpness_cuda_set_walk_rows (cu,
                    (unsigned) rows, &err) != CQ_OK)) {
          fprintf (stderr, "%s\n", err.message);
          return 1;
        }
        cq_sharpness_cuda_time_device (cu, dev, w, 20 * iters, &kernel_us,
            &err);
        cq_sharpness_cuda_measure_device (cu, dev, w, gpu_scores, &err);
        t0 = cq_test_now_s ();
        for (i = 0; i < (kernel_only ? 0 : iters); i++)
          cq_sharpness_cuda_measure_device (cu, dev, w, scores, &err);
        call_us = (cq_test_now_s () - t0) / iters * 1e6;
        if (!kernel_only) {
          page_s = time_host (cu, pageable, w, iters);
          pin_s = time_host (cu, pinned, w, iters);
        }
        cq_sharpness_cuda_free (cu);
      }
      cq_sharpness_cpu_measure (cpu, pageable, w, scores, &err);
      t0 = cq_test_now_s ();
      for (i = 0; i < cpu_iters; i++)
        cq_sharpness_cpu_measure (cpu, pageable, w, scores, &err);
      cpu_s = cpu_iters ? (cq_test_now_s () - t0) / cpu_iters : 0;
      cq_sharpness_cpu_free (cpu);
      /* the backends' scores are bit-identical; say so if a tuning broke it */
      for (i = 0; dev && i < CQ_METRIC_COUNT; i++)
        if ((sets[mi].metrics & (1u << i))
            && memcmp (&gpu_scores[i], &scores[i], sizeof (double)) != 0)
          printf ("%ux%u %s: GPU %s DIFFERS from the CPU backend's\n", w,
              h, sets[mi].name, cq_metric_name (i));

      printf ("| %ux%u | %s | %.2f | %.1f | %.0f | %.3f | %.0f %% | %.3f | "
          "%.0f %% | %.0f | %.2f |\n", w, h, sets[mi].name, kernel_us,
          call_us, kernel_us > 0 ? bytes / (kernel_us * 1e-6) / 1e9 : 0,
          page_s * 1e3,
          page_s > 0 ? 100.0 * bytes / page_s / 1e9 / bw_pageable : 0,
          pin_s * 1e3,
          pin_s > 0 ? 100.0 * bytes / pin_s / 1e9 / bw_pinned : 0,
          pin_s > 0 ? 1.0 / pin_s : 0, cpu_s * 1e3);
      fflush (stdout);
    }
    cq_cuda_free (0, dev);
    cq_cuda_host_free (pinned);
    free (pageable);
  }
  printf ("\nGPU kernel: mean of back-to-back launches on a frame already in "
      "GPU memory (CUDA events). GPU call: one synchronous measure_device "
      "including the result copy. e2e: measure_host wall time per frame.\n");
  return 0;
}
