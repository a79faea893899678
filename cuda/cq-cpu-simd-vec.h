/* cudaquality compute library: vector types of the CPU kernels.
 *
 * Included by the kernel files, which the build compiles once per
 * instruction set with CQ_SIMD_LANES (32-bit lanes of a register: 8 for
 * AVX2, 16 for AVX-512) and CQ_SIMD_SUFFIX (avx2, avx512) defined. GCC
 * vector extensions: the operators act lane by lane with C's semantics, so
 * a lane computes what the plain C computes for one window or pixel.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_CPU_SIMD_VEC_H
#define CQ_CPU_SIMD_VEC_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#ifndef CQ_SIMD_LANES
#error "CQ_SIMD_LANES must be defined (8 or 16)"
#endif

#define V CQ_SIMD_LANES
#define CQ_SIMD_PASTE2(a, b) a##_##b
#define CQ_SIMD_PASTE(a, b) CQ_SIMD_PASTE2 (a, b)
#define CQ_SIMD_FN(name) CQ_SIMD_PASTE (name, CQ_SIMD_SUFFIX)

typedef int32_t vi __attribute__ ((vector_size (4 * V)));
typedef uint32_t vu __attribute__ ((vector_size (4 * V)));
typedef float vf __attribute__ ((vector_size (4 * V)));
/* doubles of a register: V / 2 lanes (GCC spills vectors wider than a
 * register through the stack, so the double arithmetic goes in halves) */
typedef double vd __attribute__ ((vector_size (4 * V)));

/* V bytes from p, each widened to a 32-bit lane (vpmovzxbd: GCC 12 does
 * not lower __builtin_convertvector from bytes to it) */
static inline vi
ld8 (const uint8_t * p)
{
#if V == 8
  return (vi) _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) p));
#else
  return (vi) _mm512_cvtepu8_epi32 (_mm_loadu_si128 ((const __m128i *) p));
#endif
}

/* V 16-bit values from p, each widened to a 32-bit lane */
static inline vi
ld16 (const uint16_t * p)
{
#if V == 8
  return (vi) _mm256_cvtepu16_epi32 (_mm_loadu_si128 ((const __m128i *) p));
#else
  return (vi) _mm512_cvtepu16_epi32 (_mm256_loadu_si256 ((const __m256i *)
          p));
#endif
}

/* V / 2 16-bit values from p, converted to double (exact) */
static inline vd
ld16d (const uint16_t * p)
{
#if V == 8
  return (vd) _mm256_cvtepi32_pd (_mm_cvtepu16_epi32 (_mm_loadl_epi64
          ((const __m128i *) p)));
#else
  return (vd) _mm512_cvtepi32_pd (_mm256_cvtepu16_epi32 (_mm_loadu_si128
          ((const __m128i *) p)));
#endif
}

/* lanes [0, V/2) and [V/2, V) of v, converted to double (exact) */
static inline vd
cvt_lo (vi v)
{
#if V == 8
  return (vd) _mm256_cvtepi32_pd (_mm256_castsi256_si128 ((__m256i) v));
#else
  return (vd) _mm512_cvtepi32_pd (_mm512_castsi512_si256 ((__m512i) v));
#endif
}

static inline vd
cvt_hi (vi v)
{
#if V == 8
  return (vd) _mm256_cvtepi32_pd (_mm256_extracti128_si256 ((__m256i) v, 1));
#else
  return (vd) _mm512_cvtepi32_pd ((__m256i)
      _mm512_extracti64x4_epi64 ((__m512i) v, 1));
#endif
}

/* lanes [0, V/2) and [V/2, V) of floats, converted to double (exact) */
static inline vd
cvtf_lo (vf v)
{
#if V == 8
  return (vd) _mm256_cvtps_pd (_mm256_castps256_ps128 ((__m256) v));
#else
  return (vd) _mm512_cvtps_pd (_mm512_castps512_ps256 ((__m512) v));
#endif
}

