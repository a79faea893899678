/* GStreamer CUDA video quality: what cudasfproject sets up at start.
 *
 * The volume it projects (a file or a phantom, checked against float32
 * line integrals) and the devices it projects on (cuda-device-ids, the
 * shared context's device, the projector opened through the device
 * helper): each posts the element's error where the library or the
 * system refuses, so that start only says what goes where.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_SF_SETUP_H__
#define __GST_CUDA_QA_SF_SETUP_H__

#include <gst/gst.h>

#include "gstcudaqadevice.h"
#include "cq-phantom.h"
#include "cq-sfproject.h"

G_BEGIN_DECLS

/* Fills volume (g's nx·ny·nz floats) from location, or with phantom when
 * location is NULL; *max_integral is then the largest line integral of mu
 * (mu_scale times the largest magnitude times the volume's diagonal).
 * FALSE: an error was posted on element. */
gboolean gst_cuda_qa_sf_setup_volume (GstElement * element,
    const CqSfGeometry * g, const gchar * location, CqPhantom phantom,
    gdouble mu_scale, float *volume, gdouble * max_integral);

/* Starts dev on backend for device_id or the devices of list (the
 * cuda-device-ids property: ids and *n_ids as gst_cuda_qa_device_ids
 * gives them, ids[0] moved with a warning to the shared context's device
 * where that differs) and, on CUDA, opens the projector for g. FALSE: an
 * error was posted on element. */
gboolean gst_cuda_qa_sf_setup_devices (GstCudaQaDevice * dev,
    GstElement * element, GstCudaQaBackend backend, gint device_id,
    const gchar * list, gint * ids, guint * n_ids, const CqSfGeometry * g);

G_END_DECLS
#endif /* __GST_CUDA_QA_SF_SETUP_H__ */
