#!/bin/sh
# Strong scaling of fpgrad-mpi: one dump of SHARDS .npy shards (float32
# gradients, half zeros, resampled from the bundled sample's magnitudes by
# numpy), analysed by fpgrad (one thread, and RANKS threads) and by
# fpgrad-mpi on 1, 2, 4 ... up to RANKS ranks, each the best of three wall
# times with the files in the page cache, with and without the SQNR's
# second read.
#
# usage: bench/bench_mpi.sh FPGRAD FPGRAD_MPI [MiB [SHARDS [RANKS]]]
#        (defaults: 1024 MiB in 8 shards, up to 2 ranks)
# Needs numpy (skipped, with a message, without it).
set -eu

fpgrad=$1 fpgrad_mpi=$2 mib=${3:-1024} shards=${4:-8} ranks=${5:-2}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
export OMPI_MCA_btl_vader_single_copy_mechanism OMPI_MCA_rmaps_base_oversubscribe
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# the first of python3 and /usr/bin/python3 that imports numpy
python=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import numpy' 2>/dev/null; then
        python=$p
        break
    fi
done
if [ -z "$python" ]; then
    echo "bench_mpi: skipped: neither python3 nor /usr/bin/python3 imports numpy"
    exit 0
fi

"$python" - "$dir" "$mib" "$shards" <<'EOF'
import os, sys
import numpy as np
d, mib, shards = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = mib * 2**20 // 4 // shards
rng = np.random.default_rng(11)
for k in range(shards):
    x = (rng.standard_normal(n, dtype=np.float32) *
         np.exp2(rng.integers(-40, 0, n)).astype(np.float32))
    x[rng.random(n) < 0.5] = 0
    np.save(os.path.join(d, "shard-%05d.npy" % k), x)
EOF
cat "$dir"/*.npy >/dev/null

# best CMD...: the least wall time of three runs, in seconds; a run that
# fails ends the benchmark (set -e does not reach into $(best ...)).
best() {
    b=
    for _ in 1 2 3; do
        t0=$(date +%s.%N)
        if ! "$@" >/dev/null; then
            echo "bench_mpi: failed: $*" >&2
            exit 1
        fi
        t1=$(date +%s.%N)
        b=$(echo "$t0 $t1 ${b:-1e9}" | awk '{ t = $2 - $1; print (t < $3 ? t : $3) }')
    done
    echo "$b"
}

bytes=$((mib * 1048576))
echo "bench_mpi: $mib MiB of float32 in $shards shards ($(nproc) CPUs), four formats"
printf '%-34s %9s %9s %8s\n' "run" "seconds" "GB/s" "speedup"
for sq in "" --no-sqnr; do
    base=$(best "$fpgrad" --quiet $sq "$dir")
    printf '%-34s %9.3f %9.2f %8s\n' "fpgrad $sq" "$base" \
        "$(echo "$bytes $base" | awk '{ print $1 / $2 / 1e9 }')" "1.00"
    t=$(best "$fpgrad" --quiet --threads "$ranks" $sq "$dir")
    printf '%-34s %9.3f %9.2f %8.2f\n' "fpgrad --threads $ranks $sq" "$t" \
        "$(echo "$bytes $t" | awk '{ print $1 / $2 / 1e9 }')" \
        "$(echo "$base $t" | awk '{ print $1 / $2 }')"
    r=1
    while [ "$r" -le "$ranks" ]; do
        t=$(best mpirun -n "$r" "$fpgrad_mpi" --quiet $sq "$dir")
        printf '%-34s %9.3f %9.2f %8.2f\n' "mpirun -n $r fpgrad-mpi $sq" "$t" \
            "$(echo "$bytes $t" | awk '{ print $1 / $2 / 1e9 }')" \
            "$(echo "$base $t" | awk '{ print $1 / $2 }')"
        r=$((r * 2))
    done
done
