/* cudaquality compute library: vectorised kernels of the CPU backend.
 *
 * The same kernels (cq-ssim-cpu-simd.c, cq-sharpness-cpu-simd.c, written
 * with GCC vector extensions) are compiled twice on x86-64: with AVX2 and 8
 * 32-bit lanes, and with AVX-512 and 16. cq_cpu_simd_kernels () picks, at
 * run time, the widest set the CPU runs (and CQ_CPU_SIMD allows), or none:
 * then the plain C of cq-ssim-cpu.c and cq-sharpness-cpu.c runs, which stays
 * the definition.
 *
 * The kernels compute exactly the same integer sums as the plain C, then the
 * same float/double operations in the same order on each window (the
 * expressions of cq-ssim-local.h, lane by lane; -ffp-contract=off), and add
 * the local values of a row in the same left-to-right order: scores are bit
 * for bit those of the plain C (and of the CUDA backend for sharpness).
 * They take 8-bit planes only (GRAY8, one byte per sample), where every
 * intermediate of the SSIM expressions fits in 32 bits; other layouts and
 * depths run the plain C.
 *
 * CQ_CPU_SIMD in the environment, read when a measure object is created:
 * "none" (or "0") forces the plain C, "avx2" caps at AVX2; unset or anything
 * else: the best available.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_CPU_SIMD_H
#define CQ_CPU_SIMD_H

#include <stddef.h>
#include <stdint.h>

/* One band of SSIM windows over an 8-bit plane pair. */
typedef struct
{
  const uint8_t *ref, *dist;    /* sample (0, 0) of each plane */
  size_t ref_stride, dist_stride;
  unsigned width, height;
  unsigned t0, t1;              /* window rows [t0, t1) (block rows: ffmpeg) */
  unsigned sse_y0, sse_y1;      /* image rows whose Σ (a - b)² this band adds */
  double k1, k2;                /* box8: 4096 C1, 4032 C2 */
  int64_t c1, c2;               /* ffmpeg: FFmpeg's integer constants */
  void *scratch;                /* cq_cpu_simd_ssim_scratch () bytes */
} CqSimdSsimBand;

typedef struct
{
  const char *name;             /* "avx2", "avx512" */
  /* Σ local SSIM of the band's windows (rows summed left to right, then
   * added in row order, as the plain C does); *sse: Σ (a - b)² over rows
   * [sse_y0, sse_y1). */
  double (*ssim_box8) (const CqSimdSsimBand * band, uint64_t * sse);
  double (*ssim_ffmpeg) (const CqSimdSsimBand * band, uint64_t * sse);
  /* Sharpness sums of rows [y0, y1) of an 8-bit frame, added to usum[]
   * (CQ_SUM_* order; usum[CQ_SUM_LAP] unused), *lap_sum and hist (NULL
   * unless entropy is measured). */
  void (*sharpness) (const uint8_t * data, size_t stride, unsigned width,
      unsigned height, unsigned y0, unsigned y1, unsigned metrics,
      unsigned __int128 * usum, __int128 * lap_sum, uint64_t * hist);
} CqSimdKernels;

/* The kernels to use, or NULL for the plain C. */
const CqSimdKernels *cq_cpu_simd_kernels (void);

/* Bytes of CqSimdSsimBand.scratch for planes up to max_width samples wide. */
size_t cq_cpu_simd_ssim_scratch (unsigned max_width);

/* Widest plane the kernels take (lane sums stay within 32 bits). */
#define CQ_CPU_SIMD_MAX_WIDTH 16384

/* box8 window rows whose local values are computed before their row sums are
 * taken (each row still summed left to right, the rows side by side) */
#define CQ_CPU_SIMD_BOX8_ROWS 16

#define CQ_CPU_SIMD_DECLARE(suffix) \
  double cq_simd_ssim_box8_##suffix (const CqSimdSsimBand * band, \
      uint64_t * sse); \
  double cq_simd_ssim_ffmpeg_##suffix (const CqSimdSsimBand * band, \
      uint64_t * sse); \
  void cq_simd_sharpness_##suffix (const uint8_t * data, size_t stride, \
      unsigned width, unsigned height, unsigned y0, unsigned y1, \
      unsigned metrics, unsigned __int128 * usum, __int128 * lap_sum, \
      uint64_t * hist);

CQ_CPU_SIMD_DECLARE (avx2)
CQ_CPU_SIMD_DECLARE (avx512)

#endif /* CQ_CPU_SIMD_H */
