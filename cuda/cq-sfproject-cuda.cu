/* cudaquality compute library: SF-TR/A2 projector and backprojector on
 * CUDA, the launchers, on one device or several, with the volume resident
 * or streamed through (bands of columns projecting, z-slabs
 * backprojecting).
 *
 * A CqSfCuda is a group of devices (SfDev), each with its context, its
 * streams and its share of the work: the projector's views are split
 * between the devices (each projects whole views: nothing to sum), the
 * backprojector's volume into z-zones (each backprojects all views into
 * its slices: nothing to sum either). On each device:
 *
 * - resident (the volume, its reordered copy and a projection batch fit
 *   the device's budget): the volume to project is kept z-fastest (a voxel
 *   column's slices contiguous, what the projector's lanes read together);
 *   projections and the backprojected volume are linear device memory in
 *   the API's layouts (the scaled projections the backprojector reads
 *   with rows padded). A batch of views is one launch per primary
 *   direction; the geometry goes to the kernels by value, the views'
 *   cos/sin, axial offsets (a helical orbit's source z) and launch order
 *   through small device arrays of the device, so devices and contexts on
 *   other streams never share them.
 * - streamed (they do not): the volume stays in pinned host memory and
 *   goes through the device in pieces. The projector takes a batch of
 *   views a pass; a band of columns (rows of y, every slice) is uploaded
 *   (on the upload stream, while the band before is projected), reordered
 *   z-fastest and projected, walking only its own columns, its share
 *   added to the batch's projections. The backprojector takes the
 *   volume's z-slabs one after the
 *   other; for each, the band of detector rows its slices can reach is
 *   uploaded for all views (while the slab before is backprojected), the
 *   slab is backprojected as the resident one would, and downloaded
 *   (while the next one is backprojected). docs/sf-projector.md says what
 *   is copied when and what the split does to the results.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-copy.h"
#include "cq-cuda-private.h"
#include "cq-pool.h"
#include "cq-sfnoise-cuda.h"
#include "cq-sfproject.h"
#include "cq-sfproject-device.h"
#include "cq-sfproject-plan.h"
#include "cq-sfproject-kernels.cuh"

namespace
{
constexpr size_t kMiB = (size_t) 1 << 20;
/* what a device keeps free of what it has, when no limit is given (the
 * runtime's own needs: local memory of launches, the printf heap) */
constexpr size_t kReserve = 256 * kMiB;
/* pinned chunks through which pageable host memory is copied */
constexpr size_t kChunk = 64 * kMiB;
/* a resident host call comes down in 4 pieces from 4 of these: views
 * (projector), slices (backprojector) */
constexpr unsigned kResidentPiece = 8;
constexpr unsigned kResidentSlab = 64;
}

/* One device's share. */
struct SfDev
{
  CqCudaTarget target;
  cudaStream_t stream;          /* compute; all of a resident device's work */
  cudaStream_t up, down;        /* streamed: uploads, downloads */
  const CqSfGeometry *g;        /* the group's */
  cq::SfConst k;                /* the geometry as the kernels see it */
  int ordinal;                  /* the CUDA device, for messages */
  unsigned cells;               /* the most cells a footprint touches */
  unsigned proj_rows;           /* detector rows a projector lane */
  int proj_window;              /* rows span under two slices: no walk */
  unsigned views_max;           /* views a launch: n_views, at most 2048 */
  unsigned za, zb;              /* the backprojector's zone of slices */
  size_t budget;                /* device bytes it may use */
  size_t free_bytes;            /* what it had free at creation */
  int limited;                  /* the budget is the options' limit */
  int resident;
  int back_ok;                  /* streamed: a backprojector plan fits */
  float2 *views;                /* (cos β, sin β) of the batch's views */
  float *zlvs;                  /* their axial offsets (SfConst::zlvs) */
  int *slots;                   /* projector launch order: x-major first */
  float2 *views_host;           /* staging of the three above */
  float *zlvs_host;
  int *slots_host;
  int2 *groups;                 /* backprojector warps' 16 columns (x, y) */
  int n_groups;
  unsigned char *pixels;        /* one converted view, for host output */
  size_t pixels_pitch;
  const float *kept;            /* the kept batch's projections */
  unsigned kept_n;
  /* resident */
  float *volz;                  /* the volume to project, z fastest */
  float *proj;                  /* a batch of views */
  float *scaled;                /* projections scaled for Aᵀ, rows padded */
  float *vol;                   /* backprojection */
  /* streamed projector */
  CqSfProjPlan pp;
  float *stage;                 /* a piece of an upload, x fastest */
  float *zslab;                 /* a band of columns (or all), z fastest */
  float *acc;                   /* the pass's projections */
  int held_first;               /* the band zslab holds (-1: none) */
  unsigned held_n;
  /* streamed backprojector */
  CqSfBackPlan bp;
  float *band[2];               /* views × rows × bpitch: a band of
                                 * projections, scaled in place */
  float *out[2];                /* a slab of the backprojection */
  float *tmp;                   /* a view batch's share of a slab */
  /* streamed: pinned chunks for pageable host memory, and the events
   * that order the streams */
  unsigned char *chunk[2];
  cudaEvent_t chunk_done[2];    /* the last copy through chunk[i] */
  cudaEvent_t staged;           /* the stage's upload */
  cudaEvent_t reordered;        /* the stage read into zslab */
  cudaEvent_t uploaded[2];      /* band[i] on the device */
  cudaEvent_t used[2];          /* the kernels that read band[i] */
  cudaEvent_t made[2];          /* out[i] complete */
  cudaEvent_t fetched[2];       /* out[i] downloaded */
};

struct CqSfCuda
{
  CqSfGeometry g;
  unsigned n_dev;
  SfDev *dev[CQ_CUDA_MAX_DEVICES];
  size_t limit;                 /* the options' */
  float *volume;                /* streamed: the volume, pinned, x fastest */
  unsigned keep_first[CQ_CUDA_MAX_DEVICES + 1];  /* the kept batch's split */
  unsigned char *frame;         /* pinned: a frame crossing devices */
  int shared_uploads;           /* resident devices that reach each other:
                                 * each uploads a share, then copies the
                                 * others' shares from their memory */
};

/* The most detector cells a column's footprint touches: its widest
 * shadow (the square's diagonal) at the largest magnification. */
static unsigned
cells_a_footprint (const CqSfGeometry * g)
{
  double least, most;

  cq_sf_magnifications (g, &least, &most);
  return (unsigned) ceil (most * g->dx * M_SQRT2 / g->du * 1.01) + 1;
}

/* The most slices a detector row spans (at the least magnification) and
 * the most rows a slice spans (at the largest). */
static double
slices_a_row (const CqSfGeometry * g)
{
  double least, most;

  cq_sf_magnifications (g, &least, &most);
  return g->dv / (least * g->dz);
}

static double
rows_a_slice (const CqSfGeometry * g)
{
  double least, most;

  cq_sf_magnifications (g, &least, &most);
  return most * g->dz / g->dv;
}

/* The backprojector's warps: runs of 16 columns along x of one voxel row,
 * covering in each row the columns the field-of-view mask keeps (all of
 * them without it; with it a column more on each side than the double
 * test says, the kernel's float test deciding), ordered so that a block's
 * eight are neighbours: the same run of eight consecutive rows. Returns
 * the count, groups (malloc'ed) in *out; 0 on out of memory. */
static int
column_groups (const CqSfGeometry * g, int2 ** out)
{
  const double r = cq_sf_fov_radius (g), r2 = r * r * (1.0 + 1e-5);
  const unsigned runs = (g->nx + 15) / 16;
  int *lo = (int *) malloc (g->ny * sizeof (int));
  int *n_runs = (int *) calloc (g->ny, sizeof (int));
  int2 *groups = NULL;
  int n = 0;
  unsigned i, j, j0, k, jj;

  for (j = 0; lo && n_runs && j < g->ny; j++) {
    const double y = cq_sf_voxel_y (g, j);
    int first = -1, last = -1;

    for (i = 0; i < g->nx; i++) {
      const double x = cq_sf_voxel_x (g, i);

      if (!g->fov_mask || x * x + y * y <= r2) {
        if (first < 0)
          first = (int) i;
        last = (int) i;
      }
    }
    if (first < 0)
      continue;
    if (g->fov_mask) {
      first = first > 0 ? first - 1 : 0;
      last = last < (int) g->nx - 1 ? last + 1 : last;
    }
    lo[j] = first;
    n_runs[j] = (last - first) / 16 + 1;
    n += n_runs[j];
  }
  if (lo && n_runs)
    groups = (int2 *) malloc ((n > 0 ? n : 1) * sizeof (int2));
  if (groups) {
    n = 0;
    for (j0 = 0; j0 < g->ny; j0 += 8)
      for (k = 0; k < runs; k++)
        for (jj = j0; jj < j0 + 8 && jj < g->ny; jj++)
          if ((int) k < n_runs[jj])
            groups[n++] = make_int2 (lo[jj] + 16 * (int) k, (int) jj);
  }
  free (lo);
  free (n_runs);
  *out = groups;
  return groups ? n : 0;
}

/* ---- a device's life ---- */

/* A device's events: made (every device's) first, then the streamed
 * ones' in the order they are created. */
static const int kEvents = 12;

static void
dev_events (SfDev * d, cudaEvent_t * ev[kEvents])
{
  cudaEvent_t *all[kEvents] = { &d->made[0], &d->made[1],
    &d->chunk_done[0], &d->uploaded[0], &d->used[0], &d->fetched[0],
    &d->chunk_done[1], &d->uploaded[1], &d->used[1], &d->fetched[1],
    &d->staged, &d->reordered
  };

  memcpy (ev, all, sizeof (all));
}

/* n floats on the device, zeroed on stream (the device's: the legacy
 * default stream does not order against a non-blocking one, and a
 * zeroing left there could land after the first set_volume). */
static cudaError_t
alloc_zeros (float **p, size_t n, cudaStream_t stream)
{
  cudaError_t e = cudaMalloc ((void **) p, n * sizeof (float));

  return e == cudaSuccess ? cudaMemsetAsync (*p, 0, n * sizeof (float),
      stream) : e;
}

