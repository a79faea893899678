/* cudaquality compute library: SF-TR/A2 projector and backprojector on
 * CUDA, the launchers.
 *
 * The volume to project lives in a 3D CUDA array behind a texture object
 * (point sampling, unnormalised coordinates); projections and the
 * backprojected volume in linear device memory. A batch of views is one
 * launch per primary direction; views' cos/sin and the geometry are in
 * constant memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda-private.h"
#include "cq-sfproject.h"
#include "cq-sfproject-kernels.cuh"

struct CqSfCuda
{
  int device;
  CqSfGeometry g;
  cudaStream_t stream;
  cudaArray_t array;
  cudaTextureObject_t tex;
  float *proj;                  /* all views */
  float *scaled;                /* projections scaled for Aᵀ */
  float *vol;                   /* backprojection */
  unsigned batch_views;         /* views of the batch in constant memory */
};

extern "C" void
cq_sf_cuda_free (CqSfCuda * cu)
{
  if (!cu)
    return;
  if (cudaSetDevice (cu->device) == cudaSuccess) {
    if (cu->stream)
      cudaStreamSynchronize (cu->stream);
    if (cu->tex)
      cudaDestroyTextureObject (cu->tex);
    cudaFreeArray (cu->array);
    cudaFree (cu->proj);
    cudaFree (cu->scaled);
    cudaFree (cu->vol);
    if (cu->stream)
      cudaStreamDestroy (cu->stream);
  }
  cudaGetLastError ();
  free (cu);
}

extern "C" CqSfCuda *
cq_sf_cuda_new (int device, const CqSfGeometry * g, CqError * err)
{
  const CqSfGeometry *G = g;
  const size_t cells = (size_t) g->nu * g->nv * g->n_views;
  const size_t voxels = (size_t) g->nx * g->ny * g->nz;
  cudaError_t e;
  const char *what = "cannot select the CUDA device";
  cq::SfConst k;
  CqSfCuda *cu;

  if (cq_sf_geometry_check (g, err) != CQ_OK)
    return NULL;
  cu = (CqSfCuda *) calloc (1, sizeof (*cu));
  if (!cu) {
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory");
    return NULL;
  }
  cu->device = device;
  cu->g = *g;
  k.R = (float) G->sod;
  k.D = (float) G->sdd;
  k.dx = (float) G->dx;
  k.dz = (float) G->dz;
  k.du = (float) G->du;
  k.dv = (float) G->dv;
  k.x0 = (float) cq_sf_voxel_x (G, 0);
  k.y0 = (float) cq_sf_voxel_y (G, 0);
  k.z0 = (float) cq_sf_voxel_z (G, 0);
  k.u0 = (float) cq_sf_cell_s (G, 0);
  k.v0 = (float) cq_sf_cell_t (G, 0);
  k.nx = (int) G->nx;
  k.ny = (int) G->ny;
  k.nz = (int) G->nz;
  k.nu = (int) G->nu;
  k.nv = (int) G->nv;

  e = cudaSetDevice (device);
  if (e == cudaSuccess) {
    what = "cannot create a CUDA stream";
    e = cudaStreamCreateWithFlags (&cu->stream, cudaStreamNonBlocking);
  }
  if (e == cudaSuccess) {
    what = "cannot set the geometry";
    e = cudaMemcpyToSymbol (cq::c_sf, &k, sizeof (k));
  }
  if (e == cudaSuccess) {
    cudaChannelFormatDesc desc = cudaCreateChannelDesc < float >();

    what = "cannot allocate the volume texture";
    e = cudaMalloc3DArray (&cu->array, &desc, make_cudaExtent (G->nx, G->ny,
            G->nz));
  }
  if (e == cudaSuccess) {
    cudaResourceDesc res;
    cudaTextureDesc td;

    memset (&res, 0, sizeof (res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = cu->array;
    memset (&td, 0, sizeof (td));
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] =
        cudaAddressModeBorder;
    td.filterMode = cudaFilterModePoint;        /* weights are computed */
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    e = cudaCreateTextureObject (&cu->tex, &res, &td, NULL);
  }
  if (e == cudaSuccess) {
    what = "cannot allocate the projections";
    e = cudaMalloc ((void **) &cu->proj, cells * sizeof (float));
  }
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &cu->scaled, cells * sizeof (float));
  if (e == cudaSuccess) {
    what = "cannot allocate the backprojected volume";
    e = cudaMalloc ((void **) &cu->vol, voxels * sizeof (float));
  }
  if (e == cudaSuccess)
    e = cudaMemset (cu->vol, 0, voxels * sizeof (float));
  if (e != cudaSuccess) {
    cq_cuda_error (err, e, what);
    cq_sf_cuda_free (cu);
    return NULL;
  }
  return cu;
}

