/* cudaquality compute library: device memory helpers for tests and
 * benchmarks (the elements do not need them). Plain C API.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_CUDA_H
#define CQ_CUDA_H

#include "cq-common.h"

#ifdef __cplusplus
extern "C" {
#endif

void *cq_cuda_malloc (int device, size_t bytes, CqError * err);
void cq_cuda_free (int device, void *dev_ptr);
CqStatus cq_cuda_upload (int device, void *dev_dst, const void *src,
    size_t bytes, CqError * err);
/* Device memory to the host, once the device's work is done. */
CqStatus cq_cuda_download (int device, void *dst, const void *dev_src,
    size_t bytes, CqError * err);
/* Page-locked host memory, which the GPU reads at full PCIe speed. */
void *cq_cuda_host_alloc (size_t bytes, CqError * err);
void cq_cuda_host_free (void *ptr);
/* Host-to-device bandwidth in GB/s (1e9 bytes/s) from pageable or pinned
 * memory, best of several plain cudaMemcpy of `bytes`. */
CqStatus cq_cuda_h2d_bandwidth (int device, size_t bytes, int pinned,
    double *gbps, CqError * err);

#ifdef __cplusplus
}
#endif
#endif /* CQ_CUDA_H */
