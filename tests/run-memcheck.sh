#!/bin/sh
# Runs a GPU test under compute-sanitizer (memcheck, or the tool named in
# SANITIZER_TOOL: racecheck, synccheck, initcheck); skips (77) where the
# tool or a device is missing.
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -z "$san" ]; then
  echo "SKIP: compute-sanitizer not found"
  exit 77
fi
"$@" >/dev/null 2>&1
rc=$?
if [ $rc -eq 77 ]; then
  echo "SKIP: no usable CUDA device"
  exit 77
fi
tool=${SANITIZER_TOOL:-memcheck}
if [ "$tool" = memcheck ]; then
  exec "$san" --tool memcheck --leak-check full --error-exitcode 1 "$@"
fi
exec "$san" --tool "$tool" --error-exitcode 1 "$@"
