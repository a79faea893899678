/* cudaquality compute library: picks the CPU backend's vectorised kernels.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"
#include "cq-cpu-simd.h"
#include "cq-ssim-local.h"

#include <stdlib.h>
#include <string.h>

size_t
cq_cpu_simd_ssim_scratch (unsigned max_width, unsigned max_height)
{
  /* AVX-512's box8: 3 rows of int32 column sums, 3 of sums of 2 columns, a
   * ring of 8 rows' 3 terms and a row of doubles, in slots from a 4 KB
   * boundary; ffmpeg's 3 x 4 rows of block sums a quarter as wide fit in
   * them */
  size_t rows = CQ_CPU_SIMD_BOX8_SLOTS * CQ_CPU_SIMD_BOX8_SLOT (max_width) *
      sizeof (int32_t) + 4096;
  /* AVX2's box8: the band's rows' running sums, then a strip's arrays */
  size_t strips = (size_t) max_height * CQ_SSIM_BOX8_PHASES *
      sizeof (double) + CQ_CPU_SIMD_BOX8_STRIP_BYTES + 64;

  return rows > strips ? rows : strips;
}

size_t
cq_cpu_simd_gauss_scratch (void)
{
  /* a block's 4 quantities of CHUNK + 10 rows, and CHUNK rows of 4
   * quantities' vertical sums in a ring of blocks: at most 40 doubles
   * (AVX-512: 5 blocks of 8; AVX2: 7 of 4) */
  return ((CQ_CPU_SIMD_GAUSS_CHUNK + 10) * 4 * 8 +
      CQ_CPU_SIMD_GAUSS_CHUNK * 4 * 40) * sizeof (double) + 64;
}

size_t
cq_cpu_simd_box8_u16_scratch (unsigned max_height)
{
  /* the band's rows' running sums, and a strip's column sums and sums of 2
   * columns, 4 quantities each, in rows of STRIP + 4 D + 8 doubles */
  return ((size_t) max_height * CQ_SSIM_BOX8_PHASES +
      8 * (CQ_CPU_SIMD_BOX8_STRIP + 40)) * sizeof (double) + 64;
}

#if HAVE_CPU_SIMD
static const CqSimdKernels avx2 = {
  "avx2", cq_simd_ssim_box8_avx2, cq_simd_ssim_ffmpeg_avx2,
  cq_simd_ssim_gauss11_avx2, cq_simd_ssim_ms_down_avx2,
  cq_simd_ssim_box8_u16_avx2, cq_simd_ssim_ffmpeg_u16_avx2,
  cq_simd_sharpness_avx2,
  cq_simd_sharpness_rows_avx2, cq_simd_gray_rgb8_row_avx2,
  cq_simd_unpack_row_avx2, cq_simd_sse_u16_row_avx2
};

static const CqSimdKernels avx512 = {
  "avx512", cq_simd_ssim_box8_avx512, cq_simd_ssim_ffmpeg_avx512,
  cq_simd_ssim_gauss11_avx512, cq_simd_ssim_ms_down_avx512,
  cq_simd_ssim_box8_u16_avx512, cq_simd_ssim_ffmpeg_u16_avx512,
  cq_simd_sharpness_avx512,
  cq_simd_sharpness_rows_avx512, cq_simd_gray_rgb8_row_avx512,
  cq_simd_unpack_row_avx512, cq_simd_sse_u16_row_avx512
};
#endif

const CqSimdKernels *
cq_cpu_simd_kernels (void)
{
#if HAVE_CPU_SIMD
  const char *env = getenv ("CQ_CPU_SIMD");
  int cap = 2;

  if (env && (strcmp (env, "none") == 0 || strcmp (env, "0") == 0))
    return NULL;
  if (env && strcmp (env, "avx2") == 0)
    cap = 1;
  __builtin_cpu_init ();
  if (cap >= 2 && __builtin_cpu_supports ("avx512f")
      && __builtin_cpu_supports ("avx512bw")
      && __builtin_cpu_supports ("avx512dq")
      && __builtin_cpu_supports ("avx512vl"))
    return &avx512;
  if (__builtin_cpu_supports ("avx2"))
    return &avx2;
#endif
  return NULL;
}
