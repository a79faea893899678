/* cudaquality compute library: the SF-TR/A2 kernels (float32).
 *
 * The footprint functions here are shared by the projector and the
 * backprojector: a (voxel, cell) pair gets the same weight
 * l_φ0 · F1 · F2 (· l_θ) in both, which makes them each other's transpose
 * up to the order of the additions.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SFPROJECT_KERNELS_CUH
#define CQ_SFPROJECT_KERNELS_CUH

#include "cq-grid.cuh"

namespace cq
{

constexpr int kSfMaxViews = 2048;       /* views a launch batch */

struct SfConst
{
  float R, D;                   /* source-origin, source-detector */
  float dx, dz, du, dv;
  float x0, y0;                 /* centre of voxel column (0, 0) */
  float u0, v0;                 /* centre of cell (0, 0) */
  float ul0;                    /* lower edge of cell 0 */
  float idu;                    /* 1 / du (cell index guesses only) */
  float fov_r2;                 /* field-of-view radius², < 0: no mask */
  /* the axial map in detector rows, counted from row rc's lower edge:
   * slice edge k of a column at magnification m lies at
   * k · (m · dz/dv) + (m · zl0 − vc) / dv, zl0 the lower edge of slice 0
   * less the view's source z (a helical orbit's; 0 on a circle) and vc
   * the lower edge of row rc */
  float dzv, zlv, vcv;          /* dz / dv, zl0 / dv, vc / dv */
  int rc;                       /* the row whose lower edge is 0 (nv / 2) */
  int nx, ny, nz, nu, nv;
  /* floats a row of the backprojector's scaled projections: nu and
   * kSfBackPad zeros, so that a column's CELLS loads need no clamping */
  int bpitch;
  const float *zlvs;            /* zl0 / dv of each launch view (device):
                                 * a helical orbit's differ from zlv */
  /* the slices a launch holds in memory, [z0, z0 + zn) of nz: the whole
   * volume (0, nz) when it is resident and in every projector launch
   * (its volz has zn = nz slices a column); a z-slab of a streamed
   * backprojection (which writes those slices only). Slice indices stay
   * global in the arithmetic, so a slab sees the very floats of the whole
   * volume. */
  int z0, zn;
  /* the rows of columns a projector launch holds, [j0, j0 + jn) of ny:
   * (0, ny) resident; a band when the projector streams the volume
   * (volz holds column (j − j0) · nx + i, all nz slices of it) */
  int j0, jn;
};

constexpr int kSfBackPad = 4;   /* the most F1 registers a backprojector lane */

/* The geometry and the views belong to one context (several may run at
 * once on different streams): the geometry goes to every kernel by value
 * (it lands in the kernel's parameter bank, as fast as constant memory),
 * the views' (cos β, sin β), axial offsets (zlvs) and the projector's
 * launch order through small device arrays of the context. */

/* A voxel column's footprint in one view: sorted τ, depth q_c, l_φ0. */
struct SfColumn
{
  float t0, t1, t2, t3;
  float i10, i32;               /* 1 / (t1 − t0), 1 / (t3 − t2); 0 if none */
  float qc, lphi, mag;
};

__device__ __forceinline__ SfColumn
sf_column (const SfConst & sf, float xc, float yc, float c, float s)
{
  /* every product and sum rounded explicitly: the compiler may not fuse
   * them differently in the projector and the backprojector, whose
   * weights must be the same floats */
  const float h = __fmul_rn (0.5f, sf.dx);
  const float pc = __fmaf_rn (xc, c, __fmul_rn (yc, s));
  const float qc = __fmaf_rn (yc, c, -__fmul_rn (xc, s));
  const float hp = __fmul_rn (h, __fadd_rn (c, s));
  const float hm = __fmul_rn (h, __fsub_rn (c, s));
  /* corners (σx h, σy h): p = pc + σx h c + σy h s,
   * q = qc − σx h s + σy h c */
  float ta = __fdividef (__fmul_rn (sf.D, __fsub_rn (pc, hp)),
      __fsub_rn (sf.R, __fsub_rn (qc, hm)));
  float tb = __fdividef (__fmul_rn (sf.D, __fadd_rn (pc, hm)),
      __fsub_rn (sf.R, __fsub_rn (qc, hp)));
  float tc = __fdividef (__fmul_rn (sf.D, __fsub_rn (pc, hm)),
      __fsub_rn (sf.R, __fadd_rn (qc, hp)));
  float td = __fdividef (__fmul_rn (sf.D, __fadd_rn (pc, hp)),
      __fsub_rn (sf.R, __fadd_rn (qc, hm)));
  float lo1 = fminf (ta, tb), hi1 = fmaxf (ta, tb);
  float lo2 = fminf (tc, td), hi2 = fmaxf (tc, td);
  SfColumn col;

  col.t0 = fminf (lo1, lo2);
  col.t3 = fmaxf (hi1, hi2);
  col.t1 = fminf (fmaxf (lo1, lo2), fminf (hi1, hi2));
  col.t2 = fmaxf (fmaxf (lo1, lo2), fminf (hi1, hi2));
  col.i10 = col.t1 > col.t0 ? __frcp_rn (__fsub_rn (col.t1, col.t0)) : 0.0f;
  col.i32 = col.t3 > col.t2 ? __frcp_rn (__fsub_rn (col.t3, col.t2)) : 0.0f;
  col.qc = qc;
  {
    /* φ0 = β + α, tan α = p_c / (R − q_c) */
    const float a = __fsub_rn (sf.R, qc);
    const float inv = rsqrtf (__fmaf_rn (a, a, __fmul_rn (pc, pc)));
    const float ca = __fmul_rn (a, inv), sa = __fmul_rn (pc, inv);
    const float cphi = __fmaf_rn (c, ca, -__fmul_rn (s, sa));
    const float sphi = __fmaf_rn (s, ca, __fmul_rn (c, sa));

    col.lphi = __fdiv_rn (sf.dx, fmaxf (fabsf (cphi), fabsf (sphi)));
  }
  col.mag = __fdiv_rn (sf.D, __fsub_rn (sf.R, qc));
  return col;
}

