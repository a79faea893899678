/* cudaquality compute library: detector noise, the CPU side (the sampler
 * itself is cq-sfnoise-impl.h, shared with the device).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include "cq-sfnoise.h"
#include "cq-sfnoise-impl.h"

int
cq_sf_noise_active (const CqSfNoise * nz)
{
  return nz && (nz->poisson || nz->electronic > 0);
}

double
cq_sf_noise_counts (const CqSfNoise * nz, uint32_t cell, double lambda)
{
  return cq_nz_counts (nz, cell, lambda);
}

double
cq_sf_noise_mean (const CqSfPixels * px, float li)
{
  return cq_nz_mean (px, li);
}

CqStatus
cq_sf_pixels_cpu (const float *li, unsigned nu, unsigned nv,
    const CqSfPixels * px, const CqSfNoise * nz, void *dst, size_t pitch,
    CqError * err)
{
  const int noisy = px->counts && cq_sf_noise_active (nz);
  unsigned u, v;

  if ((px->bytes != 1 && px->bytes != 2) || pitch < (size_t) nu * px->bytes
      || (uint64_t) nu * nv > UINT32_MAX)
    return cq_error_set (err, CQ_ERROR_INVALID, "%u bytes a pixel, pitch "
        "%zu: not a frame of %ux%u pixels", px->bytes, pitch, nu, nv);
  for (v = 0; v < nv; v++) {
    unsigned char *row = (unsigned char *) dst + (size_t) v * pitch;

    for (u = 0; u < nu; u++) {
      const float l = li[(size_t) v * nu + u];
      double x;

      if (noisy) {
        x = cq_nz_pixel (px, nz, v * nu + u, l);
      } else {
        /* as sf_pixels_kernel: libm's exp, the noiseless path of old */
        double integral = px->mu_scale * (double) l;

        if (px->counts) {
          x = px->photons * exp (-integral);
          if (px->bytes == 1)
            x = 255.0 * x / px->photons;
        } else {
          x = integral / px->integral_scale;
        }
        x = fmin (fmax (floor (x + 0.5), 0.0), px->levels);
      }
      if (px->bytes == 1) {
        row[u] = (unsigned char) x;
      } else {
        unsigned w = (unsigned) x;

        row[2 * u] = (unsigned char) (w & 0xff);
        row[2 * u + 1] = (unsigned char) (w >> 8);
      }
    }
  }
  return CQ_OK;
}
