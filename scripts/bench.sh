#!/usr/bin/env bash
# Regenerates the measured numbers of docs/benchmarks.md ("Benchmark suite" section)
# with one command: builds `glidepath` in release, starts a private nats-server on a
# free port of 127.0.0.1, runs each `glidepath bench` command listed below, and puts
# every command with its table between the `bench:results` markers of the docs.
# JSON and plots of the run go to target/bench-results/.
#
#   bash scripts/bench.sh            # every command below
#   bash scripts/bench.sh latency    # only the `latency` commands, into target/bench-results/report.md
#
# Measures, never asserts. This machine is shared and noisy: compare each row with
# its raw peer (same run), not with another day's absolute numbers.
set -euo pipefail
cd "$(dirname "$0")/.."

only="${1:-}"
out_dir="target/bench-results"
mkdir -p "$out_dir"

source scripts/lib-nats.sh
nats_server="$(find_nats_server)" || {
    echo "nats-server not found: run 'bash scripts/test.sh' once (it installs it) or set GLIDEPATH_NATS_SERVER" >&2
    exit 1
}

cargo build --release -p glidepath-cli
bin="${CARGO_TARGET_DIR:-target}/release/glidepath"

start_private_nats "$out_dir/nats-server.log"
trap 'kill "$nats_pid" 2>/dev/null || true' EXIT

# The commands whose numbers the docs show: `SUITE ARGS...`; NATS rows get
# `--nats-url` appended. Add a line to add a row to the docs.
commands=(
    "latency --size 200 --raw"
    "latency --size 200 --raw --wait spin"
    "latency --size 200 --raw --transport nats"
    "latency --size 200 --raw --transport nats --wait spin"
    "latency --raw --count 1000"
    "fanout --size 100,1K,10K --raw"
    "fanout --size 100,1K --raw --transport nats --subscribers 1,5,9"
)

sha="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
report="$out_dir/report.md"
{
    echo "Measured $(date -u +%Y-%m-%d) at git $sha on $(nproc) CPU(s) ($(uname -m)), release build,"
    echo "nats-server $("$nats_server" --version 2>/dev/null | awk '{print $NF}') on 127.0.0.1, by \`bash scripts/bench.sh\`;"
    echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (anything above 0 shares the 2 CPUs with the measurement)."
    echo
} >"$report"
n=0
for c in "${commands[@]}"; do
    suite="${c%% *}"
    if [ -n "$only" ] && [ "$suite" != "$only" ]; then continue; fi
    n=$((n + 1))
    args=($c)
    case " $c " in *" --transport nats "*) args+=(--nats-url "$url") ;; esac
    echo ">>> glidepath bench $c" >&2
    table="$("$bin" bench "${args[@]}" --json "$out_dir/$n-$suite.json" --plot "$out_dir/plots-$n-$suite")"
    {
        echo "\`glidepath bench $c\`"
        echo
        echo '```text'
        echo "$table" | grep -v '^results written\|plot(s) written'
        echo '```'
        echo
    } >>"$report"
done

if [ -n "$only" ]; then
    echo "only $only ran: docs left alone; the tables are in $report" >&2
    exit 0
fi
python3 - "$report" <<'EOF'
import re, sys
report = open(sys.argv[1]).read()
path = "docs/benchmarks.md"
doc = open(path).read()
begin, end = "<!-- bench:results:begin -->", "<!-- bench:results:end -->"
if begin not in doc or end not in doc:
    sys.exit(f"{path} has no {begin} ... {end} block")
head, rest = doc.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n" + report + end + tail)
EOF
echo "docs/benchmarks.md updated; JSON and plots in $out_dir" >&2
