/* cudaquality compute library: SF-TR/A2 projector and backprojector on
 * CUDA, the launchers.
 *
 * The volume to project is kept z-fastest (a voxel column's slices
 * contiguous, what the projector's lanes read together); projections and
 * the backprojected volume are linear device memory in the API's layouts.
 * A batch of views is one launch per primary direction; the geometry goes
 * to the kernels by value, the views' cos/sin, axial offsets (a helical
 * orbit's source z) and launch order through small device arrays of the
 * context, so contexts on other streams never share them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda-private.h"
#include "cq-sfnoise-cuda.h"
#include "cq-sfproject.h"
#include "cq-sfproject-device.h"
#include "cq-sfproject-kernels.cuh"

struct CqSfCuda
{
  CqCudaTarget target;
  CqSfGeometry g;
  cudaStream_t stream;
  float *volz;                  /* the volume to project, z fastest */
  float *proj;                  /* all views */
  float *scaled;                /* projections scaled for Aᵀ */
  float *vol;                   /* backprojection */
  cq::SfConst k;                /* the geometry as the kernels see it */
  float2 *views;                /* (cos β, sin β) of the batch's views */
  float *zlvs;                  /* their axial offsets (SfConst::zlvs) */
  int *slots;                   /* projector launch order: x-major first */
  float2 *views_host;           /* staging of the three above */
  float *zlvs_host;
  int *slots_host;
  unsigned cells;               /* the most cells a footprint touches */
  unsigned proj_rows;           /* detector rows a projector lane */
  int proj_window;              /* rows span under two slices: no walk */
  unsigned char *pixels;        /* one converted view, for host output */
  size_t pixels_pitch;
  int2 *groups;                 /* backprojector warps' 16 columns (x, y) */
  int n_groups;
};

/* The least and the most magnification of the volume: at the voxel
 * corners farthest from and nearest to the source. */
static void
magnifications (const CqSfGeometry * g, double *least, double *most)
{
  const double hx = fmax (fabs (cq_sf_voxel_x (g, 0)),
      fabs (cq_sf_voxel_x (g, g->nx - 1))) + g->dx / 2;
  const double hy = fmax (fabs (cq_sf_voxel_y (g, 0)),
      fabs (cq_sf_voxel_y (g, g->ny - 1))) + g->dx / 2;
  const double corner = sqrt (hx * hx + hy * hy);

  *least = g->sdd / (g->sod + corner);
  *most = g->sdd / (g->sod - corner);
}

/* The most detector cells a column's footprint touches: its widest
 * shadow (the square's diagonal) at the largest magnification. */
static unsigned
cells_a_footprint (const CqSfGeometry * g)
{
  double least, most;

  magnifications (g, &least, &most);
  return (unsigned) ceil (most * g->dx * M_SQRT2 / g->du * 1.01) + 1;
}

/* The most slices a detector row spans (at the least magnification) and
 * the most rows a slice spans (at the largest). */
static double
slices_a_row (const CqSfGeometry * g)
{
  double least, most;

  magnifications (g, &least, &most);
  return g->dv / (least * g->dz);
}

static double
rows_a_slice (const CqSfGeometry * g)
{
  double least, most;

  magnifications (g, &least, &most);
  return most * g->dz / g->dv;
}

/* The backprojector's warps: runs of 16 columns along x of one voxel row,
 * covering in each row the columns the field-of-view mask keeps (all of
 * them without it; with it a column more on each side than the double
 * test says, the kernel's float test deciding), ordered so that a block's
 * eight are neighbours: the same run of eight consecutive rows. Returns
 * the count, groups (malloc'ed) in *out; 0 on out of memory. */
