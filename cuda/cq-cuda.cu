/* cudaquality compute library: CUDA device discovery and memory helpers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "cq-cuda-private.h"

CqStatus
cq_cuda_error (CqError * err, cudaError_t e, const char *what)
{
  CqStatus status;

  switch (e) {
    case cudaErrorMemoryAllocation:
      status = CQ_ERROR_OUT_OF_MEMORY;
      break;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorNoKernelImageForDevice:
      status = CQ_ERROR_NO_CUDA;
      break;
    default:
      status = CQ_ERROR_CUDA;
      break;
  }
  cudaGetLastError ();
  return cq_error_set (err, status, "%s: %s (%s)", what,
      cudaGetErrorString (e), cudaGetErrorName (e));
}

CqStatus
cq_cuda_error_for (CqError * err, cudaError_t e, const char *what,
    const char *format, ...)
{
  CqStatus status = cq_cuda_error (err, e, what);
  size_t len;
  va_list args;

  if (!err)
    return status;
  len = strlen (err->message);
  if (len + 3 < sizeof (err->message)) {
    err->message[len++] = ' ';
    err->message[len++] = '(';
    va_start (args, format);
    vsnprintf (err->message + len, sizeof (err->message) - len, format, args);
    va_end (args);
    len = strlen (err->message);
    if (len + 1 < sizeof (err->message))
      strcpy (err->message + len, ")");
  }
  return status;
}

int
cq_cuda_device_count (CqError * err)
{
  int n = 0;
  cudaError_t e = cudaGetDeviceCount (&n);

  if (e != cudaSuccess) {
    cq_cuda_error (err, e, "no usable CUDA device");
    return 0;
  }
  if (n == 0)
    cq_error_set (err, CQ_ERROR_NO_CUDA, "no CUDA device present");
  return n;
}

CqStatus
cq_cuda_device_check (int device, CqError * err)
{
  cudaError_t e = cudaSetDevice (device);

  /* the context is made on first use: a device that cannot be used
   * (prohibited, taken in exclusive mode, broken) refuses it here */
  if (e == cudaSuccess)
    e = cudaFree (0);
  if (e != cudaSuccess)
    return cq_cuda_error_for (err, e, "CUDA device cannot be used",
        "device %d", device);
  return CQ_OK;
}

