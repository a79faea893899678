/* SF projector benchmark: prints figures, asserts nothing.
 *
 * GPU time of the projector and the backprojector for all views with the
 * data on the GPU (CUDA events), in ms and voxel-views per second, with the
 * field-of-view mask off and on, and the coupling <Ax, y> / <x, Aᵀy> of
 * the GPU pair for data uniform in [0, 1) and in [-1, 1) (double sums).
 * Case A: 256³ (1 mm), 64 views of 256² (2 mm); case B: 512³ (0.5 mm),
 * 360 views of 512² (1 mm); R 1024, D 2048 (../shared/peers/leap_bench.py
 * times LLNL LEAP on the same geometry). The double CPU implementation
 * runs on case A for scale.
 *
 *   bench-sfproject [--iterations N] [--cases A,B] [--no-cpu]
 *                   [--no-coupling] [--json]
 *   bench-sfproject --devices LIST [--cases A,B] [--iterations N]
 *   bench-sfproject --size N [--views V] [--detector D]
 *                   [--memory-limit BYTES[K|M|G]] [--no-compare]
 *
 * The mask-off rows keep the format leap_bench.py --ours reads.
 *
 * --devices LIST (e.g. 0,1 or all; default case B): each case on the first
 * device of LIST and on all of LIST (issue 12): GPU time with the data
 * resident (CUDA events, the slowest device's, all running at once) and
 * host-to-host wall time (set_volume + project, backproject: what LEAP's
 * host path with --gpus 0,1 times, leap_bench.py --no-device), and whether
 * the results are identical.
 *
 * --size N: a case of N³ voxels (256 mm cube), --views V (default 720) of
 * --detector D² cells (default N; 512 mm), R 1024, D 2048. With
 * --memory-limit (bytes a device may use; K, M, G: 2^10, 2^20, 2^30) it is
 * run uncapped (what device 0 has free) and capped, host to host: the
 * plans, set_volume, a one-view warm-up (buffers, a held volume's upload),
 * then all views projected and backprojected, the capped / uncapped
 * ratios, and (unless --no-compare) how the capped results differ. Host
 * memory: the volume, twice the projections and a second volume, plus the
 * library's pinned copy of the volume (2048³ and 720 × 2048²: ~87 GiB).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-pool.h"
#include "cq-sfproject.h"
#include "../cq-test.h"

typedef struct
{
  const char *name;
  unsigned n, views, det;
  int run;
  double proj_ms, back_ms, proj_fov_ms, back_fov_ms;
  double coupling, coupling_signed;
  double cpu_proj_s, cpu_back_s;
} Case;

static void
geometry (const Case * c, CqSfGeometry * g)
{
  memset (g, 0, sizeof (*g));
  g->nx = g->ny = g->nz = c->n;
  g->dx = g->dz = 256.0 / c->n;
  g->nu = g->nv = c->det;
  g->du = g->dv = 512.0 / c->det;
  g->sod = 1024;
  g->sdd = 2048;
  g->n_views = c->views;
  g->direction = 1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float
uniform (int is_signed)
{
  double u = cq_test_uniform (&rng_state);

  return (float) (is_signed ? 2 * u - 1 : u);
}

/* <A x, y> / <x, Aᵀ y> for x, y uniform in [0, 1) or [-1, 1). */
static int
coupling (CqSfCuda * cu, const CqSfGeometry * g, int is_signed,
    double *ratio, CqError * err)
{
  const size_t nvox = (size_t) g->nx * g->ny * g->nz;
  const size_t ncell = (size_t) g->nu * g->nv * g->n_views;
  float *x = malloc (nvox * sizeof (float)), *aty =
      malloc (nvox * sizeof (float));
  float *y = malloc (ncell * sizeof (float)), *ax =
      malloc (ncell * sizeof (float));
  double lhs = 0, rhs = 0;
  size_t k;
  int ok = x && aty && y && ax;

  if (ok) {
    for (k = 0; k < nvox; k++)
      x[k] = uniform (is_signed);
    for (k = 0; k < ncell; k++)
      y[k] = uniform (is_signed);
    ok = cq_sf_cuda_set_volume (cu, x, err) == CQ_OK
        && cq_sf_cuda_project (cu, 0, g->n_views, ax, err) == CQ_OK
        && cq_sf_cuda_backproject (cu, y, 0, g->n_views, aty, err) == CQ_OK;
  }
  if (ok) {
    for (k = 0; k < ncell; k++)
      lhs += (double) ax[k] * y[k];
    for (k = 0; k < nvox; k++)
      rhs += (double) x[k] * aty[k];
    *ratio = lhs / rhs;
  }
  free (x);
  free (aty);
  free (y);
  free (ax);
  return ok;
}

