/* cudaquality compute library: SF-TR/A2 projector and matched backprojector
 * on the CPU, in double precision.
 *
 * Voxel-driven (Long 2010's splatting form): for each view and voxel column
 * the transaxial trapezoid footprint is integrated over the detector cells
 * it covers, for each voxel of the column the axial rectangle likewise, and
 * f · l_φ0 · F1 · F2 is added to the cells; each cell is finally scaled by
 * l_θ. The backprojector runs the same footprints the other way round, so
 * it is the exact transpose. Views are split into jobs on the worker pool
 * in the projector, voxel rows in the backprojector, so no two jobs add to
 * the same value.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-sfproject.h"
#include "cq-pool.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The CUDA projector on a device: the same in every build. */
CqSfCuda *
cq_sf_cuda_new (int device, const CqSfGeometry * g, CqError * err)
{
  const CqCudaTarget target = CQ_CUDA_TARGET_DEVICE (device);

  return cq_sf_cuda_new_for (&target, g, err);
}

/* The distance from the axis at which the ray through detector
 * coordinate s passes it. */
static double
ray_radius (const CqSfGeometry * g, double s)
{
  return g->sod * fabs (s) / sqrt (s * s + g->sdd * g->sdd);
}

/* Refuses a geometry whose volume no view sees at all (offsets that push
 * it out of the fan or past the detector's rows). Transaxially the views
 * together see the radii between the rays through the detector's nearer
 * and farther edge (from 0 when it straddles the central ray); axially the
 * rows see, at the volume's magnifications, a range of z, which a helical
 * orbit carries up with the source, here to z_last (the union over the
 * views; a helix so steep that a volume fits between two views' rows is
 * not refused: its frames are air). */
static CqStatus
geometry_check_view (const CqSfGeometry * g, double z_last, CqError * err)
{
  const double x_lo = g->offset_x - g->nx * g->dx / 2;
  const double x_hi = g->offset_x + g->nx * g->dx / 2;
  const double y_lo = g->offset_y - g->ny * g->dx / 2;
  const double y_hi = g->offset_y + g->ny * g->dx / 2;
  const double z_lo = g->offset_z - g->nz * g->dz / 2;
  const double z_hi = g->offset_z + g->nz * g->dz / 2;
  const double s_lo = g->offset_u - g->nu * g->du / 2;
  const double s_hi = g->offset_u + g->nu * g->du / 2;
  const double t_lo = g->offset_v - g->nv * g->dv / 2;
  const double t_hi = g->offset_v + g->nv * g->dv / 2;
  /* the volume's nearest and farthest distance from the axis */
  const double nx_ = x_lo > 0 ? x_lo : x_hi < 0 ? -x_hi : 0;
  const double ny_ = y_lo > 0 ? y_lo : y_hi < 0 ? -y_hi : 0;
  const double fx = fmax (fabs (x_lo), fabs (x_hi));
  const double fy = fmax (fabs (y_lo), fabs (y_hi));
  const double near = sqrt (nx_ * nx_ + ny_ * ny_);
  const double far = sqrt (fx * fx + fy * fy);
  const double r_far = fmax (ray_radius (g, s_lo), ray_radius (g, s_hi));
  const double r_near = s_lo < 0 && s_hi > 0 ? 0 :
      fmin (ray_radius (g, s_lo), ray_radius (g, s_hi));
  /* z the rows reach at the least and the most magnification */
  const double m_lo = g->sdd / (g->sod + far), m_hi = g->sdd / (g->sod -
      far);
  const double zs_lo = fmin (t_lo / m_lo, t_lo / m_hi);
  const double zs_hi = fmax (t_hi / m_lo, t_hi / m_hi) + z_last;

  if (near >= r_far || far <= r_near)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "no view sees the volume: it lies %g to %g mm from the axis "
        "(offset %g, %g mm), the views see %g to %g mm (detector from %g "
        "to %g mm, offset %g mm)", near, far, g->offset_x, g->offset_y,
        r_near, r_far, s_lo, s_hi, g->offset_u);
  if ((z_hi <= zs_lo || z_lo >= zs_hi) && g->helical_pitch == 0)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "no detector row sees the volume: it spans z %g to %g mm (offset "
        "%g mm), the rows see z %g to %g mm (detector from %g to %g mm, "
        "offset %g mm)", z_lo, z_hi, g->offset_z, zs_lo, zs_hi, t_lo, t_hi,
        g->offset_v);
  if (z_hi <= zs_lo || z_lo >= zs_hi)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "no detector row sees the volume: it spans z %g to %g mm (offset "
        "%g mm), the rows of the helical scan see z %g to %g mm (detector "
        "from %g to %g mm, offset %g mm; the source from z 0 to %g mm, "
        "pitch %g mm a rotation of %u views)", z_lo, z_hi, g->offset_z,
        zs_lo, zs_hi, t_lo, t_hi, g->offset_v, z_last, g->helical_pitch,
        g->n_views);
  return CQ_OK;
}

