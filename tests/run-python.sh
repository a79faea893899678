#!/bin/sh
# Runs a Python test with a Python that has PyGObject (python3-gi), passing
# its exit status on (77 = skipped); skips (77) without one.
for py in /usr/bin/python3 python3; do
  if "$py" -c 'import gi; gi.require_version("Gst", "1.0")' 2>/dev/null; then
    exec "$py" "$@"
  fi
done
echo "SKIP: no Python with PyGObject (python3-gi)"
exit 77
