/* GStreamer CUDA video quality: what cudasfproject sets up at start.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <float.h>
#include <math.h>

#include "gstcudaqasfsetup.h"
#include "gstcudaqavolume.h"

gboolean
gst_cuda_qa_sf_setup_volume (GstElement * element, const CqSfGeometry * g,
    const gchar * location, CqPhantom phantom, gdouble mu_scale,
    float *volume, gdouble * max_integral)
{
  gsize n = (gsize) g->nx * g->ny * g->nz, i;
  gdouble max_value = 0, diag;

  if (location) {
    if (!gst_cuda_qa_volume_read (element, location, volume, g->nx, g->ny,
            g->nz))
      return FALSE;
  } else {
    cq_phantom_fill (phantom, g, volume);
  }
  for (i = 0; i < n; i++)
    max_value = MAX (max_value, fabs (volume[i]));
  diag = sqrt (pow (g->nx * g->dx, 2) + pow (g->ny * g->dx, 2) +
      pow (g->nz * g->dz, 2));
  /* line integrals are float32: bounded by the largest value times the
   * volume's diagonal */
  if (max_value * diag > FLT_MAX)
    goto too_large;
  *max_integral = mu_scale * max_value * diag;
  return TRUE;

  /* ERRORS */
too_large:
  {
    GST_ELEMENT_ERROR (element, LIBRARY, SETTINGS,
        ("Volume values too large to project"),
        ("the largest magnitude %g over the %g mm diagonal overflows float32 "
            "line integrals", max_value, diag));
    return FALSE;
  }
}

gboolean
gst_cuda_qa_sf_setup_devices (GstCudaQaDevice * dev, GstElement * element,
    GstCudaQaBackend backend, gint device_id, const gchar * list, gint * ids,
    guint * n_ids, const CqSfGeometry * g)
{
  CqError err = { CQ_OK, "" };

  *n_ids = 0;
  /* the devices of cuda-device-ids, each checked; the first is the
   * device the shared context is for */
  if (backend != GST_CUDA_QA_BACKEND_CPU
      && !gst_cuda_qa_device_ids (dev, list, ids, n_ids))
    return FALSE;
  if (*n_ids > 0)
    device_id = ids[0];
  /* GStreamer's shared context where its CUDA library works, so that
   * CUDAMemory frames are in the context of the elements downstream */
  if (!gst_cuda_qa_device_start (dev, backend, device_id, 0))
    return FALSE;
  if (!gst_cuda_qa_device_is_cuda (dev))
    return TRUE;
  if (*n_ids > 0 && gst_cuda_qa_device_id (dev) != ids[0]) {
    GST_ELEMENT_WARNING (element, RESOURCE, SETTINGS, (NULL),
        ("the shared CUDA context is on device %d, not on device %d, the "
            "first of cuda-device-ids \"%s\": projecting there instead",
            gst_cuda_qa_device_id (dev), ids[0], list));
    ids[0] = gst_cuda_qa_device_id (dev);
  }
  /* the device helper calls the element's open, which reads ids */
  if (!gst_cuda_qa_device_open (dev, NULL, &err))
    goto open_failed;
  return TRUE;

  /* ERRORS */
open_failed:
  {
    gst_cuda_qa_device_setup_error (dev, &err, "the projector",
        "%ux%ux%u voxels and %u views of %ux%u", g->nx, g->ny, g->nz,
        g->n_views, g->nu, g->nv);
    return FALSE;
  }
}
