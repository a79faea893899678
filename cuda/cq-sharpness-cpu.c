/* cudaquality compute library: sharpness on the CPU.
 *
 * The frame's rows are split into bands, run on the worker pool. Each band
 * slides a
 * window of three rows converted to int32 (with reflect-101 padding, which
 * only lapvar looks at) and accumulates the exact integer sums.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-sharpness.h"
#include "cq-cpu-simd.h"
#include "cq-local.h"
#include "cq-pool.h"

#include <stdlib.h>
#include <string.h>

#define NEXT_METRICS \
  (CQ_METRIC_ROBERTS | CQ_METRIC_SMD | CQ_METRIC_SMD2)
#define INTERIOR_METRICS \
  (CQ_METRIC_TENENGRAD | CQ_METRIC_LAPLACIAN | CQ_METRIC_MAXMIN)

/* Fewer rows than this per thread are not worth a thread. */
#define MIN_ROWS_PER_THREAD 64

typedef struct
{
  CqSharpnessCpu *cpu;
  const uint8_t *data;
  size_t stride;
  unsigned y0, y1;
  int32_t *rows;                /* 3 rows of width + 3 values */
  uint64_t *hist;
  unsigned __int128 usum[CQ_SUM_COUNT];
  __int128 lap_sum;
} Band;

struct CqSharpnessCpu
{
  CqLayout layout;
  unsigned width, height, metrics, n_threads, hist_bins;
  Band *bands;
  uint64_t *hist;
  const CqSimdKernels *simd;    /* NULL: plain C only */
};

/* Converts row y of the frame into out[1 .. width], out[0] = column -1 and
 * out[width + 1], out[width + 2] = columns width, width + 1 (reflected). */
static void
load_row (const CqSharpnessCpu * cpu, const uint8_t * data, size_t stride,
    int y, int32_t * out)
{
  const CqLayout *l = &cpu->layout;
  const uint8_t *row = data + (size_t) cq_reflect101 (y, cpu->height) * stride;
  unsigned w = cpu->width, x;
  int32_t *v = out + 1;

  switch (l->kind) {
    case CQ_LAYOUT_GRAY8:
      for (x = 0; x < w; x++)
        v[x] = row[x];
      break;
    case CQ_LAYOUT_GRAY16:{
      unsigned mask = (1u << l->depth) - 1;

      for (x = 0; x < w; x++) {
        unsigned word = row[2 * x] | (row[2 * x + 1] << 8);
        v[x] = (word >> l->shift) & mask;
      }
      break;
    }
    case CQ_LAYOUT_RGB8:
      for (x = 0; x < w; x++) {
        const uint8_t *p = row + (size_t) x * l->pixel_stride;
        v[x] = cq_gray_rgb8 (p[l->r_offset], p[l->g_offset],
            p[l->b_offset]);
      }
      break;
  }
  v[-1] = v[cq_reflect101 (-1, w)];
  v[w] = v[cq_reflect101 (w, w)];
  v[w + 1] = v[cq_reflect101 (w + 1, w)];
}

static inline int64_t
iabs (int64_t v)
{
  return v < 0 ? -v : v;
}

