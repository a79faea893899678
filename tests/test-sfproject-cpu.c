/* CPU suite: the double-precision SF-TR/A2 projector and backprojector of
 * the compute library against footprint identities, hand-derived values,
 * numerical integration, analytic sphere chord lengths and the dot test.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cq-sfproject.h"
#include "cq-sfproject-plan.h"
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

/* The seed's 20³, 7 views with offsets and an odd start angle, so that
 * nothing is symmetric. */
static CqSfGeometry
asymmetric_seed (void)
{
  CqSfGeometry g = cq_test_seed_geometry (20, 7);

  g.offset_x = 1.3;
  g.offset_y = -0.7;
  g.offset_z = 0.4;
  g.offset_u = 0.9;
  g.offset_v = -1.1;
  g.start_angle = 0.37;
  g.dz = 1.5;
  return g;
}

/* ⟨A f, p⟩ / ⟨f, Aᵀ p⟩ for random f and p (in [0, 1) or, is_signed,
 * [−1, 1)) over views [first_view, first_view + 7) of g (20³, 20² cells); A f into
 * af (20 · 20 · 7 values). */
static double
coupling (const CqSfGeometry * g, unsigned first_view, gboolean is_signed,
    double *af)
{
  size_t nvox = 20 * 20 * 20, ncell = 20 * 20 * 7, i;
  double *f = g_new (double, nvox), *p = g_new (double, ncell);
  double *atp = g_new (double, nvox);
  double lhs = 0, rhs = 0;
  CqError err;

  for (i = 0; i < nvox; i++)
    f[i] = is_signed ? 2 * uniform () - 1 : uniform ();
  for (i = 0; i < ncell; i++)
    p[i] = is_signed ? 2 * uniform () - 1 : uniform ();
  fail_unless_equals_int (cq_sf_project_cpu (g, f, first_view, 7, af, 0,
          &err), CQ_OK);
  fail_unless_equals_int (cq_sf_backproject_cpu (g, p, first_view, 7, atp, 0,
          &err), CQ_OK);
  for (i = 0; i < ncell; i++)
    lhs += af[i] * p[i];
  for (i = 0; i < nvox; i++)
    rhs += f[i] * atp[i];
  g_free (f);
  g_free (p);
  g_free (atp);
  return lhs / rhs;
}

