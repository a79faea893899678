/* cudaquality compute library: SIRT on CUDA (float32). The projector's
 * device-resident calls (cq-sfproject-device.h) do A and Aᵀ on its stream;
 * the rest is three elementwise kernels on the same stream, so one
 * iteration is
 *
 *   x → the projector's volume, proj = A x, proj = (b − proj)·R, vol = Aᵀ proj,
 *   x = x + λ·C·vol (clamped at 0 if asked)
 *
 * with nothing crossing PCIe.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include "cq-cuda-private.h"
#include "cq-sfproject-device.h"
#include "cq-sirt.h"

struct CqSirtCuda
{
  CqCudaTarget target;
  CqSfGeometry g;
  CqSirtParams p;
  CqSfCuda *sf;
  cudaStream_t stream;          /* the projector's: freed with it */
  size_t cells, voxels;
  float *b, *r, *c, *x;
};

namespace cq
{

__global__ void
sirt_fill_kernel (float *v, size_t n, float value)
{
  size_t i;

  for (i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
      i += (size_t) gridDim.x * blockDim.x)
    v[i] = value;
}

/* dst = 1/src where src > 0, else 0 */
__global__ void
sirt_invert_kernel (const float *src, float *dst, size_t n)
{
  size_t i;

  for (i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
      i += (size_t) gridDim.x * blockDim.x)
    dst[i] = src[i] > 0.0f ? 1.0f / src[i] : 0.0f;
}

/* proj = (b − proj)·R */
__global__ void
sirt_residual_kernel (const float *b, const float *r, float *proj, size_t n)
{
  size_t i;

  for (i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
      i += (size_t) gridDim.x * blockDim.x)
    proj[i] = (b[i] - proj[i]) * r[i];
}

/* x = x + λ·C·back, clamped at 0 if asked */
__global__ void
sirt_update_kernel (float *x, const float *c, const float *back, size_t n,
    float lambda, int nonnegative)
{
  size_t i;

  for (i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
      i += (size_t) gridDim.x * blockDim.x) {
    float v = x[i] + lambda * c[i] * back[i];

    x[i] = nonnegative && v < 0.0f ? 0.0f : v;
  }
}

}                               /* namespace cq */

/* enough blocks of 256 to fill the GPU, a grid-stride loop for the rest */
static unsigned
grid_for (size_t n)
{
  size_t blocks = (n + 255) / 256;

  return (unsigned) (blocks < 4096 ? blocks : 4096);
}

extern "C" void
cq_sirt_cuda_free (CqSirtCuda * s)
{
  CqSfCuda *sf;

  if (!s)
    return;
  sf = s->sf;
  /* the arrays once the projector's stream is done; the stream is the
   * projector's to destroy */
  cq_cuda_object_free (s,[s]() {
        cudaFree (s->b);
        cudaFree (s->r);
        cudaFree (s->c);
        cudaFree (s->x);
        s->stream = NULL;
      });
  cq_sf_cuda_free (sf);
}

/* R and C again, and x = 0 (enqueued). */
static CqStatus
setup (CqSirtCuda * s, CqError * err)
{
  const unsigned nv = s->g.n_views;
  CqStatus ret;

  cq::sirt_fill_kernel <<<grid_for (s->voxels), 256, 0, s->stream>>> (s->x,
      s->voxels, 1.0f);
  ret = cq_sf_cuda_set_volume_device (s->sf, s->x, err);
  if (ret == CQ_OK)
    ret = cq_sf_cuda_project_keep (s->sf, 0, nv, err);
  if (ret != CQ_OK)
    return ret;
  cq::sirt_invert_kernel <<<grid_for (s->cells), 256, 0, s->stream>>>
      (cq_sf_cuda_device_projections (s->sf), s->r, s->cells);
  cq::sirt_fill_kernel <<<grid_for (s->cells), 256, 0, s->stream>>>
      (cq_sf_cuda_device_projections (s->sf), s->cells, 1.0f);
  ret = cq_sf_cuda_backproject_keep (s->sf, 0, nv, err);
  if (ret != CQ_OK)
    return ret;
  cq::sirt_invert_kernel <<<grid_for (s->voxels), 256, 0, s->stream>>>
      (cq_sf_cuda_device_volume (s->sf), s->c, s->voxels);
  cq::sirt_fill_kernel <<<grid_for (s->voxels), 256, 0, s->stream>>> (s->x,
      s->voxels, 0.0f);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the SIRT kernels");
  return CQ_OK;
}

