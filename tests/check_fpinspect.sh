#!/bin/sh
# fpinspect against its golden outputs (tests/fpinspect/NAME.out), the facts
# the tool must show, its error cases, the validity of its JSON (python3),
# every example of man/fpinspect.1 and the width of every default text
# report (at most 100 columns).  make check runs it from the build
# directory with srcdir set; FPINSPECT names another binary.
#
# FPINSPECT_REGEN=DIR writes every golden output into DIR instead of
# comparing it: each new file must be read and checked before it replaces a
# golden file.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd) # absolute: examples run in other directories
FPINSPECT=${FPINSPECT:-${top_builddir:-.}/bin/fpinspect}
golden=$srcdir/tests/fpinspect
manpage=$srcdir/man/fpinspect.1
regen=${FPINSPECT_REGEN:-}
tool=fpinspect tool_bin=$FPINSPECT
. "$srcdir/tests/toolcheck.sh"

# golden NAME ARGS...: exit 0, nothing on stderr, stdout equal to the golden
# file.  The output stays in $tmp/NAME.out for the checks that follow.
golden() {
    name=$1
    shift
    run "$name" "$@"
    if [ -n "$regen" ]; then
        cp "$tmp/$name.out" "$regen/$name.out"
    fi
    if [ "$(cat "$tmp/$name.rc")" -ne 0 ] || [ -s "$tmp/$name.err" ]; then
        bad "$name: fpinspect $* exited $(cat "$tmp/$name.rc"): $(head -n 3 "$tmp/$name.err")"
    elif [ -n "$regen" ]; then
        ok
    elif [ ! -f "$golden/$name.out" ]; then
        bad "$name: no golden file $golden/$name.out"
    elif cmp -s "$golden/$name.out" "$tmp/$name.out"; then
        ok
    else
        bad "$name: fpinspect $* differs from $golden/$name.out:"
        diff -u "$golden/$name.out" "$tmp/$name.out" | head -n 40 || true
    fi
}

# same NAME1 NAME2: the two outputs are identical.
same() {
    if cmp -s "$tmp/$1.out" "$tmp/$2.out"; then
        ok
    else
        bad "$1 and $2 differ"
    fi
}

# lines NAME N: the output has N lines.
lines() {
    n=$(wc -l <"$tmp/$1.out" | tr -d ' ')
    if [ "$n" -eq "$2" ]; then
        ok
    else
        bad "$1: $n lines, expected $2"
    fi
}


# usage_error REGEX ARGS...: exit status 2, nothing on stdout, one line on
# stderr, matching REGEX.
nerr=0
usage_error() {
    re=$1
    shift
    nerr=$((nerr + 1))
    error "err$nerr" 2 "$re" "$@"
}

# json NAME [PYTHON]: every line of NAME's output is a JSON object; then the
# Python expression PYTHON (over d, the first object, and docs, all of them)
# must be true.
json() {
    name=$1
    expr=${2:-True}
    if [ "$have_python" = no ]; then
        bad "$name: python3 is needed to check JSON"
        return
    fi
    if python3 - "$tmp/$name.out" "$expr" <<'EOF'
import json, sys
path, expr = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as f:
    text = f.read()
if not text.endswith("\n"):
    sys.exit("output does not end with a newline")
docs = [json.loads(line) for line in text.splitlines()]
if not docs or not all(isinstance(d, dict) for d in docs):
    sys.exit("not one JSON object per line")
d = docs[0]
if not eval("(" + expr + "\n)"):
    sys.exit("false: " + expr)
EOF
    then
        ok
    else
        bad "$name: JSON check failed"
    fi
}

# Encodings, one per interesting corner of each format.
golden fp16-3c00 0x3c00 --format fp16
golden fp16-3c00-bin 0b0011110000000000 --format fp16
golden fp16-7bff 0x7bff --format fp16
golden fp16-0001 0x0001 --format fp16
golden fp16-8000 0x8000 --format fp16
golden fp16-7c01 0x7c01 --format fp16 --to all
golden e4m3-7f 0x7f --format e4m3
golden e4m3-7e 0x7e --format e4m3 --to all
golden e4m3-80 0x80 --format e4m3
golden e4m3-01 0b00000001 --format e4m3 --to all
golden e5m2-7b 0x7b --format e5m2 --to all
golden e5m2-7d 0x7d --format e5m2
golden bf16-7f80 0x7f80 --format bf16
golden bf16-0001 0x0001 --format bf16 --to all
golden tf32-1fc00 0x1fc00 --format tf32
golden tf32-3f800000 0x3f800000 --format tf32
golden tf32-7f7fe000 0x7f7fe000 --format tf32 --to all
golden fp32-7f7fffff 0x7f7fffff --to all
golden fp32-00000001 0x00000001 --to all
golden fp64-1 0x1 --format fp64
golden fp64-7fefffffffffffff 0x7fefffffffffffff --format fp64 --to all

