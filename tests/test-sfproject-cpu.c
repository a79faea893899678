/* CPU suite: the double-precision SF-TR/A2 projector and backprojector of
 * the compute library against footprint identities, hand-derived values,
 * numerical integration, analytic sphere chord lengths and the dot test.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cq-sfproject.h"
#include "cq-test.h"


static guint32 rng_state = 99;

static double
uniform (void)
{
  rng_state = rng_state * 1664525u + 1013904223u;
  return (rng_state >> 8) / 16777216.0;
}

/* Σ over cells covering the trapezoid = its area (τ2 + τ3 − τ0 − τ1) / 2. */
GST_START_TEST (test_trapezoid_area)
{
  guint n, k;

  for (n = 0; n < 200; n++) {
    double tau[4], sum = 0.0, lo, w = 0.05 + uniform ();

    for (k = 0; k < 4; k++)
      tau[k] = 10 * uniform () - 5;
    if (n % 7 == 0)
      tau[1] = tau[0];          /* degenerate edges */
    if (n % 11 == 0)
      tau[3] = tau[2];
    /* sort */
    for (k = 0; k < 4; k++) {
      guint m;
      for (m = k + 1; m < 4; m++)
        if (tau[m] < tau[k]) {
          double t = tau[k];
          tau[k] = tau[m];
          tau[m] = t;
        }
    }
    for (lo = -6.0 - uniform (); lo < 6.0; lo += w)
      sum += cq_sf_trapezoid_integral (tau, lo, lo + w);
    fail_unless (fabs (sum - (tau[2] + tau[3] - tau[0] - tau[1]) / 2) <
        1e-12, "sum %.17g", sum);
  }
}

GST_END_TEST;

/* The trapezoid integral against a midpoint rule over its definition. */
GST_START_TEST (test_trapezoid_numeric)
{
  const double tau[4] = { -1.3, -0.4, 0.2, 1.7 };
  double lo;

  for (lo = -2.0; lo < 2.0; lo += 0.37) {
    double hi = lo + 0.29, sum = 0.0, x, h = 1e-5;

    for (x = lo + h / 2; x < hi; x += h) {
      double f = x < tau[0] ? 0 : x < tau[1] ? (x - tau[0]) / (tau[1] -
          tau[0]) : x < tau[2] ? 1 : x < tau[3] ? (tau[3] - x) / (tau[3] -
          tau[2]) : 0;
      sum += f * h;
    }
    fail_unless (fabs (cq_sf_trapezoid_integral (tau, lo, hi) - sum) < 1e-8,
        "[%g, %g]: %.12g vs %.12g", lo, hi,
        cq_sf_trapezoid_integral (tau, lo, hi), sum);
  }
}

GST_END_TEST;

/* At β = 0 the footprint of a voxel at the origin is symmetric: corners at
 * p = ±Δ/2, q = ±Δ/2 give τ3 = −τ0 = DΔ/(2(R − Δ/2)) and
 * τ2 = −τ1 = DΔ/(2(R + Δ/2)). */
GST_START_TEST (test_symmetric_trapezoid)
{
  CqSfGeometry g = cq_test_seed_geometry (16, 8);
  double tau[4];
  const double D = g.sdd, R = g.sod, d = g.dx;

  cq_sf_transaxial_taus (&g, 0.0, 0.0, 0.0, tau);
  fail_unless (fabs (tau[3] - D * d / (2 * (R - d / 2))) < 1e-13);
  fail_unless (fabs (tau[2] - D * d / (2 * (R + d / 2))) < 1e-13);
  fail_unless (fabs (tau[0] + tau[3]) < 1e-13 && fabs (tau[1] + tau[2]) <
      1e-13);
}

GST_END_TEST;