static void *
band_run (void *user_data)
{
  Band *b = user_data;
  const CqSharpnessCpu *cpu = b->cpu;
  const int w = (int) cpu->width;
  const unsigned h = cpu->height, metrics = cpu->metrics;
  size_t row_len = (size_t) w + 3;
  int32_t *up = b->rows, *mid = b->rows + row_len, *down =
      b->rows + 2 * row_len;
  unsigned y;
  int x;

  memset (b->usum, 0, sizeof (b->usum));
  b->lap_sum = 0;
  if (b->hist)
    memset (b->hist, 0, sizeof (uint64_t) * cpu->hist_bins);

  if (cpu->simd && cpu->layout.kind == CQ_LAYOUT_GRAY8) {
    cpu->simd->sharpness (b->data, b->stride, cpu->width, h, b->y0, b->y1,
        metrics, b->usum, &b->lap_sum, b->hist);
    return NULL;
  }
  if (cpu->simd) {
    cpu->simd->sharpness_rows (&cpu->layout, b->data, b->stride, cpu->width,
        h, b->y0, b->y1, metrics, b->usum, &b->lap_sum, b->hist,
        (uint16_t *) b->rows);
    return NULL;
  }
  load_row (cpu, b->data, b->stride, (int) b->y0 - 1, up);
  load_row (cpu, b->data, b->stride, (int) b->y0, mid);
  for (y = b->y0; y < b->y1; y++) {
    /* per-row sums fit in 64 bits for any row up to 2^26 pixels wide */
    uint64_t s_val = 0, s_sq = 0, s_rob = 0, s_ten = 0, s_lpl = 0, s_smd = 0,
        s_smd2 = 0, s_mm = 0, s_bren = 0, s_lsq = 0;
    int64_t s_lap = 0;
    int row_interior = y >= 1 && y + 1 < h;
    int row_has_next = y + 1 < h;
    const int32_t *a = up + 1, *g = mid + 1, *c = down + 1;
    int32_t *tmp;

    load_row (cpu, b->data, b->stride, (int) y + 1, down);

    /* only what the enabled metrics need; the tests are loop-invariant */
    for (x = 0; x < w; x++) {
      int64_t v = g[x];

      if (metrics & CQ_METRIC_VARIANCE) {
        s_val += v;
        s_sq += v * v;
      }
      if (b->hist)
        b->hist[v]++;
      if ((metrics & NEXT_METRICS) && row_has_next && x + 1 < w) {
        int64_t dx = iabs (v - g[x + 1]), dy = iabs (v - c[x]);

        s_rob += iabs (c[x + 1] - v) + iabs (c[x] - g[x + 1]);
        s_smd += dx + dy;
        s_smd2 += dx * dy;
      }
      if ((metrics & INTERIOR_METRICS) && row_interior && x >= 1 && x + 1 < w) {
        int64_t gx = (a[x + 1] + 2 * g[x + 1] + c[x + 1]) -
            (a[x - 1] + 2 * g[x - 1] + c[x - 1]);
        int64_t gy = (c[x - 1] + 2 * c[x] + c[x + 1]) -
            (a[x - 1] + 2 * a[x] + a[x + 1]);

        s_ten += gx * gx + gy * gy;
        s_lpl +=
            iabs (g[x + 1] + g[x - 1] - 2 * v) + iabs (c[x] + a[x] - 2 * v);
        if (metrics & CQ_METRIC_MAXMIN) {
          int32_t mx = a[x - 1], mn = a[x - 1];
          int i, k;

          for (i = -1; i <= 1; i++) {
            int32_t p[3] = { a[x + i], g[x + i], c[x + i] };
            for (k = 0; k < 3; k++) {
              mx = p[k] > mx ? p[k] : mx;
              mn = p[k] < mn ? p[k] : mn;
            }
          }
          s_mm += mx - mn;
        }
      }
      if ((metrics & CQ_METRIC_BRENNER) && x + 2 < w) {
        int64_t d = g[x + 2] - v;
        s_bren += d * d;
      }
      if (metrics & CQ_METRIC_LAPVAR) {
        int64_t lap = a[x] + c[x] + g[x - 1] + g[x + 1] - 4 * v;
        s_lap += lap;
        s_lsq += lap * lap;
      }
    }
    b->usum[CQ_SUM_VALUE] += s_val;
    b->usum[CQ_SUM_VALUE_SQ] += s_sq;
    b->usum[CQ_SUM_ROBERTS] += s_rob;
    b->usum[CQ_SUM_TENENGRAD] += s_ten;
    b->usum[CQ_SUM_LAPLACIAN] += s_lpl;
    b->usum[CQ_SUM_SMD] += s_smd;
    b->usum[CQ_SUM_SMD2] += s_smd2;
    b->usum[CQ_SUM_MAXMIN] += s_mm;
    b->usum[CQ_SUM_BRENNER] += s_bren;
    b->usum[CQ_SUM_LAP_SQ] += s_lsq;
    b->lap_sum += s_lap;

    tmp = up;
    up = mid;
    mid = down;
    down = tmp;
  }
  return NULL;
}

