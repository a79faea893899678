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

namespace cq
{

constexpr int kSfMaxViews = 2048;       /* views a launch batch */
#ifndef CQ_SF_SLAB
#define CQ_SF_SLAB 16
#endif
constexpr int kSfSlab = CQ_SF_SLAB;     /* voxels along z a backprojector thread */
constexpr int kSfCachedCells = 8;       /* F1 values kept in registers */

struct SfConst
{
  float R, D;                   /* source-origin, source-detector */
  float dx, dz, du, dv;
  float x0, y0, z0;             /* centre of voxel (0, 0, 0) */
  float u0, v0;                 /* centre of cell (0, 0) */
  int nx, ny, nz, nu, nv;
};

__constant__ SfConst c_sf;
__constant__ float c_cos[kSfMaxViews], c_sin[kSfMaxViews];
/* projector launches: launch index z -> the view's slot in the batch */
__constant__ int c_view_slot[kSfMaxViews];

/* ∫ of the trapezoid τ0..τ3 over [lo, hi]; edges written as width × mean
 * height so that a nearly vertical edge stays exact in float. */
__device__ __forceinline__ float
sf_trapezoid (float t0, float t1, float t2, float t3, float lo, float hi)
{
  float sum = 0.0f, b1, b2;

  b1 = fmaxf (lo, t0);
  b2 = fminf (hi, t1);
  if (b2 > b1)
    sum += (b2 - b1) * (t1 > t0 ? (0.5f * (b1 + b2) - t0) / (t1 - t0) :
        0.5f);
  b1 = fmaxf (lo, t1);
  b2 = fminf (hi, t2);
  if (b2 > b1)
    sum += b2 - b1;
  b1 = fmaxf (lo, t2);
  b2 = fminf (hi, t3);
  if (b2 > b1)
    sum += (b2 - b1) * (t3 > t2 ? (t3 - 0.5f * (b1 + b2)) / (t3 - t2) :
        0.5f);
  return sum;
}

/* A voxel column's footprint in one view: sorted τ, depth q_c, l_φ0. */
struct SfColumn
{
  float t0, t1, t2, t3;
  float qc, lphi;
};

__device__ __forceinline__ SfColumn
sf_column (float xc, float yc, float c, float s)
{
  const float h = 0.5f * c_sf.dx;
  const float pc = xc * c + yc * s, qc = -xc * s + yc * c;
  const float hp = h * (c + s), hm = h * (c - s);
  /* corners (σx h, σy h): p = pc + σx h c + σy h s,
   * q = qc − σx h s + σy h c */
  float ta = __fdividef (c_sf.D * (pc - hp), c_sf.R - (qc - hm));
  float tb = __fdividef (c_sf.D * (pc + hm), c_sf.R - (qc - hp));
  float tc = __fdividef (c_sf.D * (pc - hm), c_sf.R - (qc + hp));
  float td = __fdividef (c_sf.D * (pc + hp), c_sf.R - (qc + hm));
  float lo1 = fminf (ta, tb), hi1 = fmaxf (ta, tb);
  float lo2 = fminf (tc, td), hi2 = fmaxf (tc, td);
  SfColumn col;

  col.t0 = fminf (lo1, lo2);
  col.t3 = fmaxf (hi1, hi2);
  col.t1 = fminf (fmaxf (lo1, lo2), fminf (hi1, hi2));
  col.t2 = fmaxf (fmaxf (lo1, lo2), fminf (hi1, hi2));
  col.qc = qc;
  {
    /* φ0 = β + α, tan α = p_c / (R − q_c) */
    float a = c_sf.R - qc, inv = rsqrtf (a * a + pc * pc);
    float ca = a * inv, sa = pc * inv;
    float cphi = c * ca - s * sa, sphi = s * ca + c * sa;

    col.lphi = c_sf.dx / fmaxf (fabsf (cphi), fabsf (sphi));
  }
  return col;
}

/* F2 · dv of voxel slice k at magnification mag over the cell [ta, tb]. */
__device__ __forceinline__ float
sf_axial (float mag, int k, float ta, float tb)
{
  const float z = c_sf.z0 + k * c_sf.dz;
  const float lo = mag * (z - 0.5f * c_sf.dz), hi = mag * (z + 0.5f * c_sf.dz);

  return fmaxf (0.0f, fminf (tb, hi) - fmaxf (ta, lo));
}

__device__ __forceinline__ float
sf_theta (float s, float t)
{
  const float d2 = c_sf.D * c_sf.D;

  return sqrtf (s * s + t * t + d2) * rsqrtf (s * s + d2);
}

/* Slices k whose axial footprint at magnification mag can touch [ta, tb]. */
__device__ __forceinline__ void
sf_slices (float mag, float ta, float tb, int &k0, int &k1)
{
  const float zlo = ta / mag - 0.5f * c_sf.dz, zhi = tb / mag + 0.5f * c_sf.dz;

  k0 = max (0, (int) ceilf ((zlo - c_sf.z0) / c_sf.dz - 1e-3f));
  k1 = min (c_sf.nz - 1, (int) floorf ((zhi - c_sf.z0) / c_sf.dz + 1e-3f));
}

/* Where the ray through detector coordinate s crosses the line x = a
 * (XMAJOR; the y of the crossing) or y = a (the x): from p = s (R − q) / D,
 * linear in a, so a ray is two numbers: cross = c0 + c1 · a. */
template < bool XMAJOR > __device__ __forceinline__ bool
sf_ray_line (float s, float c, float sn, float &c0, float &c1)
{
  const float k = s / c_sf.D;
  float den, q0, q1;

  if (XMAJOR) {
    den = k * c + sn;           /* x = p c − q sn */
    q0 = k * c_sf.R * c / den;
    q1 = -1.0f / den;
    c0 = k * c_sf.R * sn + q0 * (c - k * sn);
    c1 = q1 * (c - k * sn);
  } else {
    den = c - k * sn;           /* y = p sn + q c */
    q0 = -k * c_sf.R * sn / den;
    q1 = 1.0f / den;
    c0 = k * c_sf.R * c - q0 * (k * c + sn);
    c1 = -q1 * (k * c + sn);
  }
  return fabsf (den) > 1e-4f;
}

/* H100 sweep, 256³ x 64 views: 2 rows 18.1 ms, 4 rows 11.9, 8 rows 12.5,
 * 16 rows 20.0 (registers) */
#ifndef CQ_SF_ROWS
#define CQ_SF_ROWS 4
#endif
constexpr int kSfRows = CQ_SF_ROWS;     /* detector rows a projector thread takes */

/* Ray-driven projector: a thread takes cell u and kSfRows cells along v of
 * launch view z. XMAJOR: the rays of these views run mostly along x; the
 * walk goes slab by slab along x and visits the voxels of each slab that
 * the cells' ray bundle can touch. The transaxial footprint of a voxel
 * column serves all the thread's rows; each slice is fetched once. */
template < bool XMAJOR > __global__ void
__launch_bounds__ (256)
sf_project_kernel (cudaTextureObject_t vol, int slot_base, float *proj)
{
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int vb = (blockIdx.y * blockDim.y + threadIdx.y) * kSfRows;
  const int slot = c_view_slot[slot_base + blockIdx.z];
  const float c = c_cos[slot], sn = c_sin[slot];
  const float h = 0.5f * c_sf.dx, hz = 0.5f * c_sf.dz;
  const int n_slabs = XMAJOR ? c_sf.nx : c_sf.ny;
  const int n_across = XMAJOR ? c_sf.ny : c_sf.nx;
  const float first_slab = XMAJOR ? c_sf.x0 : c_sf.y0;
  const float first_across = XMAJOR ? c_sf.y0 : c_sf.x0;
  float s, sa, sb, ta[kSfRows], tb[kSfRows], acc[kSfRows];
  float a0, a1, b0, b1, t_lo, t_hi;
  bool bounded;
  int rows;

  if (u >= c_sf.nu || vb >= c_sf.nv)
    return;
  rows = min (kSfRows, c_sf.nv - vb);
  s = c_sf.u0 + u * c_sf.du;
  sa = s - 0.5f * c_sf.du;
  sb = s + 0.5f * c_sf.du;
#pragma unroll
  for (int n = 0; n < kSfRows; n++) {
    const float t = c_sf.v0 + (vb + n) * c_sf.dv;

    ta[n] = t - 0.5f * c_sf.dv;
    tb[n] = t + 0.5f * c_sf.dv;
    acc[n] = 0.0f;
  }
  t_lo = ta[0];
  t_hi = tb[rows - 1];
  bounded = sf_ray_line < XMAJOR > (sa, c, sn, a0, a1) &&
      sf_ray_line < XMAJOR > (sb, c, sn, b0, b1);

  for (int a = 0; a < n_slabs; a++) {
    const float pos = first_slab + a * c_sf.dx;
    int lo_b = 0, hi_b = n_across - 1;

    if (bounded) {
      const float e1 = a0 + a1 * (pos - h), e2 = a0 + a1 * (pos + h);
      const float e3 = b0 + b1 * (pos - h), e4 = b0 + b1 * (pos + h);
      const float lo = fminf (fminf (e1, e2), fminf (e3, e4)) - h;
      const float hi = fmaxf (fmaxf (e1, e2), fmaxf (e3, e4)) + h;

      lo_b = max (0, (int) ceilf ((lo - first_across) / c_sf.dx - 1e-3f));
      hi_b = min (n_across - 1,
          (int) floorf ((hi - first_across) / c_sf.dx + 1e-3f));
    }
    for (int b = lo_b; b <= hi_b; b++) {
      const int i = XMAJOR ? a : b, j = XMAJOR ? b : a;
      const SfColumn col = sf_column (c_sf.x0 + i * c_sf.dx,
          c_sf.y0 + j * c_sf.dx, c, sn);
      const float f1 = sf_trapezoid (col.t0, col.t1, col.t2, col.t3, sa, sb);
      float mag, w;
      int k0, k1;

      if (f1 <= 0.0f)
        continue;
      mag = c_sf.D / (c_sf.R - col.qc);
      w = col.lphi * f1;
      sf_slices (mag, t_lo, t_hi, k0, k1);
      for (int k = k0; k <= k1; k++) {
        const float z = c_sf.z0 + k * c_sf.dz;
        const float lo = mag * (z - hz), hi = mag * (z + hz);
        const float f = w * tex3D < float >(vol, i + 0.5f, j + 0.5f, k + 0.5f);

#pragma unroll
        for (int n = 0; n < kSfRows; n++)
          acc[n] += f * fmaxf (0.0f, fminf (tb[n], hi) - fmaxf (ta[n], lo));
      }
    }
  }
#pragma unroll
  for (int n = 0; n < kSfRows; n++)
    if (n < rows)
      proj[((size_t) slot * c_sf.nv + vb + n) * c_sf.nu + u] =
          acc[n] * sf_theta (s, c_sf.v0 + (vb + n) * c_sf.dv) /
          (c_sf.du * c_sf.dv);
}

/* Scales projections by l_θ / (du dv), the cell side of Aᵀ. */
__global__ void
sf_scale_kernel (const float *in, float *out, int n_views)
{
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = blockIdx.y * blockDim.y + threadIdx.y;

  if (u >= c_sf.nu || v >= c_sf.nv || (int) blockIdx.z >= n_views)
    return;
  {
    const size_t at = ((size_t) blockIdx.z * c_sf.nv + v) * c_sf.nu + u;

    out[at] = in[at] * sf_theta (c_sf.u0 + u * c_sf.du,
        c_sf.v0 + v * c_sf.dv) / (c_sf.du * c_sf.dv);
  }
}

/* Voxel-driven backprojector: a thread takes voxel column (i, j) for
 * kSfSlab slices and loops over the views; proj is already scaled. */
/* Four blocks an SM (64 registers) hide the projection loads' latency:
 * H100, 256³ x 64 views: 8.2 ms; at 2 blocks 11.7 ms, at 8 13+ ms
 * (spills). */
#ifndef CQ_SF_BACK_MIN_BLOCKS
#define CQ_SF_BACK_MIN_BLOCKS 4
#endif
__global__ void
__launch_bounds__ (256, CQ_SF_BACK_MIN_BLOCKS)
sf_backproject_kernel (const float *__restrict__ proj, int n_views,
    float *vol)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int kb = blockIdx.z * kSfSlab;
  float acc[kSfSlab];

