#!/usr/bin/env bash
# Checks an installed fpkit as a program outside the tree sees it.
#
#     tests/install-check.sh DESTDIR
#
# DESTDIR holds a staged install (make install DESTDIR=...).  Through
# pkg-config, with PKG_CONFIG_SYSROOT_DIR pointing at DESTDIR, this builds a
# program that converts 1.5 to fp16 and must print 0x3e00, linked against the
# shared library and then fully static; builds and runs README.md's library
# example and compares its output with the README's; checks that the header
# compiles as C++, that the man pages are installed and that the shared
# library exports fpk_ names only.  Exits nonzero on the first failure.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: tests/install-check.sh DESTDIR" >&2
    exit 2
fi
stage=$(cd "$1" && pwd)
srcdir=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-cc}
CXX=${CXX:-c++}

fail() {
    echo "install-check: $*" >&2
    exit 1
}

pc=$(find "$stage" -name fpkit.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no pkgconfig/fpkit.pc under $stage"
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=${pc%/fpkit.pc}
export PKG_CONFIG_SYSROOT_DIR=$stage
cflags=$(pkg-config --cflags fpkit)
libs=$(pkg-config --libs fpkit)
static_libs=$(pkg-config --static --libs fpkit)
echo "install-check: $pc: version $(pkg-config --modversion fpkit)"
echo "install-check: cflags: $cflags"
echo "install-check: libs: $libs; static: $static_libs"

for f in "$libdir/libfpkit.a" "$libdir/libfpkit.so"; do
    [ -e "$f" ] || fail "$f is missing"
done
for page in man3/libfpkit.3 man7/fpkit-formats.7; do
    [ -n "$(find "$stage" -path "*/man/$page")" ] || fail "man page $page is not installed"
done

leaked=$(nm -D --defined-only "$libdir/libfpkit.so" | awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /^fpk_/ { print $3 }')
[ -z "$leaked" ] || fail "libfpkit.so exports names outside fpk_: $leaked"
echo "install-check: libfpkit.so exports $(nm -D --defined-only "$libdir/libfpkit.so" | grep -c ' fpk_') fpk_ names and nothing else"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/half.c" <<'EOF'
#include <stdio.h>
#include <fpkit.h>

int main(void)
{
    fpk_ctx ctx = fpk_ctx_default();
    printf("0x%04llx\n", (unsigned long long)fpk_from_double(&fpk_fp16, 1.5, &ctx));
    return ctx.flags != 0;
}
EOF
# shellcheck disable=SC2086 # the pkg-config output is a list of words
"$CC" -Wall -Wextra -Werror -o "$work/half" "$work/half.c" $cflags $libs
LD_LIBRARY_PATH=$libdir ldd "$work/half" | grep -qF "$libdir/libfpkit.so" ||
    fail "the program does not load libfpkit.so from $libdir"
out=$(LD_LIBRARY_PATH=$libdir "$work/half")
[ "$out" = 0x3e00 ] || fail "1.5 in fp16: expected 0x3e00, got '$out' (shared)"
echo "install-check: shared: 1.5 in fp16 is $out"

# shellcheck disable=SC2086
"$CC" -static -Wall -Wextra -Werror -o "$work/half-static" "$work/half.c" $cflags $static_libs
out=$("$work/half-static")
[ "$out" = 0x3e00 ] || fail "1.5 in fp16: expected 0x3e00, got '$out' (static)"
echo "install-check: static: 1.5 in fp16 is $out"

printf '#include <fpkit.h>\nint main() { return fpk_fp16.width == 16 ? 0 : 1; }\n' >"$work/cxx.cc"
# shellcheck disable=SC2086
"$CXX" -Wall -Wextra -Werror -o "$work/cxx" "$work/cxx.cc" $cflags $libs
LD_LIBRARY_PATH=$libdir "$work/cxx" || fail "fpkit.h from C++: wrong fpk_fp16"
echo "install-check: fpkit.h compiles and links as C++"

# README.md: the first ```c block is the library example, the first ```text
# block after it is its output.
awk '/^```c$/ && !s { s = 1; next } s == 1 && /^```$/ { exit } s == 1' \
    "$srcdir/README.md" >"$work/readme.c"
awk '/^```c$/ && !s { s = 1; next } s == 1 && /^```$/ { s = 2; next }
     s == 2 && /^```text$/ { s = 3; next } s == 3 && /^```$/ { exit } s == 3' \
    "$srcdir/README.md" >"$work/readme.expected"
[ -s "$work/readme.c" ] || fail "README.md has no \`\`\`c example"
[ -s "$work/readme.expected" ] || fail "README.md has no \`\`\`text output after its example"
# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -Werror -o "$work/readme" "$work/readme.c" $cflags $libs
LD_LIBRARY_PATH=$libdir "$work/readme" >"$work/readme.out"
if ! diff -u "$work/readme.expected" "$work/readme.out"; then
    fail "README.md's example prints something else than the README says (diff above)"
fi
echo "install-check: README.md example: $(wc -l <"$work/readme.out") lines as documented"
echo "install-check: passed"
