/* GStreamer CUDA video quality: how scores leave an element.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "gstcudaqareport.h"
#include "gstcudaqametrics.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_qa_report_debug);
#define GST_CAT_DEFAULT gst_cuda_qa_report_debug

typedef struct
{
  gdouble sum, min, max;
} FieldStats;

struct _GstCudaQaReport
{
  GstElement *element;          /* not owned: the report lives inside it */
  gchar *name, *summary_name, *meta_name;
  const GstMetaInfo *meta_info;

  gchar **fields;
  guint n_fields;
  guint64 frames;
  FieldStats *stats;
  gboolean finished;

  /* the interval being averaged for the next message */
  gdouble *interval_sum;
  guint64 interval_frames;
  GstClockTime interval_start_pts, interval_start_rt, interval_end_rt;
  GstClockTime interval_stream_time;

  /* the log: a line is written whole or cut back off (log_good: the size
   * up to the last whole line) */
  gint log_fd;
  gchar *log_path;
  goffset log_good;
  GstCudaQaLogFormat log_format;

  /* alerts on one field (alert_field; -1: none) */
  GstCudaQaAlertConfig alert_config;
  GstCudaQaAlert alert;
  gint alert_field;

  /* the metrics endpoint (NULL: none) */
  gchar *metrics_address;
  GstCudaQaMetrics *metrics;
  guint64 unpaired;
};

GType
gst_cuda_qa_log_format_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_QA_LOG_CSV, "Comma-separated values with a header line", "csv"},
    {GST_CUDA_QA_LOG_JSONL, "One JSON object per line", "jsonl"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaQaLogFormat", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

const GstMetaInfo *
gst_cuda_qa_meta_register (const gchar * name)
{
  static GMutex lock;
  static const gchar *no_tags[] = { NULL };
  const GstMetaInfo *info;

  g_mutex_lock (&lock);
  info = gst_meta_get_info (name);
  if (!info)
    info = gst_meta_register_custom (name, no_tags, NULL, NULL, NULL);
  g_mutex_unlock (&lock);
  return info;
}

GstCudaQaReport *
gst_cuda_qa_report_new (GstElement * element, const gchar * name,
    const gchar * meta_name)
{
  GstCudaQaReport *report = g_new0 (GstCudaQaReport, 1);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_qa_report_debug, "cudaqareport", 0,
      "CUDA video quality score reporting");
  report->element = element;
  report->name = g_strdup (name);
  report->summary_name = g_strdup_printf ("%s-summary", name);
  report->meta_name = g_strdup (meta_name);
  report->meta_info = gst_cuda_qa_meta_register (meta_name);
  report->log_fd = -1;
  report->alert_field = -1;
  gst_cuda_qa_alert_config_init (&report->alert_config);
  return report;
}

void
gst_cuda_qa_report_free (GstCudaQaReport * report)
{
  if (!report)
    return;
  gst_cuda_qa_report_stop (report);
  g_strfreev (report->fields);
  g_free (report->stats);
  g_free (report->interval_sum);
  g_free (report->name);
  g_free (report->summary_name);
  g_free (report->meta_name);
  gst_cuda_qa_alert_config_clear (&report->alert_config);
  g_free (report->metrics_address);
  g_free (report);
}

/* Locale-independent, round-trip exact; "nan", "inf" and "-inf" otherwise
 * (JSON has none of them: there they are these strings). */
static void
format_double (gchar * buf, gsize len, gdouble v)
{
  if (isfinite (v))
    g_ascii_formatd (buf, len, "%.17g", v);
  else if (isnan (v))
    g_strlcpy (buf, "nan", len);
  else
    g_strlcpy (buf, v > 0 ? "inf" : "-inf", len);
}

static void
json_add_double (JsonBuilder * b, const gchar * key, gdouble v)
{
  json_builder_set_member_name (b, key);
  if (isfinite (v)) {
    json_builder_add_double_value (b, v);
  } else {
    gchar num[G_ASCII_DTOSTR_BUF_SIZE];

    format_double (num, sizeof (num), v);
    json_builder_add_string_value (b, num);
  }
}

static void
json_add_time (JsonBuilder * b, const gchar * key, GstClockTime t)
{
  json_builder_set_member_name (b, key);
  if (GST_CLOCK_TIME_IS_VALID (t))
    json_builder_add_int_value (b, (gint64) t);
  else
    json_builder_add_null_value (b);
}

