/* cudaquality compute library: vectorised kernels of the CPU backend.
 *
 * The same kernels (cq-ssim-cpu-simd.c, cq-ssim-gauss-cpu-simd.c,
 * cq-ssim-u16-cpu-simd.c, cq-sharpness-cpu-simd.c, cq-rows-cpu-simd.c,
 * written with GCC vector extensions) are compiled twice on x86-64: with
 * AVX2 and 8 32-bit lanes, and with AVX-512 and 16.
 * cq_cpu_simd_kernels () picks, at run time, the widest set the CPU runs (and
 * CQ_CPU_SIMD allows), or none: then the plain C of cq-ssim-cpu.c and
 * cq-sharpness-cpu.c runs, which stays the definition.
 *
 * The kernels compute exactly the same integer sums as the plain C, then the
 * same float/double operations in the same order on each window (the
 * expressions of cq-ssim-local.h, lane by lane; -ffp-contract=off), and add
 * the local values of a row in the same left-to-right order: scores are bit
 * for bit those of the plain C (and of the CUDA backend for sharpness).
 * box8, ffmpeg and sharpness read 8-bit planes (GRAY8, one byte per
 * sample) straight from the frames, where every intermediate of the SSIM
 * expressions fits in 32 bits. gauss11 works in doubles as the plain C
 * does: on 8-bit planes straight from the frames, on others from the plain
 * C's unpacked 16-bit rows, and on MS-SSIM's scales. box8 and ffmpeg on
 * the unpacked rows (other depths and layouts) keep their integers as exact
 * doubles. Sharpness takes 10 to 16-bit and RGB frames through rows
 * unpacked to 16-bit values.
 *
 * CQ_CPU_SIMD in the environment, read when a measure object is created:
 * "none" (or "0") forces the plain C, "avx2" caps at AVX2; unset or anything
 * else: the best available.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_CPU_SIMD_H
#define CQ_CPU_SIMD_H

#include "cq-common.h"

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

/* Samples of a CqSimdPlaneBand: 8-bit frames, the plain C's unpacked 16-bit
 * rows, or doubles (MS-SSIM's scales). */
typedef enum
{
  CQ_SIMD_SAMPLES_U8,
  CQ_SIMD_SAMPLES_U16,
  CQ_SIMD_SAMPLES_F64
} CqSimdSamples;

/* One band of windows over a plane pair (or an MS-SSIM scale) of any
 * sample kind: gauss11's, and box8's and ffmpeg's on unpacked rows. */
typedef struct
{
  CqSimdSamples samples;
  const void *ref, *dist;       /* sample (0, 0) of each plane */
  size_t ref_stride, dist_stride;       /* in samples */
  unsigned width, height;       /* gauss11: >= 11; box8: >= 8 */
  unsigned depth;               /* U16: the samples' bits (values below
                                 * 2^depth) */
  unsigned t0, t1;              /* window rows [t0, t1) */
  unsigned sse_y1;              /* 8-bit: Σ (a - b)² of rows [t0, sse_y1) */
  const double *gauss;          /* the 11 weights */
  double c1, c2;                /* gauss11: C1, C2; box8: 4096 C1, 4032 C2;
                                 * ffmpeg: FFmpeg's integer constants */
  int cs;                       /* also Σ contrast-structure (MS-SSIM) */
  void *scratch;                /* cq_cpu_simd_gauss_scratch () bytes, or
                                 * cq_cpu_simd_box8_u16_scratch () */
} CqSimdPlaneBand;

