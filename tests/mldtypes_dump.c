/* The library's side of tests/check_mldtypes.py, which compares it with
 * ml_dtypes.  Usage:
 *
 *     mldtypes_dump values FORMAT            every encoding's value: one
 *                                            float64 per encoding, in order
 *     mldtypes_dump convert FORMAT < F32     each float32 read (host byte
 *                                            order) rounded into FORMAT under
 *                                            RNE: one byte per value
 *     mldtypes_dump mx FORMAT RULE BLOCK < F32
 *                                            fpk_mx_quantize (RULE floor or
 *                                            ceil): the scales, one byte per
 *                                            block, then the encodings, then
 *                                            the float32 values
 *
 * Binary output on stdout; exit 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpkit-tensor.h"

static void *read_all(size_t *n)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    if (!buf) {
        fprintf(stderr, "mldtypes_dump: out of memory\n");
        exit(1);
    }
    *n = len / sizeof(float);
    return buf;
}

int main(int argc, char **argv)
{
    const fpk_format *f = argc >= 3 ? fpk_format_lookup(argv[2]) : NULL;
    if (!f || f->width > 8) {
        fprintf(stderr, "usage: mldtypes_dump values|convert|mx FORMAT [RULE BLOCK]"
                        " (FORMAT of at most 8 bits)\n");
        return 2;
    }
    if (strcmp(argv[1], "values") == 0) {
        for (fpk_bits a = 0; a < (fpk_bits)1 << f->width; a++) {
            double d = fpk_to_double(f, a);
            fwrite(&d, sizeof d, 1, stdout);
        }
        return 0;
    }
    size_t n;
    float *x = read_all(&n);
    unsigned char *enc = malloc(n ? n : 1);
    fpk_ctx c = fpk_ctx_default();
    if (strcmp(argv[1], "convert") == 0) {
        for (size_t i = 0; i < n; i++)
            enc[i] = (unsigned char)fpk_from_double(f, x[i], &c);
        fwrite(enc, 1, n, stdout);
    } else if (strcmp(argv[1], "mx") == 0 && argc == 5) {
        fpk_mx_rule rule = strcmp(argv[3], "ceil") == 0 ? FPK_MX_CEIL : FPK_MX_FLOOR;
        size_t block = (size_t)strtoul(argv[4], NULL, 10);
        size_t nblocks = block ? (n + block - 1) / block : 0;
        unsigned char *scales = malloc(nblocks ? nblocks : 1);
        if (!scales || !block || !fpk_mx_quantize(f, rule, block, x, n, enc, scales, x, NULL, &c)) {
            fprintf(stderr, "mldtypes_dump: cannot quantise into %s blocks of %zu\n", f->name,
                    block);
            return 2;
        }
        fwrite(scales, 1, nblocks, stdout);
        fwrite(enc, 1, n, stdout);
        fwrite(x, sizeof *x, n, stdout);
        free(scales);
    } else {
        fprintf(stderr, "mldtypes_dump: unknown command \"%s\"\n", argv[1]);
        return 2;
    }
    free(x);
    free(enc);
    return 0;
}