static int
time_pair (const CqSfGeometry * g, const float *vol, unsigned iterations,
    double *proj_ms, double *back_ms, CqError * err)
{
  CqSfCuda *cu = cq_sf_cuda_new (0, g, err);
  int ok = cu && cq_sf_cuda_set_volume (cu, vol, err) == CQ_OK
      && cq_sf_cuda_time (cu, 0, iterations, proj_ms, err) == CQ_OK
      && cq_sf_cuda_time (cu, 1, iterations, back_ms, err) == CQ_OK;

  cq_sf_cuda_free (cu);
  return ok;
}

static int
run_case (Case * c, unsigned iterations, int cpu, int with_coupling,
    CqError * err)
{
  const size_t nvox = (size_t) c->n * c->n * c->n;
  CqSfGeometry g;
  float *vol = malloc (nvox * sizeof (float));
  size_t k;
  int ok;

  geometry (c, &g);
  for (k = 0; k < nvox; k++)
    vol[k] = (float) ((k * 2654435761u) % 1000) / 1000.0f;
  ok = time_pair (&g, vol, iterations, &c->proj_ms, &c->back_ms, err);
  g.fov_mask = 1;
  ok = ok && time_pair (&g, vol, iterations, &c->proj_fov_ms,
      &c->back_fov_ms, err);
  g.fov_mask = 0;
  if (ok && with_coupling) {
    CqSfCuda *cu = cq_sf_cuda_new (0, &g, err);

    ok = cu && coupling (cu, &g, 0, &c->coupling, err)
        && coupling (cu, &g, 1, &c->coupling_signed, err);
    cq_sf_cuda_free (cu);
  }
  if (ok && cpu) {
    double *dv = malloc (nvox * sizeof (double));
    double *dp = malloc ((size_t) c->det * c->det * c->views *
        sizeof (double));
    double t0;

    for (k = 0; k < nvox; k++)
      dv[k] = vol[k];
    t0 = cq_test_now_s ();
    cq_sf_project_cpu (&g, dv, 0, c->views, dp, 0, err);
    c->cpu_proj_s = cq_test_now_s () - t0;
    t0 = cq_test_now_s ();
    cq_sf_backproject_cpu (&g, dp, 0, c->views, dv, 0, err);
    c->cpu_back_s = cq_test_now_s () - t0;
    free (dv);
    free (dp);
  }
  free (vol);
  return ok;
}

/* ---- issue 12: several devices, and volumes larger than a device ---- */

typedef struct
{
  float *vol;
  size_t n;
} Fill;

static void
fill_part (void *user, unsigned part)
{
  Fill *f = user;
  const size_t a = f->n * part / 64, b = f->n * (part + 1) / 64;
  size_t k;

  for (k = a; k < b; k++)
    f->vol[k] = (float) ((k * 2654435761u) % 1000) / 1000.0f;
}

/* The benchmark's volume pattern, on the worker pool (2048³ is 8 G values). */
static float *
make_volume (const CqSfGeometry * g)
{
  Fill f;

  f.n = (size_t) g->nx * g->ny * g->nz;
  f.vol = malloc (f.n * sizeof (float));
  if (f.vol)
    cq_pool_run (64, fill_part, &f);
  return f.vol;
}

static CqSfCuda *
open_devices (const int *ids, unsigned n, const CqSfGeometry * g,
    size_t limit, CqError * err)
{
  CqCudaTarget t[CQ_CUDA_MAX_DEVICES];
  CqSfCudaOptions o = { limit };
  unsigned i;

  for (i = 0; i < n; i++) {
    CqCudaTarget d = CQ_CUDA_TARGET_DEVICE (ids[i]);

    t[i] = d;
  }
  return cq_sf_cuda_new_multi (t, n, g, &o, err);
}

