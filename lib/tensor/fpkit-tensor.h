/* fpkit's tensor layer: dtypes, tensor dumps and their readers, block
 * scaling (OCP MX), tensor statistics and their JSON, and whole arrays
 * converted, quantised and measured at the speed of memory.  It builds on
 * the emulator of fpkit.h, which it includes: every result here is the one
 * the scalar functions there give element by element. */
#ifndef FPKIT_TENSOR_H
#define FPKIT_TENSOR_H

#include "fpkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Block scaling: OCP Microscaling Formats (MX) v1.0.  A block of values V_i
 * shares one E8M0 scale X = 2^k; element i stores P_i, V_i / X rounded once
 * into the element format, and stands for P_i * X.  The rule for k: */
typedef enum fpk_mx_rule {
    FPK_MX_FLOOR, /* OCP MX v1.0 §6.3: k = floor(log2(amax)) - emax, amax the
                     block's largest magnitude and emax the element format's;
                     amax / X lies in [2^emax, 2^(emax+1)) and may exceed max
                     finite, which saturates */
    FPK_MX_CEIL,  /* rounded up (Mishra, Stosic, Layton, "Recipes for
                     Pre-training LLMs with MXFP8", arXiv:2506.08027): the
                     least k with amax / 2^k <= max finite, so that no element
                     saturates */
} fpk_mx_rule;
#define FPK_MX_BLOCK 32 /* the block size of every OCP MX format */

/* What quantisation did to one block. */
typedef struct fpk_mx_block {
    fpk_bits scale;     /* X's E8M0 encoding, k + 127; 0xff (NaN) for a block
                           holding a NaN or an infinity */
    uint32_t saturated; /* elements with |V / X| rounded beyond max finite,
                           stored as +-max finite */
    uint32_t flushed;   /* nonzero elements stored as zero */
    uint32_t subnormal; /* elements stored as nonzero subnormals */
} fpk_mx_block;

/* The E8M0 encoding of the scale that RULE gives a block of elements of
 * ELEM whose largest magnitude is AMAX (finite, >= 0, read exactly): k + 127
 * with k clamped to [-127, 127]; AMAX = 0 (a block of zeros) gives 0x00.
 * The canonical NaN 0xff for a NaN or infinite AMAX, and for an ELEM that
 * fpk_mx_quantize refuses. */
fpk_bits fpk_mx_scale(const fpk_format *elem, fpk_mx_rule rule, float amax);

/* Quantises X[0..N-1] (float32) into MX blocks of BLOCK elements of ELEM
 * (0 means FPK_MX_BLOCK; the last block may be shorter): per block the scale
 * of fpk_mx_scale for the largest magnitude, then every element V rounded
 * once, exactly as V * 2^-k, into ELEM under C's mode and options, always
 * saturating (§6.3 clamps to the largest normal), its flags ORed into
 * C->flags (daz reads subnormal inputs as zero, amax included).  A block
 * holding a NaN or an infinity gets the NaN scale and ELEM's canonical NaN
 * (.nan) in every element, with no flag.  Outputs, each optional (NULL):
 * ENC[i], the element encodings, one byte each; SCALES[b], the E8M0
 * encodings of the N / BLOCK blocks rounded up; Y[i], P_i * X as float32
 * (exact for the OCP element formats, but for 2^128, +-inf, which
 * FPK_MX_CEIL can give a block whose AMAX is within an element's ulp of
 * FLT_MAX; rounded to nearest even for another ELEM), NaN for a NaN scale; BLOCKS[b], each block's report.  Y may be X.
 * Under FPK_SR element i rounds with sr_counter C->sr_counter + i, as in
 * fpk_array_quantize, and C->sr_counter then advances by N.  Fast where
 * the array functions are (E4M3 and E5M2 under FPK_RNE, FPK_RTZ, and
 * FPK_SR with sr_bits <= 32); the same results everywhere.
 * ELEM must be at most 8 bits wide and not E8M0: returns false, doing
 * nothing, otherwise. */
bool fpk_mx_quantize(const fpk_format *elem, fpk_mx_rule rule, size_t block, const float *x,
                     size_t n, uint8_t *enc, uint8_t *scales, float *y, fpk_mx_block *blocks,
                     fpk_ctx *c);

/* Tensor dumps (fpkit-dumps(5), fpkit-checkpoints(5)): NumPy .npy
 * (versions 1-3), safetensors, raw files, torch.save checkpoints, sharded
 * Hugging Face models (their *.index.json) and the quantised checkpoints
 * they hold.  A dump is opened once, its tensors listed, and their
 * elements read in chunks: files are mapped or read piecewise, so memory
 * does not grow with their size.  Every failure returns an error code and
 * fills the caller's fpk_error with a message naming the file and what was
 * wrong. */