/* F1 · du of the column over the cell [lo, hi]: ∫ of its trapezoid
 * τ0..τ3, edges written as width × mean height so that a nearly vertical
 * edge stays exact in float; the edges' slopes are the column's
 * reciprocals, computed once a view. */
__device__ __forceinline__ float
sf_trapezoid (const SfColumn & col, float lo, float hi)
{
  float sum = 0.0f, b1, b2;

  b1 = fmaxf (lo, col.t0);
  b2 = fminf (hi, col.t1);
  if (b2 > b1)
    sum = __fadd_rn (sum, __fmul_rn (__fsub_rn (b2, b1), col.t1 > col.t0 ?
            __fmul_rn (__fsub_rn (__fmul_rn (0.5f, __fadd_rn (b1, b2)),
                    col.t0), col.i10) : 0.5f));
  b1 = fmaxf (lo, col.t1);
  b2 = fminf (hi, col.t2);
  if (b2 > b1)
    sum = __fadd_rn (sum, __fsub_rn (b2, b1));
  b1 = fmaxf (lo, col.t2);
  b2 = fminf (hi, col.t3);
  if (b2 > b1)
    sum = __fadd_rn (sum, __fmul_rn (__fsub_rn (b2, b1), col.t3 > col.t2 ?
            __fmul_rn (__fsub_rn (col.t3, __fmul_rn (0.5f, __fadd_rn (b1,
                            b2))), col.i32) : 0.5f));
  return sum;
}

/* A column's slices on the detector, in rows counted from row rc: slice
 * edge k at k · b + a. */
struct SfAxial
{
  float a, b;
};

/* ... in a view whose zl0 / dv is zl. */
__device__ __forceinline__ SfAxial
sf_axial (const SfConst & sf, float mag, float zl)
{
  SfAxial ax;

  ax.b = __fmul_rn (mag, sf.dzv);
  ax.a = __fsub_rn (__fmul_rn (mag, zl), sf.vcv);
  return ax;
}

__device__ __forceinline__ float
sf_slice_row (const SfAxial & ax, int k)
{
  return __fmaf_rn ((float) k, ax.b, ax.a);
}

/* Centre of voxel column i (or j) along x (or y). */
__device__ __forceinline__ float
sf_voxel_centre (float first, float dx, int i)
{
  return __fmaf_rn ((float) i, dx, first);
}

/* l_θ of the cell centred at (u, v), rounded alike wherever it is taken. */
__device__ __forceinline__ float
sf_theta (const SfConst & sf, int u, int v)
{
  const float s = __fmaf_rn ((float) u, sf.du, sf.u0);
  const float t = __fmaf_rn ((float) v, sf.dv, sf.v0);
  const float d2 = __fmul_rn (sf.D, sf.D);
  const float s2d2 = __fmaf_rn (s, s, d2);

  return __fmul_rn (__fsqrt_rn (__fmaf_rn (t, t, s2d2)), rsqrtf (s2d2));
}

/* The factor of cell (u, v) in both directions: l_θ / du (the axial
 * overlaps are counted in rows, F2 itself). */
__device__ __forceinline__ float
sf_cell_factor (const SfConst & sf, int u, int v)
{
  return __fdiv_rn (sf_theta (sf, u, v), sf.du);
}

/* Where the ray through detector coordinate s crosses the line x = a
 * (XMAJOR; the y of the crossing) or y = a (the x): from p = s (R − q) / D,
 * linear in a, so a ray is two numbers: cross = c0 + c1 · a. */
template < bool XMAJOR > __device__ __forceinline__ bool
sf_ray_line (const SfConst & sf, float s, float c, float sn, float &c0,
    float &c1)
{
  const float k = s / sf.D;
  float den, q0, q1;

  if (XMAJOR) {
    den = k * c + sn;           /* x = p c − q sn */
    q0 = k * sf.R * c / den;
    q1 = -1.0f / den;
    c0 = k * sf.R * sn + q0 * (c - k * sn);
    c1 = q1 * (c - k * sn);
  } else {
    den = c - k * sn;           /* y = p sn + q c */
    q0 = -k * sf.R * sn / den;
    q1 = 1.0f / den;
    c0 = k * sf.R * c - q0 * (k * c + sn);
    c1 = -q1 * (k * c + sn);
  }
  return fabsf (den) > 1e-4f;
}

/* Edges of detector cells: cell u spans [edge(u), edge(u + 1)]. Both
 * kernels take every boundary from these functions (explicit fma: no
 * contraction differences), so a (voxel, cell) weight is the same float
 * in both. */
__device__ __forceinline__ float
sf_cell_edge (const SfConst & sf, int u)
{
  return __fmaf_rn ((float) u, sf.du, sf.ul0);
}

/* Column (i, j) lies outside the field-of-view cylinder (mask on). */
__device__ __forceinline__ bool
sf_masked (const SfConst & sf, float xc, float yc)
{
  return sf.fov_r2 >= 0.0f && xc * xc + yc * yc > sf.fov_r2;
}

constexpr int kSfStrip = 8;             /* detector cells along u a projector block */
constexpr int kSfProjThreads = 128;     /* a projector block: lanes along v */
constexpr int kSfProjWarps = kSfProjThreads / 32;

/* What a projector block stages for a group of slabs. */
template < int ROWS > struct SfProjShared
{
  float w[kSfStrip][kSfProjThreads];    /* l_φ0 · F1 of each strip cell */
  SfAxial ax[kSfProjThreads];           /* the column's slices in rows */
  float ib[kSfProjThreads];             /* 1 / ax.b, for index guesses */
  int col[kSfProjThreads];              /* j · nx + i */
  int count[kSfProjWarps];
  double acc[kSfStrip][ROWS][kSfProjThreads];   /* the lanes' sums */
};
constexpr int kSfProjFold = 8;          /* slab groups summed in float before double */