GST_START_TEST (test_amplitudes)
{
  CqSfGeometry g = cq_test_seed_geometry (16, 8);

  /* the central ray: φ0 = β */
  fail_unless (fabs (cq_sf_amplitude_phi0 (&g, 0.0, 0.0, 0.0) - 1.0) < 1e-15);
  fail_unless (fabs (cq_sf_amplitude_phi0 (&g, M_PI / 4, 0.0, 0.0) -
          sqrt (2.0)) < 1e-14);
  /* a voxel on the p axis at β = 0: φ0 = atan(p / R) */
  fail_unless (fabs (cq_sf_amplitude_phi0 (&g, 0.0, 10.0, 0.0) -
          1.0 / cos (atan (10.0 / g.sod))) < 1e-14);
  fail_unless (cq_sf_amplitude_theta (&g, 0.0, 0.0) == 1.0);
  fail_unless (fabs (cq_sf_amplitude_theta (&g, 3.0, 4.0) -
          sqrt (9 + 16 + g.sdd * g.sdd) / sqrt (9 + g.sdd * g.sdd)) < 1e-15);
}

GST_END_TEST;

/* One voxel of value 1: each cell holds l_φ0 · F1 · F2 · l_θ, the sums of
 * r_s·F1 and r_t·F2 being the footprint widths. */
GST_START_TEST (test_single_voxel)
{
  CqSfGeometry g = cq_test_seed_geometry (9, 8);
  double *vol = g_new0 (double, 9 * 9 * 9), *proj = g_new (double, 81);
  const unsigned i = 6, j = 3, k = 5;
  const double beta = cq_sf_view_angle (&g, 3);
  double tau[4], total = 0.0, want, xc, yc, zc, qc, tm, tp;
  CqError err;
  unsigned u, v;

  vol[(k * 9 + j) * 9 + i] = 1.0;
  fail_unless_equals_int (cq_sf_project_cpu (&g, vol, 3, 1, proj, 1, &err),
      CQ_OK);
  xc = cq_sf_voxel_x (&g, i);
  yc = cq_sf_voxel_y (&g, j);
  zc = cq_sf_voxel_z (&g, k);
  cq_sf_transaxial_taus (&g, beta, xc, yc, tau);
  qc = -xc * sin (beta) + yc * cos (beta);
  tm = g.sdd * (zc - 0.5) / (g.sod - qc);
  tp = g.sdd * (zc + 0.5) / (g.sod - qc);
  /* every cell against the definition */
  for (v = 0; v < 9; v++)
    for (u = 0; u < 9; u++) {
      double s = cq_sf_cell_s (&g, u), t = cq_sf_cell_t (&g, v);
      double f1 = cq_sf_trapezoid_integral (tau, s - 1, s + 1) / 2;
      double f2 = fmax (0, fmin (t + 1, tp) - fmax (t - 1, tm)) / 2;
      double cell = cq_sf_amplitude_phi0 (&g, beta, xc, yc) * f1 * f2 *
          cq_sf_amplitude_theta (&g, s, t);

      fail_unless (fabs (proj[v * 9 + u] - cell) < 1e-15, "cell %u,%u", u, v);
      total += proj[v * 9 + u] / cq_sf_amplitude_theta (&g, s, t) * 4;
    }
  /* Σ r_s r_t F1 F2 l_φ0 = l_φ0 · trapezoid area · (t+ − t−) */
  want = cq_sf_amplitude_phi0 (&g, beta, xc, yc) *
      (tau[2] + tau[3] - tau[0] - tau[1]) / 2 * (tp - tm);
  fail_unless (fabs (total - want) < 1e-12, "%.17g vs %.17g", total, want);
  g_free (vol);
  g_free (proj);
}

GST_END_TEST;

/* ⟨A f, g⟩ = ⟨f, Aᵀ g⟩ for random f and g, with offsets and an odd start
 * angle so that nothing is symmetric. */
