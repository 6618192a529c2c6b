#!/usr/bin/env bash
# Scaling run: the qossim reference benchmark and the baseline at 1000,
# 10 000 and 100 000 flows (simulated time shortened as the flow count grows
# so that each run stays around a minute at most), reporting wall time, peak
# RSS (/usr/bin/time -f %M) and the memory per flow derived from it:
#
#   bytes_per_flow = (peakRSS(N) - peakRSS(1 flow)) / N
#
# The 1-flow run (1 s simulated) is the "empty simulator" footprint and is
# printed too. One line per run on stdout, progress on stderr.
#
# Note: the bottleneck (155.52 Mb/s) carries at most ~2430 flows of
# 64 kb/s, so at 10 000 and 100 000 flows it is overloaded and its DropTail
# queue is full for most of the run; delivered_pkts is then capped by the
# bottleneck and pkts_per_wall_s is not comparable with the 1000-flow run.
#
# Usage: bash bench/scaling.sh [--only qossim|baseline]
set -uo pipefail

only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --only) [ $# -ge 2 ] || { echo "usage: bash bench/scaling.sh [--only qossim|baseline]" >&2; exit 2; }
                only="$2"; shift 2 ;;
        --only=*) only="${1#*=}"; shift ;;
        *) echo "usage: bash bench/scaling.sh [--only qossim|baseline]" >&2; exit 2 ;;
    esac
done

# flows:simulated seconds
configs="1000:20 10000:5 100000:2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1

if [ ! -x /usr/bin/time ]; then
    echo "scaling.sh: /usr/bin/time missing, installing Debian package 'time'" >&2
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
    { $sudo_cmd apt-get update && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y time; } >&2 \
        || { echo "scaling.sh: could not install /usr/bin/time" >&2; exit 1; }
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"

# build_exe LOG CARGO_ARGS... : build with cargo, print the path of the
# executable it produced (taken from cargo's JSON messages, so any target
# directory works). The binary is run directly so that the RSS measured is the
# simulator's, not cargo's.
build_exe() {
    local log="$1"; shift
    nice cargo build --release -j 2 --message-format=json "$@" 2>"$log" \
        | grep -o '"executable":"[^"]*"' | tail -n1 | sed 's/^"executable":"//; s/"$//'
}

# measure NAME EXE FLOWS SIM [BASE_KB]: run once under /usr/bin/time, print a
# result line; sets global last_kb to the peak RSS in KiB.
last_kb=""
measure() {
    local name="$1" exe="$2" n="$3" s="$4" base_kb="${5:-}" line kb wall per
    last_kb=""
    echo "scaling.sh: $name flows=$n sim=${s}s" >&2
    if ! /usr/bin/time -f '%M' -o "$tmp/rss" "$exe" --flows "$n" --sim "$s" >"$tmp/out" 2>"$tmp/err"; then
        echo "$name: flows=$n sim=${s}s failed ($(first_error "$tmp/err"))"
        return 1
    fi
    line="$(grep -E '^flows=' "$tmp/out" | tail -n1)"
    kb="$(grep -E '^[0-9]+$' "$tmp/rss" | tail -n1)"
    wall="$(field "$line" wall)"
    last_kb="$kb"
    if [ -n "$base_kb" ]; then
        per="$(awk -v a="$kb" -v b="$base_kb" -v n="$n" 'BEGIN { printf "%.1f", (a - b) * 1024 / n }')"
    else
        per="-"
    fi
    echo "$name: flows=$n sim=${s}s delivered_pkts=$(field "$line" delivered_pkts) wall=${wall}s peak_rss_kib=$kb bytes_per_flow=$per"
}

run_series() {
    local name="$1" exe="$2" base cfg n s
    measure "$name" "$exe" 1 1 || return
    base="$last_kb"
    for cfg in $configs; do
        n="${cfg%%:*}"
        s="${cfg#*:}"
        measure "$name" "$exe" "$n" "$s" "$base"
    done
}

echo "scaling.sh: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" >&2

if [ -z "$only" ] || [ "$only" = qossim ]; then
    if [ ! -f "$root/Cargo.toml" ]; then
        echo "qossim: not available (no Cargo.toml at the repository root)"
    else
        echo "scaling.sh: building qossim reference benchmark" >&2
        exe="$(build_exe "$tmp/qbuild.log" -p qossim-bench --bin reference)"
        if [ -z "$exe" ] || [ ! -x "$exe" ]; then
            echo "qossim: not available ($(first_error "$tmp/qbuild.log"))"
        else
            run_series qossim "$exe"
        fi
    fi
fi

if [ -z "$only" ] || [ "$only" = baseline ]; then
    echo "scaling.sh: building baseline" >&2
    exe="$(build_exe "$tmp/bbuild.log" --manifest-path "$root/bench/baseline/Cargo.toml")"
    if [ -z "$exe" ] || [ ! -x "$exe" ]; then
        echo "baseline: not available ($(first_error "$tmp/bbuild.log"))"
    else
        run_series baseline "$exe"
    fi
fi
