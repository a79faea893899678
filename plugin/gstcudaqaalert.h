/* GStreamer CUDA video quality: alerts with hysteresis.
 *
 * One score (the alert metric) is checked against a lower and/or an upper
 * bound each frame. The alert fires once `frames` consecutive frames are
 * past a bound, and clears once `clear_frames` consecutive frames are back
 * within them: one alert when trouble starts, one clear when it ends.
 * No GStreamer here: the report turns the events into messages.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_ALERT_H__
#define __GST_CUDA_QA_ALERT_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  gchar *metric;                /* a field name; NULL: the first field */
  gdouble below;                /* -inf: off */
  gdouble above;                /* +inf: off */
  guint frames;                 /* >= 1 */
  guint clear_frames;           /* >= 1 */
} GstCudaQaAlertConfig;

typedef enum
{
  GST_CUDA_QA_ALERT_NONE,
  GST_CUDA_QA_ALERT_FIRED,
  GST_CUDA_QA_ALERT_CLEARED
} GstCudaQaAlertEvent;

typedef struct
{
  gboolean enabled;
  gdouble below, above;
  guint frames, clear_frames;

  gboolean active;
  guint bad_run, good_run;
  guint64 first_bad, last_bad;  /* frame numbers of the current episode */
  gdouble worst, worst_excess;  /* the value furthest past its bound */
  gdouble bound;                /* the bound the firing run crossed */

  guint64 fired, cleared, frames_affected;
} GstCudaQaAlert;

void gst_cuda_qa_alert_config_init (GstCudaQaAlertConfig * config);
void gst_cuda_qa_alert_config_clear (GstCudaQaAlertConfig * config);
void gst_cuda_qa_alert_config_copy (GstCudaQaAlertConfig * dest,
    const GstCudaQaAlertConfig * src);

/* Resets the state and the counts for a new stream. */
void gst_cuda_qa_alert_reset (GstCudaQaAlert * alert,
    const GstCudaQaAlertConfig * config);

/* One frame's value of the alert metric (NaN counts as past a bound when
 * one is set). FIRED: the alert starts with this frame (alert->bound, the
 * crossed bound); CLEARED: it ended with this frame (the episode's frames
 * affected and worst value in last_frames / worst). */
GstCudaQaAlertEvent gst_cuda_qa_alert_update (GstCudaQaAlert * alert,
    guint64 frame, gdouble value);

/* Frames from the episode's first to its last frame past the bound. */
guint64 gst_cuda_qa_alert_episode_frames (const GstCudaQaAlert * alert);

G_END_DECLS
#endif /* __GST_CUDA_QA_ALERT_H__ */
