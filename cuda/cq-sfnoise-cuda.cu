/* cudaquality compute library: detector noise on the device — the kernel
 * that turns a view's line integrals into noisy counts pixels, and the
 * test entry points of the bit-for-bit checks against the CPU.
 *
 * Built with nvcc -fmad=false (cuda/meson.build): the sampler in
 * cq-sfnoise-impl.h must round every product and sum on its own, as the
 * CPU does.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include "cq-cuda-private.h"
#include "cq-grid.cuh"
#include "cq-sfnoise-cuda.h"
#include "cq-sfnoise-impl.h"

namespace cq
{

/* A thread a cell: one draw, one pixel. */
__global__ void
sf_noise_pixels_kernel (const float *li, int nu, int nv, CqSfPixels p,
    CqSfNoise nz, unsigned char *dst, size_t pitch)
{
  int u, v;
  double x;

  if (!grid_xy (nu, nv, u, v))
    return;
  x = cq_nz_pixel (&p, &nz, (uint32_t) v * (uint32_t) nu + (uint32_t) u,
      li[(size_t) v * nu + u]);
  if (p.bytes == 1)
    dst[(size_t) v * pitch + u] = (unsigned char) x;
  else
    ((unsigned short *) (dst + (size_t) v * pitch))[u] = (unsigned short) x;
}

__global__ void
sf_noise_counts_kernel (CqSfNoise nz, uint32_t first_cell,
    const double *lambda, unsigned n, double *out)
{
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n)
    out[i] = cq_nz_counts (&nz, first_cell + i, lambda[i]);
}

__global__ void
philox_curand_kernel (const uint4 * ctr, const uint2 * key, unsigned n,
    uint4 * out)
{
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n)
    out[i] = curand_Philox4x32_10 (ctr[i], key[i]);
}

}                               /* namespace cq */

cudaError_t
cq_sf_noise_cuda_launch (cudaStream_t stream, const float *li, unsigned nu,
    unsigned nv, const CqSfPixels * px, const CqSfNoise * nz,
    unsigned char *dst, size_t pitch)
{
  const dim3 block (32, 8);
  const dim3 grid ((nu + 31) / 32, (nv + 7) / 8);

  cq::sf_noise_pixels_kernel <<<grid, block, 0, stream>>> (li, (int) nu,
      (int) nv, *px, *nz, dst, pitch);
  return cudaGetLastError ();
}

/* ---- test entry points: synchronous, on the legacy default stream ---- */

extern "C" CqStatus
cq_sf_noise_cuda_pixels_host (int device, const float *li, unsigned nu,
    unsigned nv, const CqSfPixels * px, const CqSfNoise * nz, void *dst,
    size_t pitch, CqError * err)
{
  const size_t cells = (size_t) nu * nv, row = (size_t) nu * px->bytes;
  float *d_li = NULL;
  unsigned char *d_px = NULL;
  cudaError_t e;
  const char *what = "cannot select the device";

  if (!px->counts || !cq_sf_noise_active (nz) || (px->bytes != 1
          && px->bytes != 2) || pitch < row)
    return cq_error_set (err, CQ_ERROR_INVALID, "noisy counts of 1 or 2 "
        "bytes a pixel and a pitch of at least %zu expected, not %s%s of "
        "%u bytes and pitch %zu", row, cq_sf_noise_active (nz) ? "" :
        "noiseless ", px->counts ? "counts" : "line integrals", px->bytes,
        pitch);
  e = cq_cuda_select (device);
  if (e == cudaSuccess) {
    what = "cannot allocate";
    e = cudaMalloc ((void **) &d_li, cells * sizeof (float));
  }
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d_px, nv * row);
  if (e == cudaSuccess) {
    what = "cannot upload";
    e = cudaMemcpy (d_li, li, cells * sizeof (float),
        cudaMemcpyHostToDevice);
  }
  if (e == cudaSuccess) {
    what = "cannot launch the noise kernel";
    e = cq_sf_noise_cuda_launch (0, d_li, nu, nv, px, nz, d_px, row);
  }
  if (e == cudaSuccess) {
    what = "cannot download";
    e = cudaMemcpy2D (dst, pitch, d_px, row, row, nv,
        cudaMemcpyDeviceToHost);
  }
  cudaFree (d_li);
  cudaFree (d_px);
  if (e != cudaSuccess)
    return cq_cuda_error (err, e, what);
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_noise_cuda_counts (int device, const CqSfNoise * nz,
    uint32_t first_cell, const double *lambda, unsigned n, double *out,
    CqError * err)
{
  double *d_in = NULL, *d_out = NULL;
  cudaError_t e;
  const char *what = "cannot select the device";

  e = cq_cuda_select (device);
  if (e == cudaSuccess) {
    what = "cannot allocate";
    e = cudaMalloc ((void **) &d_in, n * sizeof (double));
  }
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d_out, n * sizeof (double));
  if (e == cudaSuccess) {
    what = "cannot upload";
    e = cudaMemcpy (d_in, lambda, n * sizeof (double),
        cudaMemcpyHostToDevice);
  }
  if (e == cudaSuccess) {
    what = "cannot run the noise kernel";
    cq::sf_noise_counts_kernel <<<(n + 255) / 256, 256>>> (*nz, first_cell,
        d_in, n, d_out);
    e = cudaGetLastError ();
  }
  if (e == cudaSuccess)
    e = cudaMemcpy (out, d_out, n * sizeof (double), cudaMemcpyDeviceToHost);
  cudaFree (d_in);
  cudaFree (d_out);
  if (e != cudaSuccess)
    return cq_cuda_error (err, e, what);
  return CQ_OK;
}

extern "C" CqStatus
cq_philox_cuda_curand (int device, const uint32_t * ctr,
    const uint32_t * key, unsigned n, uint32_t * out, CqError * err)
{
  uint4 *d_ctr = NULL, *d_out = NULL;
  uint2 *d_key = NULL;
  cudaError_t e;
  const char *what = "cannot select the device";

  e = cq_cuda_select (device);
  if (e == cudaSuccess) {
    what = "cannot allocate";
    e = cudaMalloc ((void **) &d_ctr, n * sizeof (uint4));
  }
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d_out, n * sizeof (uint4));
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d_key, n * sizeof (uint2));
  if (e == cudaSuccess) {
    what = "cannot upload";
    e = cudaMemcpy (d_ctr, ctr, n * sizeof (uint4), cudaMemcpyHostToDevice);
  }
  if (e == cudaSuccess)
    e = cudaMemcpy (d_key, key, n * sizeof (uint2), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    what = "cannot run curand_Philox4x32_10";
    cq::philox_curand_kernel <<<(n + 255) / 256, 256>>> (d_ctr, d_key, n,
        d_out);
    e = cudaGetLastError ();
  }
  if (e == cudaSuccess)
    e = cudaMemcpy (out, d_out, n * sizeof (uint4), cudaMemcpyDeviceToHost);
  cudaFree (d_ctr);
  cudaFree (d_out);
  cudaFree (d_key);
  if (e != cudaSuccess)
    return cq_cuda_error (err, e, what);
  return CQ_OK;
}
