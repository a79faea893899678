/* The alignment search of the compute library (cq-align.h) against a naive
 * double-precision reference written here: every thumbnail value (the
 * block means, sum / factor²) equal, every distance (/ factor⁴) within
 * 1e-12 relative of Σ (mean_a - mean_b)². 8-bit samples packed and every
 * 2 or 4 bytes (YUY2, UYVY, RGBx luma), 16-bit samples at depth 10 (bits
 * above it set, which must be masked), P010's shift 6 and depth 16; sizes
 * from a few samples to 4K (thumbnails and distances split over the pool),
 * padded strides.
 *
 *   test-align          the CPU backend (cpu suite)
 *   test-align --cuda   the CPU backend, then CUDA from device and host
 *                       frames, equal to the CPU bit for bit (gpu suite;
 *                       exits 77 where no CUDA device is usable)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-align.h"
#include "cq-cuda.h"
#include "cq-frames.h"
#include "cq-test.h"

#define N_FRAMES 5              /* four reference frames and the probe */
#define PROBE (N_FRAMES - 1)

typedef struct
{
  const char *name;
  unsigned width, height;
  CqLayout layout;              /* kind, depth, shift */
  unsigned sample_stride, offset;
  unsigned pad;                 /* bytes after a row */
} Case;

/* The cases' layouts: 8-bit samples, or 16-bit ones of a depth, shifted */
#define GRAY8 {.kind = CQ_LAYOUT_GRAY8,.depth = 8}
#define GRAY16(d, s) {.kind = CQ_LAYOUT_GRAY16,.depth = (d),.shift = (s)}

