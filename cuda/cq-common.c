/* cudaquality compute library: helpers shared by all backends.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-common.h"

#include <stdarg.h>
#include <stdio.h>

unsigned
cq_layout_bytes_per_pixel (const CqLayout * layout)
{
  switch (layout->kind) {
    case CQ_LAYOUT_GRAY8:
      return 1;
    case CQ_LAYOUT_GRAY16:
      return 2;
    case CQ_LAYOUT_RGB8:
      return layout->pixel_stride;
  }
  return 0;
}

CqStatus
cq_error_set (CqError * err, CqStatus status, const char *format, ...)
{
  va_list args;

  if (err) {
    err->status = status;
    va_start (args, format);
    vsnprintf (err->message, sizeof (err->message), format, args);
    va_end (args);
  }
  return status;
}