static int
column_groups (const CqSfGeometry * g, int2 ** out)
{
  const double r = cq_sf_fov_radius (g), r2 = r * r * (1.0 + 1e-5);
  const unsigned runs = (g->nx + 15) / 16;
  int *lo = (int *) malloc (g->ny * sizeof (int));
  int *n_runs = (int *) calloc (g->ny, sizeof (int));
  int2 *groups = NULL;
  int n = 0;
  unsigned i, j, j0, k, jj;

  for (j = 0; lo && n_runs && j < g->ny; j++) {
    const double y = cq_sf_voxel_y (g, j);
    int first = -1, last = -1;

    for (i = 0; i < g->nx; i++) {
      const double x = cq_sf_voxel_x (g, i);

      if (!g->fov_mask || x * x + y * y <= r2) {
        if (first < 0)
          first = (int) i;
        last = (int) i;
      }
    }
    if (first < 0)
      continue;
    if (g->fov_mask) {
      first = first > 0 ? first - 1 : 0;
      last = last < (int) g->nx - 1 ? last + 1 : last;
    }
    lo[j] = first;
    n_runs[j] = (last - first) / 16 + 1;
    n += n_runs[j];
  }
  if (lo && n_runs)
    groups = (int2 *) malloc ((n > 0 ? n : 1) * sizeof (int2));
  if (groups) {
    n = 0;
    for (j0 = 0; j0 < g->ny; j0 += 8)
      for (k = 0; k < runs; k++)
        for (jj = j0; jj < j0 + 8 && jj < g->ny; jj++)
          if ((int) k < n_runs[jj])
            groups[n++] = make_int2 (lo[jj] + 16 * (int) k, (int) jj);
  }
  free (lo);
  free (n_runs);
  *out = groups;
  return groups ? n : 0;
}

extern "C" void
cq_sf_cuda_free (CqSfCuda * cu)
{
  if (!cu)
    return;
  free (cu->views_host);
  free (cu->zlvs_host);
  free (cu->slots_host);
  cq_cuda_object_free (cu,[cu]() {
        cudaFree (cu->volz);
        cudaFree (cu->proj);
        cudaFree (cu->scaled);
        cudaFree (cu->vol);
        cudaFree (cu->views);
        cudaFree (cu->zlvs);
        cudaFree (cu->slots);
        cudaFree (cu->pixels);
        cudaFree (cu->groups);
      });
}

