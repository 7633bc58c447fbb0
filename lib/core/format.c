/* The format descriptors and their lookup by name. */
#include <string.h>
#include <strings.h>

#include "core-impl.h"

const fpk_format fpk_fp64 = FPKI_FORMAT_FP64;
const fpk_format fpk_fp32 = FPKI_FORMAT_FP32;
const fpk_format fpk_tf32 = FPKI_FORMAT_TF32;
const fpk_format fpk_fp16 = FPKI_FORMAT_FP16;
const fpk_format fpk_bf16 = FPKI_FORMAT_BF16;
const fpk_format fpk_e4m3 = FPKI_FORMAT_E4M3;
const fpk_format fpk_e5m2 = FPKI_FORMAT_E5M2;
const fpk_format fpk_e4m3fnuz = FPKI_FORMAT_E4M3FNUZ;
const fpk_format fpk_e5m2fnuz = FPKI_FORMAT_E5M2FNUZ;
const fpk_format fpk_e3m2 = FPKI_FORMAT_E3M2;
const fpk_format fpk_e2m3 = FPKI_FORMAT_E2M3;
const fpk_format fpk_e2m1 = FPKI_FORMAT_E2M1;
const fpk_format fpk_e8m0 = FPKI_FORMAT_E8M0;

const fpk_format *const fpk_formats[] = {
    &fpk_fp64, &fpk_fp32, &fpk_tf32, &fpk_fp16, &fpk_bf16, &fpk_e4m3, &fpk_e5m2,
    &fpk_e4m3fnuz, &fpk_e5m2fnuz, &fpk_e3m2, &fpk_e2m3, &fpk_e2m1, &fpk_e8m0, NULL,
};

/* The eXmY family, X = 1..11, Y = 0..52, in three kinds: "eXmY" IEEE-like
 * with bias 2^(X-1)-1 (eXm0, with no room for both infinity and NaN, takes
 * the FN rule), "eXmYfn" FN with the same bias, "eXmYfnuz" FNUZ with bias
 * 2^(X-1). */
enum { EXMY_PLAIN, EXMY_FN, EXMY_FNUZ, EXMY_KINDS };

#define FPKI_EXMY_FORMAT(x, y, k, suffix)                                     \
    FPKI_FORMAT("e" #x "m" #y suffix, "", x, y, (1 << ((x) - 1)) - (k != EXMY_FNUZ), \
                k == EXMY_FNUZ ? FPK_SPECIAL_FNUZ                             \
                : k == EXMY_FN || (y) == 0 ? FPK_SPECIAL_FN                   \
                                           : FPK_SPECIAL_IEEE)
#define FPKI_EXMY(x, y)                                                       \
    {FPKI_EXMY_FORMAT(x, y, EXMY_PLAIN, ""), FPKI_EXMY_FORMAT(x, y, EXMY_FN, "fn"), \
     FPKI_EXMY_FORMAT(x, y, EXMY_FNUZ, "fnuz")}
#define FPKI_EXMY_ROW(x)                                                      \
    {FPKI_EXMY(x, 0), FPKI_EXMY(x, 1), FPKI_EXMY(x, 2), FPKI_EXMY(x, 3),       \
     FPKI_EXMY(x, 4), FPKI_EXMY(x, 5), FPKI_EXMY(x, 6), FPKI_EXMY(x, 7),       \
     FPKI_EXMY(x, 8), FPKI_EXMY(x, 9), FPKI_EXMY(x, 10), FPKI_EXMY(x, 11),     \
     FPKI_EXMY(x, 12), FPKI_EXMY(x, 13), FPKI_EXMY(x, 14), FPKI_EXMY(x, 15),   \
     FPKI_EXMY(x, 16), FPKI_EXMY(x, 17), FPKI_EXMY(x, 18), FPKI_EXMY(x, 19),   \
     FPKI_EXMY(x, 20), FPKI_EXMY(x, 21), FPKI_EXMY(x, 22), FPKI_EXMY(x, 23),   \
     FPKI_EXMY(x, 24), FPKI_EXMY(x, 25), FPKI_EXMY(x, 26), FPKI_EXMY(x, 27),   \
     FPKI_EXMY(x, 28), FPKI_EXMY(x, 29), FPKI_EXMY(x, 30), FPKI_EXMY(x, 31),   \
     FPKI_EXMY(x, 32), FPKI_EXMY(x, 33), FPKI_EXMY(x, 34), FPKI_EXMY(x, 35),   \
     FPKI_EXMY(x, 36), FPKI_EXMY(x, 37), FPKI_EXMY(x, 38), FPKI_EXMY(x, 39),   \
     FPKI_EXMY(x, 40), FPKI_EXMY(x, 41), FPKI_EXMY(x, 42), FPKI_EXMY(x, 43),   \
     FPKI_EXMY(x, 44), FPKI_EXMY(x, 45), FPKI_EXMY(x, 46), FPKI_EXMY(x, 47),   \
     FPKI_EXMY(x, 48), FPKI_EXMY(x, 49), FPKI_EXMY(x, 50), FPKI_EXMY(x, 51),   \
     FPKI_EXMY(x, 52)}

#define FPKI_EXMY_MAX_X 11
#define FPKI_EXMY_MAX_Y 52

static const fpk_format exmy[FPKI_EXMY_MAX_X][FPKI_EXMY_MAX_Y + 1][EXMY_KINDS] = {
    FPKI_EXMY_ROW(1), FPKI_EXMY_ROW(2), FPKI_EXMY_ROW(3), FPKI_EXMY_ROW(4),
    FPKI_EXMY_ROW(5), FPKI_EXMY_ROW(6), FPKI_EXMY_ROW(7), FPKI_EXMY_ROW(8),
    FPKI_EXMY_ROW(9), FPKI_EXMY_ROW(10), FPKI_EXMY_ROW(11),
};

/* Does NAME equal one entry of the comma-separated LIST, ignoring case? */
static bool in_list(const char *name, const char *list)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncasecmp(p, name, n) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

/* Reads 1 or 2 decimal digits without a leading zero; -1 if not that. */
static int small_number(const char **s)
{
    const char *p = *s;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
        return -1;
    int v = *p++ - '0';
    if (*p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    *s = p;
    return v;
}

static const fpk_format *lookup_exmy(const char *name)
{
    const char *p = name;
    if (*p != 'e' && *p != 'E')
        return NULL;
    p++;
    int x = small_number(&p);
    if (x < 1 || x > FPKI_EXMY_MAX_X || (*p != 'm' && *p != 'M'))
        return NULL;
    p++;
    int y = small_number(&p);
    if (y < 0 || y > FPKI_EXMY_MAX_Y)
        return NULL;
    int kind = 0; /* the suffix: the rest of the kind's name */
    while (kind < EXMY_KINDS && strcasecmp(name, exmy[x - 1][y][kind].name) != 0)
        kind++;
    if (kind == EXMY_KINDS)
        return NULL;
    const fpk_format *f = &exmy[x - 1][y][kind];
    for (const fpk_format *const *b = fpk_formats; *b; b++)
        if ((*b)->exp_bits == f->exp_bits && (*b)->man_bits == f->man_bits &&
            (*b)->bias == f->bias && (*b)->special == f->special)
            return *b;
    return f;
}

const fpk_format *fpk_format_lookup(const char *name)
{
    if (!name)
        return NULL;
    for (const fpk_format *const *f = fpk_formats; *f; f++)
        if (strcasecmp(name, (*f)->name) == 0 || in_list(name, (*f)->aliases))
            return *f;
    return lookup_exmy(name);
}
