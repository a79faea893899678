/* GStreamer CUDA video quality: the properties every measuring element has.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "gstcudaqasettings.h"

enum
{
  SETTING_BACKEND,
  SETTING_CUDA_DEVICE_ID,
  SETTING_POST_MESSAGES,
  SETTING_INTERVAL,
  SETTING_LOCATION,
  SETTING_LOG_FORMAT,
  SETTING_FRAMES_IN_FLIGHT,
  SETTING_ALERT_METRIC,
  SETTING_ALERT_BELOW,
  SETTING_ALERT_ABOVE,
  SETTING_ALERT_FRAMES,
  SETTING_ALERT_CLEAR_FRAMES,
  SETTING_METRICS_ADDRESS
};

#define DEFAULT_BACKEND GST_CUDA_QA_BACKEND_AUTO
#define DEFAULT_CUDA_DEVICE_ID -1
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_INTERVAL 0
#define DEFAULT_LOG_FORMAT GST_CUDA_QA_LOG_CSV
#define DEFAULT_FRAMES_IN_FLIGHT -1

void
gst_cuda_qa_settings_install (GObjectClass * klass, guint first_prop_id,
    const gchar * message_name)
{
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  gchar *blurb;

  g_object_class_install_property (klass, first_prop_id + SETTING_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Compute backend: auto (CUDA where usable, else the CPU with a "
          "warning), cuda (fail without a device) or cpu",
          GST_TYPE_CUDA_QA_BACKEND, DEFAULT_BACKEND,
          flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass,
      first_prop_id + SETTING_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device ID",
          "CUDA device to use (-1 = the first)", -1, G_MAXINT,
          DEFAULT_CUDA_DEVICE_ID, flags | GST_PARAM_MUTABLE_READY));
  /* the blurb is kept for the class's lifetime, as the spec's strings */
  blurb = g_strdup_printf ("Post a %s element message per frame or "
      "interval", message_name);
  g_object_class_install_property (klass,
      first_prop_id + SETTING_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          g_intern_string (blurb), DEFAULT_POST_MESSAGES,
          flags | GST_PARAM_MUTABLE_PLAYING));
  g_free (blurb);
  g_object_class_install_property (klass, first_prop_id + SETTING_INTERVAL,
      g_param_spec_uint64 ("interval", "Interval",
          "Running time per message in ns, scores averaged (0 = every frame)",
          0, G_MAXUINT64, DEFAULT_INTERVAL, flags | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (klass, first_prop_id + SETTING_LOCATION,
      g_param_spec_string ("location", "Log location",
          "Path of the per-frame score log, flushed per frame, summary last "
          "(unset = no log)", NULL, flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass, first_prop_id + SETTING_LOG_FORMAT,
      g_param_spec_enum ("log-format", "Log format",
          "Format of the score log: csv (a header, a row a frame) or jsonl "
          "(a JSON object a line)", GST_TYPE_CUDA_QA_LOG_FORMAT,
          DEFAULT_LOG_FORMAT, flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass,
      first_prop_id + SETTING_FRAMES_IN_FLIGHT,
      g_param_spec_int ("frames-in-flight", "Frames in flight",
          "Frames held while the GPU measures them, so that the next one "
          "uploads meanwhile (adds that many frames of latency): -1 = 1 on "
          "CUDA and 0 on the CPU", -1, 1, DEFAULT_FRAMES_IN_FLIGHT,
          flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass, first_prop_id + SETTING_ALERT_METRIC,
      g_param_spec_string ("alert-metric", "Alert metric",
          "The score the alert bounds apply to: a field of the messages and "
          "log (unset = the first)", NULL, flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass, first_prop_id + SETTING_ALERT_BELOW,
      g_param_spec_double ("alert-below", "Alert below",
          "Frames whose alert-metric is below this are past the bound "
          "(-inf = off)", -INFINITY, INFINITY, -INFINITY,
          flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass, first_prop_id + SETTING_ALERT_ABOVE,
      g_param_spec_double ("alert-above", "Alert above",
          "Frames whose alert-metric is above this are past the bound "
          "(inf = off)", -INFINITY, INFINITY, INFINITY,
          flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass, first_prop_id + SETTING_ALERT_FRAMES,
      g_param_spec_uint ("alert-frames", "Alert frames",
          "Consecutive frames past a bound before the alert fires", 1,
          G_MAXUINT, 1, flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass,
      first_prop_id + SETTING_ALERT_CLEAR_FRAMES,
      g_param_spec_uint ("alert-clear-frames", "Alert clear frames",
          "Consecutive frames within the bounds before the alert clears", 1,
          G_MAXUINT, 1, flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (klass,
      first_prop_id + SETTING_METRICS_ADDRESS,
      g_param_spec_string ("metrics-address", "Metrics address",
          "IP:PORT to serve GET /metrics on in Prometheus' text format, "
          "such as 127.0.0.1:9464; elements naming one address share its "
          "server (unset = off)", NULL, flags | GST_PARAM_MUTABLE_READY));
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_QA_BACKEND, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_QA_LOG_FORMAT, 0);
}

void
gst_cuda_qa_settings_init (GstCudaQaSettings * settings)
{
  settings->backend = DEFAULT_BACKEND;
  settings->cuda_device_id = DEFAULT_CUDA_DEVICE_ID;
  settings->post_messages = DEFAULT_POST_MESSAGES;
  settings->interval = DEFAULT_INTERVAL;
  settings->location = NULL;
  settings->log_format = DEFAULT_LOG_FORMAT;
  settings->frames_in_flight = DEFAULT_FRAMES_IN_FLIGHT;
  gst_cuda_qa_alert_config_init (&settings->alert);
  settings->metrics_address = NULL;
}

void
gst_cuda_qa_settings_clear (GstCudaQaSettings * settings)
{
  g_clear_pointer (&settings->location, g_free);
  gst_cuda_qa_alert_config_clear (&settings->alert);
  g_clear_pointer (&settings->metrics_address, g_free);
}

void
gst_cuda_qa_settings_configure_report (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaReport * report)
{
  GST_OBJECT_LOCK (object);
  gst_cuda_qa_report_set_monitor (report, &settings->alert,
      settings->metrics_address);
  GST_OBJECT_UNLOCK (object);
}

gboolean
gst_cuda_qa_settings_start_device (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaDevice * dev)
{
  GstCudaQaBackend backend;
  gint device_id, in_flight;

  GST_OBJECT_LOCK (object);
  backend = settings->backend;
  device_id = settings->cuda_device_id;
  in_flight = settings->frames_in_flight;
  GST_OBJECT_UNLOCK (object);
  return gst_cuda_qa_device_start (dev, backend, device_id, in_flight);
}

void
gst_cuda_qa_settings_report_frame (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaReport * report, GstBuffer * buf,
    const GstSegment * segment, const gdouble * values)
{
  gboolean post;
  GstClockTime interval;

  GST_OBJECT_LOCK (object);
  post = settings->post_messages;
  interval = settings->interval;
  GST_OBJECT_UNLOCK (object);
  gst_cuda_qa_report_frame (report, buf, segment, values, post, interval);
}

void
gst_cuda_qa_settings_finish_report (GstCudaQaSettings * settings,
    GObject * object, GstCudaQaReport * report, const GstStructure * extra)
{
  gboolean post;

  GST_OBJECT_LOCK (object);
  post = settings->post_messages;
  GST_OBJECT_UNLOCK (object);
  gst_cuda_qa_report_finish (report, post, extra);
}

/* The setting prop_id names (installed from first_prop_id); -1 for the
 * element's own properties, -2 for an ID past the settings' (warned). */
static gint
gst_cuda_qa_settings_index (GObject * object, guint first_prop_id,
    guint prop_id, GParamSpec * pspec)
{
  if (prop_id < first_prop_id)
    return -1;
  if (prop_id - first_prop_id < GST_CUDA_QA_SETTINGS_N_PROPS)
    return (gint) (prop_id - first_prop_id);
  G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  return -2;
}

gboolean
gst_cuda_qa_settings_set_property (GstCudaQaSettings * settings,
    GObject * object, guint first_prop_id, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  gint setting = gst_cuda_qa_settings_index (object, first_prop_id, prop_id,
      pspec);

  if (setting < 0)
    return setting == -2;
  GST_OBJECT_LOCK (object);
  switch (setting) {
    case SETTING_BACKEND:
      settings->backend = g_value_get_enum (value);
      break;
    case SETTING_CUDA_DEVICE_ID:
      settings->cuda_device_id = g_value_get_int (value);
      break;
    case SETTING_POST_MESSAGES:
      settings->post_messages = g_value_get_boolean (value);
      break;
    case SETTING_INTERVAL:
      settings->interval = g_value_get_uint64 (value);
      break;
    case SETTING_LOCATION:
      g_free (settings->location);
      settings->location = g_value_dup_string (value);
      break;
    case SETTING_LOG_FORMAT:
      settings->log_format = g_value_get_enum (value);
      break;
    case SETTING_FRAMES_IN_FLIGHT:
      settings->frames_in_flight = g_value_get_int (value);
      break;
    case SETTING_ALERT_METRIC:
      g_free (settings->alert.metric);
      settings->alert.metric = g_value_dup_string (value);
      break;
    case SETTING_ALERT_BELOW:
      settings->alert.below = g_value_get_double (value);
      break;
    case SETTING_ALERT_ABOVE:
      settings->alert.above = g_value_get_double (value);
      break;
    case SETTING_ALERT_FRAMES:
      settings->alert.frames = g_value_get_uint (value);
      break;
    case SETTING_ALERT_CLEAR_FRAMES:
      settings->alert.clear_frames = g_value_get_uint (value);
      break;
    case SETTING_METRICS_ADDRESS:
      g_free (settings->metrics_address);
      settings->metrics_address = g_value_dup_string (value);
      break;
  }
  GST_OBJECT_UNLOCK (object);
  return TRUE;
}

gboolean
gst_cuda_qa_settings_get_property (const GstCudaQaSettings * settings,
    GObject * object, guint first_prop_id, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  gint setting = gst_cuda_qa_settings_index (object, first_prop_id, prop_id,
      pspec);

  if (setting < 0)               /* -2: not a setting, warned */
    return setting != -1;
  GST_OBJECT_LOCK (object);
  switch (setting) {
    case SETTING_BACKEND:
      g_value_set_enum (value, settings->backend);
      break;
    case SETTING_CUDA_DEVICE_ID:
      g_value_set_int (value, settings->cuda_device_id);
      break;
    case SETTING_POST_MESSAGES:
      g_value_set_boolean (value, settings->post_messages);
      break;
    case SETTING_INTERVAL:
      g_value_set_uint64 (value, settings->interval);
      break;
    case SETTING_LOCATION:
      g_value_set_string (value, settings->location);
      break;
    case SETTING_LOG_FORMAT:
      g_value_set_enum (value, settings->log_format);
      break;
    case SETTING_FRAMES_IN_FLIGHT:
      g_value_set_int (value, settings->frames_in_flight);
      break;
    case SETTING_ALERT_METRIC:
      g_value_set_string (value, settings->alert.metric);
      break;
    case SETTING_ALERT_BELOW:
      g_value_set_double (value, settings->alert.below);
      break;
    case SETTING_ALERT_ABOVE:
      g_value_set_double (value, settings->alert.above);
      break;
    case SETTING_ALERT_FRAMES:
      g_value_set_uint (value, settings->alert.frames);
      break;
    case SETTING_ALERT_CLEAR_FRAMES:
      g_value_set_uint (value, settings->alert.clear_frames);
      break;
    case SETTING_METRICS_ADDRESS:
      g_value_set_string (value, settings->metrics_address);
      break;
  }
  GST_OBJECT_UNLOCK (object);
  return TRUE;
}
