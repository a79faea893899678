/* GStreamer CUDA video quality: frame alignment by content.
 *
 * For the pairing (gstcudaqapairing.h) when the distorted stream's
 * timestamps say nothing about which reference frame it shows (an encoder
 * that started late, restamped from 0, dropped or repeated frames). The
 * reference frames go through a ring; each distorted frame is compared
 * with those within `window` frames of where the current offset puts it
 * (mean squared difference of reduced-resolution luma, or of the first
 * component), the best match wins if it beats the second best by the
 * relative margin ((second - best) / second >= min-margin); otherwise the
 * offset stays (static content) and the frame counts as undecided.
 *
 * Offsets are in frames: distorted frame m pairs with reference frame
 * m + offset. Every change is posted as a `cudassim-aligned` element
 * message (the name is the element's message name + "-aligned").
 *
 * The ring holds the reference buffers themselves (a reference each, so
 * in whatever memory they came: host, or CUDAMemory on the CUDA backend),
 * plus a thumbnail each in the compute library's search object
 * (cq-align.h): in device memory on the CUDA backend, made from the frame
 * in place (CUDAMemory) or from its device copy (system memory: the frame
 * then carries the copy, which the SSIM of its pair reads as well); in
 * host memory, through a read mapping, on the CPU backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_ALIGN_H__
#define __GST_CUDA_QA_ALIGN_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstcudaqadevice.h"

G_BEGIN_DECLS

typedef enum
{
  GST_CUDA_QA_ALIGN_NONE,       /* pair by running time */
  GST_CUDA_QA_ALIGN_START,      /* find the offset once, then keep it */
  GST_CUDA_QA_ALIGN_CONTINUOUS  /* search at every frame */
} GstCudaQaAlignMode;

#define GST_TYPE_CUDA_QA_ALIGN_MODE (gst_cuda_qa_align_mode_get_type ())
GType gst_cuda_qa_align_mode_get_type (void);

typedef struct _GstCudaQaAlign GstCudaQaAlign;

GstCudaQaAlign *gst_cuda_qa_align_new (GstElement * element,
    const gchar * message_name);
void gst_cuda_qa_align_free (GstCudaQaAlign * align);

/* The element's device helper (borrowed, may be NULL): when it measures
 * on CUDA, frames are searched on the device: CUDAMemory in place, system
 * memory from device copies that the element's measurement reads too
 * (gstcudaqaupload.h; of the planes it measures: luma, or all). */
void gst_cuda_qa_align_set_device (GstCudaQaAlign * align,
    GstCudaQaDevice * dev, gboolean luma);

/* The element stops: the ring empties and the search's objects (device
 * memory included) go. */
void gst_cuda_qa_align_stop (GstCudaQaAlign * align);

/* A new stream: empties the ring, offset and counts to zero, with these
 * settings. */
void gst_cuda_qa_align_reset (GstCudaQaAlign * align, GstCudaQaAlignMode mode,
    guint window, gdouble min_margin);

/* Whether the ring wants the next reference frame: it ends fewer than
 * `window` frames after the next distorted frame's reference frame. */
gboolean gst_cuda_qa_align_wants_reference (GstCudaQaAlign * align);

/* Whether every reference frame the next distorted frame may match is in
 * the ring. */
gboolean gst_cuda_qa_align_ready (GstCudaQaAlign * align);

/* Takes ref (a reference of its own) into the ring; rt: its running time;
 * info: the stream format the thumbnail is read with. Reference frames
 * that fell out of every future window leave the ring: the unpaired ones
 * are added to *unpaired. */
void gst_cuda_qa_align_push_reference (GstCudaQaAlign * align, GstBuffer * ref,
    GstClockTime rt, const GstVideoInfo * info, guint64 * unpaired);

/* The frames due next on each pad (their heads, peeked; NULL: none; info:
 * the format): with device copies they go up now, the distorted one
 * first, so that their DMA overlaps the host's work until a search reads
 * them; on CUDA the distorted frame's search is queued as well (its match
 * collects it if the ring has not changed since). */
void gst_cuda_qa_align_prefetch (GstCudaQaAlign * align, GstBuffer * ref,
    GstBuffer * dist, const GstVideoInfo * info);

/* Matches the next distorted frame (dist, at running time rt): returns a
 * new reference to the reference frame it pairs with, NULL when that frame
 * is not in the ring (the stream ended before it). Posts the message when
 * the offset changes. */
GstBuffer *gst_cuda_qa_align_match (GstCudaQaAlign * align, GstBuffer * dist,
    GstClockTime rt, const GstVideoInfo * info);

/* End of the reference frames: the ring empties; the unpaired ones are
 * added to *unpaired. */
void gst_cuda_qa_align_flush (GstCudaQaAlign * align, guint64 * unpaired);

/* Extra latency for live streams: window frames of info's rate. */
GstClockTime gst_cuda_qa_align_latency (GstCudaQaAlign * align,
    const GstVideoInfo * info);

/* The counts, into the summary: align (string), offset-frames (gint64, the
 * last), offset-changes, dropped-frames, repeated-frames,
 * undecided-frames (guint64). */
void gst_cuda_qa_align_summary (GstCudaQaAlign * align, GstStructure * s);

G_END_DECLS
#endif /* __GST_CUDA_QA_ALIGN_H__ */
