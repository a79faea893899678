/* cudaquality compute library: gauss2ws's module, built for sm_90a alone
 * (cuda/meson.build), so that its setmaxnreg is always there where it runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-ssim-ws.h"
#include "cq-ssim-ws-kernels.cuh"

bool
cq_ssim_ws_usable (void)
{
  cudaFuncAttributes attr;

  if (cudaFuncGetAttributes (&attr, cq::ssim_gauss2ws_kernel < unsigned char,
          cq::kGaussSsim >) != cudaSuccess) {
    (void) cudaGetLastError ();
    return false;
  }
  /* setmaxnreg shares out the registers of the launch: with fewer, the
   * vertical warps' increase would wait forever */
  return attr.numRegs == cq::kWsRegs;
}

cudaError_t
cq_ssim_ws_set_weights (const double *w)
{
  return cq::g2_set_weights (w);
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
