/* cudaquality compute library: the search of frame alignment, shared
 * definitions and the CPU backend.
 *
 * A thumbnail row is made in two passes: the block's rows that are read
 * (every CQ_ALIGN_ROW_STEP-th) are added column by column into 16-bit sums
 * (255 x rows fits while rows <= 257, which CQ_ALIGN_MAX_SIDE keeps), a
 * loop the compiler vectorises, the next row read asked for ahead (the
 * hardware does not guess a stride of rows), then every factor adjacent
 * column sums are added. Distances square 32-bit differences into 64-bit
 * sums, also vectorised.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "cq-align-local.h"
#include "cq-pool.h"

/* Work is split over the worker pool only in parts of at least
 * SPLIT_SAMPLES samples read (a thumbnail: bands of rows) or SPLIT_TERMS
 * terms (distances: groups of candidates), and into no more parts than
 * the pool has threads; less than two parts' worth stays on the calling
 * thread. A job wakes one helper a part beside the caller's, one futex
 * at a time, and a helper asleep starts late: on 2 cores of an AMD EPYC
 * (a virtual machine) a job of two 20 µs parts took 58-62 µs, of one
 * 40 µs part 40 µs. Each part should therefore be several times that
 * cost. Measured there with tests/bench/bench-align, one part / two, in
 * several runs: a 1080p thumbnail (160 x 90, 4 of 12 rows: 0.69 M samples
 * read) 66-84 / 71-114 µs from memory, one part ahead in every run; a 4K
 * one (2.76 M samples) 164-226 / 146-214 µs, two ahead in 10 runs of 14;
 * 31 distances of 160 x 90 sums (0.45 M terms) 41-43 / 47-89 µs. So a part is at least 1 M samples or terms,
 * some 70-100 µs of one core there: a 1080p thumbnail and cudassim's
 * default 31 distances (any window up to 72) stay on one thread, a 4K
 * thumbnail is 2 parts (it waits on memory, which two cores read faster
 * than one on most hosts; bench-align's lines "CPU, parts: n" check that
 * on a given host), an 8K one up to 10 (11 M samples). */
#define SPLIT_SAMPLES (1u << 20)
#define SPLIT_TERMS (1u << 20)

/* The two hot loops are plain C that GCC vectorises; on x86-64 also built
 * for AVX2 (twice the lanes), picked by the loader (ifunc). Integer sums:
 * the same results either way. */
#if defined (__x86_64__) && defined (__ELF__) && defined (__GNUC__)
#define CQ_ALIGN_HOT __attribute__ ((target_clones ("avx2", "default")))
#else
#define CQ_ALIGN_HOT
#endif
/* inlined whatever GCC's estimate: a constant factor is the point */
#define CQ_ALIGN_INLINE inline __attribute__ ((always_inline))

CqStatus
cq_align_check (const CqAlignPlane * plane, unsigned slots, CqError * err)
{
  const CqLayout *l = &plane->layout;

  if (l->kind != CQ_LAYOUT_GRAY8 && l->kind != CQ_LAYOUT_GRAY16)
    return cq_error_set (err, CQ_ERROR_INVALID, "alignment thumbnails take "
        "8- or 16-bit samples (layout %d)", (int) l->kind);
  if (l->kind == CQ_LAYOUT_GRAY8 && (l->depth != 8 || plane->sample_stride < 1))
    return cq_error_set (err, CQ_ERROR_INVALID, "8-bit samples need depth 8 "
        "and a sample stride of 1 byte or more (depth %u, stride %u)",
        l->depth, plane->sample_stride);
  if (l->kind == CQ_LAYOUT_GRAY16 && (l->depth < 8 || l->depth > 16
          || l->shift > 16 - l->depth || plane->sample_stride < 2))
    return cq_error_set (err, CQ_ERROR_INVALID, "16-bit samples need depth 8 "
        "to 16, depth + shift <= 16 and a sample stride of 2 bytes or more "
        "(depth %u, shift %u, stride %u)", l->depth, l->shift,
        plane->sample_stride);
  if (plane->width < 1 || plane->height < 1
      || plane->width > CQ_ALIGN_MAX_SIDE || plane->height > CQ_ALIGN_MAX_SIDE)
    return cq_error_set (err, CQ_ERROR_INVALID, "a %ux%u plane: alignment "
        "thumbnails take 1 to %u samples a side", plane->width,
        plane->height, CQ_ALIGN_MAX_SIDE);
  if (slots < 1 || slots > CQ_ALIGN_MAX_SLOTS)
    return cq_error_set (err, CQ_ERROR_INVALID, "%u thumbnail slots: 1 to %u",
        slots, CQ_ALIGN_MAX_SLOTS);
  return CQ_OK;
}

