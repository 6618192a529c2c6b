#!/usr/bin/env bash
# Side-by-side run of the reference scenario in qossim, ns-3 and the
# hand-written baseline, then of the TCP scenario in qossim and ns-3, once per
# TCP variant (Reno, NewReno + SACK, CUBIC + SACK, DCTCP + SACK; CUBIC and DCTCP against
# ns-3's own classes and against ns-3 with their standards' rules). Each program runs --reps
# times; the run with the smallest wall time is kept. Prints one line per
# program, then speedups computed from pkts_per_wall_s, and for each TCP
# variant both sides' per-connection goodput distributions.
#
# Usage: bash bench/compare.sh [--flows N] [--sim SECONDS] [--reps K] [--seed S]
#
# Needs bash, awk and cargo; bench/ns3/build.sh installs ns-3 (apt-get) and
# builds the ns-3 program the first time. Progress goes to stderr, results
# to stdout.
set -uo pipefail

flows=1000
sim=20
reps=3
seed=""

usage() {
    echo "usage: bash bench/compare.sh [--flows N] [--sim SECONDS] [--reps K] [--seed S]" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --flows) [ $# -ge 2 ] || usage; flows="$2"; shift 2 ;;
        --flows=*) flows="${1#*=}"; shift ;;
        --sim) [ $# -ge 2 ] || usage; sim="$2"; shift 2 ;;
        --sim=*) sim="${1#*=}"; shift ;;
        --reps) [ $# -ge 2 ] || usage; reps="$2"; shift 2 ;;
        --reps=*) reps="${1#*=}"; shift ;;
        --seed) [ $# -ge 2 ] || usage; seed="$2"; shift 2 ;;
        --seed=*) seed="${1#*=}"; shift ;;
        -h|--help) usage ;;
        *) echo "compare.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
case "$flows" in ''|*[!0-9]*) echo "compare.sh: --flows must be a positive integer" >&2; exit 2 ;; esac
case "$reps" in ''|*[!0-9]*|0) echo "compare.sh: --reps must be a positive integer" >&2; exit 2 ;; esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1

bench_args=(--flows "$flows" --sim "$sim")
if [ -n "$seed" ]; then bench_args+=(--seed "$seed"); fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"

# best_of NAME CMD... : run CMD $reps times, print the result line with the
# smallest wall time. Returns non-zero (reason on stdout) if a run fails.
best_of() {
    local name="$1"; shift
    local best="" best_wall="" line wall i
    for ((i = 1; i <= reps; i++)); do
        echo "compare.sh: $name run $i/$reps" >&2
        "$@" >"$tmp/out" 2>"$tmp/err"
        local st=$?
        if [ "$st" -ne 0 ]; then
            local why="exit status $st"
            if [ "$st" -gt 128 ]; then why="$why, signal $((st - 128))"; fi
            if [ -s "$tmp/err" ]; then why="$why: $(first_error "$tmp/err")"; fi
            echo "run failed ($why)"
            return 1
        fi
        line="$(grep -E '^flows=' "$tmp/out" | tail -n1)"
        if [ -z "$line" ]; then
            echo "no result line in output"
            return 1
        fi
        wall="$(field "$line" wall)"
        if [ -z "$best" ] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a + 0 < b + 0) }'; then
            best="$line"
            best_wall="$wall"
        fi
    done
    printf '%s\n' "$best"
}

# --- qossim ---------------------------------------------------------------
qossim_line=""
echo "compare.sh: building qossim reference benchmark" >&2
if [ ! -f "$root/Cargo.toml" ]; then
    echo "qossim: not available (no Cargo.toml at the repository root)"
elif ! nice cargo build --release -q -j 2 -p qossim-bench --bin reference >"$tmp/build.log" 2>&1; then
    echo "qossim: not available ($(first_error "$tmp/build.log"))"
elif r="$(best_of qossim cargo run --release -q -p qossim-bench --bin reference -- "${bench_args[@]}")"; then
    qossim_line="$r"
    echo "qossim: $qossim_line"
else
    echo "qossim: not available ($r)"
fi

# --- ns-3 -----------------------------------------------------------------
ns3_line=""
ns3_bin="$root/bench/ns3/build/reference"
ns3_src="$root/bench/ns3/reference.cc"
if [ ! -x "$ns3_bin" ] || [ "$ns3_src" -nt "$ns3_bin" ]; then
    echo "compare.sh: building the ns-3 program (bench/ns3/build.sh)" >&2
    bash "$root/bench/ns3/build.sh" >"$tmp/ns3build.log" 2>&1 || true
