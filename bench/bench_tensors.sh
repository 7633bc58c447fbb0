#!/bin/sh
# fpgrad on many small tensors: one safetensors file of N tensors
# (default 100,000, a DeepSeek-V3-sized checkpoint's count) of two
# elements each (tests/many-tensors.sh), float32 and bf16, analysed with
# the text report and with the JSON written, each the best of three wall
# times with the file in the page cache, with its peak resident set.  Beside them, from the same run:
# cat of the file (the read floor) and fpgrad's listing alone (the header
# parsed, the tensors listed: --match that keeps none), so that the time a
# tensor takes beyond reading its header shows.
#
# usage: bench/bench_tensors.sh FPGRAD [N]
set -eu

fpgrad=$1 n=${2:-100000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_tensors.XXXXXX")
trap 'rm -rf "$dir"' EXIT
if ! [ -x /usr/bin/time ]; then
    echo "bench_tensors: skipped: no /usr/bin/time (Debian package time)"
    exit 0
fi

# best WHAT COMMAND...: the best of three wall times, and the peak RSS
best() {
    what=$1
    shift
    wall='' rss=''
    for _ in 1 2 3; do
        /usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null 2>&1 || true
        # (the last line: time writes a nonzero exit status above it)
        tail -n 1 "$dir/time" >"$dir/last"
        read -r w m <"$dir/last"
        if [ -z "$wall" ] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then wall=$w; fi
        rss=$m
    done
    echo "$what $wall $rss"
}

for dtype in F32 BF16; do
    file=$dir/many-$dtype.safetensors
    sh "$(dirname "$0")/../tests/many-tensors.sh" "$n" "$dtype" "$file"
    cat "$file" >/dev/null
    {
        best cat cat "$file"
        best list "$fpgrad" --quiet --match '^$' "$file"
        best text "$fpgrad" --quiet "$file"
        best json "$fpgrad" --quiet --json "$dir/out.json" "$file"
    } >"$dir/rows"
    awk -v n="$n" -v dtype="$dtype" -v bytes="$(wc -c <"$file")" '
        { wall[$1] = $2; rss[$1] = $3 }
        END {
            printf "%d %s tensors of 2 elements, %.1f MB: cat %.2f s, listing alone %.2f s (%.1f us a tensor)\n",
                n, dtype, bytes / 1e6, wall["cat"], wall["list"], 1e6 * wall["list"] / n
            split("text json", kinds, " ")
            for (i = 1; i <= 2; i++) {
                k = kinds[i]
                printf "  fpgrad, %s: %.2f s wall, %.1f us a tensor, %.1f beyond the listing;" \
                    " peak RSS %.0f MB, %.2f kB a tensor\n",
                    k == "text" ? "text report" : "JSON written", wall[k], 1e6 * wall[k] / n,
                    1e6 * (wall[k] - wall["list"]) / n, rss[k] / 1e3, rss[k] / n
            }
        }' "$dir/rows"
done
