/* CPU backend on real frames: prints figures, asserts nothing.
 *
 * Reads N 8-bit luma frames of WxH from raw files (as `ffmpeg -pix_fmt gray
 * -f rawvideo` writes them) into memory, then measures each pair (SSIM) or
 * each reference frame (sharpness) with the CPU backend and prints the CPU
 * time (user + sys of the whole process, every thread, from
 * CLOCK_PROCESS_CPUTIME_ID) and the wall time per frame, best of --repeat
 * passes over all frames (one measure object, one untimed frame before
 * them), and the mean score.
 *
 *   bench-cpu-frames --size WxH --frames N --threads T
 *       (--ssim box8|ffmpeg|gauss11 [--msssim] [--layout L | --pix-fmt F]
 *        | --sharpness default|all) [--repeat R] [--hot] REF.gray [DIST.gray]
 *
 * --hot copies each frame (pair) to a staging buffer, untimed, just before
 * measuring it there, and times the measure calls alone: the frame is in
 * the caches as an upstream element (or FFmpeg's read into its frame
 * buffer, before its ssim filter) leaves it. Without it the frames come
 * from the N read into memory (at 1080p, 4 MB a pair: from the last-level
 * cache or DRAM), which for the ffmpeg window costs about as much as its
 * arithmetic.
 *
 * --msssim adds MS-SSIM to each pair's SSIM (the mean score is then the
 * MS-SSIM's). --layout (SSIM only) stores the frames, once read, as
 * another layout's plane: gray10, gray12, gray16 (GRAY16 of that depth,
 * the 8-bit value in the high bits and hashed noise below), nv12-uv (8-bit
 * samples 2 bytes apart), p010-uv (10-bit words 4 bytes apart, in the
 * high bits) or rgbx (R = G = B, 4 bytes a pixel); gray8 (the default)
 * keeps them. --pix-fmt gray10le, gray12le or gray16le (SSIM only) reads
 * the files as raw frames of that FFmpeg format instead (2 bytes a
 * sample, the value in the low bits), as FFmpeg reads them. Output, one line: `cpu_ms_per_frame wall_ms_per_frame
 * mean_score`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cq-sharpness.h"
#include "cq-ssim.h"
#include "../cq-test.h"
#include "bench-frames.h"

static int
fail (const CqError * err)
{
  fprintf (stderr, "%s\n", err->message);
  return 1;
}

/* The frames of data (n of w x h 8-bit samples, dist: the second file) as
 * planes of layout name, into *plane; NULL for an unknown name. */
static uint8_t *
convert (const uint8_t * data, size_t n, unsigned w, unsigned h, int dist,
    const char *name, CqSsimPlane * plane, unsigned *bytes)
{
  const size_t count = n * w * h;
  const int rgbx = strcmp (name, "rgbx") == 0;
  const int p010 = strcmp (name, "p010-uv") == 0;
  const unsigned shift = p010 ? 6 : 0;
  unsigned depth = 0, bpp;
  uint8_t *out;
  size_t i;

  *plane = cq_test_gray8_plane (w, h);
  if (strcmp (name, "gray10") == 0 || strcmp (name, "gray12") == 0 ||
      strcmp (name, "gray16") == 0)
    depth = (unsigned) atoi (name + 4);
  else if (p010)
    depth = 10;
  else if (strcmp (name, "nv12-uv") != 0 && !rgbx)
    return NULL;
  bpp = p010 || rgbx ? 4 : 2;
  out = malloc (count * bpp);
  if (!out)
    return NULL;
  memset (out, 7, count * bpp);
  for (i = 0; i < count; i++) {
    uint8_t *px = out + i * bpp;
    const unsigned noise = (unsigned) (i * 2654435761u) >> (dist ? 24 : 20);

    if (rgbx)
      px[0] = px[1] = px[2] = data[i];
    else if (!depth)
      px[0] = data[i];
    else {
      const unsigned v = ((unsigned) data[i] << (depth - 8)) |
          (noise & ((1u << (depth - 8)) - 1));

      px[0] = (uint8_t) (v << shift);
      px[1] = (uint8_t) ((v << shift) >> 8);
    }
  }
  if (rgbx) {
    const CqLayout layout = { CQ_LAYOUT_RGB8, 8, 0, 4, 0, 1, 2 };

    plane->layout = layout;
  } else if (depth) {
    plane->layout.kind = CQ_LAYOUT_GRAY16;
    plane->layout.depth = depth;
    plane->layout.shift = shift;
  }
  plane->sample_stride = bpp;
  *bytes = bpp;
  return out;
}

