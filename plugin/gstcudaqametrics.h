/* GStreamer CUDA video quality: the Prometheus metrics endpoint.
 *
 * One HTTP server (libsoup 3, its own thread) per address, shared by every
 * element that names that address; it answers GET /metrics with each
 * registered element's scores in Prometheus' text format (0.0.4), 404 for
 * other paths and 405 for other methods.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_METRICS_H__
#define __GST_CUDA_QA_METRICS_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _GstCudaQaMetrics GstCudaQaMetrics;

/* Registers an element (label element=<name>) with these score fields on
 * the server at address ("127.0.0.1:9464", "[::1]:9464"), starting it if
 * it is the first; NULL with error set when the address is malformed or
 * cannot be listened on. */
GstCudaQaMetrics *gst_cuda_qa_metrics_register (const gchar * address,
    const gchar * element, const gchar * const *fields, guint n_fields,
    GError ** error);
/* Unregisters; the last one out stops the server. */
void gst_cuda_qa_metrics_unregister (GstCudaQaMetrics * metrics);

/* A measured frame (n_fields values). */
void gst_cuda_qa_metrics_frame (GstCudaQaMetrics * metrics,
    const gdouble * values);
/* The count of frames that went on unpaired. */
void gst_cuda_qa_metrics_unpaired (GstCudaQaMetrics * metrics,
    guint64 unpaired);
/* The alert on metric (a field) fired or cleared; fired: alerts so far. */
void gst_cuda_qa_metrics_alert (GstCudaQaMetrics * metrics,
    const gchar * metric, gboolean active, guint64 fired);

G_END_DECLS
#endif /* __GST_CUDA_QA_METRICS_H__ */