static int
compare_doubles (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* Host-to-host seconds of set_volume + project and of backproject (all
 * views): the medians of reps rounds after an untimed one (as LEAP's host
 * figures are); results in proj and back. */
static int
host_times (CqSfCuda * cu, const CqSfGeometry * g, const float *vol,
    float *proj, float *back, unsigned reps, double *proj_s, double *back_s,
    CqError * err)
{
  double tp[64], tb[64], t0;
  unsigned r;

  reps = reps < 64 ? reps : 64;
  if (cq_sf_cuda_set_volume (cu, vol, err) != CQ_OK
      || cq_sf_cuda_project (cu, 0, g->n_views, proj, err) != CQ_OK
      || cq_sf_cuda_backproject (cu, proj, 0, g->n_views, back, err) != CQ_OK)
    return 0;
  for (r = 0; r < reps; r++) {
    t0 = cq_test_now_s ();
    if (cq_sf_cuda_set_volume (cu, vol, err) != CQ_OK
        || cq_sf_cuda_project (cu, 0, g->n_views, proj, err) != CQ_OK)
      return 0;
    tp[r] = cq_test_now_s () - t0;
    t0 = cq_test_now_s ();
    if (cq_sf_cuda_backproject (cu, proj, 0, g->n_views, back, err) != CQ_OK)
      return 0;
    tb[r] = cq_test_now_s () - t0;
  }
  qsort (tp, reps, sizeof (double), compare_doubles);
  qsort (tb, reps, sizeof (double), compare_doubles);
  *proj_s = tp[reps / 2];
  *back_s = tb[reps / 2];
  return 1;
}

static size_t
count_different (const float *a, const float *b, size_t n)
{
  size_t i, d = 0;

  for (i = 0; i < n; i++)
    d += a[i] != b[i];
  return d;
}

/* A case on the first device of ids and on all of them. */
static int
run_devices (const Case * c, const int *ids, unsigned n_ids,
    unsigned iterations, CqError * err)
{
  const size_t nvox = (size_t) c->n * c->n * c->n;
  const size_t ncell = (size_t) c->det * c->det * c->views;
  CqSfGeometry g;
  float *vol, *p1 = malloc (ncell * 4), *pn = malloc (ncell * 4),
      *b1 = malloc (nvox * 4), *bn = malloc (nvox * 4);
  double gp[2] = { 0, 0 }, gb[2] = { 0, 0 };
  double hp[2] = { 0, 0 }, hb[2] = { 0, 0 };
  CqSfCuda *cu;
  char plan[1024];
  int ok = p1 && pn && b1 && bn, k;

  geometry (c, &g);
  vol = make_volume (&g);
  ok = ok && vol;
  for (k = 0; ok && k < 2; k++) {
    cu = open_devices (ids, k ? n_ids : 1, &g, 0, err);
    if (cu && k) {
      cq_sf_cuda_describe (cu, plan, sizeof (plan));
      fprintf (stderr, "%s on %u devices: %s\n", c->name, n_ids, plan);
    }
    ok = cu && cq_sf_cuda_set_volume (cu, vol, err) == CQ_OK
        && cq_sf_cuda_time (cu, 0, iterations, &gp[k], err) == CQ_OK
        && cq_sf_cuda_time (cu, 1, iterations, &gb[k], err) == CQ_OK
        && host_times (cu, &g, vol, k ? pn : p1, k ? bn : b1, iterations,
        &hp[k], &hb[k], err);
    cq_sf_cuda_free (cu);
  }
  if (ok) {
    const size_t dp = count_different (p1, pn, ncell);
    const size_t db = count_different (b1, bn, nvox);

    printf ("| %s: %u^3, %u x %u^2 | projector | %.2f | %.2f | %.2fx | "
        "%.1f | %.1f | %.2fx | %s |\n", c->name, c->n, c->views, c->det,
        gp[0], gp[1], gp[0] / gp[1], hp[0] * 1e3, hp[1] * 1e3, hp[0] / hp[1],
        dp ? "differ" : "identical");
    printf ("| %s | backprojector | %.2f | %.2f | %.2fx | %.1f | %.1f | "
        "%.2fx | %s |\n", c->name, gb[0], gb[1], gb[0] / gb[1], hb[0] * 1e3,
        hb[1] * 1e3, hb[0] / hb[1], db ? "differ" : "identical");
    if (dp || db)
      printf ("(%zu cells, %zu voxels differ)\n", dp, db);
    fflush (stdout);
  }
  free (vol);
  free (p1);
  free (pn);
  free (b1);
  free (bn);
  return ok;
}

/* Bytes from "8G", "512M", "1000000". */
static size_t
parse_bytes (const char *s)
{
  char *end;
  double v = strtod (s, &end);

  switch (*end) {
    case 'k':
    case 'K':
      v *= 1024.0;
      break;
    case 'm':
    case 'M':
      v *= 1048576.0;
      break;
    case 'g':
    case 'G':
      v *= 1073741824.0;
      break;
    case 't':
    case 'T':
      v *= 1099511627776.0;
      break;
    default:
      break;
  }
  return v > 0 ? (size_t) v : 0;
}

/* One direction's host-to-host runs on a fresh object: set_volume (the
 * projector), a one-view warm-up, then all views. */
static int
capped_run (const CqSfGeometry * g, size_t limit, int backproject,
    const float *in, float *out, double *set_s, double *warm_s, double *s,
    char *plan, size_t plan_len, CqError * err)
{
  const int first[1] = { 0 };
  CqSfCuda *cu = open_devices (first, 1, g, limit, err);
  double t0;
  int ok = cu != NULL;

  *set_s = 0;
  if (ok) {
    cq_sf_cuda_describe (cu, plan, plan_len);
    t0 = cq_test_now_s ();
    if (!backproject)
      ok = cq_sf_cuda_set_volume (cu, in, err) == CQ_OK;
    *set_s = cq_test_now_s () - t0;
  }
  if (ok) {
    t0 = cq_test_now_s ();
    ok = backproject ? cq_sf_cuda_backproject (cu, in, 0, 1, out,
        err) == CQ_OK : cq_sf_cuda_project (cu, 0, 1, out, err) == CQ_OK;
    *warm_s = cq_test_now_s () - t0;
  }
  if (ok) {
    t0 = cq_test_now_s ();
    ok = backproject ? cq_sf_cuda_backproject (cu, in, 0, g->n_views, out,
        err) == CQ_OK : cq_sf_cuda_project (cu, 0, g->n_views, out,
        err) == CQ_OK;
    *s = cq_test_now_s () - t0;
  }
  cq_sf_cuda_free (cu);
  return ok;
}

static void
print_diff (const char *what, const float *a, const float *b, size_t n)
{
  double e = 0, r = 0, most = 0, worst = 0;
  size_t i, d = 0;

  for (i = 0; i < n; i++) {
    double x = (double) a[i] - b[i];

    d += a[i] != b[i];
    e += x * x;
    r += (double) b[i] * b[i];
    most = fmax (most, fabs (b[i]));
    worst = fmax (worst, fabs (x));
  }
  printf ("%s capped against uncapped: %zu of %zu differ, NRMSE %.3g, "
      "largest difference %.3g of the largest value\n", what, d, n,
      r > 0 ? sqrt (e / r) : 0.0, most > 0 ? worst / most : 0.0);
}

/* The case uncapped and at `limit`, host to host. */
static int
run_capped (const Case * c, size_t limit, int compare, CqError * err)
{
  const size_t nvox = (size_t) c->n * c->n * c->n;
  const size_t ncell = (size_t) c->det * c->det * c->views;
  const double gib = 1073741824.0;
  CqSfGeometry g;
  float *vol, *pu = NULL, *pc = NULL, *vc = NULL;
  double set[2], warm[2], proj[2], back[2], bset, bwarm[2];
  char plan[2][1024];
  int ok;

  geometry (c, &g);
  printf ("## %u^3 (%.1f GiB), %u views of %u^2 (%.1f GiB): uncapped against "
      "a limit of %.2f GiB, host to host\n\n", c->n, nvox * 4 / gib,
      c->views, c->det, ncell * 4 / gib, limit / gib);
  fflush (stdout);
  vol = make_volume (&g);
  pu = malloc (ncell * 4);
  ok = vol && pu;
  if (!ok)
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "no host memory for the "
        "volume and the projections (%.1f GiB)", (nvox + ncell) * 4 / gib);
  ok = ok && capped_run (&g, 0, 0, vol, pu, &set[0], &warm[0], &proj[0],
      plan[0], sizeof (plan[0]), err);
  if (ok) {
    pc = malloc (ncell * 4);
    ok = pc && capped_run (&g, limit, 0, vol, pc, &set[1], &warm[1],
        &proj[1], plan[1], sizeof (plan[1]), err);
    if (ok && compare)
      print_diff ("projections", pc, pu, ncell);
    free (pc);
  }
  /* the backprojector from the uncapped projections, into the volume's
   * buffer (no longer needed) and a second one */
  ok = ok && capped_run (&g, 0, 1, pu, vol, &bset, &bwarm[0], &back[0],
      plan[0], sizeof (plan[0]), err);
  if (ok) {
    vc = malloc (nvox * 4);
    ok = vc && capped_run (&g, limit, 1, pu, vc, &bset, &bwarm[1], &back[1],
        plan[1], sizeof (plan[1]), err);
    if (ok && compare)
      print_diff ("backprojections", vc, vol, nvox);
    free (vc);
  }
  if (ok) {
    printf ("\nuncapped: %s\ncapped: %s\n\n", plan[0], plan[1]);
    printf ("| direction | uncapped s | capped s | capped / uncapped | "
        "warm-up s (uncapped / capped) | set_volume s (uncapped / capped) "
        "|\n|---|---|---|---|---|---|\n");
    printf ("| projector | %.2f | %.2f | %.3f | %.2f / %.2f | %.2f / %.2f "
        "|\n", proj[0], proj[1], proj[1] / proj[0], warm[0], warm[1], set[0],
        set[1]);
    printf ("| backprojector | %.2f | %.2f | %.3f | %.2f / %.2f | |\n",
        back[0], back[1], back[1] / back[0], bwarm[0], bwarm[1]);
  }
  free (vol);
  free (pu);
  return ok;
}

