/* GStreamer CUDA video quality: the properties every measuring element has.
 *
 * Where to compute (backend, cuda-device-id), how scores leave the
 * element (post-messages, interval, location, log-format) and how they are
 * watched (alert-metric, alert-below, alert-above, alert-frames,
 * alert-clear-frames, metrics-address): installed,
 * stored and read back here, so that every element names, documents and
 * defaults them the same way.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_SETTINGS_H__
#define __GST_CUDA_QA_SETTINGS_H__

#include <gst/gst.h>

#include "gstcudaqabackend.h"
#include "gstcudaqadevice.h"
#include "gstcudaqareport.h"

G_BEGIN_DECLS

typedef struct
{
  GstCudaQaBackend backend;
  gint cuda_device_id;
  gboolean post_messages;
  guint64 interval;
  gchar *location;
  GstCudaQaLogFormat log_format;
  gint frames_in_flight;        /* -1: by backend */
  GstCudaQaAlertConfig alert;
  gchar *metrics_address;
} GstCudaQaSettings;

/* How many property IDs the settings take, from the first one given. */
#define GST_CUDA_QA_SETTINGS_N_PROPS 13

/* Installs the properties with IDs first_prop_id ... + N_PROPS - 1;
 * message_name ("cudassim") goes into the blurbs. */
void gst_cuda_qa_settings_install (GObjectClass * klass, guint first_prop_id,
    const gchar * message_name);

void gst_cuda_qa_settings_init (GstCudaQaSettings * settings);

/* Hands the alert and metrics settings (read under the object lock) to
 * the report for its next start. */
void gst_cuda_qa_settings_configure_report (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaReport * report);
void gst_cuda_qa_settings_clear (GstCudaQaSettings * settings);

/* Starts the device on the backend, cuda-device-id and frames-in-flight
 * read under the object lock (gst_cuda_qa_device_start). */
gboolean gst_cuda_qa_settings_start_device (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaDevice * dev);

/* Hands a frame's scores to the report (gst_cuda_qa_report_frame) with
 * post-messages and interval read under the object lock. */
void gst_cuda_qa_settings_report_frame (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaReport * report, GstBuffer * buf,
    const GstSegment * segment, const gdouble * values);

/* Finishes the report (gst_cuda_qa_report_finish) with post-messages read
 * under the object lock. */
void gst_cuda_qa_settings_finish_report (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaReport * report, const GstStructure * extra);

/* For set_property / get_property, first: FALSE when prop_id is below
 * first_prop_id (one of the element's own, which GObject has checked);
 * otherwise done under the object lock, or warned about as
 * G_OBJECT_WARN_INVALID_PROPERTY_ID does, so the element's switch needs no
 * default case. */
gboolean gst_cuda_qa_settings_set_property (GstCudaQaSettings * settings,
    GObject * object, guint first_prop_id, guint prop_id,
    const GValue * value, GParamSpec * pspec);
gboolean gst_cuda_qa_settings_get_property (const GstCudaQaSettings *
    settings, GObject * object, guint first_prop_id, guint prop_id,
    GValue * value, GParamSpec * pspec);

G_END_DECLS
#endif /* __GST_CUDA_QA_SETTINGS_H__ */