GST_START_TEST (test_adjoint)
{
  CqSfGeometry g = cq_test_seed_geometry (20, 7);
  size_t nvox = 20 * 20 * 20, ncell = 20 * 20 * 7, i;
  double *f = g_new (double, nvox), *af = g_new (double, ncell);
  double *p = g_new (double, ncell), *atp = g_new (double, nvox);
  double lhs = 0, rhs = 0;
  CqError err;

  g.offset_x = 1.3;
  g.offset_y = -0.7;
  g.offset_z = 0.4;
  g.offset_u = 0.9;
  g.offset_v = -1.1;
  g.start_angle = 0.37;
  g.dz = 1.5;
  for (i = 0; i < nvox; i++)
    f[i] = uniform ();
  for (i = 0; i < ncell; i++)
    p[i] = uniform ();
  fail_unless_equals_int (cq_sf_project_cpu (&g, f, 0, 7, af, 0, &err), CQ_OK);
  fail_unless_equals_int (cq_sf_backproject_cpu (&g, p, 0, 7, atp, 0, &err),
      CQ_OK);
  for (i = 0; i < ncell; i++)
    lhs += af[i] * p[i];
  for (i = 0; i < nvox; i++)
    rhs += f[i] * atp[i];
  fail_unless (fabs (lhs / rhs - 1) < 1e-12, "coupling %.17g", lhs / rhs);
  g_free (f);
  g_free (af);
  g_free (p);
  g_free (atp);
}

GST_END_TEST;

/* The field-of-view mask: the radius against the hand-computed value, an
 * offset detector bounding it by its nearer edge, and the masked pair
 * equal to the unmasked pair on a volume with the outside columns zeroed
 * (projection) and zero there (backprojection), still adjoint with signed
 * data. */
GST_START_TEST (test_fov_mask)
{
  CqSfGeometry g = cq_test_seed_geometry (20, 7);
  size_t nvox = 20 * 20 * 20, ncell = 20 * 20 * 7, n;
  double *f = g_new (double, nvox), *fz = g_new (double, nvox);
  double *a = g_new (double, ncell), *b = g_new (double, ncell);
  double *p = g_new (double, ncell), *atp = g_new (double, nvox);
  double s, lhs = 0, rhs = 0;
  unsigned i, j, k, outside = 0;
  CqError err;

  /* 20 cells of pitch du centred: s = 10 du */
  s = 10 * g.du;
  fail_unless (fabs (cq_sf_fov_radius (&g) - g.sod * s / sqrt (s * s +
              g.sdd * g.sdd)) < 1e-12);
  g.offset_u = 2 * g.du;        /* edges at -8 du and +12 du */
  s = 8 * g.du;
  fail_unless (fabs (cq_sf_fov_radius (&g) - g.sod * s / sqrt (s * s +
              g.sdd * g.sdd)) < 1e-12);
  g.offset_u = 0;
  g.fov_mask = 1;
  for (n = 0; n < nvox; n++)
    f[n] = fz[n] = 2 * uniform () - 1;
  for (n = 0; n < ncell; n++)
    p[n] = 2 * uniform () - 1;
  for (k = 0; k < 20; k++)
    for (j = 0; j < 20; j++)
      for (i = 0; i < 20; i++)
        if (!cq_sf_column_in_fov (&g, i, j)) {
          fz[(k * 20 + j) * 20 + i] = 0;
          outside += k == 0;
        }
  fail_unless (outside > 0 && outside < 400, "%u columns outside", outside);
  fail_unless_equals_int (cq_sf_project_cpu (&g, f, 0, 7, a, 0, &err), CQ_OK);
  g.fov_mask = 0;
  fail_unless_equals_int (cq_sf_project_cpu (&g, fz, 0, 7, b, 0, &err),
      CQ_OK);
  for (n = 0; n < ncell; n++)
    fail_unless (a[n] == b[n]);
  g.fov_mask = 1;
  fail_unless_equals_int (cq_sf_backproject_cpu (&g, p, 0, 7, atp, 0, &err),
      CQ_OK);
  for (k = 0; k < 20; k++)
    for (j = 0; j < 20; j++)
      for (i = 0; i < 20; i++)
        if (!cq_sf_column_in_fov (&g, i, j))
          fail_unless (atp[(k * 20 + j) * 20 + i] == 0);
  for (n = 0; n < ncell; n++)
    lhs += a[n] * p[n];
  for (n = 0; n < nvox; n++)
    rhs += f[n] * atp[n];
  fail_unless (fabs (lhs / rhs - 1) < 1e-12, "coupling %.17g", lhs / rhs);
  g_free (f);
  g_free (fz);
  g_free (a);
  g_free (b);
  g_free (p);
  g_free (atp);
}

GST_END_TEST;

/* The fraction of voxel (x, y, z) inside a sphere of radius rho at the
 * origin: exact inside and outside, 4³ subsamples near the surface. */
