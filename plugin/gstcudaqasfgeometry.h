/* GStreamer CUDA video quality: cudasfproject's geometry properties.
 *
 * The scan's geometry (volume, detector and orbit, a field of CqSfGeometry
 * a property) is installed from one table, defaulted, stored and read back
 * here, and checked at start, so that the element keeps only its own
 * properties.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_SF_GEOMETRY_H__
#define __GST_CUDA_QA_SF_GEOMETRY_H__

#include <gst/gst.h>

#include "cq-sfproject.h"

G_BEGIN_DECLS

/* How many property IDs the geometry takes, from the first one given. */
#define GST_CUDA_QA_SF_GEOMETRY_N_PROPS 20

/* Installs the properties with IDs first_prop_id ... + N_PROPS - 1
 * (mutable in READY: the geometry is taken at start). */
void gst_cuda_qa_sf_geometry_install (GObjectClass * klass,
    guint first_prop_id);

/* The properties' defaults, on a zeroed geometry. */
void gst_cuda_qa_sf_geometry_init (CqSfGeometry * g);

/* For set_property / get_property, under the element's object lock: FALSE
 * when prop_id is not one of the geometry's. */
gboolean gst_cuda_qa_sf_geometry_set_property (CqSfGeometry * g,
    guint first_prop_id, guint prop_id, const GValue * value);
gboolean gst_cuda_qa_sf_geometry_get_property (const CqSfGeometry * g,
    guint first_prop_id, guint prop_id, GValue * value);

/* At start: the geometry for a scan of num_buffers frames (the element's
 * num-buffers; 0 or less: unbounded). FALSE: a LIBRARY error was posted on
 * element with the library's reason. */
gboolean gst_cuda_qa_sf_geometry_check (GstElement * element,
    const CqSfGeometry * g, gint num_buffers);

G_END_DECLS
#endif /* __GST_CUDA_QA_SF_GEOMETRY_H__ */
