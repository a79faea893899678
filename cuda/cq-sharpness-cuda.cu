/* cudaquality compute library: sharpness on CUDA, the launchers.
 *
 * Everything a frame needs is allocated in cq_sharpness_cuda_new (); a frame
 * costs an upload (from pinned memory directly, from pageable memory through
 * pinned staging in chunks, so the CPU copy of one chunk overlaps the DMA of
 * the last) and one kernel launch on the context's own stream, whose last
 * block writes the sums into the slot's mapped pinned memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-copy.h"
#include "cq-cuda-private.h"
#include "cq-sharpness-kernels.cuh"

/* Pageable frames are staged in chunks of rows, at most this many. */
#define MAX_CHUNKS 8
#define CHUNK_BYTES (1u << 20)
/* Frames in flight between submit and collect (CqSlotRing): each has its
 * own device frame, staging and results, so that one uploads (copy stream)
 * while the previous one is measured (compute stream). */
#define SLOTS CQ_SLOTS

/* overlap: see cq_cuda_launch (the 8-bit kernels; the others never) */
typedef cudaError_t (*LaunchFunc) (const cq::SharpnessParams & p, dim3 grid,
    dim3 block, cudaStream_t stream, bool overlap);
typedef int (*ResidentFunc) (int block_threads);

template < typename T, unsigned SUMS, bool HIST > static cudaError_t
launch (const cq::SharpnessParams & p, dim3 grid, dim3 block,
    cudaStream_t stream, bool)
{
  cq::sharpness_kernel < T, SUMS, HIST > <<<grid, block, 0, stream>>> (p);
  return cudaGetLastError ();
}

/* The walk of the common length compiled in, any other as p.rows. */
template < unsigned SUMS, bool HIST, int PIX > static cudaError_t
launch8 (const cq::SharpnessParams & p, dim3 grid, dim3 block,
    cudaStream_t stream, bool overlap)
{
  if (p.rows == cq::kRows8)
    return cq_cuda_launch (cq::sharpness8_kernel < SUMS, HIST, cq::kRows8,
        PIX >, grid, block, stream, overlap, p);
  return cq_cuda_launch (cq::sharpness8_kernel < SUMS, HIST, 0, PIX >, grid,
      block, stream, overlap, p);
}

/* Blocks of a kernel that fit on one SM at once. */
template < typename K > static int
resident_of (K kernel, int block_threads)
{
  int per_sm = 1;

  cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel,
      block_threads, 0);
  return per_sm > 0 ? per_sm : 1;
}

template < typename T, unsigned SUMS, bool HIST > static int
resident (int block_threads)
{
  return resident_of (cq::sharpness_kernel < T, SUMS, HIST >, block_threads);
}

template < unsigned SUMS, bool HIST, int PIX > static int
resident8 (int block_threads)
{
  const int fixed = resident_of (cq::sharpness8_kernel < SUMS, HIST,
      cq::kRows8, PIX >, block_threads);
  const int any = resident_of (cq::sharpness8_kernel < SUMS, HIST, 0, PIX >,
      block_threads);

  return fixed < any ? fixed : any;
}

/* A kernel and the tile it gives a warp: px_per_thread × rows pixels
 * (rows_param: the kernel walks SharpnessParams.rows, rows by default,
 * up to max_rows). */
typedef struct
{
  LaunchFunc launch;
  ResidentFunc resident;
  int px_per_thread, rows, max_rows;
  bool rows_param;
} KernelEntry;

#define KERNEL_ENTRY(T, SUMS, HIST) \
  { launch < T, SUMS, HIST >, resident < T, SUMS, HIST >, \
    (int) (8 / sizeof (T)), cq::kRows, cq::kRows, false }
#define KERNEL8_ENTRY(SUMS, HIST, PIX) \
  { launch8 < SUMS, HIST, PIX >, resident8 < SUMS, HIST, PIX >, PIX, \
    cq::kRows8, cq::max_rows8 (PIX), true }