/* The rest of new: the arrays, b uploaded, R, C and x = 0. */
static CqStatus
start (CqSirtCuda * s, const float *proj, CqError * err)
{
  CqStatus ret;
  cudaError_t e;

  CQ_CUDA_ENTER (s->target, err);
  e = cudaMalloc ((void **) &s->b, s->cells * sizeof (float));
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &s->r, s->cells * sizeof (float));
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &s->c, s->voxels * sizeof (float));
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &s->x, s->voxels * sizeof (float));
  if (e == cudaSuccess)
    e = cudaMemcpyAsync (s->b, proj, s->cells * sizeof (float),
        cudaMemcpyHostToDevice, s->stream);
  if (e != cudaSuccess)
    return cq_cuda_error (err, e, "cannot allocate or upload the SIRT arrays");
  ret = setup (s, err);
  if (ret != CQ_OK)
    return ret;
  CQ_CUDA_TRY (cudaStreamSynchronize (s->stream), err,
      "SIRT's set-up failed");
  return CQ_OK;
}

extern "C" CqSirtCuda *
cq_sirt_cuda_new_for (const CqCudaTarget * target, const CqSfGeometry * g,
    const float *proj, const CqSirtParams * p, CqError * err)
{
  CqSirtCuda *s;

  if (cq_sf_geometry_check (g, err) != CQ_OK
      || cq_sirt_params_check (p, err) != CQ_OK
      || !(s = cq_cuda_object_new < CqSirtCuda > (target, err)))
    return NULL;
  s->g = *g;
  s->p = *p;
  s->cells = (size_t) g->nu * g->nv * g->n_views;
  s->voxels = (size_t) g->nx * g->ny * g->nz;
  s->sf = cq_sf_cuda_new_for (target, g, err);
  if (s->sf)
    s->stream = (cudaStream_t) cq_sf_cuda_stream (s->sf);
  if (!s->sf || start (s, proj, err) != CQ_OK) {
    cq_sirt_cuda_free (s);
    return NULL;
  }
  return s;
}

/* Enqueues one update. */
static CqStatus
enqueue_iteration (CqSirtCuda * s, CqError * err)
{
  const unsigned nv = s->g.n_views;
  CqStatus ret;

  ret = cq_sf_cuda_set_volume_device (s->sf, s->x, err);
  if (ret == CQ_OK)
    ret = cq_sf_cuda_project_keep (s->sf, 0, nv, err);
  if (ret != CQ_OK)
    return ret;
  cq::sirt_residual_kernel <<<grid_for (s->cells), 256, 0, s->stream>>>
      (s->b, s->r, cq_sf_cuda_device_projections (s->sf), s->cells);
  ret = cq_sf_cuda_backproject_keep (s->sf, 0, nv, err);
  if (ret != CQ_OK)
    return ret;
  cq::sirt_update_kernel <<<grid_for (s->voxels), 256, 0, s->stream>>>
      (s->x, s->c, cq_sf_cuda_device_volume (s->sf), s->voxels,
      (float) s->p.relaxation, s->p.nonnegative);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the SIRT kernels");
  return CQ_OK;
}

extern "C" CqStatus
cq_sirt_cuda_iterate (CqSirtCuda * s, unsigned iterations, CqError * err)
{
  unsigned k;

  CQ_CUDA_ENTER (s->target, err);
  for (k = 0; k < iterations; k++) {
    CqStatus ret = enqueue_iteration (s, err);

    if (ret != CQ_OK)
      return ret;
  }
  CQ_CUDA_TRY (cudaStreamSynchronize (s->stream), err,
      "a SIRT iteration failed");
  return CQ_OK;
}

extern "C" CqStatus
cq_sirt_cuda_volume (CqSirtCuda * s, float *volume, CqError * err)
{
  CQ_CUDA_ENTER (s->target, err);
  CQ_CUDA_TRY (cudaMemcpyAsync (volume, s->x, s->voxels * sizeof (float),
          cudaMemcpyDeviceToHost, s->stream), err,
      "cannot download the reconstruction");
  CQ_CUDA_TRY (cudaStreamSynchronize (s->stream), err,
      "cannot download the reconstruction");
  return CQ_OK;
}

extern "C" CqStatus
cq_sirt_cuda_time (CqSirtCuda * s, unsigned iterations, double *setup_ms,
    double *ms, CqError * err)
{
  float setup_total = 0, total = 0;
  CqStatus ret;

  if (iterations == 0)
    return cq_error_set (err, CQ_ERROR_INVALID, "0 iterations to time");
  CQ_CUDA_ENTER (s->target, err);
  /* set-up after a warm-up one, then the updates after a warm-up update */
  ret = cq_cuda_time (s->stream, 1,[&]() {
        return setup (s, err);
      }, &setup_total, err);
  if (ret == CQ_OK)
    ret = cq_cuda_time (s->stream, iterations,[&]() {
          return enqueue_iteration (s, err);
        }, &total, err);
  if (ret != CQ_OK)
    return ret;
  if (setup_ms)
    *setup_ms = setup_total;
  *ms = total / iterations;
  return CQ_OK;
}
