/* CPU suite: cudassim's two sink pads driven one at a time through two
 * harnesses (gst_harness_new_with_element + gst_harness_add_element_sink_pad,
 * as gst-plugins-bad tests its aggregators), so that the order of each
 * pad's buffers and events (GAP, segment, EOS) is the test's to choose.
 * CUDASSIM_TEST_BACKEND=cuda runs it on CUDA.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "cq-test.h"

#define FRAME_DURATION (GST_SECOND / 30)
#define CAPS "video/x-raw,format=GRAY8,width=32,height=24,framerate=30/1"

static const gchar *backend = "cpu";

typedef struct
{
  GstHarness *dist;             /* pushes to `distorted`, pulls from `src` */
  GstHarness *ref;              /* pushes to `reference` */
  GstBus *bus;
} Pads;

static void
pads_init (Pads * p)
{
  GstElement *e = gst_element_factory_make ("cudassim", NULL);
  GstPad *pad = gst_element_get_static_pad (e, "reference");

  gst_util_set_object_arg (G_OBJECT (e), "backend", backend);
  /* each output is pulled right after its pair: none held in flight (the
   * holding is test-cudassim-in-flight's) */
  g_object_set (e, "frames-in-flight", 0, NULL);
  p->dist = gst_harness_new_with_element (e, "distorted", "src");
  p->ref = gst_harness_new_with_element (e, NULL, NULL);
  gst_harness_add_element_sink_pad (p->ref, pad);
  p->bus = cq_test_attach_bus (e);
  gst_object_unref (pad);
  gst_object_unref (e);
  gst_harness_set_src_caps_str (p->dist, CAPS);
  gst_harness_set_src_caps_str (p->ref, CAPS);
}

static void
pads_clear (Pads * p)
{
  cq_test_detach_bus (p->dist->element, p->bus);
  gst_harness_teardown (p->ref);
  gst_harness_teardown (p->dist);
}

/* Frame i: a gradient, brighter in the distorted copy. */
static GstBuffer *
frame (guint i, guint8 offset)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 32 * 24, NULL);
  GstMapInfo map;
  guint k;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (k = 0; k < map.size; k++)
    map.data[k] = (guint8) (k * 7 + i + offset);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

static void
push_ref (Pads * p, guint i)
{
  fail_unless_equals_int (gst_harness_push (p->ref, frame (i, 0)),
      GST_FLOW_OK);
}

static void
push_dist (Pads * p, guint i)
{
  fail_unless_equals_int (gst_harness_push (p->dist, frame (i, 3)),
      GST_FLOW_OK);
}

/* The next output buffer: whether it carries scores. */
static gboolean
pull_measured (Pads * p, guint i)
{
  GstBuffer *out = gst_harness_pull (p->dist);
  gboolean measured;

  fail_unless (out != NULL, "no output buffer %u", i);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * FRAME_DURATION);
  measured = gst_buffer_get_custom_meta (out, "CudaSsimMeta") != NULL;
  gst_buffer_unref (out);
  return measured;
}

static guint64
count (const GstStructure * s, const gchar * name)
{
  guint64 v;

  fail_unless (gst_structure_get_uint64 (s, name, &v), "no %s", name);
  return v;
}

/* Frame i on both pads, measured. */
static void
pair (Pads * p, guint i)
{
  push_ref (p, i);
  push_dist (p, i);
  fail_unless (pull_measured (p, i));
}

/* The summary's counts, and done. */
static void
check_counts (Pads * p, GstStructure * s, guint64 frames,
    guint64 unpaired_reference, guint64 unpaired_distorted)
{
  fail_unless_equals_uint64 (count (s, "frames"), frames);
  fail_unless_equals_uint64 (count (s, "unpaired-reference"),
      unpaired_reference);
  fail_unless_equals_uint64 (count (s, "unpaired-distorted"),
      unpaired_distorted);
  gst_structure_free (s);
  pads_clear (p);
}

/* Ends the streams (the reference's unless ref_ended) and returns the
 * summary (to free). */
static GstStructure *
finish (Pads * p, gboolean ref_ended)
{
  GstMessage *m;
  GstEvent *ev;
  GstStructure *s = NULL;

  if (!ref_ended)
    fail_unless (gst_harness_push_event (p->ref, gst_event_new_eos ()));
  fail_unless (gst_harness_push_event (p->dist, gst_event_new_eos ()));
  while ((ev = gst_harness_pull_event (p->dist))) {
    gboolean eos = GST_EVENT_TYPE (ev) == GST_EVENT_EOS;

    gst_event_unref (ev);
    if (eos)
      break;
  }
  while (!s && (m = gst_bus_pop_filtered (p->bus, GST_MESSAGE_ELEMENT))) {
    if (gst_structure_has_name (gst_message_get_structure (m),
            "cudassim-summary"))
      s = gst_structure_copy (gst_message_get_structure (m));
    gst_message_unref (m);
  }
  fail_unless (s != NULL, "no cudassim-summary");
  return s;
}