static double
sphere_fraction (double x, double y, double z, double d, const double *par)
{
  const double rho = par[0];
  double r = sqrt (x * x + y * y + z * z), half = d * sqrt (3.0) / 2;
  int a, b, c, in = 0;

  if (r + half <= rho)
    return 1.0;
  if (r - half >= rho)
    return 0.0;
  for (a = 0; a < 4; a++)
    for (b = 0; b < 4; b++)
      for (c = 0; c < 4; c++) {
        double sx = x + (a - 1.5) * d / 4, sy = y + (b - 1.5) * d / 4;
        double sz = z + (c - 1.5) * d / 4;
        in += sx * sx + sy * sy + sz * sz <= rho * rho;
      }
  return in / 64.0;
}

typedef double (*FractionFunc) (double x, double y, double z, double d,
    const double *par);

/* The volume of an n³ geometry voxelised by fraction. */
static double *
voxelise (const CqSfGeometry * g, FractionFunc fraction, const double *par)
{
  const unsigned n = g->nx;
  double *vol = g_new (double, (size_t) n * n * n);
  unsigned i, j, k;

  for (k = 0; k < n; k++)
    for (j = 0; j < n; j++)
      for (i = 0; i < n; i++)
        vol[((size_t) k * n + j) * n + i] = fraction (cq_sf_voxel_x (g, i),
            cq_sf_voxel_y (g, j), cq_sf_voxel_z (g, k), g->dx, par);
  return vol;
}

/* A uniform sphere against the analytic chord lengths, at 256³ and 256²
 * (one view: the sphere looks the same from every angle). */
/* NRMSE of one projected view of a ball of radius rho centred at the world
 * origin against its analytic chords: the ray from the source (q = R) to
 * each cell (q = R − D) passes the centre at R·|(s, t)|/√(s² + t² + D²). */
static double
sphere_view_nrmse (const CqSfGeometry * g, double rho, unsigned view)
{
  double *vol = voxelise (g, sphere_fraction, &rho);
  double *proj = g_new (double, (size_t) g->nu * g->nv);
  double err2 = 0, ref2 = 0;
  unsigned u, v;
  CqError err;

  fail_unless_equals_int (cq_sf_project_cpu (g, vol, view, 1, proj, 0,
          &err), CQ_OK);
  for (v = 0; v < g->nv; v++)
    for (u = 0; u < g->nu; u++) {
      double s = cq_sf_cell_s (g, u), t = cq_sf_cell_t (g, v);
      double len = sqrt (s * s + t * t + g->sdd * g->sdd);
      double dist = g->sod * sqrt (s * s + t * t) / len;
      double chord = dist < rho ? 2 * sqrt (rho * rho - dist * dist) : 0;
      double e = proj[(size_t) v * g->nu + u] - chord;

      err2 += e * e;
      ref2 += chord * chord;
    }
  g_free (vol);
  g_free (proj);
  return sqrt (err2 / ref2);
}

GST_START_TEST (test_sphere_chords)
{
  const unsigned n = 256;
  CqSfGeometry g = cq_test_seed_geometry (n, 64);
  const double e = sphere_view_nrmse (&g, 0.35 * n, 5);

  fail_unless (e < 0.01, "NRMSE %.4g", e);
  g_print ("sphere 256^3: NRMSE %.3g %%\n", 100 * e);
}

GST_END_TEST;

/* An off-centre, rotated-free ellipsoid (semi-axes a, b, c at (x0, y0,
 * z0)) against analytic chord lengths, at 256³ and 256², in a view where
 * nothing is symmetric. */
/* An offset volume and an offset detector (a half-fan-like shift): the
 * sphere stays at the world origin, inside the shifted volume, so the
 * chords are the same closed form; the bound is the centred test's. */
GST_START_TEST (test_offset_chords)
{
  const unsigned n = 256;
  CqSfGeometry g = cq_test_seed_geometry (n, 64);
  double e;

  g.offset_x = 13.0;
  g.offset_y = -7.5;
  g.offset_z = 9.0;
  g.offset_u = 41.0;
  g.offset_v = -23.0;
  e = sphere_view_nrmse (&g, 0.3 * n, 11);
  fail_unless (e < 0.01, "NRMSE %.4g", e);
  g_print ("sphere 256^3, offset volume and detector: NRMSE %.3g %%\n",
      100 * e);
}

