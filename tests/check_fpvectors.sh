#!/bin/sh
# fpvectors and fpverify: the round trip fpvectors | fpverify for every
# pair of built-in formats (exhaustive from the formats of at most 2^19
# encodings, level 1 from fp32 and fp64) and for every operation, in
# several modes and options; the line layout; the level counts the man page
# prints; the e4m3 converter of the man pages (tests/vectors/e4m3cvt.c,
# written without libfpkit) passing, and each of its planted bugs reported
# with its class and no other; --no-flags and --nan-class; malformed input
# named by line and field; the error cases; both man pages' SYNOPSIS and
# examples, and the output they show.  The results themselves are checked
# against MPFR by tests/vectors/check_ref.
#
# make check runs it from the build directory with srcdir set; FPVECTORS,
# FPVERIFY and E4M3CVT name other binaries.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
builddir=$(pwd)
FPVECTORS=${FPVECTORS:-$builddir/bin/fpvectors}
FPVERIFY=${FPVERIFY:-$builddir/bin/fpverify}
E4M3CVT=${E4M3CVT:-$builddir/tests/vectors/e4m3cvt}
tool=fpvectors tool_bin=$FPVECTORS
. "$srcdir/tests/toolcheck.sh"
exec </dev/null # fpverify reads standard input when given no file
for b in "$FPVERIFY" "$E4M3CVT"; do
    if [ ! -x "$b" ]; then
        echo "check_fpvectors: $b is not an executable" >&2
        exit 99
    fi
done

# The harness's run/good/error use $tool and $tool_bin: these switch them.
as_vectors() { tool=fpvectors tool_bin=$FPVECTORS; }
as_verify() { tool=fpverify tool_bin=$FPVERIFY; }

# roundtrip NAME ARGS... -- GENERATOR-ARGS...: fpvectors ARGS GENERATOR-ARGS
# piped into fpverify ARGS: both exit 0, fpverify reports 0 mismatches.
nrt=0
cases_total=0
roundtrip() {
    name=$1
    shift
    args=
    while [ "$1" != -- ]; do
        args="$args $1"
        shift
    done
    shift
    nrt=$((nrt + 1))
    # shellcheck disable=SC2086 # the arguments are plain words
    if "$FPVECTORS" $args "$@" >"$tmp/rt.txt" 2>"$tmp/rt.err" &&
        "$FPVERIFY" $args "$tmp/rt.txt" >"$tmp/rt.out" 2>>"$tmp/rt.err" &&
        [ ! -s "$tmp/rt.err" ] && grep -q ' cases, 0 mismatches$' "$tmp/rt.out"; then
        n=$(sed -n 's/.*: \([0-9]*\) cases, 0 mismatches$/\1/p' "$tmp/rt.out")
        cases_total=$((cases_total + n))
        ok
    else
        bad "$name: fpvectors$args $* | fpverify$args: $(head -n 3 "$tmp/rt.out" "$tmp/rt.err")"
    fi
}

# Every pair of built-in formats (the list the tools give for an unknown
# name): exhaustive where the source has at most 2^19 encodings, level 1
# from fp32 and fp64.
formats=$("$FPVECTORS" --op add --format '?' 2>&1 | sed -n 's/.*known formats: \(.*\), or eXmY.*/\1/p' | tr -d ,)
case " $formats " in
*" fp64 "*" tf32 "*" e4m3 "*) ok ;;
*) bad "the built-in formats could not be listed: '$formats'" ;;
esac
for a in $formats; do
    for b in $formats; do
        case $a in
        fp32 | fp64) roundtrip "$a-$b" --op convert --format "$a" --to "$b" -- --level 1 ;;
        *) roundtrip "$a-$b" --op convert --format "$a" --to "$b" -- --exhaustive ;;
        esac
    done