/* The geometry's own checks, the views' up to z_last. */
static CqStatus
geometry_check (const CqSfGeometry * g, double z_last, CqError * err)
{
  double half_x, half_y, radius;

  if (g->nx == 0 || g->ny == 0 || g->nz == 0)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "volume of %ux%ux%u voxels is empty", g->nx, g->ny, g->nz);
  if (!(g->dx > 0) || !(g->dz > 0))
    return cq_error_set (err, CQ_ERROR_INVALID,
        "voxel size %g x %g mm must be positive", g->dx, g->dz);
  if (g->nu == 0 || g->nv == 0)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "detector of %ux%u cells is empty", g->nu, g->nv);
  if (!(g->du > 0) || !(g->dv > 0))
    return cq_error_set (err, CQ_ERROR_INVALID,
        "detector pitch %g x %g mm must be positive", g->du, g->dv);
  if (g->n_views == 0)
    return cq_error_set (err, CQ_ERROR_INVALID, "0 views per rotation");
  if (g->direction != 1 && g->direction != -1)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "rotation direction %d is not +1 or -1", g->direction);
  if (!(g->helical_pitch >= 0) || isinf (g->helical_pitch))
    return cq_error_set (err, CQ_ERROR_INVALID,
        "helical pitch %g mm a rotation must be finite and >= 0 (0: a "
        "circular orbit)", g->helical_pitch);
  if (!(g->sod > 0) || !(g->sdd > g->sod))
    return cq_error_set (err, CQ_ERROR_INVALID,
        "source-detector distance %g mm must exceed the source-origin "
        "distance %g mm (> 0)", g->sdd, g->sod);
  half_x = fabs (g->offset_x) + g->nx * g->dx / 2;
  half_y = fabs (g->offset_y) + g->ny * g->dx / 2;
  radius = sqrt (half_x * half_x + half_y * half_y);
  if (g->sod <= radius)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "the source at %g mm from the axis is inside the volume's bounding "
        "cylinder of radius %g mm (%ux%u voxels of %g mm, offset %g, %g)",
        g->sod, radius, g->nx, g->ny, g->dx, g->offset_x, g->offset_y);
  return geometry_check_view (g, z_last, err);
}

CqStatus
cq_sf_geometry_check (const CqSfGeometry * g, CqError * err)
{
  return cq_sf_geometry_check_scan (g, (uint64_t) UINT_MAX + 1, err);
}

CqStatus
cq_sf_geometry_check_scan (const CqSfGeometry * g, uint64_t n_frames,
    CqError * err)
{
  const uint64_t last = n_frames > 0 ? n_frames - 1 : 0;

  /* the pitch and n_views are checked before z_last matters */
  return geometry_check (g, g->n_views > 0 && g->helical_pitch > 0 ?
      cq_sf_source_z (g, last > UINT_MAX ? UINT_MAX : (unsigned) last) : 0,
      err);
}

double
cq_sf_view_angle (const CqSfGeometry * g, unsigned view)
{
  return g->start_angle +
      g->direction * 2.0 * M_PI * (double) (view % g->n_views) / g->n_views;
}

double
cq_sf_source_z (const CqSfGeometry * g, unsigned view)
{
  return g->helical_pitch * view / g->n_views;
}

CqStatus
cq_sf_view_range_check (const CqSfGeometry * g, unsigned first, unsigned n,
    CqError * err)
{
  if (g->helical_pitch > 0 && n > 0 && first > UINT_MAX - (n - 1))
    return cq_error_set (err, CQ_ERROR_INVALID,
        "views %u and %u after it: a helical orbit's view index ends at "
        "%u", first, n - 1, UINT_MAX);
  return CQ_OK;
}

/* The centre of cell i of n cells of size d, the middle one at o. */
static double
centre (unsigned i, unsigned n, double d, double o)
{
  return ((double) i - (n - 1) / 2.0) * d + o;
}

double
cq_sf_voxel_x (const CqSfGeometry * g, unsigned i)
{
  return centre (i, g->nx, g->dx, g->offset_x);
}

