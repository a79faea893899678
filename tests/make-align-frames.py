#!/usr/bin/env python3
"""Test content for cudassim's alignment (tests/test-cudassim-align.c):
frames of scikit-image's astronaut photo as GRAY8, panned 3 pixels right
and 1 down a frame so that neighbouring frames differ, and each frame
JPEG-compressed (quality 30) as the distorted version.

    make-align-frames.py OUTDIR [FRAMES [WIDTH HEIGHT]]

writes OUTDIR/reference.gray and OUTDIR/distorted.gray (FRAMES frames of
WIDTH x HEIGHT bytes each, rows unpadded). Exits 77 without scikit-image
or Pillow."""
import io
import os
import sys

try:
    import numpy as np
    from PIL import Image
    from skimage import color, data
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

out = sys.argv[1]
frames = int(sys.argv[2]) if len(sys.argv) > 2 else 40
w, h = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (256, 192)
photo = (color.rgb2gray(data.astronaut()) * 255).round().astype(np.uint8)
assert photo.shape[1] >= w + 3 * frames and photo.shape[0] >= h + frames
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "reference.gray"), "wb") as ref, \
        open(os.path.join(out, "distorted.gray"), "wb") as dist:
    for i in range(frames):
        crop = np.ascontiguousarray(photo[i:i + h, 3 * i:3 * i + w])
        ref.write(crop.tobytes())
        buf = io.BytesIO()
        Image.fromarray(crop).save(buf, format="JPEG", quality=30)
        jpeg = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("L"))
        dist.write(np.ascontiguousarray(jpeg).tobytes())
