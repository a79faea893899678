/* cudaquality compute library: the Separable Footprint (SF-TR, A2)
 * cone-beam projector and its matched backprojector (Long, Fessler, Balter,
 * IEEE TMI 29(11), 2010; seed 000). Definitions:
 * ../shared/docs/references.md and docs/sf-projector.md.
 *
 * Coordinates in mm. The rotation axis is z; view angle β rotates the
 * source around it: p = x cos β + y sin β, q = −x sin β + y cos β, the source
 * at q = R (R = source-origin distance), the flat detector at q = R − D
 * (D = source-detector distance), detector coordinate s along p and t along
 * z, both measured on the detector; on a helical orbit the source and the
 * detector rise along z from view to view (cq_sf_source_z). Volumes are x
 * fastest, then y, then z; projections u (s) fastest, then v (t), then
 * view.
 *
 * This file holds the CPU implementation in double precision (voxel-driven,
 * Long 2010's splatting form), the oracle for the GPU kernels.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SFPROJECT_H
#define CQ_SFPROJECT_H

#include "cq-common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  /* volume: nx × ny × nz voxels of dx × dx × dz mm, centred on the rotation
   * axis plus an offset */
  unsigned nx, ny, nz;
  double dx, dz;
  double offset_x, offset_y, offset_z;
  /* detector: nu × nv cells of du × dv mm, centred on the central ray plus
   * an offset */
  unsigned nu, nv;
  double du, dv;
  double offset_u, offset_v;
  double sdd;                   /* D: source to detector, mm */
  double sod;                   /* R: source to rotation axis, mm */
  /* views: n_views per rotation, uniformly over 2π from start_angle, turning
   * with direction +1 (counter-clockwise seen from +z) or −1 */
  unsigned n_views;
  double start_angle;
  int direction;
  /* helical orbit: the source, and the detector with it, advances
   * helical_pitch mm along +z per rotation: view k (no wrapping: views
   * past n_views go on along the helix) sits at z = pitch · k / n_views,
   * view 0 at z = 0 (cq_sf_source_z). 0 = circular; finite and >= 0. */
  double helical_pitch;
  /* field-of-view mask: voxel columns whose centre lies outside the
   * cylinder every view sees (cq_sf_fov_radius) are zero in both
   * directions: neither projected nor backprojected into */
  int fov_mask;
} CqSfGeometry;

/* An impossible geometry (D ≤ R, the source inside the volume's bounding
 * cylinder, no views, an empty volume or detector, non-positive sizes, a
 * negative or non-finite helical pitch, a volume that no view sees) is
 * CQ_ERROR_INVALID with a message naming the values. A helical orbit
 * counts every view index (0 to 4294967295) as a view. */
CqStatus cq_sf_geometry_check (const CqSfGeometry * g, CqError * err);

/* cq_sf_geometry_check for a scan of views [0, n_frames) (n_frames >= 1):
 * a helical orbit whose rows have not reached the volume by view
 * n_frames − 1 is refused too, naming the z the scan covers. */
CqStatus cq_sf_geometry_check_scan (const CqSfGeometry * g,
    uint64_t n_frames, CqError * err);

/* The radius of the cylinder around the rotation axis that every view
 * sees whole: the fan's edge rays pass the axis at R·s/√(s² + D²) for the
 * detector's edges s (cell edges, offset included); the nearer edge
 * bounds it. 0 when the detector does not straddle the central ray. */
double cq_sf_fov_radius (const CqSfGeometry * g);

/* Whether voxel column (i, j) is projected at all: always without the
 * mask, else when its centre lies within cq_sf_fov_radius of the axis. */
int cq_sf_column_in_fov (const CqSfGeometry * g, unsigned i, unsigned j);

/* β of view (any index: the angle wraps around the rotation, for a
 * helical orbit too). */
double cq_sf_view_angle (const CqSfGeometry * g, unsigned view);

/* Views [first_view, first_view + n_views) of a helical orbit must not
 * pass the last view index, 4294967295 (they would wrap back to z = 0):
 * CQ_ERROR_INVALID naming them. Any range of a circular orbit is fine. */
CqStatus cq_sf_view_range_check (const CqSfGeometry * g, unsigned first_view,
    unsigned n_views, CqError * err);

/* z of the source (and of the detector's centre, offset_v aside) in view,
 * mm: helical_pitch · view / n_views, 0 for a circular orbit. The view
 * sees the volume as a circular one sees it lowered by that much. */