/* The builder's object as one line. */
static gchar *
json_line (JsonBuilder * b)
{
  JsonGenerator *gen = json_generator_new ();
  JsonNode *root = json_builder_get_root (b);
  gchar *text, *line;

  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  line = g_strconcat (text, "\n", NULL);
  g_free (text);
  json_node_unref (root);
  g_object_unref (gen);
  return line;
}

/* One CSV field, quoted as RFC 4180 says where it needs to be. */
static void
csv_append (GString * s, const gchar * field, gboolean first)
{
  if (!first)
    g_string_append_c (s, ',');
  if (!strpbrk (field, ",\"\r\n")) {
    g_string_append (s, field);
    return;
  }
  g_string_append_c (s, '"');
  for (; *field; field++) {
    if (*field == '"')
      g_string_append_c (s, '"');
    g_string_append_c (s, *field);
  }
  g_string_append_c (s, '"');
}

static void
csv_append_double (GString * s, gdouble v)
{
  gchar num[G_ASCII_DTOSTR_BUF_SIZE];

  format_double (num, sizeof (num), v);
  csv_append (s, num, FALSE);
}

static void
csv_append_time (GString * s, GstClockTime t)
{
  gchar num[32] = "";

  if (GST_CLOCK_TIME_IS_VALID (t))
    g_snprintf (num, sizeof (num), "%" G_GUINT64_FORMAT, t);
  csv_append (s, num, FALSE);
}

static void
log_close (GstCudaQaReport * report)
{
  if (report->log_fd >= 0)
    close (report->log_fd);
  report->log_fd = -1;
  g_clear_pointer (&report->log_path, g_free);
}

/* Writes one whole line; on failure cuts the file back to the lines before
 * it, posts a RESOURCE/WRITE error naming the path and closes the log. */
static gboolean
log_write (GstCudaQaReport * report, const gchar * line)
{
  gsize len = strlen (line), done = 0;
  gint err;

  while (done < len) {
    gssize n = write (report->log_fd, line + done, len - done);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      goto write_failed;
    done += n;
  }
  report->log_good += len;
  return TRUE;

  /* ERRORS */
write_failed:
  {
    err = errno;
    if (done > 0 && ftruncate (report->log_fd, report->log_good) != 0)
      GST_WARNING_OBJECT (report->element, "could not cut \"%s\" back to "
          "%" G_GOFFSET_FORMAT " bytes: %s", report->log_path,
          report->log_good, g_strerror (errno));
    GST_ELEMENT_ERROR (report->element, RESOURCE, WRITE,
        ("Could not write to score log \"%s\".", report->log_path),
        ("%s after %" G_GUINT64_FORMAT " frame(s); the log keeps the %"
            G_GOFFSET_FORMAT " bytes of whole lines before",
            err ? g_strerror (err) : "nothing written", report->frames,
            report->log_good));
    log_close (report);
    return FALSE;
  }
}

void
gst_cuda_qa_report_set_monitor (GstCudaQaReport * report,
    const GstCudaQaAlertConfig * alert, const gchar * metrics_address)
{
  gst_cuda_qa_alert_config_copy (&report->alert_config, alert);
  g_free (report->metrics_address);
  report->metrics_address = metrics_address && *metrics_address ?
      g_strdup (metrics_address) : NULL;
}

/* The alert metric's field, and the metrics endpoint. */
static gboolean
gst_cuda_qa_report_start_monitor (GstCudaQaReport * report)
{
  const GstCudaQaAlertConfig *cfg = &report->alert_config;
  GError *error = NULL;
  guint i;

  gst_cuda_qa_alert_reset (&report->alert, cfg);
  report->alert_field = -1;
  report->unpaired = 0;
  if (report->alert.enabled) {
    if (!cfg->metric || !*cfg->metric)
      report->alert_field = 0;
    for (i = 0; cfg->metric && i < report->n_fields; i++)
      if (g_str_equal (cfg->metric, report->fields[i]))
        report->alert_field = i;
    if (report->alert_field < 0)
      goto unknown_metric;
  }
  if (report->metrics_address) {
    report->metrics = gst_cuda_qa_metrics_register (report->metrics_address,
        GST_ELEMENT_NAME (report->element),
        (const gchar * const *) report->fields, report->n_fields, &error);
    if (!report->metrics)
      goto no_metrics;
  }
  return TRUE;

  /* ERRORS */
unknown_metric:
  {
    gchar *known = g_strjoinv (", ", report->fields);

    GST_ELEMENT_ERROR (report->element, LIBRARY, SETTINGS,
        ("Unknown alert-metric \"%s\"", cfg->metric),
        ("this stream has: %s", known));
    g_free (known);
    return FALSE;
  }
no_metrics:
  {
    GST_ELEMENT_ERROR (report->element, RESOURCE, OPEN_READ_WRITE,
        ("Could not serve metrics on \"%s\".", report->metrics_address),
        ("%s", error->message));
    g_error_free (error);
    return FALSE;
  }
}

