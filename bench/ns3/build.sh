#!/usr/bin/env bash
# Build the ns-3 benchmark programs into bench/ns3/build/ (reference and tcp).
# Installs Debian's libns3-dev (ns-3.37 on bookworm) first if it is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out_dir="$here/build"
out="$out_dir/reference"
src="$here/reference.cc"

have_ns3() {
    [ -f /usr/include/ns3/core-module.h ] && ls /usr/lib/x86_64-linux-gnu/libns3*-core.so \
        /usr/lib/*/libns3*-core.so >/dev/null 2>&1
}

if ! have_ns3; then
    echo "build.sh: libns3-dev not found, installing it with apt-get" >&2
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
    $sudo_cmd apt-get update >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y libns3-dev g++ pkg-config >&2
fi

cxx="${CXX:-g++}"
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "build.sh: no C++ compiler ($cxx) found" >&2
    exit 1
fi

modules="core network internet point-to-point applications traffic-control"
libs=""
# Prefer pkg-config. The Debian .pc files carry a malformed include flag
# ("-I/usr\;") and absolute paths to optional libraries (GSL, SQLite) whose
# -dev packages need not be installed; the shared ns-3 libraries already link
# those themselves, so only the ns-3 -l flags and -L paths are kept.
if command -v pkg-config >/dev/null 2>&1; then
    pcs=""
    for m in $modules; do
        if pkg-config --exists "ns3-$m" 2>/dev/null; then pcs="$pcs ns3-$m"; fi
    done
    if [ -n "$pcs" ]; then
        for tok in $(pkg-config --libs $pcs); do
            case "$tok" in
                -lns3*|-L*) case " $libs " in *" $tok "*) ;; *) libs="$libs $tok" ;; esac ;;
            esac
        done
    fi
fi
if [ -z "$libs" ]; then
    # Fall back to globbing the shared libraries (the name is either
    # libns3-MODULE.so or libns3.VERSION-MODULE.so depending on packaging).
    for m in $modules; do
        lib=$(ls /usr/lib/x86_64-linux-gnu/libns3*-"$m".so /usr/lib/*/libns3*-"$m".so 2>/dev/null | head -n1 || true)
        if [ -z "$lib" ]; then
            echo "build.sh: cannot find the ns-3 '$m' library" >&2
            exit 1
        fi
        libs="$libs $lib"
    done
fi

mkdir -p "$out_dir"
# The reference program, then the TCP one (bench/ns3/tcp.cc -> build/tcp).
for prog in reference tcp; do
    # shellcheck disable=SC2086
    nice -n 10 "$cxx" -std=c++17 -O2 -DNDEBUG -o "$out_dir/$prog.tmp" "$here/$prog.cc" $libs
    mv "$out_dir/$prog.tmp" "$out_dir/$prog"
    echo "build.sh: built $out_dir/$prog" >&2
done
