/* Alignment search benchmark (cq-align.h): prints figures, asserts
 * nothing.
 *
 * For GRAY8 1080p and 4K (rows unpadded), in µs: one thumbnail on the CPU
 * (the frames taken in turn from a set of 64 MiB or more, so that each is
 * read from memory as a frame arriving from upstream is, and again with
 * one frame over and over, from cache) and the distances of a probe to 31
 * candidates (cudassim's default window of 15) on the CPU; then, where a
 * CUDA device is usable, the same from device memory (thumbnail kernels
 * back to back, mean per kernel; one synchronous distances call) and a
 * thumbnail of a host frame on the CUDA backend (made on the CPU,
 * uploaded), from pageable and from pinned memory.
 *
 *   bench-align [--iterations N] [--size WxH]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-align.h"
#include "cq-cuda.h"
#include "cq-pool.h"
#include "../cq-test.h"

#define CANDIDATES 31
#define SLOTS (CANDIDATES + 1)  /* the candidates and the probe */
#define PROBE CANDIDATES
#define SET_BYTES (64u << 20)   /* frames read in turn: past the caches */

typedef struct
{
  CqAlignCpu *cpu;
  CqAlignCuda *cu;
  uint8_t **frames;
  unsigned n_frames, next;
  size_t stride;
  unsigned slots[CANDIDATES];
  uint64_t distances[CANDIDATES];
} Bench;

static CqStatus
cpu_thumbnail (void *user, CqError * err)
{
  Bench *b = user;
  const uint8_t *frame = b->frames[b->next++ % b->n_frames];

  return cq_align_cpu_thumbnail (b->cpu, b->next % SLOTS, frame, b->stride,
      err);
}

static CqStatus
cpu_thumbnail_same (void *user, CqError * err)
{
  Bench *b = user;

  return cq_align_cpu_thumbnail (b->cpu, PROBE, b->frames[0], b->stride,
      err);
}

static CqStatus
cpu_distances (void *user, CqError * err)
{
  Bench *b = user;

  return cq_align_cpu_distances (b->cpu, PROBE, b->slots, CANDIDATES,
      b->distances, err);
}

static CqStatus
cuda_thumbnail_device (void *user, CqError * err)
{
  Bench *b = user;
  const uint8_t *frame = b->frames[b->next++ % b->n_frames];

  return cq_align_cuda_thumbnail_device (b->cu, b->next % SLOTS, frame,
      b->stride, err);
}

static CqStatus
cuda_thumbnail_host (void *user, CqError * err)
{
  Bench *b = user;
  const uint8_t *frame = b->frames[b->next++ % b->n_frames];

  return cq_align_cuda_thumbnail_host (b->cu, b->next % SLOTS, frame,
      b->stride, err);
}

static CqStatus
cuda_distances (void *user, CqError * err)
{
  Bench *b = user;

  return cq_align_cuda_distances (b->cu, PROBE, b->slots, CANDIDATES,
      b->distances, err);
}

/* Frames of a photo-like gradient with noise, different in each. */
static void
fill (uint8_t * p, unsigned w, unsigned h, unsigned k)
{
  uint64_t s = 88172645463325252ull + k;
  unsigned x, y;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      p[(size_t) y * w + x] = (uint8_t) ((x + 2 * y + 5 * k) / 16 +
          (cq_test_xorshift (&s) >> 60));
}

/* µs per call. */
static double
us (CqStatus (*call) (void *user, CqError * err), Bench * b, int iters)
{
  return cq_test_time_calls (call, b, iters) * 1e6;
}

static void
bench_cpu (Bench * b, const CqAlignPlane * plane, int iters)
{
  CqError err;
  double thumb, thumb_same, dist;
  unsigned i;

  b->cpu = cq_align_cpu_new (plane, SLOTS, &err);
  if (!b->cpu) {
    fprintf (stderr, "%s\n", err.message);
    exit (1);
  }
  for (i = 0; i < SLOTS; i++)
    cq_align_cpu_thumbnail (b->cpu, i, b->frames[i % b->n_frames], b->stride,
        &err);
  b->next = 0;
  thumb = us (cpu_thumbnail, b, iters);
  thumb_same = us (cpu_thumbnail_same, b, iters);
  dist = us (cpu_distances, b, iters);
  printf ("| %ux%u | CPU | %.1f | %.1f | %.1f |\n", plane->width,
      plane->height, thumb, thumb_same, dist);
  cq_align_cpu_free (b->cpu);
  b->cpu = NULL;
}