struct CqSharpnessCuda
{
  CqCudaTarget target;
  CqLayout layout;
  unsigned width, height, metrics, hist_bins;
  size_t row_bytes;             /* stored bytes of a row */
  cudaStream_t stream;          /* kernels */
  cudaStream_t copy_stream;     /* host-to-device uploads */
  unsigned char *frame[SLOTS];  /* the frame as stored (packed RGB or gray) */
  size_t frame_pitch;
  unsigned char *gray;          /* RGB only: the converted gray frame */
  size_t gray_pitch;
  unsigned char *staging[SLOTS];        /* pinned, height × row_bytes */
  /* kFrameSets sets of kSetWords: the sums' accumulators, then the
   * blocks' counter and the set's released word (cq-reduce.cuh) */
  unsigned long long *accum, *hist_dev;
  unsigned seq;                 /* frames launched */
  /* pinned; out_host mapped: the kernel's last block writes a frame's sums
   * straight into its slot's (out_map, as the device sees it), which saves
   * a copy and its stream step a frame */
  unsigned long long *out_host[SLOTS], *out_map[SLOTS], *hist_host[SLOTS];
  /* 8-bit samples: 256 bins, hist_host mapped (hist_map) and written by
   * the kernel's last block; else copied from hist_dev */
  bool small_hist;
  unsigned long long *hist_map[SLOTS];
  cudaEvent_t uploaded[SLOTS];
  CqSlotRing ring;
  KernelEntry kernel;
  int sms;
  int rows;                     /* rows a warp walks */
  int tiles_x, tiles_y;
  long long resident;           /* blocks the SMs hold at once */
  bool overlap;                 /* cq_cuda_current_overlap */
  dim3 grid, block;
};

/* a set of accumulators: [CQ_SUM_COUNT][lo, hi], then counter, released */
constexpr unsigned kSetWords = 2 * CQ_SUM_COUNT + 1;

constexpr unsigned kDefaultSums = cq::sums_needed (CQ_METRIC_DEFAULT);
constexpr unsigned kAllSums = cq::sums_needed (CQ_METRIC_ALL);

/* Which of the four compiled sets covers metrics: 0 entropy alone (the
 * histogram only), 1 everything with the histogram, 2 the default set,
 * 3 everything. */
static int
kernel_set (unsigned metrics)
{
  const unsigned needed = cq::sums_needed (metrics);

  if (needed == 0)
    return 0;
  if (metrics & CQ_METRIC_ENTROPY)
    return 1;
  return (needed & ~kDefaultSums) == 0 ? 2 : 3;
}

template < typename T > static KernelEntry
pick_kernel_for (unsigned metrics)
{
  const KernelEntry entries[] = {
    KERNEL_ENTRY (T, 0, true), KERNEL_ENTRY (T, kAllSums, true),
    KERNEL_ENTRY (T, kDefaultSums, false), KERNEL_ENTRY (T, kAllSums, false)
  };
  return entries[kernel_set (metrics)];
}

/* Compiled: the default set, everything, everything with the histogram, and
 * the histogram alone; any other set runs the smallest kernel that covers
 * it and keeps what was asked for. 8-bit frames run the fp32 kernels
 * (CQ_SHARPNESS_KERNEL=old in the environment: the integer ones, to
 * compare). */
static KernelEntry
pick_kernel (const CqLayout * layout, unsigned metrics)
{
  const char *k = getenv ("CQ_SHARPNESS_KERNEL");
  const KernelEntry entries8[] = {
    KERNEL8_ENTRY (0, true, 4), KERNEL8_ENTRY (kAllSums, true, 4),
    KERNEL8_ENTRY (kDefaultSums, false, 4),
    KERNEL8_ENTRY (kAllSums, false, 4)
  };

  if (layout->kind == CQ_LAYOUT_GRAY16)
    return pick_kernel_for < unsigned short > (metrics);
  if (k && strcmp (k, "old") == 0)
    return pick_kernel_for < unsigned char > (metrics);
  return entries8[kernel_set (metrics)];
}

/* The default set's 8-bit kernel at 4 or 8 pixels a thread (only this one
 * has both: the all-measures kernel spills 496 bytes at 8, 4K 29-31 µs
 * against 23.5). */