static void
dev_free_streamed (SfDev * d, int proj, int back)
{
  if (proj) {
    if (d->kept && d->kept == d->acc)
      d->kept = NULL;
    cudaFree (d->stage);
    cudaFree (d->zslab);
    cudaFree (d->acc);
    d->stage = d->zslab = d->acc = NULL;
    d->held_first = -1;
  }
  if (back) {
    for (int i = 0; i < 2; i++) {
      cudaFree (d->band[i]);
      cudaFree (d->out[i]);
      d->band[i] = d->out[i] = NULL;
    }
    cudaFree (d->tmp);
    d->tmp = NULL;
  }
}

static void
dev_free (SfDev * d)
{
  if (!d)
    return;
  free (d->views_host);
  free (d->zlvs_host);
  free (d->slots_host);
  cq_cuda_object_free (d,[d]() {
        if (d->up)
          cudaStreamSynchronize (d->up);
        if (d->down)
          cudaStreamSynchronize (d->down);
        dev_free_streamed (d, 1, 1);
        cudaFree (d->volz);
        cudaFree (d->proj);
        cudaFree (d->scaled);
        cudaFree (d->vol);
        cudaFree (d->views);
        cudaFree (d->zlvs);
        cudaFree (d->slots);
        cudaFree (d->pixels);
        cudaFree (d->groups);
        cudaEvent_t *ev[kEvents];

        for (int i = 0; i < 2; i++)
          cudaFreeHost (d->chunk[i]);
        dev_events (d, ev);
        for (int i = 0; i < kEvents; i++)
          if (*ev[i])
            cudaEventDestroy (*ev[i]);
        if (d->up)
          cudaStreamDestroy (d->up);
        if (d->down)
          cudaStreamDestroy (d->down);
      });
}

/* Device memory that cannot be had for the projector (back = 0) or the
 * backprojector: the sizes, what the least plan needs, the budget and
 * where it comes from. */
static CqStatus
no_room (const SfDev * d, int back, CqError * err)
{
  const CqSfGeometry *g = d->g;
  /* the projector: a view and two rows of columns (a band and its stage);
   * the backprojector: one view's band of rows for a slice, two slices */
  const size_t least = cq_sf_stream_fixed_bytes (g) + (back ?
      2 * cq_sf_slice_bytes (g) + (size_t) cq_sf_max_band_rows (g, d->za,
          d->zb, 1) * d->k.bpitch * sizeof (float) :
      2 * (size_t) g->nx * g->nz * sizeof (float) + cq_sf_view_bytes (g));

  return cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "CUDA device %d: the "
      "%s of a %ux%ux%u volume (%zu MiB), %u views of %ux%u (%zu MiB), "
      "needs %zu KiB at least; it has %zu KiB (%s; %zu MiB free)",
      d->ordinal, back ? "backprojector" : "projector", g->nx, g->ny, g->nz,
      cq_sf_slice_bytes (g) * g->nz / kMiB, d->views_max, g->nu, g->nv,
      cq_sf_view_bytes (g) * d->views_max / kMiB, least / 1024,
      d->budget / 1024, d->limited ? "the limit" : "free, less 256 MiB",
      d->free_bytes / kMiB);
}

/* The device's streams, budget, plan and (resident) buffers, in its
 * context. */
static CqStatus
dev_init (SfDev * d, CqSfCuda * cu, CqError * err)
{
  const CqSfGeometry *g = &cu->g;
  const size_t voxels = (size_t) g->nx * g->ny * g->nz;
  size_t cells, scaled, free_bytes = 0, total = 0, resident;
  const char *what = "cannot select the CUDA device";
  cudaError_t e;
  cudaEvent_t *ev[kEvents];
  cq::SfConst *k = &d->k;

  d->g = g;
  d->held_first = -1;
  d->views_max = g->n_views < (unsigned) cq::kSfMaxViews ? g->n_views :
      (unsigned) cq::kSfMaxViews;
  cells = (size_t) g->nu * g->nv * d->views_max;
  scaled = ((size_t) g->nu + cq::kSfBackPad) * g->nv * d->views_max;
  k->R = (float) g->sod;
  k->D = (float) g->sdd;
  k->dx = (float) g->dx;
  k->dz = (float) g->dz;
  k->du = (float) g->du;
  k->dv = (float) g->dv;
  k->x0 = (float) cq_sf_voxel_x (g, 0);
  k->y0 = (float) cq_sf_voxel_y (g, 0);
  k->u0 = (float) cq_sf_cell_s (g, 0);
  k->v0 = (float) cq_sf_cell_t (g, 0);
  k->ul0 = (float) (cq_sf_cell_s (g, 0) - g->du / 2);
  k->idu = (float) (1.0 / g->du);
  d->cells = cells_a_footprint (g);
  /* a lane's rows: the fewest that cover the detector in one block row,
   * at most 4 (registers); CQ_SF_PROJ_ROWS overrides, for measurements */
  d->proj_rows = g->nv <= (unsigned) cq::kSfProjThreads ? 1 :
      g->nv <= 2u * cq::kSfProjThreads ? 2 : 4;
  /* the smallest magnification is at the corner farthest from the source;
   * CQ_SF_PROJ_WALK=1 walks anyway, for measurements */
  d->proj_window = slices_a_row (g) < 1.99 && !getenv ("CQ_SF_PROJ_WALK");
  if (getenv ("CQ_SF_PROJ_ROWS"))
    d->proj_rows = (unsigned) atoi (getenv ("CQ_SF_PROJ_ROWS"));
  k->rc = (int) (g->nv / 2);
  k->dzv = (float) (g->dz / g->dv);
  k->zlv = (float) ((cq_sf_voxel_z (g, 0) - g->dz / 2) / g->dv);
  k->vcv = (float) ((cq_sf_cell_t (g, 0) - g->dv / 2) / g->dv + k->rc);
  k->fov_r2 = g->fov_mask ? (float) (cq_sf_fov_radius (g) *
      cq_sf_fov_radius (g)) : -1.0f;
  k->nx = (int) g->nx;
  k->ny = (int) g->ny;
  k->nz = (int) g->nz;
  k->nu = (int) g->nu;
  k->nv = (int) g->nv;
  k->bpitch = (int) g->nu + cq::kSfBackPad;
  k->z0 = 0;
  k->zn = (int) g->nz;
  k->j0 = 0;
  k->jn = (int) g->ny;
  d->views_host = (float2 *) malloc (cq::kSfMaxViews * sizeof (float2));
  d->zlvs_host = (float *) malloc (cq::kSfMaxViews * sizeof (float));
  d->slots_host = (int *) malloc (cq::kSfMaxViews * sizeof (int));
  if (!d->views_host || !d->zlvs_host || !d->slots_host)
    return cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory");

  CqCudaScope scope (d->target);
  e = scope.enter ();
  if (e == cudaSuccess)
    e = cudaGetDevice (&d->ordinal);
  if (e == cudaSuccess) {
    what = "cannot create a CUDA stream";
    e = cudaStreamCreateWithFlags (&d->stream, cudaStreamNonBlocking);
  }
  if (e == cudaSuccess) {
    what = "cannot read the device's free memory";
    e = cudaMemGetInfo (&free_bytes, &total);
  }
  if (e != cudaSuccess)
    return cq_cuda_error_for (err, e, what, "CUDA device %d", d->ordinal);
  d->free_bytes = free_bytes;
  d->budget = free_bytes > kReserve ? free_bytes - kReserve : 0;
  if (cu->limit && cu->limit < d->budget) {
    d->budget = cu->limit;
    d->limited = 1;
  }
  resident = cq_sf_resident_bytes (g, d->views_max);
  d->resident = resident <= d->budget;
  /* every device: a download stream and the events of pieces made */
  what = "cannot create a CUDA stream";
  e = cudaStreamCreateWithFlags (&d->down, cudaStreamNonBlocking);
  dev_events (d, ev);
  for (int i = 0; i < 2 && e == cudaSuccess; i++)
    e = cudaEventCreateWithFlags (ev[i], cudaEventDisableTiming);
  if (e != cudaSuccess)
    return cq_cuda_error_for (err, e, what, "CUDA device %d", d->ordinal);
  if (!d->resident) {
    const size_t fixed = cq_sf_stream_fixed_bytes (g);
    const size_t avail = d->budget > fixed ? d->budget - fixed : 0;

    /* a projector must fit; a backprojector that does not fails when
     * asked for (a source never asks) */
    if (!cq_sf_plan_project (g, avail, d->views_max, &d->pp))
      return no_room (d, 0, err);
    d->back_ok = cq_sf_plan_backproject (g, avail, d->views_max, d->za,
        d->zb, &d->bp);
    what = "cannot create a CUDA stream";
    e = cudaStreamCreateWithFlags (&d->up, cudaStreamNonBlocking);
    if (e == cudaSuccess)
      what = "cannot create CUDA events";
    for (int i = 2; i < kEvents && e == cudaSuccess; i++)
      e = cudaEventCreateWithFlags (ev[i], cudaEventDisableTiming);
    if (e == cudaSuccess) {
      what = "cannot allocate 128 MiB of pinned host memory (staging)";
      e = cudaHostAlloc ((void **) &d->chunk[0], kChunk,
          cudaHostAllocPortable);
      if (e == cudaSuccess)
        e = cudaHostAlloc ((void **) &d->chunk[1], kChunk,
            cudaHostAllocPortable);
    }
  }
  if (e == cudaSuccess) {
    what = "cannot allocate the views";
    e = cudaMalloc ((void **) &d->views, cq::kSfMaxViews * sizeof (float2));
  }
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d->zlvs, cq::kSfMaxViews * sizeof (float));
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d->slots, cq::kSfMaxViews * sizeof (int));
  if (e == cudaSuccess) {
    int2 *groups = NULL;

    what = "cannot allocate the backprojector's column groups";
    d->n_groups = column_groups (g, &groups);
    e = !groups ? cudaErrorMemoryAllocation : cudaMalloc ((void **)
        &d->groups, (d->n_groups + 1) * sizeof (int2));
    /* staged before the call returns (pageable source) */
    if (e == cudaSuccess)
      e = cudaMemcpyAsync (d->groups, groups, d->n_groups * sizeof (int2),
          cudaMemcpyHostToDevice, d->stream);
    free (groups);
  }
  if (e == cudaSuccess && d->resident) {
    what = "cannot allocate the volume";
    e = alloc_zeros (&d->volz, voxels, d->stream);
    if (e == cudaSuccess) {
      what = "cannot allocate the projections";
      e = cudaMalloc ((void **) &d->proj, cells * sizeof (float));
    }
    /* the padding zero for good */
    if (e == cudaSuccess)
      e = alloc_zeros (&d->scaled, scaled, d->stream);
    if (e == cudaSuccess) {
      what = "cannot allocate the backprojected volume";
      e = alloc_zeros (&d->vol, voxels, d->stream);
    }
  }
  if (e == cudaSuccess)
    e = cudaStreamSynchronize (d->stream);
  if (e != cudaSuccess)
    return cq_cuda_error_for (err, e, what, "CUDA device %d, %s %zu MiB of "
        "%zu MiB free", d->ordinal, d->resident ? "the volume and the views "
        "resident," : "the streaming set-up,", (d->resident ? resident :
            cq_sf_stream_fixed_bytes (g)) / kMiB, free_bytes / kMiB);
  k->zlvs = d->zlvs;
  return CQ_OK;
}

