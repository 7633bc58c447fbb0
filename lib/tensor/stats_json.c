/* Tensor statistics as JSON text, and back, with jansson:
 *
 *   {"round":"rne","scale":1.0,"ftz":false,"saturate":false,
 *    "count":N,"zeros":N,"nonfinite":N,"amax":X,
 *    "log2_hist":{"min":E,"counts":[N,...]},
 *    "formats":{"fp16":{"underflow":N,"subnormal":N,"overflow":N},...}}
 *
 * Doubles are JSON numbers of 17 significant digits, which read back
 * exactly.  The histogram runs from its first nonzero bin, whose
 * floor(log2|x|) is min, to its last ({"min":0,"counts":[]} when empty).
 * Formats are named canonically, in the order of the statistics.
 *
 * Reading rejects, with a message, anything fpk_stats_to_json could not
 * have written: bad JSON, a duplicated key, a missing key, a value of the
 * wrong type, a negative count, an unknown rounding mode or format name, a
 * format named twice, more than FPK_STATS_MAX_FORMATS formats, histogram
 * bins outside FPK_LOG2_MIN .. FPK_LOG2_MIN + FPK_LOG2_BINS - 1, a scale
 * that is not finite and positive, and counts that contradict each other
 * (count != zeros + nonfinite + the histogram's total, a format counting
 * more elements than that total, an amax outside the histogram's top bin).
 * Keys it does not know are ignored, so statistics may sit inside a larger
 * report. */
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "stats.h"

/* A count as a JSON integer; NULL when jansson's integers cannot hold it
 * (2^63 elements and more). */
static json_t *count_json(uint64_t v)
{
    return v > INT64_MAX ? NULL : json_integer((json_int_t)v);
}

/* O[KEY] = V, taking V's reference; false if V is NULL or jansson fails. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

static bool put_counts(json_t *o, const fpk_format_counts *k)
{
    return put(o, "underflow", count_json(k->underflow)) &&
           put(o, "subnormal", count_json(k->subnormal)) &&
           put(o, "overflow", count_json(k->overflow));
}

static json_t *hist_json(const fpk_stats *s)
{
    int first = 0, last = -1;
    for (int i = FPK_LOG2_BINS - 1; i >= 0; i--)
        if (s->log2_hist[i]) {
            if (last < 0)
                last = i;
            first = i;
        }
    json_t *h = json_object(), *counts = json_array();
    bool ok = h && put(h, "min", json_integer(last < 0 ? 0 : first + FPK_LOG2_MIN)) &&
              put(h, "counts", json_incref(counts));
    for (int i = first; ok && i <= last; i++) {
        json_t *v = count_json(s->log2_hist[i]);
        ok = v && json_array_append_new(counts, v) == 0;
    }
    json_decref(counts);
    if (ok)
        return h;
    json_decref(h);
    return NULL;
}

/* Fills ROOT; false if S cannot be written (see fpk_stats_to_json). */
static bool build(json_t *root, const fpk_stats *s)
{
    if ((unsigned)s->round >= FPK_ROUND_COUNT || s->nformats < 0 ||
        s->nformats > FPK_STATS_MAX_FORMATS)
        return false;
    json_t *formats = json_object();
    bool ok = put(root, "round", json_string(fpk_round_name(s->round))) &&
              put(root, "scale", json_real(s->scale)) &&
              put(root, "ftz", json_boolean(s->ftz)) &&
              put(root, "saturate", json_boolean(s->saturate)) &&
              put(root, "count", count_json(s->count)) &&
              put(root, "zeros", count_json(s->zeros)) &&
              put(root, "nonfinite", count_json(s->nonfinite)) &&
              put(root, "amax", json_real(s->amax)) &&
              put(root, "log2_hist", hist_json(s)) &&
              put(root, "formats", json_incref(formats));
    for (int j = 0; ok && j < s->nformats; j++) {
        const char *name = s->formats[j]->name;
        json_t *k = json_object();
        /* A format listed twice would need a second key of the same name. */
        ok = k && !json_object_get(formats, name) && put_counts(k, &s->fmt[j]) &&
             put(formats, name, json_incref(k));
        json_decref(k);
    }
    json_decref(formats);
    return ok;
}

/* The text is one line; NULL if out of memory, or if S holds what the
 * JSON cannot: a count of 2^63 or more, or a format listed twice. */
char *fpk_stats_to_json(const fpk_stats *s)
{
    json_t *root = json_object();
    char *text = NULL;
    if (root && build(root, s))
        text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(root);
    return text;
}