double
cq_sf_voxel_y (const CqSfGeometry * g, unsigned j)
{
  return centre (j, g->ny, g->dx, g->offset_y);
}

double
cq_sf_voxel_z (const CqSfGeometry * g, unsigned k)
{
  return centre (k, g->nz, g->dz, g->offset_z);
}

double
cq_sf_cell_s (const CqSfGeometry * g, unsigned u)
{
  return centre (u, g->nu, g->du, g->offset_u);
}

double
cq_sf_cell_t (const CqSfGeometry * g, unsigned v)
{
  return centre (v, g->nv, g->dv, g->offset_v);
}

double
cq_sf_trapezoid_integral (const double tau[4], double lo, double hi)
{
  double sum = 0.0, b1, b2;

  /* rising edge */
  b1 = fmax (lo, tau[0]);
  b2 = fmin (hi, tau[1]);
  if (b2 > b1 && tau[1] > tau[0])
    sum += ((b2 - tau[0]) * (b2 - tau[0]) - (b1 - tau[0]) * (b1 - tau[0])) /
        (2 * (tau[1] - tau[0]));
  /* plateau */
  b1 = fmax (lo, tau[1]);
  b2 = fmin (hi, tau[2]);
  if (b2 > b1)
    sum += b2 - b1;
  /* falling edge */
  b1 = fmax (lo, tau[2]);
  b2 = fmin (hi, tau[3]);
  if (b2 > b1 && tau[3] > tau[2])
    sum += ((tau[3] - b1) * (tau[3] - b1) - (tau[3] - b2) * (tau[3] - b2)) /
        (2 * (tau[3] - tau[2]));
  return sum;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

void
cq_sf_transaxial_taus (const CqSfGeometry * g, double beta, double xc,
    double yc, double tau[4])
{
  const double c = cos (beta), s = sin (beta), h = g->dx / 2;
  int n;

  for (n = 0; n < 4; n++) {
    double x = xc + (n & 1 ? h : -h), y = yc + (n & 2 ? h : -h);
    double p = x * c + y * s, q = -x * s + y * c;

    tau[n] = g->sdd * p / (g->sod - q);
  }
  qsort (tau, 4, sizeof (double), compare_doubles);
}

double
cq_sf_amplitude_phi0 (const CqSfGeometry * g, double beta, double xc, double yc)
{
  const double c = cos (beta), s = sin (beta);
  double p = xc * c + yc * s, q = -xc * s + yc * c;
  double phi = beta + atan (p / (g->sod - q));

  return g->dx / fmax (fabs (cos (phi)), fabs (sin (phi)));
}

double
cq_sf_amplitude_theta (const CqSfGeometry * g, double s, double t)
{
  double d2 = g->sdd * g->sdd;

  return sqrt (s * s + t * t + d2) / sqrt (s * s + d2);
}

double
cq_sf_fov_radius (const CqSfGeometry * g)
{
  const double s_lo = cq_sf_cell_s (g, 0) - g->du / 2;
  const double s_hi = cq_sf_cell_s (g, g->nu - 1) + g->du / 2;
  const double s = fmin (-s_lo, s_hi);

  return s > 0 ? g->sod * s / sqrt (s * s + g->sdd * g->sdd) : 0.0;
}

int
cq_sf_column_in_fov (const CqSfGeometry * g, unsigned i, unsigned j)
{
  const double xc = cq_sf_voxel_x (g, i), yc = cq_sf_voxel_y (g, j);
  const double r = cq_sf_fov_radius (g);

  return !g->fov_mask || xc * xc + yc * yc <= r * r;
}

/* ---- one view's footprints ---- */

/* Detector cells [*lo, *hi] (inclusive; empty when *lo > *hi) that the
 * interval [a, b] on an axis of n cells of pitch d and offset o touches. */
static void
cell_range (double a, double b, unsigned n, double d, double o, int *lo,
    int *hi)
{
  double first = (a - o) / d + (n - 1) / 2.0 + 0.5;
  double last = (b - o) / d + (n - 1) / 2.0 + 0.5;

  *lo = first < 0 ? 0 : first > n ? (int) n : (int) floor (first);
  *hi = last < 0 ? -1 : last >= n ? (int) n - 1 : (int) floor (last);
}

/* Per-thread scratch: F1 of the current column, F2 of the current voxel. */
typedef struct
{
  double *f1, *f2;
} Scratch;

/* The footprint of the voxel column (i, j) in view beta: F1 over cells
 * [*u0, *u1] into f1[0..], and the column's l_φ0 and q_c. Whether it
 * covers any cell. */
static int
column_footprint (const CqSfGeometry * g, double beta, unsigned i,
    unsigned j, double *f1, int *u0, int *u1, double *lphi, double *qc)
{
  const double xc = cq_sf_voxel_x (g, i), yc = cq_sf_voxel_y (g, j);
  double tau[4];
  int u;

  if (!cq_sf_column_in_fov (g, i, j)) {
    *u0 = 0;
    *u1 = -1;
    return 0;
  }
  cq_sf_transaxial_taus (g, beta, xc, yc, tau);
  cell_range (tau[0], tau[3], g->nu, g->du, g->offset_u, u0, u1);
  for (u = *u0; u <= *u1; u++) {
    double s = cq_sf_cell_s (g, u);

    f1[u - *u0] = cq_sf_trapezoid_integral (tau, s - g->du / 2,
        s + g->du / 2) / g->du;
  }
  *lphi = cq_sf_amplitude_phi0 (g, beta, xc, yc);
  *qc = -xc * sin (beta) + yc * cos (beta);
  return *u0 <= *u1;
}

/* F2 of voxel k of a column at depth qc, over cells [*v0, *v1], in a view
 * whose source is at z = zs. */
static void
voxel_footprint (const CqSfGeometry * g, double qc, double zs, unsigned k,
    double *f2, int *v0, int *v1)
{
  const double mag = g->sdd / (g->sod - qc), zc = cq_sf_voxel_z (g, k) - zs;
  const double tm = mag * (zc - g->dz / 2), tp = mag * (zc + g->dz / 2);
  int v;

  cell_range (tm, tp, g->nv, g->dv, g->offset_v, v0, v1);
  for (v = *v0; v <= *v1; v++) {
    double t = cq_sf_cell_t (g, v);
    double w = fmin (t + g->dv / 2, tp) - fmax (t - g->dv / 2, tm);

    f2[v - *v0] = w > 0 ? w / g->dv : 0.0;
  }
}

static void
project_view (const CqSfGeometry * g, const double *vol, unsigned view,
    double *proj, Scratch * sc)
{
  const double beta = cq_sf_view_angle (g, view);
  const double zs = cq_sf_source_z (g, view);
  unsigned i, j, k;
  int u, v, u0, u1, v0, v1;

  memset (proj, 0, sizeof (double) * g->nu * g->nv);
  for (j = 0; j < g->ny; j++)
    for (i = 0; i < g->nx; i++) {
      double lphi, qc;

      if (!column_footprint (g, beta, i, j, sc->f1, &u0, &u1, &lphi, &qc))
        continue;
      for (k = 0; k < g->nz; k++) {
        double f = vol[((size_t) k * g->ny + j) * g->nx + i];

        if (f == 0.0)
          continue;
        voxel_footprint (g, qc, zs, k, sc->f2, &v0, &v1);
        for (v = v0; v <= v1; v++) {
          double fv = f * lphi * sc->f2[v - v0];
          double *row = proj + (size_t) v * g->nu;

          for (u = u0; u <= u1; u++)
            row[u] += fv * sc->f1[u - u0];
        }
      }
    }
  for (v = 0; v < (int) g->nv; v++)
    for (u = 0; u < (int) g->nu; u++)
      proj[(size_t) v * g->nu + u] *= cq_sf_amplitude_theta (g,
          cq_sf_cell_s (g, u), cq_sf_cell_t (g, v));
}

/* The backprojection of views into the voxel rows [j0, j1); the views'
 * cells already scaled by l_θ. */
static void
backproject_rows (const CqSfGeometry * g, const double *scaled,
    unsigned first_view, unsigned n_views, double *vol, unsigned j0,
    unsigned j1, Scratch * sc)
{
  unsigned n, i, j, k;
  int u, v, u0, u1, v0, v1;

  for (n = 0; n < n_views; n++) {
    const double beta = cq_sf_view_angle (g, first_view + n);
    const double zs = cq_sf_source_z (g, first_view + n);
    const double *proj = scaled + (size_t) n * g->nu * g->nv;

    for (j = j0; j < j1; j++)
      for (i = 0; i < g->nx; i++) {
        double lphi, qc;

        if (!column_footprint (g, beta, i, j, sc->f1, &u0, &u1, &lphi,
                &qc))
          continue;
        for (k = 0; k < g->nz; k++) {
          double acc = 0.0;

          voxel_footprint (g, qc, zs, k, sc->f2, &v0, &v1);
          for (v = v0; v <= v1; v++) {
            const double *row = proj + (size_t) v * g->nu;
            double su = 0.0;

            for (u = u0; u <= u1; u++)
              su += sc->f1[u - u0] * row[u];
            acc += sc->f2[v - v0] * su;
          }
          vol[((size_t) k * g->ny + j) * g->nx + i] += lphi * acc;
        }
      }
  }
}

/* ---- jobs on the worker pool ---- */

typedef struct
{
  const CqSfGeometry *g;
  const double *in;
  double *out;
  unsigned first_view, n_views;
  unsigned index, n_threads;
  int backward;
  Scratch sc;
} Job;

static void
job_run (void *user, unsigned index)
{
  Job *job = (Job *) user + index;
  const CqSfGeometry *g = job->g;
  unsigned n;

  if (!job->backward) {
    /* views index, index + n_threads, ... */
    for (n = job->index; n < job->n_views; n += job->n_threads)
      project_view (g, job->in, job->first_view + n,
          job->out + (size_t) n * g->nu * g->nv, &job->sc);
  } else {
    unsigned j0 = (unsigned) ((uint64_t) g->ny * job->index / job->n_threads);
    unsigned j1 =
        (unsigned) ((uint64_t) g->ny * (job->index + 1) / job->n_threads);

    backproject_rows (g, job->in, job->first_view, job->n_views, job->out, j0,
        j1, &job->sc);
  }
}

static CqStatus
run_jobs (const CqSfGeometry * g, const double *in, unsigned first_view,
    unsigned n_views, double *out, unsigned n_threads, int backward,
    CqError * err)
{
  unsigned i;
  Job *jobs;
  CqStatus ret = CQ_OK;

  n_threads = cq_pool_split (n_threads, backward ? g->ny : n_views);
  jobs = calloc (n_threads, sizeof (Job));
  if (!jobs)
    goto oom;
  for (i = 0; i < n_threads; i++) {
    Job job = {.g = g,.in = in,.out = out,.first_view = first_view,
      .n_views = n_views,.index = i,.n_threads = n_threads,
      .backward = backward
    };

    job.sc.f1 = malloc (sizeof (double) * g->nu);
    job.sc.f2 = malloc (sizeof (double) * g->nv);
    jobs[i] = job;              /* its scratch freed below, even on failure */
    if (!job.sc.f1 || !job.sc.f2)
      goto oom;
  }
  cq_pool_run (n_threads, job_run, jobs);
  goto out;

oom:
  ret = cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY,
      "out of host memory for the projector's scratch (%u threads)", n_threads);
out:
  if (jobs)
    for (i = 0; i < n_threads; i++) {
      free (jobs[i].sc.f1);
      free (jobs[i].sc.f2);
    }
  free (jobs);
  return ret;
}

