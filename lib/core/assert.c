/* The failure of an internal check (FPKI_ASSERT, --enable-assertions). */
#include <stdio.h>
#include <stdlib.h>

#include "core-impl.h"

#ifdef FPK_ASSERTIONS
_Noreturn void fpki_assert_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "libfpkit: internal check failed at %s:%d: %s\n", file, line, what);
    abort();
}
#endif