/* Waits for every device's streams (work in flight may read the pinned
 * volume), each in its context; errors are the calls' to report. */
static void
drain (CqSfCuda * cu)
{
  for (unsigned w = 0; w < cu->n_dev; w++) {
    SfDev *d = cu->dev[w];
    CqCudaScope scope (d->target);

    if (scope.enter () == cudaSuccess) {
      if (d->stream)
        cudaStreamSynchronize (d->stream);
      if (d->up)
        cudaStreamSynchronize (d->up);
      if (d->down)
        cudaStreamSynchronize (d->down);
    }
    cudaGetLastError ();
  }
}

extern "C" void
cq_sf_cuda_free (CqSfCuda * cu)
{
  if (!cu)
    return;
  drain (cu);
  if ((cu->volume || cu->frame) && cu->n_dev > 0) {
    CqCudaScope scope (cu->dev[0]->target);

    /* in the first device's context, where they were allocated */
    if (scope.enter () == cudaSuccess) {
      cudaFreeHost (cu->volume);
      cudaFreeHost (cu->frame);
    }
    cudaGetLastError ();
  }
  for (unsigned w = 0; w < cu->n_dev; w++)
    dev_free (cu->dev[w]);
  free (cu);
}

/* CQ_SF_PEER_COPIES=0: no copies between devices, each uploads whole
 * arrays (A/B runs, and that path tested where devices reach each
 * other). */
static int
peer_copies_allowed (void)
{
  const char *v = getenv ("CQ_SF_PEER_COPIES");

  return !v || strcmp (v, "0") != 0;
}

static int
any_streamed (const CqSfCuda * cu)
{
  for (unsigned w = 0; w < cu->n_dev; w++)
    if (!cu->dev[w]->resident)
      return 1;
  return 0;
}

/* Whether every device of the group reaches every other's memory
 * directly (cq_cuda_reach_peer, from each device's context). */
static int
reach_peers (const CqSfCuda * cu)
{
  for (unsigned w = 0; w < cu->n_dev; w++) {
    const SfDev *d = cu->dev[w];
    CqCudaScope scope (d->target);

    if (scope.enter () != cudaSuccess) {
      cudaGetLastError ();
      return 0;
    }
    for (unsigned v = 0; v < cu->n_dev; v++)
      if (!cq_cuda_reach_peer (&d->target, d->ordinal, cu->dev[v]->ordinal))
        return 0;
  }
  return 1;
}

extern "C" CqSfCuda *
cq_sf_cuda_new_multi (const CqCudaTarget * targets, unsigned n_targets,
    const CqSfGeometry * g, const CqSfCudaOptions * options, CqError * err)
{
  CqSfCuda *cu;
  unsigned w;

  if (cq_sf_geometry_check (g, err) != CQ_OK)
    return NULL;
  if (n_targets == 0 || n_targets > CQ_CUDA_MAX_DEVICES) {
    cq_error_set (err, CQ_ERROR_INVALID, "%u CUDA devices asked, 1 to %d "
        "possible", n_targets, CQ_CUDA_MAX_DEVICES);
    return NULL;
  }
  cu = (CqSfCuda *) calloc (1, sizeof (CqSfCuda));
  if (!cu) {
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory");
    return NULL;
  }
  cu->g = *g;
  cu->limit = options ? options->device_memory_limit : 0;
  for (w = 0; w < n_targets; w++) {
    SfDev *d = cq_cuda_object_new < SfDev > (&targets[w], err);

    if (!d) {
      cq_sf_cuda_free (cu);
      return NULL;
    }
    cu->dev[cu->n_dev++] = d;
    /* the backprojector's zones: nothing to sum at their edges */
    cq_sf_zone (g->nz, w, n_targets, &d->za, &d->zb);
    if (dev_init (d, cu, err) != CQ_OK) {
      cq_sf_cuda_free (cu);
      return NULL;
    }
  }
  cu->shared_uploads = n_targets > 1 && !any_streamed (cu)
      && peer_copies_allowed () && reach_peers (cu);
  return cu;
}

extern "C" CqSfCuda *
cq_sf_cuda_new_for (const CqCudaTarget * target, const CqSfGeometry * g,
    CqError * err)
{
  return cq_sf_cuda_new_multi (target, 1, g, NULL, err);
}

/* ---- the views of a launch ---- */

/* Puts views [first, first + n) of the batch on the device: (cos β, sin β)
 * and the axial offset zl0 / dv, zl0 the lower edge of slice 0 less the
 * source's z (in double, rounded once: the same float in both kernels);
 * for the projector also the launch order: x-major views first (*n_x of
 * them). Copies from pageable memory are staged before the call returns,
 * so the host arrays may be refilled for the next batch at once. */
static CqStatus
set_views (SfDev * d, unsigned first, unsigned n, unsigned *n_x,
    CqError * err)
{
  unsigned i, nx = 0, ny = 0;

  for (i = 0; i < n; i++) {
    double b = cq_sf_view_angle (d->g, first + i);

    d->views_host[i] = make_float2 ((float) cos (b), (float) sin (b));
    d->zlvs_host[i] = (float) ((cq_sf_voxel_z (d->g, 0) - d->g->dz / 2 -
            cq_sf_source_z (d->g, first + i)) / d->g->dv);
  }
  /* rays run along (sin β, −cos β): x-major where |sin β| ≥ |cos β| */
  for (i = 0; i < n; i++)
    if (fabsf (d->views_host[i].y) >= fabsf (d->views_host[i].x))
      d->slots_host[nx++] = (int) i;
  for (i = 0; i < n; i++)
    if (fabsf (d->views_host[i].y) < fabsf (d->views_host[i].x))
      d->slots_host[nx + ny++] = (int) i;
  *n_x = nx;
  CQ_CUDA_TRY (cudaMemcpyAsync (d->views, d->views_host,
          n * sizeof (float2), cudaMemcpyHostToDevice, d->stream), err,
      "cannot set the views");
  CQ_CUDA_TRY (cudaMemcpyAsync (d->zlvs, d->zlvs_host, n * sizeof (float),
          cudaMemcpyHostToDevice, d->stream), err, "cannot set the views");
  CQ_CUDA_TRY (cudaMemcpyAsync (d->slots, d->slots_host, n * sizeof (int),
          cudaMemcpyHostToDevice, d->stream), err, "cannot set the views");
  return CQ_OK;
}

static CqStatus
check_views (const CqSfCuda * cu, unsigned first, unsigned n, CqError * err)
{
  const unsigned most = cu->g.n_views < (unsigned) cq::kSfMaxViews ?
      cu->g.n_views : (unsigned) cq::kSfMaxViews;

  if (n == 0 || n > most)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "%u views asked, 1 to %u possible", n, most);
  return cq_sf_view_range_check (&cu->g, first, n, err);
}

/* ---- the kernels' launches ---- */

/* Enqueues the projection of the launch's views (set: n of them, n_x
 * x-major) into proj, x- and y-major views in one launch. A block stages
 * its columns once for all its rows: the fewest rows a lane that cover
 * the detector in one block row. band: kk holds the rows of columns
 * [kk.j0, kk.j0 + kk.jn) of a streamed volume, whose share is added to
 * proj. */
template < int ROWS > static void
launch_project (SfDev * d, const cq::SfConst & kk, const float *volz,
    unsigned n, unsigned n_x, bool band, float *proj)
{
  const unsigned rows = cq::kSfProjThreads * ROWS;
  const dim3 grid ((d->g->nu + cq::kSfStrip - 1) / cq::kSfStrip,
      (d->g->nv + rows - 1) / rows, n);

#define CQ_SF_PROJECT(HELICAL, BAND) \
  cq::sf_project_kernel < ROWS, HELICAL, BAND ><<<grid, cq::kSfProjThreads, \
      0, d->stream>>> (kk, d->views, d->slots, volz, (int) n_x, \
      d->proj_window, proj)
  if (d->g->helical_pitch > 0 && band)
    CQ_SF_PROJECT (true, true);
  else if (d->g->helical_pitch > 0)
    CQ_SF_PROJECT (true, false);
  else if (band)
    CQ_SF_PROJECT (false, true);
  else
    CQ_SF_PROJECT (false, false);
#undef CQ_SF_PROJECT
}

static void
launch_project_rows (SfDev * d, const cq::SfConst & kk, const float *volz,
    unsigned n, unsigned n_x, bool band, float *proj)
{
  if (d->proj_rows == 1)
    launch_project < 1 > (d, kk, volz, n, n_x, band, proj);
  else if (d->proj_rows == 2)
    launch_project < 2 > (d, kk, volz, n, n_x, band, proj);
  else
    launch_project < 4 > (d, kk, volz, n, n_x, band, proj);
}

/* Resident: views [first, first + n) of the whole volume into proj (a
 * view's projection at proj + its index · nu · nv). */
static CqStatus
enqueue_project_into (SfDev * d, unsigned first, unsigned n, float *proj,
    CqError * err)
{
  unsigned n_x;
  CqStatus ret = set_views (d, first, n, &n_x, err);

  if (ret != CQ_OK)
    return ret;
  launch_project_rows (d, d->k, d->volz, n, n_x, false, proj);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the projector");
  return CQ_OK;
}

static CqStatus
enqueue_project (SfDev * d, unsigned first, unsigned n, CqError * err)
{
  return enqueue_project_into (d, first, n, d->proj, err);
}

/* The backprojector for the n views set, kk's slices [z0, z0 + zn) into
 * vol (those slices, x fastest) from `scaled` (kk.nv rows a view: the
 * whole detector, or a band whose row kk.rc is the detector's row nv/2:
 * the kernels address rows from rc and take rows outside [0, kk.nv) as
 * 0). */
