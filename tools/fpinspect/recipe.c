/* fpinspect --recipe: what a scaled-quantisation recipe (fpkit-recipes(7))
 * makes of a few values, a block or a few: a verdict from the library's
 * statistics, the scales, and each element's code, value and error.  The
 * codes and scales come from fpk_recipe_quantize, through the packed
 * layouts checkpoints use (fpk_recipe_encode and _decode), and the values
 * from fpk_recipe_dequantize of what was decoded; nothing is quantised
 * here. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpinspect.h"
#include "summary.h"

/* The values of a block, as given and as float32, and how it is viewed. */
typedef struct block {
    size_t n;
    char **text;        /* each value's words, as given */
    uint32_t *bits;     /* its float32 */
    size_t inexact;     /* values float32 does not hold exactly */
    int ndim;           /* the shape the values were given */
    uint64_t shape[FPK_MAX_DIMS];
    size_t rows, cols;  /* the recipe's view: the last dimension its rows */
} block;

/* What the recipe made of it. */
typedef struct quantised {
    const fpk_recipe *r;
    size_t brows, bcols, nblocks;
    size_t h, w;        /* a block's rows and columns (but at the edges) */
    uint8_t *codes;     /* decoded from the packed layout */
    uint32_t *scales;
    float *y, *xt;      /* values; the quantiser's input (after the RHT) */
    uint8_t *packed, *packed_scales;
    size_t npacked, npacked_scales;
    uint32_t global;
    unsigned flags;
    bool own_amax;      /* a delayed recipe, its history this block's amax */
    fpk_recipe_stats st;
} quantised;

/* A float32 from its bits and back, through the library: exact. */
static float f32(uint32_t b)
{
    return (float)fpk_to_double(&fpk_fp32, b);
}

static uint32_t bits32(float f)
{
    fpk_ctx c = fpk_ctx_default();
    return (uint32_t)fpk_from_double(&fpk_fp32, (double)f, &c);
}

/* Whether S is a bit pattern in fpinspect's sense: an unsigned 0x without
 * a point or a binary exponent, or 0b. */
static bool is_pattern(const char *s)
{
    if (s[0] != '0')
        return false;
    return s[1] == 'b' || s[1] == 'B' || ((s[1] == 'x' || s[1] == 'X') && !strpbrk(s, ".pP"));
}

/* The words VALUES, each one value or several separated by commas, read
 * into B as float32 (fpk_parse, to nearest); exits with status 2 on a
 * value that is not a number. */
static void read_values(char *const *values, int nvalues, block *b)
{
    size_t cap = 0;
    for (int i = 0; i < nvalues; i++)
        cap += strlen(values[i]) / 2 + 1; /* at most this many in a word */
    b->text = cli_xcalloc(cap, sizeof *b->text);
    b->bits = cli_xcalloc(cap, sizeof *b->bits);
    for (int i = 0; i < nvalues; i++) {
        const char *w = values[i];
        for (const char *p = w;;) {
            size_t len = strcspn(p, ",");
            char *s = cli_strf("%.*s", (int)len, p);
            if (!len)
                cli_die(CLI_EXIT_USAGE, "values \"%s\": an empty value at offset %d", w,
                        (int)(p - w));
            if (is_pattern(s))
                cli_die(CLI_EXIT_USAGE, "value \"%s\" is a bit pattern; --recipe takes numbers "
                                        "(the number 0x3c00 is 0x3c00p0)", s);
            fpk_ctx c = fpk_ctx_default();
            fpk_error err;
            fpk_bits z;
            if (fpk_parse(&fpk_fp32, s, &z, &c, &err) != FPK_OK)
                cli_die(CLI_EXIT_USAGE, "value \"%s\": %s", s, err.msg);
            b->inexact += (c.flags & FPK_INEXACT) != 0;
            b->text[b->n] = s;
            b->bits[b->n++] = (uint32_t)z;
            if (!p[len])
                break;
            p += len + 1;
        }
    }
}

/* B's shape and view: SHAPE when given (its product the count of values),
 * else one row, or one block of a recipe whose blocks span several rows;
 * exits with status 2 when the values do not fill it. */
