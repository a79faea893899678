/* cudaquality compute library: the reductions every kernel ends with.
 *
 * A warp sums by shuffles (lane 0 holds the total, the additions in a fixed
 * order, so a double sum does not depend on scheduling); a block then
 * publishes its share (an atomic or its own slot), and the last block of
 * the grid to finish, which last_block () names, reads every share and
 * resets the accumulators for the next frame. Used by the sharpness and
 * SSIM kernels.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_REDUCE_CUH
#define CQ_REDUCE_CUH

namespace cq
{

constexpr unsigned kFullMask = 0xffffffffu;

/* Frames back to back (cq_cuda_launch with overlap): a kernel lets the
 * next frame's kernel start its blocks early, as soon as SMs free up,
 * and every block of that kernel waits for this one to finish (and its
 * writes to be visible) before it publishes its sums, which reuse this
 * kernel's accumulators. Both are no-ops without overlap and before
 * sm_90. */
__device__ __forceinline__ void
let_next_frame_start ()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.launch_dependents;");
#endif
}

__device__ __forceinline__ void
wait_for_previous_frame ()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.wait;":::"memory");
#endif
}

/* Σ v over the warp, in lane 0. */
template < typename V > __device__ __forceinline__ V
warp_sum (V v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync (kFullMask, v, o);
  return v;
}

/* Called by every thread of the block once the block has published its
 * share: whether this block is the last of `blocks` to get here (counter
 * counts them and is zero between frames). The last block then sees every
 * other block's writes. */
__device__ __forceinline__ bool
last_block (unsigned *counter, unsigned blocks)
{
  __shared__ bool s_last;

  __threadfence ();
  __syncthreads ();
  if (threadIdx.x == 0 && threadIdx.y == 0)
    s_last = atomicAdd (counter, 1u) == blocks - 1;
  __syncthreads ();
  if (s_last)
    __threadfence ();
  return s_last;
}

}                               /* namespace cq */

#endif /* CQ_REDUCE_CUH */