static const Case cases[] = {
  {"GRAY8 7x5", 7, 5, GRAY8, 1, 0, 0},
  {"GRAY8 256x192", 256, 192, GRAY8, 1, 0, 0},
  {"GRAY8 333x77 padded", 333, 77, GRAY8, 1, 0, 13},
  {"GRAY8 641x480", 641, 480, GRAY8, 1, 0, 0},
  {"I420 1920x1080", 1920, 1080, GRAY8, 1, 0, 64},
  {"I420 3840x2160", 3840, 2160, GRAY8, 1, 0, 0},
  {"YUY2 1280x720", 1280, 720, GRAY8, 2, 0, 0},
  {"UYVY 322x200", 322, 200, GRAY8, 2, 1, 6},
  {"RGBx 1000x563", 1000, 563, GRAY8, 4, 0, 0},
  {"I420_10LE 1920x1080", 1920, 1080, GRAY16 (10, 0), 2, 0, 32},
  {"P010 1366x768", 1366, 768, GRAY16 (10, 6), 2, 0, 0},
  {"GRAY16 500x301", 500, 301, GRAY16 (16, 0), 2, 0, 2},
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int failures, checks;

/* Frame k: smooth content moving by k, plus noise; the probe is frame 2
 * with more noise, so that distances differ. Every byte is written,
 * padding and bytes between samples included (never read). */
static void
fill (const Case * c, size_t stride, unsigned k, uint8_t * data)
{
  const CqLayout *l = &c->layout;
  unsigned bytes = l->kind == CQ_LAYOUT_GRAY16 ? 2 : 1;
  unsigned scale = l->kind == CQ_LAYOUT_GRAY16 ? l->depth - 8 : 0;
  unsigned shown = k == PROBE ? 2 : k;
  unsigned x, y;
  size_t i;

  for (i = 0; i < stride * c->height; i++)
    data[i] = (uint8_t) cq_test_random (&rng);
  for (y = 0; y < c->height; y++)
    for (x = 0; x < c->width; x++) {
      uint8_t *s = data + y * stride + c->offset + (size_t) x *
          c->sample_stride;
      unsigned v = (unsigned) (128 + 100 * sin ((x + 3.0 * shown) / 9.0) *
          cos (y / 13.0)) << scale;

      v += cq_test_random (&rng) % ((k == PROBE ? 24u : 8u) << scale);
      if (bytes == 1) {
        s[0] = (uint8_t) (v > 255 ? 255 : v);
      } else {
        unsigned max = (1u << l->depth) - 1;
        /* bits outside the sample are set: they must be masked off */
        unsigned junk = (unsigned) cq_test_random (&rng) & ~(max << l->shift)
            & 0xffffu;
        unsigned w = ((v > max ? max : v) << l->shift) | junk;

        s[0] = (uint8_t) w;
        s[1] = (uint8_t) (w >> 8);
      }
    }
}

/* The naive block mean of thumbnail value (tx, ty), in 8-bit units. */
static double
naive_mean (const Case * c, const uint8_t * data, size_t stride,
    unsigned f, unsigned tx, unsigned ty)
{
  const CqLayout *l = &c->layout;
  double sum = 0.0;
  unsigned i, j;

  for (j = 0; j < f; j++)
    for (i = 0; i < f; i++) {
      const uint8_t *s = data + (size_t) (ty * f + j) * stride + c->offset +
          (size_t) (tx * f + i) * c->sample_stride;

      if (l->kind == CQ_LAYOUT_GRAY8) {
        sum += s[0];
      } else {
        unsigned w = s[0] | s[1] << 8;

        sum += (double) ((((w >> l->shift) & ((1u << l->depth) - 1))) >>
            (l->depth - 8));
      }
    }
  return sum / ((double) f * f);
}

static void
check (int ok, const char *what, const Case * c, const char *backend,
    unsigned k)
{
  checks++;
  if (!ok) {
    failures++;
    printf ("FAIL %s %s frame %u: %s\n", c->name, backend, k, what);
  }
}

/* A backend's thumbnails (thumbs[k]) and distances of the probe to frames
 * 3, 0, 2, 1 (in that order) against the naive reference. */
static void
check_results (const Case * c, const char *backend, uint8_t ** frames,
    size_t stride, uint32_t ** thumbs, const uint64_t * dist)
{
  static const unsigned order[] = { 3, 0, 2, 1 };
  unsigned f, tw, th, k, x, y, i;
  CqAlignPlane plane;
  double *means[N_FRAMES];

  memset (&plane, 0, sizeof (plane));
  plane.width = c->width;
  plane.height = c->height;
  cq_align_thumb_size (&plane, &f, &tw, &th);
  for (k = 0; k < N_FRAMES; k++) {
    int equal = 1;

    means[k] = malloc (((size_t) tw * th + 1) * sizeof (double));
    for (y = 0; y < th; y++)
      for (x = 0; x < tw; x++) {
        double m = naive_mean (c, frames[k], stride, f, x, y);

        means[k][y * tw + x] = m;
        equal &= thumbs[k][y * tw + x] / ((double) f * f) == m;
      }
    check (equal, "thumbnail differs from the naive block means", c,
        backend, k);
  }
  for (i = 0; i < 4; i++) {
    double naive = 0.0, got = (double) dist[i] / ((double) f * f * f * f);
    size_t n = (size_t) tw * th;
    size_t j;

    for (j = 0; j < n; j++) {
      double d = means[PROBE][j] - means[order[i]][j];
      naive += d * d;
    }
    check (fabs (got - naive) <= 1e-12 * naive, "distance differs from the "
        "naive one", c, backend, order[i]);
    if (fabs (got - naive) > 1e-12 * naive)
      printf ("  got %.17g, naive %.17g\n", got, naive);
  }
  /* the probe shows frame 2: the nearest */
  check (dist[2] < dist[0] && dist[2] < dist[1] && dist[2] < dist[3],
      "frame 2 is not the nearest", c, backend, 2);
  for (k = 0; k < N_FRAMES; k++)
    free (means[k]);
}

/* Device copies (cq-frames.h): frames 0 and 2 from pageable memory, 1
 * and 3 from pinned, thumbnails from the copies (pitched unlike the
 * host's rows); then every frame is taken, and a released one is reused. */
static void
run_copies (const Case * c, CqAlignCuda * cu, size_t stride,
    uint8_t ** frames, uint32_t ** thumbs, size_t elems,
    const uint64_t * dist, uint32_t ** cuda_thumbs)
{
  static const unsigned order[] = { 3, 0, 2, 1 };
  const char *name = "CUDA copies";
  CqCudaTarget target = CQ_CUDA_TARGET_DEVICE (0);
  CqFramesShape shape = { 1, {stride - c->pad}, {c->height} };
  size_t bytes = stride * c->height;
  uint8_t *pinned = cq_cuda_host_alloc (2 * bytes, NULL);
  unsigned copy[N_FRAMES], extra, k;
  uint64_t copy_dist[4];
  CqFramesCuda *fr;
  CqError err = { CQ_OK, "" };

  fr = cq_frames_cuda_new_for (&target, &shape, N_FRAMES, &err);
  check (fr != NULL && pinned != NULL, err.message, c, name, 0);
  for (k = 0; fr && pinned && k < N_FRAMES; k++) {
    const void *src = frames[k];

    if (k % 2 == 1) {
      memcpy (pinned + (k / 2) * bytes, frames[k], bytes);
      src = pinned + (k / 2) * bytes;
    }
    check (cq_frames_cuda_upload (fr, &src, &stride, &copy[k], &err) == CQ_OK
        && cq_align_cuda_thumbnail_frame (cu, k, fr, copy[k], 0, c->offset,
            &err) == CQ_OK, err.message, c, name, k);
  }
  if (fr && pinned) {
    const void *src = frames[0];

    check (cq_align_cuda_distances (cu, PROBE, order, 4, copy_dist,
            &err) == CQ_OK, err.message, c, name, 0);
    for (k = 0; k < N_FRAMES; k++) {
      check (cq_align_cuda_download (cu, k, cuda_thumbs[k], &err) == CQ_OK
          && memcmp (cuda_thumbs[k], thumbs[k], elems * sizeof (uint32_t))
          == 0, "thumbnail of the copy differs from the CPU's", c, name, k);
    }
    check (memcmp (copy_dist, dist, sizeof (copy_dist)) == 0,
        "distances of the copies differ from the CPU's", c, name, 0);
    check (cq_frames_cuda_upload (fr, &src, &stride, &extra, &err) ==
        CQ_ERROR_OUT_OF_MEMORY, "an upload past the most frames taken", c,
        name, 0);
    cq_frames_cuda_release (fr, copy[2]);
    check (cq_frames_cuda_upload (fr, &src, &stride, &extra, &err) == CQ_OK
        && extra == copy[2] && cq_frames_cuda_wait (fr, extra, &err) ==
        CQ_OK, "a released frame is not reused", c, name, 0);
  }
  cq_frames_cuda_unref (fr);
  cq_cuda_host_free (pinned);
}

static void
run_case (const Case * c, int cuda)
{
  static const unsigned order[] = { 3, 0, 2, 1 };
  unsigned bytes = c->layout.kind == CQ_LAYOUT_GRAY16 ? 2 : 1;
  size_t stride = (size_t) c->width * c->sample_stride + c->offset + bytes +
      c->pad;
  CqError err = { CQ_OK, "" };
  CqAlignPlane plane;
  CqAlignCpu *cpu;
  uint8_t *frames[N_FRAMES];
  uint32_t *thumbs[N_FRAMES], *cuda_thumbs[N_FRAMES];
  uint64_t dist[4], cuda_dist[4];
  unsigned f, tw, th, k;
  size_t elems;

  memset (&plane, 0, sizeof (plane));
  plane.width = c->width;
  plane.height = c->height;
  plane.layout = c->layout;
  plane.sample_stride = c->sample_stride;
  cq_align_thumb_size (&plane, &f, &tw, &th);
  elems = (size_t) tw * th;
  for (k = 0; k < N_FRAMES; k++) {
    frames[k] = malloc (stride * c->height);
    fill (c, stride, k, frames[k]);
  }

  cpu = cq_align_cpu_new (&plane, N_FRAMES, &err);
  if (!cpu) {
    printf ("FAIL %s: %s\n", c->name, err.message);
    failures++;
    goto done;
  }
  for (k = 0; k < N_FRAMES; k++) {
    if (cq_align_cpu_thumbnail (cpu, k, frames[k] + c->offset, stride,
            &err) != CQ_OK)
      printf ("FAIL %s: %s\n", c->name, err.message);
    thumbs[k] = (uint32_t *) cq_align_cpu_thumb (cpu, k);
  }
  if (cq_align_cpu_distances (cpu, PROBE, order, 4, dist, &err) != CQ_OK)
    printf ("FAIL %s: %s\n", c->name, err.message);
  check_results (c, "CPU", frames, stride, thumbs, dist);

  if (cuda) {
    CqCudaTarget target = CQ_CUDA_TARGET_DEVICE (0);
    CqAlignCuda *cu = cq_align_cuda_new_for (&target, &plane, N_FRAMES, &err);
    uint8_t *dev = NULL;
    unsigned pass;

    check (cu != NULL, err.message, c, "CUDA", 0);
    if (cu)
      dev = cq_cuda_malloc (0, stride * c->height * N_FRAMES, &err);
    check (dev != NULL, err.message, c, "CUDA", 0);
    for (k = 0; k < N_FRAMES; k++)
      cuda_thumbs[k] = malloc ((elems + 1) * sizeof (uint32_t));
    /* pass 0: every frame on the device; pass 1: frames 1 and 3 from host
     * memory (thumbnail on the CPU, uploaded) */
    for (pass = 0; cu && dev && pass < 2; pass++) {
      const char *name = pass ? "CUDA host" : "CUDA device";

      for (k = 0; k < N_FRAMES; k++) {
        uint8_t *d = dev + (size_t) k * stride * c->height;
        CqStatus ret;

        if (pass == 1 && k % 2 == 1) {
          ret = cq_align_cuda_thumbnail_host (cu, k, frames[k] + c->offset,
              stride, &err);
        } else {
          ret = cq_cuda_upload (0, d, frames[k], stride * c->height, &err);
          if (ret == CQ_OK)
            ret = cq_align_cuda_thumbnail_device (cu, k, d + c->offset,
                stride, &err);
        }
        check (ret == CQ_OK, err.message, c, name, k);
      }
      check (cq_align_cuda_distances (cu, PROBE, order, 4, cuda_dist,
              &err) == CQ_OK, err.message, c, name, 0);
      for (k = 0; k < N_FRAMES; k++) {
        check (cq_align_cuda_download (cu, k, cuda_thumbs[k], &err) == CQ_OK,
            err.message, c, name, k);
        check (memcmp (cuda_thumbs[k], thumbs[k], elems * sizeof (uint32_t))
            == 0, "thumbnail differs from the CPU's", c, name, k);
      }
      check (memcmp (cuda_dist, dist, sizeof (dist)) == 0,
          "distances differ from the CPU's", c, name, 0);
      check_results (c, name, frames, stride, cuda_thumbs, cuda_dist);
    }
    if (cu)
      run_copies (c, cu, stride, frames, thumbs, elems, dist, cuda_thumbs);
    for (k = 0; k < N_FRAMES; k++)
      free (cuda_thumbs[k]);
    cq_cuda_free (0, dev);
    cq_align_cuda_free (cu);
  }
  printf ("%-22s %ux%u thumbnails of %ux%u blocks: distances %llu %llu "
      "%llu %llu\n", c->name, tw, th, f, f, (unsigned long long) dist[0],
      (unsigned long long) dist[1], (unsigned long long) dist[2],
      (unsigned long long) dist[3]);
  cq_align_cpu_free (cpu);
done:
  for (k = 0; k < N_FRAMES; k++)
    free (frames[k]);
}

/* Arguments the library refuses. */
static void
check_refusals (void)
{
  static const Case dummy = { "refusals", 0, 0, GRAY8, 1, 0, 0 };
  CqAlignPlane p;
  CqError err;

  memset (&p, 0, sizeof (p));
  p.width = 64;
  p.height = 48;
  p.layout.kind = CQ_LAYOUT_GRAY8;
  p.layout.depth = 8;
  p.sample_stride = 1;
  check (cq_align_check (&p, 2, &err) == CQ_OK, "a valid plane refused",
      &dummy, "", 0);
  check (cq_align_check (&p, CQ_ALIGN_MAX_SLOTS + 1, &err) ==
      CQ_ERROR_INVALID, "too many slots taken", &dummy, "", 0);
  p.layout.kind = CQ_LAYOUT_RGB8;
  check (cq_align_check (&p, 2, &err) == CQ_ERROR_INVALID,
      "RGB8 taken", &dummy, "", 0);
  p.layout.kind = CQ_LAYOUT_GRAY16;
  p.layout.depth = 10;
  p.layout.shift = 7;
  p.sample_stride = 2;
  check (cq_align_check (&p, 2, &err) == CQ_ERROR_INVALID,
      "depth + shift over 16 taken", &dummy, "", 0);
}

int
main (int argc, char **argv)
{
  int cuda = argc > 1 && strcmp (argv[1], "--cuda") == 0;
  unsigned i;

  if (cuda && cq_test_skip_without_cuda ())
    return 77;
  check_refusals ();
  for (i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
    run_case (&cases[i], cuda);
  printf ("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
