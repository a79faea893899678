/* cudaquality compute library: the pixel a thread of a 2D launch takes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_GRID_CUH
#define CQ_GRID_CUH

namespace cq
{

/* This thread's (x, y) in a grid of 2D blocks over w × h; false past the
 * right or bottom edge (the grid rounds up to whole blocks). */
template < typename T > __device__ __forceinline__ bool
grid_xy (T w, T h, T & x, T & y)
{
  x = blockIdx.x * blockDim.x + threadIdx.x;
  y = blockIdx.y * blockDim.y + threadIdx.y;
  return x < w && y < h;
}

}                               /* namespace cq */
#endif /* CQ_GRID_CUH */