gboolean
gst_cuda_qa_report_start (GstCudaQaReport * report,
    const gchar * const *fields, guint n_fields, const gchar * location,
    GstCudaQaLogFormat format)
{
  guint i;

  gst_cuda_qa_report_stop (report);
  g_strfreev (report->fields);
  report->fields = g_new0 (gchar *, n_fields + 1);
  for (i = 0; i < n_fields; i++)
    report->fields[i] = g_strdup (fields[i]);
  report->n_fields = n_fields;
  g_free (report->stats);
  report->stats = g_new0 (FieldStats, n_fields);
  g_free (report->interval_sum);
  report->interval_sum = g_new0 (gdouble, n_fields);
  report->frames = 0;
  report->interval_frames = 0;
  report->finished = FALSE;
  report->log_format = format;

  if (location && *location) {
    report->log_fd = open (location, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
        0666);
    if (report->log_fd < 0)
      goto open_failed;
    report->log_path = g_strdup (location);
    report->log_good = 0;
    if (format == GST_CUDA_QA_LOG_CSV) {
      GString *s = g_string_new ("frame,pts,running-time");
      gboolean ok;

      for (i = 0; i < n_fields; i++)
        csv_append (s, fields[i], FALSE);
      g_string_append_c (s, '\n');
      ok = log_write (report, s->str);
      g_string_free (s, TRUE);
      if (!ok)
        return FALSE;
    }
  }
  return gst_cuda_qa_report_start_monitor (report);

  /* ERRORS */
open_failed:
  {
    GST_ELEMENT_ERROR (report->element, RESOURCE, OPEN_WRITE,
        ("Could not open score log \"%s\" for writing.", location),
        ("%s", g_strerror (errno)));
    return FALSE;
  }
}

void
gst_cuda_qa_report_stop (GstCudaQaReport * report)
{
  log_close (report);
  g_clear_pointer (&report->metrics, gst_cuda_qa_metrics_unregister);
}

static void
log_frame (GstCudaQaReport * report, guint64 frame, GstClockTime pts,
    GstClockTime running_time, const gdouble * values)
{
  gchar *line;
  guint i;

  if (report->log_format == GST_CUDA_QA_LOG_JSONL) {
    JsonBuilder *b = json_builder_new ();

    json_builder_begin_object (b);
    json_builder_set_member_name (b, "frame");
    json_builder_add_int_value (b, (gint64) frame);
    json_add_time (b, "pts", pts);
    json_add_time (b, "running-time", running_time);
    for (i = 0; i < report->n_fields; i++)
      json_add_double (b, report->fields[i], values[i]);
    json_builder_end_object (b);
    line = json_line (b);
    g_object_unref (b);
  } else {
    GString *s = g_string_new (NULL);

    g_string_append_printf (s, "%" G_GUINT64_FORMAT, frame);
    csv_append_time (s, pts);
    csv_append_time (s, running_time);
    for (i = 0; i < report->n_fields; i++)
      csv_append_double (s, values[i]);
    g_string_append_c (s, '\n');
    line = g_string_free (s, FALSE);
  }
  log_write (report, line);
  g_free (line);
}