int
main (int argc, char **argv)
{
  Case cases[] = {
    {.name = "A",.n = 256,.views = 64,.det = 256,.run = 1},
    {.name = "B",.n = 512,.views = 360,.det = 512,.run = 1},
  };
  Case custom = {.name = "C",.n = 0,.views = 720,.det = 0,.run = 1 };
  unsigned iterations = 5, c, n_ids = 0;
  int cpu = 1, with_coupling = 1, json = 0, i, cases_given = 0, compare = 1;
  int ids[CQ_CUDA_MAX_DEVICES];
  const char *devices = NULL;
  size_t limit = 0;
  char device[256] = "";
  CqError err;

  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = atoi (argv[++i]);
    else if (strcmp (argv[i], "--cases") == 0 && i + 1 < argc) {
      const char *list = argv[++i];

      for (c = 0; c < 2; c++)
        cases[c].run = strstr (list, cases[c].name) != NULL;
      cases_given = 1;
    } else if (strcmp (argv[i], "--devices") == 0 && i + 1 < argc)
      devices = argv[++i];
    else if (strcmp (argv[i], "--size") == 0 && i + 1 < argc)
      custom.n = atoi (argv[++i]);
    else if (strcmp (argv[i], "--views") == 0 && i + 1 < argc)
      custom.views = atoi (argv[++i]);
    else if (strcmp (argv[i], "--detector") == 0 && i + 1 < argc)
      custom.det = atoi (argv[++i]);
    else if (strcmp (argv[i], "--memory-limit") == 0 && i + 1 < argc)
      limit = parse_bytes (argv[++i]);
    else if (strcmp (argv[i], "--no-compare") == 0)
      compare = 0;
    else if (strcmp (argv[i], "--no-cpu") == 0)
      cpu = 0;
    else if (strcmp (argv[i], "--no-coupling") == 0)
      with_coupling = 0;
    else if (strcmp (argv[i], "--json") == 0)
      json = 1;
    else {
      fprintf (stderr, "usage: bench-sfproject [--iterations N] "
          "[--cases A,B] [--no-cpu] [--no-coupling] [--json]\n"
          "       bench-sfproject --devices LIST [--cases A,B]\n"
          "       bench-sfproject --size N [--views V] [--detector D] "
          "[--memory-limit BYTES[K|M|G]] [--no-compare]\n");
      return 2;
    }
  if (iterations == 0)
    iterations = 1;
  if (cq_cuda_device_describe (0, device, sizeof (device), &err) != CQ_OK) {
    printf ("no CUDA: %s\n", err.message);
    return 0;
  }
  if (custom.n > 0) {
    if (custom.det == 0)
      custom.det = custom.n;
    cases[0] = custom;
    cases[1].run = 0;
    cpu = 0;
  }
  if (limit > 0) {
    double pageable, pinned;

    cq_test_bench_device (1, &err, &pageable, &pinned);
    printf ("\n");
    if (!run_capped (&cases[0], limit, compare, &err)) {
      printf ("failed: %s\n", err.message);
      return 1;
    }
    return 0;
  }
  if (devices) {
    if (cq_cuda_parse_devices (devices, cq_cuda_device_count (&err), ids,
            &n_ids, &err) != CQ_OK || n_ids == 0) {
      printf ("--devices %s: %s\n", devices, n_ids ? err.message :
          "no devices");
      return 1;
    }
    if (!cases_given && custom.n == 0)
      cases[0].run = 0;
    {
      double pageable, pinned;

      cq_test_bench_device (1, &err, &pageable, &pinned);
    }
    printf ("%s; devices \"%s\" (%u): 1 = device %d alone, N = all of "
        "them; GPU ms: data resident, CUDA events, mean of %u after a "
        "warm-up, the slowest device's; host ms: wall time of set_volume + "
        "project and of backproject, all views, pageable host memory, "
        "median of %u after an untimed round\n\n", device, devices, n_ids,
        ids[0], iterations, iterations);
    cq_test_table_header ("case", "direction", "1 GPU ms", "N GPU ms",
        "speed-up", "1 host ms", "N host ms", "speed-up", "N against 1", NULL);
    for (c = 0; c < 2; c++)
      if (cases[c].run && !run_devices (&cases[c], ids, n_ids, iterations,
              &err)) {
        printf ("failed: %s\n", err.message);
        return 1;
      }
    return 0;
  }
  printf ("%s, mean of %u runs after a warm-up\n\n", device,
      iterations);
  cq_test_table_header ("volume", "views x detector", "projector ms",
      "backprojector ms", "Gvoxel-views/s (proj / back)", "coupling [0,1)",
      "coupling [-1,1)", "CPU proj s", "CPU back s", NULL);
  for (c = 0; c < 2; c++) {
    Case *k = &cases[c];
    double vv = (double) k->n * k->n * k->n * k->views;

    if (!k->run)
      continue;
    if (!run_case (k, iterations, cpu && c == 0, with_coupling, &err)) {
      printf ("failed: %s\n", err.message);
      return 1;
    }
    printf ("| %u^3 | %u x %u^2 | %.3f | %.3f | %.1f / %.1f | %.9f | "
        "%.9f | %.2f | %.2f |\n", k->n, k->views, k->det, k->proj_ms,
        k->back_ms, vv / (k->proj_ms * 1e6), vv / (k->back_ms * 1e6),
        k->coupling, k->coupling_signed, k->cpu_proj_s, k->cpu_back_s);
    printf ("| %u^3 fov-mask | %u x %u^2 | %.3f | %.3f | %.1f / %.1f | | | "
        "| |\n", k->n, k->views, k->det, k->proj_fov_ms, k->back_fov_ms,
        vv / (k->proj_fov_ms * 1e6), vv / (k->back_fov_ms * 1e6));
    fflush (stdout);
  }
  if (json) {
    printf ("{\"device\": \"%s\", \"iterations\": %u, \"cases\": {", device,
        iterations);
    for (c = 0, i = 0; c < 2; c++) {
      Case *k = &cases[c];

      if (!k->run)
        continue;
      printf ("%s\"%s\": {\"n\": %u, \"views\": %u, \"det\": %u, "
          "\"project_ms\": %.4f, \"backproject_ms\": %.4f, "
          "\"project_fov_ms\": %.4f, \"backproject_fov_ms\": %.4f, "
          "\"coupling\": %.12f, \"coupling_signed\": %.12f}",
          i++ ? ", " : "", k->name, k->n, k->views, k->det, k->proj_ms,
          k->back_ms, k->proj_fov_ms, k->back_fov_ms, k->coupling,
          k->coupling_signed);
    }
    printf ("}}\n");
  }
  return 0;
}