CqSharpnessCpu *
cq_sharpness_cpu_new (const CqLayout * layout, unsigned width,
    unsigned height, unsigned metrics, unsigned n_threads, CqError * err)
{
  CqSharpnessCpu *cpu;
  unsigned i;

  if (cq_sharpness_check (layout, width, height, err) != CQ_OK)
    return NULL;
  n_threads = cq_pool_split (n_threads,
      (height + MIN_ROWS_PER_THREAD - 1) / MIN_ROWS_PER_THREAD);

  cpu = calloc (1, sizeof (*cpu));
  if (!cpu)
    goto oom;
  cpu->layout = *layout;
  cpu->width = width;
  cpu->height = height;
  cpu->metrics = metrics;
  cpu->n_threads = n_threads;
  cpu->hist_bins = cq_sharpness_hist_bins (layout);
  cpu->simd = cq_cpu_simd_kernels ();
  cpu->bands = calloc (n_threads, sizeof (Band));
  if (!cpu->bands)
    goto oom;
  if (metrics & CQ_METRIC_ENTROPY) {
    cpu->hist = calloc ((size_t) cpu->hist_bins * n_threads, sizeof (uint64_t));
    if (!cpu->hist)
      goto oom;
  }
  for (i = 0; i < n_threads; i++) {
    Band *b = &cpu->bands[i];

    b->cpu = cpu;
    b->y0 = (unsigned) ((uint64_t) height * i / n_threads);
    b->y1 = (unsigned) ((uint64_t) height * (i + 1) / n_threads);
    /* 3 rows of width + 3 int32 values (the plain C), or of width + 8
     * 16-bit ones (sharpness_rows) */
    b->rows = malloc (3 * ((size_t) width + 8) * sizeof (int32_t));
    if (!b->rows)
      goto oom;
    if (cpu->hist)
      b->hist = cpu->hist + (size_t) cpu->hist_bins * i;
  }
  return cpu;

oom:
  cq_sharpness_cpu_free (cpu);
  cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY,
      "out of host memory for %ux%u sharpness buffers", width, height);
  return NULL;
}

static void
band_task (void *user, unsigned index)
{
  CqSharpnessCpu *cpu = user;

  band_run (&cpu->bands[index]);
}

CqStatus
cq_sharpness_cpu_measure (CqSharpnessCpu * cpu, const void *data,
    size_t stride, double *scores, CqError * err)
{
  CqSharpnessSums sums;
  unsigned __int128 usum[CQ_SUM_COUNT] = { 0 };
  __int128 lap_sum = 0;
  unsigned i, k;

  if (stride < (size_t) cpu->width * cq_layout_bytes_per_pixel (&cpu->layout))
    return cq_error_set (err, CQ_ERROR_INVALID,
        "row stride %zu is shorter than a row of %u pixels", stride,
        cpu->width);

  for (i = 0; i < cpu->n_threads; i++) {
    cpu->bands[i].data = data;
    cpu->bands[i].stride = stride;
  }
  cq_pool_run (cpu->n_threads, band_task, cpu);

  for (i = 0; i < cpu->n_threads; i++) {
    for (k = 0; k < CQ_SUM_COUNT; k++)
      usum[k] += cpu->bands[i].usum[k];
    lap_sum += cpu->bands[i].lap_sum;
  }
  usum[CQ_SUM_LAP] = (unsigned __int128) lap_sum;
  for (k = 0; k < CQ_SUM_COUNT; k++) {
    sums.sum[k].lo = (uint64_t) usum[k];
    sums.sum[k].hi = (uint64_t) (usum[k] >> 64);
  }
  if (cpu->hist) {
    for (i = 1; i < cpu->n_threads; i++) {
      const uint64_t *h = cpu->bands[i].hist;
      for (k = 0; k < cpu->hist_bins; k++)
        cpu->hist[k] += h[k];
    }
  }
  cq_sharpness_finish (&sums, cpu->hist, cpu->hist_bins, cpu->width,
      cpu->height, cpu->metrics, scores);
  return CQ_OK;
}

void
cq_sharpness_cpu_free (CqSharpnessCpu * cpu)
{
  unsigned i;

  if (!cpu)
    return;
  if (cpu->bands) {
    for (i = 0; i < cpu->n_threads; i++)
      free (cpu->bands[i].rows);
    free (cpu->bands);
  }
  free (cpu->hist);
  free (cpu);
}
