/* GStreamer CUDA video quality: reading a volume file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "gstcudaqavolume.h"

/* Reads up to len bytes (fewer only at the end of the file); -1 and errno
 * on a failure. */
static gssize
gst_cuda_qa_volume_read_bytes (int fd, guint8 * data, gsize len)
{
  gsize got = 0;

  while (got < len) {
    gssize r = read (fd, data + got, MIN (len - got, (gsize) 1 << 30));

    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    got += r;
  }
  return got;
}

/* The size check, before and while reading: exactly `expected` bytes. */
static gboolean
gst_cuda_qa_volume_load (GstElement * element, const gchar * location,
    guint8 * data, gsize expected, guint nx, guint ny, guint nz)
{
  struct stat st;
  gssize got;
  guint8 extra;
  int fd = g_open (location, O_RDONLY, 0);
  GstResourceError code = GST_RESOURCE_ERROR_OPEN_READ;

  if (fd < 0)
    goto system_error;
  if (fstat (fd, &st) != 0)
    goto read_failed;
  if (S_ISDIR (st.st_mode)) {
    errno = EISDIR;
    goto system_error;
  }
  if (S_ISREG (st.st_mode) && (guint64) st.st_size != expected) {
    got = st.st_size;
    goto wrong_size;
  }
  got = gst_cuda_qa_volume_read_bytes (fd, data, expected);
  if (got < 0)
    goto read_failed;
  if ((gsize) got < expected)
    goto wrong_size;
  /* a device or a pipe: one byte more is already too many (got -1: "more") */
  got = gst_cuda_qa_volume_read_bytes (fd, &extra, 1);
  if (got != 0) {
    if (got < 0)
      goto read_failed;
    got = -1;
    goto wrong_size;
  }
  g_close (fd, NULL);
  return TRUE;

  /* ERRORS */
read_failed:
  code = GST_RESOURCE_ERROR_READ;
system_error:
  {
    const gchar *why = g_strerror (errno);

    if (code == GST_RESOURCE_ERROR_READ)
      GST_ELEMENT_ERROR (element, RESOURCE, READ,
          ("Could not read the volume file \"%s\"", location), ("%s", why));
    else
      GST_ELEMENT_ERROR (element, RESOURCE, OPEN_READ,
          ("Could not open the volume file \"%s\"", location), ("%s", why));
    if (fd >= 0)
      g_close (fd, NULL);
    return FALSE;
  }
wrong_size:
  {
    gchar *actual = got < 0 ? g_strdup ("more") :
        g_strdup_printf ("%" G_GSSIZE_FORMAT " bytes", got);

    GST_ELEMENT_ERROR (element, RESOURCE, READ,
        ("Volume file \"%s\" has the wrong size", location),
        ("expected %" G_GSIZE_FORMAT " bytes (%ux%ux%u float32 values), "
            "the file has %s", expected, nx, ny, nz, actual));
    g_free (actual);
    g_close (fd, NULL);
    return FALSE;
  }
}

gboolean
gst_cuda_qa_volume_read (GstElement * element, const gchar * location,
    float *vol, guint nx, guint ny, guint nz)
{
  gsize n = (gsize) nx * ny * nz, i, bad = 0, negative = 0;
  gsize first_bad = 0, first_negative = 0;
  guint8 *bytes = (guint8 *) vol;

  if (!gst_cuda_qa_volume_load (element, location, bytes, n * sizeof (float),
          nx, ny, nz))
    return FALSE;
  /* little-endian on any host, in place */
  for (i = 0; i < n; i++) {
    guint32 bits = GST_READ_UINT32_LE (bytes + 4 * i);

    memcpy (&vol[i], &bits, sizeof (float));
    if (!isfinite (vol[i])) {
      if (bad++ == 0)
        first_bad = i;
    } else if (vol[i] < 0) {
      if (negative++ == 0)
        first_negative = i;
      vol[i] = 0;
    }
  }
  if (bad > 0)
    goto not_finite;
  if (negative > 0) {
    GST_ELEMENT_WARNING (element, STREAM, FORMAT,
        ("Volume file \"%s\" has %" G_GSIZE_FORMAT " negative values: "
            "attenuation cannot be negative, they are projected as 0",
            location, negative),
        ("the first at x=%u y=%u z=%u (value %" G_GSIZE_FORMAT ")",
            (guint) (first_negative % nx), (guint) (first_negative / nx % ny),
            (guint) (first_negative / nx / ny), first_negative));
  }
  return TRUE;

  /* ERRORS */
not_finite:
  {
    float v = vol[first_bad];

    GST_ELEMENT_ERROR (element, STREAM, FORMAT,
        ("Volume file \"%s\" has %" G_GSIZE_FORMAT " values that are not "
            "finite numbers", location, bad),
        ("the first, %s, at x=%u y=%u z=%u (value %" G_GSIZE_FORMAT " of "
            "%" G_GSIZE_FORMAT ")", isnan (v) ? "NaN" : v > 0 ? "+inf" :
            "-inf", (guint) (first_bad % nx), (guint) (first_bad / nx % ny),
            (guint) (first_bad / nx / ny), first_bad, n));
    return FALSE;
  }
}
