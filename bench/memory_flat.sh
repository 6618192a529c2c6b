#!/usr/bin/env bash
# Peak memory of a long run at 10% and at 100% of its length, side by side:
# bench/scenarios/long-onoff.toml (Poisson flow arrivals, exponential 300-s holding,
# EXP1 on-off sources on a 10 Mb/s link) for 1 400 s and 14 000 s of simulated time,
# with per-flow records and with per_flow = false. Prints the lines of bench
# program `memory` and the growth from 10% to 100%.
#
# Usage: bash bench/memory_flat.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --quiet --release -p qossim-bench --bin memory
bin="$root/target/release/memory"
scenario="$root/bench/scenarios/long-onoff.toml"
for per_flow in true false; do
    short="$("$bin" "$scenario" 1400 "traffic.0.per_flow=$per_flow")"
    long="$("$bin" "$scenario" 14000 "traffic.0.per_flow=$per_flow")"
    echo "per_flow=$per_flow $short"
    echo "per_flow=$per_flow $long"
    a="${short##*peak_rss_kb=}"
    b="${long##*peak_rss_kb=}"
    awk -v a="$a" -v b="$b" -v p="$per_flow" \
        'BEGIN { printf "per_flow=%s growth 10%% -> 100%%: %+.1f%% (%+d KB)\n", p, 100 * (b - a) / a, b - a }'
done
