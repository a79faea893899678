#!/bin/sh
# Runs a PyGObject example with a Python that has gi; skips (77) without one.
for py in /usr/bin/python3 python3; do
  if "$py" -c 'import gi; gi.require_version("Gst", "1.0")' 2>/dev/null; then
    out=$("$py" "$@") || exit 1
    echo "$out"
    # the example must have printed scores and the summary
    echo "$out" | grep -q "frame 2:" && echo "$out" | grep -q -- "-summary"
    exit $?
  fi
done
echo "SKIP: no Python with PyGObject (python3-gi)"
exit 77