static void view_of(const char *name, const fpk_recipe *r, const fpk_raw_spec *shape,
                    bool has_shape, block *b)
{
    if (has_shape) {
        uint64_t count = 1;
        char text[512] = "";
        bool over = false;
        for (int d = 0; d < shape->ndim; d++) {
            over |= __builtin_mul_overflow(count, shape->shape[d], &count);
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%" PRIu64,
                     d ? "," : "", shape->shape[d]);
        }
        if (over)
            cli_die(CLI_EXIT_USAGE, "--shape %s holds more values than can be counted", text);
        if (count != b->n)
            cli_die(CLI_EXIT_USAGE, "--shape %s holds %" PRIu64 " value%s; %zu given", text,
                    count, cli_plural(count), b->n);
        b->ndim = shape->ndim;
        memcpy(b->shape, shape->shape, sizeof b->shape);
    } else if (r->block_rows > 1) {
        uint64_t bc = r->block_cols ? r->block_cols : b->n / r->block_rows;
        if ((uint64_t)r->block_rows * bc != b->n || !bc)
            cli_die(CLI_EXIT_USAGE,
                    "recipe %s quantises blocks of %" PRIu32 " rows: give %" PRIu32
                    "%s values for one block (%zu given), or their --shape",
                    name, r->block_rows, r->block_rows * (r->block_cols ? r->block_cols : 1),
                    r->block_cols ? "" : " times the columns", b->n);
        b->ndim = 2;
        b->shape[0] = r->block_rows;
        b->shape[1] = bc;
    } else {
        b->ndim = 1;
        b->shape[0] = b->n;
    }
    b->cols = (size_t)b->shape[b->ndim - 1];
    b->rows = b->cols ? b->n / b->cols : 0;
}

/* Quantises B under R into *Q (codes and scales through their packed
 * layouts); exits with status 2 when the recipe cannot take the view. */
static void quantise(const fpk_recipe *r, const block *b, quantised *q)
{
    q->r = r;
    q->nblocks = fpk_recipe_blocks(r, b->rows, b->cols, &q->brows, &q->bcols);
    q->h = r->block_rows ? r->block_rows : b->rows;
    q->w = r->block_cols ? r->block_cols : b->cols;
    float *x = cli_xcalloc(b->n, sizeof *x), *y = cli_xcalloc(b->n, sizeof *y);
    uint8_t *codes = cli_xcalloc(b->n, 1);
    uint32_t *scales = cli_xcalloc(q->nblocks, sizeof *scales);
    for (size_t i = 0; i < b->n; i++)
        x[i] = f32(b->bits[i]);
    q->xt = cli_xcalloc(b->n, sizeof *q->xt);
    fpk_error err;
    fpk_amax_history h;
    if (r->history) { /* no earlier tensor: as if the history held this one's amax */
        fpk_recipe_range e = {0};
        if (fpk_recipe_scan(r, x, b->rows, b->cols, &e, &err) != FPK_OK)
            cli_die(CLI_EXIT_USAGE, "%zu x %zu values: %s", b->rows, b->cols, err.msg);
        fpk_amax_history_init(&h, r->history);
        fpk_amax_history_push(&h, e.amax);
        q->own_amax = true;
    }
    fpk_quantized out = {.codes = codes, .scales = scales, .y = y, .xt = q->xt};
    fpk_recipe_stats_init(&q->st, r);
    if (fpk_recipe_quantize(r, x, b->rows, b->cols, r->history ? &h : NULL, &out, &q->st,
                            &err) != FPK_OK)
        cli_die(CLI_EXIT_USAGE, "%zu x %zu values: %s", b->rows, b->cols, err.msg);
    q->global = out.global;
    q->flags = out.flags;
    /* as a checkpoint holds them, and read back */
    q->packed = cli_xcalloc(fpk_recipe_code_bytes(r, b->n) + 1, 1);
    q->packed_scales = cli_xcalloc(fpk_recipe_scale_bytes(r, q->nblocks) + 1, 1);
    q->npacked = fpk_recipe_encode(r, codes, b->n, q->packed);
    q->npacked_scales = fpk_recipe_encode_scales(r, scales, q->nblocks, q->packed_scales);
    q->codes = cli_xcalloc(b->n, 1);
    q->scales = cli_xcalloc(q->nblocks, sizeof *q->scales);
    fpk_recipe_decode(r, q->packed, b->n, q->codes);
    fpk_recipe_decode_scales(r, q->packed_scales, q->nblocks, q->scales);
    q->y = cli_xcalloc(b->n, sizeof *q->y);
    fpk_recipe_dequantize(r, q->codes, q->scales, q->global, b->rows, b->cols, q->y);
    for (size_t i = 0; i < b->n; i++)
        if (bits32(q->y[i]) != bits32(y[i]) && !(isnan(q->y[i]) && isnan(y[i])))
            cli_die(CLI_EXIT_INTERNAL, "internal error: element %zu decodes as %.9g, not %.9g",
                    i, (double)q->y[i], (double)y[i]);
    free(x), free(y), free(codes), free(scales);
}

