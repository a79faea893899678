/* cudaquality compute library: how the CUDA SF pair streams a volume that
 * does not fit a device (cq-sfproject-cuda.cu): which detector rows a
 * z-slab of the volume can reach, and how thick the slabs and how many
 * views a pass fit a budget of device memory. Plain C, so that the CPU
 * suite checks them (test-sfproject-cpu). Not installed: the library's
 * own.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SFPROJECT_PLAN_H
#define CQ_SFPROJECT_PLAN_H

#include "cq-sfproject.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Detector rows beyond the ones a slab's slices reach, on each side: the
 * backprojector stages two rows past a slice's last, and the kernels'
 * floats stray from these doubles by far less than a row. */
#define CQ_SF_ROW_MARGIN 4

/* Views a pass over the bands, streamed: enough that a band's upload
 * (~0.3 ms a 16 MiB row of 2048² columns at 50 GB/s) hides under its
 * projection (~16 us a 2048² row of columns and view on the H100). */
#define CQ_SF_STREAM_VIEWS 128

/* Slices a piece of the whole volume's upload when one band holds it. */
#define CQ_SF_STAGE_SLICES 64

/* Zero floats past a row of the backprojector's scaled projections
 * (cq::kSfBackPad). */
#define CQ_SF_BACK_PAD 4

/* A streamed projector: bands of `band` rows of columns (y; ny: the whole
 * volume, held between passes), uploaded `stage` slices at a time (a
 * band's nz at once), `batch` views a pass over the bands. Bands, not
 * z-slabs: a band's launch walks only its own columns, so the bands
 * together do the unsplit work once, where every z-slab walked all the
 * columns of the rays it reached (1024³ capped at 2 GiB: 2.81× the
 * uncapped time with six z-slabs). */
typedef struct
{
  unsigned band, stage, batch;
} CqSfProjPlan;

/* A streamed backprojector: output z-slabs of `slab` slices, `views`
 * views a launch (all of a call's when it is views_max: as the resident
 * one), bands of at most `rows` detector rows, `dbl`: bands and slabs
 * double-buffered (uploads and downloads overlap the kernels). */
typedef struct
{
  unsigned slab, views, rows;
  int dbl;
} CqSfBackPlan;

/* Bytes of a slice of the volume and of a view, in floats. */
static inline size_t
cq_sf_slice_bytes (const CqSfGeometry * g)
{
  return (size_t) g->nx * g->ny * sizeof (float);
}

static inline size_t
cq_sf_view_bytes (const CqSfGeometry * g)
{
  return (size_t) g->nu * g->nv * sizeof (float);
}

/* The least and the most magnification D / (R − q) of the volume: at the
 * voxel corners farthest from and nearest to the source. */
void cq_sf_magnifications (const CqSfGeometry * g, double *least,
    double *most);

/* The detector rows [*r0, *r1) that slices [k0, k1) can reach in any view
 * whose source z (cq_sf_source_z: a helical orbit's) lies in [zs_lo,
 * zs_hi] (t = m·(z − zs) on the detector for a magnification m of the
 * volume's), CQ_SF_ROW_MARGIN more on each side, within the detector
 * (r0 == r1: none). */
void cq_sf_slab_rows (const CqSfGeometry * g, unsigned k0, unsigned k1,
    double zs_lo, double zs_hi, unsigned *r0, unsigned *r1);

/* The most rows a band has for slabs of `slab` slices from za to zb, for
 * any call's views: nv on a helical orbit (a call's views may be anywhere
 * along the helix). */
unsigned cq_sf_max_band_rows (const CqSfGeometry * g, unsigned za,
    unsigned zb, unsigned slab);

/* The backprojector's z-zone of device w of n: slices [*za, *zb), at
 * multiples of 32 (the kernel's block) where there are at least 64 slices
 * a device, else plain shares; the last zone ends at nz. */
void cq_sf_zone (unsigned nz, unsigned w, unsigned n, unsigned *za,
    unsigned *zb);

/* Device bytes a resident device allocates (the volume twice, views_max
 * views twice, the second with padded rows) and a streamed one besides
 * its plans (the views' arrays, the backprojector's column groups, a
 * pitched frame of pixels). */
size_t cq_sf_resident_bytes (const CqSfGeometry * g, unsigned views_max);
size_t cq_sf_stream_fixed_bytes (const CqSfGeometry * g);

/* The projector's plan for `avail` bytes: the whole volume held with as
 * many views as fit (at least 8: nothing is uploaded again), else
 * CQ_SF_STREAM_VIEWS views a pass (or what half of avail holds) and bands
 * as wide as the rest allows, stage and band alike (the next band's
 * upload overlaps the projection), evened out over ny. 0 if not even a
 * view and two rows of columns fit. */
int cq_sf_plan_project (const CqSfGeometry * g, size_t avail,
    unsigned views_max, CqSfProjPlan * pp);
size_t cq_sf_plan_project_bytes (const CqSfGeometry * g,
    const CqSfProjPlan * pp);

/* The backprojector's plan for the zone of slices [za, zb) in `avail`
 * bytes: one slab and all views if they fit (single buffers: nothing to
 * overlap), else the thickest slabs for which all views' bands fit
 * double-buffered, else view batches (their shares summed in float). 0 if
 * nothing fits. */
int cq_sf_plan_backproject (const CqSfGeometry * g, size_t avail,
    unsigned views_max, unsigned za, unsigned zb, CqSfBackPlan * bp);
size_t cq_sf_plan_back_bytes (const CqSfGeometry * g, unsigned views_max,
    const CqSfBackPlan * bp);

#ifdef __cplusplus
}
#endif
#endif /* CQ_SFPROJECT_PLAN_H */
