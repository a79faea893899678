/* cudaquality compute library: device-resident access to a CqSfCuda, for
 * the library's own CUDA code (SIRT in cq-sirt-cuda.cu). Pointers are
 * device memory of the projector's device; all work goes on the
 * projector's stream, in order, and nothing here waits for it. They need
 * a projector on one device that holds the whole problem (not streamed):
 * the calls that take the projector are CQ_ERROR_INVALID otherwise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SFPROJECT_DEVICE_H
#define CQ_SFPROJECT_DEVICE_H

#include "cq-sfproject.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The volume to project from device memory (nx·ny·nz floats, x fastest):
 * reordered z-fastest for the projector on the stream. */
CqStatus cq_sf_cuda_set_volume_device (CqSfCuda * cuda, const float *volume,
    CqError * err);
/* Enqueues volume = Aᵀ proj for views [first_view, first_view + n_views),
 * both on the device (cq_sf_cuda_device_projections, view i of the batch
 * at i·nu·nv; cq_sf_cuda_device_volume). */
CqStatus cq_sf_cuda_backproject_keep (CqSfCuda * cuda, unsigned first_view,
    unsigned n_views, CqError * err);
/* What cq_sf_cuda_project_keep writes and cq_sf_cuda_backproject_keep
 * reads: n_views·nu·nv floats. */
float *cq_sf_cuda_device_projections (CqSfCuda * cuda);
/* What cq_sf_cuda_backproject_keep writes: nx·ny·nz floats. */
float *cq_sf_cuda_device_volume (CqSfCuda * cuda);
/* The cudaStream_t every call above enqueues on. */
void *cq_sf_cuda_stream (CqSfCuda * cuda);

#ifdef __cplusplus
}
#endif
#endif /* CQ_SFPROJECT_DEVICE_H */