static void quantised_free(quantised *q)
{
    free(q->codes), free(q->scales), free(q->y), free(q->xt);
    free(q->packed), free(q->packed_scales);
}

/* A float32 for the text: shortest (every digit with --exact). */
static char *f32_text(uint32_t bits, const opts *o)
{
    return o->exact ? exact_text(&fpk_fp32, bits) : shortest_text(&fpk_fp32, bits);
}

/* The decoding scale of block K: the value its element 1 decodes as. */
static uint32_t decodes_as(const quantised *q, size_t k)
{
    fpk_ctx c = fpk_ctx_default();
    uint8_t one = (uint8_t)fpk_from_double(q->r->elem, 1.0, &c);
    return bits32(fpk_recipe_value(q->r, one, q->scales[k], q->global));
}

/* Block K's scale as text: E8M0 as 2^k. */
static char *scale_text(const quantised *q, size_t k, const opts *o)
{
    const fpk_format *s = q->r->scale;
    if (s->special == FPK_SPECIAL_E8M0 && q->scales[k] != s->nan)
        return cli_strf("2^%d", (int)q->scales[k] - s->bias);
    return s == &fpk_fp32 ? f32_text(q->scales[k], o) : exact_text(s, q->scales[k]);
}

/* The largest |X| of block K (over the quantiser's input), as float32
 * bits: NaN when one is not finite. */
static uint32_t block_amax(const block *b, const quantised *q, size_t k, size_t *r0, size_t *r1,
                           size_t *c0, size_t *c1)
{
    size_t bi = k / q->bcols, bj = k % q->bcols;
    *r0 = bi * q->h, *c0 = bj * q->w;
    *r1 = *r0 + q->h < b->rows ? *r0 + q->h : b->rows;
    *c1 = *c0 + q->w < b->cols ? *c0 + q->w : b->cols;
    float m = 0;
    for (size_t i = *r0; i < *r1; i++)
        for (size_t j = *c0; j < *c1; j++) {
            float a = fabsf(q->xt[i * b->cols + j]);
            if (!isfinite(a))
                return bits32(NAN);
            m = a > m ? a : m;
        }
    return bits32(m);
}

/* Element I's note: what happened to it. */
static const char *note(const quantised *q, size_t i)
{
    const fpk_format *e = q->r->elem;
    float x = q->xt[i];
    fpk_class k = fpk_classify(e, q->codes[i]);
    if (isnan(q->y[i]))
        return "NaN block";
    if (x != 0 && isfinite(x) && k == FPK_CLASS_ZERO)
        return "to zero";
    if ((q->codes[i] & ~e->sign_mask) == e->max_finite)
        return "max";
    if (k == FPK_CLASS_SUBNORMAL)
        return "subnormal";
    return "";
}

static bool has_global(const fpk_recipe *r)
{
    return r->rule == FPK_SCALE_NVFP4 || r->rule == FPK_SCALE_NVFP4_TORCHAO ||
           r->rule == FPK_SCALE_NVFP4_DIV;
}

/* "3", or "1,5" in a view of several rows. */
static char *index_text(const block *b, size_t i)
{
    return b->rows > 1 ? cli_strf("%zu,%zu", i / b->cols, i % b->cols) : cli_strf("%zu", i);
}

static char *block_index_text(const quantised *q, size_t k)
{
    return q->brows > 1 ? cli_strf("%zu,%zu", k / q->bcols, k % q->bcols) : cli_strf("%zu", k);
}

static char *hex_bytes(const uint8_t *p, size_t n, const char *sep)
{
    char *s = cli_xcalloc(3 * n + 1, 1);
    for (size_t i = 0; i < n; i++)
        snprintf(s + strlen(s), 4, "%s%02x", i ? sep : "", p[i]);
    return s;
}