static KernelEntry
default_kernel8 (int pixels)
{
  const KernelEntry narrow = KERNEL8_ENTRY (kDefaultSums, false, 4);
  const KernelEntry wide = KERNEL8_ENTRY (kDefaultSums, false, 8);

  return pixels == 8 ? wide : narrow;
}

static long long
tiles_of (const CqSharpnessCuda * cu, int rows)
{
  return (long long) cu->tiles_x * ((cu->height + cq::kBlockWarps * rows -
          1) / (cq::kBlockWarps * rows));
}

/* Walks of `rows` rows: the tiles and the grid (the resident blocks,
 * each taking every gridDim.x-th tile). */
static void
set_rows (CqSharpnessCuda * cu, int rows)
{
  const long long tiles = tiles_of (cu, rows);

  cu->rows = rows;
  cu->tiles_y = (int) (tiles / cu->tiles_x);
  cu->grid = dim3 ((unsigned) (tiles < cu->resident ? tiles : cu->resident));
}

/* The kernel's tiles across the frame and the blocks the SMs hold. */
static void
use_kernel (CqSharpnessCuda * cu, const KernelEntry & kernel)
{
  cu->kernel = kernel;
  cu->tiles_x = (cu->width + cq::kWarp * kernel.px_per_thread - 1) /
      (cq::kWarp * kernel.px_per_thread);
  cu->resident = (long long) cu->sms * kernel.resident (cq::kWarp *
      cq::kBlockWarps);
}

/* Whether walks of 12 rows or fewer put every tile on the SMs at once. */
static bool
fits_at_once (const CqSharpnessCuda * cu)
{
  return tiles_of (cu, 12) <= cu->resident;
}

/* The 8-bit kernel's walk for the frame, from H100 sweeps of 3 to 30 rows
 * (bench-sharpness --rows, default set, one frame alone and back to back):
 * where 12 rows or fewer put every tile on the SMs at once, the fewest
 * rows that do (more walks in flight: 1080p 8 rows, 9.5 µs against 11.7 at
 * 6 and 10.1 at 9); where 6 rows take 16 passes of the resident blocks or
 * more, longer walks (fewer halo rows: 8192² at 4 pixels a thread 12 rows,
 * 110.5 µs against 120.0; at 8, 24 rows, 67.8 back to back against 78.8
 * at 6); 6 between (4K: every other length as fast or slower). */
static int
default_walk_rows (const CqSharpnessCuda * cu)
{
  int rows;

  for (rows = cq::kMinRows8; rows <= 12; rows++)
    if (tiles_of (cu, rows) <= cu->resident)
      return rows;
  if (tiles_of (cu, 6) < 16 * cu->resident)
    return 6;
  return cu->kernel.px_per_thread == 8 ? 24 : 12;
}

extern "C" void
cq_sharpness_cuda_free (CqSharpnessCuda * cu)
{
  cq_cuda_object_free (cu,[cu]() {
        if (cu->copy_stream)
          cudaStreamSynchronize (cu->copy_stream);
        cudaFree (cu->frame[0]);
        cudaFree (cu->gray);
        cudaFree (cu->accum);
        cudaFree (cu->hist_dev);
        for (int i = 0; i < SLOTS; i++) {
          cudaFreeHost (cu->hist_host[i]);
          cudaFreeHost (cu->out_host[i]);
          cudaFreeHost (cu->staging[i]);
          if (cu->uploaded[i])
            cudaEventDestroy (cu->uploaded[i]);
        }
        cq_slot_ring_clear (&cu->ring);
        if (cu->copy_stream)
          cudaStreamDestroy (cu->copy_stream);
      });
}