/* ⟨A f, g⟩ = ⟨f, Aᵀ g⟩ for random f and g. */
GST_START_TEST (test_adjoint)
{
  CqSfGeometry g = asymmetric_seed ();
  double *af = g_new (double, 20 * 20 * 7);
  double c = coupling (&g, 0, FALSE, af);

  fail_unless (fabs (c - 1) < 1e-12, "coupling %.17g", c);
  g_free (af);
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

/* The fraction of voxel (x, y, z) inside a ball of radius par[0] centred
 * at (0, 0, par[1]): exact inside and outside, 4³ subsamples near the
 * surface. */
static double
sphere_fraction (double x, double y, double z, double d, const double *par)
{
  const double rho = par[0], zb = par[1];
  double r, half = d * sqrt (3.0) / 2;
  int a, b, c, in = 0;

  z -= zb;
  r = sqrt (x * x + y * y + z * z);
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

/* The fraction of voxel (x, y, z) inside the cylinder along z of radius
 * par[0] around (par[1], par[2]) from z = par[3] to par[4]. */
static double
cylinder_fraction (double x, double y, double z, double d, const double *par)
{
  const double rho = par[0], h = d / 2;
  double r = hypot (x - par[1], y - par[2]);
  int a, b, c, in = 0;

  if (r - h * sqrt (2.0) >= rho || z + h <= par[3] || z - h >= par[4])
    return 0.0;
  if (r + h * sqrt (2.0) <= rho && z - h >= par[3] && z + h <= par[4])
    return 1.0;
  for (a = 0; a < 4; a++)
    for (b = 0; b < 4; b++)
      for (c = 0; c < 4; c++) {
        double sx = x + (a - 1.5) * d / 4 - par[1];
        double sy = y + (b - 1.5) * d / 4 - par[2];
        double sz = z + (c - 1.5) * d / 4;
        in += sx * sx + sy * sy <= rho * rho && sz >= par[3] && sz <= par[4];
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

/* The ray of a view to detector coordinate (s, t): from the source
 * o = (0, R, z_s) in the view's rotated (p, q, z) to the cell
 * o + d, d = (s, −D, t) (the detector rises with a helical source:
 * z_s = pitch · view / views, written here, not the library's). */
typedef struct
{
  double o[3], d[3];
} Ray;

static Ray
view_ray (const CqSfGeometry * g, unsigned view, double s, double t)
{
  Ray r = { {0, g->sod, g->helical_pitch * view / g->n_views},
  {s, -g->sdd, t}
  };

  return r;
}

/* (x, y) in the view's rotated coordinates (p, q). */
static void
rotate (const CqSfGeometry * g, unsigned view, double x, double y,
    double *p, double *q)
{
  const double b = cq_sf_view_angle (g, view);

  *p = x * cos (b) + y * sin (b);
  *q = -x * sin (b) + y * cos (b);
}

typedef double (*ChordFunc) (const CqSfGeometry * g, unsigned view,
    double s, double t, const double *par);

/* The ball's chord: 2√(ρ² − δ²), δ the distance of its centre from the
 * ray. */
static double
sphere_chord (const CqSfGeometry * g, unsigned view, double s, double t,
    const double *par)
{
  const Ray r = view_ray (g, view, s, t);
  const double w[3] = { -r.o[0], -r.o[1], par[1] - r.o[2] };
  const double wd = w[0] * r.d[0] + w[1] * r.d[1] + w[2] * r.d[2];
  const double dd = r.d[0] * r.d[0] + r.d[1] * r.d[1] + r.d[2] * r.d[2];
  const double d2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2] - wd * wd / dd;

  return d2 < par[0] * par[0] ? 2 * sqrt (par[0] * par[0] - d2) : 0.0;
}

/* The cylinder's chord: the ray's parameters inside the circle (a
 * quadratic in the plane) and between the caps, intersected. */
static double
cylinder_chord (const CqSfGeometry * g, unsigned view, double s, double t,
    const double *par)
{
  const Ray r = view_ray (g, view, s, t);
  double pc, qc, e[2], a, b, c, disc, lo, hi, z_lo, z_hi;

  rotate (g, view, par[1], par[2], &pc, &qc);
  e[0] = r.o[0] - pc;
  e[1] = r.o[1] - qc;
  a = r.d[0] * r.d[0] + r.d[1] * r.d[1];
  b = 2 * (e[0] * r.d[0] + e[1] * r.d[1]);
  c = e[0] * e[0] + e[1] * e[1] - par[0] * par[0];
  disc = b * b - 4 * a * c;
  if (disc <= 0)
    return 0.0;
  lo = (-b - sqrt (disc)) / (2 * a);
  hi = (-b + sqrt (disc)) / (2 * a);
  if (t != 0) {
    z_lo = (par[3] - r.o[2]) / t;
    z_hi = (par[4] - r.o[2]) / t;
    lo = fmax (lo, fmin (z_lo, z_hi));
    hi = fmin (hi, fmax (z_lo, z_hi));
  } else if (r.o[2] < par[3] || r.o[2] > par[4]) {
    return 0.0;
  }
  return hi > lo ? (hi - lo) * sqrt (a + t * t) : 0.0;
}

/* NRMSE of one projected view of a voxelised object against its analytic
 * chords at the cell centres; *model: what the error model expects.
 *
 * The model (from which the bounds are derived): the projection of a
 * partial-volume voxelised object is, on average over the grid's phase,
 * the object blurred twice by the voxel (its fraction, then the
 * footprint: the trapezoid of a square rotated by φ is the convolution
 * of boxes Δ|cos φ| and Δ|sin φ|, variance Δ²/12 at any φ; the axial
 * rectangle Δz²/12) and once by the cell. On the detector, at the
 * object's magnification M = D/R: σ_s² = (du² + 2 M² Δ²)/12,
 * σ_t² = (dv² + 2 M² Δz²)/12. *model is the NRMSE of the chords blurred by
 * that Gaussian (13 × 13 points to ±3σ). For a ball of radius ρ it is,
 * the error being that of the blurred √ edge of the rim,
 * √(8G) σ/ρ = 0.833 σ/ρ (G = ∫ (E√(ξ + Z)₊ − √ξ₊)² dξ = 0.0867, Z normal),
 * integrated over the detector (0.465 % for the 256³ ball; summed at the
 * cell centres, as here, 0.429 %: the rim's band is narrower than a
 * cell). What the model leaves out — the grid's sampling (voxels and
 * cells meet an edge at fixed phases), the boxes' shape, the spread of
 * magnification across the object — moves the measured error by some
 * ±20 %; the tests allow twice the model. */
static double
view_nrmse (const CqSfGeometry * g, FractionFunc fraction, ChordFunc chord,
    const double *par, unsigned view, double *model)
{
  const double M = g->sdd / g->sod;
  const double ss = sqrt ((g->du * g->du + 2 * M * M * g->dx * g->dx) / 12);
  const double st = sqrt ((g->dv * g->dv + 2 * M * M * g->dz * g->dz) / 12);
  double *vol = voxelise (g, fraction, par);
  double *proj = g_new (double, (size_t) g->nu * g->nv);
  double err2 = 0, ref2 = 0, mod2 = 0, w[13], wsum = 0;
  unsigned u, v;
  int a, b;
  CqError err;

  for (a = 0; a < 13; a++) {
    w[a] = exp (-pow ((a - 6) * 0.5, 2) / 2);
    wsum += w[a];
  }
  fail_unless_equals_int (cq_sf_project_cpu (g, vol, view, 1, proj, 0,
          &err), CQ_OK);
  for (v = 0; v < g->nv; v++)
    for (u = 0; u < g->nu; u++) {
      double s = cq_sf_cell_s (g, u), t = cq_sf_cell_t (g, v);
      double want = chord (g, view, s, t, par), blurred = 0;
      double e = proj[(size_t) v * g->nu + u] - want;

      for (a = 0; a < 13; a++)
        for (b = 0; b < 13; b++)
          blurred += w[a] * w[b] * chord (g, view, s + (a - 6) * 0.5 * ss,
              t + (b - 6) * 0.5 * st, par);
      blurred /= wsum * wsum;
      err2 += e * e;
      ref2 += want * want;
      mod2 += (blurred - want) * (blurred - want);
    }
  g_free (vol);
  g_free (proj);
  *model = sqrt (mod2 / ref2);
  return sqrt (err2 / ref2);
}

/* A uniform ball against the analytic chord lengths at 256³ and 256², on
 * the axis at z = zb. */
static void
check_chords (const CqSfGeometry * g, FractionFunc fraction, ChordFunc chord,
    const double *par, unsigned view, const char *what)
{
  double model, e = view_nrmse (g, fraction, chord, par, view, &model);

  fail_unless (e < 2 * model, "%s: NRMSE %.4g, bound %.4g", what, e, 2 * model);
  g_print ("%s: NRMSE %.3g %% (model %.3g %%, bound %.3g %%)\n", what,
      100 * e, 100 * model, 200 * model);
}

static void
check_sphere (const CqSfGeometry * g, double rho, double zb, unsigned view,
    const char *what)
{
  const double par[2] = { rho, zb };

  check_chords (g, sphere_fraction, sphere_chord, par, view, what);
}

/* The offset chord tests' volume and detector (a half-fan-like shift). */
static void
offset (CqSfGeometry * g)
{
  g->offset_x = 13.0;
  g->offset_y = -7.5;
  g->offset_z = 9.0;
  g->offset_u = 41.0;
  g->offset_v = -23.0;
}

GST_START_TEST (test_sphere_chords)
{
  const unsigned n = 256;
  CqSfGeometry g = cq_test_seed_geometry (n, 64);

  check_sphere (&g, 0.35 * n, 0, 5, "sphere 256^3");
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

  offset (&g);
  check_sphere (&g, 0.3 * n, 0, 11, "sphere 256^3, offset volume and detector");
}

GST_END_TEST;

/* A uniform cylinder along z (radius par[0] around (par[1], par[2]), from
 * z = par[3] to par[4]) against its analytic chords: the sides are √
 * edges as the ball's rim, the caps sharper ones. */
static void
check_cylinder (const CqSfGeometry * g, const double par[5], unsigned view,
    const char *what)
{
  check_chords (g, cylinder_fraction, cylinder_chord, par, view, what);
}

/* The offset geometry of test_offset_chords, with an off-axis cylinder
 * whose caps are in view. */
GST_START_TEST (test_offset_cylinder_chords)
{
  const unsigned n = 256;
  CqSfGeometry g = cq_test_seed_geometry (n, 64);
  const double par[5] = { 0.3 * n, 5.0, -3.0, -60.0, 70.0 };

  offset (&g);
  check_cylinder (&g, par, 11, "cylinder 256^3, offset volume and detector");
}

GST_END_TEST;

/* A helical orbit, 80 mm a rotation of 64 views: view 100 (past the first
 * rotation; at the angle of view 36) has its source at z = 125 mm. A ball
 * at z = 100 and a cylinder from z = 60 to 160 (its caps in view) inside a
 * volume raised by 100 mm: the chords from the source where it is then.
 * What the bounds refuse (measured with the projector's z put off on
 * purpose): a helix that wrapped (z = 45 mm) gives the ball 116 %, a
 * source 0.5 mm off along z 1.6 % (bound 1.06 %), 0.25 mm the cylinder
 * 1.5 % (bound 0.82 %). */
GST_START_TEST (test_helical_chords)
{
  const unsigned n = 256;
  CqSfGeometry g = cq_test_seed_geometry (n, 64);
  const double par[5] = { 0.3 * n, 9.0, -6.0, 60.0, 160.0 };

  g.helical_pitch = 80.0;
  g.offset_z = 100.0;
  fail_unless (cq_sf_source_z (&g, 100) == 125.0);
  fail_unless (cq_sf_view_angle (&g, 100) == cq_sf_view_angle (&g, 36));
  check_sphere (&g, 0.3 * n, 100.0, 100, "sphere 256^3, helical, view 100");
  check_cylinder (&g, par, 100, "cylinder 256^3, helical, view 100");
}

GST_END_TEST;

/* A helical view is the circular view of the same angle of the volume
 * lowered by the source's z (to rounding: z_c − z_s against
 * z_c + (offset − z_s)); a circular orbit's views wrap exactly. */
GST_START_TEST (test_helical_shift)
{
  CqSfGeometry g = cq_test_seed_geometry (20, 7), c;
  size_t nvox = 20 * 20 * 20, ncell = 20 * 20, i;
  double *f = g_new (double, nvox), *a = g_new (double, ncell);
  double *b = g_new (double, ncell), worst = 0, peak = 0;
  CqError err;

  g.offset_z = 3.0;
  g.start_angle = 0.37;
  for (i = 0; i < nvox; i++)
    f[i] = uniform ();
  /* circular: view 7 + 3 is view 3, bit for bit */
  fail_unless_equals_int (cq_sf_project_cpu (&g, f, 10, 1, a, 1, &err), CQ_OK);
  fail_unless_equals_int (cq_sf_project_cpu (&g, f, 3, 1, b, 1, &err), CQ_OK);
  fail_unless (memcmp (a, b, ncell * sizeof (double)) == 0);
  fail_unless (cq_sf_source_z (&g, 10) == 0.0);
  /* helical, 4.2 mm a rotation: view 10 at z = 6 mm */
  g.helical_pitch = 4.2;
  c = g;
  c.helical_pitch = 0;
  c.offset_z = g.offset_z - cq_sf_source_z (&g, 10);
  fail_unless (fabs (cq_sf_source_z (&g, 10) - 6.0) < 1e-15);
  fail_unless_equals_int (cq_sf_project_cpu (&g, f, 10, 1, a, 1, &err), CQ_OK);
  fail_unless_equals_int (cq_sf_project_cpu (&c, f, 3, 1, b, 1, &err), CQ_OK);
  for (i = 0; i < ncell; i++) {
    worst = fmax (worst, fabs (a[i] - b[i]));
    peak = fmax (peak, fabs (b[i]));
  }
  fail_unless (peak > 1 && worst < 1e-12 * peak, "%.3g of %.3g", worst, peak);
  g_free (f);
  g_free (a);
  g_free (b);
}

GST_END_TEST;

/* ⟨A f, g⟩ = ⟨f, Aᵀ g⟩ on a helical orbit, signed data, views 9 to 15 of
 * 7 a rotation rising 2 mm a view: the rows leave the volume's top. */
GST_START_TEST (test_helical_adjoint)
{
  CqSfGeometry g = asymmetric_seed ();
  double *af = g_new (double, 20 * 20 * 7);
  double first = 0, last = 0, c;
  size_t i;

  g.helical_pitch = 14.0;
  c = coupling (&g, 9, TRUE, af);
  fail_unless (fabs (c - 1) < 1e-12, "coupling %.17g", c);
  /* the volume in view 9 (z 18 mm), out of view 15 (z 30 mm) */
  for (i = 0; i < 20 * 20; i++) {
    first += fabs (af[i]);
    last += fabs (af[6 * 20 * 20 + i]);
  }
  fail_unless (first > 0 && last == 0, "%g %g", first, last);
  g_free (af);
}

GST_END_TEST;

/* The helical pitch is checked; a helical scan is refused only where no
 * view of it reaches the volume; its view indices do not wrap. */
GST_START_TEST (test_helical_errors)
{
  CqSfGeometry g = cq_test_seed_geometry (20, 8);
  double vol[20 * 20 * 20] = { 0 }, proj[20 * 20];
  CqError err;

  g.helical_pitch = -5.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "helical pitch -5 mm") != NULL, "%s",
      err.message);
  g.helical_pitch = NAN;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  g.helical_pitch = INFINITY;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "helical pitch inf mm") != NULL, "%s",
      err.message);
  /* the rows see |z| up to about 20 mm at view 0 and rise: a volume below
   * is never seen, one above is seen by the later views */
  g.helical_pitch = 10.0;
  g.offset_z = -200.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "no detector row sees the volume") &&
      strstr (err.message, "helical"), "%s", err.message);
  g.offset_z = 200.0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_OK);
  /* ... by view 8·18 = 144 (z 180 mm) on, not in a scan of 100 views */
  fail_unless_equals_int (cq_sf_geometry_check_scan (&g, 100, &err),
      CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "z 0 to 123.75 mm") != NULL, "%s",
      err.message);
  fail_unless_equals_int (cq_sf_geometry_check_scan (&g, 160, &err), CQ_OK);
  /* the same volume without a helix */
  g.helical_pitch = 0;
  fail_unless_equals_int (cq_sf_geometry_check (&g, &err), CQ_ERROR_INVALID);
  /* the last view indices */
  g.offset_z = 0;
  g.helical_pitch = 10.0;
  fail_unless_equals_int (cq_sf_view_range_check (&g, UINT_MAX - 3, 4, &err),
      CQ_OK);
  fail_unless_equals_int (cq_sf_view_range_check (&g, UINT_MAX - 3, 5, &err),
      CQ_ERROR_INVALID);
  fail_unless_equals_int (cq_sf_project_cpu (&g, vol, UINT_MAX, 2, proj, 1,
          &err), CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "4294967295") != NULL, "%s", err.message);
  g.helical_pitch = 0;
  fail_unless_equals_int (cq_sf_view_range_check (&g, UINT_MAX - 3, 5, &err),
      CQ_OK);
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