typedef enum fpk_dtype {
    FPK_DTYPE_F64,
    FPK_DTYPE_F32,
    FPK_DTYPE_F16,
    FPK_DTYPE_BF16,
    FPK_DTYPE_E4M3,
    FPK_DTYPE_E5M2,
} fpk_dtype;
#define FPK_DTYPE_COUNT 6

/* "f64", "f32", "f16", "bf16", "e4m3", "e5m2"; the element format; bytes. */
const char *fpk_dtype_name(fpk_dtype t);
const fpk_format *fpk_dtype_format(fpk_dtype t);
size_t fpk_dtype_size(fpk_dtype t);
/* A dtype by name: the names above, the format names and aliases of their
 * formats ("fp16", "float32", "bfloat16", "e4m3fn"), safetensors' ("F16",
 * "BF16", "F8_E4M3") and NumPy's ("<f4", "float16").  False if unknown. */
bool fpk_dtype_lookup(const char *name, fpk_dtype *t);

#define FPK_MAX_DIMS 32

/* How a tensor's elements are stored. */
typedef enum fpk_layout {
    FPK_LAYOUT_PLAIN,   /* COUNT elements of DTYPE from byte OFFSET of FILE
                           on, one after the other */
    FPK_LAYOUT_STRIDED, /* a strided view of a storage (torch), its first
                           element at OFFSET; read in row-major order */
    FPK_LAYOUT_DECODED, /* computed from what the file stores: a quantised
                           tensor's codes and scales, or an element type
                           fpk_dtype lacks (ENCODING says which); DTYPE is
                           FPK_DTYPE_F32, which holds the values exactly */
} fpk_layout;

typedef struct fpk_tensor {
    const char *name;     /* safetensors key, torch state-dict path; for
                             .npy and raw the file name */
    fpk_dtype dtype;
    bool big_endian;      /* elements stored most significant byte first */
    bool fortran_order;   /* .npy: column-major storage */
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
    uint64_t count;       /* elements: the product of shape */
    uint64_t offset;      /* byte offset of the first element in FILE
                             (PLAIN and STRIDED) */
    fpk_layout layout;
    const char *file;     /* the file holding its data: the dump's, or a
                             shard of an index */
    const char *encoding; /* DECODED: the stored encoding, "mxfp4",
                             "nvfp4", "fp8-block", "e8m0", ...; else NULL */
} fpk_tensor;

/* A tensor a dump holds but the library does not read as values: integer,
 * boolean and complex tensors, and quantised ones in a convention it does
 * not decode. */
typedef struct fpk_skipped {
    const char *name;
    const char *dtype; /* its element type: "i64", "bool", "u8" */
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
    const char *why;   /* "not floating point", ... */
} fpk_skipped;

typedef struct fpk_dump fpk_dump;

/* How to read a raw file: its dtype, byte order and shape (ndim 0 means one
 * dimension holding the whole file). */
typedef struct fpk_raw_spec {
    fpk_dtype dtype;
    bool big_endian;
    int ndim;
    uint64_t shape[FPK_MAX_DIMS];
} fpk_raw_spec;

/* Opens PATH: read as raw when RAW is given, otherwise recognised by its
 * contents (.npy magic, a safetensors header, a torch.save zip, an
 * *.index.json of shards).  The header is validated completely before
 * FPK_OK is returned. */
int fpk_dump_open(const char *path, const fpk_raw_spec *raw, fpk_dump **d, fpk_error *err);
void fpk_dump_close(fpk_dump *d);
const char *fpk_dump_path(const fpk_dump *d);
/* "npy", "safetensors", "raw", "torch", "index" */
const char *fpk_dump_kind(const fpk_dump *d);
size_t fpk_dump_ntensors(const fpk_dump *d);
const fpk_tensor *fpk_dump_tensor(const fpk_dump *d, size_t i);
/* The tensors listed but not read (fpk_skipped), I < fpk_dump_nskipped. */
size_t fpk_dump_nskipped(const fpk_dump *d);
const fpk_skipped *fpk_dump_skipped(const fpk_dump *d, size_t i);
/* A value of safetensors' __metadata__ (an index's "metadata"), or NULL. */
const char *fpk_dump_metadata(const fpk_dump *d, const char *key);

/* Elements FIRST .. FIRST+N-1 of tensor I, in storage order, converted
 * exactly to double (every dtype fits). */
