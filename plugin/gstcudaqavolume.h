/* GStreamer CUDA video quality: reading a volume file.
 *
 * A raw volume is nx·ny·nz little-endian float32 values, x fastest. The
 * file's size is checked before it is read (a regular file by its size, a
 * device or pipe by reading at most one byte more than the volume), so an
 * oversized file is refused at once, without reading it. Values are
 * attenuations: a NaN or an infinity is refused (the error says how many
 * and where the first is); a negative value is projected as 0, with a
 * warning saying how many and where the first is.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_QA_VOLUME_H__
#define __GST_CUDA_QA_VOLUME_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Fills vol (nx·ny·nz floats) from location. FALSE: an error naming the
 * file was posted on element. */
gboolean gst_cuda_qa_volume_read (GstElement * element,
    const gchar * location, float *vol, guint nx, guint ny, guint nz);

G_END_DECLS
#endif /* __GST_CUDA_QA_VOLUME_H__ */
