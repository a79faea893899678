/* What the box8 AVX2 step's instructions cost on this CPU, by throw-away
 * loops (prints figures, asserts nothing; x86-64 with AVX2).
 *
 * Without hardware counters (a VM), the cycles come from the clock that a
 * chain of dependent integer additions (one cycle each) measures. Each
 * figure is the best of REPEAT runs, in cycles per loop iteration (the
 * iteration's body as named). What the box8 kernel's loop holds a step of
 * 8 windows (cq-ssim-cpu-simd.c, AVX2): about 23 loads (8 crossing a
 * cache line), 11 stores, 60 vector µops, 8 vcvtdq2pd, 8 vaddpd, 6 vmulpd
 * and 2 vdivpd; docs/benchmarks.md, fortieth session.
 *
 *   build/tests/bench/cpu-pipes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <time.h>

#define REPEAT 5
#define N 20000000L

static char buf[16384] __attribute__ ((aligned (64)));

static double
now (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define ADD4 "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0"
#define AVX2_INLINE static inline __attribute__ ((target ("avx2"), \
        always_inline))

/* GHz: 4 dependent additions an iteration */
static double
clock_ghz (void)
{
  double best = 0.0;
  int r;

  for (r = 0; r < REPEAT; r++) {
    long x = 0, i;
    double t = now (), ghz;

    for (i = 0; i < 10 * N; i++)
      __asm__ volatile (ADD4:"+r" (x));
    ghz = 4.0 * 10 * N / (now () - t) / 1e9;
    if (ghz > best)
      best = ghz;
  }
  return best;
}

/* ymm13 and ymm14: 1.0000001 (a divisor that keeps the quotients
 * normal over N divisions: 1.0000001^-N stays above 1e-9) and 1.5; ymm1-4
 * 1.5. They hold across the loop's own asm statements because the loop
 * around them uses no vector register. */
AVX2_INLINE void
set_operands (void)
{
  static const double a[4] = { 1.0000001, 1.0000001, 1.0000001, 1.0000001 };
  static const double b[4] = { 1.5, 1.5, 1.5, 1.5 };

  __asm__ volatile ("vmovupd %0,%%ymm13\n\tvmovupd %1,%%ymm14\n\t"
      "vmovupd %1,%%ymm1\n\tvmovupd %1,%%ymm2\n\tvmovupd %1,%%ymm3\n\t"
      "vmovupd %1,%%ymm4"::"m" (a), "m" (b):"xmm1", "xmm2", "xmm3", "xmm4",
      "xmm13", "xmm14");
}

/* an asm body run N times, with p and q (%0 and %1) pointing into buf: p
 * at 8 positions 512 bytes apart in the first 4 KB, q at 4 positions 1 KB
 * apart from 8 KB + 256 bytes on (all in L1) */
#define BODY(name, text, ...) \
  static void __attribute__ ((target ("avx2"), noinline)) \
  name (void) \
  { \
    long i; \
    set_operands (); \
    for (i = 0; i < N; i++) { \
      char *p = buf + ((i * 512) & 4095); \
      char *q = buf + 8192 + 256 + ((i * 1024) & 4095); \
      __asm__ volatile (text:: "r" (p), "r" (q): "memory", __VA_ARGS__); \
    } \
  } \
  typedef int name##_defined

#define R8 "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8"
#define R12 R8, "xmm9", "xmm10", "xmm11", "xmm12"

#define CVT(r) "vcvtdq2pd %%xmm13,%%ymm" #r "\n\t"
#define FADD(r) "vaddpd %%ymm13,%%ymm14,%%ymm" #r "\n\t"
#define FMUL(r) "vmulpd %%ymm13,%%ymm14,%%ymm" #r "\n\t"
#define IADD(r) "vpaddd %%ymm13,%%ymm14,%%ymm" #r "\n\t"
#define ALIGNR(r) "vpalignr $8,%%ymm13,%%ymm14,%%ymm" #r "\n\t"
#define ST(o) "vmovdqa %%ymm0," #o "(%0)\n\t"
#define LD(o, r) "vmovdqu " #o "(%1),%%ymm" #r "\n\t"
#define X8(m) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8)
#define X10(m) X8(m) m(9) m(10)