template < int CELLS, bool SLAB > static void
launch_backproject (SfDev * d, const cq::SfConst & kk, const float *scaled,
    unsigned n, float *vol)
{
  const dim3 block (32, cq::kSfBackThreads / 32);
  const double rows = rows_a_slice (d->g);

  /* CQ_SF_BACK_WALK=1 takes the walk anyway, for measurements; the
   * window's floors need slice edges under 2^22 rows from row rc */
  if (rows < 1.99 && d->g->nz * rows + d->g->nv < (double) (1 << 21)
      && !getenv ("CQ_SF_BACK_WALK")) {
    const int slots = (int) ceil (cq::kSfBackSlab * rows) +
        cq::kSfBackWindow + 2;
    const size_t smem = sizeof (double) * cq::kSfBackSlab *
        cq::kSfBackThreads + sizeof (float) * slots * cq::kSfBackThreads;

    /* a warp: a group of 16 columns along x, two slabs of each; the
     * columns no group holds (outside the field of view) are zero */
    if (d->g->fov_mask)
      cudaMemsetAsync (vol, 0, sizeof (float) * d->g->nx * d->g->ny *
          kk.zn, d->stream);
    cudaFuncSetAttribute (cq::sf_backproject_kernel < CELLS, SLAB >,
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
    cq::sf_backproject_kernel < CELLS, SLAB ><<<dim3 ((d->n_groups +
                block.y - 1) / block.y, 1, (kk.zn + 2 * cq::kSfBackSlab -
                1) / (2 * cq::kSfBackSlab)), block, smem, d->stream>>> (kk,
        d->views, scaled, (int) n, slots, d->groups, d->n_groups, vol);
  } else {
    cq::sf_backproject_walk_kernel < CELLS, SLAB ><<<dim3 ((d->g->nx + 31) / 32,
            (d->g->ny + block.y - 1) / block.y, (kk.zn + cq::kSfBackSlab -
                1) / cq::kSfBackSlab), block, 0, d->stream>>> (kk, d->views,
        scaled, (int) n, vol);
  }
}

/* Scales the n views set of `in` (kk.nv rows from detector row row0,
 * ipitch floats a row) by the cell factor into `scaled` (rows of
 * kk.bpitch; in itself when ipitch is bpitch). */
static void
enqueue_scale (SfDev * d, const cq::SfConst & kk, unsigned row0,
    const float *in, int ipitch, float *scaled, unsigned n)
{
  cq::sf_scale_kernel <<<dim3 ((kk.nu + 15) / 16, (kk.nv + 15) / 16, n),
      dim3 (16, 16), 0, d->stream>>> (kk, in, scaled, (int) n, (int) row0,
      ipitch);
}

/* Backprojects the n views set of `scaled` into vol (kk's slices). */
static CqStatus
enqueue_back_slices (SfDev * d, const cq::SfConst & kk, const float *scaled,
    unsigned n, float *vol, CqError * err)
{
  /* the fewest F1 registers that hold every footprint (wider ones are
   * computed on the way); slices under two rows tall take the window */
  const bool slab = kk.z0 != 0 || kk.zn != kk.nz;

  if (d->cells <= 3 && slab)
    launch_backproject < 3, true > (d, kk, scaled, n, vol);
  else if (d->cells <= 3)
    launch_backproject < 3, false > (d, kk, scaled, n, vol);
  else if (slab)
    launch_backproject < 4, true > (d, kk, scaled, n, vol);
  else
    launch_backproject < 4, false > (d, kk, scaled, n, vol);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the backprojector");
  return CQ_OK;
}

/* Scale and backprojection: the views set of `in` into vol. */
static CqStatus
enqueue_backproject_into (SfDev * d, const cq::SfConst & kk, unsigned row0,
    const float *in, int ipitch, float *scaled, unsigned n, float *vol,
    CqError * err)
{
  enqueue_scale (d, kk, row0, in, ipitch, scaled, n);
  return enqueue_back_slices (d, kk, scaled, n, vol, err);
}

/* Resident: views [first, first + n) from d->proj into the device's zone
 * of d->vol. */
static CqStatus
enqueue_backproject (SfDev * d, unsigned first, unsigned n, CqError * err)
{
  cq::SfConst kk = d->k;
  unsigned n_x;
  CqStatus ret = set_views (d, first, n, &n_x, err);

  if (ret != CQ_OK)
    return ret;
  if (d->zb == d->za)
    return CQ_OK;
  kk.z0 = (int) d->za;
  kk.zn = (int) (d->zb - d->za);
  return enqueue_backproject_into (d, kk, 0, d->proj, (int) d->g->nu,
      d->scaled, n, d->vol + (size_t) d->za * d->g->nx * d->g->ny, err);
}

/* ---- pageable host memory through the pinned chunks ----
 * A download of `rows` rows of `bytes` bytes, packed on the device and
 * `hpitch` apart in host memory, goes in pieces of at most a chunk:
 * several rows when they are short, a part of a row when they are long;
 * an upload in pieces of whole rows. The host copies into and out of the
 * chunks (cq_copy_rows, on the copy helpers) overlap the DMA of the other
 * chunk. */

typedef struct
{
  size_t rows, bytes, per;      /* per: rows a piece, 0: pieces a row */
  size_t n;                     /* pieces */
} SfPieces;

static SfPieces
pieces (size_t rows, size_t bytes)
{
  SfPieces p;

  p.rows = bytes ? rows : 0;
  p.bytes = bytes;
  p.per = bytes <= kChunk ? kChunk / (bytes ? bytes : 1) : 0;
  p.n = p.per ? (rows + p.per - 1) / p.per : rows * ((bytes + kChunk - 1) /
      kChunk);
  return p;
}

/* Piece i: rows [*row, *row + *n_rows) from byte *offset of each, *len
 * bytes of each. */
static void
piece (const SfPieces * p, size_t i, size_t *row, size_t *n_rows,
    size_t *offset, size_t *len)
{
  if (p->per) {
    *row = i * p->per;
    *n_rows = p->rows - *row < p->per ? p->rows - *row : p->per;
    *offset = 0;
    *len = p->bytes;
  } else {
    size_t per_row = (p->bytes + kChunk - 1) / kChunk;

    *row = i / per_row;
    *n_rows = 1;
    *offset = (i % per_row) * kChunk;
    *len = p->bytes - *offset < kChunk ? p->bytes - *offset : kChunk;
  }
}

/* A piece's copy between a chunk and packed device rows: a plain copy
 * for one row (a 2D copy's pitch is bounded), else a 2D one. */
static cudaError_t
copy_piece (void *dst, size_t dpitch, const void *src, size_t spitch,
    size_t len, size_t n_rows, cudaMemcpyKind kind, cudaStream_t stream)
{
  if (n_rows == 1)
    return cudaMemcpyAsync (dst, src, len, kind, stream);
  return cudaMemcpy2DAsync (dst, dpitch, src, spitch, len, n_rows, kind,
      stream);
}

/* Host rows to device rows through the chunks: row q of n_rows, `bytes`
 * long (at most a chunk), lies at src + (q / group) · gpitch + (q % group)
 * · bytes on the host (groups of `group` contiguous rows, gpitch bytes
 * apart) and goes to dst + q · dpitch on the device. Enqueued on `stream`
 * after what it holds; returns once the last piece is enqueued (a chunk
 * is refilled once its copy is done). */
static CqStatus
upload_rows (SfDev * d, float *dst, size_t dpitch, const float *src,
    size_t bytes, size_t group, size_t gpitch, size_t n_rows,
    cudaStream_t stream, CqError * err)
{
  const size_t per = kChunk / bytes;

  /* a detector row: 256 KiB at most */
  if (per == 0)
    return cq_error_set (err, CQ_ERROR_INVALID, "rows of %zu bytes do not "
        "fit a %zu MiB chunk", bytes, kChunk / kMiB);
  for (size_t q0 = 0, i = 0; q0 < n_rows; q0 += per, i++) {
    const int c = (int) (i & 1);
    const size_t m = n_rows - q0 < per ? n_rows - q0 : per;

    CQ_CUDA_TRY (cudaEventSynchronize (d->chunk_done[c]), err,
        "a copy through pinned memory failed");
    for (size_t q = q0; q < q0 + m;) {
      const size_t left = group - q % group;
      const size_t run = left < q0 + m - q ? left : q0 + m - q;

      cq_copy_rows (d->chunk[c] + (q - q0) * bytes, bytes,
          (const char *) src + (q / group) * gpitch + (q % group) * bytes,
          bytes, bytes, run);
      q += run;
    }
    CQ_CUDA_TRY (copy_piece ((char *) dst + q0 * dpitch, dpitch, d->chunk[c],
            bytes, bytes, m, cudaMemcpyHostToDevice, stream), err,
        "cannot upload");
    CQ_CUDA_TRY (cudaEventRecord (d->chunk_done[c], stream), err,
        "cannot upload");
  }
  return CQ_OK;
}

/* Device rows (src packed) to host memory once `after` has fired, on the
 * download stream; returns when dst holds them. */
static CqStatus
download (SfDev * d, float *dst, size_t hpitch, const float *src,
    size_t bytes, size_t rows, cudaEvent_t after, CqError * err)
{
  const SfPieces p = pieces (rows, bytes);
  size_t prev_row = 0, prev_rows = 0, prev_offset = 0, prev_len = 0;

  if (after)
    CQ_CUDA_TRY (cudaStreamWaitEvent (d->down, after, 0), err,
        "cannot download");
  for (size_t i = 0; i <= p.n; i++) {
    size_t row, n_rows, offset, len;

    if (i < p.n) {
      const int c = (int) (i & 1);

      piece (&p, i, &row, &n_rows, &offset, &len);
      CQ_CUDA_TRY (cudaEventSynchronize (d->chunk_done[c]), err,
          "a copy through pinned memory failed");
      CQ_CUDA_TRY (copy_piece (d->chunk[c], len, (const char *) src +
              row * bytes + offset, bytes, len, n_rows,
              cudaMemcpyDeviceToHost, d->down), err, "cannot download");
      CQ_CUDA_TRY (cudaEventRecord (d->chunk_done[c], d->down), err,
          "cannot download");
    }
    /* the piece before, while this one comes down */
    if (i > 0) {
      const int c = (int) ((i - 1) & 1);

      CQ_CUDA_TRY (cudaEventSynchronize (d->chunk_done[c]), err,
          "the download failed");
      cq_copy_rows ((char *) dst + prev_row * hpitch + prev_offset, hpitch,
          d->chunk[c], prev_len, prev_len, prev_rows);
    }
    if (i < p.n)
      piece (&p, i, &prev_row, &prev_rows, &prev_offset, &prev_len);
  }
  return CQ_OK;
}

/* ---- streamed projector ---- */

/* Waits for the device's own streams (not the context's others). */
static CqStatus
sync_streams (SfDev * d, CqError * err)
{
  CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err, "the device failed");
  CQ_CUDA_TRY (cudaStreamSynchronize (d->up), err, "an upload failed");
  CQ_CUDA_TRY (cudaStreamSynchronize (d->down), err, "a download failed");
  return CQ_OK;
}

