/* cudaquality compute library: the device noise's launcher, for the
 * library's other .cu files (CUDA types: not for the elements).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SFNOISE_CUDA_H
#define CQ_SFNOISE_CUDA_H

#include <cuda_runtime.h>

#include "cq-sfnoise.h"

/* Enqueues on stream the conversion of one view's line integrals li
 * (device, nu·nv floats) into noisy counts pixels at dst (device, pitch
 * bytes a row). */
cudaError_t cq_sf_noise_cuda_launch (cudaStream_t stream, const float *li,
    unsigned nu, unsigned nv, const CqSfPixels * px, const CqSfNoise * nz,
    unsigned char *dst, size_t pitch);

#endif /* CQ_SFNOISE_CUDA_H */
