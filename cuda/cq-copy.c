/* cudaquality compute library: multi-threaded row copies.
 *
 * The staging copies of pageable uploads keep three helpers of their own
 * rather than the worker pool (cq-pool.h): a 4K frame is eight 1 MiB
 * copies of four parts each between the DMA calls, and run through the
 * pool they made pageable uploads 20-35 % slower on the 16-core H100 host
 * (bench-sharpness 4K: 0.64-0.82 ms against 0.53-0.62 ms with these
 * helpers), whichever the pool's wake order, spinning, fixed parts or
 * helper count; the pool serves the CPU backends' long jobs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <string.h>

#include "cq-copy.h"
#include "cq-pool.h"

#define MAX_HELPERS 3
/* below this, waking the helpers costs about what they save */
#define MIN_PARALLEL_BYTES ((size_t) 256 << 10)

typedef struct
{
  unsigned char *dst;
  const unsigned char *src;
  size_t dst_stride, src_stride, row_bytes, rows;
} Part;

static struct
{
  pthread_mutex_t busy;         /* held by the caller whose copy runs */
  pthread_mutex_t lock;
  pthread_cond_t start, done;
  CqHelpers helpers;
  unsigned long generation;
  unsigned remaining;
  Part parts[MAX_HELPERS];
} pool = {
  PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
  PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, CQ_HELPERS_INIT, 0,
  0, {{0}}
};

static void
copy_part (const Part * p)
{
  size_t r;

  if (p->rows == 0)
    return;
  if (p->dst_stride == p->row_bytes && p->src_stride == p->row_bytes) {
    memcpy (p->dst, p->src, p->row_bytes * p->rows);
    return;
  }
  for (r = 0; r < p->rows; r++)
    memcpy (p->dst + r * p->dst_stride, p->src + r * p->src_stride,
        p->row_bytes);
}

static void *
helper_main (void *data)
{
  const unsigned index = (unsigned) (size_t) data;
  unsigned long seen = 0;

  for (;;) {
    Part part;

    pthread_mutex_lock (&pool.lock);
    while (pool.generation == seen)
      pthread_cond_wait (&pool.start, &pool.lock);
    seen = pool.generation;
    part = pool.parts[index];
    pthread_mutex_unlock (&pool.lock);

    copy_part (&part);

    pthread_mutex_lock (&pool.lock);
    if (--pool.remaining == 0)
      pthread_cond_signal (&pool.done);
    pthread_mutex_unlock (&pool.lock);
  }
  return NULL;
}

/* A child of fork has none of the helpers (and may have inherited locks
 * some other thread held): it copies on its own thread. */
static void
pool_after_fork_in_child (void)
{
  pthread_mutex_init (&pool.busy, NULL);
  pthread_mutex_init (&pool.lock, NULL);
  pthread_cond_init (&pool.start, NULL);
  pthread_cond_init (&pool.done, NULL);
  cq_helpers_after_fork (&pool.helpers);
  pool.remaining = 0;
}

/* Helpers for all but one of the online cores, at most MAX_HELPERS; they
 * live as long as the process. */
unsigned
cq_copy_threads (void)
{
  return cq_helpers_threads (&pool.helpers, MAX_HELPERS, helper_main,
      pool_after_fork_in_child);
}

void
cq_copy_rows (void *dst, size_t dst_stride, const void *src,
    size_t src_stride, size_t row_bytes, size_t rows)
{
  Part whole = { (unsigned char *) dst, (const unsigned char *) src,
    dst_stride, src_stride, row_bytes, rows
  };
  size_t units, unit_bytes, done = 0;
  unsigned n, i;

  if (rows == 0 || row_bytes == 0)
    return;
  if (row_bytes * rows < MIN_PARALLEL_BYTES || cq_copy_threads () < 2
      || pthread_mutex_trylock (&pool.busy) != 0) {
    copy_part (&whole);
    return;
  }

  /* split contiguous data by 64 KiB units, strided data by rows */
  if (dst_stride == row_bytes && src_stride == row_bytes) {
    unit_bytes = (size_t) 64 << 10;
    units = (row_bytes * rows + unit_bytes - 1) / unit_bytes;
  } else {
    unit_bytes = 0;
    units = rows;
  }
  n = pool.helpers.n + 1;
  if (units < n)
    n = (unsigned) units;

  pthread_mutex_lock (&pool.lock);
  for (i = 0; i < n; i++) {
    size_t end = units * (i + 1) / n;
    Part *p = i + 1 < n ? &pool.parts[i] : &whole;
    Part part = whole;

    if (unit_bytes) {
      size_t b0 = done * unit_bytes, b1 = end * unit_bytes;

      if (b1 > row_bytes * rows)
        b1 = row_bytes * rows;
      part.dst = whole.dst + b0;
      part.src = whole.src + b0;
      part.dst_stride = part.src_stride = part.row_bytes = b1 - b0;
      part.rows = 1;
    } else {
      part.dst = whole.dst + done * dst_stride;
      part.src = whole.src + done * src_stride;
      part.rows = end - done;
    }
    *p = part;
    done = end;
  }
  /* helpers beyond n get empty parts */
  for (i = n - 1; i < pool.helpers.n; i++)
    pool.parts[i].rows = 0;
  pool.remaining = pool.helpers.n;
  pool.generation++;
  pthread_cond_broadcast (&pool.start);
  pthread_mutex_unlock (&pool.lock);

  copy_part (&whole);           /* the last part, on this thread */

  pthread_mutex_lock (&pool.lock);
  while (pool.remaining > 0)
    pthread_cond_wait (&pool.done, &pool.lock);
  pthread_mutex_unlock (&pool.lock);
  pthread_mutex_unlock (&pool.busy);
}
