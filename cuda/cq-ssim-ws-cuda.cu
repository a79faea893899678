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

/* the exponent of a half-biased high word's double, 2^e' (1.5 + s 2^-20):
 * the biases' exponent fields are odd, so that half of one is the field
 * (E - 1) / 2 with the mantissa's top bit set */
static_assert (((cq::kG2MeanHigh >> 20) & 1) && ((cq::kG2MomentHigh >> 20) & 1)
    && (cq::kG2MeanHalf & 0xfffff) == 0x80000
    && (cq::kG2MomentHalf & 0xfffff) == 0x80000, "half biases: 1.5 2^e'");
static int
ws_half_exp (unsigned half)
{
  return (int) (half >> 20) - 1023;
}

/* The weights, the second moments' paired weights 4 w[0..5], the centre
 * taps' scaled weights, and the offsets the paired vertical chains (8-bit
 * samples) start from: minus 2^e times the five pairs' weights and 1.5
 * times the centre's (g2_vertical_sums). */
cudaError_t
cq_ssim_ws_set_weights (const double *w)
{
  double taken = 0.0, offset[2], moment_w[6], center_w[2];
  cudaError_t e;

  for (int i = 0; i <= 5; i++)
    moment_w[i] = 4.0 * w[i];
  for (int i = 0; i < 5; i++)
    taken += w[i];
  taken += 1.5 * w[5];
  offset[0] = -ldexp (taken, cq::kG2MeanExp);
  offset[1] = -ldexp (4.0 * taken, cq::kG2MomentExp);
  center_w[0] = ldexp (w[5], cq::kG2MeanExp - ws_half_exp (cq::kG2MeanHalf));
  center_w[1] = ldexp (4.0 * w[5], cq::kG2MomentExp -
      ws_half_exp (cq::kG2MomentHalf));
  e = cudaMemcpyToSymbol (cq::c_gauss, w, 11 * sizeof (double));
  if (e == cudaSuccess)
    e = cudaMemcpyToSymbol (cq::c_g2_offset, offset, sizeof (offset));
  if (e == cudaSuccess)
    e = cudaMemcpyToSymbol (cq::c_g2_moment_w, moment_w, sizeof (moment_w));
  if (e == cudaSuccess)
    e = cudaMemcpyToSymbol (cq::c_g2_center_w, center_w, sizeof (center_w));
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