# Numbers: decimal, negative, hexadecimal, special, overflowing, per mode.
golden fp64-1e-8-all 1e-8 --format fp64 --to all
golden fp32-1e-7-fp16 1e-7 --to fp16
golden fp32-neg-3e-8 -3e-8 --to bf16,fp16
golden fp16-neg-1.1 -1.1 --format fp16 --to all
golden fp32-hex 0x1.8p-3 --to all
golden bf16-hex-rtz 0x1.8p-3 --format bf16 --round rtz
golden bf16-hex-inexact-rtz 0x1.fffp0 --format bf16 --round rtz
golden bf16-hex-inexact-rup 0x1.fffp0 --format bf16 --round rup
golden fp32-inf inf --to all
golden fp32-neg-inf -inf --to all
golden fp16-nan nan --format fp16 --to all
golden e4m3-neg-inf -inf --format e4m3
golden e4m3-neg-inf-sat -inf --format e4m3 --saturate
golden fp16-1e999 1e999 --format fp16
golden fp64-1e-400 1e-400 --format fp64
# Exponents beyond MPFR's default range: still measured, not "exact".
golden fp16-1e999999999 1e999999999 --format fp16
golden fp16-neg-1e-999999999 -1e-999999999 --format fp16
golden fp32-0x1p2147483648 0x1p2147483648
golden e4m3-464 464 --format e4m3
golden e4m3-465 465 --format e4m3
golden e4m3-464-rna 464 --format e4m3 --round rna
golden e4m3-465-sat 465 --format e4m3 --saturate
golden fp16-500-fp8 500 --format fp16 --to e4m3,e5m2
golden fp16-500-fp8-sat 500 --format fp16 --to e4m3,e5m2 --saturate
golden fp32-1e-5-ftz 1e-5 --to fp16 --ftz
# A number is rounded once into each format, from its exact value: never
# through the --format (fp32 would round this one down to 1 + 2^-11, which
# fp16 then rounds to even, 1).
golden fp32-once-fp16 1.000488281250000909 --to fp16
golden fp16-once-all 1.000488281250000909 --format fp16 --to fp32,bf16,e4m3
# Powers of two and their multiples.
golden fp16-pow2-24 2^-24 --format fp16
golden fp16-neg-pow2-24 -2^-24 --format fp16
golden fp32-3xpow2-10 '3*2^-10' --to fp16,e4m3
golden bf16-1.5xpow2-3 '1.5*2^-3' --format bf16
golden fp16-pow2-25-rup 2^-25 --format fp16 --round rup
golden fp64-pow2-1074-all 2^-1074 --format fp64 --to all
# Every digit with --exact; long values cut otherwise.
golden fp64-1e-8-all-exact 1e-8 --format fp64 --to all --exact
golden fp32-0.1 0.1
golden fp32-0.1-exact 0.1 --exact
golden info-bf16-exact --info bf16 --exact
golden table-e8m0-exact --table e8m0 --exact
for mode in rne rna rtz rup rdn rod; do
    golden "e4m3-0.1-$mode" 0.1 --format e4m3 --round "$mode" --to e5m2
    golden "e4m3-neg-0.1-$mode" -0.1 --format e4m3 --round "$mode"
done
golden e5m2-several 1 -2.5 0x3c --format e5m2

# Format reports.
for f in fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 e4m3fnuz e5m2fnuz e3m2 e2m3 e2m1 e8m0; do
    golden "info-$f" --info "$f"
done
golden info-fp16-ftz --info fp16 --ftz
golden info-fp16-rup-sat --info fp16 --round rup --saturate
golden info-fp16-rdn --info fp16 --round rdn
golden info-e4m3-rna --info e4m3 --round rna
golden info-e4m3-rod --info e4m3 --round rod
golden info-e4m3-sat --info e4m3 --saturate
golden info-e5m2-rtz --info e5m2 --round rtz
# no normal numbers: overflow judged at the format's precision, below 2^emin
golden info-e1m3 --info e1m3
golden info-e1m3-rtz --info e1m3 --round rtz
golden e1m3-overflow --format e1m3 1.82 1.8125
golden e1m3-overflow-rtz --format e1m3 --round rtz 1.9 1.85
golden table-e4m3 --table e4m3
golden table-e5m2 --table e5m2
golden table-e4m3fnuz --table e4m3fnuz
golden table-e2m1 --table e2m1
golden table-e3m2 --table e3m2
golden table-e8m0 --table e8m0
golden e8m0-7f 0x7f --format e8m0 --to e4m3,e2m1
golden e2m1-7 7 --format e2m1
golden e4m3fnuz-80 0x80 --format e4m3fnuz --to fp16,e2m1,e8m0
golden e2m3-nan nan --format e2m3
golden formats --list-formats

# JSON.
golden json-fp16-3c00 --json 0x3c00 --format fp16
golden json-fp64-1e-8-all --json 1e-8 --format fp64 --to all
golden json-fp32-1e-7-fp16 --json 1e-7 --to fp16
golden json-e5m2-several --json 1 -2.5 0x3c --format e5m2
golden json-e4m3-neg-inf --json -inf --format e4m3 --to fp16
golden json-fp16-nan --json nan --format fp16 --to e4m3
golden json-tf32-3f800000 --json 0x3f800000 --format tf32
golden json-info-fp16 --json --info fp16
golden json-info-e4m3 --json --info e4m3
golden json-table-e4m3 --json --table e4m3
golden json-table-e5m2 --json --table e5m2
golden json-table-e2m1 --json --table e2m1
golden json-info-e8m0 --json --info e8m0
golden json-formats --json --list-formats
golden json-fp32-once-fp16 --json 1.000488281250000909 --to fp16,fp32
golden json-fp16-pow2-24 --json 2^-24 --format fp16 --to bf16,e5m2
golden json-e4m3-7e-to --json 0x7e --format e4m3 --to fp16,e5m2

# What `fpinspect 0x3c00 --format fp16` must show.
has fp16-3c00 '^fp16 0x3c00$' \
    '^  fields       0 \| 01111 \| 0000000000 ' \
    '^  sign         0 \(\+\)$' \
    '^  exponent     01111 = 15, unbiased 0, bias 15$' \
    '^  significand  1\.0000000000 ' \
    '^  class        normal$' \
    '^  value        1$' \
    '^  ulp          2\^-10 = 0\.0009765625$' \
    '^  below        0x3bff  0\.99951171875$' \
    '^  above        0x3c01  1\.0009765625$'
same fp16-3c00 fp16-3c00-bin
same tf32-1fc00 tf32-3f800000
has tf32-3f800000 '^tf32 0x1fc00$' '^  value        1$'

# 1e-8: fp16, e5m2 and e4m3 underflow to zero; bf16, tf32, fp32 keep it.
# The table comes first, the --format's row first; long values are cut
# (to fit 100 columns, here after 16 digits), --exact gives every digit.
has fp64-1e-8-all '^input 1e-8$' \
    '^  to \(rne\) +bits +value +rel\.err +flags +result$' \
    '^  fp64 +0x3e45798ee2308c3a +1\.000000000000000\.\.\.e-08 +2\.092e-17 +inexact +rounded up$' \
    '^  fp16 +0x0000 +0 +1\.000e\+00 +underflow,inexact +to zero$' \
    '^  e5m2 +0x00 +0 +1\.000e\+00 +underflow,inexact +to zero$' \
    '^  e4m3 +0x00 +0 +1\.000e\+00 +underflow,inexact +to zero$' \
    '^  bf16 +0x322c +1\.001171767711639\.\.\.e-08 +1\.172e-03 +inexact +rounded up$' \
    '^  tf32 +0x1915e +9\.997165761888027\.\.\.e-09 +2\.834e-04 +inexact +rounded down$' \
    '^  fp32 +0x322bcc77 +9\.999999939225290\.\.\.e-09 +6\.077e-09 +inexact +rounded down$' \
    '^  value +1\.0000000000000000\.\.\.e-08$'
