/* cudaquality compute library: SSIM on CUDA, the launchers.
 *
 * Everything is allocated in cq_ssim_cuda_new (). A frame pair costs the
 * uploads (pinned planes copied directly, pageable ones through pinned
 * staging in chunks), for planes that are not packed samples one unpacking
 * kernel and one measuring kernel a plane, all on the context's own stream;
 * the last block of each writes its results into the slot's mapped pinned
 * memory (no copy back).
 *
 * Pairs can be submitted and collected apart (SLOTS in flight): each slot
 * has its own device frames, pinned staging and results, so the upload of
 * one pair on the copy stream overlaps the kernels of the previous one.
 * Block sums and unpacked planes are shared: the compute stream orders them.
 *
 * MS-SSIM (where enabled) follows each plane's SSIM kernels on the compute
 * stream: the gauss11 kernel summing the contrast-structure term (scales 1
 * to 4) or SSIM (scale 5), and between scales a 2x2 downsampling kernel
 * into double planes. Its sums travel with the pair's results.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-copy.h"
#include "cq-cuda-private.h"
#include "cq-ssim-kernels.cuh"
#include "cq-ssim-ws.h"

/* Host frames go up in bands of at least BAND_BYTES (both frames), at
 * most MAX_BANDS a plane. */
#define MAX_BANDS 8
#define BAND_BYTES (4u << 20)
#define SLOTS CQ_SLOTS

typedef struct
{
  CqSsimPlane plane;
  unsigned bytes;               /* 1 or 2: the packed sample */
  int packed;                   /* samples already packed in the frame */
  size_t row_bytes;             /* stored bytes of a row */
  unsigned char *frame[SLOTS][2];       /* uploads / aligned copies */
  size_t frame_pitch;
  unsigned char *unpacked[2];   /* packed samples, for planes that are not */
  size_t unpacked_pitch;
  /* kFrameSets sets of accumulators (cq-reduce.cuh), set_words each:
   * the block sums [set_blocks], the fused pass's second ones
   * [set_blocks], the SSE, then the blocks' counter and released word */
  unsigned long long *sets;
  unsigned set_blocks;
  unsigned seq;                 /* pairs launched */
  unsigned rows;                /* rows a tile walks */
  dim3 grid;
  unsigned host_rows;           /* the tiles of pairs from host memory */
  dim3 host_grid;
  /* MS-SSIM (old kernels): scales 2 to 5 of both frames as doubles,
   * [scale parity][frame] */
  double *ms[2][2];
  size_t ms_pitch;
  /* MS-SSIM: scales 2 to 5 of both frames as integer sums (msssim_pyramid_
   * kernel), [scale - 1][frame], in one allocation */
  unsigned *msk[CQ_MSSSIM_SCALES - 1][2];
  size_t msk_pitch[CQ_MSSSIM_SCALES - 1];
  /* MS-SSIM's scale passes, one after the other: one set of them, its
   * released word counting the passes (ms_seq) */
  double *ms_partials;
  unsigned long long *ms_sse_accum;
  unsigned *ms_counter, *ms_released;
  unsigned ms_seq;
} PlaneCtx;

static size_t
set_words (const PlaneCtx * pc)
{
  return 2 * (size_t) pc->set_blocks + 2;
}

static unsigned long long *
set_base (const PlaneCtx * pc, unsigned set)
{
  return pc->sets + set * set_words (pc);
}

/* The results of a pair: each plane's SSIM and SSE, then MS-SSIM's sum of
 * each scale of each plane. */
#define OUT_ENTRIES (CQ_SSIM_MAX_PLANES * (1 + CQ_MSSSIM_SCALES))
#define MS_OUT(i, s) (CQ_SSIM_MAX_PLANES + (i) * CQ_MSSSIM_SCALES + (s))

struct CqSsimCuda
{
  CqCudaTarget target;
  CqSsimWindow window;
  unsigned n_planes;
  PlaneCtx pl[CQ_SSIM_MAX_PLANES];
  cudaStream_t stream;          /* kernels */
  cudaStream_t copy_stream;     /* host-to-device uploads */
  cudaEvent_t events[CQ_SSIM_MAX_PLANES * MAX_BANDS];   /* band uploaded */
  /* pinned and mapped: the kernels' last blocks write a pair's results
   * straight into its slot's (out_map, as the device sees it), which saves
   * a copy and its stream step a pair */
  cq::SsimPlaneOut *out_host[SLOTS], *out_map[SLOTS];
  unsigned char *staging[SLOTS];        /* pinned */
  size_t staging_bytes;
  CqSlotRing ring;              /* a slot's results are on the host */
  int msssim;
  /* CQ_SSIM_KERNEL=old: the kernels of before issue 14 (box8, gauss11 and
   * MS-SSIM's double scales), kept to time both in one run */
  int old_kernels;
  bool overlap;                 /* cq_cuda_current_overlap */
  /* gauss11 on the fp64 tensor cores (compute capability 9.0 and up) for
   * every plane and pass, only with CQ_SSIM_GAUSS=mma in the environment:
   * since the FMA kernel reads its samples through shared memory it is
   * faster on the H100 everywhere measured (back to back: 1080p 24.5 µs
   * against 30.0, 4K 93.0 against 117.4, 8192² 746 against 957, 4K
   * MS-SSIM 232.3 against 234.3). */
  bool gauss_mma;
  /* the FMA kernel's samples through shared memory (cp.async: compute
   * capability 8.0 and up) where rows are 4-byte aligned and the ring
   * costs no block an SM (devices with 100 KB of shared memory an SM would
   * hold 2 instead of 3), for 8- and 16-bit samples; CQ_SSIM_GAUSS=fma-sync:
   * never (through registers, as below 8.0) */
  bool gauss_async[2];
  /* where the ring is used: its passes in separate warps (gauss2ws,
   * cq-ssim-ws-kernels.cuh) on devices that load its sm_90a code, unless
   * CQ_SSIM_GAUSS=fma. H100, against gauss2 in the same run (sixteenth
   * session): 4K 83.9 µs against 85.7 back to back, 95.9 against 98.7
   * alone; 16-bit 88.9 against 97.8; 1080p 23.5 against 24.4. */
  bool gauss_ws;
};

/* The gauss11 pass also sums MS-SSIM's first scale (kGaussBoth). */
static bool
fused_msssim (const CqSsimCuda * cu)
{
  return !cu->old_kernels && cu->msssim && cu->window == CQ_SSIM_GAUSS11;
}

static dim3 plane_grid (CqSsimWindow window, const CqSsimPlane * p,
    unsigned rows);

/* Whether the FMA gauss11 kernel with its ring of samples in shared memory
 * runs as many blocks an SM on the current device as without it. */
template < typename T > static bool
async_holds_blocks (void)
{
  int with = 0, without = 0;

  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&with,
          cq::ssim_gauss2_kernel < T, cq::kGaussSsim, true >,
          cq::kSsimThreads, 0) != cudaSuccess
      || cudaOccupancyMaxActiveBlocksPerMultiprocessor (&without,
          cq::ssim_gauss2_kernel < T, cq::kGaussSsim, false >,
          cq::kSsimThreads, 0) != cudaSuccess) {
    (void) cudaGetLastError ();
    return false;
  }
  return with >= without;
}