CqStatus
cq_sf_project_cpu (const CqSfGeometry * g, const double *volume,
    unsigned first_view, unsigned n_views, double *proj, unsigned n_threads,
    CqError * err)
{
  if (cq_sf_geometry_check (g, err) != CQ_OK
      || cq_sf_view_range_check (g, first_view, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  return run_jobs (g, volume, first_view, n_views, proj, n_threads, 0, err);
}

CqStatus
cq_sf_backproject_cpu (const CqSfGeometry * g, const double *proj,
    unsigned first_view, unsigned n_views, double *volume, unsigned n_threads,
    CqError * err)
{
  const size_t cells = (size_t) g->nu * g->nv;
  double *scaled;
  CqStatus ret;
  unsigned n, u, v;

  if (cq_sf_geometry_check (g, err) != CQ_OK
      || cq_sf_view_range_check (g, first_view, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  scaled = malloc (sizeof (double) * cells * n_views);
  if (!scaled)
    return cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY,
        "out of host memory for %u views of %ux%u cells", n_views, g->nu,
        g->nv);
  /* Aᵀ applies the cell amplitude first */
  for (n = 0; n < n_views; n++)
    for (v = 0; v < g->nv; v++)
      for (u = 0; u < g->nu; u++) {
        size_t at = n * cells + (size_t) v * g->nu + u;

        scaled[at] = proj[at] * cq_sf_amplitude_theta (g, cq_sf_cell_s (g, u),
            cq_sf_cell_t (g, v));
      }
  memset (volume, 0, sizeof (double) * g->nx * g->ny * g->nz);
  ret = run_jobs (g, scaled, first_view, n_views, volume, n_threads, 1, err);
  free (scaled);
  return ret;
}