int fpk_dump_read(fpk_dump *d, size_t i, uint64_t first, size_t n, double *out, fpk_error *err);
/* The same elements as stored (fpk_dtype_size bytes each), in the host's
 * byte order: for fpk_array_* and fpk_stats_add_array, without a
 * conversion to double.  On some CPUs the kernel's copy runs much
 * slower into an OUT that lies 1 to 31 bytes past the data's place
 * within its page, as a large buffer from glibc's malloc (16 bytes into a
 * page) does for data that starts a page; an OUT that starts a page
 * avoids that for all data but that in the last 31 bytes of a page. */
int fpk_dump_read_raw(fpk_dump *d, size_t i, uint64_t first, size_t n, void *out,
                      fpk_error *err);
/* The same elements without a copy: *P := their place in a read-only
 * mapping of the file (the page cache's own pages, mapped by the first
 * call and kept until fpk_dump_close; see fpk_dump_unview), or NULL where the elements are
 * stored misaligned for their dtype or in the other byte order, or where
 * the file cannot be mapped: fpk_dump_read_raw then reads them.  Returns
 * as fpk_dump_read_raw does.  Reading a view of a file that has shrunk
 * since it was opened raises SIGBUS: a program that must report that,
 * rather than die of it, handles the signal. */
int fpk_dump_view(fpk_dump *d, size_t i, uint64_t first, size_t n, const void **p,
                  fpk_error *err);
/* Gives back the pages that hold the BYTES bytes at P, a view of D's that
 * the program is done with: they leave its resident set but stay in the
 * page cache (reading any view of them again maps them again).  A program
 * that reads a large file through views gives each part back once done,
 * so that its resident set stays as small as its reads. */
void fpk_dump_unview(fpk_dump *d, const void *p, size_t bytes);

/* Whether a quantised tensor's convention holds (fpkit-checkpoints(5),
 * fpcheck(1)): as decoded, in the other way, or the tensor cannot tell. */
typedef enum fpk_verdict {
    FPK_VERDICT_NONE,      /* not measured (no 4-bit codes, no elements) */
    FPK_VERDICT_OK,        /* the convention fits, the other way does not */
    FPK_VERDICT_WRONG,     /* the other way fits, the convention does not */
    FPK_VERDICT_UNDECIDED, /* both fit, or neither */
} fpk_verdict;

/* What fpk_dump_check measures in a block-scaled decoded tensor. */
typedef struct fpk_quant_check {
    const char *convention;        /* "gpt-oss MXFP4", "ModelOpt NVFP4", ... */
    char recipe[64];               /* its recipe (fpk_recipe_format) */
    const char *codes, *scales, *global; /* the stored tensors (NULL: none) */
    uint64_t blocks;               /* blocks the elements fill */
    uint64_t scale_entries;        /* entries the scales hold: more is padding */
    uint64_t padding_nonzero;      /* padding entries that are not zero */
    uint64_t scale_zero, scale_nan, scale_max; /* blocks whose decoding scale is
                                      zero, NaN, or the scale format's largest */
    uint64_t blocks_nonzero;       /* blocks with a nonzero code */
    uint64_t blocks_top;           /* ... whose largest code lies in the
                                      element format's top binade, as an amax
                                      scale puts it */
    /* 4-bit codes: the mean square difference of neighbours within a byte,
     * across bytes as decoded, and across bytes were the nibbles the other
     * way round; in rows whose values are not independent of their
     * neighbours' the right order makes across equal within. */
    double diff_within, diff_across, diff_swapped;
    uint64_t pairs;
    fpk_verdict nibbles;
    /* The decoded values' root mean square, and theirs were the scale
     * inverted (NVFP4's per-tensor one, else each block's); plausible
     * weights lie in [2^-20, 8]. */
    double rms, rms_inverted;
    fpk_verdict scales_order;
} fpk_quant_check;

/* Measures decoded tensor I of D as fpk_quant_check says, reading all its
 * codes and scales.  FPK_ERANGE for a tensor that is not block-scaled
 * (its encoding an element type, or not decoded). */
int fpk_dump_check(fpk_dump *d, size_t i, fpk_quant_check *q, fpk_error *err);

/* Calls VISIT for every dump file under PATH: PATH itself if it is a file,
 * else the regular files below it named *.npy, *.safetensors, *.pt,
 * *.pth, *.index.json, or *.bin that is a zip file, in sorted order, but
 * the shards an index in their directory names (read through it),
 * following symbolic links but never into a loop.  Stops at the
 * first nonzero return of VISIT and returns it; FPK_EIO with a message for
 * an unreadable directory or a loop. */
int fpk_dump_walk(const char *path, int (*visit)(const char *file, void *arg), void *arg,
                  fpk_error *err);