GST_END_TEST;

/* Offsets that leave the volume where no view sees it are refused with
 * the ranges in the message; a shifted but visible volume is not. */
GST_START_TEST (test_out_of_view)
{
  CqSfGeometry g = cq_test_seed_geometry (20, 8);
  CqError err;

  /* transaxially: the fan sees radii up to R·s/√(s² + D²) ≈ 9.9 mm */
  g.offset_x = 5.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_OK);
  g.offset_x = 24.0;
  g.sod = 200.0;
  g.sdd = 400.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "no view sees the volume") != NULL,
      "%s", err.message);
  /* a detector entirely to one side misses a small volume on the axis */
  g = cq_test_seed_geometry (20, 8);
  g.offset_u = 60.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "no view sees the volume") != NULL,
      "%s", err.message);
  /* axially: the rows see |z| up to about 20 mm */
  g = cq_test_seed_geometry (20, 8);
  g.offset_z = 200.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "no detector row sees the volume") !=
      NULL, "%s", err.message);
  g.offset_z = 15.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_OK);
}

GST_END_TEST;

static double
ellipsoid_fraction (double x, double y, double z, double d, const double *e)
{
  double r = sqrt (pow ((x - e[3]) / e[0], 2) + pow ((y - e[4]) / e[1],
          2) + pow ((z - e[5]) / e[2], 2));
  double band = d * sqrt (3.0) / 2 / fmin (e[0], fmin (e[1], e[2]));
  int a, b, c, in = 0;

  if (r + band <= 1)
    return 1.0;
  if (r - band >= 1)
    return 0.0;
  for (a = 0; a < 4; a++)
    for (b = 0; b < 4; b++)
      for (c = 0; c < 4; c++) {
        double sx = (x + (a - 1.5) * d / 4 - e[3]) / e[0];
        double sy = (y + (b - 1.5) * d / 4 - e[4]) / e[1];
        double sz = (z + (c - 1.5) * d / 4 - e[5]) / e[2];
        in += sx * sx + sy * sy + sz * sz <= 1;
      }
  return in / 64.0;
}

GST_START_TEST (test_ellipsoid_chords)
{
  const unsigned n = 256, view = 11;
  CqSfGeometry g = cq_test_seed_geometry (n, 64);
  const double e[6] = { 70, 45, 90, 25, -18, 12 };
  const double beta = cq_sf_view_angle (&g, view);
  const double cb = cos (beta), sb = sin (beta);
  double *vol = voxelise (&g, ellipsoid_fraction, e);
  double *proj = g_new (double, n * n);
  double err2 = 0, ref2 = 0;
  unsigned u, v;
  CqError err;

  fail_unless_equals_int (cq_sf_project_cpu (&g, vol, view, 1, proj, 0,
          &err), CQ_OK);
  for (v = 0; v < n; v++)
    for (u = 0; u < n; u++) {
      /* source (p, q) = (0, R), cell (s, R − D), both at their z; in x, y:
       * x = p cos β − q sin β, y = p sin β + q cos β */
      double s = cq_sf_cell_s (&g, u), t = cq_sf_cell_t (&g, v);
      double ox = -g.sod * sb, oy = g.sod * cb, oz = 0;
      double qd = g.sod - g.sdd;
      double dx = s * cb - qd * sb - ox, dy = s * sb + qd * cb - oy;
      double dz = t - oz;
      /* |((o + τ d) − c) / axes|² = 1 */
      double px = (ox - e[3]) / e[0], py = (oy - e[4]) / e[1];
      double pz = (oz - e[5]) / e[2];
      double qx = dx / e[0], qy = dy / e[1], qz = dz / e[2];
      double A = qx * qx + qy * qy + qz * qz;
      double B = 2 * (px * qx + py * qy + pz * qz);
      double C = px * px + py * py + pz * pz - 1;
      double disc = B * B - 4 * A * C;
      double chord = disc > 0 ? sqrt (disc) / A * sqrt (dx * dx + dy * dy +
          dz * dz) : 0;
      double d = proj[v * n + u] - chord;

      err2 += d * d;
      ref2 += chord * chord;
    }
  fail_unless (sqrt (err2 / ref2) < 0.01, "NRMSE %.4g", sqrt (err2 / ref2));
  g_print ("off-centre ellipsoid 256^3: NRMSE %.3g %%\n",
      100 * sqrt (err2 / ref2));
  g_free (vol);
  g_free (proj);
}

