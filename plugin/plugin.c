/* GStreamer CUDA video quality: plugin registration.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gstcudasharpness.h"
#include "gstcudassim.h"
#include "gstcudasfproject.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  ret |= GST_ELEMENT_REGISTER (cudasharpness, plugin);
  ret |= GST_ELEMENT_REGISTER (cudassim, plugin);
  ret |= GST_ELEMENT_REGISTER (cudasfproject, plugin);
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaquality,
    "Real-time video quality measures on NVIDIA GPUs (with CPU fallback)",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