extern "C" CqSfCuda *
cq_sf_cuda_new_for (const CqCudaTarget * target, const CqSfGeometry * g,
    CqError * err)
{
  const size_t cells = (size_t) g->nu * g->nv * g->n_views;
  const size_t scaled = (size_t) (g->nu + cq::kSfBackPad) * g->nv *
      g->n_views;
  const size_t voxels = (size_t) g->nx * g->ny * g->nz;
  cudaError_t e;
  const char *what = "cannot select the CUDA device";
  cq::SfConst *k;
  CqSfCuda *cu;

  if (cq_sf_geometry_check (g, err) != CQ_OK
      || !(cu = cq_cuda_object_new < CqSfCuda > (target, err)))
    return NULL;
  cu->g = *g;
  k = &cu->k;
  k->R = (float) g->sod;
  k->D = (float) g->sdd;
  k->dx = (float) g->dx;
  k->dz = (float) g->dz;
  k->du = (float) g->du;
  k->dv = (float) g->dv;
  k->x0 = (float) cq_sf_voxel_x (g, 0);
  k->y0 = (float) cq_sf_voxel_y (g, 0);
  k->u0 = (float) cq_sf_cell_s (g, 0);
  k->v0 = (float) cq_sf_cell_t (g, 0);
  k->ul0 = (float) (cq_sf_cell_s (g, 0) - g->du / 2);
  k->idu = (float) (1.0 / g->du);
  cu->cells = cells_a_footprint (g);
  /* a lane's rows: the fewest that cover the detector in one block row,
   * at most 4 (registers); CQ_SF_PROJ_ROWS overrides, for measurements */
  cu->proj_rows = g->nv <= (unsigned) cq::kSfProjThreads ? 1 :
      g->nv <= 2u * cq::kSfProjThreads ? 2 : 4;
  /* the smallest magnification is at the corner farthest from the source;
   * CQ_SF_PROJ_WALK=1 walks anyway, for measurements */
  cu->proj_window = slices_a_row (g) < 1.99 && !getenv ("CQ_SF_PROJ_WALK");
  if (getenv ("CQ_SF_PROJ_ROWS"))
    cu->proj_rows = (unsigned) atoi (getenv ("CQ_SF_PROJ_ROWS"));
  k->rc = (int) (g->nv / 2);
  k->dzv = (float) (g->dz / g->dv);
  k->zlv = (float) ((cq_sf_voxel_z (g, 0) - g->dz / 2) / g->dv);
  k->vcv = (float) ((cq_sf_cell_t (g, 0) - g->dv / 2) / g->dv + k->rc);
  k->fov_r2 = g->fov_mask ? (float) (cq_sf_fov_radius (g) *
      cq_sf_fov_radius (g)) : -1.0f;
  k->nx = (int) g->nx;
  k->ny = (int) g->ny;
  k->nz = (int) g->nz;
  k->nu = (int) g->nu;
  k->nv = (int) g->nv;
  k->bpitch = (int) g->nu + cq::kSfBackPad;
  cu->views_host = (float2 *) malloc (cq::kSfMaxViews * sizeof (float2));
  cu->zlvs_host = (float *) malloc (cq::kSfMaxViews * sizeof (float));
  cu->slots_host = (int *) malloc (cq::kSfMaxViews * sizeof (int));
  if (!cu->views_host || !cu->zlvs_host || !cu->slots_host) {
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory");
    cq_sf_cuda_free (cu);
    return NULL;
  }

  CqCudaScope scope (cu->target);
  e = scope.enter ();
  if (e == cudaSuccess) {
    what = "cannot create a CUDA stream";
    e = cudaStreamCreateWithFlags (&cu->stream, cudaStreamNonBlocking);
  }
  if (e == cudaSuccess) {
    what = "cannot allocate the views";
    e = cudaMalloc ((void **) &cu->views, cq::kSfMaxViews * sizeof (float2));
  }
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &cu->zlvs, cq::kSfMaxViews * sizeof (float));
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &cu->slots, cq::kSfMaxViews * sizeof (int));
  if (e == cudaSuccess) {
    what = "cannot allocate the volume";
    e = cudaMalloc ((void **) &cu->volz, voxels * sizeof (float));
  }
  /* on the object's stream: the legacy default stream does not order
   * against a non-blocking one, and a zeroing left there could land after
   * the first set_volume */
  if (e == cudaSuccess)
    e = cudaMemsetAsync (cu->volz, 0, voxels * sizeof (float), cu->stream);
  if (e == cudaSuccess) {
    what = "cannot allocate the projections";
    e = cudaMalloc ((void **) &cu->proj, cells * sizeof (float));
  }
  /* the padding zero for good */
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &cu->scaled, scaled * sizeof (float));
  if (e == cudaSuccess)
    e = cudaMemsetAsync (cu->scaled, 0, scaled * sizeof (float), cu->stream);
  if (e == cudaSuccess) {
    what = "cannot allocate the backprojected volume";
    e = cudaMalloc ((void **) &cu->vol, voxels * sizeof (float));
  }
  if (e == cudaSuccess)
    e = cudaMemsetAsync (cu->vol, 0, voxels * sizeof (float), cu->stream);
  if (e == cudaSuccess) {
    int2 *groups = NULL;

    what = "cannot allocate the backprojector's column groups";
    cu->n_groups = column_groups (g, &groups);
    e = !groups ? cudaErrorMemoryAllocation : cudaMalloc ((void **)
        &cu->groups, (cu->n_groups + 1) * sizeof (int2));
    /* staged before the call returns (pageable source) */
    if (e == cudaSuccess)
      e = cudaMemcpyAsync (cu->groups, groups, cu->n_groups * sizeof (int2),
          cudaMemcpyHostToDevice, cu->stream);
    free (groups);
  }
  if (e == cudaSuccess)
    e = cudaStreamSynchronize (cu->stream);
  if (e != cudaSuccess) {
    cq_cuda_error (err, e, what);
    cq_sf_cuda_free (cu);
    return NULL;
  }
  k->zlvs = cu->zlvs;
  return cu;
}

/* The volume at src (device, x fastest) into the projector's z-fastest
 * copy, on the object's stream (context entered by the caller). */
static CqStatus
reorder_volume (CqSfCuda * cu, const float *src, CqError * err)
{
  cq::sf_zfirst_kernel <<<dim3 ((cu->g.nx + 31) / 32, (cu->g.nz + 31) / 32,
          cu->g.ny), dim3 (32, 8), 0, cu->stream>>> (cu->k, src, cu->volz);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot reorder the volume");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_set_volume (CqSfCuda * cu, const float *volume, CqError * err)
{
  const size_t voxels = (size_t) cu->g.nx * cu->g.ny * cu->g.nz;
  CqStatus ret;

  CQ_CUDA_ENTER (cu->target, err);
  /* up into the backprojection buffer, then reordered z-fastest */
  CQ_CUDA_TRY (cudaMemcpyAsync (cu->vol, volume, voxels * sizeof (float),
          cudaMemcpyHostToDevice, cu->stream), err,
      "cannot upload the volume");
  ret = reorder_volume (cu, cu->vol, err);
  if (ret != CQ_OK)
    return ret;
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "cannot upload the volume");
  return CQ_OK;
}

