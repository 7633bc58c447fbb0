/* A recipe's statistics as JSON text, and back, with jansson:
 *
 *   {"recipe":"e2m1/e4m3/nvfp4/1x16","count":N,"zeros":N,...,
 *    "x2":X,"e2":X,"x2_sum":"HEXp-298","e2_sum":"HEXp-298",
 *    "scale_min":X,"scale_max":X,
 *    "scale_hist":{"min":E,"counts":[N,...]},
 *    "range_hist":{"min":E,"counts":[N,...]}}
 *
 * The recipe is its canonical string; doubles have 17 significant digits,
 * which read back exactly; an exact sum is its integer in hexadecimal
 * times 2^-298 ("inf" or "nan" where such a term was added), and x2 and
 * e2 must be their roundings; a histogram runs from its first nonzero bin
 * (whose floor(log2) is min) to its last.  Reading rejects anything the
 * writer could not have written, with a message naming the key. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "recipe-impl.h"

/* The counts, by name, as offsets into the statistics: one list for
 * writing and reading. */
static const struct {
    const char *key;
    size_t at;
} counts[] = {
    {"count", offsetof(fpk_recipe_stats, count)},
    {"zeros", offsetof(fpk_recipe_stats, zeros)},
    {"nonfinite", offsetof(fpk_recipe_stats, nonfinite)},
    {"flushed", offsetof(fpk_recipe_stats, flushed)},
    {"saturated", offsetof(fpk_recipe_stats, saturated)},
    {"subnormal", offsetof(fpk_recipe_stats, subnormal)},
    {"blocks", offsetof(fpk_recipe_stats, blocks)},
    {"zero_blocks", offsetof(fpk_recipe_stats, zero_blocks)},
    {"nan_blocks", offsetof(fpk_recipe_stats, nan_blocks)},
    {"scale_underflow", offsetof(fpk_recipe_stats, scale_underflow)},
    {"scale_saturated", offsetof(fpk_recipe_stats, scale_saturated)},
};
static const struct {
    const char *key;
    size_t at;
} reals[] = {
    {"x2", offsetof(fpk_recipe_stats, x2)},
    {"e2", offsetof(fpk_recipe_stats, e2)},
    {"scale_min", offsetof(fpk_recipe_stats, scale_min)},
    {"scale_max", offsetof(fpk_recipe_stats, scale_max)},
};
#define NCOUNTS (sizeof counts / sizeof counts[0])
#define NREALS (sizeof reals / sizeof reals[0])

static uint64_t *count_at(fpk_recipe_stats *s, size_t i)
{
    return (uint64_t *)(void *)((char *)s + counts[i].at);
}

static double *real_at(fpk_recipe_stats *s, size_t i)
{
    return (double *)(void *)((char *)s + reals[i].at);
}

/* The exact sums, by name. */
static const struct {
    const char *key;
    size_t at;
} sums[] = {
    {"x2_sum", offsetof(fpk_recipe_stats, x2_sum)},
    {"e2_sum", offsetof(fpk_recipe_stats, e2_sum)},
};
#define NSUMS (sizeof sums / sizeof sums[0])

static fpk_recipe_sum *sum_at(fpk_recipe_stats *s, size_t i)
{
    return (fpk_recipe_sum *)(void *)((char *)s + sums[i].at);
}

/* S as text: "inf", "nan", or its hex digits and "p-298". */
static json_t *sum_json(const fpk_recipe_sum *s)
{
    char text[16 * FPK_RECIPE_SUM_LIMBS + 16], *p = text;
    int top = FPK_RECIPE_SUM_LIMBS - 1;
    while (top > 0 && !s->limb[top])
        top--;
    if (s->nan || s->inf)
        return json_string(s->nan ? "nan" : "inf");
    p += sprintf(p, "%" PRIx64, s->limb[top]);
    for (int i = top - 1; i >= 0; i--)
        p += sprintf(p, "%016" PRIx64, s->limb[i]);
    sprintf(p, "p-%d", FPKI_SUM_LSB);
    return json_string(text);
}