static void
post_interval (GstCudaQaReport * report)
{
  GstStructure *s;
  GstClockTime duration = GST_CLOCK_TIME_NONE;
  guint i;

  if (report->interval_frames == 0)
    return;
  if (GST_CLOCK_TIME_IS_VALID (report->interval_start_rt)
      && GST_CLOCK_TIME_IS_VALID (report->interval_end_rt)
      && report->interval_end_rt >= report->interval_start_rt)
    duration = report->interval_end_rt - report->interval_start_rt;
  s = gst_structure_new (report->name,
      "timestamp", G_TYPE_UINT64, report->interval_start_pts,
      "stream-time", G_TYPE_UINT64, report->interval_stream_time,
      "running-time", G_TYPE_UINT64, report->interval_start_rt,
      "duration", G_TYPE_UINT64, duration,
      "frame", G_TYPE_UINT64, report->frames - 1,
      "frames", G_TYPE_UINT64, report->interval_frames, NULL);
  for (i = 0; i < report->n_fields; i++) {
    gst_structure_set (s, report->fields[i], G_TYPE_DOUBLE,
        report->interval_sum[i] / report->interval_frames, NULL);
    report->interval_sum[i] = 0;
  }
  report->interval_frames = 0;
  gst_element_post_message (report->element,
      gst_message_new_element (GST_OBJECT (report->element), s));
}

/* The alert metric's hysteresis: "<name>-alert" when an alert fires,
 * "<name>-alert-cleared" when it clears (messages go out whatever
 * post-messages says: they are rare and what a monitor waits for). */
static void
gst_cuda_qa_report_check_alert (GstCudaQaReport * report, guint64 frame,
    GstClockTime pts, GstClockTime st, GstClockTime rt, GstClockTime dur,
    gdouble value)
{
  const gchar *metric = report->fields[report->alert_field];
  GstCudaQaAlert *a = &report->alert;
  GstCudaQaAlertEvent event = gst_cuda_qa_alert_update (a, frame, value);
  GstStructure *s;
  gchar *name;

  if (event == GST_CUDA_QA_ALERT_NONE)
    return;
  /* both start with the frame's times, in this order */
  name = g_strdup_printf (event == GST_CUDA_QA_ALERT_FIRED ? "%s-alert" :
      "%s-alert-cleared", report->name);
  s = gst_structure_new (name,
      "timestamp", G_TYPE_UINT64, pts,
      "stream-time", G_TYPE_UINT64, st,
      "running-time", G_TYPE_UINT64, rt, NULL);
  g_free (name);
  if (event == GST_CUDA_QA_ALERT_FIRED)
    gst_structure_set (s,
        "duration", G_TYPE_UINT64, dur,
        "frame", G_TYPE_UINT64, frame,
        "first-frame", G_TYPE_UINT64, a->first_bad,
        "metric", G_TYPE_STRING, metric,
        "value", G_TYPE_DOUBLE, value,
        "bound", G_TYPE_DOUBLE, a->bound,
        "threshold", G_TYPE_DOUBLE, a->bound, metric, G_TYPE_DOUBLE, value,
        NULL);
  else
    gst_structure_set (s,
        "frame", G_TYPE_UINT64, frame,
        "first-frame", G_TYPE_UINT64, a->first_bad,
        "last-frame", G_TYPE_UINT64, a->last_bad,
        "frames", G_TYPE_UINT64, gst_cuda_qa_alert_episode_frames (a),
        "metric", G_TYPE_STRING, metric,
        "worst", G_TYPE_DOUBLE, a->worst, NULL);
  if (report->metrics)
    gst_cuda_qa_metrics_alert (report->metrics, metric, a->active, a->fired);
  gst_element_post_message (report->element,
      gst_message_new_element (GST_OBJECT (report->element), s));
}

void
gst_cuda_qa_report_unpaired (GstCudaQaReport * report)
{
  report->unpaired++;
  if (report->metrics)
    gst_cuda_qa_metrics_unpaired (report->metrics, report->unpaired);
}

void
gst_cuda_qa_report_flush (GstCudaQaReport * report)
{
  post_interval (report);
  report->finished = FALSE;
}

/* The running time a frame covers: [*start, *end], from rt (its pts's) and
 * its duration at the segment's rate; in reverse playback the pts is the
 * frame's last instant. */
static void
frame_span (const GstSegment * segment, GstClockTime rt, GstClockTime dur,
    GstClockTime * start, GstClockTime * end)
{
  GstClockTime span;

  *start = *end = rt;
  if (!GST_CLOCK_TIME_IS_VALID (rt) || !GST_CLOCK_TIME_IS_VALID (dur))
    return;
  span = segment->rate == 1.0 ? dur : (GstClockTime) (dur / fabs
      (segment->rate));
  if (segment->rate > 0)
    *end = rt + span;
  else
    *start = rt > span ? rt - span : 0;
}