/* BAND, x-major views: the slabs [*a_begin, *a_end) (x = first + a · dx)
 * whose candidates can lie in the band's rows of columns [j0, j0 + jn):
 * where the strip's across range, [min − h, max + h] of its edge rays
 * (c0 + c1 · x) at x ± h, meets the band. The hull of what each ray line
 * allows on each side, two slabs wider for rounding: a superset (a slab
 * outside stages no candidate), so that a band's launch walks its own
 * slabs, not all of them. */
__device__ __forceinline__ void
sf_band_slabs (const SfConst & sf, float first, int n_slabs, float a0,
    float a1, float b0, float b1, int &a_begin, int &a_end)
{
  const float h = 0.5f * sf.dx, big = 1e30f;
  const float first_across = sf.y0;
  /* the across range must reach y_need_hi from below and y_need_lo from
   * above: hi ≥ Y0 and lo ≤ Y1 as the candidates' index bounds have it */
  const float t_a = first_across + ((float) sf.j0 - 1e-3f) * sf.dx - h;
  const float t_b = first_across + ((float) (sf.j0 + sf.jn - 1) + 1e-3f) *
      sf.dx + h;
  const float cs[4] = { a0 - a1 * h, a0 + a1 * h, b0 - b1 * h, b0 + b1 * h };
  const float ss[4] = { a1, a1, b1, b1 };
  float lo_a = big, hi_a = -big, lo_b = big, hi_b = -big;

#pragma unroll
  for (int q = 0; q < 4; q++) {
    const float c = cs[q], sl = ss[q];
    /* {x : c + sl x >= t_a} and {x : c + sl x <= t_b} */
    if (sl > 0.0f) {
      lo_a = fminf (lo_a, (t_a - c) / sl);
      hi_a = big;
      lo_b = -big;
      hi_b = fmaxf (hi_b, (t_b - c) / sl);
    } else if (sl < 0.0f) {
      lo_a = -big;
      hi_a = fmaxf (hi_a, (t_a - c) / sl);
      lo_b = fminf (lo_b, (t_b - c) / sl);
      hi_b = big;
    } else {
      if (c >= t_a) {
        lo_a = -big;
        hi_a = big;
      }
      if (c <= t_b) {
        lo_b = -big;
        hi_b = big;
      }
    }
  }
  {
    const float x_lo = fmaxf (lo_a, lo_b), x_hi = fminf (hi_a, hi_b);
    const float f_lo = fmaxf (-1.0f, fminf ((float) n_slabs,
            (x_lo - first) / sf.dx));
    const float f_hi = fmaxf (-1.0f, fminf ((float) n_slabs,
            (x_hi - first) / sf.dx));

    a_begin = max (0, (int) floorf (f_lo) - 2);
    a_end = x_hi < x_lo ? a_begin : min (n_slabs, (int) ceilf (f_hi) + 3);
  }
}

/* Ray-driven projector, by strips: a block takes kSfStrip cells along u
 * and kSfProjThreads × ROWS rows of launch view z (a lane ROWS consecutive
 * rows of all the strip's cells). XMAJOR: the view's rays run mostly along
 * x and the walk goes slab by slab along x. For each group of slabs the
 * block stages the voxel columns the strip's ray bundle can touch (a warp
 * a slab, a lane a candidate): footprint, l_φ0 · F1 for each cell of the
 * strip, the slices' place on the detector. Then every lane resamples each
 * staged column onto its rows once (the exact overlaps of slices and rows,
 * in rows, walking both in step) and adds it to the strip's cells with
 * their weights: the transaxial work is done once a column and strip, the
 * axial work once a column and row. The volume is read z-fastest (a
 * column's slices contiguous: the lanes of a warp read neighbouring
 * slices). A group's float sums go into double sums, so that thousands of
 * signed terms a cell keep the pair adjoint to 1e-7. BAND: volz holds the
 * rows of columns [j0, j0 + jn) only, and the block walks the slabs and
 * candidates in them. */
template < bool XMAJOR, int ROWS, bool BAND > __device__ __forceinline__ void
sf_project_block (const SfConst & sf, float c, float sn, int slot,
    const float *__restrict__ volz, float *proj, SfProjShared < ROWS > &sh,
    bool window)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int u_first = blockIdx.x * kSfStrip;
  const int r_first = (blockIdx.y * kSfProjThreads + threadIdx.x) * ROWS;
  /* the lane's first row edge, in rows from row rc (an integer) */
  const float rho = (float) (r_first - sf.rc);
  const float h = 0.5f * sf.dx;
  const int n_slabs = XMAJOR ? sf.nx : sf.ny;
  const int n_across = XMAJOR ? sf.ny : sf.nx;
  const float first_slab = XMAJOR ? sf.x0 : sf.y0;
  const float first_across = XMAJOR ? sf.y0 : sf.x0;
  const int u_end = min (u_first + kSfStrip, sf.nu);
  const float sa = sf_cell_edge (sf, u_first), sb = sf_cell_edge (sf, u_end);
  float acc[kSfStrip][ROWS];
  float a0, a1, b0, b1;
  bool bounded;
  int a_begin = 0, a_end = n_slabs;