fi
if [ ! -x "$ns3_bin" ] || [ "$ns3_src" -nt "$ns3_bin" ]; then
    echo "ns3: not available (build failed: $(first_error "$tmp/ns3build.log"))"
elif r="$(best_of ns3 "$ns3_bin" "${bench_args[@]}")"; then
    ns3_line="$r"
    echo "ns3: $ns3_line"
else
    echo "ns3: not available ($r)"
fi

# --- baseline -------------------------------------------------------------
baseline_line=""
baseline_manifest="$root/bench/baseline/Cargo.toml"
echo "compare.sh: building baseline" >&2
if ! nice cargo build --release -q -j 2 --manifest-path "$baseline_manifest" >"$tmp/build.log" 2>&1; then
    echo "baseline: not available ($(first_error "$tmp/build.log"))"
elif r="$(best_of baseline cargo run --release -q --manifest-path "$baseline_manifest" -- "${bench_args[@]}")"; then
    baseline_line="$r"
    echo "baseline: $baseline_line"
else
    echo "baseline: not available ($r)"
fi

# --- ratios ---------------------------------------------------------------
# ratio LABEL NUM_LINE DEN_LINE DECIMALS
ratio() {
    local label="$1" num="$2" den="$3" dec="$4" a b
    if [ -z "$num" ] || [ -z "$den" ]; then
        echo "ratio $label speedup=n/a"
        return
    fi
    a="$(field "$num" pkts_per_wall_s)"
    b="$(field "$den" pkts_per_wall_s)"
    awk -v l="$label" -v a="$a" -v b="$b" -v d="$dec" 'BEGIN {
        if (b + 0 <= 0) { printf "ratio %s speedup=n/a\n", l; exit }
        fmt = "ratio %s speedup=%." d "fx\n"
        printf fmt, l, a / b
    }'
}
ratio qossim/ns3 "$qossim_line" "$ns3_line" 1
ratio qossim/baseline "$qossim_line" "$baseline_line" 2

# --- the TCP scenario, per variant -------------------------------------------
# 50 TCP bulk transfers over a 10 Mb/s RED bottleneck, RTTs 50-150 ms, 100 s simulated
# (bench/qossim-bench/src/tcp.rs, bench/ns3/tcp.cc), for each variant: qossim's Reno
# (no SACK) against ns-3's NewReno (SACK on: not like with like), qossim's NewReno + SACK
# against ns-3's NewReno + SACK, qossim's CUBIC + SACK against ns-3's CUBIC + SACK,
# qossim's DCTCP + SACK against ns-3's DCTCP (both with ECN and a step-marking bottleneck
# in place of RED: marked when 18 or more packets are queued). CUBIC and DCTCP are also
# run against ns-3's TCP with the window rules of their standards where ns-3.37's classes
# depart from them (cubic-standard: RFC 9438 CUBIC; dctcp-floor: TcpDctcp with Linux's
# two-segment floor; see bench/ns3/tcp.cc and bench/README.md). Both
# sides run without the timestamp option (with it, ns-3 fragments every 1512-byte packet)
# and with a 1000-segment receive window, which no connection reaches (ns-3.37 crashes
# when a SACK sender is held by a smaller one during recovery; see bench/ns3/tcp.cc).
# Lines also give the per-connection goodput distribution; a "goodput" line per variant
# sets both sides' distributions side by side.
tcp_args=(--flows 50 --sim 100 --rwnd 1000)
if [ -n "$seed" ]; then tcp_args+=(--seed "$seed"); fi
qossim_tcp_ok=1
if ! nice cargo build --release -q -j 2 -p qossim-bench --bin tcp >"$tmp/build.log" 2>&1; then
    qossim_tcp_ok=0
    qossim_tcp_why="$(first_error "$tmp/build.log")"
fi
ns3_tcp_bin="$root/bench/ns3/build/tcp"
if [ ! -x "$ns3_tcp_bin" ] || [ "$root/bench/ns3/tcp.cc" -nt "$ns3_tcp_bin" ]; then
    echo "compare.sh: building the ns-3 programs (bench/ns3/build.sh)" >&2
    bash "$root/bench/ns3/build.sh" >"$tmp/ns3build.log" 2>&1 || true