void
gst_cuda_qa_report_frame (GstCudaQaReport * report, GstBuffer * buf,
    const GstSegment * segment, const gdouble * values,
    gboolean post_messages, GstClockTime interval)
{
  GstCustomMeta *meta;
  GstStructure *s;
  GstClockTime pts = GST_BUFFER_PTS (buf), dur = GST_BUFFER_DURATION (buf);
  GstClockTime rt = GST_CLOCK_TIME_NONE, st = GST_CLOCK_TIME_NONE;
  GstClockTime span_start, span_end;
  guint64 frame = report->frames++;
  guint i;

  if (GST_CLOCK_TIME_IS_VALID (pts) && segment
      && segment->format == GST_FORMAT_TIME) {
    rt = gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts);
    st = gst_segment_to_stream_time (segment, GST_FORMAT_TIME, pts);
  }

  meta = gst_buffer_add_custom_meta (buf, report->meta_name);
  s = gst_custom_meta_get_structure (meta);
  gst_structure_set (s, "frame", G_TYPE_UINT64, frame, NULL);
  for (i = 0; i < report->n_fields; i++) {
    FieldStats *fs = &report->stats[i];

    gst_structure_set (s, report->fields[i], G_TYPE_DOUBLE, values[i], NULL);
    fs->sum += values[i];
    if (frame == 0 || values[i] < fs->min)
      fs->min = values[i];
    if (frame == 0 || values[i] > fs->max)
      fs->max = values[i];
  }

  if (report->log_fd >= 0)
    log_frame (report, frame, pts, rt, values);
  if (report->metrics)
    gst_cuda_qa_metrics_frame (report->metrics, values);
  if (report->alert_field >= 0)
    gst_cuda_qa_report_check_alert (report, frame, pts, st, rt, dur,
        values[report->alert_field]);

  if (!post_messages)
    return;
  frame_span (segment, rt, dur, &span_start, &span_end);
  /* running time went back (a new segment without a flush): the interval
   * so far ends before this frame */
  if (report->interval_frames > 0 && GST_CLOCK_TIME_IS_VALID (span_start)
      && GST_CLOCK_TIME_IS_VALID (report->interval_start_rt)
      && span_start < report->interval_start_rt)
    post_interval (report);
  if (report->interval_frames == 0) {
    report->interval_start_pts = pts;
    report->interval_start_rt = span_start;
    report->interval_stream_time = st;
    report->interval_end_rt = span_end;
  }
  for (i = 0; i < report->n_fields; i++)
    report->interval_sum[i] += values[i];
  report->interval_frames++;
  if (!GST_CLOCK_TIME_IS_VALID (span_end)
      || !GST_CLOCK_TIME_IS_VALID (report->interval_end_rt)
      || span_end > report->interval_end_rt)
    report->interval_end_rt = span_end;
  /* interval 0, or timestamps unknown: one message per frame */
  if (interval == 0 || !GST_CLOCK_TIME_IS_VALID (rt)
      || !GST_CLOCK_TIME_IS_VALID (report->interval_start_rt)
      || report->interval_end_rt - report->interval_start_rt >= interval)
    post_interval (report);
}

/* One summary field into the log line: a JSON member, or key=value. */
static gboolean
gst_cuda_qa_report_log_field (GQuark field, const GValue * value,
    gpointer user_data)
{
  gpointer *ctx = user_data;    /* { JsonBuilder or NULL, GString } */
  JsonBuilder *b = ctx[0];
  const gchar *key = g_quark_to_string (field);
  gchar *str = NULL;

  if (G_VALUE_HOLDS_DOUBLE (value)) {
    if (b) {
      json_add_double (b, key, g_value_get_double (value));
      return TRUE;
    }
    str = g_malloc (G_ASCII_DTOSTR_BUF_SIZE);
    format_double (str, G_ASCII_DTOSTR_BUF_SIZE, g_value_get_double (value));
  } else if (G_VALUE_HOLDS_STRING (value)) {
    str = g_value_dup_string (value);
  } else if (b && (G_VALUE_HOLDS_UINT64 (value) || G_VALUE_HOLDS_INT64 (value)
          || G_VALUE_HOLDS_UINT (value) || G_VALUE_HOLDS_INT (value))) {
    GValue v = G_VALUE_INIT;

    g_value_init (&v, G_TYPE_INT64);
    g_value_transform (value, &v);
    json_builder_set_member_name (b, key);
    json_builder_add_int_value (b, g_value_get_int64 (&v));
    return TRUE;
  } else if (b && G_VALUE_HOLDS_BOOLEAN (value)) {
    json_builder_set_member_name (b, key);
    json_builder_add_boolean_value (b, g_value_get_boolean (value));
    return TRUE;
  } else {
    str = gst_value_serialize (value);
  }
  if (b) {
    json_builder_set_member_name (b, key);
    json_builder_add_string_value (b, str ? str : "");
  } else {
    gchar *kv = g_strdup_printf ("%s=%s", key, str ? str : "");

    csv_append (ctx[1], kv, FALSE);
    g_free (kv);
  }
  g_free (str);
  return TRUE;
}