/* ---- several devices and streaming (issue 12): the plain C parts ---- */

/* Device lists: "", "all", numbers; what is wrong is named. */
GST_START_TEST (test_parse_devices)
{
  int ids[CQ_CUDA_MAX_DEVICES];
  unsigned n = 99;
  CqError err;

  fail_unless_equals_int (cq_cuda_parse_devices ("", 2, ids, &n, &err),
      CQ_OK);
  fail_unless_equals_int (n, 0);
  fail_unless_equals_int (cq_cuda_parse_devices (NULL, 2, ids, &n, &err),
      CQ_OK);
  fail_unless_equals_int (n, 0);
  fail_unless_equals_int (cq_cuda_parse_devices ("  ", 0, ids, &n, &err),
      CQ_OK);
  fail_unless_equals_int (n, 0);
  fail_unless_equals_int (cq_cuda_parse_devices ("all", 3, ids, &n, &err),
      CQ_OK);
  fail_unless (n == 3 && ids[0] == 0 && ids[1] == 1 && ids[2] == 2);
  fail_unless_equals_int (cq_cuda_parse_devices (" all ", 0, ids, &n, &err),
      CQ_ERROR_NO_CUDA);
  fail_unless_equals_int (cq_cuda_parse_devices ("1,0", 2, ids, &n, &err),
      CQ_OK);
  fail_unless (n == 2 && ids[0] == 1 && ids[1] == 0);
  fail_unless_equals_int (cq_cuda_parse_devices (" 0 , 0 ", 1, ids, &n,
          &err), CQ_OK);
  fail_unless (n == 2 && ids[0] == 0 && ids[1] == 0);
  /* a device that is not there: named, with how many there are */
  fail_unless_equals_int (cq_cuda_parse_devices ("0,3", 2, ids, &n, &err),
      CQ_ERROR_NO_CUDA);
  fail_unless (strstr (err.message, "device 3") != NULL
      && strstr (err.message, "2 CUDA devices are present") != NULL, "%s",
      err.message);
  fail_unless_equals_int (cq_cuda_parse_devices ("0", 0, ids, &n, &err),
      CQ_ERROR_NO_CUDA);
  fail_unless (strstr (err.message, "device 0") != NULL, "%s", err.message);
  /* not numbers: the item named */
  fail_unless_equals_int (cq_cuda_parse_devices ("0,x", 2, ids, &n, &err),
      CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "\"x\"") != NULL, "%s", err.message);
  fail_unless_equals_int (cq_cuda_parse_devices ("0,,1", 2, ids, &n, &err),
      CQ_ERROR_INVALID);
  fail_unless_equals_int (cq_cuda_parse_devices ("-1", 2, ids, &n, &err),
      CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "\"-1\"") != NULL, "%s", err.message);
  fail_unless_equals_int (cq_cuda_parse_devices ("1a", 2, ids, &n, &err),
      CQ_ERROR_INVALID);
  fail_unless_equals_int (cq_cuda_parse_devices ("all,0", 2, ids, &n, &err),
      CQ_ERROR_INVALID);
  fail_unless_equals_int (cq_cuda_parse_devices ("12345678901", 2, ids, &n,
          &err), CQ_ERROR_INVALID);
  fail_unless_equals_int (cq_cuda_parse_devices
      ("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", 1, ids, &n, &err),
      CQ_ERROR_INVALID);
  fail_unless (strstr (err.message, "more than 16") != NULL, "%s",
      err.message);
}

