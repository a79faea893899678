/* GStreamer CUDA video quality: the Prometheus metrics endpoint.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "gstcudaqametrics.h"

#define MAX_BUCKETS 16

typedef struct
{
  gchar *address;
  SoupServer *server;
  GMainContext *context;
  GMainLoop *loop;
  GThread *thread;
  GList *elements;              /* GstCudaQaMetrics */
} MetricsServer;

typedef struct
{
  gchar *measure, *plane;
  gdouble last;
  const gdouble *bounds;        /* the histogram's upper bounds, +Inf apart */
  guint n_bounds;
  guint64 buckets[MAX_BUCKETS]; /* not cumulative */
  guint64 count;
  gdouble sum;
} MetricsField;

struct _GstCudaQaMetrics
{
  MetricsServer *server;
  gchar *element;
  MetricsField *fields;
  guint n_fields;
  guint64 frames, unpaired, alerts;
  guint64 alert_active;         /* 0 or 1 */
  gchar *alert_metric;
};

/* every server and element, and their numbers */
static GMutex metrics_lock;
static GHashTable *metrics_servers;

static const gdouble ssim_bounds[] = { 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95,
  0.97, 0.98, 0.99, 0.995, 0.999, 1.0
};
static const gdouble db_bounds[] = { 10, 15, 20, 25, 30, 35, 40, 45, 50, 60,
  80, 100
};
static const gdouble decade_bounds[] = { 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100,
  1e3, 1e4, 1e5, 1e6
};

/* "ssim-y": measure ssim, plane y; "ssim-db", "psnr": plane all. */
static void
gst_cuda_qa_metrics_field_init (MetricsField * f, const gchar * name)
{
  const gchar *dash = strrchr (name, '-');

  if (dash && strlen (dash) == 2) {
    f->measure = g_strndup (name, dash - name);
    f->plane = g_strdup (dash + 1);
  } else {
    f->measure = g_strdup (name);
    f->plane = g_strdup ("all");
  }
  if (g_str_equal (f->measure, "psnr") || g_str_has_suffix (f->measure, "-db")) {
    f->bounds = db_bounds;
    f->n_bounds = G_N_ELEMENTS (db_bounds);
  } else if (g_str_has_prefix (f->measure, "ssim")) {
    f->bounds = ssim_bounds;
    f->n_bounds = G_N_ELEMENTS (ssim_bounds);
  } else {
    f->bounds = decade_bounds;
    f->n_bounds = G_N_ELEMENTS (decade_bounds);
  }
  f->last = NAN;
}

/* A label value with \, " and newlines escaped. */
static void
append_label (GString * s, const gchar * key, const gchar * value)
{
  g_string_append_printf (s, "%s%s=\"", s->str[s->len - 1] == '{' ? "" : ",",
      key);
  for (; *value; value++) {
    if (*value == '\\' || *value == '"')
      g_string_append_c (s, '\\');
    if (*value == '\n')
      g_string_append (s, "\\n");
    else
      g_string_append_c (s, *value);
  }
  g_string_append_c (s, '"');
}

static void
append_value (GString * s, gdouble v)
{
  gchar num[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (v))
    g_string_append (s, " NaN\n");
  else if (isinf (v))
    g_string_append (s, v > 0 ? " +Inf\n" : " -Inf\n");
  else
    g_string_append_printf (s, " %s\n", g_ascii_formatd (num, sizeof (num),
            "%.17g", v));
}

static void
append_family (GString * s, const gchar * name, const gchar * type,
    const gchar * help)
{
  g_string_append_printf (s, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
      type);
}

/* name{element="…"[,measure,plane] */
static void
append_series (GString * s, const gchar * name,
    const GstCudaQaMetrics * m, const MetricsField * f)
{
  g_string_append_printf (s, "%s{", name);
  append_label (s, "element", m->element);
  if (f) {
    append_label (s, "measure", f->measure);
    append_label (s, "plane", f->plane);
  }
}

/* A family with one series an element: the guint64 at offset in it. */
static void
append_per_element (GString * s, MetricsServer * server, const gchar * name,
    const gchar * type, const gchar * help, glong offset)
{
  GList *l;

  append_family (s, name, type, help);
  for (l = server->elements; l; l = l->next) {
    append_series (s, name, l->data, NULL);
    g_string_append_printf (s, "} %" G_GUINT64_FORMAT "\n",
        G_STRUCT_MEMBER (guint64, l->data, offset));
  }
}

