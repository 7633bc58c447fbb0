#!/bin/sh
# Every tool's command line, made from its option table (tools/common/
# options.c): --help and --version write to standard output and exit 0,
# --help fits 80 columns and starts with the usage lines, every option it
# lists is described in the tool's man page (.It Fl -NAME), and an unknown
# option is refused with status 2 and a pointer to --help.
#
# make check runs it from the build directory with srcdir set.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
tool=check_help
. "$srcdir/tests/toolcheck.sh"

for name in fpinspect fpgrad fpround fpswamp fpscale fpvectors fpverify fpcheck fpgrad-mpi fpswamp-mpi \
    fpk-hwcheck; do
    bin=./bin/$name
    if [ ! -x "$bin" ]; then
        skipped "$name: not built here"
        continue
    fi
    if ! "$bin" --help >"$tmp/$name.help" 2>"$tmp/$name.err" || [ -s "$tmp/$name.err" ]; then
        bad "$name --help failed or wrote to standard error"
        continue
    fi
    wide=$(awk -v n="$name" 'length($0) > 80 { print n ": " length($0) " columns: " $0 }' \
        "$tmp/$name.help")
    if [ -n "$wide" ]; then bad "--help wider than 80 columns: $wide"; else ok; fi
    if head -n 1 "$tmp/$name.help" | grep -q "^usage: $name "; then
        ok
    else
        bad "$name --help does not start with its usage: $(head -n 1 "$tmp/$name.help")"
    fi
    if "$bin" --version 2>/dev/null | grep -qx "$name (fpkit [0-9.]*)"; then
        ok
    else
        bad "$name --version: $("$bin" --version 2>&1 | head -n 1)"
    fi
    page=$srcdir/man/$name.1
    missing=
    # (an -mpi twin's page describes only what differs: its options are
    # the tool's; fpverify's page sends the options it shares to fpvectors')
    pages="$page ${page%-mpi.1}.1 $srcdir/man/fpvectors.1"
    [ "$name" = fpverify ] || pages="$page ${page%-mpi.1}.1"
    for opt in $(sed -n 's/^  \(--[a-z0-9-]*\).*/\1/p; s/^  \(-[a-z]\) .*/\1/p' "$tmp/$name.help" |
        grep -v '^--help$'); do
        flag=$(printf '%s' "$opt" | sed 's/^-//')
        # shellcheck disable=SC2086 # a list of pages
        grep -q "^\.It Fl $flag\b" $pages 2>/dev/null || missing="$missing $opt"
    done
    if [ -n "$missing" ]; then bad "$name: $page describes no$missing"; else ok; fi
    "$bin" --no-such-option >/dev/null 2>"$tmp/$name.bad" && rc=0 || rc=$?
    if [ "$rc" -eq 2 ] && grep -q "unknown option \"--no-such-option\" (see $name --help)" \
        "$tmp/$name.bad"; then
        ok
    else
        bad "$name --no-such-option: status $rc: $(head -n 1 "$tmp/$name.bad")"
    fi
done
summary
