/* cudaquality compute library: the CUDA entry points of a build without
 * CUDA. They fail cleanly, so the CPU backend is used. (The entry points
 * built on these, such as the measure and device-number forms, are in the
 * measures' own files.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-align.h"
#include "cq-cuda.h"
#include "cq-frames.h"
#include "cq-sharpness.h"
#include "cq-ssim.h"
#include "cq-sfproject.h"
#include "cq-sfproject-device.h"
#include "cq-sfnoise.h"
#include "cq-sirt.h"

#define NOT_BUILT "this build of cudaquality has no CUDA support"

int
cq_cuda_device_count (CqError * err)
{
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return 0;
}

CqStatus
cq_cuda_device_check (int device, CqError * err)
{
  return cq_error_set (err, CQ_ERROR_NO_CUDA, "CUDA device %d cannot be "
      "used: %s", device, NOT_BUILT);
}

CqStatus
cq_cuda_device_describe (int device, char *buf, size_t len, CqError * err)
{
  (void) device;
  (void) buf;
  (void) len;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

void *
cq_cuda_malloc (int device, size_t bytes, CqError * err)
{
  (void) device;
  (void) bytes;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}

void
cq_cuda_free (int device, void *dev_ptr)
{
  (void) device;
  (void) dev_ptr;
}

CqStatus
cq_cuda_upload (int device, void *dev_dst, const void *src, size_t bytes,
    CqError * err)
{
  (void) device;
  (void) dev_dst;
  (void) src;
  (void) bytes;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_cuda_download (int device, void *dst, const void *dev_src, size_t bytes,
    CqError * err)
{
  (void) device;
  (void) dst;
  (void) dev_src;
  (void) bytes;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

int
cq_cuda_is_pinned (const void *ptr)
{
  (void) ptr;
  return 0;
}

void *
cq_cuda_host_alloc (size_t bytes, CqError * err)
{
  (void) bytes;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}

void
cq_cuda_host_free (void *ptr)
{
  (void) ptr;
}

CqStatus
cq_cuda_h2d_bandwidth (int device, size_t bytes, int pinned, double *gbps,
    CqError * err)
{
  (void) device;
  (void) bytes;
  (void) pinned;
  (void) gbps;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqSharpnessCuda *
cq_sharpness_cuda_new_for (const CqCudaTarget * target,
    const CqLayout * layout, unsigned width, unsigned height,
    unsigned metrics, CqError * err)
{
  (void) target;
  (void) layout;
  (void) width;
  (void) height;
  (void) metrics;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}



void
cq_sharpness_cuda_free (CqSharpnessCuda * cuda)
{
  (void) cuda;
}

CqStatus
cq_sharpness_cuda_time_device (CqSharpnessCuda * cuda, const void *dev_data,
    size_t pitch, unsigned iterations, double *us, CqError * err)
{
  (void) cuda;
  (void) dev_data;
  (void) pitch;
  (void) iterations;
  (void) us;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqSsimCuda *
cq_ssim_cuda_new_for (const CqCudaTarget * target, CqSsimWindow window,
    const CqSsimPlane * planes, unsigned n_planes, CqError * err)
{
  (void) target;
  (void) window;
  (void) planes;
  (void) n_planes;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}



CqStatus
cq_ssim_cuda_set_msssim (CqSsimCuda * cuda, int enable, CqError * err)
{
  (void) cuda;
  (void) enable;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

void
cq_ssim_cuda_free (CqSsimCuda * cuda)
{
  (void) cuda;
}

CqStatus
cq_ssim_cuda_time_device (CqSsimCuda * cuda, const void *const *ref,
    const size_t *ref_pitches, const void *const *dist,
    const size_t *dist_pitches, unsigned iterations, double *us, CqError * err)
{
  (void) cuda;
  (void) ref;
  (void) ref_pitches;
  (void) dist;
  (void) dist_pitches;
  (void) iterations;
  (void) us;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_ssim_cuda_set_tile_rows (CqSsimCuda * cuda, unsigned rows, CqError * err)
{
  (void) cuda;
  (void) rows;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sharpness_cuda_set_walk_rows (CqSharpnessCuda * cuda, unsigned rows,
    CqError * err)
{
  (void) cuda;
  (void) rows;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sharpness_cuda_set_thread_pixels (CqSharpnessCuda * cuda,
    unsigned pixels, CqError * err)
{
  (void) cuda;
  (void) pixels;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

unsigned
cq_sharpness_cuda_walk_rows_max (const CqSharpnessCuda * cuda)
{
  (void) cuda;
  return 0;
}

CqSfCuda *
cq_sf_cuda_new_for (const CqCudaTarget * target, const CqSfGeometry * g,
    CqError * err)
{
  (void) target;
  (void) g;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}

CqSfCuda *
cq_sf_cuda_new_multi (const CqCudaTarget * targets, unsigned n_targets,
    const CqSfGeometry * g, const CqSfCudaOptions * options, CqError * err)
{
  (void) targets;
  (void) n_targets;
  (void) g;
  (void) options;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}

unsigned
cq_sf_cuda_n_devices (const CqSfCuda * cuda)
{
  (void) cuda;
  return 0;
}

void
cq_sf_cuda_describe (const CqSfCuda * cuda, char *buf, size_t len)
{
  (void) cuda;
  if (len > 0)
    buf[0] = '\0';
}

unsigned
cq_sf_cuda_keep_views (const CqSfCuda * cuda)
{
  (void) cuda;
  return 0;
}

unsigned
cq_sf_cuda_batch_views (const CqSfCuda * cuda)
{
  (void) cuda;
  return 0;
}

CqStatus
cq_sf_cuda_set_volume (CqSfCuda * cuda, const float *volume, CqError * err)
{
  (void) cuda;
  (void) volume;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sf_cuda_project (CqSfCuda * cuda, unsigned first_view, unsigned n_views,
    float *proj, CqError * err)
{
  (void) cuda;
  (void) first_view;
  (void) n_views;
  (void) proj;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sf_cuda_backproject (CqSfCuda * cuda, const float *proj,
    unsigned first_view, unsigned n_views, float *volume, CqError * err)
{
  (void) cuda;
  (void) proj;
  (void) first_view;
  (void) n_views;
  (void) volume;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sf_cuda_time (CqSfCuda * cuda, int backproject, unsigned iterations,
    double *ms, CqError * err)
{
  (void) cuda;
  (void) backproject;
  (void) iterations;
  (void) ms;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

void
cq_sf_cuda_free (CqSfCuda * cuda)
{
  (void) cuda;
}

CqStatus
cq_sharpness_cuda_submit_host (CqSharpnessCuda * cuda, const void *data,
    size_t stride, CqError * err)
{
  (void) cuda;
  (void) data;
  (void) stride;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sharpness_cuda_submit_device (CqSharpnessCuda * cuda,
    const void *dev_data, size_t pitch, CqError * err)
{
  (void) cuda;
  (void) dev_data;
  (void) pitch;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sharpness_cuda_collect (CqSharpnessCuda * cuda, double *scores,
    CqError * err)
{
  (void) cuda;
  (void) scores;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

unsigned
cq_sharpness_cuda_pending (const CqSharpnessCuda * cuda)
{
  (void) cuda;
  return 0;
}

CqStatus
cq_ssim_cuda_submit_host (CqSsimCuda * cuda, const void *const *ref,
    const size_t *ref_strides, const void *const *dist,
    const size_t *dist_strides, CqError * err)
{
  (void) cuda;
  (void) ref;
  (void) ref_strides;
  (void) dist;
  (void) dist_strides;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_ssim_cuda_after_upload (CqSsimCuda * cuda, CqFramesCuda * frames,
    unsigned frame, CqError * err)
{
  (void) cuda;
  (void) frames;
  (void) frame;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_ssim_cuda_submit_device (CqSsimCuda * cuda, const void *const *ref,
    const size_t *ref_pitches, const void *const *dist,
    const size_t *dist_pitches, CqError * err)
{
  (void) cuda;
  (void) ref;
  (void) ref_pitches;
  (void) dist;
  (void) dist_pitches;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_ssim_cuda_collect (CqSsimCuda * cuda, CqSsimPlaneSums * sums, CqError * err)
{
  (void) cuda;
  (void) sums;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

unsigned
cq_ssim_cuda_pending (const CqSsimCuda * cuda)
{
  (void) cuda;
  return 0;
}

CqStatus
cq_sf_cuda_project_keep (CqSfCuda * cuda, unsigned first_view,
    unsigned n_views, CqError * err)
{
  (void) cuda;
  (void) first_view;
  (void) n_views;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sf_cuda_pixels (CqSfCuda * cuda, unsigned index, const CqSfPixels * px,
    void *dst, size_t pitch, int dst_on_device, CqError * err)
{
  (void) cuda;
  (void) index;
  (void) px;
  (void) dst;
  (void) pitch;
  (void) dst_on_device;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

/* ---- device noise (cq-sfnoise.h) ---- */

