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

/* The geometry and the views belong to one context (several may run at
 * once on different streams): the geometry goes to every kernel by value
 * (it lands in the kernel's parameter bank, as fast as constant memory),
 * the views' (cos β, sin β) and the projector's launch order through
 * small device arrays of the context. */

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
sf_column (const SfConst & sf, float xc, float yc, float c, float s)
{
  const float h = 0.5f * sf.dx;
  const float pc = xc * c + yc * s, qc = -xc * s + yc * c;
  const float hp = h * (c + s), hm = h * (c - s);
  /* corners (σx h, σy h): p = pc + σx h c + σy h s,
   * q = qc − σx h s + σy h c */
  float ta = __fdividef (sf.D * (pc - hp), sf.R - (qc - hm));
  float tb = __fdividef (sf.D * (pc + hm), sf.R - (qc - hp));
  float tc = __fdividef (sf.D * (pc - hm), sf.R - (qc + hp));
  float td = __fdividef (sf.D * (pc + hp), sf.R - (qc + hm));
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
    float a = sf.R - qc, inv = rsqrtf (a * a + pc * pc);
    float ca = a * inv, sa = pc * inv;
    float cphi = c * ca - s * sa, sphi = s * ca + c * sa;

    col.lphi = sf.dx / fmaxf (fabsf (cphi), fabsf (sphi));
  }
  return col;
}

/* F2 · dv of voxel slice k at magnification mag over the cell [ta, tb]. */
__device__ __forceinline__ float
sf_axial (const SfConst & sf, float mag, int k, float ta, float tb)
{
  const float z = sf.z0 + k * sf.dz;
  const float lo = mag * (z - 0.5f * sf.dz), hi = mag * (z + 0.5f * sf.dz);

  return fmaxf (0.0f, fminf (tb, hi) - fmaxf (ta, lo));
}

__device__ __forceinline__ float
sf_theta (const SfConst & sf, float s, float t)
{
  const float d2 = sf.D * sf.D;

  return sqrtf (s * s + t * t + d2) * rsqrtf (s * s + d2);
}