/* The projector's buffers (the backprojector's given back). */
static CqStatus
ensure_project_buffers (SfDev * d, CqError * err)
{
  /* bytes of a row of columns in a slice, and a row of whole columns */
  const size_t rs = (size_t) d->g->nx * sizeof (float), rc = rs * d->g->nz;
  cudaError_t e = cudaSuccess;

  if (d->acc)
    return CQ_OK;
  if (sync_streams (d, err) != CQ_OK)
    return err ? err->status : CQ_ERROR_CUDA;
  dev_free_streamed (d, 0, 1);
  e = cudaMalloc ((void **) &d->stage, (size_t) d->pp.stage * d->pp.band *
      rs);
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d->zslab, (size_t) d->pp.band * rc);
  if (e == cudaSuccess)
    e = cudaMalloc ((void **) &d->acc, (size_t) d->pp.batch *
        cq_sf_view_bytes (d->g));
  if (e != cudaSuccess) {
    dev_free_streamed (d, 1, 0);
    return cq_cuda_error_for (err, e, "cannot allocate the projector's "
        "bands", "CUDA device %d: a band of %u rows of columns, a stage of "
        "%u slices and %u views, %zu MiB of a budget of %zu MiB", d->ordinal,
        d->pp.band,
        d->pp.stage, d->pp.batch, cq_sf_plan_project_bytes (d->g,
            &d->pp) / kMiB, d->budget / kMiB);
  }
  return CQ_OK;
}

/* Rows of columns [j0, j0 + n) of the pinned volume (all of it for ny)
 * into zslab (z fastest, column (j − j0) · nx + i), pp.stage slices at a
 * time: each upload waits for the stage's last reorder, each reorder for
 * its upload and (stream order) for the kernels that read zslab before. */
static CqStatus
upload_band (SfDev * d, const float *volume, unsigned j0, unsigned n,
    CqError * err)
{
  const CqSfGeometry *g = d->g;
  const size_t slice = (size_t) g->nx * g->ny, row = g->nx * sizeof (float);
  cq::SfConst kk = d->k;

  kk.ny = (int) n;
  for (unsigned c0 = 0; c0 < g->nz; c0 += d->pp.stage) {
    const unsigned cn = g->nz - c0 < d->pp.stage ? g->nz - c0 : d->pp.stage;

    CQ_CUDA_TRY (cudaStreamWaitEvent (d->up, d->reordered, 0), err,
        "cannot upload a band");
    CQ_CUDA_TRY (cudaMemcpy2DAsync (d->stage, n * row, volume + c0 * slice +
            (size_t) j0 * g->nx, slice * sizeof (float), n * row, cn,
            cudaMemcpyHostToDevice, d->up), err, "cannot upload a band");
    CQ_CUDA_TRY (cudaEventRecord (d->staged, d->up), err,
        "cannot upload a band");
    CQ_CUDA_TRY (cudaStreamWaitEvent (d->stream, d->staged, 0), err,
        "cannot upload a band");
    cq::sf_zfirst_kernel <<<dim3 ((g->nx + 31) / 32, (cn + 31) / 32, n),
        dim3 (32, 8), 0, d->stream>>> (kk, d->stage, d->zslab + c0,
        (int) cn, (int) g->nz);
    CQ_CUDA_TRY (cudaGetLastError (), err, "cannot reorder a band");
    CQ_CUDA_TRY (cudaEventRecord (d->reordered, d->stream), err,
        "cannot upload a band");
  }
  d->held_first = (int) j0;
  d->held_n = n;
  return CQ_OK;
}

/* Enqueues views [first, first + n) (n <= pp.batch) into d->acc: the
 * bands of columns in ascending y (their shares added in that order,
 * whatever the calls before), each walking only its own columns, so that
 * the bands together do the unsplit work once; a band already held is
 * not uploaded again. */
static CqStatus
stream_project_pass (SfDev * d, const float *volume, unsigned first,
    unsigned n, CqError * err)
{
  const CqSfGeometry *g = d->g;
  const unsigned band = d->pp.band;
  unsigned n_x, j0;
  CqStatus ret;

  if (!volume)
    return cq_error_set (err, CQ_ERROR_INVALID, "no volume to project: "
        "cq_sf_cuda_set_volume first");
  ret = ensure_project_buffers (d, err);

  if (ret == CQ_OK)
    ret = set_views (d, first, n, &n_x, err);
  if (ret != CQ_OK)
    return ret;
  if (band < g->ny)
    CQ_CUDA_TRY (cudaMemsetAsync (d->acc, 0, n * cq_sf_view_bytes (g),
            d->stream), err, "cannot clear the projections");
  for (j0 = 0; j0 < g->ny; j0 += band) {
    const unsigned jn = g->ny - j0 < band ? g->ny - j0 : band;
    cq::SfConst kk = d->k;

    if (d->held_first != (int) j0 || d->held_n != jn) {
      ret = upload_band (d, volume, j0, jn, err);
      if (ret != CQ_OK)
        return ret;
    }
    kk.j0 = (int) j0;
    kk.jn = (int) jn;
    /* the whole volume: the resident projector itself */
    launch_project_rows (d, kk, d->zslab, n, n_x, jn < g->ny, d->acc);
    CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the projector");
  }
  d->kept = d->acc;
  d->kept_n = n;
  return CQ_OK;
}

/* ---- streamed backprojector ---- */

static CqStatus
ensure_back_buffers (SfDev * d, CqError * err)
{
  const size_t band = (size_t) d->bp.rows * d->bp.views * d->k.bpitch *
      sizeof (float), slab = (size_t) d->bp.slab * cq_sf_slice_bytes (d->g);
  const int bufs = d->bp.dbl ? 2 : 1;
  cudaError_t e = cudaSuccess;

  if (d->out[0] || d->bp.slab == 0)
    return CQ_OK;
  if (sync_streams (d, err) != CQ_OK)
    return err ? err->status : CQ_ERROR_CUDA;
  dev_free_streamed (d, 1, 0);
  /* the bands' row padding zero for good (uploads write nu floats a
   * row) */
  for (int i = 0; i < bufs && e == cudaSuccess; i++) {
    e = cudaMalloc ((void **) &d->band[i], band ? band : 1);
    if (e == cudaSuccess)
      e = cudaMemsetAsync (d->band[i], 0, band ? band : 1, d->stream);
    if (e == cudaSuccess)
      e = cudaMalloc ((void **) &d->out[i], slab);
  }
  if (e == cudaSuccess && d->bp.views < d->views_max)
    e = cudaMalloc ((void **) &d->tmp, slab);
  /* the zeros down before the upload stream writes the rows */
  if (e == cudaSuccess)
    e = cudaStreamSynchronize (d->stream);
  if (e != cudaSuccess) {
    dev_free_streamed (d, 0, 1);
    return cq_cuda_error_for (err, e, "cannot allocate the backprojector's "
        "slabs", "CUDA device %d: %d bands of %u rows of %u views and "
        "slabs of %u slices, %zu MiB of a budget of %zu MiB", d->ordinal,
        bufs, d->bp.rows, d->bp.views, d->bp.slab, cq_sf_plan_back_bytes
        (d->g, d->views_max, &d->bp) / kMiB, d->budget / kMiB);
  }
  return CQ_OK;
}

/* out[o] (slices [k0, k0 + kn)) to the host volume once made. */
static CqStatus
fetch_slab (SfDev * d, int o, unsigned k0, unsigned kn, float *volume,
    CqError * err)
{
  const size_t slice = (size_t) d->g->nx * d->g->ny;
  CqStatus ret;

  ret = download (d, volume + k0 * slice, kn * slice * sizeof (float),
      d->out[o], kn * slice * sizeof (float), 1, d->made[o], err);
  if (ret != CQ_OK)
    return ret;
  CQ_CUDA_TRY (cudaEventRecord (d->fetched[o], d->down), err,
      "cannot download");
  return CQ_OK;
}

/* volume = Aᵀ proj over views [first, first + n) for the device's zone,
 * slab after slab: a slab's band of rows of every view up (host memory
 * through the chunks, while the slab before is backprojected), scaled,
 * backprojected as the resident device would (all views in one launch
 * when the plan allows), and down (while the next is backprojected). */
