#!/usr/bin/env bash
# The formation-flying testbed's measurements of its bus (seed 003, section IV, Figs.
# 7-14), all eight figures in one command: send-only latency by size, send-receive
# latency by size and by 1-9 subscribers, throughput by size and by 1-50 subscribers
# as processes, each on "loopback" (the NATS server on 127.0.0.1) and across a
# "network" (the NATS server in a network namespace of its own, the benchmark in
# another, joined by a veth pair; needs root), AGREED as in the paper and raw NATS in
# the same runs. Writes the JSON and the notched boxplots (PNG) to DIR.
#
#   bash scripts/bus-figures.sh [DIR]        (default target/bus-figures)
#
# COUNT (send-only and send-receive messages per configuration, default 1000) and
# TCOUNT (throughput, default 2000) shorten or lengthen it; SERVICE (default agreed).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-target/bus-figures}"
count="${COUNT:-1000}"
tcount="${TCOUNT:-2000}"
service="${SERVICE:-agreed}"
if [ -z "${GLIDEPATH_NATS_SERVER:-}" ]; then
    GLIDEPATH_NATS_SERVER="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/nats-server"
fi
[ "$(id -u)" = 0 ] || { echo "bus-figures: the network half needs root (network namespaces)" >&2; exit 2; }
cargo build --release --locked -p glidepath-cli
glidepath="$PWD/target/release/glidepath"
mkdir -p "$dir"
work="$(mktemp -d)"
ns_a="gpfig-$$-a"
ns_b="gpfig-$$-b"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$ns_a" 2>/dev/null || true
    ip netns del "$ns_b" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# One server configuration for both: JetStream (the ordered levels' stream) and room
# for the paper's largest messages (NATS refuses payloads over max_payload).
start_server() { # HOST PORT [NAMESPACE]
    local conf="$work/nats-$2.conf"
    printf 'host: %s\nport: %s\nmax_payload: 16777216\njetstream { store_dir: "%s" }\n' \
        "$1" "$2" "$work/js-$2" > "$conf"
    if [ -n "${3:-}" ]; then
        ip netns exec "$3" "$GLIDEPATH_NATS_SERVER" -c "$conf" >/dev/null 2>&1 &
    else
        "$GLIDEPATH_NATS_SERVER" -c "$conf" >/dev/null 2>&1 &
    fi
    pids+=("$!")
    for _ in $(seq 100); do
        if ${3:+ip netns exec "$3"} bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; then return; fi
        sleep 0.1
    done
    echo "bus-figures: nats-server did not start on $1:$2" >&2
    exit 1
}

# The three tests on one path. RUN is empty (this namespace) or `ip netns exec NS`.
measure() { # NAME URL RUN...
    local name="$1" url="$2"
    shift 2
    echo "== $name: send-only (Figs. 7-8)"
    "$@" "$glidepath" bench bus send --transport nats --nats-url "$url" --service "$service" \
        --size 100,1000,10000,100000,1000000,9000000 --count "$count" \
        --json "$dir/$name-send.json" --plot "$dir/$name-send"
    echo "== $name: send-receive by size and subscribers (Figs. 9-12)"
    "$@" "$glidepath" bench bus send-receive --transport nats --nats-url "$url" \
        --service "$service" --size 100,1000,10000,100000 --subscribers 1,2,3,4,5,6,7,8,9 \
        --count "$count" --json "$dir/$name-send-receive.json" --plot "$dir/$name-send-receive"
    echo "== $name: throughput, subscribers as processes (Figs. 13-14)"
    "$@" "$glidepath" bench bus throughput --transport nats --nats-url "$url" --processes \
        --service "$service" --size 1000,10000,100000 --subscribers 1,5,10,20,30,50 \
        --count "$tcount" --json "$dir/$name-throughput.json" --plot "$dir/$name-throughput"
}

start_server 127.0.0.1 14881
measure loopback nats://127.0.0.1:14881

ip netns add "$ns_a"
ip netns add "$ns_b"
ip -n "$ns_a" link add eth0 type veth peer name eth0 netns "$ns_b"
ip -n "$ns_a" addr add 10.87.0.1/24 dev eth0
ip -n "$ns_b" addr add 10.87.0.2/24 dev eth0
for ns in "$ns_a" "$ns_b"; do
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
done
start_server 10.87.0.1 4222 "$ns_a"
measure network nats://10.87.0.1:4222 ip netns exec "$ns_b"
echo "bus-figures: JSON and PNGs in $dir"
