#!/bin/sh
# Measures the sharpness of every simulated detector frame with
# cudasharpness, without and with Poisson noise at 2000 photons a cell (the
# noise raises the gradient measures), printing each frame's scores and the
# summaries.
#
#   examples/cudasfproject-sharpness.sh [VIEWS]      (default: 36)
#
# Needs the plugin on GST_PLUGIN_PATH and build/examples/cudaquality-print.
set -eu
views=${1:-36}
here=$(dirname "$0")
print=${CUDAQUALITY_PRINT:-$here/../build/examples/cudaquality-print}
"$print" "cudasfproject views=$views num-buffers=$views photons=2000 \
  ! cudasharpness name=clean metrics=tenengrad+lapvar ! fakesink \
  cudasfproject views=$views num-buffers=$views photons=2000 noise=true \
  ! cudasharpness name=noisy metrics=tenengrad+lapvar ! fakesink"
