/* GStreamer CUDA video quality: cudasfproject's geometry properties.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaqasfgeometry.h"

#define DEFAULT_VOLUME_SIDE 128
#define DEFAULT_VOXEL_SIZE 1.0
#define DEFAULT_DETECTOR_SIDE 256
#define DEFAULT_PIXEL_PITCH 1.0
#define DEFAULT_SDD 1000.0
#define DEFAULT_SOD 500.0
#define DEFAULT_VIEWS 360
#define MAX_HELICAL_PITCH 1e4   /* mm a rotation */

/* The geometry's properties, in the order of their IDs: a field of
 * CqSfGeometry each, unsigned (max 65535), double or boolean (an int
 * field). */
typedef struct
{
  const gchar *name, *nick, *blurb;
  GType type;
  gdouble min, max, def;
  gsize offset;
} GstCudaQaSfGeometryProp;

#define GEOMETRY_UINT(name, blurb, def, field) \
  { name, name, blurb, G_TYPE_UINT, 0, 65535, def, \
      G_STRUCT_OFFSET (CqSfGeometry, field) }
#define GEOMETRY_DOUBLE(name, blurb, min, max, def, field) \
  { name, name, blurb, G_TYPE_DOUBLE, min, max, def, \
      G_STRUCT_OFFSET (CqSfGeometry, field) }
#define GEOMETRY_BOOLEAN(name, nick, blurb, field) \
  { name, nick, blurb, G_TYPE_BOOLEAN, 0, 1, 0, \
      G_STRUCT_OFFSET (CqSfGeometry, field) }

static const GstCudaQaSfGeometryProp geometry_props[] = {
  GEOMETRY_UINT ("volume-width", "Voxels along x", DEFAULT_VOLUME_SIDE, nx),
  GEOMETRY_UINT ("volume-height", "Voxels along y", DEFAULT_VOLUME_SIDE, ny),
  GEOMETRY_UINT ("volume-depth", "Voxels along z (the rotation axis)",
      DEFAULT_VOLUME_SIDE, nz),
  GEOMETRY_DOUBLE ("voxel-size", "Transaxial voxel size in mm", 0.0, 1e6,
      DEFAULT_VOXEL_SIZE, dx),
  GEOMETRY_DOUBLE ("voxel-size-z", "Axial voxel size in mm", 0.0, 1e6,
      DEFAULT_VOXEL_SIZE, dz),
  GEOMETRY_UINT ("detector-width", "Detector cells along u (the frame width)",
      DEFAULT_DETECTOR_SIDE, nu),
  GEOMETRY_UINT ("detector-height",
      "Detector cells along v (the frame height)", DEFAULT_DETECTOR_SIDE, nv),
  GEOMETRY_DOUBLE ("pixel-pitch-u", "Detector cell width in mm", 0.0, 1e6,
      DEFAULT_PIXEL_PITCH, du),
  GEOMETRY_DOUBLE ("pixel-pitch-v", "Detector cell height in mm", 0.0, 1e6,
      DEFAULT_PIXEL_PITCH, dv),
  GEOMETRY_DOUBLE ("source-detector-distance", "Source to detector in mm (D)",
      0.0, 1e9, DEFAULT_SDD, sdd),
  GEOMETRY_DOUBLE ("source-origin-distance",
      "Source to rotation axis in mm (R)", 0.0, 1e9, DEFAULT_SOD, sod),
  GEOMETRY_UINT ("views", "Views per rotation, uniformly over 2 pi",
      DEFAULT_VIEWS, n_views),
  GEOMETRY_DOUBLE ("start-angle", "Angle of view 0 in radians", -1e3, 1e3,
      0.0, start_angle),
  /**
   * GstCudaSfProject:detector-offset-u:
   *
   * Shift of the detector's centre along u from the central ray, in mm (a
   * half-fan or offset-detector scan); detector-offset-v likewise along v.
   * A geometry in which no view sees the volume is an error at start.
   */
  GEOMETRY_DOUBLE ("detector-offset-u",
      "Detector centre along u from the central ray, in mm", -1e6, 1e6, 0.0,
      offset_u),
  GEOMETRY_DOUBLE ("detector-offset-v",
      "Detector centre along v (z) from the central ray, in mm", -1e6, 1e6,
      0.0, offset_v),
  /**
   * GstCudaSfProject:volume-offset-x:
   *
   * Shift of the volume's centre from the rotation axis along x, in mm;
   * volume-offset-y and volume-offset-z likewise.
   */
  GEOMETRY_DOUBLE ("volume-offset-x",
      "Volume centre along x from the rotation axis, in mm", -1e6, 1e6, 0.0,
      offset_x),
  GEOMETRY_DOUBLE ("volume-offset-y",
      "Volume centre along y from the rotation axis, in mm", -1e6, 1e6, 0.0,
      offset_y),
  GEOMETRY_DOUBLE ("volume-offset-z",
      "Volume centre along z from the central ray, in mm", -1e6, 1e6, 0.0,
      offset_z),
  /**
   * GstCudaSfProject:helical-pitch:
   *
   * Table feed of a helical orbit in mm a rotation: the source, and the
   * detector with it, rises helical-pitch mm along +z every `views` frames,
   * frame f at z = helical-pitch · f / views (frame 0 at z = 0, where
   * volume-offset-z is counted from), so frames past the first rotation
   * are new views and `num-buffers` decides how far the scan goes. 0 is a
   * circular orbit, whose rotations repeat. A scan (of `num-buffers`
   * frames, when set) whose rows never reach the volume is an error at
   * start.
   */
  GEOMETRY_DOUBLE ("helical-pitch",
      "Helical orbit: mm the source rises along z a rotation (0 = circular)",
      0.0, MAX_HELICAL_PITCH, 0.0, helical_pitch),
  /**
   * GstCudaSfProject:fov-mask:
   *
   * Zero the voxel columns whose centre lies outside the cylinder every
   * view sees whole (radius R·s/√(s² + D²), s the nearer detector edge):
   * they are neither projected nor backprojected, so the pair stays
   * matched.
   */
  GEOMETRY_BOOLEAN ("fov-mask", "Field-of-view mask",
      "Project only the voxel columns inside the cylinder every view "
      "sees whole", fov_mask),
};