#pragma unroll
  for (int m = 0; m < kSfStrip; m++)
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
      sh.acc[m][r][threadIdx.x] = 0.0;
      acc[m][r] = 0.0f;
    }
  bounded = sf_ray_line < XMAJOR > (sf, sa, c, sn, a0, a1) &&
      sf_ray_line < XMAJOR > (sf, sb, c, sn, b0, b1);
  if (BAND && !XMAJOR) {
    a_begin = sf.j0;
    a_end = sf.j0 + sf.jn;
  } else if (BAND && bounded) {
    sf_band_slabs (sf, first_slab, n_slabs, a0, a1, b0, b1, a_begin, a_end);
  }

  for (int slab0 = a_begin; slab0 < a_end; slab0 += kSfProjWarps) {
    const int a = slab0 + warp;
    const float pos = first_slab + a * sf.dx;
    int lo_b = 0, hi_b = -1;

    if (a < a_end) {
      lo_b = 0;
      hi_b = n_across - 1;
      if (bounded) {
        const float e1 = a0 + a1 * (pos - h), e2 = a0 + a1 * (pos + h);
        const float e3 = b0 + b1 * (pos - h), e4 = b0 + b1 * (pos + h);
        const float lo = fminf (fminf (e1, e2), fminf (e3, e4)) - h;
        const float hi = fmaxf (fmaxf (e1, e2), fmaxf (e3, e4)) + h;

        lo_b = max (0, (int) ceilf ((lo - first_across) / sf.dx - 1e-3f));
        hi_b = min (n_across - 1,
            (int) floorf ((hi - first_across) / sf.dx + 1e-3f));
      }
      if (BAND && XMAJOR) {
        lo_b = max (lo_b, sf.j0);
        hi_b = min (hi_b, sf.j0 + sf.jn - 1);
      }
    }
    for (int pass = 0;; pass++) {
      const int b = lo_b + pass * 32 + lane;
      const int i = XMAJOR ? a : b, j = XMAJOR ? b : a;
      float w[kSfStrip];
      SfAxial ax = { 0.0f, 1.0f };
      bool valid = b <= hi_b;
      unsigned ballot;
      int offset = 0, total = 0;

      if (valid) {
        const float xc = sf_voxel_centre (sf.x0, sf.dx, i);
        const float yc = sf_voxel_centre (sf.y0, sf.dx, j);

        valid = !sf_masked (sf, xc, yc);
        if (valid) {
          const SfColumn col = sf_column (sf, xc, yc, c, sn);

          valid = col.t3 > sa && col.t0 < sb;
          ax = sf_axial (sf, col.mag, sf.zlv);
#pragma unroll
          for (int m = 0; m < kSfStrip; m++)
            w[m] = u_first + m < u_end ? __fmul_rn (col.lphi,
                sf_trapezoid (col, sf_cell_edge (sf, u_first + m),
                    sf_cell_edge (sf, u_first + m + 1))) : 0.0f;
        }
      }
      ballot = __ballot_sync (0xffffffffu, valid);
      if (lane == 0)
        sh.count[warp] = __popc (ballot);
      __syncthreads ();
#pragma unroll
      for (int q = 0; q < kSfProjWarps; q++) {
        offset += q < warp ? sh.count[q] : 0;
        total += sh.count[q];
      }
      if (valid) {
        const int at = offset + __popc (ballot & ((1u << lane) - 1u));

#pragma unroll
        for (int m = 0; m < kSfStrip; m++)
          sh.w[m][at] = w[m];
        sh.ax[at] = ax;
        sh.ib[at] = 1.0f / ax.b;
        sh.col[at] = (j - sf.j0) * sf.nx + i;
      }
      __syncthreads ();

      for (int q = 0; q < total; q++) {
        const SfAxial qa = sh.ax[q];
        float g[ROWS];

#pragma unroll
        for (int r = 0; r < ROWS; r++)
          g[r] = 0.0f;
        if (rho + (float) ROWS > qa.a && rho < sf_slice_row (qa, sf.nz)) {
          const float *vz = volz + (size_t) sh.col[q] * sf.zn;
          int k;

          /* the slice holding the lane's first row edge (the guess is off
           * by at most one) */
          k = (int) floorf ((rho - qa.a) * sh.ib[q]);
          k = min (max (k, 0), sf.nz - 1);
          k -= k > 0 && sf_slice_row (qa, k) > rho;
          k += k < sf.nz - 1 && sf_slice_row (qa, k + 1) <= rho;
          if (window) {
            /* a row spans less than two slices: slices k, k + 1, k + 2
             * with x_k <= row edge < x_(k+1) (or the volume starts above
             * it); the overlaps are the backprojector's floats */
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
              const float r_lo = rho + (float) r, r_hi = r_lo + 1.0f;
              const float x0 = sf_slice_row (qa, k);
              const float x1 = sf_slice_row (qa, k + 1);
              const float x2 = sf_slice_row (qa, k + 2);
              const float w0 = fmaxf (0.0f, fminf (r_hi, x1) -
                  fmaxf (r_lo, x0));
              const float w1 = k + 1 < sf.nz ? fmaxf (0.0f, fminf (r_hi,
                      x2) - x1) : 0.0f;
              const float w2 = k + 2 < sf.nz ? fmaxf (0.0f, r_hi - x2) :
                  0.0f;
              float sum = __fmul_rn (w0, __ldg (vz + k));

              sum = __fmaf_rn (w1, __ldg (vz + min (k + 1,
                          sf.nz - 1)), sum);
              sum = __fmaf_rn (w2, __ldg (vz + min (k + 2,
                          sf.nz - 1)), sum);
              g[r] = sum;
              k += (x1 <= r_hi) + (x2 <= r_hi);
              k = min (k, sf.nz - 1);
            }
          } else {
            float x_lo = sf_slice_row (qa, k), x_hi = sf_slice_row (qa, k + 1);
            float vk = __ldg (vz + k);

#pragma unroll
            for (int r = 0; r < ROWS; r++) {
              const float r_lo = rho + (float) r, r_hi = r_lo + 1.0f;

              for (;;) {
                const float seg = fminf (r_hi, x_hi) - fmaxf (r_lo, x_lo);

                if (seg > 0.0f)
                  g[r] = __fmaf_rn (seg, vk, g[r]);
                if (x_hi >= r_hi || k >= sf.nz - 1)
                  break;
                k++;
                x_lo = x_hi;
                x_hi = sf_slice_row (qa, k + 1);
                vk = __ldg (vz + k);
              }
            }
          }
        }
#pragma unroll
        for (int m = 0; m < kSfStrip; m++) {
          const float wm = sh.w[m][q];

#pragma unroll
          for (int r = 0; r < ROWS; r++)
            acc[m][r] = __fmaf_rn (wm, g[r], acc[m][r]);
        }
      }
      /* another pass while any slab of the group has candidates left */
      if (!__syncthreads_or (lo_b + (pass + 1) * 32 <= hi_b))
        break;
    }
    if (((slab0 - a_begin) / kSfProjWarps + 1) % kSfProjFold == 0
        || slab0 + kSfProjWarps >= a_end) {
#pragma unroll
      for (int m = 0; m < kSfStrip; m++)
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
          sh.acc[m][r][threadIdx.x] += acc[m][r];
          acc[m][r] = 0.0f;
        }
    }
  }
