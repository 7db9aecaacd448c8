#!/usr/bin/env bash
# Builds the web front-end (web/ → web/dist/) that crates/glidepath-web embeds:
# the npm packages from package-lock.json, bundled by esbuild. Needs node and npm;
# `cargo build` alone works without it (the pages then say how to build them).
set -euo pipefail
cd "$(dirname "$0")/../web"
if ! command -v npm >/dev/null 2>&1; then
    echo "build-web: npm is not installed (Debian: apt-get install nodejs npm)" >&2
    exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
rm -rf dist.new && mkdir -p dist.new
bundle() { # src/$1.js -> dist.new/$2.js
    npx --no-install esbuild "src/$1.js" --bundle --minify --format=esm --target=es2020 \
        --loader:.json=json --outfile="dist.new/$2.js" --log-level=warning
}
bundle main app       # the radar, pilot and control pages (index.html)
bundle editor editor  # the layout editor (editor.html)
bundle portal portal  # the run monitoring portal (portal.html)
# Every top-level page and style sheet.
cp ./*.html ./*.css dist.new/
# Replace the old build only when the new one is whole, and only if it differs,
# so that cargo does not rebuild the crate for nothing.
if [ -d dist ] && diff -rq dist dist.new >/dev/null 2>&1; then
    rm -rf dist.new
else
    rm -rf dist && mv dist.new dist
fi
echo "build-web: web/dist ($(du -sh dist | cut -f1))"