done
"$FPVECTORS" --op convert --format tf32 --to e4m3 --exhaustive >"$tmp/tf32.txt"
n=$(wc -l <"$tmp/tf32.txt" | tr -d ' ')
if [ "$n" -eq 524288 ] && [ "$(sort -u "$tmp/tf32.txt" | wc -l | tr -d ' ')" -eq 524288 ]; then
    ok
else
    bad "tf32 --exhaustive: $n lines, expected 524288 distinct ones"
fi

# Every operation in formats check_ref does not read (fp64, tf32 in its
# container), the common ones in formats of other widths and special-value
# rules, and modes and options (check_ref covers them for fp16 and fp32).
ops="add sub mul div fma sqrt eq lt le eq_signaling lt_signaling le_signaling to_int from_int"
for f in fp64 tf32; do
    for op in $ops; do
        roundtrip "$op-$f" --op "$op" --format "$f" -- -n 1000
    done
done
for f in e3m4 e2m1 e3m2 e4m3fnuz e5m2fnuz e8m0; do
    for op in add fma sqrt lt to_int from_int; do
        roundtrip "$op-$f" --op "$op" --format "$f" -- --level 1
    done
done
for opts in "--round rna" "--round rtz" "--round rup --ftz" "--round rdn --daz" "--round rod" \
    "--saturate" "--tininess before --ftz --daz"; do
    # shellcheck disable=SC2086
    for op in add fma sqrt to_int from_int; do
        roundtrip "$op-e4m3 $opts" --op "$op" --format e4m3 $opts -- -n 1000
    done
    # shellcheck disable=SC2086
    roundtrip "convert-fp32-e4m3 $opts" --op convert --format fp32 --to e4m3 $opts -- -n 1000
done
echo "check_fpvectors: $nrt round trips, $cases_total cases verified"

# The layout: operands and result zero-padded to the format's hex width,
# upper case, tf32 in its 32-bit container, int64 in 16 digits, a
# comparison in 1, flags in 2 (TestFloat's bits).
as_vectors
good lay-e4m3 --op add --format e4m3 -n 500
good lay-tf32 --op convert --format tf32 --to fp16 -n 500
good lay-fp64 --op fma --format fp64 -n 500
good lay-cmp --op lt --format fp16 -n 500
good lay-toint --op to_int --format bf16 -n 500
good lay-fromint --op from_int --format e5m2 -n 500
layout() {
    if grep -Evq "$2" "$tmp/$1.out"; then
        bad "$1: a line is not /$2/: $(grep -Ev "$2" "$tmp/$1.out" | head -n 1)"
    else
        ok
    fi
}
layout lay-e4m3 '^[0-9A-F]{2} [0-9A-F]{2} [0-9A-F]{2} [01][0-9A-F]$'
layout lay-tf32 '^[0-9A-F]{4}[02468ACE]000 [0-9A-F]{4} [01][0-9A-F]$'
layout lay-fp64 '^([0-9A-F]{16} ){4}[01][0-9A-F]$'
layout lay-cmp '^[0-9A-F]{4} [0-9A-F]{4} [01] (00|10)$'
layout lay-toint '^[0-9A-F]{4} [0-9A-F]{16} (00|01|10)$'
layout lay-fromint '^[0-9A-F]{16} [0-9A-F]{2} [01][0-9A-F]$'
# Facts in TestFloat's flag bits, worked out by hand: 1/0 is infinite
# (08), 0/0 invalid (10), 1 + 2^-11 in fp16 a tie to even (inexact 01),
# 65520 into fp16 overflow and inexact (05), 2^-10 into e4m3 the tie of 0
# and the smallest subnormal (underflow and inexact, 03), 1.5 to the
# integer 2 (01), -1 from int64, a quiet NaN compared quietly (00) and
# signalingly (10).
as_verify
nfact=0
while IFS='|' read -r args line; do
    nfact=$((nfact + 1))
    echo "$line" >"$tmp/fact.txt"
    # shellcheck disable=SC2086 # plain words
    good "fact$nfact" $args "$tmp/fact.txt"