#pragma unroll
  for (int r = 0; r < ROWS; r++) {
    const int v = r_first + r;

    if (v < sf.nv) {
#pragma unroll
      for (int m = 0; m < kSfStrip; m++) {
        const int u = u_first + m;

        if (u < u_end) {
          /* a band adds its share to the others' */
          float *at = proj + ((size_t) slot * sf.nv + v) * sf.nu + u;
          const float x = __fmul_rn ((float) sh.acc[m][r][threadIdx.x],
              sf_cell_factor (sf, u, v));

          *at = BAND ? __fadd_rn (*at, x) : x;
        }
      }
    }
  }
}

/* Launch views [0, n_x) of the batch's order run mostly along x, the rest
 * along y: one launch for both, so neither leaves a tail of its own.
 * HELICAL: each view has an axial offset of its own (zlvs), put in the
 * block's copy of the geometry; a circular orbit's are all zlv, and its
 * code stays as it was. BAND: volz holds the rows of columns [j0, j0 +
 * jn) only (a band of the streamed volume), whose share of each ray is
 * added to proj instead of written; four blocks an SM (its tests took two
 * registers more than the 128 that allow four; 0, no minimum, leaves the
 * resident instances as they were). */
template < int ROWS, bool HELICAL, bool BAND > __global__ void
__launch_bounds__ (kSfProjThreads, BAND ? 4 : 0)
sf_project_kernel (const SfConst sf, const float2 * __restrict__ views,
    const int *__restrict__ slots, const float *__restrict__ volz, int n_x,
    int window, float *proj)
{
  __shared__ SfProjShared < ROWS > sh;
  const int slot = __ldg (slots + blockIdx.z);
  const float2 cs = __ldg (views + slot);
  SfConst sv = sf;

  if (HELICAL)
    sv.zlv = __ldg (sf.zlvs + slot);
  if ((int) blockIdx.z < n_x)
    sf_project_block < true, ROWS, BAND > (sv, cs.x, cs.y, slot, volz, proj,
        sh, window);
  else
    sf_project_block < false, ROWS, BAND > (sv, cs.x, cs.y, slot, volz, proj,
        sh, window);
}

/* Scales projections by l_θ / du, the cell side of Aᵀ, into rows of
 * bpitch floats: nv rows a view, the first of them detector row row0 (a
 * band of rows when streamed), `ipitch` floats a row of in (nu; bpitch:
 * in place). */
__global__ void
sf_scale_kernel (const SfConst sf, const float *in, float *out, int n_views,
    int row0, int ipitch)
{
  int u, v;

  if (!grid_xy (sf.nu, sf.nv, u, v) || (int) blockIdx.z >= n_views)
    return;
  {
    const size_t row = (size_t) blockIdx.z * sf.nv + v;

    out[row * sf.bpitch + u] = __fmul_rn (in[row * ipitch + u],
        sf_cell_factor (sf, u, row0 + v));
  }
}

/* n slices x fastest (in) to z fastest (a column's slices contiguous,
 * `stride` apart, from out), for the projector: a 32 × 32 tile of (x, z)
 * for one y through shared memory. The whole volume: n = stride = nz; a
 * part of a slab: out at the part's first slice in the slab. */
__global__ void
sf_zfirst_kernel (const SfConst sf, const float *__restrict__ in,
    float *__restrict__ out, int n, int stride)
{
  __shared__ float tile[32][33];
  const int j = blockIdx.z;
  const int i0 = blockIdx.x * 32, k0 = blockIdx.y * 32;

  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int k = k0 + y, i = i0 + threadIdx.x;

    if (k < n && i < sf.nx)
      tile[y][threadIdx.x] = in[((size_t) k * sf.ny + j) * sf.nx + i];
  }
  __syncthreads ();
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int i = i0 + y, k = k0 + threadIdx.x;

    if (k < n && i < sf.nx)
      out[((size_t) j * sf.nx + i) * stride + k] = tile[threadIdx.x][y];
  }
}

/* acc += x, n floats (a streamed backprojection's view batches). */
__global__ void
sf_add_kernel (float *acc, const float *__restrict__ x, size_t n)
{
  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
      i += (size_t) gridDim.x * blockDim.x)
    acc[i] = __fadd_rn (acc[i], x[i]);
}

constexpr int kSfBackSlab = 16;         /* slices a backprojector thread */
constexpr int kSfBackThreads = 256;
constexpr int kSfBackFold = 8;          /* views summed in float before double */
constexpr int kSfBackWindow = 3;        /* rows a slice may touch (b < 2) */

/* floor (x) + kSfFloorMagic, exactly, for |x| < 2^22: rounding x + 1.5·2^23
 * down lands on an integer of the binade where floats are 1 apart, so the
 * integer is in the low bits (two such values' bits differ by their
 * floors' difference) and subtracting kSfFloorMagic − c gives floor + c.
 * Adds and integer ops instead of floorf and float-to-int conversions,
 * which Hopper issues at an eighth of the rate. */
constexpr float kSfFloorMagic = 12582912.0f;

__device__ __forceinline__ float
sf_floor_magic (float x)
{
  return __fadd_rd (x, kSfFloorMagic);
}

/* floor (x) as an int the same way, x clamped to ±2^21 first (callers
 * clamp the result to a smaller range anyway). */
__device__ __forceinline__ int
sf_floor_int (float x)
{
  const float y = sf_floor_magic (fminf (fmaxf (x, -2097152.0f),
          2097152.0f));

  return __float_as_int (y) - __float_as_int (kSfFloorMagic);
}

/* a − b clamped to [0, 1] in one instruction. */
__device__ __forceinline__ float
sf_sub_sat (float a, float b)
{
  float r;

  asm ("sub.rn.sat.f32 %0, %1, %2;":"=f" (r):"f" (a), "f" (b));
  return r;
}