/* Rows a tile walks, from H100 sweeps (bench-ssim --rows) at 4K: 16-bit
 * box8 16 (60 µs; 32: 74). gauss11 (fourteenth session, back to back /
 * alone): 4K 180 rows, one round of 396 blocks, 88.8 / 101.9 µs against
 * 93.7 / 109.5 at 64 (90: 91.2 / 103.7; 120: 89.3 / 114.5); 1080p 48 rows
 * (391 blocks) 25.1 / 33.0 against 24.7 / 40.4 at 64; 8192² 256 rows
 * 702.4 / 734.9 against 748.3 / 767.0 at 64. gauss2ws (2 blocks an SM,
 * fifteenth session, back to back): 4K 270 rows 82.5–83.0 against 83.7–
 * 84.1 at 180; 1080p 72 rows 22.5 against 23.5 at 47; 8192² 256 rows 664
 * against 659 at 372.
 * ffmpeg: about three blocks an SM, in multiples of 4 block rows (4 to
 * 32). Since pairs back to back no longer wait for each other (frame
 * sets), fewer and longer tiles pay, back to back / alone: 4K 12 rows
 * 4.7 / 12.6 µs against 6.0 / 12.4 at 4; 8192² 32 rows 46.5 / 55.9
 * against 48.5 / 65.2 at 16; 1080p stays at 4 (8.0 µs alone, 9.2 at 8).
 * 8-bit box8: the fewest rows (8 to 32, steps of 4) whose blocks the SMs
 * hold at once (kBox8pBlocks each): as many windows in flight as fit, and
 * past that longer walks, which read the 7 halo rows less often; where 32
 * rows take more than two rounds of the SMs, 64. H100, back to back /
 * alone (thirteenth session): 1080p 8 rows 6.9 / 16.5 µs, 4K 24 rows
 * 19.9 / 36.0; longer 4K tiles gain at most 0.1–0.8 µs back to back and
 * cost a pair alone 5–35 %. */
static unsigned
default_tile_rows (CqSsimWindow window, const CqSsimPlane * p,
    unsigned sms, unsigned gauss_blocks)
{
  switch (window) {
    case CQ_SSIM_BOX8:
      if (p->layout.kind != CQ_LAYOUT_GRAY16) {
        static const unsigned choices[] = { 8, 12, 16, 20, 24, 28, 32 };
        const uint64_t slots = (uint64_t) sms * cq::kBox8pBlocks;

        const unsigned n = sizeof (choices) / sizeof (choices[0]);
        dim3 g;

        for (unsigned c = 0; c < n; c++) {
          g = plane_grid (window, p, choices[c]);
          if ((uint64_t) g.x * g.y <= slots)
            return choices[c];
        }
        return (uint64_t) g.x * g.y > 2 * slots ? 64 : choices[n - 1];
      }
      return cq::kBox8Rows;
    case CQ_SSIM_FFMPEG:{
      const uint64_t cols = plane_grid (window, p, 1).x;
      const uint64_t rows = ((uint64_t) (p->height / 4) * cols / (3 * sms)
          + 2) / 4 * 4;

      return rows < cq::kFfmpegBlockRows ? cq::kFfmpegBlockRows :
          rows > 32 ? 32 : (unsigned) rows;
    }
    case CQ_SSIM_GAUSS11:{
      /* the fewest tiles a column whose blocks fill whole rounds of the
       * SMs (gauss_blocks each) to 95 % or more: one round where it fits,
       * whatever its rows, which also reads the 10 halo rows least often;
       * past one round at most 256 rows (8192², H100: 745 rows, two
       * rounds, 724 µs against 702 at 256). Capping one round too cut a
       * 4K tile of gauss2ws from 270 rows to 256, 297 blocks for 264
       * places: back to back 84.2 µs against 83.2, alone 104.8 against
       * 95.2 (sixteenth session). */
      const uint64_t slots = (uint64_t) sms * gauss_blocks;
      const uint64_t cols = plane_grid (window, p, 1).x;

      for (uint64_t round = 1; round <= 64; round++) {
        const uint64_t tiles = round * slots / cols;

        if (tiles >= 1 && 20 * tiles * cols >= 19 * round * slots) {
          const uint64_t rows = (p->height + tiles - 1) / tiles;

          return rows < 8 ? 8 : rows > 256 && round > 1 ? 256 :
              (unsigned) rows;
        }
      }
      return cq::kGaussRows;
    }
  }
  return 32;
}

/* Rows a tile of a pair from host memory walks, where default_tile_rows
 * gives rows: at most kGaussRows for gauss11, whose longer tiles make the
 * last upload band's kernels, which start after its rows arrive, end later
 * (H100, 4K pinned: 0.377 ms a pair at 64 rows, 0.397 at 180). */
static unsigned
host_tile_rows (CqSsimWindow window, unsigned rows)
{
  return window == CQ_SSIM_GAUSS11 && rows > (unsigned) cq::kGaussRows ?
      cq::kGaussRows : rows;
}

static dim3
plane_grid (CqSsimWindow window, const CqSsimPlane * p, unsigned rows)
{
  const int warps = cq::kSsimThreads / 32;

  switch (window) {
    case CQ_SSIM_BOX8:{
      unsigned strips = (p->width + cq::kBox8Strip - 1) / cq::kBox8Strip;
      return dim3 ((strips + warps - 1) / warps,
          (p->height + rows - 1) / rows);
    }
    case CQ_SSIM_FFMPEG:{
      unsigned w4 = p->width / 4, h4 = p->height / 4;
      unsigned strips = (w4 + cq::kFfmpegStrip - 1) / cq::kFfmpegStrip;
      return dim3 ((strips + warps - 1) / warps, (h4 + rows - 1) / rows);
    }
    case CQ_SSIM_GAUSS11:
      return dim3 ((p->width + cq::kGaussCols - 1) / cq::kGaussCols,
          (p->height + rows - 1) / rows);
  }
  return dim3 (1);
}

extern "C" void
cq_ssim_cuda_free (CqSsimCuda * cu)
{
  cq_cuda_object_free (cu,[cu]() {
        for (unsigned i = 0; i < cu->n_planes; i++) {
          cudaFree (cu->pl[i].frame[0][0]);
          cudaFree (cu->pl[i].unpacked[0]);
          cudaFree (cu->pl[i].sets);
          cudaFree (cu->pl[i].ms[0][0]);
          cudaFree (cu->pl[i].msk[0][0]);
          cudaFree (cu->pl[i].ms_partials);
        }
        for (unsigned i = 0; i < SLOTS; i++) {
          cudaFreeHost (cu->out_host[i]);
          cudaFreeHost (cu->staging[i]);
        }
        cq_slot_ring_clear (&cu->ring);
        for (unsigned i = 0; i < CQ_SSIM_MAX_PLANES * MAX_BANDS; i++)
          if (cu->events[i])
            cudaEventDestroy (cu->events[i]);
        if (cu->copy_stream) {
          cudaStreamSynchronize (cu->copy_stream);
          cudaStreamDestroy (cu->copy_stream);
        }
      });
}