/* The verdict: values and blocks, SQNR, and what rounding did. */
static void verdict(const char *name, const block *b, const quantised *q, FILE *out)
{
    const fpk_recipe_stats *s = &q->st;
    summary_line l = {0};
    summary_add(&l, "%s, %zu value%s in %zu block%s", name, b->n, cli_plural(b->n), q->nblocks,
                cli_plural(q->nblocks));
    if (s->x2 > 0) {
        double db = fpk_recipe_stats_sqnr(s);
        if (isinf(db))
            summary_add(&l, ": SQNR inf (exact)");
        else
            summary_add(&l, ": SQNR %.2f dB", db);
    }
    summary_add(&l, "%s %" PRIu64 " flushed to zero, %" PRIu64 " saturated, %" PRIu64
                    " subnormal", s->x2 > 0 ? "," : ":", s->flushed, s->saturated, s->subnormal);
    if (s->nan_blocks)
        summary_add(&l, "; %" PRIu64 " block%s NaN (an infinity or a NaN in it)",
                    s->nan_blocks, cli_plural(s->nan_blocks));
    if (s->scale_underflow)
        summary_add(&l, "; %" PRIu64 " scale%s underflowed", s->scale_underflow,
                    cli_plural(s->scale_underflow));
    if (s->scale_saturated)
        summary_add(&l, "; %" PRIu64 " scale%s saturated", s->scale_saturated,
                    cli_plural(s->scale_saturated));
    summary_para(out, 0, 2, "%s.", l.s);
    free(l.s);
}

/* "  LABEL       VALUE", VALUE wrapped at its spaces under itself. */
static void field(const char *label, const char *value)
{
    enum { AT = 15 };
    int col = printf("  %-12s ", label);
    for (const char *p = value; *p;) {
        size_t len = strcspn(p, " ");
        if (col > AT && col + 1 + (int)len > TABLE_WIDTH)
            col = printf("\n%*s", AT, "") - 1;
        else if (col > AT)
            col += printf(" ");
        col += (int)fwrite(p, 1, len, stdout);
        p += len;
        while (*p == ' ')
            p++;
    }
    printf("\n");
}

/* The packed bytes for the text: the first 32 of more than 64. */
static char *packed_text(const uint8_t *p, size_t n)
{
    char *hex = hex_bytes(p, n > 64 ? 32 : n, " ");
    char *s = n > 64 ? cli_strf("%s ... (%zu bytes; --json has them all)", hex, n)
                     : cli_strf("%s (%zu byte%s)", hex, n, cli_plural(n));
    free(hex);
    return s;
}

static void text_report(const char *name, const block *b, const quantised *q, const opts *o)
{
    const fpk_recipe *r = q->r;
    char spelled[256], flags[64], shape[256];
    fpk_recipe_format(r, spelled, sizeof spelled);
    flags_text(q->flags, flags, sizeof flags);
    cli_shape_text(shape, sizeof shape, b->ndim, b->shape);
    verdict(name, b, q, stdout);
    char *line = cli_strf("%s: %s elements, %s scales, rule %s, round %s%s", spelled,
                          r->elem->name, r->scale->name, fpk_scale_rule_name(r->rule),
                          fpk_round_name(r->round), r->rht ? ", after the 16-point RHT" : "");
    field("recipe", line);
    free(line);
    line = cli_strf("%s as %zu x %zu; blocks of %zu x %zu, %zu x %zu of them", shape, b->rows,
                    b->cols, q->h, q->w, q->brows, q->bcols);
    field("view", line);
    free(line);
    if (b->inexact) {
        line = cli_strf("%zu of the values rounded to float32, the recipe's input", b->inexact);
        field("input", line);
        free(line);
    }
    if (q->own_amax)
        field("history", "none: as if it held this block's amax");
    if (has_global(r)) {
        char *g = f32_text(q->global, o);
        line = cli_strf("0x%08" PRIx32 " = %s (fp32, the tensor's decoding scale)", q->global, g);
        field("global scale", line);
        free(line), free(g);
    }
    field("flags", flags);
    line = packed_text(q->packed, q->npacked);
    field("elements", line);
    free(line);
    line = packed_text(q->packed_scales, q->npacked_scales);
    field("scales", line);
    free(line);

    printf("\n");
    table *t = table_new(6, 2);
    static const char *const bh[] = {"block", "elements", "amax", "scale", "value",
                                     "decodes as"};
    for (int k = 0; k < 6; k++)
        table_column(t, k, bh[k], k < 2, false);
    for (size_t k = 0; k < q->nblocks; k++) {
        size_t r0, r1, c0, c1;
        uint32_t amax = block_amax(b, q, k, &r0, &r1, &c0, &c1);
        char *bi = block_index_text(q, k), *am = f32_text(amax, o), *sv = scale_text(q, k, o),
             *da = f32_text(decodes_as(q, k), o);
        table_add(t, "%s", bi);
        if (b->rows > 1)
            table_add(t, "%zu-%zu,%zu-%zu", r0, r1 - 1, c0, c1 - 1);
        else
            table_add(t, "%zu-%zu", c0, c1 - 1);
        table_add(t, "%s", am);
        table_add(t, "0x%0*" PRIx32, hex_digits(r->scale), q->scales[k]);
        table_add(t, "%s", sv);
        table_add(t, "%s", da);
        free(bi), free(am), free(sv), free(da);
    }
    table_print(t, stdout, TABLE_WIDTH);
    table_free(t);

    printf("\n");
    int nc = r->rht ? 10 : 9;
    t = table_new(nc, 2);
    static const char *const eh[] = {"i", "block", "input", "rht", "code", "element", "value",
                                     "error", "rel", "note"};
    for (int k = 0, c = 0; k < 10; k++) {
        if (k == 3 && !r->rht)
            continue;
        table_column(t, c++, eh[k], k < 2 || k == 9, false);
    }
    for (size_t i = 0; i < b->n; i++) {
        size_t row = i / b->cols, col = i % b->cols;
        size_t k = (row / q->h) * q->bcols + col / q->w;
        char *it = index_text(b, i), *bi = block_index_text(q, k), *in = f32_text(b->bits[i], o),
             *el = exact_text(r->elem, q->codes[i]), *v = f32_text(bits32(q->y[i]), o);
        double x = (double)q->xt[i], err = (double)q->y[i] - x;
        table_add(t, "%s", it);
        table_add(t, "%s", bi);
        table_add(t, "%s", in);
        if (r->rht) {
            char *xt = f32_text(bits32(q->xt[i]), o);
            table_add(t, "%s", xt);
            free(xt);
        }
        table_add(t, "0x%0*x", hex_digits(r->elem), q->codes[i]);
        table_add(t, "%s", el);
        table_add(t, "%s", v);
        table_add(t, "%.4g", err);
        if (x != 0 && isfinite(err)) {
            char p[24];
            table_add(t, "%s%%", cli_percent_of(p, fabs(err / x), false));
        } else {
            table_add(t, "-");
        }
        table_add(t, "%s", note(q, i));
        free(it), free(bi), free(in), free(el), free(v);
    }
    table_print(t, stdout, TABLE_WIDTH);
    table_free(t);
    printf("\n");
}