fi

# short LINE: the result line without its per-connection list
short() { printf '%s\n' "$1" | sed 's/ goodputs_mbps=[^ ]*//'; }

# goodputs LABEL QOSSIM_LINE NS3_LINE: both distributions, then the per-connection
# ratio qossim/ns-3 (connection i has the same path on both sides).
goodputs() {
    local label="$1" q="$2" n="$3"
    if [ -z "$q" ] || [ -z "$n" ]; then
        echo "goodput $label: n/a"
        return
    fi
    awk -v l="$label" -v q="$(field "$q" goodputs_mbps)" -v n="$(field "$n" goodputs_mbps)" \
        -v qs="$q" -v ns="$n" 'BEGIN {
        split("mean min p10 median p90 max", keys, " ")
        out = "goodput " l " (Mb/s, qossim/ns3):"
        for (k = 1; k <= 6; k++) {
            out = out " " keys[k] "=" get(qs, "goodput_" keys[k] "_mbps") "/" get(ns, "goodput_" keys[k] "_mbps")
        }
        out = out " jain=" get(qs, "goodput_jain") "/" get(ns, "goodput_jain")
        c = split(q, a, ","); m = split(n, b, ",")
        if (c != m || c == 0) { print out " per-connection: n/a"; exit }
        for (i = 1; i <= c; i++) r[i] = (b[i] > 0) ? a[i] / b[i] : 1e9
        # insertion sort of the ratios
        for (i = 2; i <= c; i++) { x = r[i]; j = i - 1; while (j > 0 && r[j] > x) { r[j + 1] = r[j]; j-- } r[j + 1] = x }
        p = rank(0.1, c); h = rank(0.5, c); t = rank(0.9, c)
        printf "%s per-connection ratio: p10=%.2f median=%.2f p90=%.2f\n", out, r[p], r[h], r[t]
    }
    function get(line, key,   i, f, kv) {
        f = split(line, parts, " ")
        for (i = 1; i <= f; i++) { split(parts[i], kv, "="); if (kv[1] == key) return kv[2] }
        return "?"
    }
    function rank(x, c,   k) { k = int(x * c); if (k < x * c) k++; if (k < 1) k = 1; return k }'
}

declare -A ns3_tcp_lines
declare -A qossim_tcp_lines
for pair in reno:newreno newreno-sack:newreno cubic-sack:cubic cubic-sack:cubic-standard \
    dctcp-sack:dctcp dctcp-sack:dctcp-floor; do
    qv="${pair%%:*}"
    nv="${pair##*:}"
    q_line="${qossim_tcp_lines[$qv]:-}"
    if [ -n "$q_line" ]; then
        echo "qossim-tcp-$qv: (the run above)"
    elif [ "$qossim_tcp_ok" = 0 ]; then
        echo "qossim-tcp-$qv: not available ($qossim_tcp_why)"
    elif r="$(best_of "qossim-tcp-$qv" cargo run --release -q -p qossim-bench --bin tcp -- "${tcp_args[@]}" --variant "$qv")"; then
        q_line="$r"
        qossim_tcp_lines[$qv]="$q_line"
        echo "qossim-tcp-$qv: $(short "$q_line")"
    else
        echo "qossim-tcp-$qv: not available ($r)"
    fi
    n_line="${ns3_tcp_lines[$nv]:-}"
    if [ -z "$n_line" ]; then
        if [ ! -x "$ns3_tcp_bin" ]; then
            echo "ns3-tcp-$nv: not available (build failed: $(first_error "$tmp/ns3build.log"))"
        elif r="$(best_of "ns3-tcp-$nv" "$ns3_tcp_bin" "${tcp_args[@]}" --timestamps 0 --variant "$nv")"; then
            n_line="$r"
            ns3_tcp_lines[$nv]="$n_line"
            echo "ns3-tcp-$nv: $(short "$n_line")"
        else
            echo "ns3-tcp-$nv: not available ($r)"
        fi
    else
        echo "ns3-tcp-$nv: (the run above)"
    fi
    case "$qv" in
        reno) label="tcp-reno:qossim/ns3-newreno+sack(unlike)" ;;
        *) label="tcp-$qv:qossim/ns3-$nv+sack" ;;
    esac
    ratio "$label" "$q_line" "$n_line" 1
    goodputs "tcp-$qv:ns3-$nv" "$q_line" "$n_line"
done
