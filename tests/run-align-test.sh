#!/bin/sh
# Makes the alignment test's frames (make-align-frames.py, with a Python
# that has scikit-image and Pillow; 77 = skipped without one) in
# $CQ_REGISTRY_DIR/align-frames, then runs the test on them.
#   run-align-test.sh PROGRAM [ARGUMENTS...]
dir=${CQ_REGISTRY_DIR:-.}/align-frames
script=$(dirname "$0")/make-align-frames.py
for py in /usr/bin/python3 python3; do
  if "$py" -c 'import skimage, PIL' 2>/dev/null; then
    "$py" "$script" "$dir" || exit $?
    CQ_ALIGN_FRAMES=$dir
    export CQ_ALIGN_FRAMES
    exec "$@"
  fi
done
echo "SKIP: no Python with scikit-image and Pillow"
exit 77
