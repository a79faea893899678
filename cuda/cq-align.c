/* cudaquality compute library: the search of frame alignment, shared
 * definitions and the CPU backend.
 *
 * A thumbnail row is made in two passes: the factor source rows are added
 * column by column into 16-bit sums (255 x factor fits while factor <=
 * 257, which CQ_ALIGN_MAX_SIDE keeps), a loop the compiler vectorises,
 * then every factor adjacent column sums are added. Distances square
 * 32-bit differences into 64-bit sums, also vectorised.
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

/* Frames of fewer samples make their thumbnail on the calling thread
 * alone; distances over fewer terms likewise (waking the pool costs more
 * than the work). */
#define SPLIT_SAMPLES (1u << 18)
#define SPLIT_TERMS (1u << 17)

/* The two hot loops are plain C that GCC vectorises; on x86-64 also built
 * for AVX2 (twice the lanes), picked by the loader (ifunc). Integer sums:
 * the same results either way. */
#if defined (__x86_64__) && defined (__ELF__) && defined (__GNUC__)
#define CQ_ALIGN_HOT __attribute__ ((target_clones ("avx2", "default")))
#else
#define CQ_ALIGN_HOT
#endif

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
    unsigned *tw, unsigned *th)
{
  unsigned f = (plane->width + CQ_ALIGN_MAX_WIDTH - 1) / CQ_ALIGN_MAX_WIDTH;

  f = f ? f : 1;
  *factor = f;
  *tw = plane->width / f;
  /* a plane less tall than a block has an empty thumbnail: every distance
   * is 0, nothing is decided */
  *th = plane->height / f;
}

void
cq_align_shape_init (CqAlignShape * shape, const CqAlignPlane * plane)
{
  shape->plane = *plane;
  cq_align_thumb_size (plane, &shape->factor, &shape->tw, &shape->th);
  shape->bands = (size_t) plane->width * plane->height < SPLIT_SAMPLES ? 1 :
      cq_pool_split (0, shape->th);
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
  const unsigned y0 = (unsigned) ((uint64_t) s->th * index / s->bands);
  const unsigned y1 = (unsigned) ((uint64_t) s->th * (index + 1) / s->bands);
  uint16_t *acc = job->scratch + (size_t) index * n;
  unsigned ty, tx, i, j;

  for (ty = y0; ty < y1; ty++) {
    const uint8_t *row = job->data + (size_t) ty * f * job->stride;
    uint32_t *out = job->thumb + (size_t) ty * s->tw;

    memset (acc, 0, (size_t) n * sizeof (uint16_t));
    for (j = 0; j < f; j++, row += job->stride)
      cq_align_add_row (&s->plane, row, n, acc);
    for (tx = 0; tx < s->tw; tx++) {
      const uint16_t *c = acc + (size_t) tx * f;
      uint32_t sum = 0;

      for (i = 0; i < f; i++)
        sum += c[i];
      out[tx] = sum;
    }
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

  for (i = 0; i < n; i++) {
    uint32_t d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];

    sum += (uint64_t) d * d;
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

typedef struct
{
  const CqAlignCpu *cpu;
  const uint32_t *probe;
  const unsigned *slots;
  uint64_t *distances;
} CqAlignDistanceJob;

static void
cq_align_distance_one (void *user, unsigned index)
{
  const CqAlignDistanceJob *job = user;
  const CqAlignCpu *cpu = job->cpu;

  job->distances[index] = cq_align_distance (job->probe,
      cpu->thumbs + job->slots[index] * cpu->thumb_elems, cpu->thumb_elems);
}

CqStatus
cq_align_cpu_distances (CqAlignCpu * cpu, unsigned probe,
    const unsigned *slots, unsigned n, uint64_t * distances, CqError * err)
{
  CqAlignDistanceJob job = { cpu, NULL, slots, distances };
  unsigned i;

  if (probe >= cpu->slots)
    return cq_error_set (err, CQ_ERROR_INVALID, "thumbnail slot %u of %u",
        probe, cpu->slots);
  for (i = 0; i < n; i++)
    if (slots[i] >= cpu->slots)
      return cq_error_set (err, CQ_ERROR_INVALID, "thumbnail slot %u of %u",
          slots[i], cpu->slots);
  job.probe = cpu->thumbs + probe * cpu->thumb_elems;
  if (n > 1 && (uint64_t) n * cpu->thumb_elems >= SPLIT_TERMS)
    cq_pool_run (n, cq_align_distance_one, &job);
  else
    for (i = 0; i < n; i++)
      cq_align_distance_one (&job, i);
  return CQ_OK;
}
