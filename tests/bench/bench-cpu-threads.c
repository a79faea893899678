/* Where the CPU time of a frame goes when the SSIM bands run on T threads
 * of one process (docs/benchmarks.md, forty-second session). Prints, best
 * of --repeat passes over the frames, the process's CPU time and the wall
 * time per frame; run the modes alternately, round after round, on a host
 * whose speed moves.
 *
 *   bench-cpu-threads MODE --threads T [--ssim box8|ffmpeg|gauss11]
 *       [--size WxH] [--frames N] [--repeat R] [REF.gray DIST.gray]
 *
 * MODE:
 *   bands    one cq_ssim_cpu of T bands (the library's way), frame after
 *            frame
 *   frames   T cq_ssim_cpu of one band each, on the worker pool: thread i
 *            the frames i, i + T, ... (no bands: the cost of T threads
 *            busy at once)
 *   slices-dyn, slices-sticky, slices-serial
 *            the frame cut into T slices of equal height, each measured by a
 *            cq_ssim_cpu of one band: dyn, the slice's own (its scratch goes
 *            to whichever thread runs the slice); sticky, the running
 *            thread's (its scratch stays on that thread); serial, every
 *            slice on the calling thread. Also prints the CPU time inside
 *            the slices' calls, the rest being the pool's
 *   alu, fma256, fma512
 *            no frames: register-only loops (a dependent add chain; 8
 *            chains of 256-bit or 512-bit FMAs) on T threads at once, the
 *            mean CPU seconds a thread: whether the host slows its cores
 *            when T of them are busy
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cq-pool.h"
#include "cq-ssim.h"
#include "../cq-test.h"
#include "bench-frames.h"

#if defined (__x86_64__) && defined (__GNUC__)
#include <immintrin.h>
#define HAVE_X86_PROBES 1
#endif

#define MAX_THREADS 64

static unsigned width = 1920, height = 1080, n_frames = 60, n_threads;
static const uint8_t *ref, *dist;
static CqSsimWindow window = CQ_SSIM_BOX8;



static CqSsimCpu *
ssim_new (unsigned rows, unsigned bands)
{
  CqSsimPlane p = cq_test_gray8_plane (width, rows);
  CqError err = { 0 };
  CqSsimCpu *cpu = cq_ssim_cpu_new (window, &p, 1, bands, &err);

  if (!cpu) {
    fprintf (stderr, "cq_ssim_cpu_new: %s\n", err.message);
    exit (1);
  }
  return cpu;
}

/* SSIM sum of the rows from row0 of frame n */
static double
ssim_measure (CqSsimCpu * cpu, unsigned n, unsigned row0)
{
  const size_t at = ((size_t) n * height + row0) * width;
  const void *a[1] = { ref + at }, *b[1] = { dist + at };
  size_t stride[1] = { width };
  CqSsimPlaneSums sums;
  CqError err = { 0 };

  if (cq_ssim_cpu_measure (cpu, a, stride, b, stride, &sums, &err) != CQ_OK) {
    fprintf (stderr, "cq_ssim_cpu_measure: %s\n", err.message);
    exit (1);
  }
  return sums.ssim_sum;
}

/* ---- the modes ---- */

static CqSsimCpu *per_index[MAX_THREADS];
static double index_cpu[MAX_THREADS];
static unsigned current_frame, pass_frames, slice_rows, sticky;
static int next_thread_id;
static __thread int thread_id = -1;

static void
frames_index (void *user, unsigned i)
{
  unsigned n;

  (void) user;
  for (n = i; n < pass_frames; n += n_threads)
    ssim_measure (per_index[i], n, 0);
}

static void
slice_index (void *user, unsigned k)
{
  double c0 = clock_s (CLOCK_THREAD_CPUTIME_ID);
  CqSsimCpu *cpu;

  (void) user;
  if (thread_id < 0)
    thread_id = __atomic_fetch_add (&next_thread_id, 1, __ATOMIC_RELAXED);
  cpu = per_index[sticky ? (unsigned) thread_id % MAX_THREADS : k];
  ssim_measure (cpu, current_frame, k * slice_rows);
  index_cpu[k] += clock_s (CLOCK_THREAD_CPUTIME_ID) - c0;
}

/* One pass over the frames in mode; returns the CPU seconds inside the
 * slices (slice modes). */