extern "C" CqStatus
cq_sf_cuda_set_volume (CqSfCuda * cu, const float *volume, CqError * err)
{
  cudaMemcpy3DParms m;

  CQ_CUDA_TRY (cudaSetDevice (cu->device), err, "cannot select the device");
  memset (&m, 0, sizeof (m));
  m.srcPtr = make_cudaPitchedPtr ((void *) volume, cu->g.nx * sizeof (float),
      cu->g.nx, cu->g.ny);
  m.dstArray = cu->array;
  m.extent = make_cudaExtent (cu->g.nx, cu->g.ny, cu->g.nz);
  m.kind = cudaMemcpyHostToDevice;
  CQ_CUDA_TRY (cudaMemcpy3DAsync (&m, cu->stream), err,
      "cannot upload the volume");
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "cannot upload the volume");
  return CQ_OK;
}

/* Puts views [first, first + n) of the batch in constant memory; for the
 * projector also the launch order: x-major views first (*n_x of them). */
static CqStatus
set_views (CqSfCuda * cu, unsigned first, unsigned n, unsigned *n_x,
    CqError * err)
{
  static float cs[cq::kSfMaxViews], sn[cq::kSfMaxViews];
  static int order[cq::kSfMaxViews];
  unsigned i, nx = 0, ny = 0;

  for (i = 0; i < n; i++) {
    double b = cq_sf_view_angle (&cu->g, first + i);

    cs[i] = (float) cos (b);
    sn[i] = (float) sin (b);
  }
  /* rays run along (sin β, −cos β): x-major where |sin β| ≥ |cos β| */
  for (i = 0; i < n; i++)
    if (fabsf (sn[i]) >= fabsf (cs[i]))
      order[nx++] = (int) i;
  for (i = 0; i < n; i++)
    if (fabsf (sn[i]) < fabsf (cs[i]))
      order[nx + ny++] = (int) i;
  *n_x = nx;
  CQ_CUDA_TRY (cudaMemcpyToSymbolAsync (cq::c_cos, cs, n * sizeof (float), 0,
          cudaMemcpyHostToDevice, cu->stream), err, "cannot set the views");
  CQ_CUDA_TRY (cudaMemcpyToSymbolAsync (cq::c_sin, sn, n * sizeof (float), 0,
          cudaMemcpyHostToDevice, cu->stream), err, "cannot set the views");
  CQ_CUDA_TRY (cudaMemcpyToSymbolAsync (cq::c_view_slot, order,
          n * sizeof (int), 0, cudaMemcpyHostToDevice, cu->stream), err,
      "cannot set the views");
  /* the static staging above must not change before the copies ran */
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "cannot set the views");
  return CQ_OK;
}

static CqStatus
check_views (CqSfCuda * cu, unsigned n, CqError * err)
{
  if (n == 0 || n > cu->g.n_views || n > (unsigned) cq::kSfMaxViews)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "%u views asked, 1 to %u possible", n,
        cu->g.n_views < (unsigned) cq::kSfMaxViews ? cu->g.n_views :
        (unsigned) cq::kSfMaxViews);
  return CQ_OK;
}

