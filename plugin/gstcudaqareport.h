/* GStreamer CUDA video quality: how scores leave an element.
 *
 * One design for every element: a custom meta on each buffer, element
 * messages per frame (or per interval), a CSV or JSON-lines log flushed per
 * frame, and a summary message and log line at EOS.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_REPORT_H__
#define __GST_CUDA_QA_REPORT_H__

#include <gst/gst.h>

#include "gstcudaqaalert.h"

G_BEGIN_DECLS

typedef enum
{
  GST_CUDA_QA_LOG_CSV,
  GST_CUDA_QA_LOG_JSONL
} GstCudaQaLogFormat;

#define GST_TYPE_CUDA_QA_LOG_FORMAT (gst_cuda_qa_log_format_get_type ())
GType gst_cuda_qa_log_format_get_type (void);

/* Registers (once) a custom meta with no tags, so that it survives
 * transformations such as videoconvert. Readers need only its name:
 * gst_buffer_get_custom_meta (buf, name). */
const GstMetaInfo *gst_cuda_qa_meta_register (const gchar * name);

typedef struct _GstCudaQaReport GstCudaQaReport;

/* name: the message name ("cudasharpness"), also the prefix of the summary
 * message ("cudasharpness-summary"); meta_name: the custom meta's name. */
GstCudaQaReport *gst_cuda_qa_report_new (GstElement * element,
    const gchar * name, const gchar * meta_name);
void gst_cuda_qa_report_free (GstCudaQaReport * report);

/* Alerts (alert->metric names one of the fields given to start; NULL the
 * first) and the metrics endpoint (NULL: none) for the next start. */
void gst_cuda_qa_report_set_monitor (GstCudaQaReport * report,
    const GstCudaQaAlertConfig * alert, const gchar * metrics_address);

/* Begins a stream with these value fields (in order). Opens the log when
 * location is set (an unwritable path posts a RESOURCE error and returns
 * FALSE), checks the alert metric and starts serving metrics (an unknown
 * metric or a taken address: an error, FALSE). A log line is written
 * whole: a failed write posts RESOURCE/WRITE naming the path, cuts the file
 * back to its last whole line and closes the log. JSON-lines logs are
 * json-glib's; CSV fields are quoted as RFC 4180 says. */
gboolean gst_cuda_qa_report_start (GstCudaQaReport * report,
    const gchar * const *fields, guint n_fields, const gchar * location,
    GstCudaQaLogFormat format);

/* One measured frame: attaches the meta to buf (which must be writable),
 * writes the log line, accumulates the summary and posts the message when
 * it is due. values has n_fields entries. */
void gst_cuda_qa_report_frame (GstCudaQaReport * report, GstBuffer * buf,
    const GstSegment * segment, const gdouble * values,
    gboolean post_messages, GstClockTime interval);

/* A distorted frame that went on without a reference (counted for the
 * metrics endpoint). */
void gst_cuda_qa_report_unpaired (GstCudaQaReport * report);

/* A flush (a flushing seek): running time starts again, so the interval
 * being averaged ends here and is posted with the frames it has (none
 * from after the flush); the next frame starts a new one. A flush after
 * the end of the stream re-arms the summary: the next EOS posts it again,
 * over every frame since the start. */
void gst_cuda_qa_report_flush (GstCudaQaReport * report);

/* End of stream: posts the last partial interval (if post_messages) and the
 * summary message "<name>-summary" with frames and <field>-mean/-min/-max,
 * the alerts where they are on (alert-metric, alerts, alerts-cleared,
 * alerted-frames, alert-active, and the settings alert-below, alert-above,
 * alert-frames, alert-clear-frames), plus the fields of extra (may be NULL; not taken), and writes the same
 * summary as the log's last line. Once per stream. */
void gst_cuda_qa_report_finish (GstCudaQaReport * report,
    gboolean post_messages, const GstStructure * extra);

/* Closes the log. */
void gst_cuda_qa_report_stop (GstCudaQaReport * report);

G_END_DECLS
#endif /* __GST_CUDA_QA_REPORT_H__ */