static double
run_pass (const char *mode, CqSsimCpu * bands, unsigned frames)
{
  unsigned n, k;
  double inside = 0.0;

  if (strcmp (mode, "bands") == 0) {
    for (n = 0; n < frames; n++)
      ssim_measure (bands, n, 0);
    return 0.0;
  }
  if (strcmp (mode, "frames") == 0) {
    pass_frames = frames;
    cq_pool_run (n_threads, frames_index, NULL);
    return 0.0;
  }
  memset (index_cpu, 0, sizeof index_cpu);
  for (n = 0; n < frames; n++) {
    current_frame = n;
    if (strcmp (mode, "slices-serial") == 0)
      for (k = 0; k < n_threads; k++)
        slice_index (NULL, k);
    else
      cq_pool_run (n_threads, slice_index, NULL);
  }
  for (k = 0; k < n_threads; k++)
    inside += index_cpu[k];
  return inside;
}

static double probe_cpu[MAX_THREADS];

static void
alu_index (void *user, unsigned i)
{
  double c0 = clock_s (CLOCK_THREAD_CPUTIME_ID);
  uint64_t x = i, k;

  (void) user;
  /* one add a step on x, kept in its register by the empty asm */
  for (k = 0; k < 2000000000u; k++) {
    x += k;
    __asm__ volatile ("":"+r" (x));
  }
  probe_cpu[i] = clock_s (CLOCK_THREAD_CPUTIME_ID) - c0;
}

#ifdef HAVE_X86_PROBES
/* *INDENT-OFF* */
/* 8 chains of FMAs on vectors of one width, compiled for that instruction
 * set alone and run where the CPU has it */
#define FMA_PROBE(name, isa, vec, set1, fmadd)                          \
static void name (void *user, unsigned i) __attribute__((target (isa))); \
static void                                                             \
name (void *user, unsigned i)                                           \
{                                                                       \
  double c0 = clock_s (CLOCK_THREAD_CPUTIME_ID);                        \
  vec acc[8], m = set1 (0.999999), d = set1 (1e-9);                     \
  volatile double sink;                                                 \
  unsigned k, j;                                                        \
                                                                        \
  (void) user;                                                          \
  for (j = 0; j < 8; j++)                                               \
    acc[j] = set1 (1.0 + j);                                            \
  for (k = 0; k < 200000000u; k++)                                      \
    for (j = 0; j < 8; j++)                                             \
      acc[j] = fmadd (acc[j], m, d);                                    \
  probe_cpu[i] = clock_s (CLOCK_THREAD_CPUTIME_ID) - c0;                \
  for (j = 0; j < 8; j++)                                               \
    sink = acc[j][0];                                                   \
  (void) sink;                                                          \
}

FMA_PROBE (fma256_index, "avx2,fma", __m256d, _mm256_set1_pd, _mm256_fmadd_pd)
FMA_PROBE (fma512_index, "avx512f", __m512d, _mm512_set1_pd, _mm512_fmadd_pd)
/* *INDENT-ON* */
#endif

