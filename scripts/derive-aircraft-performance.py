#!/usr/bin/env python3
"""Derives data/aircraft-performance.csv from OpenAP's WRAP kinematic tables.

Usage: python3 scripts/derive-aircraft-performance.py OPENAP_DATA_DIR > data/aircraft-performance.csv

OPENAP_DATA_DIR is the `openap/data` folder of the openap 2.6.2 wheel from PyPI
(`pip download --no-deps openap==2.6.2`, then unzip the wheel). For every aircraft type
with a WRAP table (`wrap/<type>.txt`), it keeps the optimum ("opt") value of the
parameters the target generator's point-mass model flies by, plus the limits of the
type's file (`aircraft/<type>.yml`: vmo, mmo, ceiling), converted to knots, feet and
feet per minute. The values are OpenAP's; only units and layout change here.
"""
import os
import sys

KT = 1.0 / 0.514444  # m/s -> kt
FT = 1.0 / 0.3048  # m -> ft
FPM = 60.0 / 0.3048  # m/s -> ft/min


def wrap_table(path):
    """Parameter name -> (opt, min, max); the name column has spaces, so read from the right."""
    rows = {}
    with open(path) as f:
        next(f)
        for line in f:
            cols = line.split()
            if len(cols) < 8:
                continue
            rows[cols[0]] = tuple(float(c) for c in cols[-5:-2])
    return rows


def yml_fields(path):
    fields = {}
    with open(path) as f:
        for line in f:
            if ":" in line and not line.startswith(" "):
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    return fields


COLUMNS = [
    "type", "name", "vmo_kt", "mmo", "ceiling_ft",
    "liftoff_kt", "cruise_alt_ft", "cruise_alt_max_ft",
    "climb_cas_kt", "climb_mach", "climb_cas_alt_ft", "climb_mach_alt_ft",
    "climb_rate_low_fpm", "climb_rate_cas_fpm", "climb_rate_mach_fpm", "climb_rate_max_fpm",
    "cruise_cas_kt", "cruise_mach", "cruise_mach_max",
    "descent_mach", "descent_cas_kt", "descent_mach_alt_ft", "descent_cas_alt_ft",
    "descent_rate_mach_fpm", "descent_rate_cas_fpm", "descent_rate_low_fpm", "descent_rate_max_fpm",
    "approach_cas_kt", "approach_cas_min_kt", "approach_rate_fpm",
]


def row(data, t):
    w = wrap_table(os.path.join(data, "wrap", t + ".txt"))
    y = yml_fields(os.path.join(data, "aircraft", t + ".yml"))
    o = lambda k: w[k][0]
    climb_rates = [w[k][2] for k in ("cl_vs_avg_pre_cas", "cl_vs_avg_cas_const", "cl_vs_avg_mach_const")]
    descent_rates = [w[k][1] for k in ("de_vs_avg_mach_const", "de_vs_avg_cas_const", "de_vs_avg_after_cas")]
    values = [
        t.upper(), y["aircraft"], float(y["vmo"]), float(y["mmo"]), float(y["ceiling"]) * FT,
        o("to_v_lof") * KT, o("cr_h_mean") * 1000 * FT, o("cr_h_max") * 1000 * FT,
        o("cl_v_cas_const") * KT, o("cl_v_mach_const"), o("cl_h_cas_const") * 1000 * FT,
        o("cl_h_mach_const") * 1000 * FT,
        o("cl_vs_avg_pre_cas") * FPM, o("cl_vs_avg_cas_const") * FPM,
        o("cl_vs_avg_mach_const") * FPM, max(climb_rates) * FPM,
        o("cr_v_cas_mean") * KT, o("cr_v_mach_mean"), o("cr_v_mach_max"),
        o("de_v_mach_const"), o("de_v_cas_const") * KT, o("de_h_mach_const") * 1000 * FT,
        o("de_h_cas_const") * 1000 * FT,
        -o("de_vs_avg_mach_const") * FPM, -o("de_vs_avg_cas_const") * FPM,
        -o("de_vs_avg_after_cas") * FPM, -min(descent_rates) * FPM,
        o("fa_va_avg") * KT, w["fa_va_avg"][1] * KT, -o("fa_vs_avg") * FPM,
    ]
    out = []
    for v in values:
        if isinstance(v, float):
            out.append("%g" % round(v, 3) if abs(v) < 10 else "%d" % round(v))
        else:
            out.append(v)
    return out


def main():
    data = sys.argv[1]
    types = sorted(f[:-4] for f in os.listdir(os.path.join(data, "wrap")) if f.endswith(".txt"))
    print("# Aircraft performance for glidepath-tg, derived from OpenAP 2.6.2 (LGPL-3.0): see data/README.md")
    print(",".join(COLUMNS))
    for t in types:
        print(",".join(str(v) for v in row(data, t)))


main()