typedef struct
{
  const char *name;             /* "avx2", "avx512" */
  /* Σ local SSIM of the band's windows (box8's rows summed as
   * cq_ssim_box8_row, ffmpeg's left to right, then added in row order, as
   * the plain C does); *sse: Σ (a - b)² over rows [sse_y0, sse_y1). */
  double (*ssim_box8) (const CqSimdSsimBand * band, uint64_t * sse);
  double (*ssim_ffmpeg) (const CqSimdSsimBand * band, uint64_t * sse);
  /* Σ local SSIM of the band's gauss11 windows, Σ of their
   * contrast-structure terms in *cs_sum (when band->cs), both as the plain
   * C adds them; *sse: Σ (a - b)² of rows [t0, sse_y1) (8-bit samples, else
   * 0). */
  double (*ssim_gauss11) (const CqSimdPlaneBand * band, double *cs_sum,
      uint64_t * sse);
  /* MS-SSIM's 2x2 averages (cq_ssim_down2): rows [y0, y1) of the next
   * scale, width / 2 doubles each, from the band's samples (ref, dist and
   * their strides, width, samples) into out_a and out_b. */
  void (*ssim_ms_down) (const CqSimdPlaneBand * band, unsigned y0,
      unsigned y1, double *out_a, double *out_b);
  /* Σ local SSIM of the band's box8 (ffmpeg) windows over unpacked 16-bit
   * rows (samples CQ_SIMD_SAMPLES_U16, any depth), as band_box8
   * (band_ffmpeg) adds them; ffmpeg's t0, t1 are block rows, c1, c2 its
   * integer constants. */
  double (*ssim_box8_u16) (const CqSimdPlaneBand * band);
  double (*ssim_ffmpeg_u16) (const CqSimdPlaneBand * band);
  /* Sharpness sums of rows [y0, y1) of an 8-bit frame, added to usum[]
   * (CQ_SUM_* order; usum[CQ_SUM_LAP] unused), *lap_sum and hist (NULL
   * unless entropy is measured). */
  void (*sharpness) (const uint8_t * data, size_t stride, unsigned width,
      unsigned height, unsigned y0, unsigned y1, unsigned metrics,
      unsigned __int128 * usum, __int128 * lap_sum, uint64_t * hist);
  /* The same for a frame of another layout (GRAY16 of any depth, RGB8),
   * its rows unpacked to 16-bit values; rows: 3 (width + 8) values of
   * scratch. */
  void (*sharpness_rows) (const CqLayout * layout, const uint8_t * data,
      size_t stride, unsigned width, unsigned height, unsigned y0,
      unsigned y1, unsigned metrics, unsigned __int128 * usum,
      __int128 * lap_sum, uint64_t * hist, uint16_t * rows);
  /* A row of width RGB8 pixels, stride bytes apart, as cq_gray_rgb8's gray
   * values. */
  void (*gray_rgb8_row) (const uint8_t * row, unsigned stride,
      unsigned r_offset, unsigned g_offset, unsigned b_offset,
      unsigned width, uint16_t * out);
  /* A row of a GRAY8 or GRAY16 plane (samples stride bytes apart) as
   * cq_gray8_row / cq_gray16_strided_row unpack it, and cq_sse_u16_row's
   * Σ (a - b)² of two unpacked rows. */
  void (*unpack_row) (const CqLayout * layout, unsigned stride,
      const uint8_t * row, unsigned width, uint16_t * out);
  uint64_t (*sse_u16_row) (const uint16_t * a, const uint16_t * b,
      unsigned width, unsigned depth);
} CqSimdKernels;

/* The kernels to use, or NULL for the plain C. */
const CqSimdKernels *cq_cpu_simd_kernels (void);

/* Bytes of CqSimdSsimBand.scratch for planes up to max_width samples wide
 * and max_height high. */
size_t cq_cpu_simd_ssim_scratch (unsigned max_width, unsigned max_height);

/* Bytes of CqSimdPlaneBand.scratch for gauss11 (the same for every
 * plane), and for box8 on unpacked rows of planes up to max_height rows
 * (ffmpeg's: cq_cpu_simd_ssim_scratch ()). */
size_t cq_cpu_simd_gauss_scratch (void);
size_t cq_cpu_simd_box8_u16_scratch (unsigned max_height);

/* Widest plane the kernels take (lane sums stay within 32 bits). */
#define CQ_CPU_SIMD_MAX_WIDTH 16384

