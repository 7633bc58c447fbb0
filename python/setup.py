"""Builds fpkit's C extension against an installed libfpkit.

The compiler and linker flags come from pkg-config (pkg-config --cflags
--libs fpkit), or from FPKIT_CFLAGS and FPKIT_LIBS where both are set (as
autoconf's PKG_CHECK_MODULES allows): fpkit's own make check builds the
extension against its build tree so.  The package's version is the
library's (pkg-config --modversion fpkit, or FPKIT_VERSION).  Library
directories outside the system's are recorded in the extension (rpath), so
that an fpkit installed under any prefix is found at run time.  Run from
any directory: `setup.py egg_info -e DIR build -b DIR` with DIR absolute
writes nothing into the source tree."""

import os
import shlex
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["module.c", "arrays.c", "ops.c", "scalar.c", "exact.c", "stats.c", "stats_add.c",
           "recipe.c"]
SYSTEM_LIBDIRS = {"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/lib/x86_64-linux-gnu"}


def pkg_config(*args):
    try:
        r = subprocess.run(["pkg-config", *args, "fpkit"], capture_output=True, text=True,
                           check=False)
    except FileNotFoundError:
        sys.exit("fpkit: pkg-config is needed to find libfpkit (Debian package pkg-config), "
                 "or set FPKIT_CFLAGS and FPKIT_LIBS")
    if r.returncode != 0:
        sys.exit("fpkit: pkg-config cannot find libfpkit: install fpkit (make install) and "
                 "point PKG_CONFIG_PATH at its lib/pkgconfig, or set FPKIT_CFLAGS and "
                 f"FPKIT_LIBS ({r.stderr.strip()})")
    return r.stdout.strip()


def flags():
    if os.environ.get("FPKIT_CFLAGS") is not None and os.environ.get("FPKIT_LIBS") is not None:
        cflags, libs = os.environ["FPKIT_CFLAGS"], os.environ["FPKIT_LIBS"]
    else:
        cflags, libs = pkg_config("--cflags"), pkg_config("--libs")
    include = [f[2:] for f in shlex.split(cflags) if f.startswith("-I")]
    other_c = [f for f in shlex.split(cflags) if not f.startswith("-I")]
    libdirs = [f[2:] for f in shlex.split(libs) if f.startswith("-L")]
    names = [f[2:] for f in shlex.split(libs) if f.startswith("-l")]
    other_l = [f for f in shlex.split(libs) if f[:2] not in ("-L", "-l")]
    rpath = [d for d in libdirs if os.path.normpath(d) not in SYSTEM_LIBDIRS]
    return include, other_c, libdirs, names, other_l, rpath


def version():
    v = os.environ.get("FPKIT_VERSION")
    return v if v else pkg_config("--modversion")


include, other_c, libdirs, names, other_l, rpath = flags()
os.chdir(HERE)  # the sources' paths are relative to it; build with -b DIR elsewhere
setup(
    version=version(),
    packages=["fpkit"],
    ext_modules=[
        Extension(
            "fpkit._fpkit",
            sources=[f"src/{s}" for s in SOURCES],
            include_dirs=include,
            library_dirs=libdirs,
            libraries=names,
            runtime_library_dirs=rpath,
            extra_compile_args=["-std=c11", "-Wall", "-Wextra", *other_c,
                                *shlex.split(os.environ.get("FPKIT_EXTRA_CFLAGS", ""))],
            extra_link_args=other_l,
        )
    ],
)
