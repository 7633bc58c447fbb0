/* Recipes by name and as text: the presets, the spelled-out syntax
 * "ELEM/SCALE/RULE/ROWSxCOLS[,OPTION...]" (fpkit-recipes(7)) and the
 * canonical string that reads back to the same recipe. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "recipe-impl.h"

typedef struct preset {
    const char *name, *spelled;
} preset;

/* Each preset is its spelled-out recipe, in one list, which the table and
 * the list of names are made from (the man page and the tests walk the
 * latter). */
#define PRESETS(X)                                                        \
    X("fp8-tensor-current", "e4m3/fp32/amax/0x0")                         \
    X("fp8-tensor-delayed", "e4m3/fp32/amax/0x0,history=1024,max")       \
    X("fp8-block128", "e4m3/fp32/amax/1x128")                             \
    X("fp8-block128x128", "e4m3/fp32/amax/128x128")                       \
    X("mxfp8-e4m3", "e4m3/e8m0/floor/1x32")                               \
    X("mxfp8-e5m2", "e5m2/e8m0/floor/1x32")                               \
    X("mxfp6-e2m3", "e2m3/e8m0/floor/1x32")                               \
    X("mxfp6-e3m2", "e3m2/e8m0/floor/1x32")                               \
    X("mxfp4", "e2m1/e8m0/floor/1x32")                                    \
    X("nvfp4", "e2m1/e4m3/nvfp4/1x16")                                    \
    X("nvfp4-2d", "e2m1/e4m3/nvfp4/16x16")                                \
    X("nvfp4-rht", "e2m1/e4m3/nvfp4/1x16,rht")                            \
    X("nvfp4-sr", "e2m1/e4m3/nvfp4/1x16,round=sr")
#define PRESET_ENTRY(name, spelled) {name, spelled},
#define PRESET_NAME(name, spelled) name,
static const preset presets[] = {PRESETS(PRESET_ENTRY)};
#define NPRESETS (sizeof presets / sizeof presets[0])

const char *const fpk_recipe_presets[] = {PRESETS(PRESET_NAME) NULL};

static int syntax(fpk_error *err, const char *s, size_t at, const char *what)
{
    if (err) {
        err->code = FPK_ESYNTAX;
        snprintf(err->msg, sizeof err->msg, "recipe \"%.80s\": %s at offset %zu", s, what, at);
    }
    return FPK_ESYNTAX;
}

/* An unsigned decimal or 0x hex number filling [P, P+LEN), at most MAX. */
static bool number(const char *p, size_t len, uint64_t max, uint64_t *v)
{
    char buf[32], *end;
    if (len == 0 || len >= sizeof buf || *p == '-' || *p == '+')
        return false;
    memcpy(buf, p, len);
    buf[len] = '\0';
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 0);
    if (errno || *end || x > max)
        return false;
    *v = x;
    return true;
}

/* A format named by [P, P+LEN): a name fpk_format_lookup knows, or one
 * with a "u" (unsigned, as scales are written: ue4m3, ue5m3). */
static const fpk_format *format_named(const char *p, size_t len)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return NULL;
    memcpy(buf, p, len);
    buf[len] = '\0';
    const fpk_format *f = fpk_format_lookup(buf);
    if (!f && (buf[0] == 'u' || buf[0] == 'U'))
        f = fpk_format_lookup(buf + 1);
    return f;
}

/* The spelled-out part ELEM/SCALE/RULE/ROWSxCOLS in [S, S+LEN). */
static int parse_spelled(const char *all, const char *s, size_t len, fpk_recipe *r,
                         fpk_error *err)
{
    const char *field[4];
    size_t flen[4], nf = 0;
    const char *p = s, *end = s + len;
    while (nf < 4) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *stop = slash ? slash : end;
        field[nf] = p;
        flen[nf++] = (size_t)(stop - p);
        if (!slash)
            break;
        p = slash + 1;
    }
    if (nf != 4 || memchr(field[3], '/', flen[3]))
        return syntax(err, all, 0, "expected ELEM/SCALE/RULE/ROWSxCOLS or a preset name");
    if (!(r->elem = format_named(field[0], flen[0])))
        return syntax(err, all, 0, "unknown element format");
    if (!(r->scale = format_named(field[1], flen[1])))
        return syntax(err, all, (size_t)(field[1] - all), "unknown scale format");
    int rule;
    for (rule = 0; rule < FPK_SCALE_RULE_COUNT; rule++) {
        const char *name = fpk_scale_rule_name((fpk_scale_rule)rule);
        if (strlen(name) == flen[2] && !strncasecmp(name, field[2], flen[2]))
            break;
    }
    if (rule == FPK_SCALE_RULE_COUNT)
        return syntax(err, all, (size_t)(field[2] - all), "unknown scale rule");
    r->rule = (fpk_scale_rule)rule;
    const char *x = field[3], *by = NULL;
    for (size_t i = 0; i < flen[3]; i++)
        if (x[i] == 'x' || x[i] == 'X')
            by = x + i;
    uint64_t rows, cols;
    if (!by || !number(x, (size_t)(by - x), UINT32_MAX, &rows) ||
        !number(by + 1, (size_t)(x + flen[3] - by - 1), UINT32_MAX, &cols))
        return syntax(err, all, (size_t)(x - all), "expected a block shape ROWSxCOLS");
    r->block_rows = (uint32_t)rows;
    r->block_cols = (uint32_t)cols;
    return FPK_OK;
}