/* *S := the sum TEXT names (sum_json's form); false if it is not one. */
static bool sum_parse(const char *text, fpk_recipe_sum *s)
{
    memset(s, 0, sizeof *s);
    if (!strcmp(text, "inf") || !strcmp(text, "nan")) {
        s->inf = text[0] == 'i';
        s->nan = text[0] == 'n';
        return true;
    }
    char tail[16];
    size_t n = strspn(text, "0123456789abcdef");
    snprintf(tail, sizeof tail, "p-%d", FPKI_SUM_LSB);
    if (n == 0 || n > 16 * FPK_RECIPE_SUM_LIMBS || strcmp(text + n, tail))
        return false;
    for (size_t i = 0; i < n; i++) { /* digit n - 1 - i weighs 16^i */
        char c = text[n - 1 - i];
        uint64_t d = (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
        s->limb[i / 16] |= d << (4 * (i % 16));
    }
    return true;
}

static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

static json_t *count_json(uint64_t v)
{
    return v > INT64_MAX ? NULL : json_integer((json_int_t)v);
}

/* HIST[0..N-1] (bin i for floor(log2) LO + i) from its first nonzero bin
 * to its last. */
static json_t *hist_json(const uint64_t *hist, int n, int lo)
{
    int first = 0, last = -1;
    for (int i = n - 1; i >= 0; i--)
        if (hist[i]) {
            last = last < 0 ? i : last;
            first = i;
        }
    json_t *h = json_object(), *a = json_array();
    bool ok = h && a && put(h, "min", json_integer(last < 0 ? 0 : first + lo)) &&
              put(h, "counts", json_incref(a));
    for (int i = first; ok && i <= last; i++)
        ok = json_array_append_new(a, count_json(hist[i])) == 0;
    json_decref(a);
    if (!ok) {
        json_decref(h);
        return NULL;
    }
    return h;
}

char *fpk_recipe_stats_to_json(const fpk_recipe_stats *s)
{
    char name[256];
    fpk_recipe_format(&s->recipe, name, sizeof name);
    json_t *root = json_object();
    bool ok = root && put(root, "recipe", json_string(name));
    fpk_recipe_stats *w = (fpk_recipe_stats *)s; /* read only, through count_at */
    for (size_t i = 0; ok && i < NCOUNTS; i++)
        ok = put(root, counts[i].key, count_json(*count_at(w, i)));
    for (size_t i = 0; ok && i < NREALS; i++)
        ok = put(root, reals[i].key, json_real(*real_at(w, i)));
    for (size_t i = 0; ok && i < NSUMS; i++)
        ok = put(root, sums[i].key, sum_json(sum_at(w, i)));
    ok = ok && put(root, "scale_hist", hist_json(s->scale_hist, FPK_SCALE_LOG2_BINS,
                                                 FPK_SCALE_LOG2_MIN)) &&
         put(root, "range_hist", hist_json(s->range_hist, FPK_RANGE_BINS, 0));
    char *text = ok ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(root);
    return text;
}

static int bad(fpk_error *err, const char *key, const char *what)
{
    if (err) {
        err->code = FPK_EFORMAT;
        snprintf(err->msg, sizeof err->msg, "recipe stats JSON: \"%s\": %s", key, what);
    }
    return FPK_EFORMAT;
}

/* HIST := the histogram at O[KEY], bins LO .. LO + N - 1. */
static int get_hist(json_t *o, const char *key, uint64_t *hist, int n, int lo, fpk_error *err)
{
    json_t *h = json_object_get(o, key), *mn = json_object_get(h, "min");
    json_t *a = json_object_get(h, "counts");
    if (!json_is_integer(mn) || !json_is_array(a))
        return bad(err, key, "expected {\"min\":E,\"counts\":[...]}");
    json_int_t first = json_integer_value(mn) - lo;
    size_t len = json_array_size(a);
    if (len && (first < 0 || first + (json_int_t)len > n))
        return bad(err, key, "bins out of range");
    for (size_t i = 0; i < len; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return bad(err, key, "expected counts");
        hist[first + (json_int_t)i] = (uint64_t)json_integer_value(v);
    }
    return FPK_OK;
}

int fpk_recipe_stats_from_json(fpk_recipe_stats *s, const char *json, fpk_error *err)
{
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (err) {
            err->code = FPK_EFORMAT;
            snprintf(err->msg, sizeof err->msg, "recipe stats JSON: %s at offset %d",
                     jerr.text, jerr.position);
        }
        return FPK_EFORMAT;
    }
    fpk_recipe_stats t;
    fpk_recipe r;
    int rc = FPK_OK;
    json_t *name = json_object_get(root, "recipe");
    if (!json_is_string(name) || fpk_recipe_parse(json_string_value(name), &r, NULL))
        rc = bad(err, "recipe", "expected a recipe");
    else
        fpk_recipe_stats_init(&t, &r);
    for (size_t i = 0; !rc && i < NCOUNTS; i++) {
        json_t *v = json_object_get(root, counts[i].key);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            rc = bad(err, counts[i].key, "expected a count");
        else
            *count_at(&t, i) = (uint64_t)json_integer_value(v);
    }
    for (size_t i = 0; !rc && i < NREALS; i++) {
        json_t *v = json_object_get(root, reals[i].key);
        if (!json_is_number(v) || json_number_value(v) < 0)
            rc = bad(err, reals[i].key, "expected a number, 0 or more");
        else
            *real_at(&t, i) = json_number_value(v);
    }
    for (size_t i = 0; !rc && i < NSUMS; i++) {
        json_t *v = json_object_get(root, sums[i].key);
        if (!json_is_string(v) || !sum_parse(json_string_value(v), sum_at(&t, i)))
            rc = bad(err, sums[i].key, "expected an exact sum, HEXp-298");
    }
    if (!rc && (fpki_recipe_sum_value(&t.x2_sum) != t.x2 ||
                fpki_recipe_sum_value(&t.e2_sum) != t.e2))
        rc = bad(err, "x2", "x2 and e2 must be their exact sums rounded");
    if (!rc)
        rc = get_hist(root, "scale_hist", t.scale_hist, FPK_SCALE_LOG2_BINS,
                      FPK_SCALE_LOG2_MIN, err);
    if (!rc)
        rc = get_hist(root, "range_hist", t.range_hist, FPK_RANGE_BINS, 0, err);
    if (!rc && (t.zeros + t.nonfinite > t.count || t.flushed + t.subnormal > t.count ||
                t.saturated > t.count || t.zero_blocks + t.nan_blocks > t.blocks))
        rc = bad(err, "count", "counts contradict each other");
    json_decref(root);
    if (!rc)
        *s = t;
    return rc;
}
