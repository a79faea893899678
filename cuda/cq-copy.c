/* cudaquality compute library: multi-threaded row copies.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "cq-copy.h"
#include "cq-pool.h"

/* a copy's parts at most: a few cores saturate memory and PCIe */
#define MAX_PARTS 4
/* below this, waking the helpers costs about what they save */
#define MIN_PARALLEL_BYTES ((size_t) 256 << 10)

typedef struct
{
  unsigned char *dst;
  const unsigned char *src;
  size_t dst_stride, src_stride, row_bytes, rows;
} Part;

typedef struct
{
  Part whole;
  size_t units, unit_bytes;     /* unit_bytes 0: units are rows */
  unsigned n;
} Copy;

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

/* Part i of n: contiguous data by 64 KiB units, strided data by rows. */
static void
copy_task (void *user, unsigned i)
{
  const Copy *c = user;
  const Part *whole = &c->whole;
  size_t u0 = c->units * i / c->n, u1 = c->units * (i + 1) / c->n;
  Part part = *whole;

  if (c->unit_bytes) {
    size_t b0 = u0 * c->unit_bytes, b1 = u1 * c->unit_bytes;

    if (b1 > whole->row_bytes * whole->rows)
      b1 = whole->row_bytes * whole->rows;
    part.dst = whole->dst + b0;
    part.src = whole->src + b0;
    part.dst_stride = part.src_stride = part.row_bytes = b1 - b0;
    part.rows = b1 > b0 ? 1 : 0;
  } else {
    part.dst = whole->dst + u0 * whole->dst_stride;
    part.src = whole->src + u0 * whole->src_stride;
    part.rows = u1 - u0;
  }
  copy_part (&part);
}

unsigned
cq_copy_threads (void)
{
  unsigned n = cq_pool_threads ();

  return n < MAX_PARTS ? n : MAX_PARTS;
}

void
cq_copy_rows (void *dst, size_t dst_stride, const void *src,
    size_t src_stride, size_t row_bytes, size_t rows)
{
  Copy c = { {(unsigned char *) dst, (const unsigned char *) src,
          dst_stride, src_stride, row_bytes, rows}, 0, 0, 1
  };

  if (rows == 0 || row_bytes == 0)
    return;
  if (row_bytes * rows < MIN_PARALLEL_BYTES || cq_copy_threads () < 2) {
    copy_part (&c.whole);
    return;
  }
  if (dst_stride == row_bytes && src_stride == row_bytes) {
    c.unit_bytes = (size_t) 64 << 10;
    c.units = (row_bytes * rows + c.unit_bytes - 1) / c.unit_bytes;
  } else {
    c.units = rows;
  }
  c.n = cq_copy_threads ();
  if (c.units < c.n)
    c.n = (unsigned) c.units;
  cq_pool_run (c.n, copy_task, &c);
}
