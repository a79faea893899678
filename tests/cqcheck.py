# What the Python checks share: a failed check is printed and counted, the
# exit status says whether any failed.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import sys

failures = []


def import_gst():
    """Gst from PyGObject, or exit 77 (skipped) without it."""
    try:
        import gi
        gi.require_version("Gst", "1.0")
        from gi.repository import Gst
    except (ImportError, ValueError) as e:
        print(f"SKIP: {e}")
        sys.exit(77)
    return Gst


def gray8_caps(w, h):
    return f"video/x-raw,format=GRAY8,width={w},height={h},framerate=30/1"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def finish(what):
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print(f"all {what} checks passed")
    return 0