if [ "$(sed -n 3p "$tmp/fp64-1e-8-all.out" | awk '{ print $1 }')" = fp64 ] &&
    [ "$(grep -c '^  fp64 ' "$tmp/fp64-1e-8-all.out")" -eq 1 ]; then
    ok
else
    bad "fp64-1e-8-all: the --format's row is not first and alone"
fi
has fp64-1e-8-all-exact \
    '^  bf16 +0x322c +1\.001171767711639404296875e-08 +1\.172e-03 +inexact +rounded up$' \
    '^  tf32 +0x1915e +9\.997165761888027191162109375e-09 +2\.834e-04 +inexact +rounded down$' \
    '^  fp32 +0x322bcc77 +9\.99999993922529029077850282192230224609375e-09 +6\.077e-09 +inexact +rounded down$' \
    '^  value +1\.0000000000000000209225608301284726753266340892878361046314239501953125e-08$'
# ... and fp16's threshold: 1e-8 < 2^-25.
has info-fp16 '^  to zero \(rne\) +0 < x <= 2\^-25 = 2\.98023223876953125e-08$' \
    '^ +0 < -x <= 2\^-25 = 2\.98023223876953125e-08$' \
    '^  overflow \(rne\) +x >= 65520 goes to inf$' '^ +-x >= 65520 goes to inf$'

# One rounding: 1.000488281250000909 lies just above the midpoint of fp16's
# 1 and 1 + 2^-10; fp32, the --format, rounds it down onto that midpoint.
has fp32-once-fp16 '^  fp32 +0x3f801000 +1\.00048828125 +9\.086e-16 +inexact +rounded down$' \
    '^  fp16 +0x3c01 +1\.0009765625 +4\.880e-04 +inexact +rounded up$' '^fp32 0x3f801000$'
has fp16-once-all '^  fp16 +0x3c01 +1\.0009765625 +4\.880e-04 +inexact +rounded up$' \
    '^  fp32 +0x3f801000 ' '^  bf16 +0x3f80 +1 +4\.880e-04 +inexact +rounded down$' \
    '^  e4m3 +0x38 +1 +4\.880e-04 +inexact +rounded down$' '^fp16 0x3c01$'
has fp16-pow2-24 '^fp16 0x0001$' '^  fp16 +0x0001 +5\.9604644775390625e-08 +0\.000e\+00 +- +subnormal, exact$'
has fp16-neg-pow2-24 '^fp16 0x8001$'
has fp32-3xpow2-10 '^fp32 0x3b400000$' '^  fp16 +0x1a00 +0\.0029296875 +0\.000e\+00 +- +exact$' \
    '^  e4m3 +0x02 +0\.00390625 +3\.333e-01 +underflow,inexact +subnormal, up$'
has bf16-1.5xpow2-3 '^bf16 0x3e40$' '^  bf16 +0x3e40 +0\.1875 +0\.000e\+00 +- +exact$'
has fp16-pow2-25-rup '^fp16 0x0001$' '^  fp16 +0x0001 .* underflow,inexact +subnormal, up$'
has fp32-0.1 '^  value +0\.10000000149011611\.\.\.$'
has fp32-0.1-exact '^  value +0\.100000001490116119384765625$'
has info-bf16-exact '^  min normal +0x0080 +2\^-126 = 1\.1754943508222875079687365372222456778186655567720875215087517062784172594547271728515625e-38$'

# 1e-7 into fp16: the subnormal 0x0002, 19% off.
has fp32-1e-7-fp16 \
    '^  fp16 +0x0002 +1\.1920928955078125e-07 +1\.921e-01 +underflow,inexact +subnormal, up$'

# The e4m3 table: 256 encodings, 448 the largest finite, S.1111.111 NaN.
lines table-e4m3 257
has table-e4m3 '^0x7e +0 1111 110 +8 +448 +normal$' \
    '^0x7f +0 1111 111 +nan +quiet NaN$' \
    '^0xff +1 1111 111 +nan +quiet NaN$' \
    '^0xfe +1 1111 110 +8 +-448 +normal$'
if [ "$(grep -c 'NaN$' "$tmp/table-e4m3.out")" -eq 2 ] &&
    [ "$(grep -c ' inf$' "$tmp/table-e4m3.out")" -eq 0 ]; then
    ok
else
    bad "table-e4m3: expected two NaN rows and no infinity"
fi
lines table-e5m2 257
has table-e5m2 '^0x7b +0 11110 11 +15 +57344 +normal$' \
    '^0x7c +0 11111 00 +inf +inf$' '^0x7d +0 11111 01 +nan +signaling NaN$'

# The OCP MX element and scale formats: E2M1's 16 values, E2M3's and E3M2's
# largest, E8M0's range; FNUZ's one NaN.
lines table-e2m1 17
has table-e2m1 '^0x0 +0 00 +0 +0 +0 +zero$' '^0x1 +0 00 +1 +0 +0\.5 +subnormal$' \
    '^0x2 +0 01 +0 +0 +1 +normal$' '^0x3 +0 01 +1 +0 +1\.5 +normal$' \
    '^0x4 +0 10 +0 +1 +2 +normal$' '^0x5 +0 10 +1 +1 +3 +normal$' \
    '^0x6 +0 11 +0 +2 +4 +normal$' '^0x7 +0 11 +1 +2 +6 +normal$' \
    '^0x8 +1 00 +0 +0 +-0 +zero$' '^0xf +1 11 +1 +2 +-6 +normal$'
if grep -q 'NaN\|inf$' "$tmp/table-e2m1.out"; then
    bad "table-e2m1: E2M1 has no NaN and no infinity"
else
    ok
