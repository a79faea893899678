/* GStreamer CUDA video quality: device copies of system-memory frames.
 *
 * On the CUDA backend a system-memory frame that more than one step reads
 * on the GPU (the alignment search's thumbnail, then the SSIM of the pair
 * the search decides) goes up once. The copy (the compute library's
 * cq-frames.h) rides on the buffer as qdata, so that whatever holds the
 * buffer (the alignment ring, a pair in flight) holds the copy; it is
 * taken off by the last of them, or before the buffer leaves the element.
 * The buffer's own memory is not touched: downstream gets it unchanged.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_UPLOAD_H__
#define __GST_CUDA_QA_UPLOAD_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstcudaqaformat.h"
#include "cq-frames.h"

G_BEGIN_DECLS

typedef struct _GstCudaQaUpload GstCudaQaUpload;

/* Copies of frames of info in target's context, of the video planes that
 * planes reads, at most max_frames at a time. NULL (err set) on failure. */
GstCudaQaUpload *gst_cuda_qa_upload_new (const CqCudaTarget * target,
    const GstVideoInfo * info, const GstCudaQaPlanes * planes,
    guint max_frames, CqError * err);
/* Copies still on buffers stay valid. */
void gst_cuda_qa_upload_free (GstCudaQaUpload * upload);

/* Gives buf (system memory, of the upload's format) a new copy, queued on
 * the device (nothing waits), in place of any it had: a buffer of a pool
 * comes back with its old qdata and other content. FALSE (err set): none,
 * the buffer is measured from host memory as before. */
gboolean gst_cuda_qa_upload_frame (GstCudaQaUpload * upload, GstBuffer * buf,
    CqError * err);

/* The device frames upload makes copies in. */
CqFramesCuda *gst_cuda_qa_upload_frames (GstCudaQaUpload * upload);

/* The copy buf carries: its device frames and frame, NULL when none. */
CqFramesCuda *gst_cuda_qa_upload_get (GstBuffer * buf, guint * frame);

/* The device address and pitch of each of planes' planes in the copies of
 * ref and dist, cuda's next submit ordered after their uploads (on the
 * device: the host does not wait); FALSE (nothing set) unless both have
 * copies of one device-frames object made in target's context. err: the
 * ordering failed (then FALSE too). */
gboolean gst_cuda_qa_upload_pair (GstBuffer * ref, GstBuffer * dist,
    const CqCudaTarget * target, CqSsimCuda * cuda,
    const GstCudaQaPlanes * planes,
    GstCudaQaPlanePointers * ref_planes, GstCudaQaPlanePointers * dist_planes,
    CqError * err);

/* Takes buf's copy off (its device frame is free once nothing reads it). */
void gst_cuda_qa_upload_remove (GstBuffer * buf);
/* Unrefs buf, taking its copy off first when this was the last reference:
 * a buffer that goes back to its pool keeps its qdata, and so would hold
 * the device frame until it is used again. */
void gst_cuda_qa_upload_unref (GstBuffer * buf);

G_END_DECLS
#endif /* __GST_CUDA_QA_UPLOAD_H__ */