GST_END_TEST;

/* The streamed pair's invariant: every detector row a z-slab's slices
 * reach, in any view of a call (views [first, first + count), count
 * sampled), for any column (its magnification D / (R − q_c), what the
 * kernels' axial map uses, and the view's source z), plus the rows the
 * backprojector stages past a slice (two) and a row either side for
 * float, lies in the band cq_sf_slab_rows gives for the call. Offsets, a
 * detector taller and shorter than the volume's shadow, both turning
 * directions, helical orbits, slabs of 1 slice to all. */
static void
check_cover_views (const CqSfGeometry * g, unsigned slab, unsigned first,
    unsigned count, unsigned views)
{
  const double edge = cq_sf_cell_t (g, 0) - g->dv / 2;
  unsigned k0, v, i, j, bad = 0, checked = 0;

  for (k0 = 0; k0 < g->nz; k0 += slab) {
    const unsigned k1 = MIN (k0 + slab, g->nz);
    unsigned r0, r1;

    cq_sf_slab_rows (g, k0, k1, cq_sf_source_z (g, first),
        cq_sf_source_z (g, first + count - 1), &r0, &r1);
    fail_unless (r0 <= r1 && r1 <= g->nv);
    for (v = 0; v < views; v++) {
      const unsigned view = first + (count - 1) * v / MAX (views - 1, 1);
      const double b = cq_sf_view_angle (g, view);
      const double c = cos (b), sn = sin (b);
      const double zs = cq_sf_source_z (g, view);
      const double zlo = cq_sf_voxel_z (g, k0) - g->dz / 2 - zs;
      const double zhi = cq_sf_voxel_z (g, k1 - 1) + g->dz / 2 - zs;

      for (j = 0; j < g->ny; j += 1 + g->ny / 24)
        for (i = 0; i < g->nx; i += 1 + g->nx / 24) {
          const double x = cq_sf_voxel_x (g, i), y = cq_sf_voxel_y (g, j);
          const double q = -x * sn + y * c;
          const double m = g->sdd / (g->sod - q);
          const double lo = floor ((m * zlo - edge) / g->dv) - 1;
          const double hi = floor ((m * zhi - edge) / g->dv) + 3;
          const double a = MAX (lo, 0.0), e = MIN (hi, (double) g->nv - 1);

          checked++;
          if (a <= e && (a < r0 || e >= r1))
            bad++;
        }
    }
  }
  fail_unless (bad == 0, "%u of %u column-views reach rows outside their "
      "slab's band (slab %u, views %u + %u)", bad, checked, slab, first,
      count);
}