/* FPK_EFORMAT with "stats JSON: " and the message. */
static int fail(fpk_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(fpk_error *err, const char *fmt, ...)
{
    if (err) {
        err->code = FPK_EFORMAT;
        int n = snprintf(err->msg, sizeof err->msg, "stats JSON: ");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return FPK_EFORMAT;
}

/* O[KEY], or NULL with a message naming PATH (the key's place, "" at the
 * top) when it is missing. */
static json_t *member(json_t *o, const char *path, const char *key, fpk_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        fail(err, "%s\"%s\" is missing", path, key);
    return v;
}

/* A count: a JSON integer >= 0. */
static int read_count(json_t *v, const char *path, const char *key, uint64_t *z, fpk_error *err)
{
    if (!json_is_integer(v))
        return fail(err, "%s\"%s\" must be an integer count", path, key);
    json_int_t i = json_integer_value(v);
    if (i < 0)
        return fail(err, "%s\"%s\" is negative (%" PRId64 ")", path, key, (int64_t)i);
    *z = (uint64_t)i;
    return FPK_OK;
}

static int get_count(json_t *o, const char *path, const char *key, uint64_t *z, fpk_error *err)
{
    json_t *v = member(o, path, key, err);
    return v ? read_count(v, path, key, z, err) : FPK_EFORMAT;
}

/* A double: a JSON real, or an integer that a double holds exactly. */
static int get_double(json_t *o, const char *key, double *z, fpk_error *err)
{
    const json_int_t exact = (json_int_t)1 << 53;
    json_t *v = member(o, "", key, err);
    if (!v)
        return FPK_EFORMAT;
    if (json_is_real(v))
        *z = json_real_value(v);
    else if (json_is_integer(v) && json_integer_value(v) >= -exact &&
             json_integer_value(v) <= exact)
        *z = (double)json_integer_value(v);
    else
        return fail(err, "\"%s\" must be a number that a double holds exactly", key);
    return FPK_OK;
}

static int get_bool(json_t *o, const char *key, bool *z, fpk_error *err)
{
    json_t *v = member(o, "", key, err);
    if (!v)
        return FPK_EFORMAT;
    if (!json_is_boolean(v))
        return fail(err, "\"%s\" must be true or false", key);
    *z = json_is_true(v);
    return FPK_OK;
}

static int get_round(json_t *o, fpk_round *z, fpk_error *err)
{
    json_t *v = member(o, "", "round", err);
    if (!v)
        return FPK_EFORMAT;
    if (fpk_round_lookup(json_string_value(v), z))
        return FPK_OK;
    return fail(err, "\"round\" must be one of rne, rna, rtz, rup, rdn, rod, sr");
}

static int get_hist(json_t *o, fpk_stats *s, fpk_error *err)
{
    json_t *h = member(o, "", "log2_hist", err);
    if (!h)
        return FPK_EFORMAT;
    if (!json_is_object(h))
        return fail(err, "\"log2_hist\" must be an object {\"min\": E, \"counts\": [...]}");
    json_t *min = member(h, "log2_hist: ", "min", err);
    json_t *counts = member(h, "log2_hist: ", "counts", err);
    if (!min || !counts)
        return FPK_EFORMAT;
    json_int_t lo = json_integer_value(min);
    if (!json_is_integer(min) || lo < FPK_LOG2_MIN || lo > FPK_LOG2_MIN + FPK_LOG2_BINS - 1)
        return fail(err, "log2_hist: \"min\" must be an integer from %d to %d", FPK_LOG2_MIN,
                    FPK_LOG2_MIN + FPK_LOG2_BINS - 1);
    if (!json_is_array(counts))
        return fail(err, "log2_hist: \"counts\" must be an array");
    size_t first = (size_t)(lo - FPK_LOG2_MIN), n = json_array_size(counts);
    if (n > FPK_LOG2_BINS - first)
        return fail(err, "log2_hist: %zu counts from min %d run past the last bin %d", n,
                    (int)lo, FPK_LOG2_MIN + FPK_LOG2_BINS - 1);
    for (size_t i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "counts[%zu]", i);
        int rc = read_count(json_array_get(counts, i), "log2_hist: ", key,
                            &s->log2_hist[first + i], err);
        if (rc)
            return rc;
    }
    return FPK_OK;
}

static int get_formats(json_t *o, fpk_stats *s, fpk_error *err)
{
    json_t *formats = member(o, "", "formats", err);
    if (!formats)
        return FPK_EFORMAT;
    if (!json_is_object(formats))
        return fail(err, "\"formats\" must be an object of format names");
    if (json_object_size(formats) > FPK_STATS_MAX_FORMATS)
        return fail(err, "\"formats\" has %zu formats, more than %d", json_object_size(formats),
                    FPK_STATS_MAX_FORMATS);
    const char *name;
    json_t *v;
    json_object_foreach(formats, name, v) {
        const fpk_format *f = fpk_format_lookup(name);
        if (!f)
            return fail(err, "unknown format \"%s\"", name);
        for (int j = 0; j < s->nformats; j++)
            if (fpki_same_format(f, s->formats[j]))
                return fail(err, "format \"%s\" appears twice", name);
        if (!json_is_object(v))
            return fail(err, "formats: \"%s\" must be an object of counts", name);
        char path[64];
        snprintf(path, sizeof path, "formats: %.40s: ", name);
        fpk_format_counts *k = &s->fmt[s->nformats];
        int rc = get_count(v, path, "underflow", &k->underflow, err);
        if (!rc)
            rc = get_count(v, path, "subnormal", &k->subnormal, err);
        if (!rc)
            rc = get_count(v, path, "overflow", &k->overflow, err);
        if (rc)
            return rc;
        s->formats[s->nformats++] = f;
    }
    return FPK_OK;
}

/* The checks that tie the counts together. */
static int check_consistent(const fpk_stats *s, fpk_error *err)
{
    uint64_t finite = 0; /* nonzero finite elements: the histogram's total */
    int top = 0;
    for (int i = 0; i < FPK_LOG2_BINS; i++) {
        if (__builtin_add_overflow(finite, s->log2_hist[i], &finite))
            return fail(err, "the histogram's counts overflow 64 bits");
        if (s->log2_hist[i])
            top = i + FPK_LOG2_MIN;
    }
    uint64_t sum;
    if (__builtin_add_overflow(s->zeros, s->nonfinite, &sum) ||
        __builtin_add_overflow(sum, finite, &sum) || sum != s->count)
        return fail(err, "\"count\" %" PRIu64 " is not zeros + nonfinite + the histogram's "
                    "total (%" PRIu64 " + %" PRIu64 " + %" PRIu64 ")",
                    s->count, s->zeros, s->nonfinite, finite);
    for (int j = 0; j < s->nformats; j++) {
        const fpk_format_counts *k = &s->fmt[j];
        if (k->underflow > finite || k->subnormal > finite - k->underflow ||
            k->overflow > finite - k->underflow - k->subnormal)
            return fail(err, "formats: %s counts more elements than the %" PRIu64
                        " nonzero finite ones", s->formats[j]->name, finite);
    }

    uint64_t scale, amax;
    memcpy(&scale, &s->scale, sizeof scale);
    memcpy(&amax, &s->amax, sizeof amax);
    if ((scale & FPKI_F64_SIGN) || (scale & FPKI_F64_EXP_ALL) == FPKI_F64_EXP_ALL || scale == 0)
        return fail(err, "\"scale\" must be finite and positive");
    if (amax & FPKI_F64_SIGN)
        return fail(err, "\"amax\" must not be negative");
    if ((amax == 0) != (finite == 0) || (amax && fpki_f64_floor_log2(amax) != top))
        return fail(err, "\"amax\" does not lie in the histogram's top bin (%d)", top);
    return FPK_OK;
}

static int parse(json_t *root, fpk_stats *t, fpk_error *err)
{
    if (!json_is_object(root))
        return fail(err, "the statistics must be a JSON object");
    int rc;
    if ((rc = get_round(root, &t->round, err)) ||
        (rc = get_double(root, "scale", &t->scale, err)) ||
        (rc = get_bool(root, "ftz", &t->ftz, err)) ||
        (rc = get_bool(root, "saturate", &t->saturate, err)) ||
        (rc = get_count(root, "", "count", &t->count, err)) ||
        (rc = get_count(root, "", "zeros", &t->zeros, err)) ||
        (rc = get_count(root, "", "nonfinite", &t->nonfinite, err)) ||
        (rc = get_double(root, "amax", &t->amax, err)) ||
        (rc = get_hist(root, t, err)) || (rc = get_formats(root, t, err)))
        return rc;
    return check_consistent(t, err);
}

/* *S is written only on success, and then completely (padding zeroed as
 * fpk_stats_init zeroes it). */
int fpk_stats_from_json(fpk_stats *s, const char *json, fpk_error *err)
{
    if (!json)
        return fail(err, "no text");
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return fail(err, "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    fpk_stats t;
    memset(&t, 0, sizeof t);
    int rc = parse(root, &t, err);
    json_decref(root);
    if (rc == FPK_OK) {
        t.sr_index = t.count;
        memcpy(s, &t, sizeof t);
    }
    return rc;
}