extern "C" CqSharpnessCuda *
cq_sharpness_cuda_new_for (const CqCudaTarget * target,
    const CqLayout * layout, unsigned width, unsigned height,
    unsigned metrics, CqError * err)
{
  CqSharpnessCuda *cu;
  int device = target->device;
  cudaError_t e;
  const char *what = "cannot select the CUDA device";

  if (cq_sharpness_check (layout, width, height, err) != CQ_OK
      || !(cu = cq_cuda_object_new < CqSharpnessCuda > (target, err)))
    return NULL;
  cu->layout = *layout;
  cu->width = width;
  cu->height = height;
  cu->metrics = metrics;
  cu->hist_bins = cq_sharpness_hist_bins (layout);
  cu->row_bytes = (size_t) width * cq_layout_bytes_per_pixel (layout);
  cu->block = dim3 (cq::kWarp, cq::kBlockWarps);

  CqCudaScope scope (cu->target);
  e = scope.enter ();
  if (e == cudaSuccess && device < 0)
    e = cudaGetDevice (&device);        /* for messages: the context's */
  if (e == cudaSuccess) {
    what = "cannot query the device";
    cu->sms = 1;
    e = cq_cuda_current_sms (&cu->sms);
    if (e == cudaSuccess)
      e = cq_cuda_current_overlap (&cu->overlap);
    use_kernel (cu, pick_kernel (layout, metrics));
    /* frames the SMs cannot hold at once: the default set at 8 pixels a
     * thread (H100, back to back / alone: 4K 10.9 / 18.1 µs against 12.8 /
     * 18.7, 8192² 67.8 / 86.4 against 104.7 / 110.2; 1080p, which fits,
     * 6.4 / 11.3 against 6.2 / 9.4) */
    if (cu->kernel.rows_param && kernel_set (metrics) == 2
        && !fits_at_once (cu))
      use_kernel (cu, default_kernel8 (8));
    set_rows (cu, cu->kernel.rows_param ? default_walk_rows (cu) :
        cu->kernel.rows);
  }
  if (e == cudaSuccess) {
    what = "cannot create a CUDA stream";
    e = cudaStreamCreateWithFlags (&cu->stream, cudaStreamNonBlocking);
  }
  if (e == cudaSuccess)
    e = cudaStreamCreateWithFlags (&cu->copy_stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    what = "cannot create CUDA events";
    e = cq_slot_ring_init (&cu->ring);
  }
  for (int i = 0; i < SLOTS && e == cudaSuccess; i++)
    e = cudaEventCreateWithFlags (&cu->uploaded[i], cudaEventDisableTiming);
  if (e == cudaSuccess) {
    what = "cannot allocate the device frame";
    e = cudaMallocPitch ((void **) &cu->frame[0], &cu->frame_pitch,
        cu->row_bytes, SLOTS * (size_t) height);
    for (int i = 1; i < SLOTS && e == cudaSuccess; i++)
      cu->frame[i] = cu->frame[0] + i * cu->frame_pitch * height;
  }
  if (e == cudaSuccess && layout->kind == CQ_LAYOUT_RGB8) {
    what = "cannot allocate the device gray frame";
    e = cudaMallocPitch ((void **) &cu->gray, &cu->gray_pitch, width, height);
  }
  if (e == cudaSuccess) {
    what = "cannot allocate the device sums";
    e = cudaMalloc ((void **) &cu->accum, cq::kFrameSets * kSetWords *
        sizeof (unsigned long long));
    if (e == cudaSuccess)
      e = cq::frame_sets_init (cu->accum, kSetWords);
    /* finished before the first frame's kernels on a non-blocking stream */
    if (e == cudaSuccess)
      e = cudaDeviceSynchronize ();
  }
  if (e == cudaSuccess && (metrics & CQ_METRIC_ENTROPY)) {
    const size_t hist_bytes = cu->hist_bins * sizeof (unsigned long long);
    size_t dev_bytes;

    what = "cannot allocate the device histogram";
    cu->small_hist = layout->kind != CQ_LAYOUT_GRAY16;
    /* 8-bit: a histogram a set of accumulators */
    dev_bytes = hist_bytes * (cu->small_hist ? cq::kFrameSets : 1);
    e = cudaMalloc ((void **) &cu->hist_dev, dev_bytes);
    if (e == cudaSuccess)
      e = cudaMemset (cu->hist_dev, 0, dev_bytes);
    if (e == cudaSuccess)
      e = cudaDeviceSynchronize ();
    for (int i = 0; i < SLOTS && e == cudaSuccess; i++)
      e = cu->small_hist ? cq_slot_results_alloc ((void **) &cu->hist_host[i],
          (void **) &cu->hist_map[i], hist_bytes) :
          cudaMallocHost ((void **) &cu->hist_host[i], hist_bytes);
  }
  for (int i = 0; i < SLOTS && e == cudaSuccess; i++) {
    what = "cannot allocate pinned host memory";
    e = cq_slot_results_alloc ((void **) &cu->out_host[i],
        (void **) &cu->out_map[i],
        2 * CQ_SUM_COUNT * sizeof (unsigned long long));
    if (e == cudaSuccess)
      e = cudaMallocHost ((void **) &cu->staging[i], cu->row_bytes * height);
  }
  if (e != cudaSuccess) {
    cq_cuda_error_for (err, e, what, "frame of %ux%u on device %d", width,
        height, device);
    cq_sharpness_cuda_free (cu);
    return NULL;
  }
  return cu;
}

