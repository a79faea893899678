#!/bin/sh
# Runs a Python test with a Python that can import what it needs, passing
# its exit status on (77 = skipped); skips (77) without one.
#
#   run-python.sh [--needs MODULE,MODULE...] SCRIPT [ARGS]
#
# Without --needs: PyGObject (python3-gi) with Gst 1.0. The system's Python
# is tried first (Debian's packages), then python3 on PATH (a GPU host's).
check='import gi; gi.require_version("Gst", "1.0")'
what="PyGObject (python3-gi)"
if [ "${1:-}" = "--needs" ]; then
  check="import $2"
  what=$2
  shift 2
fi
for py in /usr/bin/python3 python3; do
  if "$py" -c "$check" 2>/dev/null; then
    exec "$py" "$@"
  fi
done
echo "SKIP: no Python with $what"
exit 77