/* Slices k whose axial footprint at magnification mag can touch [ta, tb]. */
__device__ __forceinline__ void
sf_slices (const SfConst & sf, float mag, float ta, float tb, int &k0,
    int &k1)
{
  const float zlo = ta / mag - 0.5f * sf.dz, zhi = tb / mag + 0.5f * sf.dz;

  k0 = max (0, (int) ceilf ((zlo - sf.z0) / sf.dz - 1e-3f));
  k1 = min (sf.nz - 1, (int) floorf ((zhi - sf.z0) / sf.dz + 1e-3f));
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
sf_project_kernel (const SfConst sf, const float2 * __restrict__ views,
    const int *__restrict__ slots, cudaTextureObject_t vol, int slot_base,
    float *proj)
{
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int vb = (blockIdx.y * blockDim.y + threadIdx.y) * kSfRows;
  const int slot = __ldg (slots + slot_base + blockIdx.z);
  const float2 cs = __ldg (views + slot);
  const float c = cs.x, sn = cs.y;
  const float h = 0.5f * sf.dx, hz = 0.5f * sf.dz;
  const int n_slabs = XMAJOR ? sf.nx : sf.ny;
  const int n_across = XMAJOR ? sf.ny : sf.nx;
  const float first_slab = XMAJOR ? sf.x0 : sf.y0;
  const float first_across = XMAJOR ? sf.y0 : sf.x0;
  float s, sa, sb, ta[kSfRows], tb[kSfRows], acc[kSfRows];
  float a0, a1, b0, b1, t_lo, t_hi;
  bool bounded;
  int rows;

  if (u >= sf.nu || vb >= sf.nv)
    return;
  rows = min (kSfRows, sf.nv - vb);
  s = sf.u0 + u * sf.du;
  sa = s - 0.5f * sf.du;
  sb = s + 0.5f * sf.du;
#pragma unroll
  for (int n = 0; n < kSfRows; n++) {
    const float t = sf.v0 + (vb + n) * sf.dv;

    ta[n] = t - 0.5f * sf.dv;
    tb[n] = t + 0.5f * sf.dv;
    acc[n] = 0.0f;
  }
  t_lo = ta[0];
  t_hi = tb[rows - 1];
  bounded = sf_ray_line < XMAJOR > (sf, sa, c, sn, a0, a1) &&
      sf_ray_line < XMAJOR > (sf, sb, c, sn, b0, b1);

  for (int a = 0; a < n_slabs; a++) {
    const float pos = first_slab + a * sf.dx;
    int lo_b = 0, hi_b = n_across - 1;

    if (bounded) {
      const float e1 = a0 + a1 * (pos - h), e2 = a0 + a1 * (pos + h);
      const float e3 = b0 + b1 * (pos - h), e4 = b0 + b1 * (pos + h);
      const float lo = fminf (fminf (e1, e2), fminf (e3, e4)) - h;
      const float hi = fmaxf (fmaxf (e1, e2), fmaxf (e3, e4)) + h;

      lo_b = max (0, (int) ceilf ((lo - first_across) / sf.dx - 1e-3f));
      hi_b = min (n_across - 1,
          (int) floorf ((hi - first_across) / sf.dx + 1e-3f));
    }
    for (int b = lo_b; b <= hi_b; b++) {
      const int i = XMAJOR ? a : b, j = XMAJOR ? b : a;
      const SfColumn col = sf_column (sf, sf.x0 + i * sf.dx,
          sf.y0 + j * sf.dx, c, sn);
      const float f1 = sf_trapezoid (col.t0, col.t1, col.t2, col.t3, sa, sb);
      float mag, w;
      int k0, k1;

      if (f1 <= 0.0f)
        continue;
      mag = sf.D / (sf.R - col.qc);
      w = col.lphi * f1;
      sf_slices (sf, mag, t_lo, t_hi, k0, k1);
      for (int k = k0; k <= k1; k++) {
        const float z = sf.z0 + k * sf.dz;
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
      proj[((size_t) slot * sf.nv + vb + n) * sf.nu + u] =
          acc[n] * sf_theta (sf, s, sf.v0 + (vb + n) * sf.dv) /
          (sf.du * sf.dv);
}

/* Scales projections by l_θ / (du dv), the cell side of Aᵀ. */
__global__ void
sf_scale_kernel (const SfConst sf, const float *in, float *out, int n_views)
{
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = blockIdx.y * blockDim.y + threadIdx.y;

  if (u >= sf.nu || v >= sf.nv || (int) blockIdx.z >= n_views)
    return;
  {
    const size_t at = ((size_t) blockIdx.z * sf.nv + v) * sf.nu + u;

    out[at] = in[at] * sf_theta (sf, sf.u0 + u * sf.du,
        sf.v0 + v * sf.dv) / (sf.du * sf.dv);
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
sf_backproject_kernel (const SfConst sf, const float2 * __restrict__ views,
    const float *__restrict__ proj, int n_views, float *vol)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int kb = blockIdx.z * kSfSlab;
  float acc[kSfSlab];

  if (i >= sf.nx || j >= sf.ny)
    return;
#pragma unroll
  for (int n = 0; n < kSfSlab; n++)
    acc[n] = 0.0f;
  for (int view = 0; view < n_views; view++) {
    const float2 cs = __ldg (views + view);
    const float c = cs.x, sn = cs.y;
    const SfColumn col = sf_column (sf, sf.x0 + i * sf.dx,
        sf.y0 + j * sf.dx, c, sn);
    const float mag = sf.D / (sf.R - col.qc);
    const float *p = proj + (size_t) view * sf.nv * sf.nu;
    float f1[kSfCachedCells];
    int u0, u1;

    /* cells whose interval the footprint [τ0, τ3] touches */
    u0 = max (0, (int) floorf ((col.t0 - sf.u0) / sf.du + 0.5f));
    u1 = min (sf.nu - 1, (int) floorf ((col.t3 - sf.u0) / sf.du +
            0.5f));
    if (u0 > u1)
      continue;
    const bool cached = u1 - u0 < kSfCachedCells;
#pragma unroll
    for (int n = 0; n < kSfCachedCells; n++) {
      float s = sf.u0 + (u0 + n) * sf.du;

      f1[n] = cached && u0 + n <= u1 ? sf_trapezoid (col.t0, col.t1,
          col.t2, col.t3, s - 0.5f * sf.du, s + 0.5f * sf.du) : 0.0f;
    }
#pragma unroll
    for (int n = 0; n < kSfSlab; n++) {
      const int k = kb + n;
      float z, lo, hi, sum = 0.0f;
      int v0, v1;

      if (k >= sf.nz)
        break;
      z = sf.z0 + k * sf.dz;
      lo = mag * (z - 0.5f * sf.dz);
      hi = mag * (z + 0.5f * sf.dz);
      v0 = max (0, (int) floorf ((lo - sf.v0) / sf.dv + 0.5f));
      v1 = min (sf.nv - 1, (int) floorf ((hi - sf.v0) / sf.dv + 0.5f));
      for (int v = v0; v <= v1; v++) {
        const float t = sf.v0 + v * sf.dv;
        const float f2 = sf_axial (sf, mag, k, t - 0.5f * sf.dv,
            t + 0.5f * sf.dv);
        const float *row = p + (size_t) v * sf.nu;
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
            float s = sf.u0 + u * sf.du;

            su += sf_trapezoid (col.t0, col.t1, col.t2, col.t3,
                s - 0.5f * sf.du, s + 0.5f * sf.du) * __ldg (row + u);
          }
        }
        sum += f2 * su;
      }
      acc[n] += col.lphi * sum;
    }
  }
#pragma unroll
  for (int n = 0; n < kSfSlab; n++)
    if (kb + n < sf.nz)
      vol[((size_t) (kb + n) * sf.ny + j) * sf.nx + i] = acc[n];
}

/* One view's line integrals to detector pixels, in double as the CPU
 * path computes them (CqSfPixels). */
__global__ void
sf_pixels_kernel (const float *li, int nu, int nv, CqSfPixels p,
    unsigned char *dst, size_t pitch)
{
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = blockIdx.y * blockDim.y + threadIdx.y;
  double integral, x;

  if (u >= nu || v >= nv)
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
