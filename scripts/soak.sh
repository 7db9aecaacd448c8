#!/usr/bin/env bash
# The soak of issue 21: a federation over a three-node NATS cluster with churn (federates
# joining and resigning), cluster nodes restarted and the active executive server killed
# once, for SECONDS (default 1800, 30 minutes). Reports messages sent and received (0
# lost) and the resident memory and open files of every process after warm-up and at
# the end; writes the report as JSON to target/soak.json.
# The test command runs the same soak for 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-1800}"
if [ -z "${GLIDEPATH_NATS_SERVER:-}" ]; then
    GLIDEPATH_NATS_SERVER="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/nats-server"
    export GLIDEPATH_NATS_SERVER
fi
mkdir -p target
GLIDEPATH_SOAK_SECS="$seconds" GLIDEPATH_SOAK_JSON="$PWD/target/soak.json" \
    cargo test --release --locked -p glidepath-cli --test soak -- --nocapture
echo "report: target/soak.json"
