#!/usr/bin/env bash
# Runs the Criterion micro-benchmarks of the hot paths with short settings (this is a
# 2-core machine shared with other work) and prints one markdown table of medians.
#
#   scripts/microbench.sh                # all five benches
#   scripts/microbench.sh envelope galt  # some of them: envelope, bundle, track, inproc, galt, ddm
#
# Environment: WARM_UP (s, default 1), MEASURE (s, default 3), CARGO_TARGET_DIR.
# Results and their explanation: docs/microbenchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."

WARM_UP="${WARM_UP:-1}"
MEASURE="${MEASURE:-3}"
declare -A CRATE=(
    [envelope]=glidepath-wire
    [bundle]=glidepath-codec
    [track]=glidepath-atm
    [inproc]=glidepath-transport
    [galt]=glidepath-core
    [ddm]=glidepath-core
)
benches=("$@")
[ ${#benches[@]} -eq 0 ] && benches=(envelope bundle track inproc galt ddm)

for b in "${benches[@]}"; do
    crate="${CRATE[$b]:-}"
    if [ -z "$crate" ]; then
        echo "unknown bench '$b' (expected: envelope bundle track inproc galt ddm)" >&2
        exit 2
    fi
    echo "== cargo bench -p $crate --bench $b -- --warm-up-time $WARM_UP --measurement-time $MEASURE"
    cargo bench --locked -p "$crate" --bench "$b" -- --warm-up-time "$WARM_UP" --measurement-time "$MEASURE"
done

# Summary from Criterion's JSON (target/criterion/<group>/<bench>/new/*.json).
target="${CARGO_TARGET_DIR:-target}"
if command -v python3 >/dev/null; then
    python3 - "$target/criterion" <<'PY'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
rows = []
for est in sorted(root.glob("**/new/estimates.json")):
    meta = json.loads((est.parent / "benchmark.json").read_text())
    median = json.loads(est.read_text())["median"]["point_estimate"]  # ns per iteration
    tp = meta.get("throughput") or {}
    if "Bytes" in tp:
        rate = f"{tp['Bytes'] / median * 1e9 / 2**20:,.1f} MiB/s"
    elif "Elements" in tp:
        per = median / tp["Elements"]
        rate = f"{tp['Elements'] / median * 1e9 / 1e6:,.2f} M/s ({per:,.1f} ns each)"
    else:
        rate = ""
    name = "/".join(x for x in (meta["function_id"], meta.get("value_str")) if x)
    rows.append((meta["group_id"], name, median, rate))
print("\n| group | benchmark | median / iteration | throughput |\n|---|---|---:|---:|")
for g, n, m, r in rows:
    t = f"{m:,.1f} ns" if m < 1e4 else f"{m / 1e3:,.2f} µs"
    print(f"| {g} | {n} | {t} | {r} |")
PY
fi
