/* cudaquality compute library: gauss2ws (cq-ssim-ws-kernels.cuh), whose
 * translation unit is built for sm_90a alone (setmaxnreg): on any other
 * device it has no code, and cq_ssim_ws_usable says so.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SSIM_WS_H
#define CQ_SSIM_WS_H

#include <cuda_runtime.h>

namespace cq
{
struct SsimParams;
}

/* Whether the current device runs gauss2ws: its code loads, with the
 * registers a thread that its setmaxnreg counts share out. */
bool cq_ssim_ws_usable (void);

/* Sets the Gaussian weights of the kernels' module (w: 11 of them), and
 * the offsets its 8-bit vertical chains start from. */
cudaError_t cq_ssim_ws_set_weights (const double *w);

typedef void (*CqSsimWsKernel) (cq::SsimParams);

/* gauss2ws for samples of `bytes` bytes (1 or 2) in mode (kGaussSsim,
 * kGaussCs or kGaussBoth), and its threads a block. */
CqSsimWsKernel cq_ssim_ws_kernel (unsigned bytes, int mode);
unsigned cq_ssim_ws_threads (void);

/* Blocks of gauss2ws an SM holds. */
unsigned cq_ssim_ws_blocks_per_sm (void);

#endif /* CQ_SSIM_WS_H */
