/* GStreamer CUDA video quality: the device plumbing every element shares.
 *
 * One helper per element instance, created in its init: which backend
 * measures (a CUDA device or the CPU), GStreamer's shared CUDA context
 * (set_context, CONTEXT queries, found or created at start), the compute
 * library's CUDA object opened in a context (the element's, or that of the
 * memory arriving) with that context's push/pop as the library's hooks,
 * the backend's error reports, and the frames in flight between a
 * library's submit and collect. The element keeps its measure, its formats
 * and its reports.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_DEVICE_H__
#define __GST_CUDA_QA_DEVICE_H__

#include <gst/gst.h>

#include "gstcudaqabackend.h"
#include "gstcudaqacuda.h"
#include "cq-common.h"

G_BEGIN_DECLS

typedef struct _GstCudaQaDevice GstCudaQaDevice;

typedef struct
{
  /* Creates the element's CUDA object where target says (NULL, err set,
   * on failure) and frees it; the library enters target itself. */
  gpointer (*open) (GstElement * element, const CqCudaTarget * target,
      CqError * err);
  GDestroyNotify close;

  /* Frames in flight, for measuring elements (item_size 0: none). An item
   * is the element's record of a frame being measured, copied in. */
  gsize item_size;
  /* Collects the item's results, reports them, releases the item and hands
   * its output buffer back in *out (NULL if it has none). */
  GstFlowReturn (*complete) (GstElement * element, gpointer item,
      GstBuffer ** out);
  /* Releases an item unmeasured. */
  void (*forget) (gpointer item);
  /* Sends a completed buffer downstream. */
  GstFlowReturn (*push) (GstElement * element, GstBuffer * buf);
} GstCudaQaDeviceFuncs;

/* funcs must outlive the helper (a static table). Makes the element's
 * set_context go through the helper (see _install). */
GstCudaQaDevice *gst_cuda_qa_device_new (GstElement * element,
    const GstCudaQaDeviceFuncs * funcs);
void gst_cuda_qa_device_free (GstCudaQaDevice * dev);

/* In class_init: GstElement::set_context of the class goes to the
 * instance's helper (with its `cuda-device-id` property), then to the
 * parent class. */
void gst_cuda_qa_device_install (GstElementClass * klass);

/* start: chooses the backend (gst_cuda_qa_backend_choose) and, on CUDA,
 * finds or creates the shared context; frames_in_flight -1 holds one frame
 * on CUDA and none on the CPU. FALSE: an error was posted. */
gboolean gst_cuda_qa_device_start (GstCudaQaDevice * dev,
    GstCudaQaBackend backend, gint device_id, gint frames_in_flight);
/* stop: frames in flight dropped, the CUDA object closed, the context let
 * go. */
void gst_cuda_qa_device_stop (GstCudaQaDevice * dev);

/* A `cuda-device-ids` list: "" (or blanks) gives *n_ids 0 (the element's
 * cuda-device-id then), "all" every device (none present: *n_ids 0, so
 * that backend=auto falls back to the CPU as usual), else numbers such as
 * "0,1" (one may come twice: two workers on a device, for tests). Every
 * id must exist and be usable; FALSE: a RESOURCE error was posted naming
 * the list and the id (SETTINGS for an item that is not a number,
 * NOT_FOUND for a device that does not exist, OPEN_READ_WRITE for one
 * that cannot be used). ids holds CQ_CUDA_MAX_DEVICES. */
gboolean gst_cuda_qa_device_ids (GstCudaQaDevice * dev, const gchar * list,
    gint * ids, guint * n_ids);

gboolean gst_cuda_qa_device_is_cuda (GstCudaQaDevice * dev);
/* The CUDA device chosen at start (that of the shared context), -1 for
 * the CPU. */
gint gst_cuda_qa_device_id (GstCudaQaDevice * dev);
/* "CUDA" or "the CPU", for messages. */
/* Sets `backend` ("cuda" or "cpu") and `device` (what measured, in words)
 * on s: for the summary. */
void gst_cuda_qa_device_describe (GstCudaQaDevice * dev, GstStructure * s);
const gchar *gst_cuda_qa_device_name (GstCudaQaDevice * dev);
/* The shared context (borrowed), NULL without one. */
GstCudaContext *gst_cuda_qa_device_context (GstCudaQaDevice * dev);
/* Answers CONTEXT queries with the shared context (TRUE: answered). */
gboolean gst_cuda_qa_device_query (GstCudaQaDevice * dev, GstQuery * query);

/* The CUDA object: opened in ctx (NULL: the shared context, or the device
 * without GStreamer's CUDA), closing the one before. */
gboolean gst_cuda_qa_device_open (GstCudaQaDevice * dev, GstCudaContext * ctx,
    CqError * err);
gpointer gst_cuda_qa_device_backend (GstCudaQaDevice * dev);
/* Where the CUDA object lives (or, before it is opened, will by default):
 * for other compute-library objects whose memory it reads. */
void gst_cuda_qa_device_target (GstCudaQaDevice * dev, CqCudaTarget * target);
void gst_cuda_qa_device_close (GstCudaQaDevice * dev);
/* Measures in ctx, the context of the memory arriving: when the CUDA
 * object lives elsewhere, the frames in flight leave and it is opened
 * again there. */
gboolean gst_cuda_qa_device_follow (GstCudaQaDevice * dev,
    GstCudaContext * ctx, CqError * err);

/* The backend could not be set up for `for_what` (printf format):
 * "Out of memory for …" or "Could not set up <what> for …". */
void gst_cuda_qa_device_setup_error (GstCudaQaDevice * dev,
    const CqError * err, const gchar * what, const gchar * for_what, ...)
    G_GNUC_PRINTF (4, 5);
/* Measuring failed: "<what> failed on CUDA" (or the CPU) and the library's
 * message. */
void gst_cuda_qa_device_measure_error (GstCudaQaDevice * dev,
    const CqError * err, const gchar * what, ...) G_GNUC_PRINTF (3, 4);

/* Frames in flight: how many a frame waits for (0 or 1) and how many are. */
guint gst_cuda_qa_device_in_flight (GstCudaQaDevice * dev);
guint gst_cuda_qa_device_n_pending (GstCudaQaDevice * dev);
/* The latency the frames in flight add at fps_n/fps_d (0 when unknown). */
GstClockTime gst_cuda_qa_device_latency (GstCudaQaDevice * dev, gint fps_n,
    gint fps_d);
/* item (copied) started measuring; once more than in_flight are in flight
 * the oldest completes: its buffer in *out, or pushed when out is NULL. */
GstFlowReturn gst_cuda_qa_device_add_pending (GstCudaQaDevice * dev,
    gconstpointer item, GstBuffer ** out);
/* Completes every frame in flight, oldest first: pushed downstream (before
 * an event that must follow them), or reported but dropped (flush). The
 * first failure is returned. */
GstFlowReturn gst_cuda_qa_device_drain (GstCudaQaDevice * dev, gboolean push);
/* Drops every frame in flight unmeasured. */
void gst_cuda_qa_device_forget (GstCudaQaDevice * dev);

G_END_DECLS
#endif /* __GST_CUDA_QA_DEVICE_H__ */
