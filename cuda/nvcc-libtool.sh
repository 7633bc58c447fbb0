#!/bin/sh
# nvcc as libtool's compiler: "nvcc-libtool.sh NVCC ARGS..." runs NVCC
# with ARGS, but for the C compiler's -fPIC that libtool adds, which nvcc
# takes as -Xcompiler=-fPIC (libtool itself would take a bare -Xcompiler).
nvcc=$1
shift
for arg; do
    shift
    case $arg in
    -fPIC) set -- "$@" -Xcompiler=-fPIC ;;
    *) set -- "$@" "$arg" ;;
    esac
done
exec "$nvcc" "$@"