/* Enqueues the projection of views [first, first + n) into cu->proj. */
static CqStatus
enqueue_project (CqSfCuda * cu, unsigned first, unsigned n, CqError * err)
{
  /* 32 cells along u, 8 threads of kSfRows cells along v */
  const dim3 block (32, 8);
  const unsigned gx = (cu->g.nu + 31) / 32;
  const unsigned gy = (cu->g.nv + 8 * cq::kSfRows - 1) / (8 * cq::kSfRows);
  unsigned n_x;
  CqStatus ret = set_views (cu, first, n, &n_x, err);

  if (ret != CQ_OK)
    return ret;
  if (n_x > 0)
    cq::sf_project_kernel < true ><<<dim3 (gx, gy, n_x), block, 0,
        cu->stream>>> (cu->tex, 0, cu->proj);
  if (n > n_x)
    cq::sf_project_kernel < false ><<<dim3 (gx, gy, n - n_x), block, 0,
        cu->stream>>> (cu->tex, (int) n_x, cu->proj);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the projector");
  return CQ_OK;
}

static CqStatus
enqueue_backproject (CqSfCuda * cu, unsigned first, unsigned n,
    CqError * err)
{
  const dim3 block (16, 16);
  unsigned n_x;
  CqStatus ret = set_views (cu, first, n, &n_x, err);

  if (ret != CQ_OK)
    return ret;
  cq::sf_scale_kernel <<<dim3 ((cu->g.nu + 15) / 16, (cu->g.nv + 15) / 16,
          n), block, 0, cu->stream>>> (cu->proj, cu->scaled, (int) n);
  cq::sf_backproject_kernel <<<dim3 ((cu->g.nx + 15) / 16,
          (cu->g.ny + 15) / 16, (cu->g.nz + cq::kSfSlab - 1) / cq::kSfSlab),
      block, 0, cu->stream>>> (cu->scaled, (int) n, cu->vol);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the backprojector");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_project (CqSfCuda * cu, unsigned first_view, unsigned n_views,
    float *proj, CqError * err)
{
  CqStatus ret;

  if (check_views (cu, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_TRY (cudaSetDevice (cu->device), err, "cannot select the device");
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
cq_sf_cuda_backproject (CqSfCuda * cu, const float *proj,
    unsigned first_view, unsigned n_views, float *volume, CqError * err)
{
  CqStatus ret;

  if (check_views (cu, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_TRY (cudaSetDevice (cu->device), err, "cannot select the device");
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
  cudaEvent_t start, stop;
  float total = 0;
  unsigned i;
  CqStatus ret = CQ_OK;

  if (check_views (cu, n, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_TRY (cudaSetDevice (cu->device), err, "cannot select the device");
  CQ_CUDA_TRY (cudaEventCreate (&start), err, "cannot create an event");
  CQ_CUDA_TRY (cudaEventCreate (&stop), err, "cannot create an event");
  for (i = 0; i <= iterations && ret == CQ_OK; i++) {
    float one = 0;

    /* the views' constants go up (synchronously) before each timed run */
    ret = backproject ? enqueue_backproject (cu, 0, n, err) :
        enqueue_project (cu, 0, n, err);
    if (ret != CQ_OK)
      break;
    cudaStreamSynchronize (cu->stream);
    cudaEventRecord (start, cu->stream);
    ret = backproject ? enqueue_backproject (cu, 0, n, err) :
        enqueue_project (cu, 0, n, err);
    cudaEventRecord (stop, cu->stream);
    if (cudaEventSynchronize (stop) != cudaSuccess)
      ret = cq_error_set (err, CQ_ERROR_CUDA, "the timed kernels failed");
    cudaEventElapsedTime (&one, start, stop);
    if (i > 0)
      total += one;
  }
  if (ret == CQ_OK)
    *ms = total / iterations;
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  return ret;
}
