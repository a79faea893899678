/* GStreamer CUDA video quality: device copies of system-memory frames.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaqaupload.h"

struct _GstCudaQaUpload
{
  CqFramesCuda *frames;
  CqCudaTarget target;
  GstVideoInfo info;
};

/* What a buffer carries */
typedef struct
{
  CqFramesCuda *frames;         /* a reference */
  guint frame;
  CqCudaTarget target;
} GstCudaQaUploadCopy;

static GQuark
gst_cuda_qa_upload_quark (void)
{
  static gsize quark = 0;

  if (g_once_init_enter (&quark))
    g_once_init_leave (&quark,
        g_quark_from_static_string ("GstCudaQaUploadCopy"));
  return (GQuark) quark;
}

static void
gst_cuda_qa_upload_copy_free (GstCudaQaUploadCopy * copy)
{
  cq_frames_cuda_release (copy->frames, copy->frame);
  cq_frames_cuda_unref (copy->frames);
  g_free (copy);
}

GstCudaQaUpload *
gst_cuda_qa_upload_new (const CqCudaTarget * target,
    const GstVideoInfo * info, const GstCudaQaPlanes * planes,
    guint max_frames, CqError * err)
{
  CqFramesShape shape = { GST_VIDEO_INFO_N_PLANES (info), {0,}, {0,} };
  GstCudaQaUpload *upload;
  CqFramesCuda *frames;
  guint i;

  /* a video plane is kept for the longest row any measured plane reads */
  for (i = 0; i < planes->n; i++) {
    guint vp = planes->video_plane[i];
    gsize row_bytes = cq_ssim_plane_row_bytes (&planes->planes[i]);

    shape.row_bytes[vp] = MAX (shape.row_bytes[vp], row_bytes);
    shape.rows[vp] = MAX (shape.rows[vp], planes->planes[i].height);
  }
  frames = cq_frames_cuda_new_for (target, &shape, max_frames, err);
  if (!frames)
    return NULL;
  upload = g_new0 (GstCudaQaUpload, 1);
  upload->frames = frames;
  upload->target = *target;
  upload->info = *info;
  return upload;
}

void
gst_cuda_qa_upload_free (GstCudaQaUpload * upload)
{
  cq_frames_cuda_unref (upload->frames);
  g_free (upload);
}

CqFramesCuda *
gst_cuda_qa_upload_frames (GstCudaQaUpload * upload)
{
  return upload->frames;
}

CqFramesCuda *
gst_cuda_qa_upload_get (GstBuffer * buf, guint * frame)
{
  GstCudaQaUploadCopy *copy = gst_mini_object_get_qdata (GST_MINI_OBJECT
      (buf), gst_cuda_qa_upload_quark ());

  if (!copy)
    return NULL;
  *frame = copy->frame;
  return copy->frames;
}

gboolean
gst_cuda_qa_upload_frame (GstCudaQaUpload * upload, GstBuffer * buf,
    CqError * err)
{
  const void *data[CQ_FRAMES_MAX_PLANES] = { NULL, };
  size_t strides[CQ_FRAMES_MAX_PLANES] = { 0, };
  GstCudaQaUploadCopy *copy;
  GstVideoFrame vf;
  CqStatus ret;
  guint i, frame;

  if (!gst_video_frame_map (&vf, &upload->info, buf, GST_MAP_READ)) {
    cq_error_set (err, CQ_ERROR_INVALID, "cannot map a %" G_GSIZE_FORMAT
        "-byte buffer as %s", gst_buffer_get_size (buf),
        GST_VIDEO_INFO_NAME (&upload->info));
    return FALSE;
  }
  for (i = 0; i < GST_VIDEO_FRAME_N_PLANES (&vf); i++) {
    data[i] = GST_VIDEO_FRAME_PLANE_DATA (&vf, i);
    strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE (&vf, i);
  }
  /* the DMA reads pinned memory later: the buffer (held by whoever holds
   * the copy) keeps it, unmapped or not */
  ret = cq_frames_cuda_upload (upload->frames, data, strides, &frame, err);
  gst_video_frame_unmap (&vf);
  if (ret != CQ_OK)
    return FALSE;
  copy = g_new (GstCudaQaUploadCopy, 1);
  copy->frames = cq_frames_cuda_ref (upload->frames);
  copy->frame = frame;
  copy->target = upload->target;
  gst_mini_object_set_qdata (GST_MINI_OBJECT (buf),
      gst_cuda_qa_upload_quark (), copy,
      (GDestroyNotify) gst_cuda_qa_upload_copy_free);
  return TRUE;
}

gboolean
gst_cuda_qa_upload_pair (GstBuffer * ref, GstBuffer * dist,
    const CqCudaTarget * target, CqSsimCuda * cuda,
    const GstCudaQaPlanes * planes,
    GstCudaQaPlanePointers * ref_planes, GstCudaQaPlanePointers * dist_planes,
    CqError * err)
{
  GQuark quark = gst_cuda_qa_upload_quark ();
  GstCudaQaUploadCopy *r = gst_mini_object_get_qdata (GST_MINI_OBJECT (ref),
      quark);
  GstCudaQaUploadCopy *d = gst_mini_object_get_qdata (GST_MINI_OBJECT (dist),
      quark);
  guint i;

  if (!r || !d || r->frames != d->frames || r->target.device !=
      target->device || r->target.user != target->user)
    return FALSE;
  /* the measurement's kernels wait for the uploads on the device: the
   * host goes on to queue the next frames' uploads */
  if (cq_ssim_cuda_after_upload (cuda, r->frames, r->frame, err) != CQ_OK
      || cq_ssim_cuda_after_upload (cuda, d->frames, d->frame, err) != CQ_OK)
    return FALSE;
  for (i = 0; i < planes->n; i++) {
    guint vp = planes->video_plane[i];

    cq_frames_cuda_plane (r->frames, r->frame, vp,
        (void **) &ref_planes->data[i], &ref_planes->stride[i]);
    cq_frames_cuda_plane (d->frames, d->frame, vp,
        (void **) &dist_planes->data[i], &dist_planes->stride[i]);
  }
  return TRUE;
}

void
gst_cuda_qa_upload_remove (GstBuffer * buf)
{
  gst_mini_object_set_qdata (GST_MINI_OBJECT (buf),
      gst_cuda_qa_upload_quark (), NULL, NULL);
}

void
gst_cuda_qa_upload_unref (GstBuffer * buf)
{
  /* the last holder: nobody reads the copy any more */
  if (GST_MINI_OBJECT_REFCOUNT_VALUE (buf) == 1)
    gst_cuda_qa_upload_remove (buf);
  gst_buffer_unref (buf);
}