static int
run_probe (const char *mode)
{
  CqPoolFunc func = NULL;
  double mean = 0.0;
  unsigned i;

  if (strcmp (mode, "alu") == 0)
    func = alu_index;
#ifdef HAVE_X86_PROBES
  else if (strcmp (mode, "fma256") == 0 && __builtin_cpu_supports ("avx2")
      && __builtin_cpu_supports ("fma"))
    func = fma256_index;
  else if (strcmp (mode, "fma512") == 0 && __builtin_cpu_supports ("avx512f"))
    func = fma512_index;
#endif
  if (!func) {
    fprintf (stderr, "%s: not on this CPU\n", mode);
    return 2;
  }
  cq_pool_run (n_threads, func, NULL);
  for (i = 0; i < n_threads; i++)
    mean += probe_cpu[i] / n_threads;
  printf ("%s, %u threads: %.3f s a thread\n", mode, n_threads, mean);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "", *files[2] = { NULL, NULL };
  const char *ssim = "box8";
  unsigned repeat = 5, n_files = 0, r, k;
  double best_cpu = 1e30, best_wall = 1e30, best_inside = 1e30;
  CqSsimCpu *bands = NULL;
  int i, slices;

  for (i = 2; i < argc; i++) {
    if (strcmp (argv[i], "--threads") == 0 && i + 1 < argc)
      n_threads = atoi (argv[++i]);
    else if (strcmp (argv[i], "--ssim") == 0 && i + 1 < argc)
      ssim = argv[++i];
    else if (strcmp (argv[i], "--size") == 0 && i + 1 < argc)
      sscanf (argv[++i], "%ux%u", &width, &height);
    else if (strcmp (argv[i], "--frames") == 0 && i + 1 < argc)
      n_frames = atoi (argv[++i]);
    else if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = atoi (argv[++i]);
    else if (n_files < 2)
      files[n_files++] = argv[i];
  }
  if (n_threads < 1 || n_threads > MAX_THREADS || repeat < 1) {
    fprintf (stderr, "usage: %s bands|frames|slices-dyn|slices-sticky|"
        "slices-serial|alu|fma256|fma512 --threads T (1 ... %d) "
        "[--ssim W] [--size WxH] [--frames N] [--repeat R] "
        "[REF.gray DIST.gray]\n", argv[0], MAX_THREADS);
    return 2;
  }
  /* the helpers started, and whether each index gets its own thread */
  cq_pool_threads ();
  if (strcmp (mode, "alu") == 0 || strncmp (mode, "fma", 3) == 0)
    return run_probe (mode);

  slices = strncmp (mode, "slices-", 7) == 0;
  if (strcmp (mode, "bands") != 0 && strcmp (mode, "frames") != 0 &&
      strcmp (mode, "slices-dyn") != 0 && strcmp (mode, "slices-sticky") != 0
      && strcmp (mode, "slices-serial") != 0) {
    fprintf (stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (n_files != 2 || width < 16 || height / n_threads < 16 || !n_frames) {
    fprintf (stderr, "%s needs REF.gray DIST.gray of --frames frames of "
        "--size WxH (at least 16 rows a thread)\n", mode);
    return 2;
  }
  window = strcmp (ssim, "gauss11") == 0 ? CQ_SSIM_GAUSS11 :
      strcmp (ssim, "ffmpeg") == 0 ? CQ_SSIM_FFMPEG : CQ_SSIM_BOX8;
  ref = load (files[0], (size_t) width * height * n_frames);
  dist = load (files[1], (size_t) width * height * n_frames);

  if (strcmp (mode, "bands") == 0)
    bands = ssim_new (height, n_threads);
  else if (strcmp (mode, "frames") == 0)
    for (k = 0; k < n_threads; k++)
      per_index[k] = ssim_new (height, 1);
  else {
    /* slices of one height, so that any slice's object fits any slice:
     * the windows of T slices of h + halo rows (box8's 7, the ffmpeg
     * window's 3 blocks of 4, gauss11's 10) */
    const unsigned halo = window == CQ_SSIM_BOX8 ? 7 :
        window == CQ_SSIM_FFMPEG ? 4 : 10;

    slice_rows = (height - halo) / n_threads;
    if (window == CQ_SSIM_FFMPEG)
      slice_rows &= ~3u;
    sticky = strcmp (mode, "slices-sticky") == 0;
    for (k = 0; k < MAX_THREADS; k++)
      per_index[k] = ssim_new (slice_rows + halo, 1);
  }

  /* pass 0, one frame and untimed: pages and threads there */
  run_pass (mode, bands, 1);
  for (r = 0; r < repeat; r++) {
    double c0 = clock_s (CLOCK_PROCESS_CPUTIME_ID);
    double w0 = clock_s (CLOCK_MONOTONIC), inside, c, w;

    inside = run_pass (mode, bands, n_frames);
    c = clock_s (CLOCK_PROCESS_CPUTIME_ID) - c0;
    w = clock_s (CLOCK_MONOTONIC) - w0;
    if (c < best_cpu)
      best_cpu = c;
    if (w < best_wall)
      best_wall = w;
    if (inside < best_inside)
      best_inside = inside;
  }
  printf ("%s %s, %u threads: cpu %.3f ms a frame, wall %.3f", mode, ssim,
      n_threads, best_cpu / n_frames * 1e3, best_wall / n_frames * 1e3);
  if (slices)
    printf (", in the slices %.3f", best_inside / n_frames * 1e3);
  printf (" (best of %u)\n", repeat);
  cq_ssim_cpu_free (bands);
  for (k = 0; k < MAX_THREADS; k++)
    cq_ssim_cpu_free (per_index[k]);
  return 0;
}