fi
has info-e2m3 '^  max finite +0x1f +7\.5$'
has info-e3m2 '^  max finite +0x1f +28$' \
    '^  overflow \(rne\) +x >= 30 gives max finite, overflow raised$'
has info-e2m1 '^  max finite +0x7 +6$' '^  to zero \(rne\) +0 < x <= 2\^-2 = 0\.25$'
has info-e8m0 '^  width +8 bits: no sign, 8 exponent, 0 mantissa$' \
    '^  max finite +0xfe +1\.7014118346046923\.\.\.e\+38$' \
    '^  min normal +0x00 +2\^-127 = 5\.8774717541114375\.\.\.e-39$' \
    '^  min subnormal +none' '^  special values +E8M0 .*NaN 0xff, inf none$'
lines table-e8m0 257
has table-e8m0 '^0x7f +0 01111111 +0 +1 +normal$' '^0xff +0 11111111 +nan +quiet NaN$'
has table-e4m3fnuz '^0x7f +0 1111 111 +7 +240 +normal$' '^0x80 +1 0000 000 +nan +quiet NaN$'
has e2m1-7 '^  e2m1 +0x7 +6 +1\.429e-01 +overflow,inexact +to max finite$' '^e2m1 0x7$'
has e4m3fnuz-80 '^  class +quiet NaN$' '^  fp16 +0x7e00 +nan '
has e2m3-nan '^  e2m3 +0x20 +-0 +inf +invalid +format lacks NaN$' '^e2m3 0x20$'