G_STATIC_ASSERT (G_N_ELEMENTS (geometry_props) ==
    GST_CUDA_QA_SF_GEOMETRY_N_PROPS);

/* The field a property ID names (with its entry in *prop), or NULL. */
static gpointer
gst_cuda_qa_sf_geometry_field (const CqSfGeometry * g, guint first_prop_id,
    guint prop_id, const GstCudaQaSfGeometryProp ** prop)
{
  if (prop_id < first_prop_id
      || prop_id - first_prop_id >= GST_CUDA_QA_SF_GEOMETRY_N_PROPS)
    return NULL;
  *prop = &geometry_props[prop_id - first_prop_id];
  return (guint8 *) g + (*prop)->offset;
}

void
gst_cuda_qa_sf_geometry_install (GObjectClass * klass, guint first_prop_id)
{
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (geometry_props); i++) {
    const GstCudaQaSfGeometryProp *p = &geometry_props[i];
    GParamSpec *spec;

    if (p->type == G_TYPE_DOUBLE)
      spec = g_param_spec_double (p->name, p->nick, p->blurb, p->min, p->max,
          p->def, flags);
    else if (p->type == G_TYPE_BOOLEAN)
      spec = g_param_spec_boolean (p->name, p->nick, p->blurb, p->def != 0,
          flags);
    else
      spec = g_param_spec_uint (p->name, p->nick, p->blurb, (guint) p->min,
          (guint) p->max, (guint) p->def, flags);
    g_object_class_install_property (klass, first_prop_id + i, spec);
  }
}

void
gst_cuda_qa_sf_geometry_init (CqSfGeometry * g)
{
  g->nx = g->ny = g->nz = DEFAULT_VOLUME_SIDE;
  g->dx = g->dz = DEFAULT_VOXEL_SIZE;
  g->nu = g->nv = DEFAULT_DETECTOR_SIDE;
  g->du = g->dv = DEFAULT_PIXEL_PITCH;
  g->sdd = DEFAULT_SDD;
  g->sod = DEFAULT_SOD;
  g->n_views = DEFAULT_VIEWS;
  g->direction = 1;
}

gboolean
gst_cuda_qa_sf_geometry_set_property (CqSfGeometry * g, guint first_prop_id,
    guint prop_id, const GValue * value)
{
  const GstCudaQaSfGeometryProp *p;
  gpointer field = gst_cuda_qa_sf_geometry_field (g, first_prop_id, prop_id,
      &p);

  if (!field)
    return FALSE;
  if (p->type == G_TYPE_DOUBLE)
    *(gdouble *) field = g_value_get_double (value);
  else if (p->type == G_TYPE_BOOLEAN)
    *(gint *) field = g_value_get_boolean (value);
  else
    *(guint *) field = g_value_get_uint (value);
  return TRUE;
}

gboolean
gst_cuda_qa_sf_geometry_get_property (const CqSfGeometry * g,
    guint first_prop_id, guint prop_id, GValue * value)
{
  const GstCudaQaSfGeometryProp *p;
  gconstpointer field = gst_cuda_qa_sf_geometry_field (g, first_prop_id,
      prop_id, &p);

  if (!field)
    return FALSE;
  if (p->type == G_TYPE_DOUBLE)
    g_value_set_double (value, *(const gdouble *) field);
  else if (p->type == G_TYPE_BOOLEAN)
    g_value_set_boolean (value, *(const gint *) field);
  else
    g_value_set_uint (value, *(const guint *) field);
  return TRUE;
}

gboolean
gst_cuda_qa_sf_geometry_check (GstElement * element, const CqSfGeometry * g,
    gint num_buffers)
{
  CqError err = { CQ_OK, "" };

  /* a bounded helical scan must reach the volume with its frames */
  if (cq_sf_geometry_check_scan (g, num_buffers > 0 ?
          (guint64) num_buffers : (guint64) G_MAXUINT + 1, &err) != CQ_OK) {
    GST_ELEMENT_ERROR (element, LIBRARY, SETTINGS,
        ("Impossible projection geometry"), ("%s", err.message));
    return FALSE;
  }
  return TRUE;
}
