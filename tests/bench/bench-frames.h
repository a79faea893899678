/* What the benchmarks that read raw frames from files share: a clock in
 * seconds and a whole file of frames in memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef BENCH_FRAMES_H
#define BENCH_FRAMES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double
clock_s (clockid_t id)
{
  struct timespec ts;

  clock_gettime (id, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the first `bytes` of the file at path; exits when it has fewer */
static inline uint8_t *
load (const char *path, size_t bytes)
{
  FILE *f = fopen (path, "rb");
  uint8_t *data = malloc (bytes);

  if (!f || !data || fread (data, 1, bytes, f) != bytes) {
    fprintf (stderr, "cannot read %zu bytes from %s\n", bytes, path);
    exit (1);
  }
  fclose (f);
  return data;
}

#endif /* BENCH_FRAMES_H */