/* Enqueues the kernels for a frame at dev (pitch bytes a row) in the stored
 * layout; the sums land in the next slot's out_host (and the histogram). */
static CqStatus
enqueue_measure (CqSharpnessCuda * cu, const unsigned char *dev, size_t pitch,
    CqError * err)
{
  cq::SharpnessParams p;
  cudaError_t e;

  if (cu->layout.kind == CQ_LAYOUT_RGB8) {
    dim3 block (32, 8);
    dim3 grid ((cu->width + 31) / 32, (cu->height + 7) / 8);

    cq::rgb_to_gray_kernel <<<grid, block, 0, cu->stream>>> (dev, pitch,
        cu->gray, cu->gray_pitch, cu->width, cu->height,
        cu->layout.pixel_stride, cu->layout.r_offset, cu->layout.g_offset,
        cu->layout.b_offset);
    dev = cu->gray;
    pitch = cu->gray_pitch;
  }
  if (cu->hist_dev && !cu->small_hist)
    CQ_CUDA_TRY (cudaMemsetAsync (cu->hist_dev, 0,
            cu->hist_bins * sizeof (unsigned long long), cu->stream), err,
        "cannot clear the histogram");
  p.src = dev;
  p.pitch = pitch;
  p.width = (int) cu->width;
  p.height = (int) cu->height;
  p.tiles_x = cu->tiles_x;
  p.tiles_y = cu->tiles_y;
  p.rows = cu->rows;
  p.shift = cu->layout.kind == CQ_LAYOUT_GRAY16 ? cu->layout.shift : 0;
  p.mask = (1u << cu->layout.depth) - 1;
  {
    const unsigned set = cu->seq % cq::kFrameSets;

    p.accum = cu->accum + set * kSetWords;
    p.counter = cq::frame_set_counter (p.accum, kSetWords);
    p.released = p.counter + 1;
    p.seq = cu->seq;
    p.hist = cu->hist_dev + (cu->small_hist ? set * 256 : 0);
  }
  p.out = cu->out_map[cu->ring.next];
  p.hist_out = cu->small_hist ? cu->hist_map[cu->ring.next] : NULL;
  /* not after the RGB conversion: this kernel reads its output before it
   * waits (cq_cuda_launch), and only the wait makes those writes visible */
  e = cu->kernel.launch (p, cu->grid, cu->block, cu->stream, cu->overlap
      && cu->layout.kind != CQ_LAYOUT_RGB8);
  CQ_CUDA_TRY (e == cudaSuccess ? cudaGetLastError () : e, err,
      "cannot launch the sharpness kernel");
  /* only a launched frame releases its set */
  cu->seq++;
  return CQ_OK;
}

/* Queues the copy of the slot's histogram where the kernel does not write
 * it (the sums are already on their way); the frame is then pending. */
static CqStatus
end_submit (CqSharpnessCuda * cu, CqError * err)
{
  const unsigned slot = cu->ring.next;

  if (cu->hist_dev && !cu->small_hist)
    CQ_CUDA_TRY (cudaMemcpyAsync (cu->hist_host[slot], cu->hist_dev,
            cu->hist_bins * sizeof (unsigned long long),
            cudaMemcpyDeviceToHost, cu->stream), err,
        "cannot copy the histogram to the host");
  return cq_slot_ring_submitted (&cu->ring, cu->stream,
      "cannot record the end of a frame", err);
}

