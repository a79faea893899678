/* CPU suite: cq_copy_rows (the multi-threaded staging copy) against a
 * byte-by-byte copy written here: contiguous and strided, sizes around the
 * parallel threshold and the 64 KiB split units, odd row counts, several
 * callers at once (one runs on the pool, the others alone), a child of
 * fork (no helper threads there), and nothing written outside the rows.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cq-copy.h"

static int failures;

static unsigned char
pattern (size_t i, unsigned seed)
{
  return (unsigned char) ((i * 2654435761u + seed * 97u) >> 7);
}

/* One copy; returns 0 when every byte is where it belongs. */
static int
check (size_t row_bytes, size_t rows, size_t src_stride, size_t dst_stride,
    unsigned seed)
{
  size_t src_size = src_stride * rows, dst_size = dst_stride * rows + 64;
  unsigned char *src = malloc (src_size), *dst = malloc (dst_size);
  size_t i, r, c;
  int bad = 0;

  for (i = 0; i < src_size; i++)
    src[i] = pattern (i, seed);
  memset (dst, 0xA5, dst_size);
  cq_copy_rows (dst, dst_stride, src, src_stride, row_bytes, rows);
  for (r = 0; r < rows && !bad; r++)
    for (c = 0; c < dst_stride && !bad; c++) {
      unsigned char want = c < row_bytes ? src[r * src_stride + c] : 0xA5;

      if (dst[r * dst_stride + c] != want) {
        fprintf (stderr, "FAIL: %zu rows of %zu bytes (strides %zu -> %zu): "
            "row %zu byte %zu is %u, want %u\n", rows, row_bytes, src_stride,
            dst_stride, r, c, dst[r * dst_stride + c], want);
        bad = 1;
      }
    }
  for (i = dst_stride * rows; i < dst_size && !bad; i++)
    if (dst[i] != 0xA5) {
      fprintf (stderr, "FAIL: byte %zu after the last row written\n", i);
      bad = 1;
    }
  free (src);
  free (dst);
  return bad;
}

static void *
concurrent_caller (void *data)
{
  unsigned seed = (unsigned) (size_t) data, k;
  int bad = 0;

  for (k = 0; k < 20; k++)
    bad |= check (3840, 600 + k, 3840, 3840, seed + k)
        | check (1921, 700, 2048, 1936, seed + 100 + k);
  return (void *) (size_t) bad;
}

int
main (void)
{
  static const size_t widths[] = { 1, 7, 64, 1920, 3840, 4099 };
  static const size_t row_counts[] = { 1, 2, 3, 17, 273, 1080, 2161 };
  pthread_t threads[4];
  size_t w, h;
  unsigned t;

  printf ("copy threads: %u\n", cq_copy_threads ());
  for (w = 0; w < sizeof (widths) / sizeof (widths[0]); w++)
    for (h = 0; h < sizeof (row_counts) / sizeof (row_counts[0]); h++) {
      size_t rb = widths[w], n = row_counts[h];

      failures += check (rb, n, rb, rb, (unsigned) (w * 10 + h));
      failures += check (rb, n, rb + 13, rb, (unsigned) (w * 10 + h + 1));
      failures += check (rb, n, rb, rb + 64, (unsigned) (w * 10 + h + 2));
    }
  /* exactly at and around the 256 KiB threshold, and 64 KiB units plus
   * one byte */
  failures += check ((size_t) 256 << 10, 1, (size_t) 256 << 10,
      (size_t) 256 << 10, 1);
  failures += check (((size_t) 256 << 10) - 1, 1, (size_t) 256 << 10,
      (size_t) 256 << 10, 2);
  failures += check ((64 << 10) * 17 + 1, 1, (64 << 10) * 17 + 1,
      (64 << 10) * 17 + 1, 3);
  failures += check (3840 * 2160, 1, 3840 * 2160, 3840 * 2160, 4);

  for (t = 0; t < 4; t++)
    pthread_create (&threads[t], NULL, concurrent_caller,
        (void *) (size_t) (t * 1000));
  for (t = 0; t < 4; t++) {
    void *bad;

    pthread_join (threads[t], &bad);
    failures += bad != NULL;
  }
  /* a child of fork has no helper threads: its copies must still finish */
  {
    pid_t pid = fork ();
    int status = 0;

    if (pid == 0) {
      alarm (60);
      _exit (check (3840, 2160, 3840, 3840, 5) | check (1921, 700, 2048,
              1936, 6));
    }
    if (pid < 0 || waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
        || WEXITSTATUS (status) != 0) {
      fprintf (stderr, "FAIL: copies in a child of fork (status %d)\n", status);
      failures++;
    }
  }
  printf ("%s\n", failures ? "FAILED" : "all copies exact");
  return failures ? 1 : 0;
}
