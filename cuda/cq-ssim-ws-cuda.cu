/* cudaquality compute library: gauss2ws's module, built for sm_90a alone
 * (cuda/meson.build), so that its setmaxnreg is always there where it runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-ssim-ws.h"
#include "cq-ssim-ws-kernels.cuh"

/* Whether the kernel of T in MODE loads with the registers at launch
 * that its setmaxnreg counts share out: with fewer, the vertical warps'
 * increase would wait forever. */
template < typename T, int MODE > static bool
ws_loads (void)
{
  cudaFuncAttributes attr;

  if (cudaFuncGetAttributes (&attr, cq::ssim_gauss2ws_kernel < T,
          MODE >) != cudaSuccess) {
    (void) cudaGetLastError ();
    return false;
  }
  return attr.numRegs == cq::kWsRegs;
}

template < typename T > static bool
ws_loads_all (void)
{
  return ws_loads < T, cq::kGaussSsim > () && ws_loads < T, cq::kGaussCs > ()
      && ws_loads < T, cq::kGaussBoth > ();
}

bool
cq_ssim_ws_usable (void)
{
  return ws_loads_all < unsigned char > ()
      && ws_loads_all < unsigned short > ();
}

/* The weights, the second moments' paired weights 4 w[0..5], and the
 * offsets the paired vertical chains (8-bit samples) start from: minus 2^e
 * times the six weights they take (g2_vertical_sums). */
cudaError_t
cq_ssim_ws_set_weights (const double *w)
{
  double half = 0.0, offset[2], moment_w[6];
  cudaError_t e;

  for (int i = 0; i <= 5; i++) {
    half += w[i];
    moment_w[i] = 4.0 * w[i];
  }
  offset[0] = -ldexp (half, cq::kG2MeanExp);
  offset[1] = -ldexp (4.0 * half, cq::kG2MomentExp);
  e = cudaMemcpyToSymbol (cq::c_gauss, w, 11 * sizeof (double));
  if (e == cudaSuccess)
    e = cudaMemcpyToSymbol (cq::c_g2_offset, offset, sizeof (offset));
  if (e == cudaSuccess)
    e = cudaMemcpyToSymbol (cq::c_g2_moment_w, moment_w, sizeof (moment_w));
  return e;
}

template < typename T > static CqSsimWsKernel
ws_kernel (int mode)
{
  if (mode == cq::kGaussCs)
    return cq::ssim_gauss2ws_kernel < T, cq::kGaussCs >;
  if (mode == cq::kGaussBoth)
    return cq::ssim_gauss2ws_kernel < T, cq::kGaussBoth >;
  return cq::ssim_gauss2ws_kernel < T, cq::kGaussSsim >;
}

CqSsimWsKernel
cq_ssim_ws_kernel (unsigned bytes, int mode)
{
  return bytes == 2 ? ws_kernel < unsigned short > (mode) :
      ws_kernel < unsigned char > (mode);
}

unsigned
cq_ssim_ws_threads (void)
{
  return cq::kWsThreads;
}

unsigned
cq_ssim_ws_blocks_per_sm (void)
{
  return cq::kWsBlocks;
}