/* The cells [t0, t3] of a column's footprint touches (the guesses
 * corrected on the edges) and their F1; false when none. */
template < int CELLS > __device__ __forceinline__ bool
sf_column_cells (const SfConst & sf, const SfColumn & col, int &u0, int &u1,
    float (&f1)[CELLS])
{
  float e0;

  u0 = max (0, sf_floor_int ((col.t0 - sf.ul0) * sf.idu));
  u1 = min (sf.nu - 1, sf_floor_int ((col.t3 - sf.ul0) * sf.idu));
  if (u0 > 0 && u0 <= sf.nu - 1 && sf_cell_edge (sf, u0) > col.t0)
    u0--;
  if (u1 >= 0 && u1 < sf.nu - 1 && sf_cell_edge (sf, u1 + 1) < col.t3)
    u1++;
  if (u0 > u1)
    return false;
  /* the edges' indices as floats by exact adds: one conversion a view */
  e0 = (float) u0;
#pragma unroll
  for (int m = 0; m < CELLS; m++)
    f1[m] = u0 + m <= u1 ? sf_trapezoid (col,
        __fmaf_rn (__fadd_rn (e0, (float) m), sf.du, sf.ul0),
        __fmaf_rn (__fadd_rn (e0, (float) (m + 1)), sf.du, sf.ul0)) : 0.0f;
  return true;
}

/* Σ_u F1[u] · p[row][u] over the column's cells: CELLS values kept in
 * registers when the footprint covers no more, else F1 computed on the
 * way; 0 for rows off the detector. */
template < int CELLS > __device__ __forceinline__ float
sf_row_sum (const SfConst & sf, const float *__restrict__ p, int row,
    const float (&f1)[CELLS], int u0, int u1, const SfColumn & col)
{
  const float *r = p + (size_t) row * sf.bpitch;
  float sum = 0.0f;

  if (row < 0 || row >= sf.nv)
    return 0.0f;
  if (u1 - u0 < CELLS) {
#pragma unroll
    for (int m = 0; m < CELLS; m++)
      if (u0 + m <= u1)
        sum = __fmaf_rn (f1[m], __ldg (r + u0 + m), sum);
  } else {
    for (int u = u0; u <= u1; u++)
      sum = __fmaf_rn (sf_trapezoid (col, sf_cell_edge (sf, u),
              sf_cell_edge (sf, u + 1)), __ldg (r + u), sum);
  }
  return sum;
}

/* What a backprojector lane needs of a column in a view. */
template < int CELLS > struct SfBackView
{
  float lphi;
  SfAxial ax;
  float f1[CELLS];
  int u0, u1;
  bool hit;                     /* the footprint touches the detector */
};

template < int CELLS > __device__ __forceinline__ void
sf_back_view (const SfConst & sf, const float2 * __restrict__ views,
    int view, float xc, float yc, SfBackView < CELLS > &bv)
{
  const float2 cs = __ldg (views + view);
  const SfColumn col = sf_column (sf, xc, yc, cs.x, cs.y);

  bv.lphi = col.lphi;
  bv.ax = sf_axial (sf, col.mag, __ldg (sf.zlvs + view));
  bv.hit = sf_column_cells (sf, col, bv.u0, bv.u1, bv.f1);
}

/* The other half-warp's view (lanes l and l ^ 16 hold the same column). */
template < int CELLS > __device__ __forceinline__ void
sf_back_view_swap (const SfBackView < CELLS > &in, SfBackView < CELLS > &out)
{
  const unsigned all = 0xffffffffu;

  out.lphi = __shfl_xor_sync (all, in.lphi, 16);
  out.ax.a = __shfl_xor_sync (all, in.ax.a, 16);
  out.ax.b = __shfl_xor_sync (all, in.ax.b, 16);
#pragma unroll
  for (int c = 0; c < CELLS; c++)
    out.f1[c] = __shfl_xor_sync (all, in.f1[c], 16);
  out.u0 = __shfl_xor_sync (all, in.u0, 16);
  out.u1 = __shfl_xor_sync (all, in.u1, 16);
  out.hit = __shfl_xor_sync (all, (int) in.hit, 16);
}

/* a or b, field by field (a select of whole structs would go through
 * local memory). */
template < int CELLS > __device__ __forceinline__ SfBackView < CELLS >
sf_back_view_pick (bool take_a, const SfBackView < CELLS > &a,
    const SfBackView < CELLS > &b)
{
  SfBackView < CELLS > v;

  v.lphi = take_a ? a.lphi : b.lphi;
  v.ax.a = take_a ? a.ax.a : b.ax.a;
  v.ax.b = take_a ? a.ax.b : b.ax.b;
#pragma unroll
  for (int c = 0; c < CELLS; c++)
    v.f1[c] = take_a ? a.f1[c] : b.f1[c];
  v.u0 = take_a ? a.u0 : b.u0;
  v.u1 = take_a ? a.u1 : b.u1;
  v.hit = take_a ? a.hit : b.hit;
  return v;
}

/* Voxel-driven backprojector: lanes l and l + 16 of a warp take the same
 * voxel column, each kSfBackSlab slices of it, and the views go by pairs:
 * each lane computes the column's footprint, F1 and axial map for one
 * view of the pair, and the two swap them (a shuffle), which halves that
 * per-view cost. Per view the lane then stages the transaxial sums
 * Σ_u F1 p of the detector rows its slices cover, once each, in its slots
 * of shared memory, and every slice takes its exact overlaps (in rows)
 * with the three rows from the one holding its lower edge, with no branch
 * (a magnified slice spans less than two rows: checked at launch; the
 * walking kernel below serves taller slices). The overlaps are the very
 * floats the projector computes: min(upper edges) − max(lower edges) of
 * the same slice and row edges (the second and third rows' as saturated
 * differences, the same floats since a slice ends below the third row's
 * top). Float sums over kSfBackFold views go into double sums.
 *
 * A warp's 16 columns are a group of one voxel row (groups: x of the
 * first column, y), so that with the field-of-view mask only the columns
 * of each row inside the cylinder are visited; the blocks' eight groups
 * are neighbours in x or y. SLAB: slices [z0, z0 + zn) only, into vol,
 * which holds those. */
