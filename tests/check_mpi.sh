#!/bin/sh
# The MPI programs under mpirun against the tools in one process, with 1,
# 2 and 4 ranks (4 oversubscribed) and without mpirun: fpgrad-mpi on the
# bundled sample (--scale auto, an MX format) and on a synthetic dump split
# into 7 shards (SR, MX, zeros, subnormals, infinities and NaNs) and with
# --shards on a step dumped by 5 ranks, and with --recipes (a delayed and
# a stochastic-rounding recipe among them), its JSON, CSV and table
# byte-identical to fpgrad's; fpswamp-mpi on the sample
# (stochastic rounding over two seeds, a learning-rate sweep; recipes
# storing the weights), its JSON and text (the summary and, with --all, every table) byte-identical to
# fpswamp's.  A shard cut short fails the whole job with the file named,
# within a time limit (no rank may wait forever); an error every rank
# meets, the usage and --version are written once.  Skipped (77) without
# the MPI programs (./configure --with-mpi), mpirun or numpy.
#
# make check runs it from the build directory with srcdir set; MPIRUN
# names another launcher.  As root (CI), Open MPI needs its consent
# variables, set here.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
MPI_TOOL=${FPGRAD_MPI:-./bin/fpgrad-mpi}
FPSWAMP=${FPSWAMP:-./bin/fpswamp}
SWAMP_MPI=${FPSWAMP_MPI:-./bin/fpswamp-mpi}
MPIRUN=${MPIRUN:-mpirun}
FPKIT_PLOTDIR=${FPKIT_PLOTDIR:-$srcdir/plots}
export FPKIT_PLOTDIR
tool=mpi
. "$srcdir/tests/toolcheck.sh"
if [ ! -x "$MPI_TOOL" ] || [ ! -x "$SWAMP_MPI" ]; then
    echo "check_mpi: no $MPI_TOOL or $SWAMP_MPI (configure found no MPI); skipped"
    exit 77
fi
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "check_mpi: no $MPIRUN; skipped"
    exit 77
fi
need_python
need_modules 'numpy' # to make the shards
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
export OMPI_MCA_btl_vader_single_copy_mechanism OMPI_MCA_rmaps_base_oversubscribe