done <<'EOF'
--op div --format fp16|3C00 0000 7C00 08
--op div --format fp16|0000 0000 7E00 10
--op add --format fp16|3C00 1000 3C00 01
--op convert --format fp32 --to fp16|477FF000 7C00 05
--op convert --format fp32 --to e4m3|3A800000 00 03
--op to_int --format fp16|3E00 0000000000000002 01
--op from_int --format fp16|FFFFFFFFFFFFFFFF BC00 00
--op lt --format fp16|7E00 3C00 0 00
--op lt_signaling --format fp16|7E00 3C00 0 10
EOF
as_vectors

# The level counts the man page prints: each arity at level 1 (and 2 with
# FPK_EXHAUSTIVE=1: millions of lines), and the exhaustive enumeration
# where the inputs are fewer.
manv=$srcdir/man/fpvectors.1
levels=1
case ${FPK_EXHAUSTIVE:-0} in
'' | 0) ;;
*) levels="1 2" ;;
esac
for spec in "1 sqrt fp32" "2 add fp16" "3 fma fp16"; do
    # shellcheck disable=SC2086
    set -- $spec
    for level in $levels; do
        want=$(sed -n "s/^\\.It $1 Ta \\([0-9,]*\\) Ta \\([0-9,]*\\)\$/\\$level/p" "$manv" | tr -d ,)
        got=$("$FPVECTORS" --op "$2" --format "$3" --level "$level" | wc -l | tr -d ' ')
        if [ -n "$want" ] && [ "$got" -eq "$want" ]; then ok; else bad "--level $level --op $2: $got cases, the man page says '$want'"; fi
    done
done
n=$("$FPVECTORS" --op sqrt --format e4m3 --level 2 | wc -l | tr -d ' ')
if [ "$n" -eq 256 ]; then ok; else bad "--level 2 --op sqrt --format e4m3: $n cases, expected every one of the 256"; fi
n=$("$FPVECTORS" --op convert --format fp16 --to e4m3 -n 70000 | wc -l | tr -d ' ')
if [ "$n" -eq 70000 ]; then ok; else bad "-n 70000: $n cases"; fi

# The same seed gives the same cases; another seed changes only the random
# part, after the structured one.
"$FPVECTORS" --op add --format bf16 -n 20000 --seed 7 >"$tmp/s7a"
"$FPVECTORS" --op add --format bf16 -n 20000 --seed 7 >"$tmp/s7b"
"$FPVECTORS" --op add --format bf16 -n 20000 --seed 8 >"$tmp/s8"
if cmp -s "$tmp/s7a" "$tmp/s7b" && ! cmp -s "$tmp/s7a" "$tmp/s8" &&
    [ "$(head -n 400 "$tmp/s7a")" = "$(head -n 400 "$tmp/s8")" ]; then
    ok
else
    bad "--seed: the same seed must repeat the cases, another change the random part only"
fi

# The converter of the example: right, it passes; each planted bug is
# reported as its class, and only as that class.
"$FPVECTORS" --op convert --format fp32 --to e4m3 >"$tmp/cases.txt"
classes="rounding flags nan subnormal overflow value"
check_bug() {
    bug=$1 want=$2
    shift 2
    if [ "$bug" = none ]; then
        "$E4M3CVT" - <"$tmp/cases.txt" >"$tmp/mine.txt"
    else
        "$E4M3CVT" --bug "$bug" - <"$tmp/cases.txt" >"$tmp/mine.txt"
    fi
    rc=0
    "$FPVERIFY" --op convert --format fp32 --to e4m3 "$@" "$tmp/mine.txt" >"$tmp/verify.out" 2>&1 || rc=$?
    for c in $classes; do
        n=$(sed -n "s/^  $c  *\\([0-9]*\\)  .*/\\1/p" "$tmp/verify.out")
        if [ "$c" = "$want" ] && [ "${n:-0}" -gt 0 ] && [ "$rc" -eq 1 ]; then
            ok
        elif [ "$c" != "$want" ] && [ "${n:--1}" -eq 0 ]; then
            ok
        else
            bad "e4m3cvt --bug $bug $*: $c: ${n:-no count}, status $rc: $(head -n 3 "$tmp/verify.out")"
        fi
    done
}
for bug in ties:rounding flags:flags subnormal:subnormal nan:nan overflow:overflow; do
    check_bug "${bug%%:*}" "${bug#*:}"