void
cq_align_thumb_size (const CqAlignPlane * plane, unsigned *factor,
    unsigned *rows, unsigned *tw, unsigned *th)
{
  unsigned f = (plane->width + CQ_ALIGN_MAX_WIDTH - 1) / CQ_ALIGN_MAX_WIDTH;

  f = f ? f : 1;
  *factor = f;
  *rows = (f + CQ_ALIGN_ROW_STEP - 1) / CQ_ALIGN_ROW_STEP;
  *tw = plane->width / f;
  /* a plane less tall than a block has an empty thumbnail: every distance
   * is 0, nothing is decided */
  *th = plane->height / f;
}

/* Parts for work of `want` thresholds' worth: at most one a thread of the
 * pool and `limit`; 1 below two thresholds' worth. */
static unsigned
cq_align_parts (uint64_t want, unsigned limit)
{
  unsigned threads;

  if (want < 2)
    return 1;
  threads = cq_pool_threads ();
  if (want > threads)
    want = threads;
  return cq_pool_split ((unsigned) want, limit);
}

void
cq_align_shape_init (CqAlignShape * shape, const CqAlignPlane * plane)
{
  /* the samples a thumbnail reads */
  size_t samples;

  shape->plane = *plane;
  cq_align_thumb_size (plane, &shape->factor, &shape->rows, &shape->tw,
      &shape->th);
  samples = (size_t) shape->tw * shape->factor * shape->rows * shape->th;
  shape->bands = cq_align_parts (samples / SPLIT_SAMPLES, shape->th);
}

size_t
cq_align_scratch_bytes (const CqAlignShape * shape)
{
  return (size_t) shape->bands * shape->tw * shape->factor * sizeof (uint16_t)
      + 64;
}

/* Adds a source row's n samples into the column sums. */
CQ_ALIGN_HOT static void
cq_align_add_row (const CqAlignPlane * p, const uint8_t * row, unsigned n,
    uint16_t * acc)
{
  const unsigned ss = p->sample_stride;
  unsigned x;

  if (p->layout.kind == CQ_LAYOUT_GRAY8 && ss == 1) {
    for (x = 0; x < n; x++)
      acc[x] += row[x];
  } else if (p->layout.kind == CQ_LAYOUT_GRAY8) {
    for (x = 0; x < n; x++)
      acc[x] += row[(size_t) x * ss];
  } else {
    const unsigned shift = p->layout.shift;
    const unsigned mask = (1u << p->layout.depth) - 1;
    const unsigned down = p->layout.depth - 8;

    for (x = 0; x < n; x++) {
      const uint8_t *s = row + (size_t) x * ss;
      unsigned w = (unsigned) s[0] | (unsigned) s[1] << 8;

      acc[x] += (uint16_t) ((((w >> shift) & mask) >> down));
    }
  }
}

/* out[tx] = the sum of the factor column sums of block tx, tx < tw. */
CQ_ALIGN_INLINE static void
cq_align_add_blocks (const uint16_t * acc, unsigned tw, unsigned factor,
    uint32_t * out)
{
  unsigned tx, i;

  for (tx = 0; tx < tw; tx++) {
    const uint16_t *c = acc + (size_t) tx * factor;
    uint32_t sum = 0;

    for (i = 0; i < factor; i++)
      sum += c[i];
    out[tx] = sum;
  }
}

/* The same with the factors of 1080p and 4K at 160 wide made constants,
 * which GCC vectorises (on 2 cores of an AMD EPYC, 90 rows of 12 x 160
 * sums took 17 µs instead of 32, of 24 x 160 19 instead of 27; a factor
 * of 8 was slower so). */
