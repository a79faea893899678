/* cudaquality compute library: what the .cu files share: CUDA errors,
 * entering an object's context, the ring of frames in flight, timing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_CUDA_PRIVATE_H
#define CQ_CUDA_PRIVATE_H

#include <cuda_runtime.h>
#include <stdlib.h>

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

/* An attribute of the current context's device (value left as it was
 * where the query fails). */
static inline cudaError_t
cq_cuda_current_attribute (cudaDeviceAttr attr, int *value)
{
  int device = 0;
  cudaError_t e = cudaGetDevice (&device);

  return e == cudaSuccess ? cudaDeviceGetAttribute (value, attr, device) : e;
}

/* The SMs of the current context's device (for grids sized to what the
 * device holds at once). */
static inline cudaError_t
cq_cuda_current_sms (int *sms)
{
  return cq_cuda_current_attribute (cudaDevAttrMultiProcessorCount, sms);
}

/* The compute capability's major number of the current context's device
 * (0 where the query fails). */
static inline cudaError_t
cq_cuda_current_major (int *major)
{
  *major = 0;
  return cq_cuda_current_attribute (cudaDevAttrComputeCapabilityMajor,
      major);
}

/* Whether frames' kernels may overlap on the current context's device:
 * programmatic dependent launch, compute capability 9.0 and later, unless
 * CQ_CUDA_OVERLAP=0 in the environment. */
static inline cudaError_t
cq_cuda_current_overlap (bool *overlap)
{
  const char *env = getenv ("CQ_CUDA_OVERLAP");
  int major = 0;
  cudaError_t e = cq_cuda_current_major (&major);

  *overlap = e == cudaSuccess && major >= 9 && !(env && env[0] == '0');
  return e;
}

/* Launches kernel; with overlap, as a programmatic dependent launch: its
 * blocks may start while the kernel before it in the stream finishes
 * (once that one's blocks have all called cq::let_next_frame_start), and
 * must call cq::wait_for_previous_frame before they touch anything that
 * kernel reads or writes. Only that wait makes the earlier work's writes
 * visible, so launch with overlap only where what comes before it in the
 * stream is a kernel whose output this one does not read (the previous
 * frame's) or a wait on another stream's event. A copy in the same stream
 * may run as a kernel of the driver's, so the SSIM kernels do not overlap
 * after their misaligned-plane copy. */
template < typename... Params, typename... Args > static inline cudaError_t
cq_cuda_launch (void (*kernel) (Params...), dim3 grid, dim3 block,
    cudaStream_t stream, bool overlap, Args &&... args)
{
  cudaLaunchConfig_t config = { };
  cudaLaunchAttribute attr[1];

  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  if (overlap) {
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attr;
    config.numAttrs = 1;
  }
  return cudaLaunchKernelEx (&config, kernel, static_cast < Args && >(args)...);
}

#define CQ_CUDA_TRY(call, err, what)                            \
  do {                                                          \
    cudaError_t cq_e_ = (call);                                 \
    if (cq_e_ != cudaSuccess)                                   \
      return cq_cuda_error ((err), cq_e_, (what));              \
  } while (0)

/* ---- entering an object's context ----
 * Every entry point of a CUDA object enters its CqCudaTarget first: the
 * device selected, or the framework's context pushed (and popped again on
 * every way out of the entry point). */
class CqCudaScope
{
public:
  explicit CqCudaScope (const CqCudaTarget & target)
  : target_ (target), pushed_ (false)
  {
  }
  ~CqCudaScope ()
  {
    if (pushed_)
      target_.pop (target_.user);
  }
  cudaError_t enter ()
  {
    if (!target_.push)
      return cq_cuda_select (target_.device);
    if (!target_.push (target_.user))
      return cudaErrorDeviceUninitialized;
    pushed_ = true;
    return cudaSuccess;
  }
private:
  const CqCudaTarget target_;
  bool pushed_;
};

/* For an entry point returning CqStatus: enters target until it returns. */
#define CQ_CUDA_ENTER(target, err)                              \
  CqCudaScope cq_scope_ (target);                               \
  CQ_CUDA_TRY (cq_scope_.enter (), (err), "cannot select the device")

/* ---- an object's life ----
 * Each CUDA object is a struct with a CqCudaTarget `target` and a
 * cudaStream_t `stream`. */

/* A zeroed T for target; NULL (err set) without host memory. */
template < typename T > static T *
cq_cuda_object_new (const CqCudaTarget * target, CqError * err)
{
  T *cu = (T *) calloc (1, sizeof (T));

  if (!cu) {
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory");
    return NULL;
  }
  cu->target = *target;
  return cu;
}

/* Frees cu: where its context can be entered, waits for its stream, runs
 * release () for the rest of its device resources and destroys the stream;
 * then the struct. */
template < typename T, typename F > static void
cq_cuda_object_free (T * cu, F release)
{
  if (!cu)
    return;
  {
    CqCudaScope scope (cu->target);

    if (scope.enter () == cudaSuccess) {
      if (cu->stream)
        cudaStreamSynchronize (cu->stream);
      release ();
      if (cu->stream)
        cudaStreamDestroy (cu->stream);
    }
  }
  cudaGetLastError ();
  free (cu);
}

