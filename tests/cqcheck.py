# What the Python checks share: a failed check is printed and counted, the
# exit status says whether any failed.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
failures = []


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
