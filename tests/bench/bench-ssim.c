/* SSIM benchmark: prints figures, asserts nothing.
 *
 * For 8-bit luma pairs of 1080p, 4K and 8192² (or --size's), each window:
 * CUDA kernel time per pair with both frames already on the GPU (back to
 * back, CUDA events), per call with the result copied back, end to end
 * from pageable and pinned host memory beside the measured host-to-device
 * bound, and the CPU backend.
 *
 *   bench-ssim [--iterations N] [--size WxH] [--depth 8|16] [--no-cpu]
 *              [--window box8|ffmpeg|gauss11] [--rows N (tile rows)]
 *              [--ms-ssim]
 *
 * --ms-ssim adds MS-SSIM to every measurement (the window's SSIM plus the
 * five scales): with --window gauss11, the kernel time minus that of a run
 * without it is MS-SSIM's own cost (issue 15's target: at most twice the
 * gauss11 kernel at 4K).
 *
 * CQ_SSIM_KERNEL=old in the environment times the kernels of before issue
 * 14 (box8, gauss11, MS-SSIM's scales); the first line says which ran.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "cq-ssim.h"
#include "../cq-test.h"


typedef struct
{
  CqSsimCuda *cu;
  const void *ra[1], *rb[1];
  size_t st[1];
} HostCall;

static CqStatus
measure_host (void *user, CqError * err)
{
  HostCall *c = user;
  CqSsimPlaneSums sums;

  return cq_ssim_cuda_measure_host (c->cu, c->ra, c->st, c->rb, c->st, &sums,
      err);
}

static double
time_host (CqSsimCuda * cu, const void *a, const void *b, size_t stride,
    int iters)
{
  HostCall c = { cu, {a}, {b}, {stride} };

  return cq_test_time_calls (measure_host, &c, iters);
}

int
main (int argc, char **argv)
{
  /* the last entry: --size's, when it is none of the others */
  unsigned sizes[][2] = { {1920, 1080}, {3840, 2160}, {8192, 8192}, {0, 0} };
  const unsigned n_sizes = sizeof (sizes) / sizeof (sizes[0]);
  static const CqSsimWindow windows[] = {
    CQ_SSIM_FFMPEG, CQ_SSIM_BOX8, CQ_SSIM_GAUSS11
  };
  int iters = 50, i, depth = 8, no_cpu = 0, rows = 0, msssim = 0;
  const char *only_window = NULL;
  unsigned only_w = 0, only_h = 0, si, wi;
  CqError err;
  int have_cuda = cq_cuda_device_count (&err) > 0;
  double bw_pageable = 0, bw_pinned = 0;

  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--iterations") == 0 && i + 1 < argc)
      iters = atoi (argv[++i]);
    else if (strcmp (argv[i], "--size") == 0 && i + 1 < argc)
      sscanf (argv[++i], "%ux%u", &only_w, &only_h);
    else if (strcmp (argv[i], "--depth") == 0 && i + 1 < argc)
      depth = atoi (argv[++i]);
    else if (strcmp (argv[i], "--rows") == 0 && i + 1 < argc)
      rows = atoi (argv[++i]);
    else if (strcmp (argv[i], "--window") == 0 && i + 1 < argc)
      only_window = argv[++i];
    else if (strcmp (argv[i], "--no-cpu") == 0)
      no_cpu = 1;
    else if (strcmp (argv[i], "--ms-ssim") == 0)
      msssim = 1;

  if (only_w && only_h) {
    sizes[n_sizes - 1][0] = only_w;
    sizes[n_sizes - 1][1] = only_h;
    for (si = 0; si + 1 < n_sizes; si++)
      if (sizes[si][0] == only_w && sizes[si][1] == only_h)
        sizes[n_sizes - 1][0] = sizes[n_sizes - 1][1] = 0;
  }
  cq_test_bench_device (have_cuda, &err, &bw_pageable, &bw_pinned);
  printf ("luma pairs of %d bits%s, CUDA kernels: %s\n\n", depth, msssim ?
      ", with MS-SSIM" : "", getenv ("CQ_SSIM_KERNEL")
      && strcmp (getenv ("CQ_SSIM_KERNEL"), "old") == 0 ? "old" : "new");
  cq_test_table_header ("pair", "window", "GPU kernel µs", "Mpix/s (kernel)",
      "GPU call µs", "pageable e2e ms", "% of bound", "pinned e2e ms",
      "% of bound", "CPU ms", NULL);

  for (si = 0; si < n_sizes; si++) {
    unsigned w = sizes[si][0], h = sizes[si][1];
    size_t bps = depth > 8 ? 2 : 1, stride = w * bps, bytes = stride * h;
    uint8_t *pa, *pb, *qa = NULL, *qb = NULL;
    void *da = NULL, *db = NULL;
    CqSsimPlane p;

    if (w == 0 || (only_w && (w != only_w || h != only_h)))
      continue;
    memset (&p, 0, sizeof (p));
    p.width = w;
    p.height = h;
    p.layout.kind = depth > 8 ? CQ_LAYOUT_GRAY16 : CQ_LAYOUT_GRAY8;
    p.layout.depth = depth;
    p.sample_stride = bps;
    pa = malloc (bytes);
    pb = malloc (bytes);
    cq_test_fill_pair (pa, pb, bytes, 1);
    if (have_cuda) {
      qa = cq_cuda_host_alloc (bytes, &err);
      qb = cq_cuda_host_alloc (bytes, &err);
      memcpy (qa, pa, bytes);
      memcpy (qb, pb, bytes);
      da = cq_cuda_malloc (0, bytes, &err);
      db = cq_cuda_malloc (0, bytes, &err);
      cq_cuda_upload (0, da, pa, bytes, &err);
      cq_cuda_upload (0, db, pb, bytes, &err);
    }
    for (wi = 0; wi < sizeof (windows) / sizeof (windows[0]); wi++) {
      double kernel_us = 0, call_us = 0, page_s = 0, pin_s = 0, cpu_ms = 0;
      double t0, ssim = 0;
      CqSsimPlaneSums sums;
      const void *ra[1] = { pa }, *rb[1] = { pb };
      const void *dva[1] = { da }, *dvb[1] = { db };
      size_t st[1] = { stride };

      if (only_window && strcmp (only_window,
              cq_ssim_window_name (windows[wi])) != 0)
        continue;
      if (have_cuda) {
        CqSsimCuda *cu = cq_ssim_cuda_new (0, windows[wi], &p, 1, &err);

        if (!cu) {
          fprintf (stderr, "%s\n", err.message);
          return 1;
        }
        if (rows)
          cq_ssim_cuda_set_tile_rows (cu, rows, &err);
        if (msssim && cq_ssim_cuda_set_msssim (cu, 1, &err) != CQ_OK) {
          fprintf (stderr, "%s\n", err.message);
          return 1;
        }
        cq_ssim_cuda_time_device (cu, dva, st, dvb, st, 20 * iters,
            &kernel_us, &err);
        cq_ssim_cuda_measure_device (cu, dva, st, dvb, st, &sums, &err);
        t0 = cq_test_now_s ();
        for (i = 0; i < iters; i++)
          cq_ssim_cuda_measure_device (cu, dva, st, dvb, st, &sums, &err);
        call_us = (cq_test_now_s () - t0) / iters * 1e6;
        ssim = sums.ssim_sum / sums.windows;
        page_s = time_host (cu, pa, pb, stride, iters);
        pin_s = time_host (cu, qa, qb, stride, iters);
        cq_ssim_cuda_free (cu);
      }
      if (!no_cpu) {
        CqSsimCpu *cpu = cq_ssim_cpu_new (windows[wi], &p, 1, 0, &err);
        int n = bytes > (16u << 20) ? 2 : 5;

        if (msssim)
          cq_ssim_cpu_set_msssim (cpu, 1, &err);
        cq_ssim_cpu_measure (cpu, ra, st, rb, st, &sums, &err);
        t0 = cq_test_now_s ();
        for (i = 0; i < n; i++)
          cq_ssim_cpu_measure (cpu, ra, st, rb, st, &sums, &err);
        cpu_ms = (cq_test_now_s () - t0) / n * 1e3;
        cq_ssim_cpu_free (cpu);
        if (!have_cuda)
          ssim = sums.ssim_sum / sums.windows;
      }
      printf ("| %ux%u | %s | %.1f | %.0f | %.1f | %.3f | %.0f %% | %.3f | "
          "%.0f %% | %.1f |\n", w, h, cq_ssim_window_name (windows[wi]),
          kernel_us, kernel_us > 0 ? w * (double) h / kernel_us : 0,
          call_us, page_s * 1e3,
          page_s > 0 ? 100.0 * (2 * bytes / (bw_pageable * 1e9)) / page_s : 0,
          pin_s * 1e3,
          pin_s > 0 ? 100.0 * (2 * bytes / (bw_pinned * 1e9)) / pin_s : 0,
          cpu_ms);
      fprintf (stderr, "  (%s %ux%u ssim %.6f)\n",
          cq_ssim_window_name (windows[wi]), w, h, ssim);
    }
    free (pa);
    free (pb);
    cq_cuda_host_free (qa);
    cq_cuda_host_free (qb);
    cq_cuda_free (0, da);
    cq_cuda_free (0, db);
  }
  return 0;
}
