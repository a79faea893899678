#!/bin/sh
# Packs a build dir and the GStreamer runtime of ../shared/gpu/gst-runtime.sh
# into one xz tarball, for a GPU host reached with a size limit on what
# travels (the device tool's 64 MiB): a CUDA build for one architecture and
# the runtime take about 150 MB as they are and about 30 MB packed. Object
# files and static archives stay out (meson test --no-rebuild does not
# need them) and the programs are stripped; the meson files that list the
# tests come along, so the build dir works there as it does here.
#
#   scripts/gpu-bundle.sh [BUILD_DIR] [RUNTIME] [OUT]   (build, .gpu/gst,
#                                                         .gpuc/gpu-bundle.tar.xz)
# On the GPU host, from the source tree:
#   tar -xJf .gpuc/gpu-bundle.tar.xz && source .gpu/gst/env.sh &&
#   meson test -C build --no-rebuild --suite gpu
set -eu
build=${1:-build}
runtime=${2:-.gpu/gst}
out=${3:-.gpuc/gpu-bundle.tar.xz}
[ -f "$build/build.ninja" ] || { echo "no meson build dir at $build" >&2; exit 1; }
[ -f "$runtime/env.sh" ] || { echo "no runtime at $runtime: run ../shared/gpu/gst-runtime.sh $runtime first" >&2; exit 1; }
# meson test there needs the meson that configured the build dir; the
# runtime copies Debian's only if it was installed when it was gathered
[ -x "$runtime/bin/meson" ] || { echo "$runtime has no meson (gathered before meson was installed?): run scripts/deps.sh, then ../shared/gpu/gst-runtime.sh $runtime again" >&2; exit 1; }
"$(dirname "$0")/gpu-runtime-libs.sh" "$build" "$runtime"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# the same relative paths there as here
mkdir -p "$stage/$(dirname "$build")" "$stage/$(dirname "$runtime")"
cp -a "$build" "$stage/$build"
cp -a "$runtime" "$stage/$runtime"
find "$stage/$build" \( -name '*.o' -o -name '*.a' \) -type f -delete
find "$stage/$build" -type f \( -perm -u+x -o -name '*.so' \) | while read -r f; do
  case $(head -c 4 "$f" | od -An -c | tr -d ' ') in
    177ELF) strip --strip-unneeded "$f" ;;
  esac
done
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - "$build" "$runtime" | xz -T0 -6 > "$out.tmp"
mv "$out.tmp" "$out"
echo "$out: $(du -h "$out" | cut -f1) ($build and $runtime)"