/* Puts views [first, first + n) of the batch on the device: (cos β, sin β)
 * and the axial offset zl0 / dv, zl0 the lower edge of slice 0 less the
 * source's z (in double, rounded once: the same float in both kernels);
 * for the projector also the launch order: x-major views first (*n_x of
 * them). Copies from pageable memory are staged before the call returns,
 * so the host arrays may be refilled for the next batch at once. */
static CqStatus
set_views (CqSfCuda * cu, unsigned first, unsigned n, unsigned *n_x,
    CqError * err)
{
  unsigned i, nx = 0, ny = 0;

  for (i = 0; i < n; i++) {
    double b = cq_sf_view_angle (&cu->g, first + i);

    cu->views_host[i] = make_float2 ((float) cos (b), (float) sin (b));
    cu->zlvs_host[i] = (float) ((cq_sf_voxel_z (&cu->g, 0) - cu->g.dz / 2 -
            cq_sf_source_z (&cu->g, first + i)) / cu->g.dv);
  }
  /* rays run along (sin β, −cos β): x-major where |sin β| ≥ |cos β| */
  for (i = 0; i < n; i++)
    if (fabsf (cu->views_host[i].y) >= fabsf (cu->views_host[i].x))
      cu->slots_host[nx++] = (int) i;
  for (i = 0; i < n; i++)
    if (fabsf (cu->views_host[i].y) < fabsf (cu->views_host[i].x))
      cu->slots_host[nx + ny++] = (int) i;
  *n_x = nx;
  CQ_CUDA_TRY (cudaMemcpyAsync (cu->views, cu->views_host,
          n * sizeof (float2), cudaMemcpyHostToDevice, cu->stream), err,
      "cannot set the views");
  CQ_CUDA_TRY (cudaMemcpyAsync (cu->zlvs, cu->zlvs_host, n * sizeof (float),
          cudaMemcpyHostToDevice, cu->stream), err, "cannot set the views");
  CQ_CUDA_TRY (cudaMemcpyAsync (cu->slots, cu->slots_host, n * sizeof (int),
          cudaMemcpyHostToDevice, cu->stream), err, "cannot set the views");
  return CQ_OK;
}

static CqStatus
check_views (CqSfCuda * cu, unsigned first, unsigned n, CqError * err)
{
  if (n == 0 || n > cu->g.n_views || n > (unsigned) cq::kSfMaxViews)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "%u views asked, 1 to %u possible", n,
        cu->g.n_views < (unsigned) cq::kSfMaxViews ? cu->g.n_views :
        (unsigned) cq::kSfMaxViews);
  return cq_sf_view_range_check (&cu->g, first, n, err);
}

/* Enqueues the projection of views [first, first + n) into cu->proj, x-
 * and y-major views in one launch. A block stages its columns once for
 * all its rows: the fewest rows a lane that cover the detector in one
 * block row. */
template < int ROWS > static void
launch_project (CqSfCuda * cu, unsigned n, unsigned n_x)
{
  const unsigned rows = cq::kSfProjThreads * ROWS;
  const dim3 grid ((cu->g.nu + cq::kSfStrip - 1) / cq::kSfStrip,
      (cu->g.nv + rows - 1) / rows, n);

  if (cu->g.helical_pitch > 0)
    cq::sf_project_kernel < ROWS, true ><<<grid, cq::kSfProjThreads, 0,
        cu->stream>>> (cu->k, cu->views, cu->slots, cu->volz, (int) n_x,
        cu->proj_window, cu->proj);
  else
    cq::sf_project_kernel < ROWS, false ><<<grid, cq::kSfProjThreads, 0,
        cu->stream>>> (cu->k, cu->views, cu->slots, cu->volz, (int) n_x,
        cu->proj_window, cu->proj);
}

static CqStatus
enqueue_project (CqSfCuda * cu, unsigned first, unsigned n, CqError * err)
{
  unsigned n_x;
  CqStatus ret = set_views (cu, first, n, &n_x, err);

  if (ret != CQ_OK)
    return ret;
  if (cu->proj_rows == 1)
    launch_project < 1 > (cu, n, n_x);
  else if (cu->proj_rows == 2)
    launch_project < 2 > (cu, n, n_x);
  else
    launch_project < 4 > (cu, n, n_x);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the projector");
  return CQ_OK;
}