extern "C" CqSsimCuda *
cq_ssim_cuda_new_for (const CqCudaTarget * target, CqSsimWindow window,
    const CqSsimPlane * planes, unsigned n_planes, CqError * err)
{
  CqSsimCuda *cu;
  cudaError_t e;
  const char *what = "cannot select the CUDA device";
  int sms = 0;
  double gauss_w[11];
  unsigned i;

  if (cq_ssim_check (window, planes, n_planes, err) != CQ_OK
      || !(cu = cq_cuda_object_new < CqSsimCuda > (target, err)))
    return NULL;
  cu->window = window;
  cu->n_planes = n_planes;
  {
    const char *k = getenv ("CQ_SSIM_KERNEL");

    cu->old_kernels = k && strcmp (k, "old") == 0;
  }

  CqCudaScope scope (cu->target);
  e = scope.enter ();
  cq_ssim_gauss_weights (gauss_w);
  if (e == cudaSuccess) {
    what = "cannot set the Gaussian weights";
    e = cudaMemcpyToSymbol (cq::c_gauss, gauss_w, sizeof (gauss_w));
  }
  if (e == cudaSuccess) {
    what = "cannot create a CUDA stream";
    e = cudaStreamCreateWithFlags (&cu->stream, cudaStreamNonBlocking);
  }
  if (e == cudaSuccess)
    e = cudaStreamCreateWithFlags (&cu->copy_stream, cudaStreamNonBlocking);
  for (i = 0; i < CQ_SSIM_MAX_PLANES * MAX_BANDS && e == cudaSuccess; i++) {
    what = "cannot create CUDA events";
    e = cudaEventCreateWithFlags (&cu->events[i], cudaEventDisableTiming);
  }
  if (e == cudaSuccess)
    e = cq_slot_ring_init (&cu->ring);
  if (e == cudaSuccess) {
    what = "cannot query the device";
    e = cq_cuda_current_sms (&sms);
    if (e == cudaSuccess)
      e = cq_cuda_current_overlap (&cu->overlap);
    if (e == cudaSuccess) {
      const char *g = getenv ("CQ_SSIM_GAUSS");
      int major = 0;

      e = cq_cuda_current_major (&major);
      cu->gauss_mma = major >= 9 && g && strcmp (g, "mma") == 0;
      if (major >= 8 && !(g && strcmp (g, "fma-sync") == 0)) {
        cu->gauss_async[0] = async_holds_blocks < unsigned char > ();
        cu->gauss_async[1] = async_holds_blocks < unsigned short > ();
        cu->gauss_ws = !(g && strcmp (g, "fma") == 0) && cq_ssim_ws_usable ();
      }
    }
    if (e == cudaSuccess && cu->gauss_ws) {
      /* gauss2ws's module has its own copy */
      what = "cannot set the Gaussian weights";
      e = cq_ssim_ws_set_weights (gauss_w);
    }
  }
  for (i = 0; i < n_planes && e == cudaSuccess; i++) {
    PlaneCtx *pc = &cu->pl[i];
    const CqSsimPlane *p = &planes[i];
    unsigned blocks;

    pc->plane = *p;
    pc->bytes = p->layout.kind == CQ_LAYOUT_GRAY16 ? 2 : 1;
    pc->packed = p->layout.kind != CQ_LAYOUT_RGB8 &&
        p->sample_stride == pc->bytes && p->offset == 0;
    pc->row_bytes = cq_ssim_plane_row_bytes (p);
    pc->rows = default_tile_rows (window, p, (unsigned) sms, cu->gauss_ws ?
        cq_ssim_ws_blocks_per_sm () : (unsigned) cq::kG2Blocks);
    pc->grid = plane_grid (window, p, pc->rows);
    pc->host_rows = host_tile_rows (window, pc->rows);
    pc->host_grid = plane_grid (window, p, pc->host_rows);
    /* room for the block sums of the smallest tiles set_tile_rows allows */
    blocks = plane_grid (window, p, 1).x * plane_grid (window, p, 1).y;
    cu->staging_bytes += 2 * pc->row_bytes * p->height;

    what = "cannot allocate the device frames";
    e = cudaMallocPitch ((void **) &pc->frame[0][0], &pc->frame_pitch,
        pc->row_bytes, 2 * SLOTS * (size_t) p->height);
    if (e == cudaSuccess) {
      unsigned f;

      for (f = 1; f < 2 * SLOTS; f++)
        pc->frame[f / 2][f % 2] = pc->frame[0][0] +
            f * pc->frame_pitch * p->height;
      if (!pc->packed) {
        what = "cannot allocate the unpacked planes";
        e = cudaMallocPitch ((void **) &pc->unpacked[0], &pc->unpacked_pitch,
            (size_t) p->width * pc->bytes, 2 * (size_t) p->height);
        pc->unpacked[1] = pc->unpacked[0] + pc->unpacked_pitch * p->height;
      }
    }
    if (e == cudaSuccess) {
      what = "cannot allocate the block sums";
      pc->set_blocks = blocks;
      e = cudaMalloc ((void **) &pc->sets, cq::kFrameSets * set_words (pc) *
          sizeof (unsigned long long));
    }
    if (e == cudaSuccess)
      e = cq::frame_sets_init (pc->sets, set_words (pc));
    /* finished before the first pair's kernels on a non-blocking stream */
    if (e == cudaSuccess)
      e = cudaDeviceSynchronize ();
  }
  for (i = 0; i < SLOTS && e == cudaSuccess; i++) {
    what = "cannot allocate the results";
    e = cq_slot_results_alloc ((void **) &cu->out_host[i],
        (void **) &cu->out_map[i], OUT_ENTRIES * sizeof (cq::SsimPlaneOut));
    if (e == cudaSuccess) {
      what = "cannot allocate pinned staging memory";
      e = cudaMallocHost ((void **) &cu->staging[i], cu->staging_bytes);
    }
  }
  if (e != cudaSuccess) {
    cq_cuda_error_for (err, e, what, "planes of %ux%u on device %d",
        planes[0].width, planes[0].height, target->device);
    cq_ssim_cuda_free (cu);
    return NULL;
  }
  return cu;
}

typedef void (*GaussKernelFn) (cq::SsimParams);

/* A gauss11 kernel and the threads of its blocks. */
struct GaussKernel
{
  GaussKernelFn fn;
  unsigned threads;
};

/* Whether both frames' pitches fit the 32-bit row addressing of box8p and
 * of gauss2's ring. */
static bool
pitches_fit_32 (const cq::SsimParams & p)
{
  return p.pitch_a <= UINT32_MAX && p.pitch_b <= UINT32_MAX;
}

/* The FMA gauss11 kernel in MODE, its samples through shared memory where
 * the device can copy asynchronously and p's rows are 4-byte aligned, with
 * pitches below 4 GiB: gauss2ws where it runs (gauss_ws), else gauss2. */