static CqStatus
check_submit (CqSharpnessCuda * cu, size_t stride, CqError * err)
{
  if (stride < cu->row_bytes)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "row stride %zu is shorter than a row of %u pixels (%zu bytes)",
        stride, cu->width, cu->row_bytes);
  return cq_slot_ring_check (&cu->ring, "frame", err);
}

extern "C" unsigned
cq_sharpness_cuda_pending (const CqSharpnessCuda * cu)
{
  return cu->ring.pending;
}

extern "C" CqStatus
cq_sharpness_cuda_collect (CqSharpnessCuda * cu, double *scores,
    CqError * err)
{
  CqSharpnessSums sums;
  unsigned slot;
  int i;

  if (cq_slot_ring_oldest (&cu->ring, &slot, "frame", err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  CQ_CUDA_TRY (cudaEventSynchronize (cu->ring.done[slot]), err,
      "the sharpness kernel failed");
  for (i = 0; i < CQ_SUM_COUNT; i++) {
    sums.sum[i].lo = cu->out_host[slot][2 * i];
    sums.sum[i].hi = cu->out_host[slot][2 * i + 1];
  }
  cq_sharpness_finish (&sums, (const uint64_t *) cu->hist_host[slot],
      cu->hist_bins, cu->width, cu->height, cu->metrics, scores);
  return CQ_OK;
}

/* Host frames go up on the copy stream into the slot's device frame
 * (pinned ones directly, pageable ones through the slot's staging in
 * chunks, the CPU copy of a chunk overlapping the DMA of the previous one);
 * the kernels wait for the upload on the compute stream. */
extern "C" CqStatus
cq_sharpness_cuda_submit_host (CqSharpnessCuda * cu, const void *data,
    size_t stride, CqError * err)
{
  const unsigned slot = cu->ring.next;
  const unsigned char *src = (const unsigned char *) data;
  unsigned char *frame = cu->frame[slot];
  CqStatus ret;

  if (check_submit (cu, stride, err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);

  if (cq_cuda_is_pinned (data)) {
    CQ_CUDA_TRY (cudaMemcpy2DAsync (frame, cu->frame_pitch, src, stride,
            cu->row_bytes, cu->height, cudaMemcpyHostToDevice,
            cu->copy_stream), err, "cannot upload the frame");
  } else {
    /* chunks of at least CHUNK_BYTES: the copy of one overlaps the DMA of
     * the one before, and each is big enough to be split over threads */
    const uint64_t bytes = (uint64_t) cu->row_bytes * cu->height;
    const unsigned chunks = (unsigned) (bytes / CHUNK_BYTES < 1 ? 1 :
        bytes / CHUNK_BYTES > MAX_CHUNKS ? MAX_CHUNKS : bytes / CHUNK_BYTES);
    unsigned chunk, rows_done = 0;

    for (chunk = 0; chunk < chunks && rows_done < cu->height; chunk++) {
      unsigned rows_end =
          (unsigned) ((uint64_t) cu->height * (chunk + 1) / chunks);
      unsigned rows = rows_end - rows_done;
      unsigned char *stage = cu->staging[slot] + rows_done * cu->row_bytes;

      if (rows == 0)
        continue;
      cq_copy_rows (stage, cu->row_bytes, src + (size_t) rows_done * stride,
          stride, cu->row_bytes, rows);
      CQ_CUDA_TRY (cudaMemcpy2DAsync (frame + rows_done * cu->frame_pitch,
              cu->frame_pitch, stage, cu->row_bytes, cu->row_bytes, rows,
              cudaMemcpyHostToDevice, cu->copy_stream), err,
          "cannot upload the frame");
      rows_done = rows_end;
    }
  }
  CQ_CUDA_TRY (cudaEventRecord (cu->uploaded[slot], cu->copy_stream), err,
      "cannot record an upload event");
  CQ_CUDA_TRY (cudaStreamWaitEvent (cu->stream, cu->uploaded[slot], 0), err,
      "cannot order the kernels after the upload");
  ret = enqueue_measure (cu, frame, cu->frame_pitch, err);
  if (ret != CQ_OK)
    return ret;
  return end_submit (cu, err);
}

/* The kernel reads 8 bytes a thread: anything less aligned is copied into
 * the context's own pitched frame first. */
static const unsigned char *
aligned_device_frame (CqSharpnessCuda * cu, const void *dev_data,
    size_t * pitch, cudaError_t * e)
{
  const size_t align = cu->layout.kind == CQ_LAYOUT_RGB8 ? 1 : 8;

  *e = cudaSuccess;
  if (((uintptr_t) dev_data % align) == 0 && (*pitch % align) == 0)
    return (const unsigned char *) dev_data;
  *e = cudaMemcpy2DAsync (cu->frame[cu->ring.next], cu->frame_pitch,
      dev_data, *pitch, cu->row_bytes, cu->height, cudaMemcpyDeviceToDevice,
      cu->stream);
  *pitch = cu->frame_pitch;
  return cu->frame[cu->ring.next];
}

extern "C" CqStatus
cq_sharpness_cuda_submit_device (CqSharpnessCuda * cu, const void *dev_data,
    size_t pitch, CqError * err)
{
  const unsigned char *dev;
  cudaError_t e;
  CqStatus ret;

  if (check_submit (cu, pitch, err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  dev = aligned_device_frame (cu, dev_data, &pitch, &e);
  CQ_CUDA_TRY (e, err, "cannot copy the frame on the device");
  ret = enqueue_measure (cu, dev, pitch, err);
  if (ret != CQ_OK)
    return ret;
  return end_submit (cu, err);
}

extern "C" CqStatus
cq_sharpness_cuda_time_device (CqSharpnessCuda * cu, const void *dev_data,
    size_t pitch, unsigned iterations, double *us, CqError * err)
{
  const unsigned char *dev;
  cudaError_t e;
  float ms = 0;
  CqStatus ret;

  CQ_CUDA_ENTER (cu->target, err);
  dev = aligned_device_frame (cu, dev_data, &pitch, &e);
  CQ_CUDA_TRY (e, err, "cannot copy the frame on the device");
  ret = cq_cuda_time (cu->stream, iterations,[&]() {
        return enqueue_measure (cu, dev, pitch, err);
      }, &ms, err);
  if (ret == CQ_OK)
    *us = ms * 1e3 / iterations;
  return ret;
}

extern "C" CqStatus
cq_sharpness_cuda_set_thread_pixels (CqSharpnessCuda * cu, unsigned pixels,
    CqError * err)
{
  if (pixels == (unsigned) cu->kernel.px_per_thread)
    return CQ_OK;
  if (!cu->kernel.rows_param || kernel_set (cu->metrics) != 2
      || (pixels != 4 && pixels != 8))
    return cq_error_set (err, CQ_ERROR_INVALID,
        "only the default set's 8-bit kernel takes 4 or 8 pixels a thread, "
        "not %u (this one takes %d)", pixels, cu->kernel.px_per_thread);
  if (cu->ring.pending)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "pixels a thread changed with %u frame(s) in flight",
        cu->ring.pending);
  use_kernel (cu, default_kernel8 ((int) pixels));
  set_rows (cu, default_walk_rows (cu));
  return CQ_OK;
}

extern "C" unsigned
cq_sharpness_cuda_walk_rows_max (const CqSharpnessCuda * cu)
{
  return cu->kernel.rows_param ? (unsigned) cu->kernel.max_rows : 0;
}

extern "C" CqStatus
cq_sharpness_cuda_set_walk_rows (CqSharpnessCuda * cu, unsigned rows,
    CqError * err)
{
  if (!cu->kernel.rows_param)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "only the 8-bit kernel walks rows of a chosen length");
  if (rows < (unsigned) cq::kMinRows8
      || rows > (unsigned) cu->kernel.max_rows)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "walk rows must be %d to %d, not %u", cq::kMinRows8,
        cu->kernel.max_rows, rows);
  if (cu->ring.pending)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "walk rows changed with %u frame(s) in flight", cu->ring.pending);
  set_rows (cu, (int) rows);
  return CQ_OK;
}