static gboolean
copy_field (GQuark field, const GValue * value, gpointer user_data)
{
  gst_structure_id_set_value (user_data, field, value);
  return TRUE;
}

/* The summary's log line: {"summary":{...}}, or "# summary,key=value,...". */
static void
gst_cuda_qa_report_log_summary (GstCudaQaReport * report,
    const GstStructure * s)
{
  gpointer ctx[2] = { NULL, NULL };
  gchar *line;

  if (report->log_format == GST_CUDA_QA_LOG_JSONL) {
    JsonBuilder *b = json_builder_new ();

    json_builder_begin_object (b);
    json_builder_set_member_name (b, "summary");
    json_builder_begin_object (b);
    ctx[0] = b;
    gst_structure_foreach (s, gst_cuda_qa_report_log_field, ctx);
    json_builder_end_object (b);
    json_builder_end_object (b);
    line = json_line (b);
    g_object_unref (b);
  } else {
    GString *str = g_string_new ("# summary");

    ctx[1] = str;
    gst_structure_foreach (s, gst_cuda_qa_report_log_field, ctx);
    g_string_append_c (str, '\n');
    line = g_string_free (str, FALSE);
  }
  log_write (report, line);
  g_free (line);
}

void
gst_cuda_qa_report_finish (GstCudaQaReport * report, gboolean post_messages,
    const GstStructure * extra)
{
  GstStructure *s;
  guint i;

  if (report->finished)
    return;
  report->finished = TRUE;
  if (post_messages)
    post_interval (report);

  s = gst_structure_new (report->summary_name,
      "frames", G_TYPE_UINT64, report->frames, NULL);
  for (i = 0; i < report->n_fields && report->frames > 0; i++) {
    const FieldStats *fs = &report->stats[i];
    const gchar *stat_names[3] = { "mean", "min", "max" };
    gdouble stat[3] = { fs->sum / report->frames, fs->min, fs->max };
    guint k;

    for (k = 0; k < 3; k++) {
      gchar *key = g_strdup_printf ("%s-%s", report->fields[i], stat_names[k]);

      gst_structure_set (s, key, G_TYPE_DOUBLE, stat[k], NULL);
      g_free (key);
    }
  }
  if (report->alert_field >= 0) {
    const GstCudaQaAlert *a = &report->alert;

    gst_structure_set (s, "alert-metric", G_TYPE_STRING,
        report->fields[report->alert_field], "alerts", G_TYPE_UINT64, a->fired,
        "alerts-cleared", G_TYPE_UINT64, a->cleared,
        "alerted-frames", G_TYPE_UINT64, a->frames_affected +
        (a->active ? gst_cuda_qa_alert_episode_frames (a) : 0),
        "alert-active", G_TYPE_BOOLEAN, a->active,
        "alert-frames", G_TYPE_UINT, a->frames,
        "alert-clear-frames", G_TYPE_UINT, a->clear_frames, NULL);
    /* the bounds set, so that a reader (the plot) can replay the alerts */
    if (isfinite (a->below))
      gst_structure_set (s, "alert-below", G_TYPE_DOUBLE, a->below, NULL);
    if (isfinite (a->above))
      gst_structure_set (s, "alert-above", G_TYPE_DOUBLE, a->above, NULL);
  }
  if (extra)
    gst_structure_foreach (extra, copy_field, s);
  if (report->log_fd >= 0)
    gst_cuda_qa_report_log_summary (report, s);

  gst_element_post_message (report->element,
      gst_message_new_element (GST_OBJECT (report->element), s));
}
