#!/usr/bin/env bash
# The test command (README "Quick start", and what .ci/run runs):
#   installs missing Debian packages, starts a private Mosquitto and PostgreSQL, runs every test
#   (swift test, including the integration suites that talk to them), and stops the servers again,
#   also when tests fail.
# Extra arguments go to `swift test` (e.g. scripts/test.sh --filter Fusion).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

work=$(mktemp -d /tmp/waymark-test.XXXXXX)
source scripts/services.sh
cleanup() { services_stop; rm -rf "$work"; }
trap cleanup EXIT INT TERM
services_start "$work"
echo "test: Mosquitto at $WAYMARK_MQTT_URL, PostgreSQL at $WAYMARK_DATABASE_URL"
export WAYMARK_TEST_REQUIRE_SERVICES=1   # integration suites fail, never skip, without them

swift test "$@"