static gchar *
gst_cuda_qa_metrics_render (MetricsServer * server)
{
  GString *s = g_string_new (NULL);
  GList *l;
  guint i, k;

  append_family (s, "cudaquality_score", "gauge",
      "The last measured frame's score (the measure's unit: see the "
      "element's documentation)");
  for (l = server->elements; l; l = l->next) {
    GstCudaQaMetrics *m = l->data;

    for (i = 0; i < m->n_fields; i++) {
      append_series (s, "cudaquality_score", m, &m->fields[i]);
      g_string_append_c (s, '}');
      append_value (s, m->fields[i].last);
    }
  }
  append_per_element (s, server, "cudaquality_frames_total", "counter",
      "Frames measured", G_STRUCT_OFFSET (GstCudaQaMetrics, frames));
  append_per_element (s, server, "cudaquality_unpaired_frames_total",
      "counter", "Frames that went on without a partner to compare with",
      G_STRUCT_OFFSET (GstCudaQaMetrics, unpaired));
  append_per_element (s, server, "cudaquality_alerts_total", "counter",
      "Alerts fired", G_STRUCT_OFFSET (GstCudaQaMetrics, alerts));
  append_per_element (s, server, "cudaquality_alert_active", "gauge",
      "1 while an alert is on (fired, not yet cleared), else 0",
      G_STRUCT_OFFSET (GstCudaQaMetrics, alert_active));
  append_family (s, "cudaquality_score_distribution", "histogram",
      "Scores of the frames measured (finite ones)");
  for (l = server->elements; l; l = l->next) {
    GstCudaQaMetrics *m = l->data;

    for (i = 0; i < m->n_fields; i++) {
      const MetricsField *f = &m->fields[i];
      guint64 cum = 0;
      gchar num[G_ASCII_DTOSTR_BUF_SIZE];

      for (k = 0; k <= f->n_bounds; k++) {
        cum += f->buckets[k];
        append_series (s, "cudaquality_score_distribution_bucket", m, f);
        append_label (s, "le", k < f->n_bounds ?
            g_ascii_formatd (num, sizeof (num), "%g", f->bounds[k]) : "+Inf");
        g_string_append_printf (s, "} %" G_GUINT64_FORMAT "\n", cum);
      }
      append_series (s, "cudaquality_score_distribution_sum", m, f);
      g_string_append_c (s, '}');
      append_value (s, f->sum);
      append_series (s, "cudaquality_score_distribution_count", m, f);
      g_string_append_printf (s, "} %" G_GUINT64_FORMAT "\n", f->count);
    }
  }
  return g_string_free (s, FALSE);
}

static void
gst_cuda_qa_metrics_handle (SoupServer * soup, SoupServerMessage * msg,
    const char *path, GHashTable * query, gpointer user_data)
{
  MetricsServer *server = user_data;
  const char *method = soup_server_message_get_method (msg);
  gchar *body;

  (void) soup;
  (void) query;
  if (!g_str_equal (path, "/metrics")) {
    soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
    return;
  }
  if (!g_str_equal (method, "GET") && !g_str_equal (method, "HEAD")) {
    soup_message_headers_append (soup_server_message_get_response_headers
        (msg), "Allow", "GET, HEAD");
    soup_server_message_set_status (msg, SOUP_STATUS_METHOD_NOT_ALLOWED,
        NULL);
    return;
  }
  g_mutex_lock (&metrics_lock);
  body = gst_cuda_qa_metrics_render (server);
  g_mutex_unlock (&metrics_lock);
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg,
      "text/plain; version=0.0.4; charset=utf-8", SOUP_MEMORY_TAKE, body,
      strlen (body));
}

static gpointer
gst_cuda_qa_metrics_thread (gpointer data)
{
  MetricsServer *server = data;

  g_main_context_push_thread_default (server->context);
  g_main_loop_run (server->loop);
  g_main_context_pop_thread_default (server->context);
  return NULL;
}

static void
gst_cuda_qa_metrics_server_free (MetricsServer * server)
{
  if (server->thread) {
    g_main_loop_quit (server->loop);
    g_thread_join (server->thread);
  }
  if (server->server) {
    g_main_context_push_thread_default (server->context);
    soup_server_disconnect (server->server);
    g_object_unref (server->server);
    g_main_context_pop_thread_default (server->context);
  }
  g_main_loop_unref (server->loop);
  g_main_context_unref (server->context);
  g_free (server->address);
  g_free (server);
}

/* "host:port" or "[v6]:port" */
static GSocketAddress *
gst_cuda_qa_metrics_parse (const gchar * address, GError ** error)
{
  const gchar *colon = strrchr (address, ':');
  GSocketAddress *sa = NULL;
  gchar *host, *end;
  guint64 port;

  if (!colon)
    goto malformed;
  port = g_ascii_strtoull (colon + 1, &end, 10);
  if (colon[1] == '\0' || *end != '\0' || port == 0 || port > 65535)
    goto malformed;
  if (address[0] == '[' && colon > address && colon[-1] == ']')
    host = g_strndup (address + 1, colon - address - 2);
  else
    host = g_strndup (address, colon - address);
  sa = g_inet_socket_address_new_from_string (host, (guint) port);
  g_free (host);
  if (!sa)
    goto malformed;
  return sa;

malformed:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
      "\"%s\" is not HOST:PORT with a numeric IP address and a port "
      "1-65535 (such as 127.0.0.1:9464)", address);
  return NULL;
}

