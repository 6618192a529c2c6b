#!/usr/bin/env bash
# Peak memory of a long run at 10% and at 100% of its length, side by side:
# - the endpoint admission study's basic experiment (E1, in-band dropping, slow-start
#   probing of 5 s; warm-up shortened to 200 s so that the 10% run measures something);
# - bench/scenarios/long-onoff.toml (Poisson flow arrivals, exponential 300-s holding,
#   EXP1 on-off sources on a 10 Mb/s link, no admission control), with per-flow
#   records and with per_flow = false;
# each for 1 400 s and 14 000 s of simulated time. Prints the lines of bench program
# `memory` (peak live heap, which is deterministic, and peak resident set size, which
# varies by a few percent from run to run with the process's address layout: the line
# shown is the run with the median resident size of three) and the growth of both from
# 10% to 100%.
#
# Usage: bash bench/memory_flat.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --quiet --release -p qossim-bench --bin memory
bin="$root/target/release/memory"

# The output line of the run with the median peak resident size of three.
median_run() {
    local lines
    lines="$(for _ in 1 2 3; do "$bin" "$@"; done)"
    sort -t= -k5 -n <<<"$lines" | sed -n 2p
}

compare() {
    local label="$1" scenario="$2"
    shift 2
    local short long a b what
    short="$(median_run "$scenario" 1400 "$@")"
    long="$(median_run "$scenario" 14000 "$@")"
    echo "$label $short"
    echo "$label $long"
    for what in peak_heap_kb peak_rss_kb; do
        a="${short##*"$what"=}"
        a="${a%% *}"
        b="${long##*"$what"=}"
        b="${b%% *}"
        awk -v a="$a" -v b="$b" -v l="$label" -v w="$what" \
            'BEGIN { printf "%s %s growth 10%% -> 100%%: %+.1f%% (%+d KB)\n", l, w, 100 * (b - a) / a, b - a }'
    done
}

compare endpoint-e1 \
    "$root/studies/endpoint-admission/scenarios/e1-inbanddropping-slowstart-5s.toml" \
    'run.warmup="200s"'
for per_flow in true false; do
    compare "long-onoff per_flow=$per_flow" "$root/bench/scenarios/long-onoff.toml" \
        "traffic.0.per_flow=$per_flow"
done