CqStatus
cq_sf_cuda_pixels_noise (CqSfCuda * cuda, unsigned index,
    const CqSfPixels * px, const CqSfNoise * nz, void *dst, size_t pitch,
    int dst_on_device, CqError * err)
{
  (void) cuda;
  (void) index;
  (void) px;
  (void) nz;
  (void) dst;
  (void) pitch;
  (void) dst_on_device;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sf_noise_cuda_pixels_host (int device, const float *li, unsigned nu,
    unsigned nv, const CqSfPixels * px, const CqSfNoise * nz, void *dst,
    size_t pitch, CqError * err)
{
  (void) device;
  (void) li;
  (void) nu;
  (void) nv;
  (void) px;
  (void) nz;
  (void) dst;
  (void) pitch;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sf_noise_cuda_counts (int device, const CqSfNoise * nz,
    uint32_t first_cell, const double *lambda, unsigned n, double *out,
    CqError * err)
{
  (void) device;
  (void) nz;
  (void) first_cell;
  (void) lambda;
  (void) n;
  (void) out;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_philox_cuda_curand (int device, const uint32_t * ctr,
    const uint32_t * key, unsigned n, uint32_t * out, CqError * err)
{
  (void) device;
  (void) ctr;
  (void) key;
  (void) n;
  (void) out;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

/* ---- SIRT (cq-sirt.h) ---- */

CqSirtCuda *
cq_sirt_cuda_new_for (const CqCudaTarget * target, const CqSfGeometry * g,
    const float *proj, const CqSirtParams * p, CqError * err)
{
  (void) target;
  (void) g;
  (void) proj;
  (void) p;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}

CqStatus
cq_sirt_cuda_iterate (CqSirtCuda * s, unsigned iterations, CqError * err)
{
  (void) s;
  (void) iterations;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sirt_cuda_volume (CqSirtCuda * s, float *volume, CqError * err)
{
  (void) s;
  (void) volume;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sirt_cuda_time (CqSirtCuda * s, unsigned iterations, double *setup_ms,
    double *ms, CqError * err)
{
  (void) s;
  (void) iterations;
  (void) setup_ms;
  (void) ms;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

void
cq_sirt_cuda_free (CqSirtCuda * s)
{
  (void) s;
}

/* ---- device-resident access (cq-sfproject-device.h) ---- */

CqStatus
cq_sf_cuda_set_volume_device (CqSfCuda * cuda, const float *volume,
    CqError * err)
{
  (void) cuda;
  (void) volume;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_sf_cuda_backproject_keep (CqSfCuda * cuda, unsigned first_view,
    unsigned n_views, CqError * err)
{
  (void) cuda;
  (void) first_view;
  (void) n_views;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

float *
cq_sf_cuda_device_projections (CqSfCuda * cuda)
{
  (void) cuda;
  return NULL;
}

float *
cq_sf_cuda_device_volume (CqSfCuda * cuda)
{
  (void) cuda;
  return NULL;
}

void *
cq_sf_cuda_stream (CqSfCuda * cuda)
{
  (void) cuda;
  return NULL;
}

CqAlignCuda *
cq_align_cuda_new_for (const CqCudaTarget * target,
    const CqAlignPlane * plane, unsigned slots, CqError * err)
{
  (void) target;
  (void) plane;
  (void) slots;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}

CqStatus
cq_align_cuda_thumbnail_device (CqAlignCuda * cuda, unsigned slot,
    const void *data, size_t pitch, CqError * err)
{
  (void) cuda;
  (void) slot;
  (void) data;
  (void) pitch;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_align_cuda_thumbnail_frame (CqAlignCuda * cuda, unsigned slot,
    CqFramesCuda * frames, unsigned frame, unsigned plane, size_t offset,
    CqError * err)
{
  (void) cuda;
  (void) slot;
  (void) frames;
  (void) frame;
  (void) plane;
  (void) offset;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_align_cuda_thumbnail_host (CqAlignCuda * cuda, unsigned slot,
    const void *data, size_t stride, CqError * err)
{
  (void) cuda;
  (void) slot;
  (void) data;
  (void) stride;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_align_cuda_distances (CqAlignCuda * cuda, unsigned probe,
    const unsigned *slots, unsigned n, uint64_t * distances, CqError * err)
{
  (void) cuda;
  (void) probe;
  (void) slots;
  (void) n;
  (void) distances;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_align_cuda_distances_launch (CqAlignCuda * cuda, unsigned probe,
    const unsigned *slots, unsigned n, CqError * err)
{
  (void) cuda;
  (void) probe;
  (void) slots;
  (void) n;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_align_cuda_distances_collect (CqAlignCuda * cuda, uint64_t * distances,
    CqError * err)
{
  (void) cuda;
  (void) distances;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

CqStatus
cq_align_cuda_download (CqAlignCuda * cuda, unsigned slot, uint32_t * thumb,
    CqError * err)
{
  (void) cuda;
  (void) slot;
  (void) thumb;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

void
cq_align_cuda_free (CqAlignCuda * cuda)
{
  (void) cuda;
}

/* No object is ever made, so the others are never called with one. */
CqFramesCuda *
cq_frames_cuda_new_for (const CqCudaTarget * target,
    const CqFramesShape * shape, unsigned max_frames, CqError * err)
{
  (void) target;
  (void) shape;
  (void) max_frames;
  cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
  return NULL;
}

CqFramesCuda *
cq_frames_cuda_ref (CqFramesCuda * frames)
{
  return frames;
}

void
cq_frames_cuda_unref (CqFramesCuda * frames)
{
  (void) frames;
}

CqStatus
cq_frames_cuda_upload (CqFramesCuda * frames, const void *const *src,
    const size_t * strides, unsigned *frame, CqError * err)
{
  (void) frames;
  (void) src;
  (void) strides;
  (void) frame;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

void
cq_frames_cuda_plane (const CqFramesCuda * frames, unsigned frame,
    unsigned plane, void **data, size_t * pitch)
{
  (void) frames;
  (void) frame;
  (void) plane;
  *data = NULL;
  *pitch = 0;
}

CqStatus
cq_frames_cuda_wait (CqFramesCuda * frames, unsigned frame, CqError * err)
{
  (void) frames;
  (void) frame;
  return cq_error_set (err, CQ_ERROR_NO_CUDA, NOT_BUILT);
}

void
cq_frames_cuda_release (CqFramesCuda * frames, unsigned frame)
{
  (void) frames;
  (void) frame;
}
