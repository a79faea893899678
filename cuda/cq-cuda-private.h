/* cudaquality compute library: CUDA error handling shared by the .cu files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_CUDA_PRIVATE_H
#define CQ_CUDA_PRIVATE_H

#include <cuda_runtime.h>

#include "cq-common.h"

/* Maps a CUDA error to a status and a message "what: error (name)"; clears
 * the runtime's last error so that the next call starts clean. */
CqStatus cq_cuda_error (CqError * err, cudaError_t e, const char *what);

/* Makes device current, or for CQ_CUDA_CURRENT_CONTEXT (-1) leaves the
 * context the caller made current (a framework's driver-API context, which
 * the runtime then uses) alone. */
static inline cudaError_t
cq_cuda_select (int device)
{
  return device < 0 ? cudaSuccess : cudaSetDevice (device);
}

#define CQ_CUDA_TRY(call, err, what)                            \
  do {                                                          \
    cudaError_t cq_e_ = (call);                                 \
    if (cq_e_ != cudaSuccess)                                   \
      return cq_cuda_error ((err), cq_e_, (what));              \
  } while (0)

#endif /* CQ_CUDA_PRIVATE_H */