/* Tensor statistics (docs/DESIGN.md "Tensor statistics").  One pass over the
 * elements serves every format.  Counts are exact; statistics are additive,
 * so fpk_stats_merge of the statistics of two parts equals those of the
 * whole. */
#define FPK_STATS_MAX_FORMATS 16
#define FPK_LOG2_MIN (-1080) /* floor(log2|x|) of the smallest double is -1074 */
#define FPK_LOG2_BINS 2110   /* bins FPK_LOG2_MIN .. FPK_LOG2_MIN + FPK_LOG2_BINS - 1 */

typedef struct fpk_format_counts {
    uint64_t underflow; /* nonzero finite elements that round to zero */
    uint64_t subnormal; /* ... that round to a nonzero subnormal */
    uint64_t overflow;  /* ... that overflow (to inf or NaN, or saturated) */
} fpk_format_counts;

typedef struct fpk_stats {
    double scale;       /* S: elements are rounded as x * S */
    fpk_round round;
    bool ftz, saturate;
    int nformats;
    const fpk_format *formats[FPK_STATS_MAX_FORMATS];
    uint64_t count;     /* elements */
    uint64_t zeros;     /* exact zeros */
    uint64_t nonfinite; /* infinities and NaNs */
    double amax;        /* largest finite |x| (unscaled), 0 if none */
    uint64_t log2_hist[FPK_LOG2_BINS]; /* floor(log2|x|) of nonzero finite x, unscaled */
    fpk_format_counts fmt[FPK_STATS_MAX_FORMATS];
    uint64_t sr_index;  /* under FPK_SR, the counter the next element added
                           rounds with (not a statistic: not in the JSON) */
} fpk_stats;

/* Empty statistics for FORMATS[0..N-1] (N <= FPK_STATS_MAX_FORMATS), scale
 * S (1 for none; finite and positive) and the mode, ftz and saturate of C. */
void fpk_stats_init(fpk_stats *s, const fpk_format *const *formats, int n, double scale,
                    const fpk_ctx *c);
/* Adds X[0..N-1].  Under FPK_SR element i is rounded with seed 0 and
 * counter S->sr_index + i, in every format, and sr_index then advances by
 * N: from init on, the k-th element added has counter k, so chunking does
 * not change the result.  Statistics of a part of a larger tensor that
 * must round as the whole does set sr_index to the part's offset in it
 * before adding the part. */
void fpk_stats_add(fpk_stats *s, const double *x, size_t n);
/* INTO += FROM; false (and no change) unless both have the same formats,
 * scale and options.  INTO's sr_index advances by FROM's count, as if
 * FROM's elements had been added after INTO's. */
bool fpk_stats_merge(fpk_stats *into, const fpk_stats *from);
/* The statistics as JSON text (malloc'd; NULL if out of memory, or for
 * statistics JSON cannot hold: a format listed twice, a count of 2^63 or
 * more), and back: fpk_stats_from_json(fpk_stats_to_json(s)) == s
 * exactly, but for sr_index, which it sets to count (the statistics of
 * count elements added from init). */
char *fpk_stats_to_json(const fpk_stats *s);
int fpk_stats_from_json(fpk_stats *s, const char *json, fpk_error *err);

/* Arrays: the operations above over whole arrays, at the speed of memory.
 * Elements are in the host's byte order; an array of encodings of F holds
 * fpk_array_size(F) bytes per element, each right-aligned.  Results are
 * those of the scalar functions element by element, bits and flags.
 * Fast paths run vector code chosen at each call for the CPU it runs on
 * (fpk_array_isa), whatever the machine that built the library.  THREADS
 * is the most threads a call may use on a large array (OpenMP, when the
 * library was built with it; 1 or less: the calling thread only, with no
 * parallel region, so that small calls are cheap); results never depend
 * on it, nor on whether the caller is a thread of an OpenMP region. */

/* Bytes per encoding of F in an array: the fewest of 1, 2, 4 and 8 that
 * hold F->width bits (e4m3 1, fp16 2, tf32 4, fp64 8). */
size_t fpk_array_size(const fpk_format *f);

/* Z[i] := fpk_convert(TO, fpk_dtype_format(FROM), X[i], C) for i < N,
 * where X holds N elements of FROM.  Element i rounds with sr_counter
 * C->sr_counter + i, whatever it holds (a zero or NaN too), so results do
 * not depend on how an array is split into calls; under FPK_SR
 * C->sr_counter then advances by N.  C->flags gets the OR of every
 * element's flags.  Z must not overlap X.  Fast: float32, fp16, bf16,
 * e4m3 and e5m2 into fp16, bf16, tf32, e4m3 and e5m2 under FPK_RNE,
 * FPK_RTZ, and FPK_SR with sr_bits <= 32, with any options. */