static void
check_cover (const CqSfGeometry * g, unsigned slab, unsigned views)
{
  check_cover_views (g, slab, 0, g->n_views, views);
}

/* The benchmark's large cone: 2048³ of 0.125 mm, 720 views of 2048² of
 * 0.25 mm, R 1024, D 2048. */
static CqSfGeometry
large_cone_geometry (void)
{
  return cq_test_cone_geometry (2048, 2048, 2048, 0.125, 0.125, 2048, 2048,
      0.25, 0.25, 1024, 2048, 720);
}

GST_START_TEST (test_slab_rows_cover)
{
  CqSfGeometry g = cq_test_seed_geometry (64, 36);
  unsigned slabs[] = { 1, 3, 16, 23, 64 }, n;

  for (n = 0; n < G_N_ELEMENTS (slabs); n++)
    check_cover (&g, slabs[n], 36);
  /* asymmetric, offsets, Δz ≠ Δ, turning the other way */
  g = cq_test_asymmetric_geometry ();
  for (n = 1; n <= 28; n += 3)
    check_cover (&g, n, 45);
  /* a volume far above the central ray, a detector shorter than its
   * shadow; and a short volume on a tall detector */
  g.offset_z = 25;
  g.nv = 30;
  check_cover (&g, 5, 45);
  g.offset_z = -9;
  g.nv = 400;
  g.dv = 0.3;
  check_cover (&g, 4, 45);
  /* the benchmark's large cone */
  g = large_cone_geometry ();
  check_cover (&g, 192, 8);
  /* helical: a call's views at several places along the helix */
  g = cq_test_seed_geometry (64, 36);
  g.helical_pitch = 40;
  check_cover_views (&g, 7, 0, 36, 36);
  check_cover_views (&g, 16, 50, 20, 20);
  check_cover_views (&g, 3, 71, 1, 1);
  fail_unless_equals_int (cq_sf_max_band_rows (&g, 0, 64, 8), 64);
}