template < typename T, int MODE > static GaussKernel
gauss_fma_kernel (const CqSsimCuda * cu, const cq::SsimParams & p)
{
  if constexpr (sizeof (T) <= 2) {
    if (cu->gauss_async[sizeof (T) == 2] && (((uintptr_t) p.a | (uintptr_t)
                p.b | p.pitch_a | p.pitch_b) & 3) == 0 && pitches_fit_32 (p)) {
      if (cu->gauss_ws)
        return {
        cq_ssim_ws_kernel (sizeof (T), MODE), cq_ssim_ws_threads ()};
      return {
      cq::ssim_gauss2_kernel < T, MODE, true >, cq::kSsimThreads};
    }
  }
  return {
  cq::ssim_gauss2_kernel < T, MODE, false >, cq::kSsimThreads};
}

/* The gauss11 kernel of a pass in mode: the FMA one, or the tensor
 * cores' (gauss_mma). */
template < typename T > static GaussKernel
gauss_kernel (const CqSsimCuda * cu, int mode, const cq::SsimParams & p)
{
  if (cu->gauss_mma) {
    if (mode == cq::kGaussCs)
      return {
      cq::ssim_gauss_mma_kernel < T, cq::kGaussCs >, cq::kSsimThreads};
    if constexpr (sizeof (T) < 4) {
      if (mode == cq::kGaussBoth)
        return {
        cq::ssim_gauss_mma_kernel < T, cq::kGaussBoth >, cq::kSsimThreads};
    }
    return {
    cq::ssim_gauss_mma_kernel < T, cq::kGaussSsim >, cq::kSsimThreads};
  }
  if (mode == cq::kGaussCs)
    return gauss_fma_kernel < T, cq::kGaussCs > (cu, p);
  if constexpr (sizeof (T) < 4) {
    if (mode == cq::kGaussBoth)
      return gauss_fma_kernel < T, cq::kGaussBoth > (cu, p);
  }
  return gauss_fma_kernel < T, cq::kGaussSsim > (cu, p);
}

/* Launches the gauss11 pass of mode over grid. */
template < typename T > static cudaError_t
launch_gauss (const CqSsimCuda * cu, int mode, const cq::SsimParams & p,
    dim3 grid, cudaStream_t stream, bool overlap)
{
  const GaussKernel k = gauss_kernel < T > (cu, mode, p);

  return cq_cuda_launch (k.fn, grid, dim3 (k.threads), stream, overlap, p);
}

/* overlap: the pair's kernel may start while the previous pair's finishes
 * (cq_cuda_launch); the kernels of before issue 14 never do. */
template < typename T > static cudaError_t
launch_tiles (const CqSsimCuda * cu, const cq::SsimParams & p, dim3 grid,
    cudaStream_t stream, bool overlap)
{
  const dim3 block (cq::kSsimThreads);

  if (!cu->old_kernels && cu->window == CQ_SSIM_GAUSS11) {
    const bool fused = fused_msssim (cu);

    return launch_gauss < T > (cu, fused ? cq::kGaussBoth : cq::kGaussSsim,
        p, grid, stream, overlap);
  }
  switch (cu->window) {
    case CQ_SSIM_BOX8:
      if constexpr (sizeof (T) == 1) {
        if (!cu->old_kernels && pitches_fit_32 (p))
          return cq_cuda_launch (cq::ssim_box8p_kernel, grid, block, stream,
              overlap, p);
        cq::ssim_box8_kernel < T, int ><<<grid, block, 0, stream>>> (p);
      } else
        cq::ssim_box8_kernel < T, long long ><<<grid, block, 0, stream>>> (p);
      break;
    case CQ_SSIM_FFMPEG:
      return cq_cuda_launch (cq::ssim_ffmpeg_kernel < T >, grid, block,
          stream, overlap, p);
    case CQ_SSIM_GAUSS11:
      cq::ssim_gauss_kernel < T ><<<grid, block, 0, stream>>> (p);
      break;
  }
  return cudaGetLastError ();
}

/* Sample rows a tile row of `rows` starts at, and the rows below its tiles
 * that they also read (the window's reach). */
static unsigned
tile_sample_rows (const CqSsimCuda * cu, unsigned rows)
{
  return cu->window == CQ_SSIM_FFMPEG ? 4 * rows : rows;
}

static unsigned
tile_halo_rows (const CqSsimCuda * cu)
{
  return cu->window == CQ_SSIM_FFMPEG ? 8 : cu->window == CQ_SSIM_BOX8 ?
      7 : 10;
}

/* Sample rows [0, end) that tile rows [0, t1) of `rows` read. */
static unsigned
rows_needed (const CqSsimCuda * cu, const PlaneCtx * pc, unsigned rows,
    unsigned t1)
{
  uint64_t end = (uint64_t) t1 * tile_sample_rows (cu, rows) +
      tile_halo_rows (cu);

  return end < pc->plane.height ? (unsigned) end : pc->plane.height;
}

/* Unpacks rows [r0, r1) of both frames of a plane that is not packed. */
static void
unpack_rows (CqSsimCuda * cu, const PlaneCtx * pc, const unsigned char *ref,
    size_t ref_pitch, const unsigned char *dist, size_t dist_pitch,
    unsigned r0, unsigned r1, cudaStream_t stream)
{
  const CqSsimPlane *pl = &pc->plane;
  const unsigned char *src[2] = { ref, dist };
  const size_t pitch[2] = { ref_pitch, dist_pitch };
  const dim3 block (32, 8);
  const dim3 grid ((pl->width + 31) / 32, (r1 - r0 + 7) / 8);
  int f;

  if (r1 <= r0)
    return;
  for (f = 0; f < 2; f++) {
    cq::UnpackParams u;

    u.src = src[f] + (size_t) r0 * pitch[f];
    u.src_pitch = pitch[f];
    u.dst = pc->unpacked[f] + (size_t) r0 * pc->unpacked_pitch;
    u.dst_pitch = pc->unpacked_pitch;
    u.width = (int) pl->width;
    u.height = (int) (r1 - r0);
    u.kind = pl->layout.kind;
    u.sample_stride = pl->sample_stride;
    u.offset = pl->offset;
    u.shift = pl->layout.shift;
    u.mask = (1u << pl->layout.depth) - 1;
    u.r = pl->layout.r_offset;
    u.g = pl->layout.g_offset;
    u.b = pl->layout.b_offset;
    cq::ssim_unpack_kernel <<<grid, block, 0, stream>>> (u);
  }
}

/* Where the kernels of the pair being submitted write its results: the
 * next slot's mapped host memory. */
static cq::SsimPlaneOut *
results_of (CqSsimCuda * cu)
{
  return cu->out_map[cu->ring.next];
}

/* gauss11's constants C1, C2 into p, with the scaled ones of the sums of
 * doubled samples (cq::g2_windows4). */
static void
gauss_constants (cq::SsimParams & p, double c1, double c2)
{
  p.k1 = c1;
  p.k2 = c2;
  p.g_a1 = 2.0 * c1;
  p.g_b1 = 4.0 * c1;
  p.g_a2 = 2.0 * c2;
  p.g_b2 = 4.0 * c1 + 4.0 * c2;
}