int
main (int argc, char **argv)
{
  unsigned w = 0, h = 0, frames = 0, threads = 0, repeat = 3, n, r;
  int hot = 0;
  uint8_t *stage = NULL;
  const char *ssim = NULL, *sharp = NULL, *files[2] = { NULL, NULL };
  const char *layout = "gray8", *pix_fmt = "gray";
  unsigned bytes = 1, depth = 0;
  CqSsimWindow window = CQ_SSIM_FFMPEG;
  double best_cpu = 1e30, best_wall = 1e30, score = 0;
  uint8_t *ref, *dist = NULL;
  CqSsimCpu *ssim_cpu = NULL;
  CqSharpnessCpu *sharp_cpu = NULL;
  CqSsimPlane plane;
  size_t frame;
  CqError err;
  int i, nf = 0, msssim = 0;

  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--size") == 0 && i + 1 < argc)
      sscanf (argv[++i], "%ux%u", &w, &h);
    else if (strcmp (argv[i], "--frames") == 0 && i + 1 < argc)
      frames = atoi (argv[++i]);
    else if (strcmp (argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi (argv[++i]);
    else if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = atoi (argv[++i]);
    else if (strcmp (argv[i], "--ssim") == 0 && i + 1 < argc)
      ssim = argv[++i];
    else if (strcmp (argv[i], "--sharpness") == 0 && i + 1 < argc)
      sharp = argv[++i];
    else if (strcmp (argv[i], "--hot") == 0)
      hot = 1;
    else if (strcmp (argv[i], "--msssim") == 0)
      msssim = 1;
    else if (strcmp (argv[i], "--layout") == 0 && i + 1 < argc)
      layout = argv[++i];
    else if (strcmp (argv[i], "--pix-fmt") == 0 && i + 1 < argc)
      pix_fmt = argv[++i];
    else if (nf < 2)
      files[nf++] = argv[i];
  if (!w || !h || !frames || !files[0] || (ssim && !files[1])
      || (!ssim && !sharp)) {
    fprintf (stderr, "usage: %s --size WxH --frames N --threads T "
        "(--ssim box8|ffmpeg|gauss11 [--msssim] [--layout L | --pix-fmt F] "
        "| --sharpness default|all) [--repeat R] [--hot] REF.gray "
        "[DIST.gray]\n", argv[0]);
    return 2;
  }
  if (strcmp (pix_fmt, "gray") != 0) {
    /* raw 16-bit frames */
    depth = strcmp (pix_fmt, "gray10le") == 0 ? 10 :
        strcmp (pix_fmt, "gray12le") == 0 ? 12 :
        strcmp (pix_fmt, "gray16le") == 0 ? 16 : 0;
    if (!ssim || strcmp (layout, "gray8") != 0 || !depth) {
      fprintf (stderr, "--pix-fmt takes gray10le, gray12le or gray16le, "
          "with --ssim and without --layout (not %s)\n", pix_fmt);
      return 2;
    }
    bytes = 2;
  }
  frame = (size_t) w * h * bytes;
  ref = load (files[0], frame * frames);
  if (ssim) {
    dist = load (files[1], frame * frames);
    window = strcmp (ssim, "box8") == 0 ? CQ_SSIM_BOX8 :
        strcmp (ssim, "gauss11") == 0 ? CQ_SSIM_GAUSS11 : CQ_SSIM_FFMPEG;
  }

  if (ssim) {
    CqSsimPlane p = cq_test_gray8_plane (w, h);

    if (depth) {
      p.layout.kind = CQ_LAYOUT_GRAY16;
      p.layout.depth = depth;
      p.sample_stride = 2;
    } else if (strcmp (layout, "gray8") != 0) {
      uint8_t *r2 = convert (ref, frames, w, h, 0, layout, &p, &bytes);
      uint8_t *d2 = convert (dist, frames, w, h, 1, layout, &p, &bytes);

      if (!r2 || !d2) {
        fprintf (stderr, "unknown layout %s (or out of memory)\n", layout);
        return 2;
      }
      free (ref);
      free (dist);
      ref = r2;
      dist = d2;
      frame *= bytes;
    }
    ssim_cpu = cq_ssim_cpu_new (window, &p, 1, threads, &err);
    if (!ssim_cpu || (msssim
            && cq_ssim_cpu_set_msssim (ssim_cpu, 1, &err) != CQ_OK))
      return fail (&err);
    plane = p;
  } else {
    const CqLayout gray8 = { CQ_LAYOUT_GRAY8, 8, 0, 0, 0, 0, 0 };
    unsigned metrics = strcmp (sharp, "all") == 0 ? CQ_METRIC_ALL :
        CQ_METRIC_DEFAULT;

    sharp_cpu = cq_sharpness_cpu_new (&gray8, w, h, metrics, threads, &err);
    if (!sharp_cpu)
      return fail (&err);
  }
  if (hot) {
    /* its pages are touched by the untimed pass -1's copies */
    stage = malloc (2 * frame);
    if (!stage) {
      fprintf (stderr, "cannot allocate the staging buffer\n");
      return 1;
    }
  }
  /* pass -1, untimed: the buffers' pages and the worker threads are
   * there before the passes timed */
  for (r = 0; r <= repeat; r++) {
    double c0 = clock_s (CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s
        (CLOCK_MONOTONIC), c, wall, total = 0, hot_cpu = 0, hot_wall = 0;

    for (n = 0; n < (r ? frames : 1); n++) {
      const uint8_t *fa = ref + n * frame;
      const uint8_t *fb = ssim ? dist + n * frame : NULL;
      double hc = 0, hw = 0;

      if (hot) {
        memcpy (stage, fa, frame);
        fa = stage;
        if (fb) {
          memcpy (stage + frame, fb, frame);
          fb = stage + frame;
        }
        hc = clock_s (CLOCK_PROCESS_CPUTIME_ID);
        hw = clock_s (CLOCK_MONOTONIC);
      }
      if (ssim) {
        const void *a[1] = { fa }, *b[1] = { fb };
        size_t st[1] = { (size_t) w * bytes };
        CqSsimPlaneSums sums;

        if (cq_ssim_cpu_measure (ssim_cpu, a, st, b, st, &sums, &err) != CQ_OK)
          return fail (&err);
        total += msssim ? cq_ssim_msssim (&plane, &sums) :
            sums.ssim_sum / sums.windows;
      } else {
        double scores[CQ_METRIC_COUNT];

        if (cq_sharpness_cpu_measure (sharp_cpu, fa, w, scores, &err) != CQ_OK)
          return fail (&err);
        total += scores[3];     /* laplacian */
      }
      if (hot) {
        hot_cpu += clock_s (CLOCK_PROCESS_CPUTIME_ID) - hc;
        hot_wall += clock_s (CLOCK_MONOTONIC) - hw;
      }
    }
    c = hot ? hot_cpu : clock_s (CLOCK_PROCESS_CPUTIME_ID) - c0;
    wall = hot ? hot_wall : clock_s (CLOCK_MONOTONIC) - w0;
    if (r == 0)
      continue;
    if (c < best_cpu)
      best_cpu = c;
    if (wall < best_wall)
      best_wall = wall;
    score = total / frames;
  }
  cq_ssim_cpu_free (ssim_cpu);
  cq_sharpness_cpu_free (sharp_cpu);
  printf ("%.3f %.3f %.9f\n", best_cpu / frames * 1e3,
      best_wall / frames * 1e3, score);
  free (ref);
  free (dist);
  free (stage);
  return 0;
}