done
check_bug none none
if [ "$rc" -eq 0 ] && grep -q ': 10000 cases, 0 mismatches$' "$tmp/verify.out"; then ok; else bad "e4m3cvt: status $rc"; fi
# --nan-class: a NaN of the right class is right, whatever its sign.
check_bug nan none --nan-class
# --no-flags: the flags bug is invisible, the ties bug is not.
"$E4M3CVT" --bug flags - <"$tmp/cases.txt" | cut -d ' ' -f 1,2 >"$tmp/noflags.txt"
if "$FPVERIFY" --op convert --format fp32 --to e4m3 --no-flags "$tmp/noflags.txt" >/dev/null; then ok; else bad "--no-flags: the flags bug was reported"; fi
"$E4M3CVT" --bug ties - <"$tmp/cases.txt" | cut -d ' ' -f 1,2 >"$tmp/noflags.txt"
rc=0
"$FPVERIFY" --op convert --format fp32 --to e4m3 --no-flags --show 0 "$tmp/noflags.txt" >"$tmp/noflags.out" || rc=$?
if [ "$rc" -eq 1 ] && grep -Eq '^  rounding +[1-9]' "$tmp/noflags.out" && [ "$(grep -c '^stdin\|^/' "$tmp/noflags.out")" -eq 0 ]; then
    ok
else
    bad "--no-flags --show 0 with the ties bug: status $rc: $(head -n 3 "$tmp/noflags.out")"
fi

# The other classes, on hand-made lines: a wrong value, to_int overflow,
# a comparison with a NaN, a subnormal operand under daz.
as_verify
printf '3C00 3C00 4400 00\n' >"$tmp/value.txt"
printf '7C00 8000000000000000 10\n' >"$tmp/toint.txt"
printf '7E00 3C00 1 00\n' >"$tmp/cmpnan.txt"
printf '0001 0001 00\n' >"$tmp/daz.txt"
printf '3F800000 0000000000000000 10\n' >"$tmp/tointv.txt" # invalid given, 1.0 in range
for spec in "value add fp16 value" "toint to_int fp16 overflow" "cmpnan lt fp16 nan" \
    "daz convert fp16 subnormal --to fp32 --daz" "tointv to_int fp32 value"; do
    # shellcheck disable=SC2086
    set -- $spec
    f=$1 op=$2 fmt=$3 want=$4
    shift 4
    rc=0
    "$FPVERIFY" --op "$op" --format "$fmt" "$@" "$tmp/$f.txt" >"$tmp/$f.out" || rc=$?
    if [ "$rc" -eq 1 ] && grep -Eq "^$tmp/$f.txt:1: .*: $want\$" "$tmp/$f.out" &&
        grep -Eq "^  $want +1  " "$tmp/$f.out"; then
        ok
    else
        bad "$f: expected one $want mismatch, status $rc: $(head -n 2 "$tmp/$f.out")"
    fi
done