template < int CELLS, bool SLAB > __global__ void
__launch_bounds__ (kSfBackThreads, 3)
sf_backproject_kernel (const SfConst sf, const float2 * __restrict__ views,
    const float *__restrict__ proj, int n_views, int row_slots,
    const int2 * __restrict__ groups, int n_groups, float *vol)
{
  extern __shared__ double s_dyn[];
  double *s_acc = s_dyn;                        /* [kSfBackSlab][threads] */
  float *s_p = (float *) (s_dyn + kSfBackSlab * kSfBackThreads);
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int half = threadIdx.x >> 4;
  const int group = blockIdx.x * blockDim.y + threadIdx.y;
  const int2 first = group < n_groups ? __ldg (groups + group) :
      make_int2 (0, 0);
  const int i = first.x + (threadIdx.x & 15);
  const int j = first.y;
  const bool column = group < n_groups && i < sf.nx;
  const int kl = (blockIdx.z * 2 + half) * kSfBackSlab;
  const int kb = (SLAB ? sf.z0 : 0) + kl;
  const int n_slices = max (0, min (kSfBackSlab, SLAB ? sf.zn - kl :
          sf.nz - kb));
  const float xc = sf_voxel_centre (sf.x0, sf.dx, i);
  const float yc = sf_voxel_centre (sf.y0, sf.dx, j);
  const float rows_lo = (float) (-sf.rc), rows_hi = (float) (sf.nv - sf.rc);
  /* lanes off the volume or the field of view still take part in the
   * swaps; they only skip the work */
  const bool live = column && !sf_masked (sf, xc, yc);
  /* slice edges' indices as floats, by exact adds to the first; a slab
   * the volume ends in still takes kSfBackSlab slices (their rows staged,
   * the sums of the missing ones never stored), so the loop has no test */
  const float k_first = (float) kb;
  float acc[kSfBackSlab];

#pragma unroll
  for (int n = 0; n < kSfBackSlab; n++) {
    acc[n] = 0.0f;
    s_acc[n * kSfBackThreads + tid] = 0.0;
  }
  if (!__any_sync (0xffffffffu, live))
    n_views = 0;
  for (int pair = 0; pair < n_views; pair += 2) {
    SfBackView < CELLS > mine, other;

    mine.hit = false;
    if (live && pair + half < n_views)
      sf_back_view (sf, views, pair + half, xc, yc, mine);
    sf_back_view_swap (mine, other);
#pragma unroll
    for (int p = 0; p < 2; p++) {
      const SfBackView < CELLS > bv = sf_back_view_pick < CELLS > (p == half,
          mine, other);
      const float *pv = proj + (size_t) (pair + p) * sf.nv * sf.bpitch;
      const float x_first = sf_slice_row (bv.ax, kb);
      const float x_last = sf_slice_row (bv.ax, kb + n_slices);

      if (live && bv.hit && pair + p < n_views && n_slices > 0
          && x_first < rows_hi
          && x_last > rows_lo) {
        /* rows (from rc) floor(x_first) .. floor(x_end) + 2, x_end the
         * edge kSfBackSlab slices up */
        const float y_first = sf_floor_magic (x_first);
        const int base = __float_as_int (y_first) -
            __float_as_int (kSfFloorMagic);
        const int r0 = base + sf.rc;
        const int n_need = __float_as_int (sf_floor_magic (sf_slice_row
                (bv.ax, kb + kSfBackSlab))) - __float_as_int (y_first) + 1;
        const int n_rows = min (n_need + kSfBackWindow - 1, row_slots);
        /* rows past floor(x_end) only ever weigh 0: zeros, not loads */
        const int m_lo = max (0, -r0), m_hi = min (n_need, sf.nv - r0);
        /* a row's slot from the floor's bits, in one multiply-add (the
         * unsigned wrap cancels) */
        const unsigned slot0 = (unsigned) tid - (unsigned) __float_as_int
            (y_first) * (unsigned) kSfBackThreads;
        float x_lo = x_first, y_lo = y_first;

        /* the rows on the detector: CELLS loads a row at clamped
         * addresses (weights 0 past the footprint) with no test; the rest
         * 0 */
        if (bv.u1 - bv.u0 < CELLS) {
          /* CELLS loads a row from one address (the row's padding holds
           * the cells past the detector's edge, weighing 0 anyway) */
          const float *row = pv + (size_t) (r0 + m_lo) * sf.bpitch + bv.u0;

          for (int m = m_lo; m < m_hi; m++, row += sf.bpitch) {
            float sum = __fmul_rn (bv.f1[0], __ldg (row));

#pragma unroll
            for (int c = 1; c < CELLS; c++)
              sum = __fmaf_rn (bv.f1[c], __ldg (row + c), sum);
            s_p[m * kSfBackThreads + tid] = sum;
          }
        } else {
          /* a footprint wider than CELLS cells (not in the geometries the
           * launch chose this CELLS for, but exact anyway): F1 on the way */
          const float2 cs = __ldg (views + pair + p);
          const SfColumn col = sf_column (sf, xc, yc, cs.x, cs.y);

          for (int m = m_lo; m < m_hi; m++)
            s_p[m * kSfBackThreads + tid] = sf_row_sum (sf, pv, r0 + m,
                bv.f1, bv.u0, bv.u1, col);
        }
        for (int m = 0; m < m_lo; m++)
          s_p[m * kSfBackThreads + tid] = 0.0f;
        for (int m = max (m_hi, m_lo); m < n_rows; m++)
          s_p[m * kSfBackThreads + tid] = 0.0f;
#pragma unroll
        for (int n = 0; n < kSfBackSlab; n++) {
          /* rows jf, jf + 1, jf + 2 with jf = floor (x_lo) and
           * x_hi < jf + 3 */
          const float x_hi = __fmaf_rn (__fadd_rn (k_first,
                  (float) (n + 1)), bv.ax.b, bv.ax.a);
          const float *pq = s_p + (slot0 + (unsigned) __float_as_int (y_lo) *
              (unsigned) kSfBackThreads);
          const float jf1 = __fsub_rn (y_lo, kSfFloorMagic - 1.0f);
          const float jf2 = __fsub_rn (y_lo, kSfFloorMagic - 2.0f);
          const float w0 = __fsub_rn (fminf (x_hi, jf1), x_lo);
          const float w1 = sf_sub_sat (x_hi, jf1);
          const float w2 = sf_sub_sat (x_hi, jf2);
          float sum = __fmul_rn (w0, pq[0]);

          sum = __fmaf_rn (w1, pq[kSfBackThreads], sum);
          sum = __fmaf_rn (w2, pq[2 * kSfBackThreads], sum);
          acc[n] = __fmaf_rn (bv.lphi, sum, acc[n]);
          x_lo = x_hi;
          y_lo = sf_floor_magic (x_hi);
        }
      }
    }
    if ((pair + 2) % kSfBackFold == 0 || pair + 2 >= n_views) {
#pragma unroll
      for (int n = 0; n < kSfBackSlab; n++) {
        s_acc[n * kSfBackThreads + tid] += acc[n];
        acc[n] = 0.0f;
      }
    }
  }
  if (column)
    for (int n = 0; n < n_slices; n++)
      vol[((size_t) (kl + n) * sf.ny + j) * sf.nx + i] =
          (float) s_acc[n * kSfBackThreads + tid];
}