/* box8: ints a slot of the scratch holds (an array of a plane w wide,
 * shifted by up to 1008 ints), and the slots it takes */
#define CQ_CPU_SIMD_BOX8_SLOT(w) (((size_t) (w) + 64 + 1024 + 1023) & \
    ~(size_t) 1023)
#define CQ_CPU_SIMD_BOX8_SLOTS 33

/* gauss11: window rows whose vertical chains share their rows' loads, and
 * window rows a chunk (a walk over the columns) */
#define CQ_CPU_SIMD_GAUSS_ROWS 4
#define CQ_CPU_SIMD_GAUSS_CHUNK 16

/* box8 on unpacked rows, and AVX2's on 8-bit planes: windows a strip
 * (walked down the band) */
#define CQ_CPU_SIMD_BOX8_STRIP 256
/* AVX2's 8-bit box8: ints a row of a strip's arrays holds (its windows'
 * columns, 8 past them and what the last vector's loads reach), its rows
 * of ints (3 of column sums, 3 of sums of 2, a ring of 8 rows' 3 terms),
 * and its arrays: those rows, then a row of doubles */
#define CQ_CPU_SIMD_BOX8_STRIP_COLS (CQ_CPU_SIMD_BOX8_STRIP + 32)
#define CQ_CPU_SIMD_BOX8_STRIP_INT_ROWS (3 + 3 + 8 * 3)
#define CQ_CPU_SIMD_BOX8_STRIP_BYTES \
    (CQ_CPU_SIMD_BOX8_STRIP_INT_ROWS * CQ_CPU_SIMD_BOX8_STRIP_COLS * \
    sizeof (int32_t) + CQ_CPU_SIMD_BOX8_STRIP_COLS * sizeof (double))

#define CQ_CPU_SIMD_DECLARE(suffix) \
  double cq_simd_ssim_box8_##suffix (const CqSimdSsimBand * band, \
      uint64_t * sse); \
  double cq_simd_ssim_ffmpeg_##suffix (const CqSimdSsimBand * band, \
      uint64_t * sse); \
  double cq_simd_ssim_gauss11_##suffix (const CqSimdPlaneBand * band, \
      double *cs_sum, uint64_t * sse); \
  void cq_simd_ssim_ms_down_##suffix (const CqSimdPlaneBand * band, \
      unsigned y0, unsigned y1, double *out_a, double *out_b); \
  double cq_simd_ssim_box8_u16_##suffix (const CqSimdPlaneBand * band); \
  double cq_simd_ssim_ffmpeg_u16_##suffix (const CqSimdPlaneBand * band); \
  void cq_simd_sharpness_##suffix (const uint8_t * data, size_t stride, \
      unsigned width, unsigned height, unsigned y0, unsigned y1, \
      unsigned metrics, unsigned __int128 * usum, __int128 * lap_sum, \
      uint64_t * hist); \
  void cq_simd_sharpness_rows_##suffix (const CqLayout * layout, \
      const uint8_t * data, size_t stride, unsigned width, unsigned height, \
      unsigned y0, unsigned y1, unsigned metrics, unsigned __int128 * usum, \
      __int128 * lap_sum, uint64_t * hist, uint16_t * rows); \
  void cq_simd_gray_rgb8_row_##suffix (const uint8_t * row, unsigned stride, \
      unsigned r_offset, unsigned g_offset, unsigned b_offset, \
      unsigned width, uint16_t * out); \
  void cq_simd_unpack_row_##suffix (const CqLayout * layout, unsigned stride, \
      const uint8_t * row, unsigned width, uint16_t * out); \
  uint64_t cq_simd_sse_u16_row_##suffix (const uint16_t * a, \
      const uint16_t * b, unsigned width, unsigned depth);

CQ_CPU_SIMD_DECLARE (avx2)
CQ_CPU_SIMD_DECLARE (avx512)

#endif /* CQ_CPU_SIMD_H */