/* the step's memory operations: 11 aligned stores, 23 loads of which 8
 * cross a cache line */
#define STEP_MEM \
  ST(0) ST(32) ST(64) ST(96) ST(128) ST(160) ST(192) ST(224) ST(256) \
  ST(288) ST(320) \
  LD(40, 1) LD(32, 2) LD(104, 3) LD(96, 4) LD(168, 5) LD(160, 6) \
  LD(232, 7) LD(224, 8) LD(296, 9) LD(288, 10) LD(360, 11) LD(352, 12) \
  LD(424, 1) LD(416, 2) LD(488, 3) LD(480, 4) LD(512, 5) LD(544, 6) \
  LD(576, 7) LD(608, 8) LD(640, 9) LD(672, 10) LD(704, 11)
#define ALU60 X10(IADD) X10(IADD) X10(IADD) X10(FADD) X10(FADD) X10(FMUL)

BODY (b_div, "vdivpd %%ymm13,%%ymm1,%%ymm1\n\tvdivpd %%ymm13,%%ymm2,%%ymm2\n\t"
    "vdivpd %%ymm13,%%ymm3,%%ymm3\n\tvdivpd %%ymm13,%%ymm4,%%ymm4", R8);
BODY (b_div_chain, "vdivpd %%ymm13,%%ymm1,%%ymm1", R8);
BODY (b_cvt, X8 (CVT), R8);
BODY (b_fadd, X8 (FADD), R8);
BODY (b_cvt_fadd, CVT (1) CVT (2) CVT (3) CVT (4) FADD (5) FADD (6) FADD (7)
    FADD (8), R8);
BODY (b_st_fadd, ST (0) ST (32) ST (64) ST (96) X8 (FADD), R8);
BODY (b_alignr, X8 (ALIGNR), R8);
BODY (b_iadd, X8 (IADD), R8);
BODY (b_mem, STEP_MEM, R12);
BODY (b_alu, ALU60, R12);
BODY (b_mem_alu, STEP_MEM ALU60, R12);

static double
cycles (void (*f) (void), double ghz)
{
  double best = 1e30;
  int r;

  for (r = 0; r < REPEAT; r++) {
    double t;

    t = now ();
    f ();
    t = now () - t;
    if (t < best)
      best = t;
  }
  return best * ghz * 1e9 / N;
}

int
main (void)
{
  static const struct
  {
    const char *name;
    void (*f) (void);
    double per;                 /* instructions a figure is divided by */
  } cases[] = {
    {"vdivpd ymm, 4 independent (each)", b_div, 4},
    {"vdivpd ymm, dependent (latency)", b_div_chain, 1},
    {"vcvtdq2pd ymm, xmm (each)", b_cvt, 8},
    {"vaddpd ymm (each)", b_fadd, 8},
    {"vpaddd ymm (each)", b_iadd, 8},
    {"vpalignr ymm (each)", b_alignr, 8},
    {"4 vcvtdq2pd + 4 vaddpd", b_cvt_fadd, 1},
    {"4 stores + 8 vaddpd", b_st_fadd, 1},
    {"8 vaddpd", b_fadd, 1},
    {"the step's memory: 11 stores + 23 loads", b_mem, 1},
    {"60 vector µops (30 vpaddd, 20 vaddpd, 10 vmulpd)", b_alu, 1},
    {"both", b_mem_alu, 1},
  };
  double ghz;
  unsigned i;

  __builtin_cpu_init ();
  if (!__builtin_cpu_supports ("avx2")) {
    printf ("no AVX2 on this CPU: nothing to measure\n");
    return 0;
  }
  ghz = clock_ghz ();
  printf ("clock (dependent additions): %.2f GHz\n", ghz);
  printf ("cycles, best of %d runs of %ld iterations:\n", REPEAT, N);
  for (i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    printf ("  %-50s %6.2f\n", cases[i].name,
        cycles (cases[i].f, ghz) / cases[i].per);
  return 0;
}