# Malformed input: status 2, the file, line and field named.
printf '3F800000 38 00\n3F800000 ZZ 00\n' >"$tmp/m1"
printf '3F800000 38\n' >"$tmp/m2"
printf '3F800000 38 00 00\n' >"$tmp/m3"
printf '3F800000 138 00\n' >"$tmp/m4"
printf '3F800000 38 40\n' >"$tmp/m5"
printf '\n' >"$tmp/m6"
printf '3F800001 0000 00\n' >"$tmp/m7"
printf '3C00 3C00 2 00\n' >"$tmp/m8"
printf '3F800000 38 00\n3F800000 38 00\000 garbage\n' >"$tmp/m9" # a NUL ends no line
{ printf '3F800000 38 00\n'; head -c 5000 /dev/zero | tr '\0' 3; } >"$tmp/m10" # no newline
printf '3F800000 3\0338 00\n' >"$tmp/m11" # an ESC, escaped in the message
: >"$tmp/empty"
cvt="--op convert --format fp32 --to e4m3"
# shellcheck disable=SC2086
{
    error mal1 2 "m1:2: field 2 \\(result\\): \"ZZ\" is not hexadecimal" $cvt "$tmp/m1"
    error mal2 2 'm2:1: 2 fields, expected 3 \(a result flags\)' $cvt "$tmp/m2"
    error mal3 2 'm3:1: more than 3 fields' $cvt "$tmp/m3"
    error mal4 2 "m4:1: field 2 \\(result\\): \"138\" does not fit e4m3's 8 bits" $cvt "$tmp/m4"
    error mal5 2 'm5:1: field 3 \(flags\): "40" is not a set of TestFloat flags' $cvt "$tmp/m5"
    error mal6 2 'm6:1: 0 fields, expected 3' $cvt "$tmp/m6"
    error mal7 2 'm7:1: field 1 \(operand a\): "3F800001" is not a tf32 32-bit container' --op convert --format tf32 --to fp16 "$tmp/m7"
    error mal8 2 'm8:1: field 3 \(result\): "2" is not 0 or 1' --op lt --format fp16 "$tmp/m8"
    error mal9 2 'm1:1: more than 2 fields, expected a result$' $cvt --no-flags "$tmp/m1"
    error mal10 2 'no cases' $cvt "$tmp/empty"
    error mal11 2 'nosuch' $cvt "$tmp/nosuch"
    error mal12 2 'm9:2: a NUL byte at column 15' $cvt "$tmp/m9"
    error mal13 2 'm10:2: a line over 4096 bytes' $cvt "$tmp/m10"
    error mal14 2 'm11:1: field 2 \(result\): "3\\x1b8" is not hexadecimal' $cvt "$tmp/m11"
}
# Stdin is named "stdin".
rc=0
"$FPVERIFY" $cvt <"$tmp/m1" >/dev/null 2>"$tmp/stdin.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q '^fpverify: stdin:2: field 2 (result)' "$tmp/stdin.err"; then ok; else bad "stdin: status $rc: $(cat "$tmp/stdin.err")"; fi

# Usage errors of both tools.
for t in vectors verify; do
    "as_$t"
    error "$t-op" 2 'unknown operation "madd"; known operations: add, sub' --op madd --format fp16
    error "$t-noop" 2 '--op is missing' --format fp16
    error "$t-nofmt" 2 '--format is missing' --op add
    error "$t-fmt" 2 'unknown format "fp17"' --op add --format fp17
    error "$t-noto" 2 '--op convert needs --to' --op convert --format fp16
    error "$t-to" 2 '--to is for --op convert only, not add' --op add --format fp16 --to fp32
    error "$t-sr" 2 '--round sr: a vector' --op add --format fp16 --round sr
    error "$t-mode" 2 'unknown rounding mode "up"' --op add --format fp16 --round up
    error "$t-tiny" 2 '--tininess "early": expected before or after' --op add --format fp16 --tininess early
    error "$t-unknown" 2 'unknown option "--bogus"' --op add --format fp16 --bogus
    run "$t-noargs"
    if [ "$(cat "$tmp/$t-noargs.rc")" -eq 2 ] && head -n 1 "$tmp/$t-noargs.err" | grep -q "^usage: fp$t "; then
        ok
    else
        bad "fp$t without arguments: status $(cat "$tmp/$t-noargs.rc")"
    fi
    run "$t-help" --help
    if [ "$(cat "$tmp/$t-help.rc")" -eq 0 ] && grep -q "^usage: fp$t " "$tmp/$t-help.out"; then ok; else bad "fp$t --help"; fi
    run "$t-version" --version
    if grep -q "^fp$t (fpkit [0-9]" "$tmp/$t-version.out"; then ok; else bad "fp$t --version"; fi
    synopsis "$srcdir/man/fp$t.1" "$tmp/$t-help.out"
