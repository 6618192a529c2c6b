# Shell helpers shared by compare.sh and scaling.sh (sourced, not run).

# field LINE KEY -> value of KEY=... in LINE, units ("s") stripped
field() {
    printf '%s\n' "$1" | awk -v k="$2" '{
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == k) { v = kv[2]; sub(/s$/, "", v); print v; exit }
        }
    }'
}

# First "error" line of a cargo/compiler log, shortened: the reason shown
# when a program is not available.
first_error() {
    local r
    r="$(grep -m1 -E '^(error|fatal)' "$1" 2>/dev/null || true)"
    [ -n "$r" ] || r="$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n1)"
    [ -n "$r" ] || r="unknown error"
    printf '%s' "${r:0:160}"
}
