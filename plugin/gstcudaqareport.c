/* GStreamer CUDA video quality: how scores leave an element.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gstcudaqareport.h"

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

  FILE *log;
  GstCudaQaLogFormat log_format;
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
  g_free (report);
}

/* Locale-independent, round-trip exact; JSON has no infinity or NaN, so
 * those become the strings "inf", "-inf", "nan" there. */
static void
format_double (gchar * buf, gsize len, gdouble v, gboolean json)
{
  if (isfinite (v))
    g_ascii_formatd (buf, len, "%.17g", v);
  else if (isnan (v))
    g_strlcpy (buf, json ? "\"nan\"" : "nan", len);
  else
    g_strlcpy (buf, v > 0 ? (json ? "\"inf\"" : "inf") :
        (json ? "\"-inf\"" : "-inf"), len);
}

static void
log_write (GstCudaQaReport * report, const gchar * line)
{
  if (fputs (line, report->log) < 0 || fflush (report->log) != 0) {
    GST_ELEMENT_WARNING (report->element, RESOURCE, WRITE,
        ("Could not write to the score log"), ("%s", g_strerror (errno)));
    fclose (report->log);
    report->log = NULL;
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
    report->log = fopen (location, "w");
    if (!report->log) {
      GST_ELEMENT_ERROR (report->element, RESOURCE, OPEN_WRITE,
          ("Could not open score log \"%s\" for writing.", location),
          ("%s", g_strerror (errno)));
      return FALSE;
    }
    if (format == GST_CUDA_QA_LOG_CSV) {
      GString *s = g_string_new ("frame,pts,running-time");

      for (i = 0; i < n_fields; i++)
        g_string_append_printf (s, ",%s", fields[i]);
      g_string_append_c (s, '\n');
      log_write (report, s->str);
      g_string_free (s, TRUE);
    }
  }
  return TRUE;
}

void
gst_cuda_qa_report_stop (GstCudaQaReport * report)
{
  if (report->log) {
    fclose (report->log);
    report->log = NULL;
  }
}

static void
append_time (GString * s, GstClockTime t, gboolean json)
{
  if (GST_CLOCK_TIME_IS_VALID (t))
    g_string_append_printf (s, "%" G_GUINT64_FORMAT, t);
  else if (json)
    g_string_append (s, "null");
}