static inline vd
cvtf_hi (vf v)
{
#if V == 8
  return (vd) _mm256_cvtps_pd (_mm256_extractf128_ps ((__m256) v, 1));
#else
  return (vd) _mm512_cvtps_pd ((__m256) _mm512_extractf64x4_pd ((__m512d) v,
          1));
#endif
}

/* unaligned vector loads and stores of a type's elements */
#define CQ_SIMD_LOAD_STORE(vtype, etype, load, store) \
  static inline vtype \
  load (const etype * p) \
  { \
    vtype v; \
    memcpy (&v, p, sizeof (v)); \
    return v; \
  } \
  static inline void \
  store (etype * p, vtype v) \
  { \
    memcpy (p, &v, sizeof (v)); \
  }

CQ_SIMD_LOAD_STORE (vi, int32_t, ld32, st32)
CQ_SIMD_LOAD_STORE (vd, double, ldd, stdd)

/* The cache lines of the n bytes at p (a strip's part of a row, a few
 * passes ahead: down a strip the hardware prefetchers do not follow the
 * rows). */
static inline void
prefetch_span (const void *p, size_t n)
{
  const char *c = (const char *) p;
  size_t i;

  for (i = 0; i < n; i += 64)
    __builtin_prefetch (c + i);
  __builtin_prefetch (c + n - 1);
}

/* lanes of 32-bit integers in pairs over a ‖ b: (a0 + a1, a2 + a3, ...,
 * b0 + b1, ...) */
static inline vi
pair_sums (vi a, vi b)
{
#if V == 8
  /* vphaddd adds the pairs of each 128-bit half (a's low, b's low | a's
   * high, b's high), vpermq puts them in order: two instructions, where
   * GCC 12 lowered the two-source shuffles of the AVX-512 form below to
   * two vpermd and a vpblendd each */
  return (vi) _mm256_permute4x64_epi64 (_mm256_hadd_epi32 ((__m256i) a,
          (__m256i) b), 0xd8);
#else
  const vi even = { 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28,
    30
  };
  const vi odd = { 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29,
    31
  };

  return __builtin_shuffle (a, b, even) + __builtin_shuffle (a, b, odd);
#endif
}

/* 64-bit integer lanes of a register (V / 2) */
typedef int64_t vdl __attribute__ ((vector_size (4 * V)));

/* lanes of doubles in pairs over x ‖ y: (x0 + x1, x2 + x3, ..., y0 + y1,
 * ...) */
static inline vd
pairs_d (vd x, vd y)
{
#if V == 8
  const vdl even = { 0, 2, 4, 6 }, odd = { 1, 3, 5, 7 };
#else
  const vdl even = { 0, 2, 4, 6, 8, 10, 12, 14 };
  const vdl odd = { 1, 3, 5, 7, 9, 11, 13, 15 };
#endif

  return __builtin_shuffle (x, y, even) + __builtin_shuffle (x, y, odd);
}

/* x·y lane by lane, exact in 64 bits (|x|, |y| < 2^31), the products of
 * neighbouring lanes added: (x0 y0 + x1 y1, x2 y2 + x3 y3, ...) */
static inline vdl
mul_pairs (vi x, vi y)
{
#if V == 8
  const __m256i even = _mm256_mul_epi32 ((__m256i) x, (__m256i) y);
  const __m256i odd = _mm256_mul_epi32 (_mm256_srli_epi64 ((__m256i) x, 32),
      _mm256_srli_epi64 ((__m256i) y, 32));
#else
  const __m512i even = _mm512_mul_epi32 ((__m512i) x, (__m512i) y);
  const __m512i odd = _mm512_mul_epi32 (_mm512_srli_epi64 ((__m512i) x, 32),
      _mm512_srli_epi64 ((__m512i) y, 32));
#endif

  return (vdl) even + (vdl) odd;
}

static inline vi
splat (int32_t x)
{
  return (vi) { } + x;
}

/* 0, 1, ..., V - 1 */
static inline vi
iota (void)
{
  vi v;
  unsigned i;

  for (i = 0; i < V; i++)
    v[i] = (int32_t) i;
  return v;
}