CqStatus
cq_cuda_device_describe (int device, char *buf, size_t len, CqError * err)
{
  cudaDeviceProp prop;

  CQ_CUDA_TRY (cudaGetDeviceProperties (&prop, device), err,
      "cannot read the device's properties");
  snprintf (buf, len, "%s (sm_%d%d, %d SMs, %.1f GiB)", prop.name,
      prop.major, prop.minor, prop.multiProcessorCount,
      prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  return CQ_OK;
}

void *
cq_cuda_malloc (int device, size_t bytes, CqError * err)
{
  void *ptr = NULL;
  cudaError_t e;

  e = cq_cuda_select (device);
  if (e == cudaSuccess)
    e = cudaMalloc (&ptr, bytes);
  if (e != cudaSuccess) {
    cq_cuda_error (err, e, "cannot allocate device memory");
    return NULL;
  }
  return ptr;
}

void
cq_cuda_free (int device, void *dev_ptr)
{
  if (dev_ptr && cq_cuda_select (device) == cudaSuccess)
    cudaFree (dev_ptr);
}

CqStatus
cq_cuda_upload (int device, void *dev_dst, const void *src, size_t bytes,
    CqError * err)
{
  CQ_CUDA_TRY (cq_cuda_select (device), err, "cannot select the device");
  CQ_CUDA_TRY (cudaMemcpy (dev_dst, src, bytes, cudaMemcpyHostToDevice), err,
      "cannot copy to the device");
  /* a pageable copy may return before its DMA lands; callers then use the
   * memory from other (non-blocking) streams */
  CQ_CUDA_TRY (cudaDeviceSynchronize (), err, "cannot copy to the device");
  return CQ_OK;
}

CqStatus
cq_cuda_download (int device, void *dst, const void *dev_src, size_t bytes,
    CqError * err)
{
  CQ_CUDA_TRY (cq_cuda_select (device), err, "cannot select the device");
  /* after the device's work on any stream, which may have written it */
  CQ_CUDA_TRY (cudaDeviceSynchronize (), err, "the device failed");
  CQ_CUDA_TRY (cudaMemcpy (dst, dev_src, bytes, cudaMemcpyDeviceToHost), err,
      "cannot copy from the device");
  return CQ_OK;
}

int
cq_cuda_is_pinned (const void *ptr)
{
  cudaPointerAttributes attr;

  if (ptr && cudaPointerGetAttributes (&attr, ptr) == cudaSuccess
      && attr.type == cudaMemoryTypeHost)
    return 1;
  cudaGetLastError ();          /* pageable memory is not an error */
  return 0;
}

/* Portable: pinned for every context of the process, not only the one
 * current now (buffer pools outlive and cross elements' contexts). */
void *
cq_cuda_host_alloc (size_t bytes, CqError * err)
{
  void *ptr = NULL;
  cudaError_t e = cudaHostAlloc (&ptr, bytes, cudaHostAllocPortable);

  if (e != cudaSuccess) {
    cq_cuda_error (err, e, "cannot allocate pinned host memory");
    return NULL;
  }
  return ptr;
}

void
cq_cuda_host_free (void *ptr)
{
  if (ptr)
    cudaFreeHost (ptr);
}

CqStatus
cq_cuda_h2d_bandwidth (int device, size_t bytes, int pinned, double *gbps,
    CqError * err)
{
  void *dev = NULL, *host = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  cudaError_t e;
  float ms, best = 1e30f;
  int i;

  CQ_CUDA_TRY (cq_cuda_select (device), err, "cannot select the device");
  e = cudaMalloc (&dev, bytes);
  if (e == cudaSuccess) {
    if (pinned)
      e = cudaMallocHost (&host, bytes);
    else if (!(host = malloc (bytes)))
      e = cudaErrorMemoryAllocation;
  }
  if (e == cudaSuccess)
    memset (host, 1, bytes);
  if (e == cudaSuccess)
    e = cudaEventCreate (&start);
  if (e == cudaSuccess)
    e = cudaEventCreate (&stop);
  for (i = 0; i < 8 && e == cudaSuccess; i++) {
    cudaEventRecord (start, 0);
    e = cudaMemcpy (dev, host, bytes, cudaMemcpyHostToDevice);
    cudaEventRecord (stop, 0);
    cudaEventSynchronize (stop);
    cudaEventElapsedTime (&ms, start, stop);
    if (i > 0 && ms < best)     /* the first copy pays for page faults */
      best = ms;
  }
  if (start)
    cudaEventDestroy (start);
  if (stop)
    cudaEventDestroy (stop);
  if (pinned)
    cudaFreeHost (host);
  else
    free (host);
  cudaFree (dev);
  if (e != cudaSuccess)
    return cq_cuda_error (err, e, "host-to-device bandwidth test failed");
  *gbps = bytes / (best * 1e-3) / 1e9;
  return CQ_OK;
}

/* The contexts that have peer access enabled: a framework's context by
 * its hooks' user data, a device's primary context by NULL. A context
 * destroyed and another made at the same address reads as enabled: its
 * copies are then staged, slower but right. */
typedef struct
{
  const void *context;
  int device, peer;
} CqPeerReach;

static pthread_mutex_t peers_lock = PTHREAD_MUTEX_INITIALIZER;
static CqPeerReach peers[64];
static unsigned n_peers;

int
cq_cuda_reach_peer (const CqCudaTarget * target, int device, int peer)
{
  const void *context = target->push ? target->user : NULL;
  int can = 0, reach = 0;
  cudaError_t e;
  unsigned i;

  if (device == peer)
    return 1;
  pthread_mutex_lock (&peers_lock);
  for (i = 0; i < n_peers && !reach; i++)
    reach = peers[i].context == context && peers[i].device == device
        && peers[i].peer == peer;
  if (!reach && n_peers < sizeof (peers) / sizeof (peers[0])) {
    e = cudaDeviceCanAccessPeer (&can, device, peer);
    if (e == cudaSuccess && can)
      e = cudaDeviceEnablePeerAccess (peer, 0);
    cudaGetLastError ();
    reach = can && (e == cudaSuccess
        || e == cudaErrorPeerAccessAlreadyEnabled);
    if (reach) {
      CqPeerReach r = { context, device, peer };

      peers[n_peers++] = r;
    }
  }
  pthread_mutex_unlock (&peers_lock);
  return reach;
}