GST_END_TEST;

/* Plans fit the budget they were made for, and the large case's plans
 * (docs/sf-projector.md) come out as documented. */
static void
check_plans (const CqSfGeometry * g, size_t avail)
{
  const unsigned views_max = MIN (g->n_views, 2048u);
  CqSfProjPlan pp;
  CqSfBackPlan bp;

  if (cq_sf_plan_project (g, avail, views_max, &pp)) {
    fail_unless (pp.band >= 1 && pp.band <= g->ny && pp.stage >= 1
        && pp.stage <= g->nz && pp.batch >= 1 && pp.batch <= views_max);
    fail_unless (cq_sf_plan_project_bytes (g, &pp) <= avail,
        "projector plan %u/%u/%u: %zu bytes of %zu", pp.band, pp.stage,
        pp.batch, cq_sf_plan_project_bytes (g, &pp), avail);
  } else {
    fail_unless (avail < 2 * (size_t) g->nx * g->nz * 4 +
        (size_t) g->nu * g->nv * 4, "no projector plan in %zu bytes", avail);
  }
  if (cq_sf_plan_backproject (g, avail, views_max, 0, g->nz, &bp)) {
    fail_unless (bp.slab >= 1 && bp.slab <= g->nz && bp.views >= 1
        && bp.views <= views_max && bp.rows <= g->nv);
    fail_unless (bp.rows >= cq_sf_max_band_rows (g, 0, g->nz, bp.slab));
    fail_unless (cq_sf_plan_back_bytes (g, views_max, &bp) <= avail,
        "backprojector plan %u/%u/%u: %zu bytes of %zu", bp.slab, bp.views,
        bp.rows, cq_sf_plan_back_bytes (g, views_max, &bp), avail);
  }
}

