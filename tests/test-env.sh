#!/bin/sh
# Runs one test in the environment the GStreamer anchors give each test:
# a registry of its own and no system plugin path. The plugins it may load
# are named instead: this build's, then the system's (GST_PLUGIN_SYSTEM_PATH
# where a runtime such as ../shared/gpu/gst-runtime.sh sets one, else
# GStreamer's plugin directory as found at configure time).
#   test-env.sh NAME PROGRAM [ARGUMENTS...]
name=$1
shift
system=${GST_PLUGIN_SYSTEM_PATH_1_0:-${GST_PLUGIN_SYSTEM_PATH:-$CQ_GST_PLUGINS_DIR}}
GST_PLUGIN_PATH_1_0=$CQ_PLUGIN_DIR${system:+:$system}
GST_PLUGIN_SYSTEM_PATH_1_0=
GST_REGISTRY_1_0=$CQ_REGISTRY_DIR/$name.registry
export GST_PLUGIN_PATH_1_0 GST_PLUGIN_SYSTEM_PATH_1_0 GST_REGISTRY_1_0
exec "$@"
