/* For tests/check_recipe_torchao.py: quantises ROWS x COLS float32 read
 * from standard input (host order) under RECIPE and writes the codes
 * (one byte each), the scales (u32 each), the global scale (u32) and
 * the values (float32), host order, to standard output. */
#include <stdio.h>
#include <stdlib.h>

#include "fpkit-tensor.h"

int main(int argc, char **argv)
{
    fpk_recipe r;
    fpk_error err;
    if (argc != 4) {
        fprintf(stderr, "usage: recipe_dump RECIPE ROWS COLS\n");
        return 2;
    }
    if (fpk_recipe_parse(argv[1], &r, &err)) {
        fprintf(stderr, "recipe_dump: %s\n", err.msg);
        return 2;
    }
    size_t rows = strtoul(argv[2], NULL, 10), cols = strtoul(argv[3], NULL, 10), br, bc;
    size_t n = rows * cols, nb = fpk_recipe_blocks(&r, rows, cols, &br, &bc);
    float *x = malloc(n * 4 + 1), *y = malloc(n * 4 + 1);
    uint8_t *codes = malloc(n + 1);
    uint32_t *scales = malloc(nb * 4 + 1);
    if (!x || !y || !codes || !scales || fread(x, 4, n, stdin) != n) {
        fprintf(stderr, "recipe_dump: cannot read %zu floats\n", n);
        return 2;
    }
    fpk_quantized q = {.codes = codes, .scales = scales, .y = y};
    if (fpk_recipe_quantize(&r, x, rows, cols, NULL, &q, NULL, &err)) {
        fprintf(stderr, "recipe_dump: %s\n", err.msg);
        return 2;
    }
    fwrite(codes, 1, n, stdout);
    fwrite(scales, 4, nb, stdout);
    fwrite(&q.global, 4, 1, stdout);
    fwrite(y, 4, n, stdout);
    free(x), free(y), free(codes), free(scales);
    return 0;
}