# A step split into 7 shards, as ZeRO or FSDP ranks dump one each.
mkdir "$tmp/shards"
"$py" - "$tmp/shards" <<'EOF'
import os, sys
import numpy as np
rng = np.random.default_rng(7)
for k in range(7):
    n = int(rng.integers(1000, 40000))
    x = rng.standard_normal(n) * 10.0 ** rng.uniform(-12, 3, n)
    x[rng.random(n) < 0.4] = 0
    x[:3] = [np.inf, np.nan, 1e-42] if k == 3 else x[:3]
    shape = (n // 8, 8) if n % 8 == 0 else (n,)
    np.save(os.path.join(sys.argv[1], "shard-%05d-of-00007.npy" % k),
            x.astype("<f4").reshape(shape))
EOF

# One step dumped by 5 ranks, each a shard of every tensor (for --shards).
mkdir "$tmp/ranks"
"$py" - "$tmp/ranks" <<'EOF'
import json, os, struct, sys
import numpy as np
rng = np.random.default_rng(9)
tensors = {n: rng.standard_normal(int(rng.integers(500, 5000))) * 10.0 ** rng.uniform(-10, 2)
           for n in ("grad/w1", "grad/w2", "grad/b")}
for k in range(5):
    header, blobs, off = {}, [], 0
    for n, x in tensors.items():
        b = np.array_split(x, 5)[k].astype("<f4").tobytes()
        header[n] = {"dtype": "F32", "shape": [len(b) // 4], "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(os.path.join(sys.argv[1], "step-rank%d.safetensors" % k), "wb").write(
        struct.pack("<Q", len(h)) + h + b"".join(blobs))
EOF

# same NAME RANKS TOOL MPI_TOOL OUTPUTS ARGS...: MPI_TOOL on RANKS ranks (0:
# without mpirun) writes what TOOL writes: the table, and each output of
# OUTPUTS (json, csv), byte for byte.
same() {
    name=$1 ranks=$2 ref=$3 mpi=$4 outputs=$5
    shift 5
    ref_out= mpi_out=
    for o in $outputs; do
        ref_out="$ref_out --$o $tmp/$name.ref.$o"
        mpi_out="$mpi_out --$o $tmp/$name.$o"
    done
    # shellcheck disable=SC2086 # lists of options
    "$ref" $ref_out "$@" >"$tmp/$name.ref.txt"
    # shellcheck disable=SC2086
    if [ "$ranks" -eq 0 ]; then
        set -- "$mpi" $mpi_out "$@"
    else
        set -- "$MPIRUN" -n "$ranks" "$mpi" $mpi_out "$@"
    fi
    rc=0
    timeout 300 "$@" >"$tmp/$name.txt" 2>"$tmp/$name.err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        bad "$name: $* exited $rc: $(head -n 3 "$tmp/$name.err")"
        return
    fi
    for o in $outputs txt; do
        if ! cmp -s "$tmp/$name.ref.$o" "$tmp/$name.$o"; then
            bad "$name: the $o output differs from $(basename "$ref")'s: $(diff "$tmp/$name.ref.$o" "$tmp/$name.$o" | head -n 4)"
            return
        fi
    done
    ok
}

for n in 0 1 2 4; do
    same "sample$n" "$n" "$FPGRAD" "$MPI_TOOL" "json csv" \
        --formats fp16,bf16,e4m3,e5m2,mxfp8 --scale auto "$srcdir/tests/data/sample"
    same "shards$n" "$n" "$FPGRAD" "$MPI_TOOL" "json csv" \
        --round sr --formats e4m3,mxfp4,bf16 --threads 2 "$tmp/shards"
    same "ranks$n" "$n" "$FPGRAD" "$MPI_TOOL" "json csv" --shards --scale auto "$tmp/ranks"
    same "recipes$n" "$n" "$FPGRAD" "$MPI_TOOL" "json csv" \
        --recipes standard,fp8-tensor-delayed,nvfp4-sr "$srcdir/tests/data/sample"
    same "swamp$n" "$n" "$FPSWAMP" "$SWAMP_MPI" json \
        --seeds 2 --lr 1e-3 --lr-sweep 1e-4:1e-1:4 --all "$srcdir/tests/data/sample"
    same "swamprecipes$n" "$n" "$FPSWAMP" "$SWAMP_MPI" json --formats e4m3 --seeds 1 \
        --recipes nvfp4-sr,fp8-tensor-delayed,mxfp8-e4m3 --steps 3 --lr-sweep 1e-4:1e-1:3 --lr 1e-3 \
        "$srcdir/tests/data/sample"
done

# A shard cut short: the job fails, naming it, and does not hang.
cp -R "$tmp/shards" "$tmp/cut"
f=$tmp/cut/shard-00005-of-00007.npy
head -c "$(($(wc -c <"$f") - 100))" "$f" >"$f.part" && mv "$f.part" "$f"
rc=0
timeout 120 "$MPIRUN" -n 3 "$MPI_TOOL" --quiet "$tmp/cut" >"$tmp/cut.out" 2>"$tmp/cut.err" || rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
    bad "a shard cut short: exit status $rc (0: not noticed, 124: hung)"
elif ! grep -q "^fpgrad-mpi: .*shard-00005-of-00007.npy" "$tmp/cut.err"; then
    bad "a shard cut short: no message names it: $(head -n 3 "$tmp/cut.err")"
else
    ok
fi

# Ranks that see different files (the man page forbids it): status 2, said
# before any work (otherwise a failed MPI call would end the job, or,
# without --shards, ranks would read different tensors and the job
# succeed).
cp -R "$tmp/ranks" "$tmp/more"
cp "$tmp/more/step-rank0.safetensors" "$tmp/more/step-rank5.safetensors"
for opts in "--shards --scale auto" ""; do
    rc=0
    # shellcheck disable=SC2086
    timeout 120 "$MPIRUN" -n 1 "$MPI_TOOL" --quiet $opts "$tmp/ranks" : \
        -n 1 "$MPI_TOOL" --quiet $opts "$tmp/more" >"$tmp/more.out" 2>&1 || rc=$?
    if [ "$rc" -eq 2 ] && grep -q "^fpgrad-mpi: the ranks found different tensors" "$tmp/more.out"; then
        ok
    else
        bad "ranks with different files ($opts): exit status $rc (want 2): $(grep -v '^-' "$tmp/more.out" | head -n 3)"
    fi
done
mkdir "$tmp/renamed" # the same tensors in files of other names
for f in "$tmp/ranks/"*; do cp "$f" "$tmp/renamed/r-$(basename "$f")"; done
rc=0
timeout 120 "$MPIRUN" -n 1 "$MPI_TOOL" --quiet "$tmp/ranks" : \
    -n 1 "$MPI_TOOL" --quiet "$tmp/renamed" >"$tmp/renamed.out" 2>&1 || rc=$?
if [ "$rc" -eq 2 ] && grep -q "^fpgrad-mpi: the ranks found different tensors" "$tmp/renamed.out"; then
    ok
else
    bad "ranks with renamed files: exit status $rc (want 2): $(grep -v '^-' "$tmp/renamed.out" | head -n 3)"
fi
mkdir "$tmp/fewer"
cp "$srcdir/tests/data/sample/"* "$tmp/fewer/"
rm "$tmp/fewer/step-000919.safetensors"
rc=0
timeout 120 "$MPIRUN" -n 1 "$SWAMP_MPI" "$srcdir/tests/data/sample" : \
    -n 1 "$SWAMP_MPI" "$tmp/fewer" >"$tmp/fewer.out" 2>&1 || rc=$?
if [ "$rc" -eq 2 ] && grep -q "^fpswamp-mpi: the ranks found different weight and update pairs" "$tmp/fewer.out"; then
    ok
else
    bad "fpswamp-mpi, ranks with different files: exit status $rc (want 2): $(grep -v '^-' "$tmp/fewer.out" | head -n 3)"
fi

# A failed MPI call (ranks given other --formats: counts of other lengths)
# is reported with MPI's reason, status 3, not by MPI's own abort.
rc=0
timeout 120 "$MPIRUN" -n 1 "$MPI_TOOL" --quiet --formats fp16 "$srcdir/tests/data/sample" : \
    -n 1 "$MPI_TOOL" --quiet --formats fp16,bf16,e4m3,e5m2 "$srcdir/tests/data/sample" \
    >"$tmp/mpifail.out" 2>&1 || rc=$?
if [ "$rc" -eq 3 ] && grep -q "^fpgrad-mpi: MPI: .* failed: " "$tmp/mpifail.out"; then
    ok
else
    bad "a failed MPI call: exit status $rc (want 3): $(grep -v '^-' "$tmp/mpifail.out" | head -n 3)"
fi

# Rank 0 alone plots: gnuplot is not needed on the other ranks' nodes.
cat >"$tmp/rank0-gnuplot" <<'EOF'
#!/bin/sh
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" != 0 ]; then
    FPKIT_GNUPLOT=/nonexistent
    export FPKIT_GNUPLOT
fi
exec "$@"
EOF
chmod +x "$tmp/rank0-gnuplot"
rc=0
timeout 120 "$MPIRUN" -n 2 "$tmp/rank0-gnuplot" "$MPI_TOOL" --quiet --plot "$tmp/ranks.png" \
    "$srcdir/tests/data/sample" >"$tmp/plot.out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && [ -s "$tmp/ranks.png" ]; then
    ok
else
    bad "gnuplot on rank 0 only: exit status $rc: $(grep -v '^-' "$tmp/plot.out" | head -n 3)"
fi

# Without --threads, the ranks on a machine share the CPUs they may run on:
# two ranks (not bound to CPUs of their own) make as many threads each as
# with --threads set to half those CPUs (at least 1), one rank as many as
# with all.  strace -f counts the threads rank 0 makes (Open MPI's own
# among them; LeakSanitizer off, which cannot stop a traced process).
# rank0_threads RANKS ARGS...: that count, fpgrad-mpi given ARGS.
rank0_threads() {
    ranks=$1
    shift
    rm -f "$tmp/threads".*
    # shellcheck disable=SC2016,SC2086 # $N expanded by each rank's shell; omp_unset a command
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        OMPI_MCA_hwloc_base_binding_policy=none PRTE_MCA_hwloc_default_binding_policy=none \
        timeout 120 $omp_unset "$MPIRUN" -n "$ranks" sh -c \
        'out=$1; shift; exec $0 strace -f -qq -e trace=clone,clone3 \
             -o "$out.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" "$@"' \
        "$launch" "$tmp/threads" "$MPI_TOOL" --quiet "$@" "$srcdir/tests/data/sample" \
        >"$tmp/threads.out" 2>&1 || echo "exit status $?"
    grep -c CLONE_THREAD "$tmp/threads.0" || true
}
launch=
if [ -x ./libtool ]; then
    launch="./libtool --mode=execute"
fi
# (the affinity mask's CPUs, as the tools count them: nproc may count quotas)
cpus=$("$py" -c 'import os; print(min(len(os.sched_getaffinity(0)), 1024))')
if [ "$cpus" -lt 2 ] || ! count_threads; then
    skipped "threads by default (needs strace and two CPUs)"
else
    half=$((cpus / 2))
    two_default=$(rank0_threads 2)
    two_half=$(rank0_threads 2 --threads "$half")
    one_default=$(rank0_threads 1)
    one_all=$(rank0_threads 1 --threads "$cpus")
    case "$two_default $two_half $one_default $one_all" in
    *exit*) bad "threads by default: a run failed: $(head -n 3 "$tmp/threads.out")" ;;
    *)
        if [ "$two_default" -eq "$two_half" ] && [ "$one_default" -eq "$one_all" ] &&
            [ "$one_all" -gt "$two_half" ]; then
            ok
        else
            bad "threads by default: rank 0 made $two_default threads of 2 ranks" \
                "($two_half with --threads $half), $one_default of one rank" \
                "($one_all with --threads $cpus)"
        fi
        ;;
    esac
fi

# Failures every rank meets, and --version, are written once, by rank 0.
once() {
    name=$1 pattern=$2
    shift 2
    rc=0
    timeout 120 "$MPIRUN" -n 3 "$@" >"$tmp/$name.out" 2>&1 || rc=$?
    count=$(grep -c -- "$pattern" "$tmp/$name.out" || true)
    if [ "$rc" -eq 124 ] || [ "$count" -ne 1 ]; then
        bad "$name: \"$pattern\" written $count times (exit $rc): $(head -n 4 "$tmp/$name.out")"
    else
        ok
    fi
}
once format "unknown format \"nope\"" "$MPI_TOOL" --formats fp16,nope "$srcdir/tests/data/sample"
once swamp-format "unknown format \"nope\"" "$SWAMP_MPI" --formats nope "$srcdir/tests/data/sample"
once usage "^usage: fpgrad-mpi " "$MPI_TOOL"
once help "^usage: fpgrad-mpi " "$MPI_TOOL" --help
once swamp-help "^usage: fpswamp-mpi " "$SWAMP_MPI" --help
once version "^fpgrad-mpi (fpkit" "$MPI_TOOL" --version
once swamp-version "^fpswamp-mpi (fpkit" "$SWAMP_MPI" --version

summary