CQ_ALIGN_HOT static void
cq_align_add_columns (const uint16_t * acc, unsigned tw, unsigned factor,
    uint32_t * out)
{
  switch (factor) {
    case 12:
      cq_align_add_blocks (acc, tw, 12, out);
      break;
    case 24:
      cq_align_add_blocks (acc, tw, 24, out);
      break;
    default:
      cq_align_add_blocks (acc, tw, factor, out);
      break;
  }
}

/* Asks for the cache lines of `bytes` bytes at p. */
static inline void
cq_align_prefetch (const uint8_t * p, size_t bytes)
{
  size_t o;

  for (o = 0; o < bytes; o += 64)
    __builtin_prefetch (p + o);
}

typedef struct
{
  const CqAlignShape *shape;
  const uint8_t *data;
  size_t stride;
  uint32_t *thumb;
  uint16_t *scratch;
} CqAlignThumbJob;

/* Thumbnail rows of band `index`. */
static void
cq_align_thumb_band (void *user, unsigned index)
{
  const CqAlignThumbJob *job = user;
  const CqAlignShape *s = job->shape;
  const unsigned f = s->factor, n = s->tw * f;
  const size_t step = (size_t) CQ_ALIGN_ROW_STEP * job->stride;
  const unsigned y0 = (unsigned) ((uint64_t) s->th * index / s->bands);
  const unsigned y1 = (unsigned) ((uint64_t) s->th * (index + 1) / s->bands);
  /* the bytes of a row that its samples span */
  const size_t bytes = (size_t) (n - 1) * s->plane.sample_stride +
      (s->plane.layout.kind == CQ_LAYOUT_GRAY16 ? 2 : 1);
  uint16_t *acc = job->scratch + (size_t) index * n;
  unsigned ty, j;

  if (y0 < y1)
    cq_align_prefetch (job->data + (size_t) y0 * f * job->stride, bytes);
  for (ty = y0; ty < y1; ty++) {
    const uint8_t *row = job->data + (size_t) ty * f * job->stride;
    uint32_t *out = job->thumb + (size_t) ty * s->tw;

    memset (acc, 0, (size_t) n * sizeof (uint16_t));
    for (j = 0; j < s->rows; j++, row += step) {
      /* rows are step apart: the hardware's prefetchers, which follow
       * one row's lines, do not see the next; ask for it */
      if (j + 1 < s->rows)
        cq_align_prefetch (row + step, bytes);
      else if (ty + 1 < y1)
        cq_align_prefetch (job->data + (size_t) (ty + 1) * f * job->stride,
            bytes);
      cq_align_add_row (&s->plane, row, n, acc);
    }
    cq_align_add_columns (acc, s->tw, f, out);
  }
}

void
cq_align_thumbnail_cpu (const CqAlignShape * shape, const void *data,
    size_t stride, uint32_t * thumb, uint16_t * scratch)
{
  CqAlignThumbJob job = { shape, data, stride, thumb, scratch };

  if (shape->bands > 1)
    cq_pool_run (shape->bands, cq_align_thumb_band, &job);
  else
    cq_align_thumb_band (&job, 0);
}

/* Σ (a - b)² over n sums. */
CQ_ALIGN_HOT static uint64_t
cq_align_distance (const uint32_t * a, const uint32_t * b, size_t n)
{
  uint64_t sum = 0;
  size_t i;

  /* sums are below 2³¹ (255 x 205 x 69 at most): the difference as a
   * signed 32-bit integer and its absolute value vectorise to fewer
   * instructions than an unsigned compare and select (on 2 cores of an
   * AMD EPYC, 31 distances of 160 x 90 sums took 41 µs instead of 52) */
  for (i = 0; i < n; i++) {
    int32_t d = (int32_t) (a[i] - b[i]);
    uint32_t u = (uint32_t) (d < 0 ? -d : d);

    sum += (uint64_t) u * u;
  }
  return sum;
}

/* ---- CPU backend ---- */

struct CqAlignCpu
{
  CqAlignShape shape;
  unsigned slots;
  size_t thumb_elems;
  uint32_t *thumbs;             /* slots x thumb_elems */
  uint16_t *scratch;
};

