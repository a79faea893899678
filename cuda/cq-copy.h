/* cudaquality compute library: copying rows of host memory on a few
 * helper threads (staging pageable frames into pinned memory before
 * upload).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_COPY_H
#define CQ_COPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* Copies rows rows of row_bytes bytes from src (src_stride bytes apart) to
 * dst (dst_stride apart). Large copies (256 KiB and more) are split into
 * up to four parts run on the copy helpers (cq-copy.c says why not on the
 * worker pool), as one core's memcpy is well below what memory and PCIe
 * sustain. */
void cq_copy_rows (void *dst, size_t dst_stride, const void *src,
    size_t src_stride, size_t row_bytes, size_t rows);

/* Threads a large copy uses, the caller included (1 without helpers). */
unsigned cq_copy_threads (void);

#ifdef __cplusplus
}
#endif
#endif /* CQ_COPY_H */