/* Kernel parameters of plane i whose packed samples are at ref/dist. */
static cq::SsimParams
plane_params (CqSsimCuda * cu, unsigned i, const unsigned char *ref,
    size_t ref_pitch, const unsigned char *dist, size_t dist_pitch)
{
  PlaneCtx *pc = &cu->pl[i];
  const CqSsimPlane *pl = &pc->plane;
  const unsigned peak = cq_ssim_peak (pl);
  const size_t align = 4 * pc->bytes;
  cq::SsimParams p;

  if (!pc->packed) {
    ref = pc->unpacked[0];
    dist = pc->unpacked[1];
    ref_pitch = dist_pitch = pc->unpacked_pitch;
  }
  p.a = ref;
  p.b = dist;
  p.pitch_a = ref_pitch;
  p.pitch_b = dist_pitch;
  p.width = (int) pl->width;
  p.height = (int) pl->height;
  /* unpacked samples are already shifted and masked */
  p.shift = pc->packed && pc->bytes == 2 ? pl->layout.shift : 0;
  p.mask = pc->packed && pc->bytes == 2 ? (1u << pl->layout.depth) - 1 :
      0xffffu;
  p.vec = ((uintptr_t) ref % align) == 0 && ((uintptr_t) dist % align) == 0
      && ref_pitch % align == 0 && dist_pitch % align == 0;
  if (cu->window == CQ_SSIM_GAUSS11) {
    double c1, c2;

    cq_ssim_window_constants (pl, CQ_SSIM_GAUSS11, &c1, &c2);
    gauss_constants (p, c1, c2);
  } else
    cq_ssim_window_constants (pl, CQ_SSIM_BOX8, &p.k1, &p.k2);
  p.c1 = CQ_SSIM_FFMPEG_C1 (peak);
  p.c2 = CQ_SSIM_FFMPEG_C2 (peak);
  p.rows = (int) pc->rows;
  p.tile_y0 = 0;
  p.total_blocks = pc->grid.x * pc->grid.y;
  {
    const unsigned set = pc->seq % cq::kFrameSets;
    unsigned long long *base = set_base (pc, set);

    p.partials = (double *) base;
    p.partials2 = fused_msssim (cu) ? p.partials + pc->set_blocks : NULL;
    p.sse_accum = base + 2 * pc->set_blocks;
    p.counter = cq::frame_set_counter (base, set_words (pc));
    p.released = p.counter + 1;
    p.claim = pc->seq - cq::kFrameSets;
    p.seq = pc->seq;
  }
  p.out = results_of (cu) + i;
  p.out2 = results_of (cu) + MS_OUT (i, 0);
  return p;
}

/* Launches tile rows [t0, t1) of a plane tiled as tiles; the last band
 * also adds the SSE of ffmpeg's unaligned edges first, so the final block
 * sees it. */
static CqStatus
launch_band (CqSsimCuda * cu, unsigned i, cq::SsimParams p, dim3 tiles,
    unsigned t0, unsigned t1, cudaStream_t stream, bool overlap,
    CqError * err)
{
  PlaneCtx *pc = &cu->pl[i];
  const dim3 grid (tiles.x, t1 - t0);

  p.tile_y0 = (int) t0;
  if (t1 == tiles.y && cu->window == CQ_SSIM_FFMPEG
      && (p.width % 4 || p.height % 4)) {
    if (pc->bytes == 2)
      cq::ssim_sse_rest_kernel < unsigned short ><<<32, 256, 0, stream>>> (p);
    else
      cq::ssim_sse_rest_kernel < unsigned char ><<<32, 256, 0, stream>>> (p);
  }
  cudaError_t e = pc->bytes == 2 ?
      launch_tiles < unsigned short > (cu, p, grid, stream, overlap) :
      launch_tiles < unsigned char > (cu, p, grid, stream, overlap);

  CQ_CUDA_TRY (e == cudaSuccess ? cudaGetLastError () : e, err,
      "cannot launch the SSIM kernels");
  return CQ_OK;
}

/* MS-SSIM's passes of a plane, one after the other in the stream, share
 * one set of accumulators: each waits for the pass before to release it. */
static void
ms_pass_params (PlaneCtx * pc, cq::SsimParams * p)
{
  p->partials = pc->ms_partials;
  p->sse_accum = pc->ms_sse_accum;
  p->counter = pc->ms_counter;
  p->released = pc->ms_released;
  p->claim = pc->ms_seq - 1;
  p->seq = pc->ms_seq++;
}

/* MS-SSIM of plane i whose scale-1 samples p1 (plane_params) reads: at
 * each scale the gauss11 kernel into its own result entry, then the 2x2
 * averages into the next scale's doubles. */
static CqStatus
enqueue_msssim_old (CqSsimCuda * cu, unsigned i, const cq::SsimParams & p1,
    cudaStream_t stream, CqError * err)
{
  PlaneCtx *pc = &cu->pl[i];
  const dim3 block (cq::kSsimThreads), down_block (32, 8);
  cq::SsimParams p = p1;
  unsigned s;

  cq_ssim_window_constants (&pc->plane, CQ_SSIM_GAUSS11, &p.k1, &p.k2);
  p.rows = cq::kGaussRows;
  p.tile_y0 = 0;
  for (s = 0; s < CQ_MSSSIM_SCALES; s++) {
    const int w = (int) (pc->plane.width >> s), h = (int) (pc->plane.height
        >> s);
    const dim3 grid ((w + cq::kGaussCols - 1) / cq::kGaussCols,
        (h + cq::kGaussRows - 1) / cq::kGaussRows);
    const bool cs = s + 1 < CQ_MSSSIM_SCALES;

    p.width = w;
    p.height = h;
    p.total_blocks = grid.x * grid.y;
    p.out = results_of (cu) + MS_OUT (i, s);
    ms_pass_params (pc, &p);
    if (s > 0 && cs)
      cq::ssim_gauss_kernel < double, true ><<<grid, block, 0, stream>>> (p);
    else if (s > 0)             /* the last scale sums SSIM */
      cq::ssim_gauss_kernel < double, false ><<<grid, block, 0, stream>>> (p);
    else if (pc->bytes == 2)
      cq::ssim_gauss_kernel < unsigned short, true ><<<grid, block, 0,
          stream>>> (p);
    else
      cq::ssim_gauss_kernel < unsigned char, true ><<<grid, block, 0,
          stream>>> (p);
    if (!cs)
      break;
    {
      cq::DownParams d;
      const dim3 down_grid ((w / 2 + 31) / 32, (h / 2 + 7) / 8);

      d.in = p;
      d.out_a = pc->ms[s % 2][0];
      d.out_b = pc->ms[s % 2][1];
      d.out_pitch = pc->ms_pitch;
      d.out_width = w / 2;
      d.out_height = h / 2;
      if (s > 0)
        cq::msssim_down_kernel < double ><<<down_grid, down_block, 0,
            stream>>> (d);
      else if (pc->bytes == 2)
        cq::msssim_down_kernel < unsigned short ><<<down_grid, down_block, 0,
            stream>>> (d);
      else
        cq::msssim_down_kernel < unsigned char ><<<down_grid, down_block, 0,
            stream>>> (d);
      p.a = (const unsigned char *) d.out_a;
      p.b = (const unsigned char *) d.out_b;
      p.pitch_a = p.pitch_b = pc->ms_pitch;
    }
  }
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the MS-SSIM kernels");
  return CQ_OK;
}

