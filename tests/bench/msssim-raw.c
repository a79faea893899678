/* MS-SSIM of raw frame pairs through the compute library, for comparisons
 * outside GStreamer (tests/check-msssim-torchmetrics.py on the GPU host).
 *
 *   msssim-raw WIDTH HEIGHT REFERENCE DISTORTED [--iterations N]
 *
 * REFERENCE and DISTORTED hold frames of WIDTH x HEIGHT 8-bit samples
 * (rows unpadded); one line a frame: "cpu <value>" and, with a CUDA
 * device, "cuda <value>"; then, with a device, the CUDA kernel time of the
 * first pair (gauss11 SSIM + MS-SSIM, and gauss11 alone), in µs, over N
 * back-to-back launches.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "cq-ssim.h"

static unsigned char *
slurp (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  unsigned char *data;
  long n;

  if (!f || fseek (f, 0, SEEK_END) != 0 || (n = ftell (f)) < 0)
    return NULL;
  rewind (f);
  data = malloc (n ? n : 1);
  *len = fread (data, 1, n, f);
  fclose (f);
  return data;
}

int
main (int argc, char **argv)
{
  unsigned w, h, iterations = 200;
  size_t la = 0, lb = 0, frame, i;
  unsigned char *a, *b, *da = NULL, *db = NULL;
  CqSsimPlane p;
  CqSsimPlaneSums sums;
  CqSsimCpu *cpu;
  CqSsimCuda *cu = NULL, *plain = NULL;
  CqError err;
  int cuda;

  if (argc < 5) {
    fprintf (stderr, "usage: %s WIDTH HEIGHT REFERENCE DISTORTED "
        "[--iterations N]\n", argv[0]);
    return 2;
  }
  if (argc > 6 && strcmp (argv[5], "--iterations") == 0)
    iterations = (unsigned) atoi (argv[6]);
  w = (unsigned) atoi (argv[1]);
  h = (unsigned) atoi (argv[2]);
  a = slurp (argv[3], &la);
  b = slurp (argv[4], &lb);
  frame = (size_t) w * h;
  if (!a || !b || la != lb || la % frame) {
    fprintf (stderr, "cannot read frame pairs of %ux%u\n", w, h);
    return 2;
  }
  {
    const CqSsimPlane gray8 = {.width = w,.height = h,.layout = {.kind =
            CQ_LAYOUT_GRAY8,.depth = 8},.sample_stride = 1 };

    p = gray8;
  }
  cpu = cq_ssim_cpu_new (CQ_SSIM_GAUSS11, &p, 1, 0, &err);
  if (!cpu || cq_ssim_cpu_set_msssim (cpu, 1, &err) != CQ_OK) {
    fprintf (stderr, "%s\n", err.message);
    return 1;
  }
  cuda = cq_cuda_device_count (NULL) > 0;
  if (cuda) {
    cu = cq_ssim_cuda_new (0, CQ_SSIM_GAUSS11, &p, 1, &err);
    plain = cq_ssim_cuda_new (0, CQ_SSIM_GAUSS11, &p, 1, &err);
    if (!cu || !plain || cq_ssim_cuda_set_msssim (cu, 1, &err) != CQ_OK) {
      fprintf (stderr, "%s\n", err.message);
      return 1;
    }
  }
  for (i = 0; i < la / frame; i++) {
    const void *ra[1] = { a + i * frame }, *rb[1] = { b + i * frame };
    size_t st[1] = { w };

    if (cq_ssim_cpu_measure (cpu, ra, st, rb, st, &sums, &err) != CQ_OK)
      goto failed;
    printf ("cpu %.17g\n", cq_ssim_msssim (&p, &sums));
    if (cuda) {
      if (cq_ssim_cuda_measure_host (cu, ra, st, rb, st, &sums,
              &err) != CQ_OK)
        goto failed;
      printf ("cuda %.17g\n", cq_ssim_msssim (&p, &sums));
    }
  }
  if (cuda) {
    size_t st[1] = { w };
    double us_ms = 0, us_plain = 0;

    da = cq_cuda_malloc (0, frame, &err);
    db = cq_cuda_malloc (0, frame, &err);
    if (!da || !db || cq_cuda_upload (0, da, a, frame, &err) != CQ_OK
        || cq_cuda_upload (0, db, b, frame, &err) != CQ_OK)
      goto failed;
    {
      const void *ra[1] = { da }, *rb[1] = { db };

      if (cq_ssim_cuda_time_device (cu, ra, st, rb, st, iterations, &us_ms,
              &err) != CQ_OK
          || cq_ssim_cuda_time_device (plain, ra, st, rb, st, iterations,
              &us_plain, &err) != CQ_OK)
        goto failed;
    }
    printf ("kernel-us gauss11+ms-ssim %.2f gauss11 %.2f\n", us_ms, us_plain);
    cq_cuda_free (0, da);
    cq_cuda_free (0, db);
    cq_ssim_cuda_free (cu);
    cq_ssim_cuda_free (plain);
  }
  cq_ssim_cpu_free (cpu);
  free (a);
  free (b);
  return 0;

failed:
  fprintf (stderr, "%s\n", err.message);
  return 1;
}