double cq_sf_source_z (const CqSfGeometry * g, unsigned view);

/* Centres of voxel column i / row j / slice k and of detector cell u / v. */
double cq_sf_voxel_x (const CqSfGeometry * g, unsigned i);
double cq_sf_voxel_y (const CqSfGeometry * g, unsigned j);
double cq_sf_voxel_z (const CqSfGeometry * g, unsigned k);
double cq_sf_cell_s (const CqSfGeometry * g, unsigned u);
double cq_sf_cell_t (const CqSfGeometry * g, unsigned v);

/* ---- the footprint pieces (exposed for tests) ---- */

/* ∫ over [lo, hi] of the trapezoid that rises on [tau[0], tau[1]], is 1 on
 * [tau[1], tau[2]] and falls on [tau[2], tau[3]] (tau sorted): r_s·F1 of a
 * cell [lo, hi]. */
double cq_sf_trapezoid_integral (const double tau[4], double lo, double hi);

/* The sorted transaxial footprint corners τ0..τ3 of the voxel column centred
 * at (xc, yc) in view β. */
void cq_sf_transaxial_taus (const CqSfGeometry * g, double beta, double xc,
    double yc, double tau[4]);

/* A2's transaxial amplitude l_φ0 = Δ / max(|cos φ0|, |sin φ0|),
 * φ0 = β + atan(p_c / (R − q_c)), for the column centred at (xc, yc). */
double cq_sf_amplitude_phi0 (const CqSfGeometry * g, double beta, double xc,
    double yc);

/* The cell amplitude l_θ(s, t) = √(s² + t² + D²) / √(s² + D²). */
double cq_sf_amplitude_theta (const CqSfGeometry * g, double s, double t);

/* ---- CPU projector / backprojector, double precision ---- */

/* proj[view][v][u] for views [first_view, first_view + n_views) (indices
 * wrap around the rotation; on a helical orbit they go on along the helix
 * and first_view + n_views − 1 must not pass 4294967295); volume
 * nx·ny·nz. n_threads 0 = one per online CPU. */
CqStatus cq_sf_project_cpu (const CqSfGeometry * g, const double *volume,
    unsigned first_view, unsigned n_views, double *proj, unsigned n_threads,
    CqError * err);

/* volume = Aᵀ proj, the exact transpose of cq_sf_project_cpu over the same
 * views (volume is overwritten). */
CqStatus cq_sf_backproject_cpu (const CqSfGeometry * g, const double *proj,
    unsigned first_view, unsigned n_views, double *volume, unsigned n_threads,
    CqError * err);

/* ---- CUDA: float32, the seed's GPU design ----
 * Projector ray-driven (a thread per detector cell and view, two kernels by
 * the rays' primary direction, the volume in a 3D texture read with point
 * sampling, geometry as a kernel parameter, every view of a batch in one
 * launch); backprojector voxel-driven (a thread per voxel column and slab,
 * the views looped inside). Both evaluate the footprints with the same
 * device functions, so the pair is matched. */

typedef struct CqSfCuda CqSfCuda;

/* Device buffers for the geometry's volume and its views (a launch's:
 * all of them, at most 2048), or, where they do not fit the device's free
 * memory, the buffers to stream the volume through in z-slabs (below). */
CqSfCuda *cq_sf_cuda_new (int device, const CqSfGeometry * g, CqError * err);
/* The same where target says (a framework's context and its hooks). */
CqSfCuda *cq_sf_cuda_new_for (const CqCudaTarget * target,
    const CqSfGeometry * g, CqError * err);

typedef struct
{
  /* bytes of memory each device may use for the volume, the projections
   * and their scratch (what the library allocates; the runtime's own
   * context memory aside); 0 = what the device has free, less 256 MiB */
  size_t device_memory_limit;
} CqSfCudaOptions;