/* Rows a gauss11 tile walks at an MS-SSIM scale: the default where the
 * grid has blocks enough to fill the device a few times, fewer (down to 8)
 * on the small scales, whose few large tiles would otherwise run alone. */
static unsigned
msssim_tile_rows (unsigned w, unsigned h)
{
  const unsigned gx = (w + cq::kG2Cols - 1) / cq::kG2Cols;
  unsigned rows = cq::kGaussRows;

  while (rows > 8 && gx * ((h + rows - 1) / rows) < 400)
    rows /= 2;
  return rows;
}

/* MS-SSIM of plane i whose scale-1 samples p1 (plane_params) reads: the
 * contrast-structure sum of scale 1 (unless the gauss11 pass took it), the
 * integer sums of scales 2 to 5 in one kernel, then each scale's gauss11
 * pass on them with C1, C2 scaled by 16^s (its means are 4^s, its
 * (co)variances 16^s times the CPU's, exactly: powers of two). */
static CqStatus
enqueue_msssim (CqSsimCuda * cu, unsigned i, const cq::SsimParams & p1,
    cudaStream_t stream, CqError * err)
{
  PlaneCtx *pc = &cu->pl[i];
  const unsigned W = pc->plane.width, H = pc->plane.height;
  double c1, c2;
  cq::SsimParams p = p1;
  unsigned s;

  if (!cu->msssim)
    return CQ_OK;
  if (cu->old_kernels)
    return enqueue_msssim_old (cu, i, p1, stream, err);
  cq_ssim_window_constants (&pc->plane, CQ_SSIM_GAUSS11, &c1, &c2);
  gauss_constants (p, c1, c2);
  p.tile_y0 = 0;
  p.partials2 = NULL;
  if (!fused_msssim (cu)) {
    const unsigned rows = msssim_tile_rows (W, H);
    const dim3 grid ((W + cq::kG2Cols - 1) / cq::kG2Cols,
        (H + rows - 1) / rows);

    p.rows = (int) rows;
    p.total_blocks = grid.x * grid.y;
    p.out = results_of (cu) + MS_OUT (i, 0);
    ms_pass_params (pc, &p);
    /* errors: cudaGetLastError after the chain */
    if (pc->bytes == 2)
      (void) launch_gauss < unsigned short > (cu, cq::kGaussCs, p, grid,
          stream, false);
    else
      (void) launch_gauss < unsigned char > (cu, cq::kGaussCs, p, grid,
          stream, false);
  }
  {
    cq::PyrParams d;
    const dim3 block (32, 8), grid ((W / 2 + 31) / 32, (H / 2 + 7) / 8);

    d.in = p1;
    for (s = 1; s < CQ_MSSSIM_SCALES; s++) {
      d.out[s - 1][0] = pc->msk[s - 1][0];
      d.out[s - 1][1] = pc->msk[s - 1][1];
      d.pitch[s - 1] = pc->msk_pitch[s - 1];
      d.w[s - 1] = (int) (W >> s);
      d.h[s - 1] = (int) (H >> s);
    }
    if (pc->bytes == 2)
      cq::msssim_pyramid_kernel < unsigned short ><<<grid, block, 0,
          stream>>> (d);
    else
      cq::msssim_pyramid_kernel < unsigned char ><<<grid, block, 0,
          stream>>> (d);
  }
  p.shift = 0;
  p.mask = 0xffffffffu;
  for (s = 1; s < CQ_MSSSIM_SCALES; s++) {
    const unsigned w = W >> s, h = H >> s, rows = msssim_tile_rows (w, h);
    const dim3 grid ((w + cq::kG2Cols - 1) / cq::kG2Cols,
        (h + rows - 1) / rows);
    const double scale = (double) (1u << (4 * s));      /* 16^s */

    p.a = (const unsigned char *) pc->msk[s - 1][0];
    p.b = (const unsigned char *) pc->msk[s - 1][1];
    p.pitch_a = p.pitch_b = pc->msk_pitch[s - 1];
    p.width = (int) w;
    p.height = (int) h;
    gauss_constants (p, c1 * scale, c2 * scale);
    p.rows = (int) rows;
    p.total_blocks = grid.x * grid.y;
    p.out = results_of (cu) + MS_OUT (i, s);
    ms_pass_params (pc, &p);
    (void) launch_gauss < unsigned int > (cu, s + 1 < CQ_MSSSIM_SCALES ?
        cq::kGaussCs : cq::kGaussSsim, p, grid, stream, false);
  }
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the MS-SSIM kernels");
  return CQ_OK;
}

/* Enqueues plane i of a pair already in device memory, in one band; its
 * kernel may overlap the previous pair's where nothing else comes between
 * them in the stream (no copy: the caller says, no unpacking). */
static CqStatus
enqueue_plane (CqSsimCuda * cu, unsigned i, const unsigned char *ref,
    size_t ref_pitch, const unsigned char *dist, size_t dist_pitch,
    bool copied, CqError * err)
{
  PlaneCtx *pc = &cu->pl[i];

  const cq::SsimParams p = plane_params (cu, i, ref, ref_pitch, dist,
      dist_pitch);
  CqStatus ret;

  if (!pc->packed)
    unpack_rows (cu, pc, ref, ref_pitch, dist, dist_pitch, 0,
        pc->plane.height, cu->stream);
  ret = launch_band (cu, i, p, pc->grid, 0, pc->grid.y, cu->stream,
      cu->overlap && pc->packed && !copied, err);
  if (ret != CQ_OK)
    return ret;
  /* only a launched pair releases its set */
  pc->seq++;
  return enqueue_msssim (cu, i, p, cu->stream, err);
}

/* The pair is pending once its end is recorded (its results are written
 * into its slot by the kernels). */
static CqStatus
end_submit (CqSsimCuda * cu, CqError * err)
{
  return cq_slot_ring_submitted (&cu->ring, cu->stream,
      "cannot record the end of a pair", err);
}

extern "C" unsigned
cq_ssim_cuda_pending (const CqSsimCuda * cu)
{
  return cu->ring.pending;
}