CqAlignCpu *
cq_align_cpu_new (const CqAlignPlane * plane, unsigned slots, CqError * err)
{
  CqAlignCpu *cpu;

  if (cq_align_check (plane, slots, err) != CQ_OK)
    return NULL;
  cpu = calloc (1, sizeof (CqAlignCpu));
  if (!cpu)
    goto no_memory;
  cq_align_shape_init (&cpu->shape, plane);
  cpu->slots = slots;
  cpu->thumb_elems = (size_t) cpu->shape.tw * cpu->shape.th;
  cpu->thumbs = calloc ((size_t) slots * cpu->thumb_elems + 1,
      sizeof (uint32_t));
  cpu->scratch = malloc (cq_align_scratch_bytes (&cpu->shape));
  if (!cpu->thumbs || !cpu->scratch)
    goto no_memory;
  return cpu;

no_memory:
  cq_align_cpu_free (cpu);
  cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory for %u "
      "alignment thumbnails of a %ux%u plane", slots, plane->width,
      plane->height);
  return NULL;
}

void
cq_align_cpu_free (CqAlignCpu * cpu)
{
  if (!cpu)
    return;
  free (cpu->thumbs);
  free (cpu->scratch);
  free (cpu);
}

CqStatus
cq_align_cpu_thumbnail (CqAlignCpu * cpu, unsigned slot, const void *data,
    size_t stride, CqError * err)
{
  if (slot >= cpu->slots)
    return cq_error_set (err, CQ_ERROR_INVALID, "thumbnail slot %u of %u",
        slot, cpu->slots);
  cq_align_thumbnail_cpu (&cpu->shape, data, stride,
      cpu->thumbs + slot * cpu->thumb_elems, cpu->scratch);
  return CQ_OK;
}

const uint32_t *
cq_align_cpu_thumb (const CqAlignCpu * cpu, unsigned slot)
{
  return slot < cpu->slots ? cpu->thumbs + slot * cpu->thumb_elems : NULL;
}

unsigned
cq_align_distance_parts (size_t elems, unsigned n)
{
  return cq_align_parts ((uint64_t) elems * n / SPLIT_TERMS, n);
}

typedef struct
{
  const uint32_t *probe, *thumbs;
  size_t slot_elems, elems;
  const unsigned *slots;
  unsigned n, parts;
  uint64_t *distances;
} CqAlignDistanceJob;

/* The distances of group `index` of candidates. */
static void
cq_align_distance_group (void *user, unsigned index)
{
  const CqAlignDistanceJob *job = user;
  const unsigned i0 = (unsigned) ((uint64_t) job->n * index / job->parts);
  const unsigned i1 = (unsigned) ((uint64_t) job->n * (index + 1) / job->parts);
  unsigned i;

  for (i = i0; i < i1; i++)
    job->distances[i] = cq_align_distance (job->probe,
        job->thumbs + job->slots[i] * job->slot_elems, job->elems);
}

void
cq_align_distances_cpu (const uint32_t * probe, const uint32_t * thumbs,
    size_t slot_elems, size_t elems, const unsigned *slots, unsigned n,
    unsigned parts, uint64_t * distances)
{
  CqAlignDistanceJob job = { probe, thumbs, slot_elems, elems, slots, n,
    parts < n ? parts : n, distances
  };

  if (job.parts < 1)
    job.parts = 1;
  if (job.parts > 1)
    cq_pool_run (job.parts, cq_align_distance_group, &job);
  else
    cq_align_distance_group (&job, 0);
}

CqStatus
cq_align_cpu_distances (CqAlignCpu * cpu, unsigned probe,
    const unsigned *slots, unsigned n, uint64_t * distances, CqError * err)
{
  unsigned i;

  if (probe >= cpu->slots)
    return cq_error_set (err, CQ_ERROR_INVALID, "thumbnail slot %u of %u",
        probe, cpu->slots);
  for (i = 0; i < n; i++)
    if (slots[i] >= cpu->slots)
      return cq_error_set (err, CQ_ERROR_INVALID, "thumbnail slot %u of %u",
          slots[i], cpu->slots);
  cq_align_distances_cpu (cpu->thumbs + probe * cpu->thumb_elems,
      cpu->thumbs, cpu->thumb_elems, cpu->thumb_elems, slots, n,
      cq_align_distance_parts (cpu->thumb_elems, n), distances);
  return CQ_OK;
}
