/* Reads CudaSharpnessMeta and CudaSsimMeta from the buffers of a running
 * pipeline and prints them, then at EOS each element's summary as a report
 * (which backend and device measured, each score's mean, min and max, the
 * alerts), and any alert as it fires and clears. Needs nothing of ours at build time: the metas are found
 * by their names.
 *
 *   cudaquality-print ['PIPELINE']
 *
 * PIPELINE is a gst-launch description with cudasharpness and/or cudassim
 * elements; without one, a built-in demo measures the sharpness of a test
 * pattern and of a blurred copy, and the SSIM of the copy against the
 * original.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/gst.h>

#define DEFAULT_PIPELINE \
  "videotestsrc num-buffers=30 pattern=smpte ! " \
  "video/x-raw,format=I420,width=1280,height=720,framerate=30/1 ! " \
  "tee name=t " \
  "t. ! queue ! cudasharpness name=sharp " \
  "metrics=tenengrad+laplacian+smd2+lapvar ! ssim.reference " \
  "t. ! queue ! videoconvert ! gaussianblur sigma=2.0 ! videoconvert ! " \
  "video/x-raw,format=I420 ! " \
  "cudasharpness name=blurred metrics=tenengrad+laplacian+smd2+lapvar ! " \
  "ssim.distorted " \
  "cudassim name=ssim planes=all ! fakesink"

typedef struct
{
  gchar *element;
  const gchar *meta;
} ProbeData;

static void
probe_data_free (gpointer data)
{
  ProbeData *d = data;

  g_free (d->element);
  g_free (d);
}

static gboolean
print_field (GQuark field, const GValue * value, gpointer user_data)
{
  GString *line = user_data;

  if (G_VALUE_HOLDS_DOUBLE (value))
    g_string_append_printf (line, " %s=%.3f", g_quark_to_string (field),
        g_value_get_double (value));
  return TRUE;
}

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  ProbeData *d = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buf, d->meta);
  const GstStructure *s;
  GString *line;
  guint64 frame = 0;

  (void) pad;
  if (!meta)
    return GST_PAD_PROBE_OK;
  s = gst_custom_meta_get_structure (meta);
  gst_structure_get_uint64 (s, "frame", &frame);
  line = g_string_new (NULL);
  g_string_append_printf (line, "%-8s frame %3" G_GUINT64_FORMAT ":",
      d->element, frame);
  gst_structure_foreach (s, print_field, line);
  g_print ("%s\n", line->str);
  g_string_free (line, TRUE);
  return GST_PAD_PROBE_OK;
}

static const gchar *
str_field (const GstStructure * s, const gchar * field)
{
  const gchar *v = gst_structure_get_string (s, field);

  return v ? v : "?";
}

static guint64
uint_field (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  gst_structure_get_uint64 (s, field, &v);
  return v;
}

/* An alert as a line a person reads. */
static void
print_alert (const gchar * element, const GstStructure * s)
{
  gdouble value = 0, bound = 0, worst = 0;
  guint64 rt = uint_field (s, "running-time");

  if (g_str_has_suffix (gst_structure_get_name (s), "-cleared")) {
    gst_structure_get_double (s, "worst", &worst);
    g_print ("ALERT CLEARED %s: %s back within bounds at frame %"
        G_GUINT64_FORMAT " (%" GST_TIME_FORMAT "), %" G_GUINT64_FORMAT
        " frame(s) affected, worst %.4g\n", element, str_field (s, "metric"),
        uint_field (s, "frame"), GST_TIME_ARGS (rt), uint_field (s, "frames"),
        worst);
  } else {
    gst_structure_get_double (s, "value", &value);
    gst_structure_get_double (s, "bound", &bound);
    g_print ("ALERT %s: %s %.4g %s %.4g since frame %" G_GUINT64_FORMAT
        " (%" GST_TIME_FORMAT ")\n", element, str_field (s, "metric"), value,
        value < bound ? "below" : "above", bound, uint_field (s, "first-frame"),
        GST_TIME_ARGS (rt));
  }
}

