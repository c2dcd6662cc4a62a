#!/usr/bin/env bash
# The README's main job. Until the end-to-end demo lands (issue 8) this decodes the shared BlueZ
# HCI capture with `waymark decode` and validates the example site file.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release --product waymark
bin=.build/release/waymark
$bin site check deploy/examples/demo-museum.yaml
capture=../shared/data/ruuvitag-sensor-hcidump/hcidump-3.x.txt
if [[ -f $capture ]]; then $bin decode --hcidump "$capture" | head -5; fi