static CqStatus
stream_backproject (SfDev * d, const float *proj, unsigned first,
    unsigned n, float *volume, CqError * err)
{
  const CqSfGeometry *g = d->g;
  const unsigned slab = d->bp.slab, per = d->bp.views;
  const size_t row = (size_t) g->nu * sizeof (float);
  unsigned k0, step = 0, n_x;
  int pending = -1;             /* a slab made, not yet fetched */
  unsigned pending_k0 = 0, pending_kn = 0;
  CqStatus ret;

  if (d->zb == d->za)
    return CQ_OK;
  if (!d->back_ok)
    return no_room (d, 1, err);
  ret = ensure_back_buffers (d, err);
  if (ret != CQ_OK)
    return ret;
  for (k0 = d->za; k0 < d->zb; k0 += slab) {
    const unsigned kn = d->zb - k0 < slab ? d->zb - k0 : slab;
    const int o = d->bp.dbl ? (int) ((k0 - d->za) / slab & 1) : 0;
    unsigned r0, r1;

    cq_sf_slab_rows (g, k0, k0 + kn, cq_sf_source_z (g, first),
        cq_sf_source_z (g, first + n - 1), &r0, &r1);
    /* out[o] free once its last slab is down */
    CQ_CUDA_TRY (cudaStreamWaitEvent (d->stream, d->fetched[o], 0), err,
        "cannot backproject");
    if (r0 == r1)
      CQ_CUDA_TRY (cudaMemsetAsync (d->out[o], 0, kn * cq_sf_slice_bytes (g),
              d->stream), err, "cannot clear a slab");
    for (unsigned v0 = 0; r0 < r1 && v0 < n; v0 += per, step++) {
      const unsigned nv = n - v0 < per ? n - v0 : per;
      const int b = d->bp.dbl ? (int) (step & 1) : 0;
      cq::SfConst kk = d->k;

      /* band[b] free once the kernels that read it are done; rows r0 to
       * r1 of each view, padded on the device */
      CQ_CUDA_TRY (cudaStreamWaitEvent (d->up, d->used[b], 0), err,
          "cannot backproject");
      ret = upload_rows (d, d->band[b], kk.bpitch * sizeof (float),
          proj + ((size_t) v0 * g->nv + r0) * g->nu, row, r1 - r0,
          (size_t) g->nv * row, (size_t) nv * (r1 - r0), d->up, err);
      if (ret != CQ_OK)
        return ret;
      CQ_CUDA_TRY (cudaEventRecord (d->uploaded[b], d->up), err,
          "cannot backproject");
      /* the views (pageable: waits for the kernels before, which read
       * them) */
      ret = set_views (d, first + v0, nv, &n_x, err);
      if (ret != CQ_OK)
        return ret;
      CQ_CUDA_TRY (cudaStreamWaitEvent (d->stream, d->uploaded[b], 0), err,
          "cannot backproject");
      /* the band as a detector of r1 - r0 rows whose row rc is still
       * the detector's: the same floats, rows outside it 0 */
      kk.nv = (int) (r1 - r0);
      kk.rc = d->k.rc - (int) r0;
      kk.z0 = (int) k0;
      kk.zn = (int) kn;
      ret = enqueue_backproject_into (d, kk, r0, d->band[b], kk.bpitch,
          d->band[b], nv, v0 == 0 ? d->out[o] : d->tmp, err);
      if (ret != CQ_OK)
        return ret;
      if (v0 > 0) {
        const size_t count = kn * (size_t) g->nx * g->ny;

        cq::sf_add_kernel <<<(unsigned) ((count + 255) / 256 < 65535 ?
                (count + 255) / 256 : 65535), 256, 0, d->stream>>>
            (d->out[o], d->tmp, count);
        CQ_CUDA_TRY (cudaGetLastError (), err, "cannot add a view batch");
      }
      CQ_CUDA_TRY (cudaEventRecord (d->used[b], d->stream), err,
          "cannot backproject");
    }
    CQ_CUDA_TRY (cudaEventRecord (d->made[o], d->stream), err,
        "cannot backproject");
    /* double-buffered: the slab before comes down while this one is
     * made; else this one, now */
    if (pending >= 0) {
      ret = fetch_slab (d, pending, pending_k0, pending_kn, volume, err);
      if (ret != CQ_OK)
        return ret;
      pending = -1;
    }
    if (d->bp.dbl) {
      pending = o;
      pending_k0 = k0;
      pending_kn = kn;
    } else {
      ret = fetch_slab (d, o, k0, kn, volume, err);
      if (ret != CQ_OK)
        return ret;
    }
  }
  if (pending >= 0)
    return fetch_slab (d, pending, pending_k0, pending_kn, volume, err);
  return CQ_OK;
}

/* ---- the group's calls, device by device ---- */

/* The volume, pinned, for streamed devices (allocated in the first
 * device's context). */
static CqStatus
ensure_pinned_volume (CqSfCuda * cu, CqError * err)
{
  const size_t bytes = cq_sf_slice_bytes (&cu->g) * cu->g.nz;

  if (cu->volume)
    return CQ_OK;
  CQ_CUDA_ENTER (cu->dev[0]->target, err);
  if (cudaHostAlloc ((void **) &cu->volume, bytes, cudaHostAllocPortable)
      != cudaSuccess) {
    cudaGetLastError ();
    cu->volume = NULL;
    return cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "cannot allocate %zu "
        "MiB of pinned host memory for the %ux%ux%u volume to stream",
        bytes / kMiB, cu->g.nx, cu->g.ny, cu->g.nz);
  }
  return CQ_OK;
}

/* One call's work for every device: job (w) on device w, each in its own
 * context, at once on the worker pool where there are several. */
typedef struct
{
  CqSfCuda *cu;
  int what;
  unsigned first, n;
  const float *in;
  float *out;
  size_t unit;                  /* JOB_UPLOAD_SHARE: floats a unit of n */
  int into_volume;              /* and into the volume's buffer */
  unsigned iterations;
  double ms[CQ_CUDA_MAX_DEVICES];
  CqStatus ret[CQ_CUDA_MAX_DEVICES];
  CqError err[CQ_CUDA_MAX_DEVICES];
} SfJob;

enum
{
  JOB_UPLOAD_SHARE,             /* a share of a host array (first, n) */
  JOB_SET_VOLUME,
  JOB_PROJECT,
  JOB_BACKPROJECT,
  JOB_TIME_PROJECT,
  JOB_TIME_BACKPROJECT
};

/* The device's share of a call's n views from first. */
static void
share (const CqSfCuda * cu, unsigned w, unsigned first, unsigned n,
    unsigned *f, unsigned *m)
{
  const unsigned a = n * w / cu->n_dev, b = n * (w + 1) / cu->n_dev;

  *f = first + a;
  *m = b - a;
}

/* ---- several resident devices: a host array crosses PCIe once ----
 * Where the devices reach each other's memory (cu->shared_uploads), each
 * uploads its share of an array every device needs whole (the volume's
 * slices for the projector, the projections' views for the
 * backprojector), all at once on their own links; once every share is up
 * (run_all returns), each copies the others' shares from the devices
 * that uploaded them, peer to peer. The host sends the array once
 * instead of once a device. */

/* The resident buffer an array goes into: the backprojection buffer
 * stages the volume, the batch buffer the projections. */
static float *
share_buffer (SfDev * d, int volume)
{
  return volume ? d->vol : d->proj;
}

/* Device w's share of n units of `unit` floats from src. */
static CqStatus
dev_upload_share (CqSfCuda * cu, unsigned w, const float *src, size_t unit,
    unsigned n, int volume, CqError * err)
{
  SfDev *d = cu->dev[w];
  unsigned f, m;

  share (cu, w, 0, n, &f, &m);
  CQ_CUDA_ENTER (d->target, err);
  CQ_CUDA_TRY (cudaMemcpyAsync (share_buffer (d, volume) + f * unit, src +
          f * unit, m * unit * sizeof (float), cudaMemcpyHostToDevice,
          d->stream), err, volume ? "cannot upload the volume" :
      "cannot upload the projections");
  CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
      volume ? "cannot upload the volume" : "cannot upload the projections");
  return CQ_OK;
}

/* The other devices' shares into device w's buffer, on its stream (the
 * caller has entered its context). */
static CqStatus
gather_shares (CqSfCuda * cu, unsigned w, size_t unit, unsigned n,
    int volume, CqError * err)
{
  SfDev *d = cu->dev[w];

  for (unsigned v = 0; v < cu->n_dev; v++) {
    unsigned f, m;

    share (cu, v, 0, n, &f, &m);
    if (v == w || m == 0)
      continue;
    CQ_CUDA_TRY (cudaMemcpyAsync (share_buffer (d, volume) + f * unit,
            share_buffer (cu->dev[v], volume) + f * unit, m * unit *
            sizeof (float), cudaMemcpyDefault, d->stream), err,
        "cannot copy a share from another device");
  }
  return CQ_OK;
}

static CqStatus
dev_set_volume (CqSfCuda * cu, unsigned w, const float *volume,
    CqError * err)
{
  SfDev *d = cu->dev[w];
  const size_t slice = (size_t) d->g->nx * d->g->ny;
  CqStatus ret;

  CQ_CUDA_ENTER (d->target, err);
  if (!d->resident) {
    /* streamed: the next pass uploads from the pinned copy */
    d->held_first = -1;
    return CQ_OK;
  }
  /* up into the backprojection buffer, then reordered z-fastest */
  if (cu->shared_uploads) {
    ret = gather_shares (cu, w, slice, d->g->nz, 1, err);
    if (ret != CQ_OK)
      return ret;
  } else {
    CQ_CUDA_TRY (cudaMemcpyAsync (d->vol, volume, slice * d->g->nz *
            sizeof (float), cudaMemcpyHostToDevice, d->stream), err,
        "cannot upload the volume");
  }
  cq::sf_zfirst_kernel <<<dim3 ((d->g->nx + 31) / 32, (d->g->nz + 31) / 32,
          d->g->ny), dim3 (32, 8), 0, d->stream>>> (d->k, d->vol, d->volz,
      (int) d->g->nz, (int) d->g->nz);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot reorder the volume");
  CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
      "cannot upload the volume");
  return CQ_OK;
}

/* Views [first, first + n) of the whole volume to proj on the host. */
static CqStatus
dev_project (CqSfCuda * cu, SfDev * d, unsigned first, unsigned n,
    float *proj, CqError * err)
{
  const size_t pv = cq_sf_view_bytes (d->g);
  CqStatus ret;

  if (n == 0)
    return CQ_OK;
  CQ_CUDA_ENTER (d->target, err);
  if (d->resident) {
    /* in pieces: a piece comes down (the host waits for it) while the
     * next one is projected; a view's floats do not depend on its
     * launch */
    const unsigned pieces = n >= 4 * kResidentPiece ? 4 : 1;
    unsigned prev = 0, prev_n = 0;

    for (unsigned p = 0; p <= pieces; p++) {
      const unsigned a = n * p / pieces, b = n * (p + 1) / pieces;

      if (p < pieces) {
        ret = enqueue_project_into (d, first + a, b - a, d->proj +
            (size_t) a * d->g->nu * d->g->nv, err);
        if (ret != CQ_OK)
          return ret;
        CQ_CUDA_TRY (cudaEventRecord (d->made[p & 1], d->stream), err,
            "cannot download the projections");
      }
      if (p > 0) {
        CQ_CUDA_TRY (cudaStreamWaitEvent (d->down, d->made[(p - 1) & 1], 0),
            err, "cannot download the projections");
        CQ_CUDA_TRY (cudaMemcpyAsync (proj + (size_t) prev * d->g->nu *
                d->g->nv, d->proj + (size_t) prev * d->g->nu * d->g->nv,
                prev_n * pv, cudaMemcpyDeviceToHost, d->down), err,
            "cannot download the projections");
        CQ_CUDA_TRY (cudaStreamSynchronize (d->down), err,
            "cannot download the projections");
      }
      prev = a;
      prev_n = b - a;
    }
    CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
        "the projector failed");
    /* still there for cq_sf_cuda_pixels, as a kept batch */
    d->kept = d->proj;
    d->kept_n = n;
    return CQ_OK;
  }
  /* streamed: a pass a batch, each downloaded before the next */
  for (unsigned v0 = 0; v0 < n; v0 += d->pp.batch) {
    const unsigned m = n - v0 < d->pp.batch ? n - v0 : d->pp.batch;

    ret = stream_project_pass (d, cu->volume, first + v0, m, err);
    if (ret != CQ_OK)
      return ret;
    CQ_CUDA_TRY (cudaEventRecord (d->made[0], d->stream), err,
        "cannot download the projections");
    ret = download (d, proj + (size_t) v0 * d->g->nu * d->g->nv, pv,
        d->acc, pv, m, d->made[0], err);
    if (ret != CQ_OK)
      return ret;
  }
  /* the last pass's views only: nothing a caller may take as kept */
  d->kept_n = 0;
  CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
      "the projector failed");
  return CQ_OK;
}

