/* cudaquality compute library: types shared by every measure and backend.
 *
 * Plain C, no GStreamer and no CUDA types: the elements include this, the
 * CUDA implementation lives behind it in .cu files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_COMMON_H
#define CQ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  CQ_OK = 0,
  CQ_ERROR_INVALID,             /* bad arguments: sizes, ROI, layout */
  CQ_ERROR_NO_CUDA,             /* built without CUDA, or no usable device */
  CQ_ERROR_OUT_OF_MEMORY,       /* host or device allocation failed */
  CQ_ERROR_CUDA                 /* any other CUDA runtime error */
} CqStatus;

/* Filled on failure: a status and a sentence naming what went wrong and the
 * values involved, ready for GST_ELEMENT_ERROR. */
typedef struct
{
  CqStatus status;
  char message[256];
} CqError;

/* How the measured values are laid out in memory. The measures see one
 * integer value per pixel:
 *  GRAY8:   one byte per pixel (8-bit gray or the Y plane of YUV);
 *  GRAY16:  one little-endian 16-bit word per pixel, value = (word >> shift)
 *           masked to depth bits (P010 keeps 10 bits in the high bits: shift 6);
 *  RGB8:    packed 8-bit RGB with pixel_stride bytes per pixel and the R, G, B
 *           bytes at the given offsets; value = round (0.299 R + 0.587 G +
 *           0.114 B), computed exactly as (299 R + 587 G + 114 B + 500) / 1000. */
typedef enum
{
  CQ_LAYOUT_GRAY8,
  CQ_LAYOUT_GRAY16,
  CQ_LAYOUT_RGB8
} CqLayoutKind;

typedef struct
{
  CqLayoutKind kind;
  unsigned depth;               /* bits of a measured value: 8, 10, 12 or 16 */
  unsigned shift;               /* GRAY16 only */
  unsigned pixel_stride;        /* RGB8 only: 3 or 4 */
  unsigned r_offset, g_offset, b_offset;        /* RGB8 only */
} CqLayout;

/* Bytes of one pixel of the stored (not converted) data. */
unsigned cq_layout_bytes_per_pixel (const CqLayout * layout);

/* Sets err (if not NULL) to status and a printf-formatted message; returns
 * status so that callers can `return cq_error_set (...)`. */
CqStatus cq_error_set (CqError * err, CqStatus status, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

/* For every `device` argument of the CUDA backends: no cudaSetDevice, use
 * the context current on the calling thread (one a framework such as
 * GStreamer's CUDA library created and pushed). Every later call on that
 * object must run with the same context current. */
#define CQ_CUDA_CURRENT_CONTEXT (-1)

/* Where a CUDA object lives, given at its creation: `device` (selected
 * around every call), or CQ_CUDA_CURRENT_CONTEXT with hooks: push makes
 * the framework's context current on the calling thread (nonzero on
 * success) and pop releases it, around every call of the object, its
 * creation and freeing included. Without hooks the caller keeps the
 * context current. */
typedef struct
{
  int device;
  int (*push) (void *user);
  void (*pop) (void *user);
  void *user;
} CqCudaTarget;

#define CQ_CUDA_TARGET_DEVICE(device) { (device), NULL, NULL, NULL }

/* A blocking measure is a submit and a collect: the status of submit, or
 * when it succeeded that of collect. For the measure functions' bodies. */
#define CQ_RETURN_SUBMIT_COLLECT(submit, collect)               \
  do {                                                          \
    CqStatus cq_submitted_ = (submit);                          \
    return cq_submitted_ != CQ_OK ? cq_submitted_ : (collect);  \
  } while (0)

/* CUDA devices usable by this process; 0 where the library was built without
 * CUDA, where no driver is loaded or no device is present (err says which). */
int cq_cuda_device_count (CqError * err);

/* The most devices one object spreads its work over. */
#define CQ_CUDA_MAX_DEVICES 16

/* A list of CUDA devices: "" (or NULL, or blanks) gives *n_ids = 0 (the
 * caller's default device); "all" the `count` devices there are (none:
 * CQ_ERROR_NO_CUDA); else device numbers separated by commas, blanks
 * allowed ("0,1", " 2 , 0"), each below `count` (else CQ_ERROR_NO_CUDA
 * naming the number and how many devices there are), at most
 * CQ_CUDA_MAX_DEVICES of them; a number may come twice (two workers on
 * one device, for tests). Anything else is CQ_ERROR_INVALID naming the
 * item. Pure C: no device is touched (count comes from the caller). */
CqStatus cq_cuda_parse_devices (const char *list, int count, int *ids,
    unsigned *n_ids, CqError * err);

/* Whether CUDA device `device` can be used: its context created (which a
 * prohibited or exclusive-process device refuses). CQ_ERROR_NO_CUDA with
 * the device named otherwise. Makes it the calling thread's device. */
CqStatus cq_cuda_device_check (int device, CqError * err);

/* Whether ptr lies in page-locked host memory registered with CUDA (which
 * the GPU reads directly); 0 for pageable memory or without CUDA. */
int cq_cuda_is_pinned (const void *ptr);

/* The device's name and compute capability, e.g. "NVIDIA H100 80GB HBM3 (sm_90)". */
CqStatus cq_cuda_device_describe (int device, char *buf, size_t len,
    CqError * err);

#ifdef __cplusplus
}
#endif
#endif /* CQ_COMMON_H */