  if (i >= c_sf.nx || j >= c_sf.ny)
    return;
#pragma unroll
  for (int n = 0; n < kSfSlab; n++)
    acc[n] = 0.0f;
  for (int view = 0; view < n_views; view++) {
    const float c = c_cos[view], sn = c_sin[view];
    const SfColumn col = sf_column (c_sf.x0 + i * c_sf.dx,
        c_sf.y0 + j * c_sf.dx, c, sn);
    const float mag = c_sf.D / (c_sf.R - col.qc);
    const float *p = proj + (size_t) view * c_sf.nv * c_sf.nu;
    float f1[kSfCachedCells];
    int u0, u1;

    /* cells whose interval the footprint [τ0, τ3] touches */
    u0 = max (0, (int) floorf ((col.t0 - c_sf.u0) / c_sf.du + 0.5f));
    u1 = min (c_sf.nu - 1, (int) floorf ((col.t3 - c_sf.u0) / c_sf.du +
            0.5f));
    if (u0 > u1)
      continue;
    const bool cached = u1 - u0 < kSfCachedCells;
#pragma unroll
    for (int n = 0; n < kSfCachedCells; n++) {
      float s = c_sf.u0 + (u0 + n) * c_sf.du;

      f1[n] = cached && u0 + n <= u1 ? sf_trapezoid (col.t0, col.t1,
          col.t2, col.t3, s - 0.5f * c_sf.du, s + 0.5f * c_sf.du) : 0.0f;
    }
#pragma unroll
    for (int n = 0; n < kSfSlab; n++) {
      const int k = kb + n;
      float z, lo, hi, sum = 0.0f;
      int v0, v1;

      if (k >= c_sf.nz)
        break;
      z = c_sf.z0 + k * c_sf.dz;
      lo = mag * (z - 0.5f * c_sf.dz);
      hi = mag * (z + 0.5f * c_sf.dz);
      v0 = max (0, (int) floorf ((lo - c_sf.v0) / c_sf.dv + 0.5f));
      v1 = min (c_sf.nv - 1, (int) floorf ((hi - c_sf.v0) / c_sf.dv + 0.5f));
      for (int v = v0; v <= v1; v++) {
        const float t = c_sf.v0 + v * c_sf.dv;
        const float f2 = sf_axial (mag, k, t - 0.5f * c_sf.dv,
            t + 0.5f * c_sf.dv);
        const float *row = p + (size_t) v * c_sf.nu;
        float su = 0.0f;

        if (f2 <= 0.0f)
          continue;
        if (cached) {
#pragma unroll
          for (int m = 0; m < kSfCachedCells; m++) {
            if (u0 + m > u1)
              break;
            su += f1[m] * __ldg (row + u0 + m);
          }
        } else {
          for (int u = u0; u <= u1; u++) {
            float s = c_sf.u0 + u * c_sf.du;

            su += sf_trapezoid (col.t0, col.t1, col.t2, col.t3,
                s - 0.5f * c_sf.du, s + 0.5f * c_sf.du) * __ldg (row + u);
          }
        }
        sum += f2 * su;
      }
      acc[n] += col.lphi * sum;
    }
  }
#pragma unroll
  for (int n = 0; n < kSfSlab; n++)
    if (kb + n < c_sf.nz)
      vol[((size_t) (kb + n) * c_sf.ny + j) * c_sf.nx + i] = acc[n];
}

}                               /* namespace cq */

#endif /* CQ_SFPROJECT_KERNELS_CUH */
