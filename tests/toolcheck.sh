# The harness of the tool tests, sourced by tests/check_TOOL.sh after it sets
#   tool      the tool's name: the prefix its messages must have
#             ("^TOOL: "), of the summary line and of the temporary directory
#   tool_bin  the binary that run, good and error start (optional: when set,
#             a missing binary is a hard error, exit 99)
# It makes $tmp (removed on exit), finds python3 and gnuplot (have_python,
# have_gnuplot), and counts checks: ok, bad and skipped, reported by summary.
# With VALGRIND set (say "valgrind --error-exitcode=99 --leak-check=full
# -q"), run starts the tool under it; $tool_exec holds that prefix, with
# libtool --mode=execute in front when ./libtool is there, so that valgrind
# runs the binary rather than the build tree's wrapper script.
# shellcheck shell=sh disable=SC2034,SC2154 # set here for the caller, or by it

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$tool.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

pass=0
fail=0
skip=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
skipped() {
    skip=$((skip + 1))
    echo "SKIP: $*"
}

if [ -n "${tool_bin:-}" ] && [ ! -x "$tool_bin" ]; then
    echo "check_$tool: $tool_bin is not an executable" >&2
    exit 99
fi
tool_exec=
if [ -n "${VALGRIND:-}" ]; then
    tool_exec=$VALGRIND
    if [ -x ./libtool ]; then
        tool_exec="./libtool --mode=execute $VALGRIND"
    fi
fi
have_python=no
if command -v python3 >/dev/null 2>&1; then
    have_python=yes
fi
have_gnuplot=no
if command -v "${FPKIT_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    have_gnuplot=yes
fi

# need_python: the test is skipped (exit 77) without python3.
need_python() {
    if [ "$have_python" = no ]; then
        echo "check_$tool: python3 is needed to make the test data"
        exit 77
    fi
}

# have_modules MODULES: py := the first of python3 and /usr/bin/python3
# whose import of MODULES ("numpy, ml_dtypes") succeeds; false where
# neither's does.
have_modules() {
    for py in python3 /usr/bin/python3; do
        if "$py" -c "import $1" >/dev/null 2>&1; then
            return 0
        fi
    done
    return 1
}

# need_modules MODULES: have_modules, or the test is skipped (exit 77).
need_modules() {
    if ! have_modules "$1"; then
        echo "check_$tool: python3 with $1 is needed; skipped"
        exit 77
    fi
}

# run NAME ARGS...: the tool into $tmp/NAME.{out,err,rc}.
run() {
    name=$1
    shift
    rc=0
    # shellcheck disable=SC2086 # tool_exec is a command and its options
    $tool_exec "$tool_bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
    echo "$rc" >"$tmp/$name.rc"
}

# good NAME ARGS...: runs; exit 0 and nothing on stderr.
good() {
    name=$1
    run "$@"
    if [ "$(cat "$tmp/$name.rc")" -eq 0 ] && [ ! -s "$tmp/$name.err" ]; then
        ok
    else
        shift
        bad "$name: $tool $* exited $(cat "$tmp/$name.rc"): $(head -n 3 "$tmp/$name.err")"
    fi
}

# error NAME STATUS REGEX ARGS...: exit STATUS, one line on stderr matching
# "^TOOL: .*REGEX", nothing on stdout.  A tool stops where it finds the
# error, leaving its memory to the exit: LeakSanitizer is off for these
# runs (successful runs keep it, and valgrind looks at both).
error() {
    name=$1 status=$2 re=$3
    shift 3
    (
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
        export ASAN_OPTIONS
        run "$name" "$@"
    )
    rc=$(cat "$tmp/$name.rc")
    n=$(wc -l <"$tmp/$name.err" | tr -d ' ')
    if [ "$rc" -ne "$status" ]; then
        bad "$name: $tool $*: exit status $rc, expected $status: $(head -n 2 "$tmp/$name.err")"
    elif [ -s "$tmp/$name.out" ]; then
        bad "$name: $tool $*: wrote to stdout: $(head -n 1 "$tmp/$name.out")"
    elif [ "$n" -ne 1 ]; then
        bad "$name: $tool $*: $n lines on stderr, expected 1: $(cat "$tmp/$name.err")"
    elif ! grep -Eq -- "^$tool: .*$re" "$tmp/$name.err"; then
        bad "$name: $tool $*: message does not match /$re/: $(cat "$tmp/$name.err")"
    else
        ok
    fi
}

# has NAME REGEX...: every extended REGEX matches a line of NAME's output.
has() {
    name=$1
    shift
    for re in "$@"; do
        if grep -Eq -- "$re" "$tmp/$name.out"; then ok; else bad "$name: no line matches /$re/"; fi
    done
}