GST_START_TEST (test_plans)
{
  const size_t gib = (size_t) 1 << 30;
  CqSfGeometry g = cq_test_seed_geometry (64, 36);
  CqSfProjPlan pp;
  CqSfBackPlan bp;
  size_t avail;

  for (avail = 1000; avail < (size_t) 8 << 20; avail = avail * 3 / 2)
    check_plans (&g, avail);
  /* the whole problem fits: one slab, all views */
  fail_unless (cq_sf_plan_project (&g, (size_t) 64 << 20, 36, &pp));
  fail_unless (pp.band == 64 && pp.batch == 36);
  fail_unless (cq_sf_plan_backproject (&g, (size_t) 64 << 20, 36, 0, 64,
          &bp));
  fail_unless (bp.slab == 64 && bp.views == 36 && !bp.dbl);
  /* a zone of a second device */
  fail_unless (cq_sf_plan_backproject (&g, (size_t) 1 << 20, 36, 32, 64,
          &bp));
  fail_unless (bp.slab <= 32);

  /* 2048³ (32 GiB), 720 views of 2048² (11.25 GiB): the H100 uncapped
   * (80 GB, ~78.5 GiB free) holds neither both volumes and both
   * projection sets (86.5 GiB, the resident layout) nor ... but the
   * projector holds the whole volume and all views, the backprojector
   * one slab of all of it and all views' rows */
  g = large_cone_geometry ();
  avail = 78 * gib;
  fail_unless (cq_sf_resident_bytes (&g, 720) > avail);
  fail_unless (cq_sf_plan_project (&g, avail, 720, &pp));
  fail_unless (pp.band == 2048 && pp.batch == 720, "%u %u", pp.band,
      pp.batch);
  fail_unless (cq_sf_plan_backproject (&g, avail, 720, 0, 2048, &bp));
  fail_unless (bp.slab == 2048 && bp.views == 720 && !bp.dbl);
  check_plans (&g, avail);
  /* capped at 8 GiB: bands and passes */
  avail = 8 * gib - cq_sf_stream_fixed_bytes (&g);
  fail_unless (cq_sf_plan_project (&g, avail, 720, &pp));
  fail_unless (pp.band < 2048 && pp.batch == 128, "%u %u", pp.band,
      pp.batch);
  fail_unless (cq_sf_plan_backproject (&g, avail, 720, 0, 2048, &bp));
  fail_unless (bp.views == 720 && bp.dbl, "%u %u %d", bp.slab, bp.views,
      bp.dbl);
  GST_INFO ("2048^3 at 8 GiB: projector bands of %u rows of columns, %u "
      "views a pass; backprojector slabs of %u slices, bands of %u rows",
      pp.band, pp.batch, bp.slab, bp.rows);
  check_plans (&g, avail);
  for (avail = 64 << 20; avail < 80 * gib; avail *= 2)
    check_plans (&g, avail);
}