static void
bench_cuda (Bench * b, const CqAlignPlane * plane, int iters)
{
  const size_t bytes = b->stride * plane->height;
  CqError err;
  double thumb = 0, dist = 0, pageable = 0, pinned = 0, t0;
  uint8_t **host = b->frames, *dev[8], *pin;
  CqCudaTarget target = CQ_CUDA_TARGET_DEVICE (0);
  unsigned n_host = b->n_frames, i;
  int k;

  b->cu = cq_align_cuda_new_for (&target, plane, SLOTS, &err);
  if (!b->cu) {
    fprintf (stderr, "%s\n", err.message);
    exit (1);
  }
  /* device frames: 8 (the device's cache is not the question here) */
  for (i = 0; i < 8; i++) {
    dev[i] = cq_cuda_malloc (0, bytes, &err);
    if (!dev[i] || cq_cuda_upload (0, dev[i], host[i % n_host], bytes,
            &err) != CQ_OK) {
      fprintf (stderr, "%s\n", err.message);
      exit (1);
    }
  }
  b->frames = dev;
  b->n_frames = 8;
  for (i = 0; i < SLOTS; i++)
    cq_align_cuda_thumbnail_device (b->cu, i, dev[i % 8], b->stride, &err);
  /* kernels back to back; the distances call waits for them all */
  cuda_distances (b, &err);
  t0 = cq_test_now_s ();
  for (k = 0; k < 20 * iters; k++)
    cuda_thumbnail_device (b, &err);
  cuda_distances (b, &err);
  thumb = (cq_test_now_s () - t0) / (20 * iters) * 1e6;
  dist = us (cuda_distances, b, iters);

  /* host frames: pageable (the set above), then one pinned frame */
  b->frames = host;
  b->n_frames = n_host;
  pageable = us (cuda_thumbnail_host, b, iters);
  pin = cq_cuda_host_alloc (bytes, &err);
  if (pin) {
    memcpy (pin, host[0], bytes);
    b->frames = &pin;
    b->n_frames = 1;
    pinned = us (cuda_thumbnail_host, b, iters);
    b->frames = host;
    b->n_frames = n_host;
    cq_cuda_host_free (pin);
  }
  printf ("| %ux%u | CUDA, device frames | %.1f | | %.1f |\n",
      plane->width, plane->height, thumb, dist);
  printf ("| %ux%u | CUDA, host frames | %.1f (pageable) | %.1f (pinned) | "
      "|\n", plane->width, plane->height, pageable, pinned);
  for (i = 0; i < 8; i++)
    cq_cuda_free (0, dev[i]);
  cq_align_cuda_free (b->cu);
  b->cu = NULL;
}

int
main (int argc, char **argv)
{
  static const unsigned sizes[][2] = { {1920, 1080}, {3840, 2160} };
  int iters = 200;
  unsigned only_w = 0, only_h = 0, si;
  CqError err;
  int have_cuda = cq_cuda_device_count (&err) > 0;
  double bw_pageable, bw_pinned;
  char distances[32];

  cq_test_bench_size_args (argc, argv, &iters, &only_w, &only_h);
  cq_test_bench_device (have_cuda, &err, &bw_pageable, &bw_pinned);
  printf ("CPU threads of the worker pool: %u\n\n", cq_pool_threads ());
  snprintf (distances, sizeof (distances), "%u distances µs", CANDIDATES);
  cq_test_table_header ("frame", "backend", "thumbnail µs (frames in turn)",
      "thumbnail µs (one frame)", distances, NULL);
  for (si = 0; si < sizeof (sizes) / sizeof (sizes[0]); si++) {
    const unsigned w = sizes[si][0], h = sizes[si][1];
    const CqAlignPlane plane = {.width = w,.height = h,
      .layout = {.kind = CQ_LAYOUT_GRAY8,.depth = 8},.sample_stride = 1
    };
    Bench b;
    unsigned k;

    if (only_w && (w != only_w || h != only_h))
      continue;
    memset (&b, 0, sizeof (b));
    b.stride = w;
    b.n_frames = (SET_BYTES + (size_t) w * h - 1) / ((size_t) w * h);
    if (b.n_frames < 8)
      b.n_frames = 8;
    b.frames = malloc (b.n_frames * sizeof (uint8_t *));
    for (k = 0; k < b.n_frames; k++) {
      b.frames[k] = malloc ((size_t) w * h);
      fill (b.frames[k], w, h, k);
    }
    for (k = 0; k < CANDIDATES; k++)
      b.slots[k] = k;

    bench_cpu (&b, &plane, iters);
    if (have_cuda)
      bench_cuda (&b, &plane, iters);
    fflush (stdout);
    for (k = 0; k < b.n_frames; k++)
      free (b.frames[k]);
    free (b.frames);
  }
  printf ("\nThumbnail: mean µs per call (frames in turn: a set of %u MiB "
      "or more, read from memory; one frame: from cache). Distances: one "
      "probe to %u candidates, mean µs per call. CUDA device: thumbnail "
      "kernels back to back (mean per kernel), distances synchronous; CUDA, "
      "host frames: the CPU thumbnail and its upload per call.%s\n", SET_BYTES >> 20,
      CANDIDATES, have_cuda ? "" : " No CUDA device: CPU only.");
  return 0;
}
