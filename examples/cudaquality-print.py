#!/usr/bin/env python3
# Reads CudaSharpnessMeta and CudaSsimMeta from the buffers of a running
# pipeline (PyGObject) and prints them, with the summaries and any
# cudassim-alert; nothing of ours is imported, the metas are found by name.
#
#   GST_PLUGIN_PATH=build/plugin examples/cudaquality-print.py ['PIPELINE']
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

DEFAULT = (
    "videotestsrc num-buffers=10 pattern=smpte ! "
    "video/x-raw,format=I420,width=640,height=360 ! tee name=t "
    "t. ! queue ! cudasharpness name=sharpness metrics=tenengrad+lapvar ! "
    "ssim.reference "
    "t. ! queue ! jpegenc quality=10 ! jpegdec ! ssim.distorted "
    "cudassim name=ssim ! fakesink"
)

METAS = {"cudasharpness": "CudaSharpnessMeta", "cudassim": "CudaSsimMeta"}


def on_buffer(pad, info, data):
    name, meta_name = data
    meta = info.get_buffer().get_custom_meta(meta_name)
    if meta is not None:
        s = meta.get_structure()
        fields = []
        for i in range(s.n_fields()):
            key = s.nth_field_name(i)
            if key != "frame":
                fields.append(f"{key}={s.get_value(key):.3f}")
        print(f"{name} frame {s.get_value('frame')}: {' '.join(fields)}")
    return Gst.PadProbeReturn.OK


def main():
    Gst.init(None)
    pipeline = Gst.parse_launch(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)

    def probe(element):
        factory = element.get_factory()
        if factory is not None and factory.get_name() in METAS:
            element.get_static_pad("src").add_probe(
                Gst.PadProbeType.BUFFER, on_buffer,
                (element.get_name(), METAS[factory.get_name()]))

    pipeline.iterate_recurse().foreach(probe)
    pipeline.set_state(Gst.State.PLAYING)
    bus = pipeline.get_bus()
    status = 0
    while True:
        msg = bus.timed_pop_filtered(
            Gst.CLOCK_TIME_NONE,
            Gst.MessageType.EOS | Gst.MessageType.ERROR | Gst.MessageType.ELEMENT)
        if msg.type == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if (s.get_name().endswith("-summary")
                    or s.get_name() == "cudassim-alert"):
                print(f"{msg.src.get_name()}: {s.to_string()}")
            continue
        if msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            print(f"error: {err.message}\n{debug}", file=sys.stderr)
            status = 1
        break
    pipeline.set_state(Gst.State.NULL)
    return status


if __name__ == "__main__":
    sys.exit(main())