/* cq_cuda_error with what the object was for appended: "... (format)". */
CqStatus cq_cuda_error_for (CqError * err, cudaError_t e, const char *what,
    const char *format, ...) __attribute__ ((format (printf, 4, 5)));

/* Whether the context of target (entered by the caller) reads device
 * peer's memory directly: peer access enabled once a context and peer for
 * the process (asking again is an API error), 1 for the same device. A
 * copy between contexts without it is staged through host memory. */
int cq_cuda_reach_peer (const CqCudaTarget * target, int device, int peer);

/* The event of a device copy's upload (cq-frames.h), for the readers'
 * streams to wait on. */
struct CqFramesCuda;
cudaEvent_t cq_frames_cuda_event (const struct CqFramesCuda *frames,
    unsigned frame);

/* ---- frames in flight ----
 * Frames (or pairs) between submit and collect, CQ_SLOTS at most: a slot
 * has its own device and pinned buffers in the object; its results are on
 * the host once done[slot] has fired. Submit fills slot `next`, collect
 * takes the oldest. */
#define CQ_SLOTS 2

typedef struct
{
  cudaEvent_t done[CQ_SLOTS];
  unsigned next, pending;       /* pending slots end at next - 1 */
} CqSlotRing;

/* A slot's results: pinned host memory mapped into the device (*device, as
 * kernels see it), so that a kernel's last block writes them where the host
 * reads them once done[slot] has fired: no copy back. Freed with
 * cudaFreeHost (*host). */
static inline cudaError_t
cq_slot_results_alloc (void **host, void **device, size_t bytes)
{
  cudaError_t e = cudaHostAlloc (host, bytes, cudaHostAllocMapped);

  if (e == cudaSuccess)
    e = cudaHostGetDevicePointer (device, *host, 0);
  return e;
}

static inline cudaError_t
cq_slot_ring_init (CqSlotRing * ring)
{
  cudaError_t e = cudaSuccess;

  for (int i = 0; i < CQ_SLOTS && e == cudaSuccess; i++)
    e = cudaEventCreateWithFlags (&ring->done[i], cudaEventDisableTiming);
  return e;
}

static inline void
cq_slot_ring_clear (CqSlotRing * ring)
{
  for (int i = 0; i < CQ_SLOTS; i++)
    if (ring->done[i])
      cudaEventDestroy (ring->done[i]);
}

/* Whether slot `next` is free; `what` names a unit ("frame", "pair"). */
static inline CqStatus
cq_slot_ring_check (const CqSlotRing * ring, const char *what, CqError * err)
{
  if (ring->pending >= CQ_SLOTS)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "%u %ss are already in flight: collect one first", ring->pending,
        what);
  return CQ_OK;
}

/* The slot's work is queued on stream up to here: it is pending. */
static inline CqStatus
cq_slot_ring_submitted (CqSlotRing * ring, cudaStream_t stream,
    const char *what, CqError * err)
{
  CQ_CUDA_TRY (cudaEventRecord (ring->done[ring->next], stream), err, what);
  ring->next = (ring->next + 1) % CQ_SLOTS;
  ring->pending++;
  return CQ_OK;
}

/* Takes the oldest pending slot (which is then no longer pending). */
static inline CqStatus
cq_slot_ring_oldest (CqSlotRing * ring, unsigned *slot, const char *what,
    CqError * err)
{
  if (ring->pending == 0)
    return cq_error_set (err, CQ_ERROR_INVALID, "no %s is in flight", what);
  *slot = (ring->next + CQ_SLOTS - ring->pending) % CQ_SLOTS;
  ring->pending--;
  return CQ_OK;
}

/* ---- timing, for benchmarks ----
 * enqueue () once (a warm-up), then `iterations` times between two events
 * on stream; *ms: the time between the events. The events are released on
 * every way out. */
template < typename F > static CqStatus
cq_cuda_time (cudaStream_t stream, unsigned iterations, F enqueue, float *ms,
    CqError * err)
{
  cudaEvent_t start, stop;
  cudaError_t e = cudaEventCreate (&start);
  CqStatus ret;

  if (e == cudaSuccess) {
    e = cudaEventCreate (&stop);
    if (e != cudaSuccess)
      cudaEventDestroy (start);
  }
  if (e != cudaSuccess)
    return cq_cuda_error (err, e, "cannot create an event");
  ret = enqueue ();
  cudaEventRecord (start, stream);
  for (unsigned i = 0; i < iterations && ret == CQ_OK; i++)
    ret = enqueue ();
  cudaEventRecord (stop, stream);
  e = cudaEventSynchronize (stop);
  if (ret == CQ_OK && e != cudaSuccess)
    ret = cq_cuda_error (err, e, "the timed kernels failed");
  if (ret == CQ_OK)
    cudaEventElapsedTime (ms, start, stop);
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  return ret;
}

#endif /* CQ_CUDA_PRIVATE_H */
