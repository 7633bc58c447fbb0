#!/bin/sh
# fpkit's recipes against torchao's quantisers, live
# (tests/check_recipe_torchao.py); the committed golden vectors are
# compared by tests/check_recipe wherever torchao is absent.  Skipped (77)
# without torch and torchao: FPK_TORCH_PYTHON names a Python that has
# them (.ci/run sets it to its virtual environment's).
set -eu
srcdir=$(cd "${srcdir:-.}" && pwd)
dump=./tests/recipe_dump
if [ ! -x "$dump" ]; then
    echo "check_recipe_torchao: $dump is not an executable" >&2
    exit 99
fi
for py in ${FPK_TORCH_PYTHON:-} python3; do
    if "$py" -c 'import torch, torchao.prototype.mx_formats' >/dev/null 2>&1; then
        exec "$py" "$srcdir/tests/check_recipe_torchao.py" "$dump"
    fi
done
echo "check_recipe_torchao: torch and torchao are needed; skipped"
exit 77