/* A GAP on the reference pad is no frame: the distorted frame of that time
 * goes on without scores (counted unpaired), nothing fails. */
GST_START_TEST (test_reference_gap)
{
  Pads p;

  pads_init (&p);
  pair (&p, 0);
  fail_unless (gst_harness_push_event (p.ref,
          gst_event_new_gap (FRAME_DURATION, FRAME_DURATION)));
  push_dist (&p, 1);
  push_ref (&p, 2);
  fail_if (pull_measured (&p, 1));
  push_dist (&p, 2);
  fail_unless (pull_measured (&p, 2));
  check_counts (&p, finish (&p, FALSE), 2, 0, 1);
}

GST_END_TEST;

/* A GAP on the distorted pad goes downstream as a gap; the reference frame
 * of that time has no partner. */
GST_START_TEST (test_distorted_gap)
{
  Pads p;
  GstBuffer *out;

  pads_init (&p);
  pair (&p, 0);
  push_ref (&p, 1);
  fail_unless (gst_harness_push_event (p.dist,
          gst_event_new_gap (FRAME_DURATION, FRAME_DURATION)));
  out = gst_harness_pull (p.dist);
  fail_unless (out != NULL && GST_BUFFER_FLAG_IS_SET (out, GST_BUFFER_FLAG_GAP));
  fail_unless (gst_buffer_get_custom_meta (out, "CudaSsimMeta") == NULL);
  gst_buffer_unref (out);
  pair (&p, 2);
  check_counts (&p, finish (&p, FALSE), 2, 1, 0);
}

GST_END_TEST;

/* The reference ends first: the distorted frames after it go on unscored. */
GST_START_TEST (test_reference_ends_first)
{
  Pads p;
  guint i;

  pads_init (&p);
  for (i = 0; i < 2; i++)
    pair (&p, i);
  fail_unless (gst_harness_push_event (p.ref, gst_event_new_eos ()));
  for (i = 2; i < 4; i++) {
    push_dist (&p, i);
    fail_if (pull_measured (&p, i));
  }
  check_counts (&p, finish (&p, TRUE), 2, 0, 2);
}

GST_END_TEST;

/* A new segment on the distorted pad reaches the src pad before the frames
 * that follow it; frames still pair by running time. */
GST_START_TEST (test_distorted_segment)
{
  Pads p;
  GstSegment seg;
  GstEvent *ev;
  const GstSegment *out = NULL;

  pads_init (&p);
  gst_segment_init (&seg, GST_FORMAT_TIME);
  seg.time = 5 * GST_SECOND;
  fail_unless (gst_harness_push_event (p.dist, gst_event_new_segment (&seg)));
  pair (&p, 0);
  while (!out && (ev = gst_harness_try_pull_event (p.dist))) {
    if (GST_EVENT_TYPE (ev) == GST_EVENT_SEGMENT) {
      gst_event_parse_segment (ev, &out);
      if (out->time != seg.time)
        out = NULL;
    }
    gst_event_unref (ev);
  }
  fail_unless (out != NULL, "the distorted pad's segment did not go on");
  pads_clear (&p);
}

GST_END_TEST;

/* A flushing seek back to 0 (a flush down both pads) ends the interval
 * being averaged: posted with the frames before it; the frames after it
 * start a new one. */
GST_START_TEST (test_interval_across_flush)
{
  Pads p;
  GstHarness *both[2];
  GstMessage *m;
  guint i;

  pads_init (&p);
  g_object_set (p.dist->element, "interval", 2 * FRAME_DURATION, NULL);
  for (i = 0; i < 3; i++)
    pair (&p, i);
  both[0] = p.ref;
  both[1] = p.dist;
  cq_test_flush (both, 2);
  for (i = 0; i < 2; i++)
    pair (&p, i);
  cq_test_check_interval (p.bus, "cudassim", 2, 0, 2 * FRAME_DURATION);
  cq_test_check_interval (p.bus, "cudassim", 1, 2 * FRAME_DURATION,
      FRAME_DURATION);
  cq_test_check_interval (p.bus, "cudassim", 2, 0, 2 * FRAME_DURATION);
  while ((m = gst_bus_pop_filtered (p.bus, GST_MESSAGE_ELEMENT))) {
    fail_if (gst_structure_has_name (gst_message_get_structure (m),
            "cudassim"), "%" GST_PTR_FORMAT, m);
    gst_message_unref (m);
  }
  check_counts (&p, finish (&p, FALSE), 5, 0, 0);
}

GST_END_TEST;

static void
cudassim_pads_tests (Suite * s)
{
  TCase *tc = cq_test_case (s, "general");

  tcase_add_test (tc, test_reference_gap);
  tcase_add_test (tc, test_distorted_gap);
  tcase_add_test (tc, test_reference_ends_first);
  tcase_add_test (tc, test_distorted_segment);
  tcase_add_test (tc, test_interval_across_flush);
}

CQ_TEST_MAIN ("CUDASSIM_TEST_BACKEND", backend, cudassim_pads_tests,
    "cudassim-pads");