# zeros_npy PATH N: a .npy of N float32 zeros (its data at byte 128).
zeros_npy() {
    dict="{'descr': '<f4', 'fortran_order': False, 'shape': ($2,), }"
    {
        printf '\223NUMPY\001\000\166\000'
        printf '%s%*s\n' "$dict" $((128 - 10 - ${#dict} - 1)) ''
        head -c $((4 * $2)) /dev/zero
    } >"$1"
}

# The prefix of a command run with no OpenMP variable that sets a thread
# count (the tools' default follows OMP_NUM_THREADS and OMP_THREAD_LIMIT).
omp_unset="env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT -u OMP_DYNAMIC"

# count_threads: whether threads_made can count (strace runs; not under
# valgrind).
count_threads() {
    [ -z "${VALGRIND:-}" ] && strace -f -qq -e trace=clone,clone3 -o /dev/null true >/dev/null 2>&1
}

# threads_made PRE ARGS...: how many threads the tool makes given ARGS,
# run after the words of PRE (env, taskset) under strace -f, with
# LeakSanitizer off (it cannot stop a traced process's threads); "exit N"
# when the run fails, its stderr in $tmp/threads.err.
threads_made() {
    pre=$1
    shift
    launch=
    if [ -x ./libtool ]; then
        launch="./libtool --mode=execute"
    fi
    rc=0
    # shellcheck disable=SC2086 # pre and launch are commands and their options
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 $pre $launch \
        strace -f -qq -e trace=clone,clone3 -o "$tmp/threads.st" "$tool_bin" "$@" \
        >"$tmp/threads.out" 2>"$tmp/threads.err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "exit $rc"
    else
        grep -c CLONE_THREAD "$tmp/threads.st" || true # (1 when none)
    fi
}

# threads_by_default NAME ARGS...: the tool, given ARGS (work large enough
# to share, and no --threads), starts threads of its own where this process
# may run on two CPUs or more, and none when taskset leaves it one or
# OMP_NUM_THREADS says 1.  Skipped without taskset, count_threads and two
# CPUs in the affinity mask.
threads_by_default() {
    name=$1
    shift
    mask=$(taskset -cp $$ 2>/dev/null | sed 's/.*: *//') # "0-3,8", say
    case $mask in *[-,]*) two=yes ;; *) two=no ;; esac
    if [ "$two" = no ] || ! count_threads; then
        skipped "$name: threads by default (needs taskset, strace and two CPUs)"
        return
    fi
    for how in all one omp1; do
        case $how in
        all) made=$(threads_made "$omp_unset" "$@") ;;
        one) made=$(threads_made "$omp_unset taskset -c ${mask%%[-,]*}" "$@") ;;
        *) made=$(threads_made "$omp_unset OMP_NUM_THREADS=1" "$@") ;;
        esac
        case $made in
        exit*) bad "$name: $tool $* under strace: $made: $(head -n 3 "$tmp/threads.err")" ;;
        *)
            if [ "$how" = all ] && [ "$made" -eq 0 ]; then
                bad "$name: $tool $* made no thread on CPUs $mask"
            elif [ "$how" != all ] && [ "$made" -ne 0 ]; then
                bad "$name: $tool $* made $made thread(s) ($how)"
            else
                ok
            fi
            ;;
        esac
    done
}

# png_size FILE: WIDTHxHEIGHT of a PNG (its IHDR), or a failure.
png_size() {
    python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n" and d[12:16]==b"IHDR"; print("%dx%d" % struct.unpack(">II", d[16:24]))' "$1"
}

# synopsis MANPAGE USAGE: the SYNOPSIS of MANPAGE is the usage lines that
# --help wrote to the file USAGE, but for letter case and spacing.
synopsis() {
    if [ "$have_python" != yes ] || ! command -v mandoc >/dev/null 2>&1 || [ ! -s "$1" ]; then
        skipped "man page SYNOPSIS check (needs mandoc, python3 and $1)"
        return
    fi
    mandoc -Tascii "$1" >"$tmp/man.txt"
    if python3 - "$tmp/man.txt" "$2" <<'EOF'
import re, sys
man = re.sub(".\b", "", open(sys.argv[1], encoding="utf-8").read())
synopsis = man.split("SYNOPSIS\n", 1)[1].split("\nDESCRIPTION\n", 1)[0]
usage = open(sys.argv[2], encoding="utf-8").read().split("\n\n", 1)[0]
a = "".join(synopsis.split()).lower()
b = "".join(usage.replace("usage:", "", 1).split()).lower()
if a != b:
    sys.exit("SYNOPSIS: %s\nusage:    %s" % (a, b))
EOF
    then ok; else bad "the SYNOPSIS of $1 and the usage lines differ"; fi
}

# fits NAME...: no line of NAME's output is wider than 100 columns (UTF-8
# continuation bytes, as in the "×" of a value's second line, take none).
fits() {
    for name in "$@"; do
        wide=$(LC_ALL=C tr -d '\200-\277' <"$tmp/$name.out" |
            awk 'length($0) > 100 { print length($0) ": " $0; exit }')
        if [ -z "$wide" ]; then
            ok
        else
            bad "$name: a line of $wide"
        fi
    done
}

# summary: the counts; fails if any check failed.
summary() {
    echo "$tool: $pass passed, $fail failed, $skip skipped"
    [ "$fail" -eq 0 ]
}