GST_END_TEST;

static Suite *
sfproject_cpu_suite (void)
{
  TCase *tc;
  Suite *s = cq_test_suite ("sfproject-cpu", &tc);

  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_trapezoid_area);
  tcase_add_test (tc, test_trapezoid_numeric);
  tcase_add_test (tc, test_symmetric_trapezoid);
  tcase_add_test (tc, test_amplitudes);
  tcase_add_test (tc, test_single_voxel);
  tcase_add_test (tc, test_adjoint);
  tcase_add_test (tc, test_fov_mask);
  tcase_add_test (tc, test_offset_chords);
  tcase_add_test (tc, test_offset_cylinder_chords);
  tcase_add_test (tc, test_helical_chords);
  tcase_add_test (tc, test_helical_shift);
  tcase_add_test (tc, test_helical_adjoint);
  tcase_add_test (tc, test_helical_errors);
  tcase_add_test (tc, test_out_of_view);
  tcase_add_test (tc, test_sphere_chords);
  tcase_add_test (tc, test_ellipsoid_chords);
  tcase_add_test (tc, test_axial_identity);
  tcase_add_test (tc, test_impossible_geometry);
  tcase_add_test (tc, test_parse_devices);
  tcase_add_test (tc, test_slab_rows_cover);
  tcase_add_test (tc, test_plans);
  return s;
}

GST_CHECK_MAIN (sfproject_cpu);