done
as_vectors
error exh 2 '--exhaustive: add fp16 rne has 4294967296 inputs, more than the 2\^24' --op add --format fp16 --exhaustive
error exhint 2 '--exhaustive: from_int fp16 rne has 2\^64 or more inputs' --op from_int --format fp16 --exhaustive
error both 2 '--level, --exhaustive and -n: give one of them' --op add --format fp16 --level 1 -n 5
error level 2 'option --level: "3" is not an integer from 1 to 2' --op add --format fp16 --level 3
error n0 2 'option -n: "0" is not an integer from 1' --op add --format fp16 -n 0
error operand 2 'unexpected operand "x"' --op add --format fp16 x
error threads0 2 'option --threads: "0" is not an integer from 1 to 1024' --op add --format fp16 --threads 0
as_verify
error show 2 'option --show: "-1" is not an integer' --op add --format fp16 --show -1
error vthreads0 2 'option --threads: "0" is not an integer from 1 to 1024' --op add --format fp16 --threads 0

# --threads, as every tool takes it, changes nothing.
roundtrip threads --op mul --format e5m2 --threads 2 -- --level 2

# The man pages' examples run, in a directory with the example converter
# at tests/vectors/e4m3cvt and the tools first in PATH, and exit as the
# pages say; the output fpverify(1) shows for the ties bug is what it prints.
mkdir -p "$tmp/ex/tests/vectors"
ln -s "$E4M3CVT" "$tmp/ex/tests/vectors/e4m3cvt"
mkdir -p "$tmp/bin"
ln -s "$FPVECTORS" "$tmp/bin/fpvectors"
ln -s "$FPVERIFY" "$tmp/bin/fpverify"
nex=0
for page in fpvectors fpverify; do
    sed -n 's/^\.Dl //p' "$srcdir/man/$page.1" | grep -E '^(fpvectors|fpverify|tests/|for )' |
        sed 's/\\-/-/g; s/\\e/\\/g' >"$tmp/examples"
    while IFS= read -r line; do
        nex=$((nex + 1))
        rc=0
        (cd "$tmp/ex" && PATH="$tmp/bin:$PATH" sh -c "$line") >"$tmp/ex.out" 2>"$tmp/ex.err" || rc=$?
        # fpverify exits 1 for a planted bug it is asked to see
        case $line in
        *--nan-class* | *--no-flags*) want=0 ;;
        *--bug*) want=1 ;;
        *) want=0 ;;
        esac
        if [ "$rc" -eq "$want" ] && [ ! -s "$tmp/ex.err" ]; then
            ok
        else
            bad "$page example: $line: status $rc, expected $want: $(head -n 2 "$tmp/ex.err")"
        fi
        case $line in
        *"--bug ties"*"--show 3"*) cp "$tmp/ex.out" "$tmp/ties.out" ;;
        esac
    done <"$tmp/examples"
done
if [ "$nex" -ge 8 ]; then ok; else bad "only $nex man page examples found"; fi
sed -n '/^\.Dl .*bug ties.*show 3$/,/^\.Ed$/p' "$srcdir/man/fpverify.1" | sed 's/\\-/-/g' |
    sed '1,2d;$d' >"$tmp/shown.out"
if [ -s "$tmp/shown.out" ] && cmp -s "$tmp/shown.out" "$tmp/ties.out"; then
    ok
else
    bad "man/fpverify.1: the output shown for the ties bug is not what fpverify prints:"
    diff -u "$tmp/shown.out" "$tmp/ties.out" | head -n 20 || true
fi

tool=fpvectors
summary