/* The summary as a short report: who measured where, then a row a score. */
static void
print_summary (const gchar * element, const GstStructure * s)
{
  guint i, n = gst_structure_n_fields (s);
  gboolean active = FALSE;

  g_print ("\n%s: %" G_GUINT64_FORMAT " frame(s) measured on %s "
      "(backend %s)\n", element, uint_field (s, "frames"),
      str_field (s, "device"), str_field (s, "backend"));
  g_print ("  %-16s %12s %12s %12s\n", "score", "mean", "min", "max");
  for (i = 0; i < n; i++) {
    const gchar *f = gst_structure_nth_field_name (s, i);
    gchar *score, *key;
    gdouble mean, min = 0, max = 0;

    if (!g_str_has_suffix (f, "-mean"))
      continue;
    score = g_strndup (f, strlen (f) - 5);
    gst_structure_get_double (s, f, &mean);
    key = g_strdup_printf ("%s-min", score);
    gst_structure_get_double (s, key, &min);
    g_free (key);
    key = g_strdup_printf ("%s-max", score);
    gst_structure_get_double (s, key, &max);
    g_free (key);
    g_print ("  %-16s %12.6g %12.6g %12.6g\n", score, mean, min, max);
    g_free (score);
  }
  if (gst_structure_has_field (s, "unpaired-frames"))
    g_print ("  unpaired frames: %" G_GUINT64_FORMAT " (reference %"
        G_GUINT64_FORMAT ", distorted %" G_GUINT64_FORMAT "); window %s\n",
        uint_field (s, "unpaired-frames"), uint_field (s,
            "unpaired-reference"), uint_field (s, "unpaired-distorted"),
        str_field (s, "window"));
  if (gst_structure_has_field (s, "alerts")) {
    gst_structure_get_boolean (s, "alert-active", &active);
    g_print ("  alerts on %s: %" G_GUINT64_FORMAT " fired, %"
        G_GUINT64_FORMAT " frame(s) affected%s\n", str_field (s,
            "alert-metric"), uint_field (s, "alerts"), uint_field (s,
            "alerted-frames"), active ? ", still on at the end" : "");
  }
}

int
main (int argc, char **argv)
{
  GError *error = NULL;
  GstElement *pipeline;
  GstIterator *it;
  GValue item = G_VALUE_INIT;
  GstBus *bus;
  GstMessage *msg;
  gboolean done = FALSE, failed = FALSE;

  gst_init (&argc, &argv);
  pipeline = gst_parse_launch (argc > 1 ? argv[1] : DEFAULT_PIPELINE, &error);
  if (!pipeline) {
    g_printerr ("bad pipeline: %s\n", error->message);
    return 1;
  }

  /* a probe on the src pad of every cudasharpness and cudassim */
  it = gst_bin_iterate_recurse (GST_BIN (pipeline));
  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&item);
    GstElementFactory *f = gst_element_get_factory (e);
    const gchar *meta = NULL;

    if (f && g_str_equal (GST_OBJECT_NAME (f), "cudasharpness"))
      meta = "CudaSharpnessMeta";
    else if (f && g_str_equal (GST_OBJECT_NAME (f), "cudassim"))
      meta = "CudaSsimMeta";
    if (meta) {
      GstPad *src = gst_element_get_static_pad (e, "src");
      ProbeData *d = g_new0 (ProbeData, 1);

      d->element = gst_object_get_name (GST_OBJECT (e));
      d->meta = meta;
      gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, d,
          probe_data_free);
      gst_object_unref (src);
    }
    g_value_reset (&item);
  }
  gst_iterator_free (it);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  while (!done) {
    msg = gst_bus_timed_pop (bus, GST_CLOCK_TIME_NONE);
    switch (GST_MESSAGE_TYPE (msg)) {
      case GST_MESSAGE_ELEMENT:{
        const GstStructure *s = gst_message_get_structure (msg);
        const gchar *name = GST_OBJECT_NAME (GST_MESSAGE_SRC (msg));

        if (g_str_has_suffix (gst_structure_get_name (s), "-summary"))
          print_summary (name, s);
        else if (g_str_has_suffix (gst_structure_get_name (s), "-alert")
            || g_str_has_suffix (gst_structure_get_name (s), "-alert-cleared"))
          print_alert (name, s);
        break;
      }
      case GST_MESSAGE_WARNING:{
        gchar *debug = NULL;
        gst_message_parse_warning (msg, &error, &debug);
        g_printerr ("warning from %s: %s\n", GST_OBJECT_NAME (msg->src),
            error->message);
        g_clear_error (&error);
        g_free (debug);
        break;
      }
      case GST_MESSAGE_ERROR:{
        gchar *debug = NULL;
        gst_message_parse_error (msg, &error, &debug);
        g_printerr ("error from %s: %s\n%s\n", GST_OBJECT_NAME (msg->src),
            error->message, debug ? debug : "");
        g_clear_error (&error);
        g_free (debug);
        failed = done = TRUE;
        break;
      }
      case GST_MESSAGE_EOS:
        done = TRUE;
        break;
      default:
        break;
    }
    gst_message_unref (msg);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return failed ? 1 : 0;
}
