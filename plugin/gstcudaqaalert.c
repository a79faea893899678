/* GStreamer CUDA video quality: alerts with hysteresis.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "gstcudaqaalert.h"

void
gst_cuda_qa_alert_config_init (GstCudaQaAlertConfig * config)
{
  config->metric = NULL;
  config->below = -INFINITY;
  config->above = INFINITY;
  config->frames = 1;
  config->clear_frames = 1;
}

void
gst_cuda_qa_alert_config_clear (GstCudaQaAlertConfig * config)
{
  g_clear_pointer (&config->metric, g_free);
}

void
gst_cuda_qa_alert_config_copy (GstCudaQaAlertConfig * dest,
    const GstCudaQaAlertConfig * src)
{
  g_free (dest->metric);
  *dest = *src;
  dest->metric = g_strdup (src->metric);
}

void
gst_cuda_qa_alert_reset (GstCudaQaAlert * alert,
    const GstCudaQaAlertConfig * config)
{
  memset (alert, 0, sizeof (*alert));
  alert->below = config->below;
  alert->above = config->above;
  alert->frames = MAX (config->frames, 1);
  alert->clear_frames = MAX (config->clear_frames, 1);
  alert->enabled = !(isinf (alert->below) && alert->below < 0)
      || !(isinf (alert->above) && alert->above > 0);
}

/* How far value is past a bound (> 0), or 0 when within them. */
static gdouble
gst_cuda_qa_alert_excess (const GstCudaQaAlert * alert, gdouble value,
    gdouble * bound)
{
  if (isnan (value)) {
    *bound = isinf (alert->below) ? alert->above : alert->below;
    return INFINITY;
  }
  if (value < alert->below) {
    *bound = alert->below;
    return alert->below - value;
  }
  if (value > alert->above) {
    *bound = alert->above;
    return value - alert->above;
  }
  return 0.0;
}

GstCudaQaAlertEvent
gst_cuda_qa_alert_update (GstCudaQaAlert * alert, guint64 frame,
    gdouble value)
{
  gdouble bound = 0.0, excess;

  if (!alert->enabled)
    return GST_CUDA_QA_ALERT_NONE;
  excess = gst_cuda_qa_alert_excess (alert, value, &bound);
  if (excess > 0.0) {
    alert->good_run = 0;
    if (alert->bad_run++ == 0 && !alert->active) {
      alert->first_bad = frame;
      alert->worst_excess = -1.0;
    }
    alert->last_bad = frame;
    if (excess > alert->worst_excess) {
      alert->worst_excess = excess;
      alert->worst = value;
    }
    if (!alert->active && alert->bad_run >= alert->frames) {
      alert->active = TRUE;
      alert->bound = bound;
      alert->fired++;
      return GST_CUDA_QA_ALERT_FIRED;
    }
    return GST_CUDA_QA_ALERT_NONE;
  }
  alert->bad_run = 0;
  if (!alert->active)
    return GST_CUDA_QA_ALERT_NONE;
  if (++alert->good_run < alert->clear_frames)
    return GST_CUDA_QA_ALERT_NONE;
  alert->active = FALSE;
  alert->good_run = 0;
  alert->cleared++;
  alert->frames_affected += gst_cuda_qa_alert_episode_frames (alert);
  return GST_CUDA_QA_ALERT_CLEARED;
}

guint64
gst_cuda_qa_alert_episode_frames (const GstCudaQaAlert * alert)
{
  return alert->last_bad - alert->first_bad + 1;
}