static void
log_frame (GstCudaQaReport * report, guint64 frame, GstClockTime pts,
    GstClockTime running_time, const gdouble * values)
{
  gboolean json = report->log_format == GST_CUDA_QA_LOG_JSONL;
  GString *s = g_string_new (NULL);
  gchar num[G_ASCII_DTOSTR_BUF_SIZE];
  guint i;

  if (json) {
    g_string_append_printf (s, "{\"frame\":%" G_GUINT64_FORMAT ",\"pts\":",
        frame);
    append_time (s, pts, TRUE);
    g_string_append (s, ",\"running-time\":");
    append_time (s, running_time, TRUE);
  } else {
    g_string_append_printf (s, "%" G_GUINT64_FORMAT ",", frame);
    append_time (s, pts, FALSE);
    g_string_append_c (s, ',');
    append_time (s, running_time, FALSE);
  }
  for (i = 0; i < report->n_fields; i++) {
    format_double (num, sizeof (num), values[i], json);
    if (json)
      g_string_append_printf (s, ",\"%s\":%s", report->fields[i], num);
    else
      g_string_append_printf (s, ",%s", num);
  }
  g_string_append (s, json ? "}\n" : "\n");
  log_write (report, s->str);
  g_string_free (s, TRUE);
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

void
gst_cuda_qa_report_alert (GstCudaQaReport * report, GstBuffer * buf,
    const GstSegment * segment, const gchar * field, gdouble value,
    gdouble threshold)
{
  GstClockTime pts = GST_BUFFER_PTS (buf);
  GstClockTime rt = GST_CLOCK_TIME_NONE, st = GST_CLOCK_TIME_NONE;
  gchar *name = g_strdup_printf ("%s-alert", report->name);
  GstStructure *s;

  if (GST_CLOCK_TIME_IS_VALID (pts)) {
    rt = gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts);
    st = gst_segment_to_stream_time (segment, GST_FORMAT_TIME, pts);
  }
  s = gst_structure_new (name,
      "timestamp", G_TYPE_UINT64, pts,
      "stream-time", G_TYPE_UINT64, st,
      "running-time", G_TYPE_UINT64, rt,
      "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (buf),
      "frame", G_TYPE_UINT64, report->frames - 1,
      field, G_TYPE_DOUBLE, value, "threshold", G_TYPE_DOUBLE, threshold, NULL);
  g_free (name);
  gst_element_post_message (report->element,
      gst_message_new_element (GST_OBJECT (report->element), s));
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

  if (report->log)
    log_frame (report, frame, pts, rt, values);

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

typedef struct
{
  GString *s;
  gboolean json;
} ExtraCtx;

static gboolean
append_extra (GQuark field, const GValue * value, gpointer user_data)
{
  ExtraCtx *ctx = user_data;
  gchar *str;

  if (G_VALUE_HOLDS_DOUBLE (value)) {
    gchar num[G_ASCII_DTOSTR_BUF_SIZE];
    format_double (num, sizeof (num), g_value_get_double (value), ctx->json);
    str = g_strdup (num);
  } else {
    str = gst_value_serialize (value);
  }
  if (ctx->json)
    g_string_append_printf (ctx->s, ",\"%s\":%s", g_quark_to_string (field),
        str);
  else
    g_string_append_printf (ctx->s, ",%s=%s", g_quark_to_string (field), str);
  g_free (str);
  return TRUE;
}

static gboolean
copy_field (GQuark field, const GValue * value, gpointer user_data)
{
  gst_structure_id_set_value (user_data, field, value);
  return TRUE;
}

void
gst_cuda_qa_report_finish (GstCudaQaReport * report, gboolean post_messages,
    const GstStructure * extra)
{
  GstStructure *s;
  gboolean json = report->log_format == GST_CUDA_QA_LOG_JSONL;
  GString *line;
  gchar num[G_ASCII_DTOSTR_BUF_SIZE];
  guint i;

  if (report->finished)
    return;
  report->finished = TRUE;
  if (post_messages)
    post_interval (report);

  s = gst_structure_new (report->summary_name,
      "frames", G_TYPE_UINT64, report->frames, NULL);
  line = g_string_new (NULL);
  if (json)
    g_string_append_printf (line, "{\"summary\":{\"frames\":%"
        G_GUINT64_FORMAT, report->frames);
  else
    g_string_append_printf (line, "# summary,frames=%" G_GUINT64_FORMAT,
        report->frames);
  for (i = 0; i < report->n_fields && report->frames > 0; i++) {
    const FieldStats *fs = &report->stats[i];
    const gchar *stat_names[3] = { "mean", "min", "max" };
    gdouble stat[3] = { fs->sum / report->frames, fs->min, fs->max };
    guint k;

    for (k = 0; k < 3; k++) {
      gchar *key = g_strdup_printf ("%s-%s", report->fields[i], stat_names[k]);

      gst_structure_set (s, key, G_TYPE_DOUBLE, stat[k], NULL);
      format_double (num, sizeof (num), stat[k], json);
      if (json)
        g_string_append_printf (line, ",\"%s\":%s", key, num);
      else
        g_string_append_printf (line, ",%s=%s", key, num);
      g_free (key);
    }
  }
  if (extra) {
    ExtraCtx ctx = { line, json };

    gst_structure_foreach (extra, append_extra, &ctx);
    gst_structure_foreach (extra, copy_field, s);
  }
  g_string_append (line, json ? "}}\n" : "\n");
  if (report->log)
    log_write (report, line->str);
  g_string_free (line, TRUE);

  gst_element_post_message (report->element,
      gst_message_new_element (GST_OBJECT (report->element), s));
}