extern "C" CqStatus
cq_ssim_cuda_collect (CqSsimCuda * cu, CqSsimPlaneSums * sums, CqError * err)
{
  unsigned i, slot;
  const cq::SsimPlaneOut *out;

  if (cq_slot_ring_oldest (&cu->ring, &slot, "pair", err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  out = cu->out_host[slot];
  CQ_CUDA_ENTER (cu->target, err);
  CQ_CUDA_TRY (cudaEventSynchronize (cu->ring.done[slot]), err,
      "the SSIM kernels failed");
  for (i = 0; i < cu->n_planes; i++) {
    const CqSsimPlane *p = &cu->pl[i].plane;

    sums[i].ssim_sum = out[i].ssim_sum;
    sums[i].sse = out[i].sse;
    sums[i].windows = cq_ssim_window_count (cu->window, p->width, p->height);
    sums[i].samples = (uint64_t) p->width * p->height;
    for (unsigned s = 0; s < CQ_MSSSIM_SCALES; s++)
      sums[i].ms_sum[s] = cu->msssim ? out[MS_OUT (i, s)].ssim_sum : 0.0;
  }
  return CQ_OK;
}

extern "C" CqStatus
cq_ssim_cuda_set_msssim (CqSsimCuda * cu, int enable, CqError * err)
{
  cudaError_t e = cudaSuccess;
  const char *what = "cannot allocate the MS-SSIM scales";
  unsigned i;

  if (cu->ring.pending)
    return cq_error_set (err, CQ_ERROR_INVALID,
        "MS-SSIM switched with %u pair(s) in flight", cu->ring.pending);
  {
    CqSsimPlane planes[CQ_SSIM_MAX_PLANES];

    for (i = 0; i < cu->n_planes; i++)
      planes[i] = cu->pl[i].plane;
    if (enable && cq_ssim_msssim_check (planes, cu->n_planes, err) != CQ_OK)
      return err ? err->status : CQ_ERROR_INVALID;
  }
  CQ_CUDA_ENTER (cu->target, err);
  for (i = 0; enable && i < cu->n_planes && e == cudaSuccess; i++) {
    PlaneCtx *pc = &cu->pl[i];
    const unsigned w = pc->plane.width / 2, h = pc->plane.height / 2;
    /* the old kernels' tiles, or the fused gauss11 pass at any tile rows
     * (cq_ssim_cuda_set_tile_rows) */
    const unsigned blocks = ((pc->plane.width + cq::kGaussCols - 1) /
        cq::kGaussCols) * (cu->old_kernels ? (pc->plane.height +
            cq::kGaussRows - 1) / cq::kGaussRows : pc->plane.height);

    if (pc->ms[0][0] || pc->msk[0][0])
      continue;
    if (cu->old_kernels) {
      e = cudaMallocPitch ((void **) &pc->ms[0][0], &pc->ms_pitch,
          (size_t) w * sizeof (double), 4 * (size_t) h);
    } else {
      size_t total = 0, off[CQ_MSSSIM_SCALES - 1];
      unsigned s;

      for (s = 1; s < CQ_MSSSIM_SCALES; s++) {
        pc->msk_pitch[s - 1] = (((size_t) (pc->plane.width >> s) *
                sizeof (unsigned)) + 255) & ~(size_t) 255;
        off[s - 1] = total;
        total += 2 * pc->msk_pitch[s - 1] * (pc->plane.height >> s);
      }
      e = cudaMalloc ((void **) &pc->msk[0][0], total);
      for (s = 1; s < CQ_MSSSIM_SCALES && e == cudaSuccess; s++) {
        unsigned char *b = (unsigned char *) pc->msk[0][0] + off[s - 1];

        pc->msk[s - 1][0] = (unsigned *) b;
        pc->msk[s - 1][1] = (unsigned *) (b + pc->msk_pitch[s - 1] *
            (pc->plane.height >> s));
      }
    }
    if (e == cudaSuccess && cu->old_kernels) {
      pc->ms[0][1] = (double *) ((unsigned char *) pc->ms[0][0] +
          pc->ms_pitch * h);
      pc->ms[1][0] = (double *) ((unsigned char *) pc->ms[0][0] +
          2 * pc->ms_pitch * h);
      pc->ms[1][1] = (double *) ((unsigned char *) pc->ms[0][0] +
          3 * pc->ms_pitch * h);
    }
    if (e == cudaSuccess) {
      e = cudaMalloc ((void **) &pc->ms_partials, blocks * sizeof (double) +
          2 * sizeof (unsigned long long));
    }
    if (e == cudaSuccess) {
      pc->ms_sse_accum = (unsigned long long *) (pc->ms_partials + blocks);
      pc->ms_counter = (unsigned *) (pc->ms_sse_accum + 1);
      pc->ms_released = pc->ms_counter + 1;
      pc->ms_seq = 0;
      /* zeroed (released: pass -1) on the compute stream, before any
       * kernel that reads them */
      e = cudaMemsetAsync (pc->ms_sse_accum, 0,
          sizeof (unsigned long long) + sizeof (unsigned), cu->stream);
      if (e == cudaSuccess)
        e = cudaMemsetAsync (pc->ms_released, 0xff, sizeof (unsigned),
            cu->stream);
    }
  }
  if (e != cudaSuccess)
    return cq_cuda_error_for (err, e, what, "planes of %ux%u",
        cu->pl[0].plane.width, cu->pl[0].plane.height);
  cu->msssim = enable;
  return CQ_OK;
}

static CqStatus
check_strides (CqSsimCuda * cu, const size_t * ref_strides,
    const size_t * dist_strides, CqError * err)
{
  unsigned i;

  for (i = 0; i < cu->n_planes; i++)
    if (ref_strides[i] < cu->pl[i].row_bytes
        || dist_strides[i] < cu->pl[i].row_bytes)
      return cq_error_set (err, CQ_ERROR_INVALID,
          "plane %u: row strides %zu and %zu are shorter than a row of %u "
          "samples (%zu bytes)", i, ref_strides[i], dist_strides[i],
          cu->pl[i].plane.width, cu->pl[i].row_bytes);
  return CQ_OK;
}

/* Uploads rows [r0, r1) of a host plane on the copy stream: directly when
 * pinned, else through the pinned staging area at *stage (the CPU copy of
 * this band overlaps the DMA of the previous one). */
static CqStatus
upload_rows (CqSsimCuda * cu, unsigned char *dst, size_t dst_pitch,
    const unsigned char *src, size_t src_stride, int pinned, size_t row_bytes,
    unsigned r0, unsigned r1, unsigned char **stage, CqError * err)
{
  const unsigned n = r1 - r0;

  if (n == 0)
    return CQ_OK;
  src += (size_t) r0 * src_stride;
  dst += (size_t) r0 * dst_pitch;
  if (!pinned) {
    unsigned char *s = *stage;

    cq_copy_rows (s, row_bytes, src, src_stride, row_bytes, n);
    src = s;
    src_stride = row_bytes;
    *stage += (size_t) n * row_bytes;
  }
  CQ_CUDA_TRY (cudaMemcpy2DAsync (dst, dst_pitch, src, src_stride, row_bytes,
          n, cudaMemcpyHostToDevice, cu->copy_stream), err,
      "cannot upload a plane");
  return CQ_OK;
}

/* Host frames: each plane goes up in bands of tile rows on the copy stream;
 * the kernels of a band start on the compute stream as soon as the rows
 * they read have arrived, so compute hides behind the transfer. */
extern "C" CqStatus
cq_ssim_cuda_submit_host (CqSsimCuda * cu, const void *const *ref,
    const size_t * ref_strides, const void *const *dist,
    const size_t * dist_strides, CqError * err)
{
  const unsigned slot = cu->ring.next;
  unsigned char *stage = cu->staging[slot];
  unsigned i, ev = 0;

  if (check_strides (cu, ref_strides, dist_strides, err) != CQ_OK
      || cq_slot_ring_check (&cu->ring, "pair", err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  for (i = 0; i < cu->n_planes; i++) {
    PlaneCtx *pc = &cu->pl[i];
    const unsigned char *hr = (const unsigned char *) ref[i];
    const unsigned char *hd = (const unsigned char *) dist[i];
    const int pin_r = cq_cuda_is_pinned (hr), pin_d = cq_cuda_is_pinned (hd);
    unsigned char *const *frame = pc->frame[slot];
    const unsigned tiles = pc->host_grid.y;
    /* a band's uploads should outlast the ~15 µs of API calls it costs */
    const uint64_t pair_bytes = 2 * (uint64_t) pc->row_bytes * pc->plane.height;
    uint64_t want = pair_bytes / BAND_BYTES;
    const unsigned bands = (unsigned) (want < 1 ? 1 : want > MAX_BANDS ?
        MAX_BANDS : want > tiles ? tiles : want);
    cq::SsimParams p = plane_params (cu, i, frame[0], pc->frame_pitch,
        frame[1], pc->frame_pitch);
    unsigned b, uploaded = 0, t0 = 0;

    p.rows = (int) pc->host_rows;
    p.total_blocks = pc->host_grid.x * pc->host_grid.y;

    for (b = 0; b < bands; b++, ev++) {
      unsigned t1 = (unsigned) ((uint64_t) tiles * (b + 1) / bands);
      unsigned need = rows_needed (cu, pc, pc->host_rows, t1);
      CqStatus ret;

      ret = upload_rows (cu, frame[0], pc->frame_pitch, hr,
          ref_strides[i], pin_r, pc->row_bytes, uploaded, need, &stage, err);
      if (ret == CQ_OK)
        ret = upload_rows (cu, frame[1], pc->frame_pitch, hd,
            dist_strides[i], pin_d, pc->row_bytes, uploaded, need, &stage,
            err);
      if (ret != CQ_OK)
        return ret;
      CQ_CUDA_TRY (cudaEventRecord (cu->events[ev], cu->copy_stream), err,
          "cannot record an upload event");
      CQ_CUDA_TRY (cudaStreamWaitEvent (cu->stream, cu->events[ev], 0), err,
          "cannot order the kernels after the upload");
      if (!pc->packed)
        unpack_rows (cu, pc, frame[0], pc->frame_pitch, frame[1],
            pc->frame_pitch, uploaded, need, cu->stream);
      uploaded = need;
      if (t1 > t0) {
        ret = launch_band (cu, i, p, pc->host_grid, t0, t1, cu->stream,
            false, err);
        if (ret != CQ_OK)
          return ret;
      }
      t0 = t1;
    }
    pc->seq++;
    if (enqueue_msssim (cu, i, p, cu->stream, err) != CQ_OK)
      return err ? err->status : CQ_ERROR_CUDA;
  }
  return end_submit (cu, err);
}

/* Enqueues every plane of a pair in device memory. Packed planes are read
 * in place; one whose rows are not aligned for vector loads is read with
 * scalar loads. */
static CqStatus
enqueue_device (CqSsimCuda * cu, const void *const *ref,
    const size_t * ref_pitches, const void *const *dist,
    const size_t * dist_pitches, CqError * err)
{
  unsigned i;

  for (i = 0; i < cu->n_planes; i++) {
    PlaneCtx *pc = &cu->pl[i];
    const unsigned char *src[2] = { (const unsigned char *) ref[i],
      (const unsigned char *) dist[i]
    };
    size_t pitch[2] = { ref_pitches[i], dist_pitches[i] };
    bool copied = false;
    CqStatus ret;
    int f;

    /* 16-bit samples must be 2-byte aligned to be read in place */
    for (f = 0; f < 2 && pc->packed && pc->bytes == 2; f++) {
      if ((uintptr_t) src[f] % 2 == 0 && pitch[f] % 2 == 0)
        continue;
      CQ_CUDA_TRY (cudaMemcpy2DAsync (pc->frame[cu->ring.next][f],
              pc->frame_pitch, src[f],
              pitch[f], pc->row_bytes, pc->plane.height,
              cudaMemcpyDeviceToDevice, cu->stream), err,
          "cannot copy a misaligned plane on the device");
      src[f] = pc->frame[cu->ring.next][f];
      pitch[f] = pc->frame_pitch;
      copied = true;
    }
    ret = enqueue_plane (cu, i, src[0], pitch[0], src[1], pitch[1], copied,
        err);
    if (ret != CQ_OK)
      return ret;
  }
  return CQ_OK;
}

extern "C" CqStatus
cq_ssim_cuda_after_upload (CqSsimCuda * cu, CqFramesCuda * frames,
    unsigned frame, CqError * err)
{
  CQ_CUDA_ENTER (cu->target, err);
  CQ_CUDA_TRY (cudaStreamWaitEvent (cu->stream, cq_frames_cuda_event (frames,
              frame), 0), err, "cannot order the pair after its upload");
  return CQ_OK;
}

extern "C" CqStatus
cq_ssim_cuda_submit_device (CqSsimCuda * cu, const void *const *ref,
    const size_t * ref_pitches, const void *const *dist,
    const size_t * dist_pitches, CqError * err)
{
  CqStatus ret;

  if (check_strides (cu, ref_pitches, dist_pitches, err) != CQ_OK
      || cq_slot_ring_check (&cu->ring, "pair", err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  ret = enqueue_device (cu, ref, ref_pitches, dist, dist_pitches, err);
  if (ret != CQ_OK)
    return ret;
  return end_submit (cu, err);
}

extern "C" CqStatus
cq_ssim_cuda_time_device (CqSsimCuda * cu, const void *const *ref,
    const size_t * ref_pitches, const void *const *dist,
    const size_t * dist_pitches, unsigned iterations, double *us,
    CqError * err)
{
  float ms = 0;
  CqStatus ret;

  if (check_strides (cu, ref_pitches, dist_pitches, err) != CQ_OK)
    return err ? err->status : CQ_ERROR_INVALID;
  CQ_CUDA_ENTER (cu->target, err);
  ret = cq_cuda_time (cu->stream, iterations,[&]() {
        return enqueue_device (cu, ref, ref_pitches, dist, dist_pitches, err);
      }, &ms, err);
  if (ret == CQ_OK)
    *us = ms * 1e3 / iterations;
  return ret;
}

extern "C" CqStatus
cq_ssim_cuda_set_tile_rows (CqSsimCuda * cu, unsigned rows, CqError * err)
{
  unsigned i;

  if (rows < 1)
    return cq_error_set (err, CQ_ERROR_INVALID, "tile rows must be >= 1");
  for (i = 0; i < cu->n_planes; i++) {
    cu->pl[i].rows = cu->pl[i].host_rows = rows;
    cu->pl[i].grid = cu->pl[i].host_grid = plane_grid (cu->window,
        &cu->pl[i].plane, rows);
  }
  return CQ_OK;
}