# Every default text report fits 100 columns: the golden ones (but JSON
# and --exact); --info and --table of every built-in format under other
# options; values at the formats' edges into every format, with the widest
# options; an input too long to echo whole.  (The man page's examples are
# checked below.)
for f in "$tmp"/*.out; do
    name=$(basename "$f" .out)
    case $name in json-* | *-exact) ;; *) fits "$name" ;; esac
done
formats=$(run list --list-formats && awk 'NR > 1 { print $1 }' "$tmp/list.out")
nwide=0
wide() {
    nwide=$((nwide + 1))
    run "wide$nwide" "$@"
    if [ "$(cat "$tmp/wide$nwide.rc")" -eq 0 ]; then
        fits "wide$nwide"
    else
        bad "wide$nwide: fpinspect $* exited $(cat "$tmp/wide$nwide.rc"): $(head -n 1 "$tmp/wide$nwide.err")"
    fi
}
for f in $formats; do
    for o in "--round rtz --ftz --saturate" "--round rup" "--round rdn --saturate" "--round rod --ftz"; do
        # shellcheck disable=SC2086 # options
        wide --info "$f" $o
    done
    if [ "$(awk -v f="$f" '$1 == f { print $2 }' "$tmp/list.out")" -le 8 ]; then
        wide --table "$f"
    fi
    for v in 0x1 0x0 -0 -1e999 1e-999; do
        wide "$v" --format "$f" --to all --ftz --saturate --round rod
    done
done
for v in -2.2250738585072014e-308 1e300 -1e-300 0.1 nan -inf 65519.99 '-1.5*2^-1075'; do
    for o in "--round rtz --ftz --saturate" "--round rna"; do
        # shellcheck disable=SC2086 # options
        wide "$v" --format fp64 --to all $o
    done
done
wide 1e300 --format e1m52 --to e11m52fnuz,e5m10fnuz,e1m0,fp64 --saturate --ftz
long=-2.22507385850720138309023271733240406421921598046233183055332741688720443481391819585428315901251102056406733973103581100515243416155346010885601238537771882113077799353200233047961014744258363607192156504694250373420837525080665061665815894872049117996859163964850063590877011830487479978088775374994945158045160505091539985658247081864511353793580499211598108576605199243335211435239014879569960959128889160299264151106346631339366347758651302937176204732563178148566435087212282863764204484681140761391147706280168985324411002416144742161856716615054015428508471675290190316132277889672970737312333408698898317506783884692609277397797285865965494109136909540613646756870239867831529068098461721092462539672851562e-308
wide "$long" --format fp64 --to all
has wide$nwide '^input -2\.2250738585072013830902327173324040642192159\.\.\..*e-308$'

# Negative numbers are values, not options; -- ends the options.
has fp32-neg-3e-8 '^input -3e-8$' '^fp32 0xb300d959$'
has e4m3-neg-inf '^input -inf$' '^e4m3 0x7f$'
run neg-point -.5 --format e4m3
run dashdash --format=e4m3 -- -0.5
has neg-point '^input -\.5$' '^e4m3 0xb0$'
has dashdash '^input -0\.5$' '^e4m3 0xb0$'

# Bad input: one line on stderr, status 2, nothing on stdout.
usage_error 'not a hexadecimal digit' 0xZZ
usage_error "wider than fp16's 16 bits" 0x1ffff --format fp16
usage_error 'unknown format "fp17"; known formats: fp64, fp32, tf32, fp16, bf16, e4m3, e5m2' 1 --format fp17
usage_error 'unknown format "x"; known formats: fp64,' 1 --to fp16,x
usage_error 'option --to: an empty name in "fp16,,e4m3"' 1 --to fp16,,e4m3
usage_error 'unknown format "fp99"; known formats: fp64,' --info fp99
usage_error 'empty value' ''
usage_error '"1\.5x"' 1.5x
usage_error 'no digits' 0x
usage_error 'not a binary digit' 0b102
usage_error 'unknown option "--bogus"' --bogus 1
usage_error 'unknown option "-x"' -x
usage_error 'option --format needs an argument' 1 --format
usage_error 'option --table needs an argument' --table
usage_error 'option --json takes no argument' --json=yes 1
usage_error 'low 13 bits zero' 0x3f800001 --format tf32
usage_error "wider than tf32's 19 bits" 0x100000000 --format tf32
usage_error 'at most 8 bits' --table fp16
usage_error 'unknown rounding mode "up"' 1 --round up
usage_error 'wider than 64 bits' 0x10000000000000000 --format fp64
usage_error '"1e"' 1e
usage_error '"0x1p"' 0x1p
usage_error 'at least 2\^4611686018427387903 in magnitude, outside the range' 1e99999999999999999999999
usage_error 'at least 2\^4611686018427387903 in magnitude' 0x1p4611686018427387903
usage_error 'below 2\^-4611686018427387904 in magnitude, outside the range' 0x1p-99999999999999999999 --format fp16
usage_error 'below 2\^-4611686018427387904 in magnitude' 0x0.4p-4611686018427387903 --format fp16
usage_error 'unexpected character "-" at offset 1 in "--format"' -- --format
usage_error 'missing exponent digits at offset 2 in "2\^"' 2^
usage_error 'unexpected character "x" at offset 2 in "2\^x"' 2^x
usage_error 'missing exponent digits at offset 4 in "3\*2\^"' '3*2^'
usage_error 'unexpected character "\*" at offset 3 in "1e3\*2\^4"' '1e3*2^4'
usage_error '2\^99999999999999999999: at least 2\^4611686018427387903 in magnitude, outside the range' \
    2^99999999999999999999
usage_error 'below 2\^-4611686018427387904 in magnitude' '-3*2^-99999999999999999999'
usage_error 'at least 2\^4611686018427387903 in magnitude' 2^4611686018427387903

# No argument at all: the usage on stderr, status 2.
run noargs
if [ "$(cat "$tmp/noargs.rc")" -eq 2 ] && [ ! -s "$tmp/noargs.out" ] &&
    head -n 1 "$tmp/noargs.err" | grep -q '^usage: fpinspect '; then
    ok
else
    bad "fpinspect without arguments: status $(cat "$tmp/noargs.rc"), or no usage on stderr"
fi

# JSON: every --json output parses; the key fields hold what they must.
for f in "$tmp"/json-*.out; do
    json "$(basename "$f" .out)"
done
json json-fp16-3c00 'len(docs) == 1 and d["format"] == "fp16" and d["bits"] == "0x3c00"
    and d["value"] == "1" and d["class"] == "normal" and d["sign"] == 0
    and d["fields"] == {"sign": "0", "exponent": "01111", "mantissa": "0000000000"}
    and d["exponent"] == {"biased": 15, "unbiased": 0, "bias": 15}
    and d["ulp"] == {"log2": -10, "value": "0.0009765625"} and d["m"] == 1024 and d["e"] == -10
    and d["below"]["bits"] == "0x3bff" and d["above"]["bits"] == "0x3c01"
    and d["input"] == "0x3c00" and "rounding" not in d and d["to"] == []'
json json-fp64-1e-8-all 'len(docs) == 1 and d["bits"] == "0x3e45798ee2308c3a"
    and d["rounding"]["direction"] == "up" and d["rounding"]["flags"] == ["inexact"]
    and [t["format"] for t in d["to"]] == ["fp64", "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2",
                                           "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3", "e2m1", "e8m0"]
    and all(t["underflow"] and t["bits"] in ("0x0000", "0x00", "0x0") and t["value"] == "0"
            and t["rel_error"] == 1 and t["flags"] == ["underflow", "inexact"]
            for t in d["to"] if t["format"] in ("fp16", "e4m3", "e5m2", "e4m3fnuz", "e2m1"))
    and all(not t["underflow"] and not t["subnormal"] and 0 < t["rel_error"] < 2e-3
            for t in d["to"] if t["format"] in ("fp32", "tf32", "bf16"))
    and 0 < d["to"][0]["rel_error"] < 3e-17 and d["to"][0]["note"] == "rounded up"
    and all(t["from"] == "input" for t in d["to"])'
json json-fp32-1e-7-fp16 'd["to"][0]["bits"] == "0x0002" and d["to"][0]["subnormal"]
    and not d["to"][0]["underflow"] and abs(d["to"][0]["rel_error"] - 0.19209288) < 1e-7
    and d["to"][0]["flags"] == ["underflow", "inexact"]'
json json-e5m2-several 'len(docs) == 3 and [x["bits"] for x in docs] == ["0x3c", "0xc1", "0x3c"]
    and [x["input"] for x in docs] == ["1", "-2.5", "0x3c"]
    and "rounding" in docs[1] and "rounding" not in docs[2]'
json json-e4m3-neg-inf 'd["bits"] == "0x7f" and d["class"] == "quiet NaN"
    and d["rounding"]["direction"] == "NaN" and d["rounding"]["flags"] == ["invalid"]
    and "ulp" not in d and d["to"][0]["bits"] == "0xfc00" and d["to"][0]["note"] == "exact"'
json json-fp16-nan 'd["bits"] == "0x7e00" and d["value"] == "nan"
    and d["rounding"]["rel_error"] == 0 and d["to"][0]["bits"] == "0x7f" and d["to"][0]["note"] == "NaN"'
json json-tf32-3f800000 'd["bits"] == "0x1fc00" and d["width"] == 19 and d["value"] == "1"'
json json-info-fp16 'd["format"] == "fp16" and d["width"] == 16 and d["exp_bits"] == 5
    and d["man_bits"] == 10 and d["bias"] == 15 and d["max_finite"] == {"bits": "0x7bff", "value": "65504"}
    and d["min_normal"]["value"] == "0.00006103515625"
    and d["min_subnormal"]["value"] == "5.9604644775390625e-08"
    and d["epsilon"] == {"value": "0.0009765625", "log2": -10}
    and d["unit_roundoff"] == {"value": "0.00048828125", "log2": -11}
    and d["nan"] == "0x7e00" and d["inf"] == "0x7c00" and d["round"] == "rne"
    and d["normal_binades"] == 30 and d["subnormal_binades"] == 10
    and d["to_zero"]["positive"] == "0 < x <= 2^-25 = 2.98023223876953125e-08"
    and d["overflow"]["positive"] == "x >= 65520 goes to inf"'
json json-info-e4m3 'd["max_finite"] == {"bits": "0x7e", "value": "448"} and d["inf"] == "none"
    and d["nan"] == "0x7f" and d["overflow"]["positive"] == "x > 464 becomes NaN"
    and d["to_zero"]["positive"] == "0 < x <= 2^-10 = 0.0009765625"'
json json-table-e4m3 'd["format"] == "e4m3" and len(d["table"]) == 256
    and d["table"][0x7e] == {"bits": "0x7e", "sign": 0, "exponent": "1111", "mantissa": "110",
                             "E": 8, "value": "448", "class": "normal"}
    and [r["bits"] for r in d["table"] if "NaN" in r["class"]] == ["0x7f", "0xff"]
    and not any(r["class"] == "inf" for r in d["table"])'
json json-table-e5m2 'len(d["table"]) == 256 and d["table"][0x7c]["class"] == "inf"
    and d["table"][0x7b]["value"] == "57344" and d["table"][0xfd]["class"] == "signaling NaN"'
json json-formats '[f["name"] for f in d["formats"]] == ["fp64", "fp32", "tf32", "fp16", "bf16", "e4m3",
                                                     "e5m2", "e4m3fnuz", "e5m2fnuz", "e3m2", "e2m3",
                                                     "e2m1", "e8m0"]
    and d["formats"][3]["max_finite"] == "65504" and d["formats"][5]["max_finite"] == "448"
    and d["formats"][5]["specials"] == "NaN only (no inf)"
    and d["formats"][7]["max_finite"] == "240" and d["formats"][9]["max_finite"] == "28"
    and d["formats"][10]["max_finite"] == "7.5" and d["formats"][11]["max_finite"] == "6"
    and d["formats"][12]["min_subnormal"] == "none"'
json json-table-e2m1 '[r["value"] for r in d["table"][:8]] == ["0", "0.5", "1", "1.5", "2", "3", "4", "6"]
    and [r["class"] for r in d["table"]].count("zero") == 2'
json json-fp32-once-fp16 'd["bits"] == "0x3f801000" and d["rounding"]["direction"] == "down"
    and d["to"][0] == {"format": "fp16", "bits": "0x3c01", "value": "1.0009765625",
                       "rel_error": d["to"][0]["rel_error"], "flags": ["inexact"], "underflow": False,
                       "subnormal": False, "overflow": False, "note": "rounded up", "from": "input"}
    and abs(d["to"][0]["rel_error"] - 4.8804e-4) < 1e-7
    and d["to"][1]["bits"] == "0x3f801000" and d["to"][1]["note"] == "rounded down"'
json json-fp16-pow2-24 'd["bits"] == "0x0001" and d["rounding"]["direction"] == "exact"
    and d["to"][0]["bits"] == "0x3380" and d["to"][0]["note"] == "exact"
    and d["to"][1]["bits"] == "0x00" and d["to"][1]["note"] == "underflowed to zero"
    and d["to"][1]["flags"] == ["underflow", "inexact"] and d["to"][1]["from"] == "input"'
json json-e4m3-neg-inf 'd["to"][0]["from"] == "input"'
json json-e4m3-7e-to '[t["from"] for t in d["to"]] == ["encoding", "encoding"]
    and d["to"][1] == {"format": "e5m2", "bits": "0x5f", "value": "448", "rel_error": 0, "flags": [],
                       "underflow": False, "subnormal": False, "overflow": False, "note": "exact",
                       "from": "encoding"}'
json json-tf32-3f800000 'd["to"] == []'
json json-info-e8m0 'd["width"] == 8 and d["min_normal"] == {"bits": "0x00", "value": "5.8774717541114375398436826861112283890933277838604376075437585313920862972736358642578125e-39"}
    and d["min_subnormal"] == {"bits": "none", "value": "none"} and d["nan"] == "0xff"
    and d["to_zero"]["negative"] == "no negative numbers"'

# --recipe: a block quantised under a recipe, against answers worked out
# by hand and against tests/recipes_numpy.py, a NumPy model of the
# recipes written from their published descriptions.
#
# mxfp4 on 1..8: amax 8 gives k = floor(log2 8) - emax(e2m1) = 3 - 2 = 1,
# the E8M0 scale 2^1 = 0x80; x / 2 = 0.5 .. 4 rounds into e2m1's {0, 0.5,
# 1, 1.5, 2, 3, 4, 6}, 2.5 and 3.5 ties to the even 2 and 4: the values are
# 1 2 3 4 4 6 8 8, the errors 0 0 0 0 -1 0 1 0, the SQNR 10 log10(204 / 2)
# = 20.086 dB; codes 1 2 3 4 4 5 6 6 pack low nibble first into 21 43 54
# 66; 0.5 (from 1) is e2m1's one subnormal.
good recipe-mxfp4 --json --recipe mxfp4 1,2,3,4,5,6,7,8
json recipe-mxfp4 'len(docs) == 1 and d["recipe"] == "mxfp4" and d["spelled"] == "e2m1/e8m0/floor/1x32"
    and [float(e["value"]["value"]) for e in d["elements"]] == [1, 2, 3, 4, 4, 6, 8, 8]
    and [e["error"] for e in d["elements"]] == [0, 0, 0, 0, -1, 0, 1, 0]
    and [e["code"] for e in d["elements"]] == ["0x1", "0x2", "0x3", "0x4", "0x4", "0x5", "0x6", "0x6"]
    and abs(d["sqnr_db"] - 20.086001717619175) < 1e-9 and d["x2"] == 204 and d["e2"] == 2
    and d["packed_elements"] == "21435466" and d["packed_scales"] == "80"
    and d["blocks"][0]["scale"] == {"bits": "0x80", "value": "2"}
    and d["blocks"][0]["decodes_as"]["value"] == "2" and d["blocks"][0]["amax"]["value"] == "8"
    and (d["flushed"], d["saturated"], d["subnormal"]) == (0, 0, 1)
    and d["shape"] == [8] and d["view"] == [1, 8] and d["grid"] == [1, 1]
    and d["global"]["value"] == "1" and [e["note"] for e in d["elements"]][:2] == ["subnormal", ""]'
good recipe-mxfp4-text --recipe mxfp4 1,2,3,4,5,6,7,8
has recipe-mxfp4-text '^mxfp4, 8 values in 1 block: SQNR 20\.09 dB, 0 flushed to zero, 0 saturated, 1 subnormal\.$' \
    '^  0 +0-7 +8 +0x80 +2\^1 +2$' '^  4 +0 +5 +0x4 +2 +4 +-1 +20\.00%$' '^  scales +80 \(1 byte\)$'
# Comma-separated or word by word, the same block.
good recipe-mxfp4-words --recipe mxfp4 1,2 3 4,5,6 7 8
same recipe-mxfp4-text recipe-mxfp4-words
# Two 2x2 blocks of 2 x 4 values, rows 1 2 0.25 8 and 3 4 5 7: the first
# block, 1 2 / 3 4, amax 4, k = 2 - 2 = 0, is exact; the second, 0.25 8 /
# 5 7, amax 8, k = 1: 0.125 flushes to zero, 4 stays, 2.5 and 3.5 tie to 2
# and 4, so 0 8 4 8.  SQNR 10 log10(168.0625 / 2.0625) = 19.1108 dB.
good recipe-2d --json --recipe e2m1/e8m0/floor/2x2 --shape 2,4 1,2,0.25,8 3,4,5,7
json recipe-2d 'd["view"] == [2, 4] and d["block"] == [2, 2] and d["grid"] == [1, 2]
    and [float(e["value"]["value"]) for e in d["elements"]] == [1, 2, 0, 8, 3, 4, 4, 8]
    and [e["block"] for e in d["elements"]] == [0, 0, 1, 1, 0, 0, 1, 1]
    and [b["scale"]["bits"] for b in d["blocks"]] == ["0x7f", "0x80"]
    and [b["cols"] for b in d["blocks"]] == [[0, 2], [2, 4]] and d["flushed"] == 1
    and abs(d["sqnr_db"] - 19.110768623454142) < 1e-9 and d["elements"][2]["note"] == "to zero"
    and d["elements"][5]["index"] == [1, 1]'
# NVFP4 on 1, 2, 0.1 (0.1 is rounded to float32 first): the tensor's
# amax 2 gives S_enc = 2688 / 2 = 1344 and the global scale 1/1344 in
# float32 (0x3a430c31); the block's scale is 448 in E4M3 (0x7e), so an
# element decodes as 448/1344 = 1/3 of its code's value: 1 and 2 become 3
# and 6, and 0.1, 0.3 scaled, rounds up to 0.5, a subnormal.
good recipe-nvfp4 --json --recipe nvfp4 1,2,0.1
json recipe-nvfp4 'd["global"]["bits"] == "0x3a430c31" and d["blocks"][0]["scale"]["bits"] == "0x7e"
    and d["inputs_rounded"] == 1 and d["elements"][2]["x"]["bits"] == "0x3dcccccd"
    and [e["element"] for e in d["elements"]] == ["3", "6", "0.5"] and d["flushed"] == 0
    and d["subnormal"] == 1'
# A NaN or an infinity makes its block NaN; the others keep theirs: the
# second row, 0.5 and 0.25, takes k = floor(log2 0.5) - 2 = -3 (0x7c) and
# is exact, 4 and 2 in e2m1.
good recipe-nan --json --recipe mxfp4 --shape 2,2 -nan,1 0.5,0.25
json recipe-nan 'd["nan_blocks"] == 1 and d["grid"] == [2, 1]
    and [b["scale"]["bits"] for b in d["blocks"]] == ["0xff", "0x7c"]
    and d["elements"][1]["note"] == "NaN block" and d["elements"][1]["value"]["value"] == "nan"
    and [e["element"] for e in d["elements"][2:]] == ["4", "2"] and d["nonfinite"] == 1
    and d["sqnr_db"] == "inf"'
good recipe-rht --recipe nvfp4-rht 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
has recipe-rht '^  i +block +input +rht +code +element +value +error +rel +note$' \
    '^  0 +0 +1 +-15\.5 +0xf +-6 +-17\.5 +-2 +12\.90% +max$'
good recipe-delayed --recipe fp8-tensor-delayed 1,2,3e-5
has recipe-delayed "^  history +none: as if it held this block's amax$"
# Wide values and every column fit 100 columns.
good recipe-wide --recipe nvfp4-rht -1.17549435e-38,3.4028235e38,1e-45,-7.7e-39,1,2,3,4,5,6,7,8,9,10,11,12 \
    -1.17549435e-38,3.4028235e38,1e-45,-7.7e-39,1,2,3,4,5,6,7,8,9,10,11,12
good recipe-wide2 --recipe fp8-block128 --shape 3,100 \
    "$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "%s%.3g", i ? "," : "", (i - 150) * 1.7e-7 }')"
fits recipe-mxfp4-text recipe-rht recipe-delayed recipe-wide recipe-wide2
# Bad input: one line, status 2.
usage_error 'option --recipe: recipe "nvfp5": expected ELEM/SCALE/RULE/ROWSxCOLS or a preset name' \
    --recipe nvfp5 1,2
usage_error 'recipe nvfp4-2d quantises blocks of 16 rows: give 256 values for one block \(3 given\)' \
    --recipe nvfp4-2d 1,2,3
usage_error '--shape 2,3 holds 6 values; 5 given' --recipe nvfp4 --shape 2,3 1,2,3,4,5
usage_error 'holds more values than can be counted' --recipe nvfp4 --shape 99999999999,99999999999,9999999 1
usage_error 'value "0x3c00" is a bit pattern' --recipe nvfp4 1,0x3c00
usage_error 'values "1,,2": an empty value at offset 2' --recipe nvfp4 1,,2
usage_error 'value "abc": unexpected character "a" at offset 0' --recipe nvfp4 1,abc
usage_error '1 x 3 values: recipe: the RHT needs rows of a multiple of 16' --recipe nvfp4-rht 1,2,3
usage_error 'option --to does not apply to --recipe' --recipe nvfp4 --to fp16 1
usage_error 'option --shape goes with --recipe' --shape 2,2 1,2,3,4
usage_error 'option --recipe needs the VALUEs' --recipe nvfp4

# The NumPy model: blocks of values spanning many binades, with zeros and
# both signs, under the recipes it knows; each element's code value, the
# decoded value, the counts and the SQNR must agree (and NVFP4's global
# scale).  FPINSPECT_SEED replays a run.
if have_modules numpy; then
    seed=${FPINSPECT_SEED:-$(date +%s)}
    echo "recipe blocks: FPINSPECT_SEED=$seed"
    "$py" - "$seed" >"$tmp/blocks.txt" <<'EOF'
import sys
import numpy as np
rng = np.random.default_rng(int(sys.argv[1]))
for recipe in ("fp8-tensor-current", "fp8-block128", "mxfp8-e4m3", "mxfp4", "nvfp4"):
    for n in (1, 16, 37, 64, 200):
        x = (rng.standard_normal(n) * np.exp2(rng.integers(-12, 12, n))).astype(np.float32)
        x[rng.random(n) < 0.1] = 0
        print(recipe, ",".join(repr(float(v)) for v in x))
EOF
    nb=0
    while read -r recipe values; do
        nb=$((nb + 1))
        good "block$nb" --json --recipe "$recipe" "$values"
    done <"$tmp/blocks.txt"
    if "$py" - "$srcdir/tests" "$tmp" <<'EOF'; then ok; else bad "recipe blocks: NumPy disagrees (FPINSPECT_SEED=$seed)"; fi
import json, math, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import recipes_numpy as rn
tmp = sys.argv[2]
for k, line in enumerate(open(tmp + "/blocks.txt"), 1):
    recipe, values = line.split()
    x = np.array([float(v) for v in values.split(",")], dtype=np.float32).reshape(1, -1)
    fn, elem = rn.RECIPES[recipe]
    y, q, over = fn(x)
    st = rn.stats(x, y, q, over, elem)
    d = json.loads(open("%s/block%d.out" % (tmp, k)).read())
    got_q = [float(e["element"]) for e in d["elements"]]
    got_y = [float(e["value"]["value"]) for e in d["elements"]]
    if got_q != list(q.ravel()) or got_y != list(y.astype(np.float64).ravel()):
        sys.exit("block %d (%s): elements differ" % (k, recipe))
    for c in ("flushed", "saturated", "subnormal"):
        if d[c] != st[c]:
            sys.exit("block %d (%s): %s %d, NumPy %d" % (k, recipe, c, d[c], st[c]))
    db = rn.db(st["x2"], st["e2"])
    if (db is None) != (d["sqnr_db"] is None) or (db is not None and db != math.inf
                                                 and abs(db - d["sqnr_db"]) > 1e-9 * abs(db)):
        sys.exit("block %d (%s): SQNR %s, NumPy %s" % (k, recipe, d["sqnr_db"], db))
    if recipe == "nvfp4" and np.max(np.abs(x)) > 0:
        glob = np.float32(1) / np.float32(np.float32(2688) / np.float32(np.max(np.abs(x))))
        if float(d["global"]["value"]) != float(glob):
            sys.exit("block %d: global scale %s, NumPy %r" % (k, d["global"]["value"], glob))
print("recipe blocks: %d agree with NumPy" % k)
EOF
else
    skipped "recipe blocks against NumPy (needs python3 with numpy)"
fi

# --help and --version: stdout, status 0.
run help --help
if [ "$(cat "$tmp/help.rc")" -eq 0 ] && [ ! -s "$tmp/help.err" ] &&
    grep -q '^usage: fpinspect ' "$tmp/help.out"; then
    ok
else
    bad "--help: status $(cat "$tmp/help.rc"), or no usage line on stdout"
fi
run version --version
if [ "$(cat "$tmp/version.rc")" -eq 0 ] && grep -q '^fpinspect (fpkit [0-9]' "$tmp/version.out"; then
    ok
else
    bad "--version: status $(cat "$tmp/version.rc"): $(cat "$tmp/version.out")"
fi

# The usage lines of --help are the SYNOPSIS of the man page.
synopsis "$manpage" "$tmp/help.out"

# Every example of the man page runs and exits 0.  The first one's output
# is shown in the page: it must be what the tool prints.
nex=0
sed -n 's/^\.Dl fpinspect //p' "$manpage" | sed "s/\\\\-/-/g; s/\\\\(aq/'/g" >"$tmp/examples"
while IFS= read -r line; do
    nex=$((nex + 1))
    set -f
    eval "set -- $line" # words, some quoted ('3*2^-10')
    set +f
    run "example$nex" "$@"
    if [ "$(cat "$tmp/example$nex.rc")" -eq 0 ] && [ -s "$tmp/example$nex.out" ] &&
        [ ! -s "$tmp/example$nex.err" ]; then
        ok
    else
        bad "man page example: fpinspect $line: status $(cat "$tmp/example$nex.rc"): $(head -n 2 "$tmp/example$nex.err")"
    fi
    case " $line " in
    *" --json "*) json "example$nex" ;;
    *" --exact "*) ;;
    *) fits "example$nex" ;;
    esac
done <"$tmp/examples"
if [ "$nex" -ge 7 ]; then
    ok
else
    bad "$manpage: only $nex examples found"
fi
sed -n '/^\.Dl fpinspect 0x3c00 \\-\\-format fp16$/,/^\.Ed$/p' "$manpage" |
    sed '1,2d;$d' | sed 's/\\(mu/×/g; s/\\-/-/g' >"$tmp/shown.out"
echo >>"$tmp/shown.out" # the report's closing blank line
if [ -s "$tmp/shown.out" ] && cmp -s "$tmp/shown.out" "$tmp/fp16-3c00.out"; then
    ok
else
    bad "$manpage: the output shown for fpinspect 0x3c00 --format fp16 is not what it prints:"
    diff -u "$tmp/shown.out" "$tmp/fp16-3c00.out" | head -n 20 || true
fi
sed -n '/^\.Dl fpinspect \\-\\-recipe mxfp4 1,2,3,4,5,6,7,8$/,/^\.Ed$/p' "$manpage" |
    sed '1,2d;$d' | sed 's/\\-/-/g' >"$tmp/shown-recipe.out"
echo >>"$tmp/shown-recipe.out"
if [ -s "$tmp/shown-recipe.out" ] && cmp -s "$tmp/shown-recipe.out" "$tmp/recipe-mxfp4-text.out"; then
    ok
else
    bad "$manpage: the output shown for fpinspect --recipe mxfp4 1,2,3,4,5,6,7,8 is not what it prints:"
    diff -u "$tmp/shown-recipe.out" "$tmp/recipe-mxfp4-text.out" | head -n 20 || true
fi

summary