/* One option NAME[=VALUE] in [P, P+LEN). */
static int parse_option(const char *all, const char *p, size_t len, fpk_recipe *r,
                        fpk_error *err)
{
    const char *eq = memchr(p, '=', len);
    size_t nlen = eq ? (size_t)(eq - p) : len;
    const char *v = eq ? eq + 1 : NULL;
    size_t vlen = eq ? (size_t)(p + len - v) : 0;
    size_t at = (size_t)(p - all);
    uint64_t n;
#define IS(name) (nlen == strlen(name) && !strncasecmp(p, name, nlen))
    if (IS("round") && v) {
        char buf[8];
        if (vlen >= sizeof buf)
            return syntax(err, all, at, "unknown rounding mode");
        memcpy(buf, v, vlen);
        buf[vlen] = '\0';
        if (!fpk_round_lookup(buf, &r->round))
            return syntax(err, all, at, "unknown rounding mode");
    } else if (IS("sr_bits") && v && number(v, vlen, 32, &n) && n >= 1) {
        r->sr_bits = (int)n;
    } else if (IS("seed") && v && number(v, vlen, UINT64_MAX, &n)) {
        r->seed = n;
    } else if (IS("margin") && v && number(v, vlen, 64, &n)) {
        r->margin = (int)n;
    } else if (IS("history") && v && number(v, vlen, FPK_HISTORY_MAX, &n) && n >= 1) {
        r->history = (int)n;
    } else if (IS("pow2") && !v) {
        r->pow2 = true;
    } else if (IS("max") && !v) {
        r->history_max = true;
    } else if (IS("latest") && !v) {
        r->history_max = false;
    } else if (IS("rht")) {
        r->rht = true;
        if (v) {
            if (!number(v, vlen, UINT16_MAX, &n))
                return syntax(err, all, at, "expected rht=SIGNS, a 16-bit mask");
            r->rht_signs = (uint16_t)n;
        }
    } else {
        return syntax(err, all, at, "unknown option or bad value");
    }
#undef IS
    return FPK_OK;
}

int fpk_recipe_parse(const char *s, fpk_recipe *out, fpk_error *err)
{
    if (!s)
        return syntax(err, "", 0, "no recipe");
    fpk_recipe r = {.round = FPK_RNE, .sr_bits = 32, .rht_signs = FPK_RHT_TE_SIGNS};
    const char *comma = strchr(s, ',');
    size_t head = comma ? (size_t)(comma - s) : strlen(s);
    const preset *pre = NULL;
    for (size_t i = 0; i < NPRESETS; i++)
        if (strlen(presets[i].name) == head && !strncasecmp(presets[i].name, s, head))
            pre = &presets[i];
    if (pre) {
        int rc = fpk_recipe_parse(pre->spelled, &r, err);
        if (rc)
            return rc;
    } else {
        int rc = parse_spelled(s, s, head, &r, err);
        if (rc)
            return rc;
    }
    for (const char *p = comma; p; p = strchr(p + 1, ',')) {
        const char *next = strchr(p + 1, ',');
        size_t len = next ? (size_t)(next - p - 1) : strlen(p + 1);
        int rc = parse_option(s, p + 1, len, &r, err);
        if (rc)
            return rc;
    }
    if (!fpk_recipe_valid(&r, err)) {
        if (err) {
            char msg[sizeof err->msg];
            memcpy(msg, err->msg, sizeof msg);
            snprintf(err->msg, sizeof err->msg, "recipe \"%.80s\": %.120s", s, msg + 8);
        }
        return FPK_ESYNTAX;
    }
    *out = r;
    return FPK_OK;
}

size_t fpk_recipe_format(const fpk_recipe *r, char *buf, size_t len)
{
    char t[256];
    int n = snprintf(t, sizeof t, "%s/%s/%s/%" PRIu32 "x%" PRIu32, r->elem->name,
                     r->scale->name, fpk_scale_rule_name(r->rule), r->block_rows,
                     r->block_cols);
#define ADD(...) n += snprintf(t + n, sizeof t - (size_t)n, __VA_ARGS__)
    if (r->round != FPK_RNE)
        ADD(",round=%s", fpk_round_name(r->round));
    if (r->round == FPK_SR && r->sr_bits != 32)
        ADD(",sr_bits=%d", r->sr_bits);
    if (r->round == FPK_SR && r->seed)
        ADD(",seed=%" PRIu64, r->seed);
    if (r->margin)
        ADD(",margin=%d", r->margin);
    if (r->pow2)
        ADD(",pow2");
    if (r->history)
        ADD(",history=%d,%s", r->history, r->history_max ? "max" : "latest");
    if (r->rht && r->rht_signs == FPK_RHT_TE_SIGNS)
        ADD(",rht");
    else if (r->rht)
        ADD(",rht=0x%04x", (unsigned)r->rht_signs);
#undef ADD
    if (len)
        snprintf(buf, len, "%s", t);
    return (size_t)n;
}
