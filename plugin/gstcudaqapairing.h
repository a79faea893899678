/* GStreamer CUDA video quality: pairing the frames of two streams.
 *
 * A full-reference element (cudassim) compares each frame of a `distorted`
 * stream with the `reference` frame of the same running time. This helper
 * owns that decision for a GstAggregator with the two sink pads: it peeks
 * both pads, pairs frames whose running times are closer than half a frame
 * of the distorted stream (equal when its rate is unknown), drops reference
 * frames that have no partner, lets distorted frames without one pass,
 * counts both, and keeps the src pad's segment equal to the distorted
 * pad's (so distorted buffers keep their timestamps). A gap is no frame:
 * a reference gap is dropped, a distorted one passes on as a gap buffer;
 * neither is counted as unpaired, both are counted as gaps. Anything that changes
 * which frames pair (an alignment offset, a search for the best match)
 * belongs here, not in the element.
 *
 * With the `align` property (installed by gst_cuda_qa_pairing_install)
 * set to start or continuous, frames pair by content instead
 * (gstcudaqaalign.h): reference frames wait in a ring until no distorted
 * frame can match them; those that never paired count as unpaired
 * reference frames, distorted frames whose match is past the reference
 * stream's end as unpaired distorted ones.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_PAIRING_H__
#define __GST_CUDA_QA_PAIRING_H__

#include <gst/gst.h>
#include <gst/base/gstaggregator.h>
#include <gst/video/video.h>

#include "gstcudaqaalign.h"

G_BEGIN_DECLS

/* How many property IDs the pairing takes: align, align-window,
 * align-margin. */
#define GST_CUDA_QA_PAIRING_N_PROPS 3

typedef enum
{
  GST_CUDA_QA_PAIR_NEED_DATA,   /* wait for more input */
  GST_CUDA_QA_PAIR_EOS,         /* both pads ended, nothing is queued */
  GST_CUDA_QA_PAIR_MATCHED,     /* *ref and *dist are a pair */
  GST_CUDA_QA_PAIR_DISTORTED_ALONE,     /* *dist has no reference frame (or
                                         * is a gap) */
  GST_CUDA_QA_PAIR_REFERENCE_DROPPED    /* a reference frame (or gap) had
                                         * no partner */
} GstCudaQaPairResult;

typedef struct _GstCudaQaPairing GstCudaQaPairing;

/* Adds agg's always sink pads "reference" and "distorted" (from its class's
 * pad templates of those names; borrowed into *reference, *distorted).
 * drain (agg) is called before the src segment changes, so that frames in
 * flight leave in the segment they came in. */
GstCudaQaPairing *gst_cuda_qa_pairing_new (GstAggregator * agg,
    GstFlowReturn (*drain) (GstAggregator * agg),
    GstAggregatorPad ** reference, GstAggregatorPad ** distorted);
void gst_cuda_qa_pairing_free (GstCudaQaPairing * pairing);

/* The element's device helper (borrowed) and whether it measures luma
 * only, for the alignment search (gst_cuda_qa_align_set_device); before
 * a stream starts. */
void gst_cuda_qa_pairing_set_device (GstCudaQaPairing * pairing,
    GstCudaQaDevice * dev, gboolean luma);

/* The element stops: frames held for alignment and its search's
 * resources go. */
void gst_cuda_qa_pairing_stop (GstCudaQaPairing * pairing);

/* Installs the properties align, align-window and align-margin with IDs
 * first_prop_id ... + N_PROPS - 1. */
void gst_cuda_qa_pairing_install (GObjectClass * klass, guint first_prop_id);

/* For set_property / get_property: FALSE when prop_id is not one of the
 * pairing's; otherwise done under the object lock. */
gboolean gst_cuda_qa_pairing_set_property (GstCudaQaPairing * pairing,
    guint first_prop_id, guint prop_id, const GValue * value);
gboolean gst_cuda_qa_pairing_get_property (GstCudaQaPairing * pairing,
    guint first_prop_id, guint prop_id, GValue * value);

/* In class_init: GstElement::change_state of the class refuses to go to
 * PAUSED with a sink pad unlinked (an error naming it), unless an element
 * of the pipeline adds pads as it runs (decodebin, a demuxer: a pad may be
 * linked then), and to PLAYING with one unlinked in any case. Elements
 * outside a bin are not checked. */
void gst_cuda_qa_pairing_install_link_check (GstElementClass * klass);

/* A new stream: the counts back to zero, the properties read. */
void gst_cuda_qa_pairing_reset (GstCudaQaPairing * pairing);

/* Whether frames pair by content (align is not none). */
gboolean gst_cuda_qa_pairing_aligns (GstCudaQaPairing * pairing);

/* The distorted stream's format: with alignment, sets the aggregator's
 * latency to the window (live streams wait for the frames it searches). */
void gst_cuda_qa_pairing_distorted_caps (GstCudaQaPairing * pairing,
    const GstVideoInfo * info);

/* The latency alignment adds (window frames, live streams wait for them). */
GstClockTime gst_cuda_qa_pairing_latency (GstCudaQaPairing * pairing,
    const GstVideoInfo * info);

/* The next step of GstAggregator::aggregate. distorted_info: the distorted
 * stream's format (for its frame rate), NULL before caps. MATCHED: *ref and
 * *dist (both taken) came off their pads and *segment is the distorted
 * pad's; DISTORTED_ALONE: *dist likewise. The src segment's position
 * follows the distorted frames taken. */
GstCudaQaPairResult gst_cuda_qa_pairing_next (GstCudaQaPairing * pairing,
    gboolean timeout, const GstVideoInfo * distorted_info, GstBuffer ** ref,
    GstBuffer ** dist, GstSegment * segment);

/* After a pair was submitted (info: the distorted stream's format): with
 * alignment, the reference frames the next distorted frame's search needs
 * enter the ring, and the frames now at the pads' heads go up and that
 * search is queued (gst_cuda_qa_align_prefetch) while the element
 * completes the pairs before. */
void gst_cuda_qa_pairing_prefetch (GstCudaQaPairing * pairing,
    const GstVideoInfo * info);

/* Whether the streams' formats can be compared (the same format, width
 * and height); else a NEGOTIATION error naming both was posted. */
gboolean gst_cuda_qa_pairing_check_formats (GstCudaQaPairing * pairing,
    const GstVideoInfo * reference, const GstVideoInfo * distorted);

/* Answers a CAPS query on pad (TRUE; FALSE for other queries): a pad's
 * caps steer both upstreams to one format without converting. When the
 * other pad has negotiated: its format and size first, then anything the
 * template allows; when it has not: the first template format its
 * upstream can also produce. Whatever a fixed upstream insists on stays
 * possible, so that a mismatch reaches the element and gets an error
 * naming both streams. */
gboolean gst_cuda_qa_pairing_query_caps (GstCudaQaPairing * pairing,
    GstAggregatorPad * pad, GstQuery * query);

/* The counts, into the summary: unpaired-frames, unpaired-reference,
 * unpaired-distorted, gaps, gaps-reference, gaps-distorted (guint64); with
 * alignment its counts too (gst_cuda_qa_align_summary). */
void gst_cuda_qa_pairing_summary (GstCudaQaPairing * pairing,
    GstStructure * s);

G_END_DECLS
#endif /* __GST_CUDA_QA_PAIRING_H__ */