GST_END_TEST;

/* Σ_l r_t F2[l] = t+ − t−: the axial rectangle, cut into cells, keeps its
 * length (a single voxel column seen through the element's cells). */
GST_START_TEST (test_axial_identity)
{
  CqSfGeometry g = cq_test_seed_geometry (9, 8);
  double *vol = g_new0 (double, 9 * 9 * 9), *proj = g_new (double, 81);
  const unsigned i = 4, j = 4, k = 2;
  double xc = cq_sf_voxel_x (&g, i), yc = cq_sf_voxel_y (&g, j);
  double zc = cq_sf_voxel_z (&g, k), beta = cq_sf_view_angle (&g, 0);
  double qc = -xc * sin (beta) + yc * cos (beta);
  double tm = g.sdd * (zc - 0.5) / (g.sod - qc);
  double tp = g.sdd * (zc + 0.5) / (g.sod - qc);
  double tau[4], f1_total, total = 0;
  CqError err;
  unsigned u, v;

  vol[(k * 9 + j) * 9 + i] = 1.0;
  fail_unless_equals_int (cq_sf_project_cpu (&g, vol, 0, 1, proj, 1, &err),
      CQ_OK);
  cq_sf_transaxial_taus (&g, beta, xc, yc, tau);
  /* the central column of cells, divided by l_φ0 · F1 · l_θ, sums r_t F2 */
  u = 4;
  f1_total = cq_sf_trapezoid_integral (tau, cq_sf_cell_s (&g, u) - 1,
      cq_sf_cell_s (&g, u) + 1) / 2;
  for (v = 0; v < 9; v++)
    total += proj[v * 9 + u] / (cq_sf_amplitude_phi0 (&g, beta, xc, yc) *
        f1_total * cq_sf_amplitude_theta (&g, cq_sf_cell_s (&g, u),
            cq_sf_cell_t (&g, v))) * g.dv;
  fail_unless (fabs (total - (tp - tm)) < 1e-12, "%.17g vs %.17g", total,
      tp - tm);
  g_free (vol);
  g_free (proj);
}

GST_END_TEST;

GST_START_TEST (test_impossible_geometry)
{
  CqSfGeometry g = cq_test_seed_geometry (16, 8);
  CqError err;

  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_OK);
  g.sdd = g.sod;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "source-detector") != NULL);
  g = cq_test_seed_geometry (16, 8);
  g.sod = 11.0;                 /* inside the 16 mm square's circle */
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "inside") != NULL, "%s", err.message);
  g = cq_test_seed_geometry (16, 0);
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  g = cq_test_seed_geometry (16, 8);
  g.nu = 0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  g = cq_test_seed_geometry (16, 8);
  g.du = 0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
}

GST_END_TEST;

static Suite *
sfproject_cpu_suite (void)
{
  Suite *s = suite_create ("sfproject-cpu");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_trapezoid_area);
  tcase_add_test (tc, test_trapezoid_numeric);
  tcase_add_test (tc, test_symmetric_trapezoid);
  tcase_add_test (tc, test_amplitudes);
  tcase_add_test (tc, test_single_voxel);
  tcase_add_test (tc, test_adjoint);
  tcase_add_test (tc, test_fov_mask);
  tcase_add_test (tc, test_offset_chords);
  tcase_add_test (tc, test_out_of_view);
  tcase_add_test (tc, test_sphere_chords);
  tcase_add_test (tc, test_ellipsoid_chords);
  tcase_add_test (tc, test_axial_identity);
  tcase_add_test (tc, test_impossible_geometry);
  return s;
}

GST_CHECK_MAIN (sfproject_cpu);