static CqStatus
dev_backproject (CqSfCuda * cu, unsigned w, const float *proj,
    unsigned first, unsigned n, float *volume, CqError * err)
{
  SfDev *d = cu->dev[w];
  const size_t slice = (size_t) d->g->nx * d->g->ny;
  CqStatus ret;

  CQ_CUDA_ENTER (d->target, err);
  if (!d->resident) {
    ret = stream_backproject (d, proj, first, n, volume, err);
    if (ret != CQ_OK)
      return ret;
    CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
        "the backprojector failed");
    return CQ_OK;
  }
  if (cu->shared_uploads) {
    ret = gather_shares (cu, w, (size_t) d->g->nu * d->g->nv, n, 0, err);
    if (ret != CQ_OK)
      return ret;
  } else {
    CQ_CUDA_TRY (cudaMemcpyAsync (d->proj, proj, cq_sf_view_bytes (d->g) *
            n, cudaMemcpyHostToDevice, d->stream), err,
        "cannot upload the projections");
  }
  {
    /* the zone in pieces of whole 32-slice blocks: a piece comes down
     * while the next is backprojected (a slice's value does not depend
     * on the piece that holds it) */
    const unsigned zone = d->zb - d->za;
    const unsigned pieces = zone >= 4 * kResidentSlab ? 4 : 1;
    unsigned prev = 0, prev_n = 0, n_x;
    cq::SfConst kk = d->k;

    ret = set_views (d, first, n, &n_x, err);
    if (ret != CQ_OK)
      return ret;
    if (zone > 0)
      enqueue_scale (d, d->k, 0, d->proj, (int) d->g->nu, d->scaled, n);
    for (unsigned p = 0; zone > 0 && p <= pieces; p++) {
      const unsigned a = d->za + (zone * p / pieces) / 32 * 32;
      const unsigned b = p + 1 == pieces ? d->zb : d->za + (zone * (p + 1) /
          pieces) / 32 * 32;

      if (p < pieces && b > a) {
        kk.z0 = (int) a;
        kk.zn = (int) (b - a);
        ret = enqueue_back_slices (d, kk, d->scaled, n, d->vol + a * slice,
            err);
        if (ret != CQ_OK)
          return ret;
        CQ_CUDA_TRY (cudaEventRecord (d->made[p & 1], d->stream), err,
            "cannot download the volume");
      }
      if (p > 0 && prev_n > 0) {
        CQ_CUDA_TRY (cudaStreamWaitEvent (d->down, d->made[(p - 1) & 1], 0),
            err, "cannot download the volume");
        CQ_CUDA_TRY (cudaMemcpyAsync (volume + prev * slice, d->vol + prev *
                slice, sizeof (float) * slice * prev_n,
                cudaMemcpyDeviceToHost, d->down), err,
            "cannot download the volume");
        CQ_CUDA_TRY (cudaStreamSynchronize (d->down), err,
            "cannot download the volume");
      }
      prev = a;
      prev_n = p < pieces && b > a ? b - a : 0;
    }
  }
  CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
      "the backprojector failed");
  return CQ_OK;
}

/* Mean GPU time of the device's share of all views, data resident. */
static CqStatus
dev_time (CqSfCuda * cu, SfDev * d, unsigned w, int backproject,
    unsigned iterations, double *ms, CqError * err)
{
  unsigned f, m;
  float total = 0;
  CqStatus ret;

  share (cu, w, 0, d->views_max, &f, &m);
  if (backproject) {
    f = 0;
    m = d->views_max;
  }
  *ms = 0;
  if (m == 0)
    return CQ_OK;
  CQ_CUDA_ENTER (d->target, err);
  /* a warm-up, then the runs back to back (views' uploads included) */
  ret = cq_cuda_time (d->stream, iterations,[&]() {
        return backproject ? enqueue_backproject (d, f, m, err) :
            enqueue_project (d, f, m, err);
      }, &total, err);
  if (ret == CQ_OK)
    *ms = total / iterations;
  return ret;
}

static void
run_job (void *user, unsigned w)
{
  SfJob *job = (SfJob *) user;
  CqSfCuda *cu = job->cu;
  SfDev *d = cu->dev[w];
  CqError *err = &job->err[w];
  unsigned f, m;

  switch (job->what) {
    case JOB_UPLOAD_SHARE:
      job->ret[w] = dev_upload_share (cu, w, job->in, job->unit, job->n,
          job->into_volume, err);
      break;
    case JOB_SET_VOLUME:
      job->ret[w] = dev_set_volume (cu, w, job->in, err);
      break;
    case JOB_PROJECT:
      share (cu, w, job->first, job->n, &f, &m);
      job->ret[w] = dev_project (cu, d, f, m, job->out + (size_t) (f -
              job->first) * cu->g.nu * cu->g.nv, err);
      break;
    case JOB_BACKPROJECT:
      job->ret[w] = dev_backproject (cu, w, job->in, job->first, job->n,
          job->out, err);
      break;
    default:
      job->ret[w] = dev_time (cu, d, w, job->what == JOB_TIME_BACKPROJECT,
          job->iterations, &job->ms[w], err);
      break;
  }
}