/* A float32 as JSON: {"bits", "value"} with every digit. */
static json_t *f32_json(uint32_t bits)
{
    char *v = exact_text(&fpk_fp32, bits), *h = cli_strf("0x%08" PRIx32, bits);
    json_t *j = json_pack("{s:s,s:s}", "bits", h, "value", v);
    free(v), free(h);
    return j;
}

static json_t *count_json(uint64_t n)
{
    return json_integer((json_int_t)n);
}

static json_t *json_report(const char *name, const block *b, const quantised *q)
{
    const fpk_recipe *r = q->r;
    const fpk_recipe_stats *s = &q->st;
    char spelled[256];
    fpk_recipe_format(r, spelled, sizeof spelled);
    json_t *j = json_object();
    json_object_set_new(j, "recipe", json_string(name));
    json_object_set_new(j, "spelled", json_string(spelled));
    json_object_set_new(j, "element_format", json_string(r->elem->name));
    json_object_set_new(j, "scale_format", json_string(r->scale->name));
    json_object_set_new(j, "rule", json_string(fpk_scale_rule_name(r->rule)));
    json_object_set_new(j, "round", json_string(fpk_round_name(r->round)));
    json_object_set_new(j, "rht", json_boolean(r->rht));
    json_object_set_new(j, "shape", cli_json_shape(b->ndim, b->shape));
    json_object_set_new(j, "view", json_pack("[I,I]", (json_int_t)b->rows, (json_int_t)b->cols));
    json_object_set_new(j, "block", json_pack("[I,I]", (json_int_t)q->h, (json_int_t)q->w));
    json_object_set_new(j, "grid", json_pack("[I,I]", (json_int_t)q->brows, (json_int_t)q->bcols));
    json_object_set_new(j, "history_own_amax", json_boolean(q->own_amax));
    json_object_set_new(j, "count", count_json(s->count));
    json_object_set_new(j, "sqnr_db", s->x2 > 0 ? num_json(fpk_recipe_stats_sqnr(s)) : json_null());
    json_object_set_new(j, "x2", json_real(s->x2));
    json_object_set_new(j, "e2", json_real(s->e2));
    json_object_set_new(j, "zeros", count_json(s->zeros));
    json_object_set_new(j, "nonfinite", count_json(s->nonfinite));
    json_object_set_new(j, "flushed", count_json(s->flushed));
    json_object_set_new(j, "saturated", count_json(s->saturated));
    json_object_set_new(j, "subnormal", count_json(s->subnormal));
    json_object_set_new(j, "nan_blocks", count_json(s->nan_blocks));
    json_object_set_new(j, "zero_blocks", count_json(s->zero_blocks));
    json_object_set_new(j, "scale_underflow", count_json(s->scale_underflow));
    json_object_set_new(j, "scale_saturated", count_json(s->scale_saturated));
    json_object_set_new(j, "inputs_rounded", count_json(b->inexact));
    json_object_set_new(j, "flags", flags_json(q->flags));
    json_object_set_new(j, "global", f32_json(q->global));
    char *pe = hex_bytes(q->packed, q->npacked, ""), *ps = hex_bytes(q->packed_scales,
                                                                      q->npacked_scales, "");
    json_object_set_new(j, "packed_elements", json_string(pe));
    json_object_set_new(j, "packed_scales", json_string(ps));
    free(pe), free(ps);
    json_t *blocks = json_array();
    for (size_t k = 0; k < q->nblocks; k++) {
        size_t r0, r1, c0, c1;
        uint32_t amax = block_amax(b, q, k, &r0, &r1, &c0, &c1);
        char *sh = cli_strf("0x%0*" PRIx32, hex_digits(r->scale), q->scales[k]);
        char *sv = exact_text(r->scale, q->scales[k]);
        json_t *bj = json_object();
        json_object_set_new(bj, "index", json_pack("[I,I]", (json_int_t)(k / q->bcols),
                                                   (json_int_t)(k % q->bcols)));
        json_object_set_new(bj, "rows", json_pack("[I,I]", (json_int_t)r0, (json_int_t)r1));
        json_object_set_new(bj, "cols", json_pack("[I,I]", (json_int_t)c0, (json_int_t)c1));
        json_object_set_new(bj, "amax", f32_json(amax));
        json_object_set_new(bj, "scale", json_pack("{s:s,s:s}", "bits", sh, "value", sv));
        json_object_set_new(bj, "decodes_as", f32_json(decodes_as(q, k)));
        json_array_append_new(blocks, bj);
        free(sh), free(sv);
    }
    json_object_set_new(j, "blocks", blocks);
    json_t *elems = json_array();
    for (size_t i = 0; i < b->n; i++) {
        size_t row = i / b->cols, col = i % b->cols;
        size_t k = (row / q->h) * q->bcols + col / q->w;
        double x = (double)q->xt[i], err = (double)q->y[i] - x;
        char *code = cli_strf("0x%0*x", hex_digits(r->elem), q->codes[i]);
        char *ev = exact_text(r->elem, q->codes[i]);
        json_t *ej = json_object();
        json_object_set_new(ej, "index", json_pack("[I,I]", (json_int_t)row, (json_int_t)col));
        json_object_set_new(ej, "block", json_integer((json_int_t)k));
        json_object_set_new(ej, "input", json_string(b->text[i]));
        json_object_set_new(ej, "x", f32_json(b->bits[i]));
        if (r->rht)
            json_object_set_new(ej, "rht", f32_json(bits32(q->xt[i])));
        json_object_set_new(ej, "code", json_string(code));
        json_object_set_new(ej, "element", json_string(ev));
        json_object_set_new(ej, "value", f32_json(bits32(q->y[i])));
        json_object_set_new(ej, "error", num_json(err));
        json_object_set_new(ej, "rel_error",
                            x != 0 && isfinite(err) ? json_real(fabs(err / x)) : json_null());
        json_object_set_new(ej, "note", json_string(note(q, i)));
        json_array_append_new(elems, ej);
        free(code), free(ev);
    }
    json_object_set_new(j, "elements", elems);
    return j;
}

void report_recipe(const char *name, const fpk_recipe *r, char *const *values, int nvalues,
                   const fpk_raw_spec *shape, bool has_shape, const opts *o)
{
    block b = {0};
    read_values(values, nvalues, &b);
    view_of(name, r, shape, has_shape, &b);
    quantised q = {0};
    quantise(r, &b, &q);
    if (o->json)
        print_json(json_report(name, &b, &q));
    else
        text_report(name, &b, &q, o);
    quantised_free(&q);
    for (size_t i = 0; i < b.n; i++)
        free(b.text[i]);
    free(b.text), free(b.bits);
}
