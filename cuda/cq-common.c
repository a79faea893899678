/* cudaquality compute library: helpers shared by all backends.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

static int
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

CqStatus
cq_cuda_parse_devices (const char *list, int count, int *ids,
    unsigned *n_ids, CqError * err)
{
  const char *p = list ? list : "";
  unsigned n = 0, i;

  *n_ids = 0;
  while (is_blank (*p))
    p++;
  if (*p == '\0')
    return CQ_OK;
  if (strncmp (p, "all", 3) == 0) {
    const char *q = p + 3;

    while (is_blank (*q))
      q++;
    if (*q == '\0') {
      if (count <= 0)
        return cq_error_set (err, CQ_ERROR_NO_CUDA, "devices \"%s\": no "
            "CUDA device present", list);
      for (n = 0; n < (unsigned) count && n < CQ_CUDA_MAX_DEVICES; n++)
        ids[n] = (int) n;
      *n_ids = n;
      return CQ_OK;
    }
  }
  for (;;) {
    const char *start;
    long id = 0;
    int digits = 0;

    while (is_blank (*p))
      p++;
    start = p;
    while (*p >= '0' && *p <= '9' && digits < 9) {
      id = id * 10 + (*p - '0');
      p++;
      digits++;
    }
    while (is_blank (*p))
      p++;
    if (digits == 0 || (*p != ',' && *p != '\0')) {
      const char *item_end = start;

      while (*item_end && *item_end != ',')
        item_end++;
      return cq_error_set (err, CQ_ERROR_INVALID, "devices \"%s\": \"%.*s\" "
          "is not a device number (a list such as \"0,1\", or \"all\")",
          list, (int) (item_end - start), start);
    }
    if (n == CQ_CUDA_MAX_DEVICES)
      return cq_error_set (err, CQ_ERROR_INVALID, "devices \"%s\": more "
          "than %d", list, CQ_CUDA_MAX_DEVICES);
    ids[n++] = (int) id;
    if (*p == '\0')
      break;
    p++;
  }
  /* the whole list read first: a typo is named before a device */
  for (i = 0; i < n; i++)
    if (ids[i] >= count)
      return cq_error_set (err, CQ_ERROR_NO_CUDA, "CUDA device %d (of "
          "\"%s\") does not exist: %d CUDA device%s present", ids[i], list,
          count < 0 ? 0 : count, count == 1 ? " is" : "s are");
  *n_ids = n;
  return CQ_OK;
}