static inline uint64_t
hsum_u (vu v)
{
  uint64_t s = 0;
  unsigned i;

  for (i = 0; i < V; i++)
    s += v[i];
  return s;
}

static inline uint64_t
hsum_l (vdl v)
{
  uint64_t s = 0;
  unsigned i;

  for (i = 0; i < V / 2; i++)
    s += (uint64_t) v[i];
  return s;
}

static inline int64_t
hsum_i (vi v)
{
  int64_t s = 0;
  unsigned i;

  for (i = 0; i < V; i++)
    s += v[i];
  return s;
}

/* |v|, max and min lane by lane (vpabsd, vpmaxsd, vpminsd: GCC 12 does not
 * find them in the operators' forms) */
static inline vi
vabs (vi v)
{
#if V == 8
  return (vi) _mm256_abs_epi32 ((__m256i) v);
#else
  return (vi) _mm512_abs_epi32 ((__m512i) v);
#endif
}

static inline vi
vmax (vi a, vi b)
{
#if V == 8
  return (vi) _mm256_max_epi32 ((__m256i) a, (__m256i) b);
#else
  return (vi) _mm512_max_epi32 ((__m512i) a, (__m512i) b);
#endif
}

static inline vi
vmin (vi a, vi b)
{
#if V == 8
  return (vi) _mm256_min_epi32 ((__m256i) a, (__m256i) b);
#else
  return (vi) _mm512_min_epi32 ((__m512i) a, (__m512i) b);
#endif
}

/* The 16-bit halves of x and y multiplied and each lane's two products
 * added (vpmaddwd): x·y where both are in [0, 2^15), and x² + y² of the
 * pair packed by pack16 (x, y) where both are in (-2^15, 2^15). */
static inline vi
madd16 (vi x, vi y)
{
#if V == 8
  return (vi) _mm256_madd_epi16 ((__m256i) x, (__m256i) y);
#else
  return (vi) _mm512_madd_epi16 ((__m512i) x, (__m512i) y);
#endif
}

static inline vi
pack16 (vi lo, vi hi)
{
  return (vi) (((vu) lo & 0xffff) | ((vu) hi << 16));
}

/* 16-bit lanes of a register (2 V) */
typedef int16_t vs __attribute__ ((vector_size (4 * V)));

/* 2 V bytes from p, each widened to a 16-bit lane (vpmovzxbw) */
static inline vs
ld8w (const uint8_t * p)
{
#if V == 8
  return (vs) _mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) p));
#else
  return (vs) _mm512_cvtepu8_epi16 (_mm256_loadu_si256 ((const __m256i *)
          p));
#endif
}

/* 2 V 16-bit values from p (below 2^15) */
static inline vs
ld16w (const uint16_t * p)
{
  vs v;

  memcpy (&v, p, sizeof (v));
  return v;
}

static inline vs
vabs16 (vs v)
{
#if V == 8
  return (vs) _mm256_abs_epi16 ((__m256i) v);
#else
  return (vs) _mm512_abs_epi16 ((__m512i) v);
#endif
}

static inline vs
vmax16 (vs a, vs b)
{
#if V == 8
  return (vs) _mm256_max_epi16 ((__m256i) a, (__m256i) b);
#else
  return (vs) _mm512_max_epi16 ((__m512i) a, (__m512i) b);
#endif
}

static inline vs
vmin16 (vs a, vs b)
{
#if V == 8
  return (vs) _mm256_min_epi16 ((__m256i) a, (__m256i) b);
#else
  return (vs) _mm512_min_epi16 ((__m512i) a, (__m512i) b);
#endif
}

/* x·y of 16-bit lanes, neighbouring lanes' products added into 32 bits
 * (vpmaddwd): exact while each sum stays within an int32 */
static inline vi
dot16 (vs x, vs y)
{
  return madd16 ((vi) x, (vi) y);
}

#endif /* CQ_CPU_SIMD_VEC_H */
