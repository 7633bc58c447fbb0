#!/bin/sh
# The formats fpkit shares with ml_dtypes, against ml_dtypes, an independent
# implementation (the MPFR reference stays the reference of record): every
# encoding's value, float32 values rounded into each format, and OCP MX
# quantisation of random blocks (tests/check_mldtypes.py says what is
# compared and where the two differ by design).  Skipped (77) without numpy
# and ml_dtypes.
#
# make check runs it from the build directory with srcdir set; MLDTYPES_DUMP
# names another build of tests/mldtypes_dump.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
dump=${MLDTYPES_DUMP:-./tests/mldtypes_dump}
if [ ! -x "$dump" ]; then
    echo "check_mldtypes: $dump is not an executable" >&2
    exit 99
fi
for py in python3 /usr/bin/python3; do
    if "$py" -c 'import numpy, ml_dtypes' >/dev/null 2>&1; then
        exec "$py" "$srcdir/tests/check_mldtypes.py" "$dump"
    fi
done
echo "check_mldtypes: numpy and ml_dtypes are needed; skipped"
exit 77