static CqStatus
run_all (SfJob * job, CqError * err)
{
  CqSfCuda *cu = job->cu;

  for (unsigned w = 0; w < cu->n_dev; w++)
    job->ret[w] = CQ_OK;
  if (cu->n_dev == 1)
    run_job (job, 0);
  else
    cq_pool_run (cu->n_dev, run_job, job);
  for (unsigned w = 0; w < cu->n_dev; w++)
    if (job->ret[w] != CQ_OK) {
      if (err)
        *err = job->err[w];
      return job->ret[w];
    }
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_set_volume (CqSfCuda * cu, const float *volume, CqError * err)
{
  SfJob job;

  memset (&job, 0, sizeof (job));
  if (any_streamed (cu)) {
    CqStatus ret = ensure_pinned_volume (cu, err);

    if (ret != CQ_OK)
      return ret;
    /* kept batches in flight may still read the copy before */
    drain (cu);
    cq_copy_rows (cu->volume, cq_sf_slice_bytes (&cu->g), volume,
        cq_sf_slice_bytes (&cu->g), cq_sf_slice_bytes (&cu->g), cu->g.nz);
  }
  job.cu = cu;
  job.in = volume;
  if (cu->shared_uploads) {
    CqStatus ret;

    job.what = JOB_UPLOAD_SHARE;
    job.n = cu->g.nz;
    job.unit = (size_t) cu->g.nx * cu->g.ny;
    job.into_volume = 1;
    ret = run_all (&job, err);
    if (ret != CQ_OK)
      return ret;
  }
  job.what = JOB_SET_VOLUME;
  return run_all (&job, err);
}

/* *job: `what` on views [first, first + n) of cu, once they are checked. */
static CqStatus
views_job (CqSfCuda * cu, int what, unsigned first, unsigned n, SfJob * job,
    CqError * err)
{
  if (check_views (cu, first, n, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  memset (job, 0, sizeof (*job));
  job->cu = cu;
  job->what = what;
  job->first = first;
  job->n = n;
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_project (CqSfCuda * cu, unsigned first_view, unsigned n_views,
    float *proj, CqError * err)
{
  SfJob job;

  if (views_job (cu, JOB_PROJECT, first_view, n_views, &job, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  job.out = proj;
  for (unsigned w = 0; w < cu->n_dev; w++) {
    unsigned f, m;

    share (cu, w, first_view, n_views, &f, &m);
    cu->keep_first[w] = f - first_view;
    cu->keep_first[w + 1] = f - first_view + m;
    cu->dev[w]->kept_n = 0;
  }
  return run_all (&job, err);
}

extern "C" CqStatus
cq_sf_cuda_backproject (CqSfCuda * cu, const float *proj,
    unsigned first_view, unsigned n_views, float *volume, CqError * err)
{
  SfJob job;

  if (views_job (cu, JOB_BACKPROJECT, first_view, n_views, &job, err)
      != CQ_OK)
    return CQ_ERROR_INVALID;
  job.in = proj;
  job.out = volume;
  if (cu->shared_uploads) {
    CqStatus ret;

    job.what = JOB_UPLOAD_SHARE;
    job.unit = (size_t) cu->g.nu * cu->g.nv;
    ret = run_all (&job, err);
    if (ret != CQ_OK)
      return ret;
    job.what = JOB_BACKPROJECT;
  }
  return run_all (&job, err);
}

extern "C" CqStatus
cq_sf_cuda_time (CqSfCuda * cu, int backproject, unsigned iterations,
    double *ms, CqError * err)
{
  SfJob job;
  CqStatus ret;

  if (check_views (cu, 0, cu->g.n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  if (any_streamed (cu))
    return cq_error_set (err, CQ_ERROR_INVALID, "timing with the data on "
        "the GPU needs the volume resident on every device; this one "
        "streams it (time the host calls instead)");
  memset (&job, 0, sizeof (job));
  job.cu = cu;
  job.what = backproject ? JOB_TIME_BACKPROJECT : JOB_TIME_PROJECT;
  job.iterations = iterations;
  ret = run_all (&job, err);
  /* the devices ran at once: the slowest is the call's time */
  *ms = 0;
  for (unsigned w = 0; ret == CQ_OK && w < cu->n_dev; w++)
    if (job.ms[w] > *ms)
      *ms = job.ms[w];
  return ret;
}

/* ---- kept batches and their pixels ---- */

static unsigned
keep_capacity (const SfDev * d)
{
  return d->resident ? d->views_max : d->pp.batch;
}

extern "C" unsigned
cq_sf_cuda_keep_views (const CqSfCuda * cu)
{
  unsigned most = keep_capacity (cu->dev[0]);

  for (unsigned w = 1; w < cu->n_dev; w++)
    if (keep_capacity (cu->dev[w]) < most)
      most = keep_capacity (cu->dev[w]);
  most *= cu->n_dev;
  return most < cu->dev[0]->views_max ? most : cu->dev[0]->views_max;
}

extern "C" unsigned
cq_sf_cuda_batch_views (const CqSfCuda * cu)
{
  for (unsigned w = 0; w < cu->n_dev; w++)
    if (!cu->dev[w]->resident && cu->dev[w]->pp.band < cu->g.ny)
      return cq_sf_cuda_keep_views (cu);
  return 0;
}

extern "C" unsigned
cq_sf_cuda_n_devices (const CqSfCuda * cu)
{
  return cu->n_dev;
}

extern "C" void
cq_sf_cuda_describe (const CqSfCuda * cu, char *buf, size_t len)
{
  size_t at = 0;

  buf[0] = '\0';
  for (unsigned w = 0; w < cu->n_dev && at + 1 < len; w++) {
    const SfDev *d = cu->dev[w];
    int n;

    if (d->resident)
      n = snprintf (buf + at, len - at, "%sdevice %d: resident (%zu MiB "
          "budget)", w ? "; " : "", d->ordinal, d->budget / kMiB);
    else
      n = snprintf (buf + at, len - at, "%sdevice %d: streamed (%zu MiB "
          "budget), projector bands of %u rows of columns (stage %u "
          "slices), %u views a pass; backprojector slices %u-%u in slabs "
          "of %u, bands of %u rows, %u views a launch%s", w ? "; " : "",
          d->ordinal, d->budget / kMiB, d->pp.band, d->pp.stage,
          d->pp.batch, d->za,
          d->zb, d->bp.slab, d->bp.rows, d->bp.views,
          d->bp.dbl ? ", double-buffered" : "");
    if (n < 0)
      break;
    at += (size_t) n;
  }
  if (cu->shared_uploads && at + 1 < len)
    snprintf (buf + at, len - at, "; uploads shared, peer to peer");
}

extern "C" CqStatus
cq_sf_cuda_project_keep (CqSfCuda * cu, unsigned first_view,
    unsigned n_views, CqError * err)
{
  const unsigned most = cq_sf_cuda_keep_views (cu);

  if (check_views (cu, first_view, n_views, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  if (n_views > most)
    return cq_error_set (err, CQ_ERROR_INVALID, "%u views asked to be kept, "
        "%u possible (what a pass over the volume's slabs holds)", n_views,
        most);
  /* enqueued on every device in turn: they run at once */
  for (unsigned w = 0; w < cu->n_dev; w++) {
    SfDev *d = cu->dev[w];
    unsigned f, m;
    CqStatus ret;

    share (cu, w, first_view, n_views, &f, &m);
    cu->keep_first[w] = f - first_view;
    cu->keep_first[w + 1] = f - first_view + m;
    d->kept_n = 0;
    if (m == 0)
      continue;
    CQ_CUDA_ENTER (d->target, err);
    if (d->resident) {
      ret = enqueue_project (d, f, m, err);
      d->kept = d->proj;
      d->kept_n = m;
    } else {
      ret = stream_project_pass (d, cu->volume, f, m, err);
    }
    if (ret != CQ_OK)
      return ret;
  }
  return CQ_OK;
}

/* View `index` of the device's kept batch to pixels at dst, through the
 * noise kernel when nz asks for noise on counts, else the plain
 * conversion. */
static CqStatus
convert_pixels (SfDev * d, unsigned index, const CqSfPixels * px,
    const CqSfNoise * nz, void *dst, size_t pitch, int dst_on_device,
    CqError * err)
{
  const CqSfGeometry *g = d->g;
  const size_t row_bytes = (size_t) g->nu * px->bytes;
  unsigned char *out = (unsigned char *) dst;
  size_t out_pitch = pitch;
  const float *li;

  if (index >= d->kept_n || !d->kept || (px->bytes != 1 && px->bytes != 2)
      || pitch < row_bytes)
    return cq_error_set (err, CQ_ERROR_INVALID, "view %u, %u bytes a pixel, "
        "pitch %zu: not a kept view or a row of %u pixels", index,
        px->bytes, pitch, g->nu);
  li = d->kept + (size_t) index * g->nu * g->nv;
  CQ_CUDA_ENTER (d->target, err);
  if (!dst_on_device) {
    if (!d->pixels)
      CQ_CUDA_TRY (cudaMallocPitch ((void **) &d->pixels, &d->pixels_pitch,
              (size_t) g->nu * 2, g->nv), err,
          "cannot allocate the pixel staging");
    out = d->pixels;
    out_pitch = d->pixels_pitch;
  }
  if (nz && px->counts && cq_sf_noise_active (nz)) {
    CQ_CUDA_TRY (cq_sf_noise_cuda_launch (d->stream, li, g->nu, g->nv, px,
            nz, out, out_pitch), err, "cannot launch the noise kernel");
  } else {
    cq::sf_pixels_kernel <<<dim3 ((g->nu + 31) / 32, (g->nv + 7) / 8),
        dim3 (32, 8), 0, d->stream>>> (li, (int) g->nu, (int) g->nv, *px,
        out, out_pitch);
    CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the pixel kernel");
  }
  if (!dst_on_device)
    CQ_CUDA_TRY (cudaMemcpy2DAsync (dst, pitch, out, out_pitch, row_bytes,
            g->nv, cudaMemcpyDeviceToHost, d->stream), err,
        "cannot download the pixels");
  CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
      "the pixel conversion failed");
  return CQ_OK;
}

/* Index `index` of the group's kept batch: on the device that holds it;
 * a frame in the first device's memory made on another comes through
 * pinned host memory (a copy between the devices instead measured no
 * faster: 4,580 against 4,645 frames/s on two H200s, 512² GRAY16). */
static CqStatus
group_pixels (CqSfCuda * cu, unsigned index, const CqSfPixels * px,
    const CqSfNoise * nz, void *dst, size_t pitch, int dst_on_device,
    CqError * err)
{
  const size_t row_bytes = (size_t) cu->g.nu * px->bytes;
  unsigned w = 0;
  CqStatus ret;

  while (w + 1 < cu->n_dev && index >= cu->keep_first[w + 1])
    w++;
  if (cu->n_dev == 1 || w == 0 || !dst_on_device)
    return convert_pixels (cu->dev[w], index - cu->keep_first[w], px, nz,
        dst, pitch, dst_on_device, err);
  if (!cu->frame) {
    CQ_CUDA_ENTER (cu->dev[0]->target, err);
    CQ_CUDA_TRY (cudaHostAlloc ((void **) &cu->frame, (size_t) cu->g.nu *
            2 * cu->g.nv, cudaHostAllocPortable), err,
        "cannot allocate a pinned frame");
  }
  ret = convert_pixels (cu->dev[w], index - cu->keep_first[w], px, nz,
      cu->frame, row_bytes, 0, err);
  if (ret != CQ_OK)
    return ret;
  {
    SfDev *d = cu->dev[0];

    CQ_CUDA_ENTER (d->target, err);
    CQ_CUDA_TRY (cudaMemcpy2DAsync (dst, pitch, cu->frame, row_bytes,
            row_bytes, cu->g.nv, cudaMemcpyHostToDevice, d->stream), err,
        "cannot upload the pixels");
    CQ_CUDA_TRY (cudaStreamSynchronize (d->stream), err,
        "cannot upload the pixels");
  }
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_pixels (CqSfCuda * cu, unsigned index, const CqSfPixels * px,
    void *dst, size_t pitch, int dst_on_device, CqError * err)
{
  return group_pixels (cu, index, px, NULL, dst, pitch, dst_on_device, err);
}

/* ---- the pixels of a kept view with noise, and device-resident access
 * (cq-sfproject-device.h) for the library's own iterative
 * reconstruction ---- */

extern "C" CqStatus
cq_sf_cuda_pixels_noise (CqSfCuda * cu, unsigned index, const CqSfPixels * px,
    const CqSfNoise * nz, void *dst, size_t pitch, int dst_on_device,
    CqError * err)
{
  return group_pixels (cu, index, px, nz, dst, pitch, dst_on_device, err);
}

/* The device-resident calls: one device holding the whole problem. */
static CqStatus
check_resident (const CqSfCuda * cu, CqError * err)
{
  if (cu->n_dev != 1 || !cu->dev[0]->resident)
    return cq_error_set (err, CQ_ERROR_INVALID, "device-resident access "
        "needs one CUDA device holding the whole volume and its views; "
        "this projector has %u device(s)%s", cu->n_dev, cu->n_dev == 1 ?
        " and streams the volume" : "");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_set_volume_device (CqSfCuda * cu, const float *volume,
    CqError * err)
{
  SfDev *d = cu->dev[0];

  if (check_resident (cu, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (d->target, err);
  cq::sf_zfirst_kernel <<<dim3 ((d->g->nx + 31) / 32, (d->g->nz + 31) / 32,
          d->g->ny), dim3 (32, 8), 0, d->stream>>> (d->k, volume, d->volz,
      (int) d->g->nz, (int) d->g->nz);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot reorder the volume");
  return CQ_OK;
}

extern "C" CqStatus
cq_sf_cuda_backproject_keep (CqSfCuda * cu, unsigned first_view,
    unsigned n_views, CqError * err)
{
  if (check_views (cu, first_view, n_views, err) != CQ_OK
      || check_resident (cu, err) != CQ_OK)
    return CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->dev[0]->target, err);
  return enqueue_backproject (cu->dev[0], first_view, n_views, err);
}

extern "C" float *
cq_sf_cuda_device_projections (CqSfCuda * cu)
{
  return cu->dev[0]->proj;
}

extern "C" float *
cq_sf_cuda_device_volume (CqSfCuda * cu)
{
  return cu->dev[0]->vol;
}

extern "C" void *
cq_sf_cuda_stream (CqSfCuda * cu)
{
  return (void *) cu->dev[0]->stream;
}
