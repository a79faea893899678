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

#define CQ_CUDA_TRY(call, err, what)                            \
  do {                                                          \
    cudaError_t cq_e_ = (call);                                 \
    if (cq_e_ != cudaSuccess)                                   \
      return cq_cuda_error ((err), cq_e_, (what));              \
  } while (0)

#endif /* CQ_CUDA_PRIVATE_H */