/* The backprojector for slices taller than two detector rows (coarse
 * slices, fine rows): the same overlaps, the rows walked one by one with
 * the slices. */
template < int CELLS, bool SLAB > __global__ void
__launch_bounds__ (kSfBackThreads)
sf_backproject_walk_kernel (const SfConst sf,
    const float2 * __restrict__ views, const float *__restrict__ proj,
    int n_views, float *vol)
{
  __shared__ double s_acc[kSfBackSlab][kSfBackThreads];
  __shared__ float s_part[kSfBackSlab][kSfBackThreads];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int kl = blockIdx.z * kSfBackSlab;
  const int kb = (SLAB ? sf.z0 : 0) + kl;
  const int n_slices = min (kSfBackSlab, SLAB ? sf.zn - kl : sf.nz - kb);
  const float xc = sf_voxel_centre (sf.x0, sf.dx, i);
  const float yc = sf_voxel_centre (sf.y0, sf.dx, j);
  const float rows_lo = (float) (-sf.rc), rows_hi = (float) (sf.nv - sf.rc);

  if (i >= sf.nx || j >= sf.ny)
    return;
  for (int n = 0; n < kSfBackSlab; n++) {
    s_acc[n][tid] = 0.0;
    s_part[n][tid] = 0.0f;
  }
  if (sf_masked (sf, xc, yc))
    n_views = 0;
  for (int view = 0; view < n_views; view++) {
    const float2 cs = __ldg (views + view);
    const SfColumn col = sf_column (sf, xc, yc, cs.x, cs.y);
    const SfAxial ax = sf_axial (sf, col.mag, __ldg (sf.zlvs + view));
    const float *p = proj + (size_t) view * sf.nv * sf.bpitch;
    float f1[CELLS], x_lo, x_hi, r_lo, pr;
    int u0, u1, r;

    x_lo = sf_slice_row (ax, kb);
    if (x_lo < rows_hi && sf_slice_row (ax, kb + n_slices) > rows_lo
        && sf_column_cells (sf, col, u0, u1, f1)) {
      r_lo = floorf (x_lo);
      r = (int) r_lo + sf.rc;
      pr = sf_row_sum (sf, p, r, f1, u0, u1, col);
      for (int n = 0; n < n_slices; n++) {
        float sum = 0.0f;

        x_hi = sf_slice_row (ax, kb + n + 1);
        for (;;) {
          const float seg = fminf (x_hi, r_lo + 1.0f) - fmaxf (x_lo, r_lo);

          if (seg > 0.0f)
            sum = __fmaf_rn (seg, pr, sum);
          if (r_lo + 1.0f >= x_hi || r >= sf.nv - 1)
            break;
          r++;
          r_lo += 1.0f;
          pr = sf_row_sum (sf, p, r, f1, u0, u1, col);
        }
        s_part[n][tid] = __fmaf_rn (col.lphi, sum, s_part[n][tid]);
        x_lo = x_hi;
      }
    }
    if ((view + 1) % kSfBackFold == 0 || view + 1 == n_views)
      for (int n = 0; n < n_slices; n++) {
        s_acc[n][tid] += s_part[n][tid];
        s_part[n][tid] = 0.0f;
      }
  }
  for (int n = 0; n < n_slices; n++)
    vol[((size_t) (kl + n) * sf.ny + j) * sf.nx + i] = (float) s_acc[n][tid];
}

/* One view's line integrals to detector pixels, in double as the CPU
 * path computes them (CqSfPixels). */
__global__ void
sf_pixels_kernel (const float *li, int nu, int nv, CqSfPixels p,
    unsigned char *dst, size_t pitch)
{
  int u, v;
  double integral, x;

  if (!grid_xy (nu, nv, u, v))
    return;
  integral = p.mu_scale * (double) li[(size_t) v * nu + u];
  if (p.counts) {
    x = p.photons * exp (-integral);
    if (p.bytes == 1)
      x = 255.0 * x / p.photons;
  } else {
    x = integral / p.integral_scale;
  }
  x = fmin (fmax (floor (x + 0.5), 0.0), p.levels);
  if (p.bytes == 1)
    dst[(size_t) v * pitch + u] = (unsigned char) x;
  else
    ((unsigned short *) (dst + (size_t) v * pitch))[u] = (unsigned short) x;
}

}                               /* namespace cq */

#endif /* CQ_SFPROJECT_KERNELS_CUH */