/* On n_targets devices (targets[0] first: where cq_sf_cuda_pixels puts
 * frames that are device memory; a device may come twice), with options
 * (NULL: defaults). Each device holds the volume and a batch of views
 * ("resident") if they fit its budget, else streams the volume through
 * in z-slabs from pinned host memory ("streamed"; plans chosen here from
 * the geometry and the budget, cq_sf_cuda_describe says which).
 * The projector splits a call's views between the devices: each view is
 * projected whole on one device, so results do not depend on the number
 * of devices. The backprojector splits the volume into z-zones, each
 * device backprojecting all views into its zone: nothing is summed
 * across devices, so results do not depend on it either.
 * Streamed, the projector adds the z-slabs' shares of each ray in float
 * (in ascending order: deterministic, within the float summation error
 * of the unsplit sum, docs/sf-projector.md); the backprojector computes
 * each voxel as the resident one does (bit for bit) unless a slab's
 * band of all views does not fit, when view batches are summed in float.
 * Device memory that no projector plan fits is CQ_ERROR_OUT_OF_MEMORY
 * naming the sizes, the budget and the device (a backprojector that no
 * plan fits fails so when called: a source never calls it), and so is
 * pinned host memory that cannot be had for the volume to stream. */
CqSfCuda *cq_sf_cuda_new_multi (const CqCudaTarget * targets,
    unsigned n_targets, const CqSfGeometry * g,
    const CqSfCudaOptions * options, CqError * err);
/* Devices the work is split over. */
unsigned cq_sf_cuda_n_devices (const CqSfCuda * cuda);
/* The plan of each device, in words (for logs and benchmarks). */
void cq_sf_cuda_describe (const CqSfCuda * cuda, char *buf, size_t len);
/* The most views a cq_sf_cuda_project_keep may take. */
unsigned cq_sf_cuda_keep_views (const CqSfCuda * cuda);
/* Views a pass over the volume's z-slabs serves: a source that projects
 * view after view does best to keep that many at a time (one pass over
 * the slabs a batch); 0 when every device holds the whole volume (any
 * batch is as good). */
unsigned cq_sf_cuda_batch_views (const CqSfCuda * cuda);
/* The volume to project (nx·ny·nz floats, x fastest): onto the devices
 * that hold it, into pinned host memory for those that stream it. */
CqStatus cq_sf_cuda_set_volume (CqSfCuda * cuda, const float *volume,
    CqError * err);
/* Projects views [first_view, first_view + n_views) (indices as for
 * cq_sf_project_cpu; n_views <= the geometry's) and copies them to proj on
 * the host. */
CqStatus cq_sf_cuda_project (CqSfCuda * cuda, unsigned first_view,
    unsigned n_views, float *proj, CqError * err);
/* How line integrals become detector pixels (cudasfproject's formats):
 * counts: x = photons·exp(−mu_scale·L), times 255/photons for 8-bit;
 * line integral: x = mu_scale·L / integral_scale; then clamp (round (x),
 * 0, levels), stored in `bytes` (1 or 2, little-endian) per pixel. */
typedef struct
{
  int counts;
  double photons, mu_scale, integral_scale, levels;
  unsigned bytes;
} CqSfPixels;

/* Projects views [first_view, first_view + n_views) and keeps them on the
 * devices for cq_sf_cuda_pixels (nothing comes back to the host);
 * n_views at most cq_sf_cuda_keep_views. Enqueued on every device: returns
 * before the projections are done (cq_sf_cuda_pixels waits for them). */
CqStatus cq_sf_cuda_project_keep (CqSfCuda * cuda, unsigned first_view,
    unsigned n_views, CqError * err);
/* Converts view `index` of the kept batch into pixels at dst (pitch bytes a
 * row): device memory of the current context when dst_on_device, else host
 * memory (the 8/16-bit frame is what crosses PCIe). Returns when dst is
 * complete. */
CqStatus cq_sf_cuda_pixels (CqSfCuda * cuda, unsigned index,
    const CqSfPixels * px, void *dst, size_t pitch, int dst_on_device,
    CqError * err);
/* volume = Aᵀ proj for the same views, host in and out. */
CqStatus cq_sf_cuda_backproject (CqSfCuda * cuda, const float *proj,
    unsigned first_view, unsigned n_views, float *volume, CqError * err);
/* For benchmarks: mean GPU time in ms of projecting (backproject = 0) or
 * backprojecting all views of the geometry, data already on the GPU (the
 * volume resident on every device: CQ_ERROR_INVALID where it streams);
 * on several devices the slowest device's time, all running at once. */
CqStatus cq_sf_cuda_time (CqSfCuda * cuda, int backproject,
    unsigned iterations, double *ms, CqError * err);
void cq_sf_cuda_free (CqSfCuda * cuda);

#ifdef __cplusplus
}
#endif
#endif /* CQ_SFPROJECT_H */