static MetricsServer *
gst_cuda_qa_metrics_server_new (const gchar * address, GError ** error)
{
  MetricsServer *server = g_new0 (MetricsServer, 1);
  GSocketAddress *sa;
  gboolean ok;

  server->address = g_strdup (address);
  server->context = g_main_context_new ();
  server->loop = g_main_loop_new (server->context, FALSE);
  sa = gst_cuda_qa_metrics_parse (address, error);
  if (!sa)
    goto failed;
  g_main_context_push_thread_default (server->context);
  server->server = soup_server_new ("server-header", "gst-cudaquality ",
      NULL);
  soup_server_add_handler (server->server, NULL, gst_cuda_qa_metrics_handle,
      server, NULL);
  ok = soup_server_listen (server->server, sa, 0, error);
  g_main_context_pop_thread_default (server->context);
  g_object_unref (sa);
  if (!ok)
    goto failed;
  server->thread = g_thread_new ("cudaqa-metrics",
      gst_cuda_qa_metrics_thread, server);
  return server;

failed:
  gst_cuda_qa_metrics_server_free (server);
  return NULL;
}

GstCudaQaMetrics *
gst_cuda_qa_metrics_register (const gchar * address, const gchar * element,
    const gchar * const *fields, guint n_fields, GError ** error)
{
  GstCudaQaMetrics *m;
  MetricsServer *server;
  guint i;

  g_mutex_lock (&metrics_lock);
  if (!metrics_servers)
    metrics_servers = g_hash_table_new (g_str_hash, g_str_equal);
  server = g_hash_table_lookup (metrics_servers, address);
  if (!server) {
    server = gst_cuda_qa_metrics_server_new (address, error);
    if (!server) {
      g_mutex_unlock (&metrics_lock);
      return NULL;
    }
    g_hash_table_insert (metrics_servers, server->address, server);
  }
  m = g_new0 (GstCudaQaMetrics, 1);
  m->server = server;
  m->element = g_strdup (element);
  m->n_fields = n_fields;
  m->fields = g_new0 (MetricsField, n_fields);
  for (i = 0; i < n_fields; i++)
    gst_cuda_qa_metrics_field_init (&m->fields[i], fields[i]);
  server->elements = g_list_append (server->elements, m);
  g_mutex_unlock (&metrics_lock);
  return m;
}

void
gst_cuda_qa_metrics_unregister (GstCudaQaMetrics * m)
{
  MetricsServer *server = m->server;
  guint i;

  g_mutex_lock (&metrics_lock);
  server->elements = g_list_remove (server->elements, m);
  if (!server->elements)
    g_hash_table_remove (metrics_servers, server->address);
  else
    server = NULL;
  g_mutex_unlock (&metrics_lock);
  /* outside the lock: the server thread may be waiting for it */
  if (server)
    gst_cuda_qa_metrics_server_free (server);
  for (i = 0; i < m->n_fields; i++) {
    g_free (m->fields[i].measure);
    g_free (m->fields[i].plane);
  }
  g_free (m->fields);
  g_free (m->element);
  g_free (m->alert_metric);
  g_free (m);
}

void
gst_cuda_qa_metrics_frame (GstCudaQaMetrics * m, const gdouble * values)
{
  guint i, k;

  g_mutex_lock (&metrics_lock);
  m->frames++;
  for (i = 0; i < m->n_fields; i++) {
    MetricsField *f = &m->fields[i];

    f->last = values[i];
    if (!isfinite (values[i]))
      continue;
    for (k = 0; k < f->n_bounds && values[i] > f->bounds[k]; k++);
    f->buckets[k]++;
    f->count++;
    f->sum += values[i];
  }
  g_mutex_unlock (&metrics_lock);
}

void
gst_cuda_qa_metrics_unpaired (GstCudaQaMetrics * m, guint64 unpaired)
{
  g_mutex_lock (&metrics_lock);
  m->unpaired = unpaired;
  g_mutex_unlock (&metrics_lock);
}

void
gst_cuda_qa_metrics_alert (GstCudaQaMetrics * m, const gchar * metric,
    gboolean active, guint64 fired)
{
  g_mutex_lock (&metrics_lock);
  m->alert_active = active ? 1 : 0;
  m->alerts = fired;
  g_free (m->alert_metric);
  m->alert_metric = g_strdup (metric);
  g_mutex_unlock (&metrics_lock);
}
