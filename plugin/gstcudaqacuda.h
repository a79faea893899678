/* GStreamer CUDA video quality: GStreamer's CUDA plumbing for the elements.
 *
 * The elements see GstCudaContext as an opaque GStreamer object and never a
 * CUDA type: sharing the `gst.cuda.context` with nvcodec and each other,
 * making it current around compute-library calls, mapping CUDAMemory for
 * the device, and the pinned host-memory pool offered upstream live here.
 * Without gstreamer-cuda-1.0 at build time, or without a driver and device
 * at run time, the CUDAMemory parts report "not usable" and the elements
 * offer system memory only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_CUDA_H__
#define __GST_CUDA_QA_CUDA_H__

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

typedef struct _GstCudaContext GstCudaContext;

#define GST_CUDA_QA_CAPS_FEATURE "memory:CUDAMemory"

/* TRUE when CUDAMemory can be offered: built with gstreamer-cuda-1.0, its
 * driver loader succeeded, and a CUDA device is present. */
gboolean gst_cuda_qa_cuda_memory_usable (void);

/* caps (taken) without the CUDAMemory structures when they are not usable. */
GstCaps *gst_cuda_qa_caps_filter_usable (GstCaps * caps);

/* Whether the first structure of caps has the CUDAMemory feature. */
gboolean gst_cuda_qa_caps_is_cuda (const GstCaps * caps);

/* Whether caps (may be NULL or ANY: no) names CUDAMemory itself in any
 * structure, rather than taking anything. */
gboolean gst_cuda_qa_caps_names_cuda (const GstCaps * caps);

/* caps (taken) with its CUDAMemory structures first (prefer_device), or
 * without them (!device_ok), else unchanged. */
GstCaps *gst_cuda_qa_caps_order (GstCaps * caps, gboolean device_ok,
    gboolean prefer_device);

/* The shared context: found on neighbours or the application, else created
 * for device_id (-1: any) and announced. FALSE (with a debug line) where
 * CUDAMemory is not usable. */
gboolean gst_cuda_qa_context_ensure (GstElement * element, gint device_id,
    GstCudaContext ** ctx);
/* For GstElement::set_context and for CONTEXT queries (TRUE: answered). */
void gst_cuda_qa_context_set (GstElement * element, GstContext * context,
    gint device_id, GstCudaContext ** ctx);
gboolean gst_cuda_qa_context_query (GstElement * element, GstQuery * query,
    GstCudaContext * ctx);
void gst_cuda_qa_context_clear (GstCudaContext ** ctx);
GstCudaContext *gst_cuda_qa_context_ref (GstCudaContext * ctx);
/* The context's device ordinal, -1 if unknown. */
gint gst_cuda_qa_context_device (GstCudaContext * ctx);

/* Makes ctx current on this thread for the compute library's calls
 * (created with CQ_CUDA_CURRENT_CONTEXT); a NULL ctx is a no-op. */
gboolean gst_cuda_qa_context_push (GstCudaContext * ctx);
void gst_cuda_qa_context_pop (GstCudaContext * ctx);

/* The context of buf's memory when all of it is CUDAMemory, else NULL
 * (borrowed: valid while buf is). */
GstCudaContext *gst_cuda_qa_buffer_context (GstBuffer * buf);

/* Maps a CUDAMemory frame for reading on the device: plane pointers are
 * device addresses, strides the memory's pitches. */
gboolean gst_cuda_qa_frame_map_device (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buf);

/* ... and for writing on the device (a source filling CUDAMemory). */
gboolean gst_cuda_qa_frame_map_device_write (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buf);

/* Maps a frame for reading: as gst_cuda_qa_frame_map_device where device,
 * else with host pointers. */
gboolean gst_cuda_qa_frame_map_read (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buf, gboolean device);

/* For a source's decide_allocation with CUDAMemory caps: puts a pool of
 * gst_cuda_qa_device_pool_new (ctx) for info's frames first in the query
 * (keeping downstream's min/max, at least 2). FALSE: an error was posted. */
gboolean gst_cuda_qa_decide_device_pool (GstElement * element,
    GstQuery * query, GstCudaContext * ctx, const GstVideoInfo * info);

/* A buffer pool of single-plane CUDAMemory frames (GRAY8, GRAY16_LE) in ctx:
 * pitched device rows, described by a GstVideoMeta. GStreamer 1.22's own
 * CUDA pool cannot lay out gray formats. NULL without gstreamer-cuda. */
GstBufferPool *gst_cuda_qa_device_pool_new (GstCudaContext * ctx);

/* The allocator of page-locked (pinned, portable) host memory, NULL without
 * a CUDA device. Transfer full. */
GstAllocator *gst_cuda_qa_pinned_allocator_get (void);

/* Answers an ALLOCATION query for system-memory video caps with a video
 * buffer pool of pinned memory (plus GstVideoMeta), so that a cooperating
 * upstream writes frames the GPU reads at full PCIe speed. FALSE when the
 * caps are not system-memory video or no device exists. */
gboolean gst_cuda_qa_propose_pinned_pool (GstElement * element,
    GstQuery * query);

G_END_DECLS
#endif /* __GST_CUDA_QA_CUDA_H__ */
