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
 * next frame's kernel start its blocks early, as soon as SMs free up.
 * A block of that kernel that publishes into the same accumulators waits
 * for this one to finish (and its writes to be visible) first; with sets
 * of accumulators (kFrameSets below) only its last block does. Both are
 * no-ops without overlap and before sm_90. */
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

/* Sets of accumulators for frames back to back: frame seq (the launcher
 * counts its frames) publishes into set seq % kFrameSets, so its blocks
 * need not wait for the frame before to finish, which would hold their
 * SMs idle (H100, sharpness back to back: 1080p 6.2 µs a frame with that
 * wait in every block, 4.6 without). A set's `released` word holds the
 * last frame that finished with it (initially set - kFrameSets):
 * - each block acquires it as it starts (frame_set_peek);
 * - before it publishes, a block waits only if the frame kFrameSets
 *   before has not released the set yet (frame_set_claim);
 * - the last block waits for the previous kernel (so that work queued
 *   after this kernel follows both), reads and clears the set and
 *   releases it (frame_set_release) before it writes the results out. */
constexpr unsigned kFrameSets = 2;

/* A set of `words` 64-bit words ends with the blocks' counter (the low
 * half of its last word) and its released word (the high half). */
__host__ __device__ inline unsigned *
frame_set_counter (unsigned long long *set, size_t words)
{
  return (unsigned *) (set + words - 1);
}

/* Host, as the launcher starts: kFrameSets sets of `words` each at sets,
 * zero but for their released words (set k: frame k - kFrameSets). On the
 * default stream: synchronize before the first frame's kernels on another
 * one. */
inline cudaError_t
frame_sets_init (unsigned long long *sets, size_t words)
{
  cudaError_t e = cudaMemset (sets, 0, kFrameSets * words * sizeof (*sets));

  for (unsigned k = 0; k < kFrameSets && e == cudaSuccess; k++) {
    const unsigned released = k - kFrameSets;

    e = cudaMemcpy (frame_set_counter (sets + k * words, words) + 1,
        &released, sizeof released, cudaMemcpyHostToDevice);
  }
  return e;
}

/* Thread (0, 0) of each block, first thing: the set's released word, with
 * acquire semantics (a relaxed load and a fence; the fence cost 0.25 µs a
 * 4K frame back to back, wherever the block ran it). */
__device__ __forceinline__ unsigned
frame_set_peek (const unsigned *released)
{
  unsigned v = 0;

  if (threadIdx.x == 0 && threadIdx.y == 0)
    asm volatile ("ld.relaxed.gpu.global.u32 %0, [%1];\n\t"
        "fence.acq_rel.gpu;":"=r" (v):"l" (released):"memory");
  return v;
}

constexpr unsigned long long kClaimTimeoutNs = 60000000000ull;

/* The device's nanosecond clock (wall time, whatever the SM clock). */
__device__ __forceinline__ unsigned long long
global_ns ()
{
  unsigned long long t;

  asm volatile ("mov.u64 %0, %%globaltimer;":"=l" (t));
  return t;
}

/* Every thread of the block, before the block's first write to the set:
 * waits until its released word reads `expected` (the frame kFrameSets
 * before; a set that frames take one after the other: the one before);
 * seen: frame_set_peek's value (thread (0, 0)'s counts). */
__device__ __forceinline__ void
frame_set_claim (const unsigned *released, unsigned expected, unsigned seen)
{
  if (threadIdx.x == 0 && threadIdx.y == 0 && seen != expected) {
    const unsigned long long start = global_ns ();

    do {
      /* a minute without the release (the frame before takes
       * microseconds, milliseconds under compute-sanitizer): a broken
       * protocol, which fails the launch (the host reports it) rather
       * than hang the stream */
      if (global_ns () - start > kClaimTimeoutNs)
        __trap ();
      __nanosleep (128);
      asm volatile ("ld.acquire.gpu.global.u32 %0, [%1];":"=r" (seen)
          :"l" (released):"memory");
    } while (seen != expected);
  }
  __syncthreads ();
}

/* Every thread of the last block, once the set is clear again. */
__device__ __forceinline__ void
frame_set_release (unsigned *released, unsigned seq)
{
  __threadfence ();
  __syncthreads ();
  if (threadIdx.x == 0 && threadIdx.y == 0)
    asm volatile ("st.relaxed.gpu.global.u32 [%0], %1;"::"l" (released),
        "r" (seq):"memory");
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