template < int CELLS > static void
launch_backproject (CqSfCuda * cu, dim3 grid, dim3 block, unsigned n)
{
  const double rows = rows_a_slice (&cu->g);

  /* CQ_SF_BACK_WALK=1 takes the walk anyway, for measurements; the
   * window's floors need slice edges under 2^22 rows from row rc */
  if (rows < 1.99 && cu->g.nz * rows + cu->g.nv < (double) (1 << 21)
      && !getenv ("CQ_SF_BACK_WALK")) {
    const int slots = (int) ceil (cq::kSfBackSlab * rows) +
        cq::kSfBackWindow + 2;
    const size_t smem = sizeof (double) * cq::kSfBackSlab *
        cq::kSfBackThreads + sizeof (float) * slots * cq::kSfBackThreads;

    /* a warp: a group of 16 columns along x, two slabs of each; the
     * columns no group holds (outside the field of view) are zero */
    if (cu->g.fov_mask)
      cudaMemsetAsync (cu->vol, 0, sizeof (float) * cu->g.nx * cu->g.ny *
          cu->g.nz, cu->stream);
    cudaFuncSetAttribute (cq::sf_backproject_kernel < CELLS >,
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
    cq::sf_backproject_kernel < CELLS ><<<dim3 ((cu->n_groups + block.y -
                1) / block.y, 1, (cu->g.nz + 2 * cq::kSfBackSlab - 1) /
            (2 * cq::kSfBackSlab)), block, smem, cu->stream>>> (cu->k,
        cu->views, cu->scaled, (int) n, slots, cu->groups, cu->n_groups,
        cu->vol);
  } else {
    cq::sf_backproject_walk_kernel < CELLS ><<<grid, block, 0,
        cu->stream>>> (cu->k, cu->views, cu->scaled, (int) n, cu->vol);
  }
}

static CqStatus
enqueue_backproject (CqSfCuda * cu, unsigned first, unsigned n,
    CqError * err)
{
  const dim3 block (32, cq::kSfBackThreads / 32);
  const dim3 grid ((cu->g.nx + 31) / 32, (cu->g.ny + block.y - 1) / block.y,
      (cu->g.nz + cq::kSfBackSlab - 1) / cq::kSfBackSlab);
  unsigned n_x;
  CqStatus ret = set_views (cu, first, n, &n_x, err);

  if (ret != CQ_OK)
    return ret;
  cq::sf_scale_kernel <<<dim3 ((cu->g.nu + 15) / 16, (cu->g.nv + 15) / 16,
          n), dim3 (16, 16), 0, cu->stream>>> (cu->k, cu->proj, cu->scaled,
      (int) n);
  /* the fewest F1 registers that hold every footprint (wider ones are
   * computed on the way); slices under two rows tall take the window */
  if (cu->cells <= 3)
    launch_backproject < 3 > (cu, grid, block, n);
  else
    launch_backproject < 4 > (cu, grid, block, n);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the backprojector");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_project (CqSfCuda * cu, unsigned first_view, unsigned n_views,
    float *proj, CqError * err)
{
  CqStatus ret;

  if (check_views (cu, first_view, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  ret = enqueue_project (cu, first_view, n_views, err);
  if (ret != CQ_OK)
    return ret;
  CQ_CUDA_TRY (cudaMemcpyAsync (proj, cu->proj, sizeof (float) * n_views *
          cu->g.nu * cu->g.nv, cudaMemcpyDeviceToHost, cu->stream), err,
      "cannot download the projections");
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "the projector failed");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_project_keep (CqSfCuda * cu, unsigned first_view,
    unsigned n_views, CqError * err)
{
  if (check_views (cu, first_view, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  return enqueue_project (cu, first_view, n_views, err);
}

/* View `index` of the kept batch to pixels at dst, through the noise
 * kernel when nz asks for noise on counts, else the plain conversion. */
static CqStatus
convert_pixels (CqSfCuda * cu, unsigned index, const CqSfPixels * px,
    const CqSfNoise * nz, void *dst, size_t pitch, int dst_on_device,
    CqError * err)
{
  const size_t row_bytes = (size_t) cu->g.nu * px->bytes;
  const float *li = cu->proj + (size_t) index * cu->g.nu * cu->g.nv;
  unsigned char *out = (unsigned char *) dst;
  size_t out_pitch = pitch;

  if (index >= cu->g.n_views || index >= (unsigned) cq::kSfMaxViews
      || (px->bytes != 1 && px->bytes != 2) || pitch < row_bytes)
    return cq_error_set (err, CQ_ERROR_INVALID, "view %u, %u bytes a pixel, "
        "pitch %zu: not a kept view or a row of %u pixels", index,
        px->bytes, pitch, cu->g.nu);
  CQ_CUDA_ENTER (cu->target, err);
  if (!dst_on_device) {
    if (!cu->pixels)
      CQ_CUDA_TRY (cudaMallocPitch ((void **) &cu->pixels, &cu->pixels_pitch,
              (size_t) cu->g.nu * 2, cu->g.nv), err,
          "cannot allocate the pixel staging");
    out = cu->pixels;
    out_pitch = cu->pixels_pitch;
  }
  if (nz && px->counts && cq_sf_noise_active (nz)) {
    CQ_CUDA_TRY (cq_sf_noise_cuda_launch (cu->stream, li, cu->g.nu,
            cu->g.nv, px, nz, out, out_pitch), err,
        "cannot launch the noise kernel");
  } else {
    cq::sf_pixels_kernel <<<dim3 ((cu->g.nu + 31) / 32, (cu->g.nv + 7) / 8),
        dim3 (32, 8), 0, cu->stream>>> (li, (int) cu->g.nu, (int) cu->g.nv,
        *px, out, out_pitch);
    CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the pixel kernel");
  }
  if (!dst_on_device)
    CQ_CUDA_TRY (cudaMemcpy2DAsync (dst, pitch, out, out_pitch, row_bytes,
            cu->g.nv, cudaMemcpyDeviceToHost, cu->stream), err,
        "cannot download the pixels");
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "the pixel conversion failed");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_pixels (CqSfCuda * cu, unsigned index, const CqSfPixels * px,
    void *dst, size_t pitch, int dst_on_device, CqError * err)
{
  return convert_pixels (cu, index, px, NULL, dst, pitch, dst_on_device,
      err);
}

extern "C" CqStatus
cq_sf_cuda_backproject (CqSfCuda * cu, const float *proj,
    unsigned first_view, unsigned n_views, float *volume, CqError * err)
{
  CqStatus ret;

  if (check_views (cu, first_view, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  CQ_CUDA_TRY (cudaMemcpyAsync (cu->proj, proj, sizeof (float) * n_views *
          cu->g.nu * cu->g.nv, cudaMemcpyHostToDevice, cu->stream), err,
      "cannot upload the projections");
  ret = enqueue_backproject (cu, first_view, n_views, err);
  if (ret != CQ_OK)
    return ret;
  CQ_CUDA_TRY (cudaMemcpyAsync (volume, cu->vol, sizeof (float) * cu->g.nx *
          cu->g.ny * cu->g.nz, cudaMemcpyDeviceToHost, cu->stream), err,
      "cannot download the volume");
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "the backprojector failed");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_time (CqSfCuda * cu, int backproject, unsigned iterations,
    double *ms, CqError * err)
{
  const unsigned n = cu->g.n_views;
  float total = 0;
  CqStatus ret;

  if (check_views (cu, 0, n, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  /* a warm-up, then the runs back to back (views' uploads included) */
  ret = cq_cuda_time (cu->stream, iterations,[&]() {
        return backproject ? enqueue_backproject (cu, 0, n, err) :
            enqueue_project (cu, 0, n, err);
      }, &total, err);
  if (ret == CQ_OK)
    *ms = total / iterations;
  return ret;
}

/* ---- the pixels of a kept view with noise, and device-resident access
 * (cq-sfproject-device.h) for the library's own iterative
 * reconstruction ---- */

extern "C" CqStatus
cq_sf_cuda_pixels_noise (CqSfCuda * cu, unsigned index, const CqSfPixels * px,
    const CqSfNoise * nz, void *dst, size_t pitch, int dst_on_device,
    CqError * err)
{
  return convert_pixels (cu, index, px, nz, dst, pitch, dst_on_device, err);
}

extern "C" CqStatus
cq_sf_cuda_set_volume_device (CqSfCuda * cu, const float *volume,
    CqError * err)
{
  CQ_CUDA_ENTER (cu->target, err);
  return reorder_volume (cu, volume, err);
}

extern "C" CqStatus
cq_sf_cuda_backproject_keep (CqSfCuda * cu, unsigned first_view,
    unsigned n_views, CqError * err)
{
  if (check_views (cu, first_view, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  return enqueue_backproject (cu, first_view, n_views, err);
}

extern "C" float *
cq_sf_cuda_device_projections (CqSfCuda * cu)
{
  return cu->proj;
}

extern "C" float *
cq_sf_cuda_device_volume (CqSfCuda * cu)
{
  return cu->vol;
}

extern "C" void *
cq_sf_cuda_stream (CqSfCuda * cu)
{
  return (void *) cu->stream;
}