void fpk_array_convert(const fpk_format *to, void *z, fpk_dtype from, const void *x, size_t n,
                       fpk_ctx *c, int threads);

/* Fake quantisation: Z[i] := the value of the encoding fpk_array_convert
 * gives for X[i], as a float32 (NaN: the canonical 0x7fc00000; a
 * FPK_SPECIAL_NONE format's .nan, the sign bit alone, is -0.0f), with the
 * same flags and SR counters.  F's values must all be float32 values
 * (man_bits <= 23, emax <= 127, emin - man_bits >= -149; every built-in
 * format but fp64): returns false, and does nothing, for another F.  Z
 * may be X itself when FROM is FPK_DTYPE_F32, but must not otherwise
 * overlap it. */
bool fpk_array_quantize(const fpk_format *f, float *z, fpk_dtype from, const void *x, size_t n,
                        fpk_ctx *c, int threads);

/* Squared errors, the sums behind a signal-to-quantisation-noise ratio,
 * in FPK_LANES lanes: the k-th nonzero X[i] of the call (k = 0, 1, ...
 * in increasing i; infinities and NaNs count) goes to lane
 * l = k % FPK_LANES, where, if X[i] is finite and Y[i] too, X2[l] +=
 * X[i]^2 and E2[l] += (Y[i] - X[i])^2; each lane in increasing i, in
 * double with every operation rounded (no fused multiply-add), so that
 * the sums are the same on every CPU.  (Zeros add nothing and take no
 * lane: the kernels leave them out at once, as a ReLU's gradients are
 * half zeros.)  X2 or E2 may be NULL; Y NULL counts every nonzero finite
 * X[i] and leaves E2 alone. */
#define FPK_LANES 16
void fpk_array_sqerr(const float *x, const float *y, size_t n, double *x2, double *e2);

/* fpk_array_sqerr(X, Y, N, X2, E2) for Y := fpk_array_quantize(F, X),
 * without storing Y (the fast kernels round and sum in one pass), with
 * fpk_array_quantize's flags and SR counters, on the calling thread;
 * returns false, and does nothing, where fpk_array_quantize would. */
bool fpk_array_quantize_sqerr(const fpk_format *f, const float *x, size_t n, fpk_ctx *c,
                              double *x2, double *e2);

/* fpk_array_quantize_sqerr(F[j], X, N, &C[j], j ? NULL : X2, E2 + j *
 * FPK_LANES) for every j < NF, in one pass where the kernels can (the
 * nonzero elements packed once for all the formats); E2 NULL sums no
 * errors.  Returns false, and does nothing, where fpk_array_quantize
 * would for any F[j]. */
bool fpk_array_quantize_sqerr_formats(int nf, const fpk_format *const *f, const float *x,
                                      size_t n, fpk_ctx *c, double *x2, double *e2);

/* The vector code the fast paths run on this CPU: "avx512", "avx2" (with
 * F16C) or "c" (portable C); the environment variable FPK_ISA, set to one
 * of these, caps the choice. */
const char *fpk_array_isa(void);

/* fpk_stats_add for N elements of dtype T at X: the same statistics (and
 * under FPK_SR the same counters, from S->sr_index on), in one pass over the
 * elements for every format.  Fast for every dtype but f64. */
void fpk_stats_add_array(fpk_stats *s, fpk_dtype t, const void *x, size_t n, int threads);

/* fpk_stats_add_array(S, FPK_DTYPE_F32, X, N, 1), then
 * fpk_array_quantize_sqerr_formats(NF, F, X, N, C, X2, E2), in one pass
 * where the kernels can (the nonzero elements packed once for both);
 * returns what the latter returns (false: it did nothing, but the
 * statistics were added). */
bool fpk_stats_add_sqerr(fpk_stats *s, const float *x, size_t n, int nf,
                         const fpk_format *const *f, fpk_ctx *c, double *x2, double *e2);

/* Reads elements FIRST .. FIRST+N-1 of tensor I of D once and adds them to
 * each of the distinct statistics S[0..NS-1], as fpk_stats_add_array
 * does; not one of them changes unless all goes well.  Returns FPK_OK, or
 * FPK_ERANGE, FPK_EIO or FPK_ENOMEM with ERR's message as fpk_dump_read
 * gives them. */
int fpk_stats_add_tensor(fpk_stats *s, int ns, fpk_dump *d, size_t i, uint64_t first,
                         uint64_t n, int threads, fpk_error *err);

#ifdef __cplusplus
}
#endif

#include "fpkit-recipe.h"

#endif
