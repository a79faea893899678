/* CPU backends benchmark: prints figures, asserts nothing.
 *
 * Microseconds per frame of the CPU backends on small frames, where how
 * the work reaches the threads (not the arithmetic) decides the time:
 * sharpness (default measures) and SSIM (box8, luma) of GRAY8 frames, and
 * a 16-view batch of the SF projector.
 *
 *   bench-cpu [--iterations N]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-sfproject.h"
#include "cq-sharpness.h"
#include "cq-ssim.h"
#include "../cq-test.h"

int
main (int argc, char **argv)
{
  static const unsigned sizes[][2] = {
    {64, 48}, {160, 120}, {320, 240}, {640, 480}, {1280, 720}
  };
  const CqLayout gray8 = { CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0 };
  unsigned iterations = 2000, s, i;
  CqError err;

  if (argc == 3 && strcmp (argv[1], "--iterations") == 0)
    iterations = (unsigned) atoi (argv[2]);
  printf ("%-10s %14s %14s\n", "frame", "sharpness us", "ssim box8 us");
  for (s = 0; s < sizeof (sizes) / sizeof (sizes[0]); s++) {
    const unsigned w = sizes[s][0], h = sizes[s][1];
    const unsigned n = iterations * 64 * 48 / (w * h) + 10;
    unsigned char *a = malloc ((size_t) w * h), *b = malloc ((size_t) w * h);
    CqSsimPlane plane = { w, h, gray8, 1, 0 };
    const void *ra[1] = { a }, *rb[1] = { b };
    size_t stride[1] = { w };
    CqSsimPlaneSums sums;
    double scores[CQ_METRIC_COUNT], t0, t_sharp, t_ssim;
    CqSharpnessCpu *sharp;
    CqSsimCpu *ssim;

    for (i = 0; i < w * h; i++) {
      a[i] = (unsigned char) (i * 7 + i / w);
      b[i] = (unsigned char) (a[i] ^ (i % 5));
    }
    sharp = cq_sharpness_cpu_new (&gray8, w, h, CQ_METRIC_DEFAULT, 0, &err);
    ssim = cq_ssim_cpu_new (CQ_SSIM_BOX8, &plane, 1, 0, &err);
    cq_sharpness_cpu_measure (sharp, a, w, scores, &err);
    t0 = cq_test_now_s ();
    for (i = 0; i < n; i++)
      cq_sharpness_cpu_measure (sharp, a, w, scores, &err);
    t_sharp = (cq_test_now_s () - t0) / n * 1e6;
    cq_ssim_cpu_measure (ssim, ra, stride, rb, stride, &sums, &err);
    t0 = cq_test_now_s ();
    for (i = 0; i < n; i++)
      cq_ssim_cpu_measure (ssim, ra, stride, rb, stride, &sums, &err);
    t_ssim = (cq_test_now_s () - t0) / n * 1e6;
    printf ("%4ux%-5u %14.1f %14.1f\n", w, h, t_sharp, t_ssim);
    cq_sharpness_cpu_free (sharp);
    cq_ssim_cpu_free (ssim);
    free (a);
    free (b);
  }
  {
    CqSfGeometry g;
    const unsigned views = 16, reps = iterations / 20 + 2;
    double *vol, *proj, t0;

    g = cq_test_cone_geometry (16, 16, 16, 1.0, 1.0, 24, 24, 1.0, 1.0, 500.0,
        1000.0, 360);
    vol = calloc ((size_t) g.nx * g.ny * g.nz, sizeof (double));
    proj = calloc ((size_t) g.nu * g.nv * views, sizeof (double));
    for (i = 0; i < g.nx * g.ny * g.nz; i++)
      vol[i] = (i % 3) * 0.5;
    cq_sf_project_cpu (&g, vol, 0, views, proj, 0, &err);
    t0 = cq_test_now_s ();
    for (i = 0; i < reps; i++)
      cq_sf_project_cpu (&g, vol, i * views, views, proj, 0, &err);
    printf ("sf project 16^3 -> 24x24, 16 views: %.1f us a batch\n",
        (cq_test_now_s () - t0) / reps * 1e6);
    free (vol);
    free (proj);
  }
  return 0;
}
