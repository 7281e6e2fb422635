/* The paired bootstrap's inner loops. Two ways to a resample's sums:
 *
 * - resample_sums (any metric's rows): draw an item, count its type; then each
 *   resample's sums are its type counts times the types' rows.
 * - label_counts (precision/recall/F, MCC, balanced accuracy): draw an item, add 1 to
 *   its one or three label counts; prf_deltas then combines the counts
 *   (label_deltas: both, for a whole bootstrap in one call).
 *
 * Both draw digit streams (below) of the generator's words.
 *
 * resample_sums(capsule, pcg, lookup, cols, vals, given_types, given, out)
 *
 *   capsule      numpy's bit generator (`Generator.bit_generator.capsule`); the
 *                caller holds `bit_generator.lock`.
 *   pcg          None, or the bytes a PCG64's state (state, inc) should hold in
 *                memory: when it does, the words are stepped here (the same
 *                words; see words_t).
 *   lookup       int32 (high,): the type of each item that can be drawn; draws are
 *                uniform on [0, high), high < 2**32.
 *   cols, vals   int32 and float64 (T, K): type t's row is vals[t] at columns
 *                cols[t] (its nonzeros, padded with zeros).
 *   given_types  int32 (H,): types whose counts are given.
 *   given        int64 (R, H + 1): resample r's counts of given_types, then how
 *                many items it draws.
 *   out          float64 (R, W): row r becomes the sum of its types' rows.
 *
 * The draws (exact, uniform and independent): each 64-bit word u of the generator
 * gives k digits, k the largest (<= 16) with N = high**k <= 2**58. The word is
 * accepted when (u * N) mod 2**64 >= 2**64 mod N (Lemire's multiply-shift with
 * rejection; a word is rejected with probability < N / 2**64 <= 1/64), and then
 * v = floor(u * N / 2**64) is uniform on [0, N): its k base-`high` digits, most
 * significant first, are the draws. They are computed by k multiplications,
 * x <- x * high, the digit being the high word of each product. The digit stream
 * runs on across resamples; digits left over at the end of a call are dropped.
 * No numpy headers are needed: only the bit generator's struct and PCG64's state,
 * both stable since numpy 1.17 (and PCG64's checked against its Python state at
 * each call).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* The hottest loops compiled again for AVX2 and AVX-512, chosen at load (GCC's
 * function multiversioning, through glibc's ifunc: x86-64 Linux), with
 * floating-point contraction off so that every variant computes the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && \
    defined(__GLIBC__)
#define CLONES                                                                            \
    __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))
#define KERNEL_AVX512 /* macro_delta_avx512 */
#include <immintrin.h>
static int has_avx512; /* set when the module loads */
#else
#define CLONES
#endif

typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} bitgen_t;

static int get_buffer(PyObject *obj, Py_buffer *view, const char *name, char kind,
                      Py_ssize_t itemsize, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    int ok = view->itemsize == itemsize &&
             (kind == 'f' ? *f == 'd' : (*f == 'i' || *f == 'l' || *f == 'q'));
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous %s%zd array", name,
                     kind == 'f' ? "float" : "int", itemsize * 8);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static inline uint64_t mul_high(uint64_t a, uint64_t b, uint64_t *low) {
    __uint128_t m = (__uint128_t)a * b;
    *low = (uint64_t)m;
    return (uint64_t)(m >> 64);
}

/* numpy's PCG64 (the default bit generator) stepped here, inline: the same words
 * as its next_uint64, without a call through a pointer per word. Its state is the
 * struct below (numpy's pcg64_state points to it first); the caller passes the
 * state it expects (`pcg_expected`), and the words are stepped here only if the
 * memory holds exactly that, else they come from next_uint64 as for any other
 * bit generator.
 *
 * The state is held one step ahead (`ahead`: the state whose output is the next
 * word), so a word's output and digits start at once, beside the step to the
 * state after it, instead of waiting for that step's 128-bit multiplication (the
 * label path at 1,000 classes 0.133 -> 0.123 s). (Stepping 2, 3, 4 or 8 interleaved
 * lanes by a**L, the same words, was slower: a harness of the label loop 0.087 ->
 * 0.094-0.163 s. The integer multiplier, seven products a word with four digits,
 * sets the pace, not the step's latency; see bench/README.md.) */
#define PCG64_MULT (((__uint128_t)UINT64_C(2549297995355413924) << 64) | UINT64_C(4865540595714422341))

/* Where the 64-bit words come from: the bit generator's next_uint64, or numpy's
 * PCG64 stepped here. */
typedef struct {
    bitgen_t *bg;
    unsigned char *pcg; /* numpy's PCG64 state when stepped here, else NULL */
    __uint128_t ahead, mult, inc; /* mult: PCG64_MULT (from a register, not rebuilt each step) */
} words_t;

static int words_init(words_t *w, bitgen_t *bg, PyObject *pcg_expected) {
    w->bg = bg;
    w->pcg = NULL;
    if (pcg_expected == Py_None) return 0;
    char *want;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(pcg_expected, &want, &size) < 0) return -1;
    unsigned char *mem = *(unsigned char **)bg->state;
    if (size == 2 * sizeof(__uint128_t) && mem != NULL && memcmp(mem, want, size) == 0) {
        __uint128_t state;
        w->pcg = mem;
        memcpy(&state, mem, sizeof(__uint128_t));
        memcpy(&w->inc, mem + sizeof(__uint128_t), sizeof(__uint128_t));
        w->mult = PCG64_MULT;
        w->ahead = state * PCG64_MULT + w->inc;
    }
    return 0;
}

/* Numpy's PCG64 left at its last word taken: the state one step before `ahead`,
 * (ahead - inc) / a (a is odd, so invertible mod 2**128). */
static void words_done(words_t *w) {
    if (!w->pcg) return;
    __uint128_t inverse = PCG64_MULT; /* right in 3 bits; each Newton step doubles them */
    for (int i = 0; i < 6; i++) inverse *= 2 - PCG64_MULT * inverse;
    const __uint128_t state = (w->ahead - w->inc) * inverse;
    memcpy(w->pcg, &state, sizeof(__uint128_t));
}

/* Numpy's PCG64 taken up again where its memory now holds it (after numpy drew
 * from it between two words_done and words_resume). */
static void words_resume(words_t *w) {
    if (!w->pcg) return;
    __uint128_t state;
    memcpy(&state, w->pcg, sizeof(__uint128_t));
    w->ahead = state * PCG64_MULT + w->inc;
}

/* One word (PCG64's XSL-RR output of the state it steps to): `inline_pcg` is a
 * constant at each use, so the loops that call this are compiled twice, with the
 * PCG64 state in registers in one. */
static inline __attribute__((always_inline)) uint64_t next_word(words_t *w,
                                                                const int inline_pcg) {
    if (inline_pcg) {
        const __uint128_t s = w->ahead;
        const uint64_t v = (uint64_t)(s >> 64) ^ (uint64_t)s;
        const unsigned rot = (unsigned)(s >> 122);
        w->ahead = s * w->mult + w->inc;
        return (v >> rot) | (v << ((-rot) & 63));
    }
    return w->bg->next_uint64(w->bg->state);
}

/* A digit stream of the header comment: k base-`high` digits a 64-bit word. */
typedef struct {
    uint64_t h, threshold;
    int k, left;
    uint32_t digit[16];
} digits_t;

static void digits_init(digits_t *ds, Py_ssize_t high) {
    const uint64_t h = high ? (uint64_t)high : 1;
    uint64_t big = h;
    int k = 1;
    while (k < 16 && big <= (UINT64_C(1) << 58) / h) {
        big *= h;
        k++;
    }
    ds->h = h;
    ds->k = k;
    ds->left = 0;
    ds->threshold = (0 - big) % big; /* 2**64 mod N */
}

/* The next accepted word's k digits into d (a rejected word's are overwritten). */
static inline __attribute__((always_inline)) void word_digits(words_t *w, const digits_t *ds,
                                                              uint32_t *d, const int inline_pcg) {
    const int k = ds->k;
    const uint64_t h = ds->h;
    uint64_t x;
    do {
        x = next_word(w, inline_pcg);
        for (int q = 0; q < k; q++) d[q] = (uint32_t)mul_high(x, h, &x);
    } while (x < ds->threshold); /* x is now (u * N) mod 2**64 */
}

/* The stream's next `count` digits into out: whole words straight into place. */
static inline __attribute__((always_inline)) void fill_digits(words_t *w, digits_t *ds,
                                                              uint32_t *restrict out, int count,
                                                              const int inline_pcg) {
    int i = 0;
    while (i < count && ds->left) out[i++] = ds->digit[ds->k - ds->left--];
    const int k = ds->k;
    for (; count - i >= k; i += k) word_digits(w, ds, out + i, inline_pcg);
    if (i < count) { /* a word's first digits; the rest are left for the next call */
        word_digits(w, ds, ds->digit, inline_pcg);
        ds->left = k;
        while (i < count) out[i++] = ds->digit[k - ds->left--];
    }
}

enum { DRAW_BLOCK = 256 };

/* `count` draws of a stream, a block at a time, each counted by ADD. (Alternate
 * draws counted in a second table, so that two draws of one column in a row
 * would not wait for each other, gain nothing since the digits of a whole word
 * are counted from registers: 1,000 classes 0.164 -> 0.148 s without it.)
 * ADD(t, d) counts digit d in table t; `drawn` is the caller's block of
 * DRAW_BLOCK digits. */
#define COUNT_DRAWS(w, ds, count, inline_pcg, ADD, t)                                     \
    for (int64_t j_ = (count); j_ > 0; j_ -= DRAW_BLOCK) {                                \
        const int m_ = j_ < DRAW_BLOCK ? (int)j_ : DRAW_BLOCK;                            \
        fill_digits((w), (ds), drawn, m_, (inline_pcg));                                  \
        for (int i_ = 0; i_ < m_; i_++) ADD(t, drawn[i_]);                                \
    }

/* As COUNT_DRAWS, for a stream of K digits a word, K a constant: each whole
 * word's digits are counted straight from registers, so a draw costs no store
 * of its digit (a store fewer a draw: 100 classes 0.150 -> 0.117 s). The
 * same digits in the same order as COUNT_DRAWS (a word's leftover digits first;
 * a last partial word's rest kept for the stream's next draws): the same counts. */
#define COUNT_WORDS_K(w, ds, count, inline_pcg, ADD, t, K)                                \
    do {                                                                                  \
        int64_t j_ = (count);                                                             \
        for (; j_ > 0 && (ds)->left; j_--) ADD(t, (ds)->digit[K - (ds)->left--]);         \
        const uint64_t h_ = (ds)->h, threshold_ = (ds)->threshold;                        \
        for (; j_ >= K; j_ -= K) {                                                        \
            uint64_t x_;                                                                  \
            uint32_t d_[K];                                                               \
            do { /* word_digits, unrolled */                                              \
                x_ = next_word((w), (inline_pcg));                                        \
                for (int q_ = 0; q_ < K; q_++) d_[q_] = (uint32_t)mul_high(x_, h_, &x_);  \
            } while (__builtin_expect(x_ < threshold_, 0));                               \
            for (int q_ = 0; q_ < K; q_++) ADD(t, d_[q_]);                                \
        }                                                                                 \
        if (j_ > 0) {                                                                     \
            word_digits((w), (ds), (ds)->digit, (inline_pcg));                            \
            (ds)->left = K;                                                               \
            for (; j_ > 0; j_--) ADD(t, (ds)->digit[K - (ds)->left--]);                   \
        }                                                                                 \
    } while (0)

/* COUNT_WORDS_K for a stream of four digits a word (3,105 to 23,170 items: the
 * one- and two-count streams from ~100 classes on), else COUNT_DRAWS. (Also
 * dispatching 5 and 6 digits a word in every stream made the whole kernel slower;
 * the three-count stream takes six a word itself.) */
#define COUNT_WORDS(w, ds, count, inline_pcg, ADD, t)                                     \
    if ((ds)->k == 4) {                                                                   \
        COUNT_WORDS_K(w, ds, count, inline_pcg, ADD, t, 4);                               \
    } else {                                                                              \
        COUNT_DRAWS(w, ds, count, inline_pcg, ADD, t);                                    \
    }

#define ADD_TYPE(t, d) ((t)[lookup[d]]++)

/* resample_sums' loop over resamples (see there). */
static inline __attribute__((always_inline)) void sums_loop(
    words_t *source, const int inline_pcg, digits_t *ds, Py_ssize_t n_res, Py_ssize_t n_given,
    const int64_t *restrict given, const int32_t *restrict given_types,
    const int32_t *restrict lookup, int32_t *restrict count, Py_ssize_t n_types,
    const int32_t *restrict cols, const double *restrict vals, Py_ssize_t kr, double *restrict out,
    Py_ssize_t width) {
    words_t w = *source; /* a local copy: the generator's state stays in registers */
    uint32_t drawn[DRAW_BLOCK];
    for (Py_ssize_t r = 0; r < n_res; r++) {
        /* The draws are counted by type, in a table that stays in the cache: one
         * increment a draw, then each type's row once, times its count. */
        const int64_t *restrict g = given + r * (n_given + 1);
        for (Py_ssize_t i = 0; i < n_given; i++) count[given_types[i]] += (int32_t)g[i];
        COUNT_WORDS(&w, ds, g[n_given], inline_pcg, ADD_TYPE, count);
        double *restrict row = out + r * width;
        for (Py_ssize_t i = 0; i < width; i++) row[i] = 0.0;
        for (Py_ssize_t t = 0; t < n_types; t++) {
            const double c = count[t];
            count[t] = 0;
            for (Py_ssize_t q = 0; q < kr; q++) row[cols[t * kr + q]] += c * vals[t * kr + q];
        }
    }
    *source = w;
}

static PyObject *resample_sums(PyObject *self, PyObject *args) {
    PyObject *capsule, *pcg, *objs[6];
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &capsule, &pcg, &objs[0], &objs[1], &objs[2],
                          &objs[3], &objs[4], &objs[5]))
        return NULL;
    bitgen_t *bg = (bitgen_t *)PyCapsule_GetPointer(capsule, "BitGenerator");
    if (bg == NULL) return NULL;
    static const char *names[6] = {"lookup", "cols", "vals", "given_types", "given", "out"};
    static const char kinds[6] = {'i', 'i', 'f', 'i', 'i', 'f'};
    static const Py_ssize_t sizes[6] = {4, 4, 8, 4, 8, 8};
    Py_buffer v[6];
    int got = 0;
    PyObject *result = NULL;
    int32_t *count = NULL;
    for (; got < 6; got++)
        if (get_buffer(objs[got], &v[got], names[got], kinds[got], sizes[got], got == 5) < 0)
            goto done;
    const int32_t *restrict lookup = v[0].buf, *restrict cols = v[1].buf;
    const int32_t *restrict given_types = v[3].buf;
    const double *restrict vals = v[2].buf;
    const int64_t *restrict given = v[4].buf;
    double *restrict out = v[5].buf;
    const Py_ssize_t high = v[0].len / 4, n_given = v[3].len / 4;
    const Py_ssize_t n_res = v[4].len / 8 / (n_given + 1);
    const Py_ssize_t n_types = v[1].ndim == 2 ? v[1].shape[0] : -1;
    const Py_ssize_t k_row = n_types > 0 ? v[1].shape[1] : 1;
    const Py_ssize_t width = v[5].ndim == 2 ? v[5].shape[1] : -1;
    /* Check every index once, so the loop below cannot leave its arrays. */
    if (n_types < 1 || k_row < 1 || v[2].len != v[1].len * 2 || width < 0 ||
        v[5].shape[0] != n_res || v[4].len / 8 != n_res * (n_given + 1) ||
        high > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "resample_sums: inconsistent array sizes");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_types * k_row; i++)
        if (cols[i] < 0 || cols[i] >= width) goto bad;
    for (Py_ssize_t i = 0; i < high; i++)
        if (lookup[i] < 0 || lookup[i] >= n_types) goto bad;
    for (Py_ssize_t i = 0; i < n_given; i++)
        if (given_types[i] < 0 || given_types[i] >= n_types) goto bad;
    for (Py_ssize_t r = 0; r < n_res; r++)
        for (Py_ssize_t i = 0; i <= n_given; i++) {
            const int64_t c = given[r * (n_given + 1) + i];
            if (c < 0 || c > INT32_MAX || (i == n_given && c > 0 && high == 0)) goto bad;
        }
    count = PyMem_Calloc(n_types, sizeof(int32_t));
    if (count == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    words_t w;
    if (words_init(&w, bg, pcg) < 0) goto done;
    digits_t ds;
    digits_init(&ds, high);
    Py_BEGIN_ALLOW_THREADS
    if (w.pcg)
        sums_loop(&w, 1, &ds, n_res, n_given, given, given_types, lookup, count, n_types, cols,
                  vals, k_row, out, width);
    else
        sums_loop(&w, 0, &ds, n_res, n_given, given, given_types, lookup, count, n_types, cols,
                  vals, k_row, out, width);
    words_done(&w);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
    goto done;
bad:
    PyErr_SetString(PyExc_ValueError, "resample_sums: an index or count is out of range");
done:
    PyMem_Free(count);
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

/* A drawn item's counts. One-count items (both systems right) add 1 at their
 * column, two-count items (one system right) at their two; three-count items at
 * three columns packed in 21 bits each (or, with 2**21 columns or more, read from
 * the (m, 3) table). Below 2**16 columns the one- and two-count tables are
 * narrowed (ADD_ONE16, ADD_TWO16: 16-bit columns, half the cache; with each
 * label_loop its own function, 100 classes 0.113 -> 0.105 s). */
#define ADD_ONE(t, d) ((t)[one[d]]++)
#define ADD_ONE16(t, d) ((t)[one16[d]]++)
#define ADD_TWO16(t, d)                                                                   \
    do {                                                                                  \
        const uint32_t p_ = two16[d];                                                     \
        (t)[p_ & 0xffff]++;                                                               \
        (t)[p_ >> 16]++;                                                                  \
    } while (0)
#define ADD_TWO(t, d)                                                                     \
    do {                                                                                  \
        uint64_t p_; /* both columns in one load (in either order: both get 1) */        \
        memcpy(&p_, two + 2 * (Py_ssize_t)(d), sizeof p_);                                \
        (t)[(uint32_t)p_]++;                                                              \
        (t)[p_ >> 32]++;                                                                  \
    } while (0)
#define ADD_PACKED(t, d)                                                                  \
    do {                                                                                  \
        const uint64_t p_ = packed[d];                                                    \
        (t)[p_ & 0x1fffff]++;                                                             \
        (t)[(p_ >> 21) & 0x1fffff]++;                                                     \
        (t)[p_ >> 42]++;                                                                  \
    } while (0)
#define ADD_WIDE(t, d)                                                                    \
    do {                                                                                  \
        const int32_t *s_ = three + 3 * (Py_ssize_t)(d);                                  \
        (t)[s_[0]]++;                                                                     \
        (t)[s_[1]]++;                                                                     \
        (t)[s_[2]]++;                                                                     \
    } while (0)

/* label_counts' loop over resamples (see there). */
static inline __attribute__((always_inline)) void label_loop(
    words_t *source, const int inline_pcg, digits_t *ds, Py_ssize_t n_res, Py_ssize_t n_given,
    const int64_t *restrict given, const int32_t *restrict given_slots, int32_t *restrict out,
    Py_ssize_t width, const int32_t *restrict one, const int32_t *restrict two,
    const uint64_t *restrict packed, const int32_t *restrict three, const int narrow,
    const uint16_t *restrict one16, const uint32_t *restrict two16, const int clear) {
    words_t w = *source; /* a local copy: the generator's state stays in registers */
    uint32_t drawn[DRAW_BLOCK];
    for (Py_ssize_t r = 0; r < n_res; r++) {
        const int64_t *restrict g = given + r * (n_given + 3);
        int32_t *restrict row = out + r * width;
        if (clear) memset(row, 0, width * sizeof(int32_t));
        for (Py_ssize_t i = 0; i < n_given; i++) {
            const int32_t c = (int32_t)g[i];
            const int32_t *s = given_slots + 3 * i;
            row[s[0]] += c;
            row[s[1]] += c;
            row[s[2]] += c;
        }
        if (narrow) { /* a constant at each use, as inline_pcg */
            COUNT_WORDS(&w, &ds[0], g[n_given], inline_pcg, ADD_ONE16, row);
            COUNT_WORDS(&w, &ds[1], g[n_given + 1], inline_pcg, ADD_TWO16, row);
        } else {
            COUNT_WORDS(&w, &ds[0], g[n_given], inline_pcg, ADD_ONE, row);
            COUNT_WORDS(&w, &ds[1], g[n_given + 1], inline_pcg, ADD_TWO, row);
        }
        if (packed) {
            if (ds[2].k == 6) { /* 313 to 812 items (~400 from 20 to 1,000 classes): 2-3 % */
                COUNT_WORDS_K(&w, &ds[2], g[n_given + 2], inline_pcg, ADD_PACKED, row, 6);
            } else {
                COUNT_DRAWS(&w, &ds[2], g[n_given + 2], inline_pcg, ADD_PACKED, row);
            }
        } else {
            COUNT_WORDS(&w, &ds[2], g[n_given + 2], inline_pcg, ADD_WIDE, row);
        }
    }
    *source = w;
}

/* label_loop for each (inline_pcg, narrow), each its own function: inlined into
 * one, the four made the loops 1.2-1.7x slower. */
#define LABEL_LOOP(name, inline_pcg, narrow)                                              \
    static __attribute__((noinline)) CLONES void name(                                    \
        words_t *source, digits_t *ds, Py_ssize_t n_res, Py_ssize_t n_given,              \
        const int64_t *given, const int32_t *given_slots, int32_t *out, Py_ssize_t width, \
        const int32_t *one, const int32_t *two, const uint64_t *packed,                   \
        const int32_t *three, const uint16_t *one16, const uint32_t *two16, int clear) { \
        label_loop(source, inline_pcg, ds, n_res, n_given, given, given_slots, out, width,\
                   one, two, packed, three, narrow, one16, two16, clear);                \
    }
LABEL_LOOP(label_loop_00, 0, 0)
LABEL_LOOP(label_loop_01, 0, 1)
LABEL_LOOP(label_loop_10, 1, 0)
LABEL_LOOP(label_loop_11, 1, 1)
#undef LABEL_LOOP

/* label_counts(capsule, pcg, one, two, three, given_slots, given, out)
 *
 * Each resample's counts, accumulated as its items are drawn: no type rows, O(n)
 * a resample whatever the number of classes.
 *
 *   capsule, pcg  the bit generator (as for resample_sums)
 *   one          int32 (m1,): the column of `out` each one-count item adds 1 to.
 *   two          int32 (m2, 2): the 2 columns each two-count item adds 1 to.
 *   three        int32 (m3, 3): the 3 columns each three-count item adds 1 to.
 *   given_slots  int32 (H, 3): the 3 columns of each type whose counts are given.
 *   given        int64 (R, H + 3): resample r's counts of those types, then how
 *                many one-, two- and three-count items it draws.
 *   out          int32 (R, W): row r becomes its counts (its given types' counts at
 *                their columns, plus 1 per drawn item at each of its columns).
 *
 * Three digit streams of the same words: resample r draws its one-count items
 * (uniform on [0, m1), base-m1 digits), then its two-count items (on [0, m2)),
 * then its three-count items (on [0, m3)); each stream keeps the digits left in
 * its last word for its next draws, and takes the generator's next word when it
 * needs one. A label item adds to one, two or three counts (see label_slots in
 * resampling.py).
 */

/* label_counts' tables (one, two, three, given_slots), checked against the width
 * of a row of counts and narrowed once. */
typedef struct {
    Py_buffer v[4];
    int got;
    Py_ssize_t m[3], n_given, width;
    int narrow;
    uint64_t *packed;
    uint16_t *one16;
    uint32_t *two16;
} tables_t;

static const char *table_names[4] = {"one", "two", "three", "given_slots"};

static void tables_free(tables_t *t) {
    PyMem_Free(t->packed);
    PyMem_Free(t->one16);
    PyMem_Free(t->two16);
    while (t->got-- > 0) PyBuffer_Release(&t->v[t->got]);
}

/* 0, or -1 with an exception set (`t` is to be freed either way). */
static int tables_init(tables_t *t, PyObject **objs, Py_ssize_t width, const char *fn) {
    static const int ndims[4] = {1, 2, 2, 2}, columns[4] = {1, 2, 3, 3};
    memset(t, 0, sizeof *t);
    for (; t->got < 4; t->got++)
        if (get_buffer(objs[t->got], &t->v[t->got], table_names[t->got], 'i', 4, 0) < 0)
            return -1;
    for (int i = 0; i < 4; i++)
        if (t->v[i].ndim != ndims[i] || (columns[i] > 1 && t->v[i].shape[1] != columns[i])) {
            PyErr_Format(PyExc_ValueError, "%s: inconsistent array sizes (%s)", fn,
                         table_names[i]);
            return -1;
        }
    for (int k = 0; k < 3; k++) t->m[k] = t->v[k].shape[0];
    t->n_given = t->v[3].shape[0];
    t->width = width;
    if (t->m[0] > (Py_ssize_t)UINT32_MAX || t->m[1] > (Py_ssize_t)UINT32_MAX ||
        t->m[2] > (Py_ssize_t)UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: inconsistent array sizes", fn);
        return -1;
    }
    for (int k = 0; k < 4; k++) { /* every column in [0, width): no early exit, so it vectorises */
        const int32_t *table = t->v[k].buf;
        const Py_ssize_t size = k < 3 ? (k + 1) * t->m[k] : 3 * t->n_given;
        const int32_t last = width - 1 > INT32_MAX ? INT32_MAX : (int32_t)(width - 1);
        int outside = 0;
        for (Py_ssize_t i = 0; i < size; i++) outside |= (table[i] < 0) | (table[i] > last);
        if (outside) {
            PyErr_Format(PyExc_ValueError, "%s: a slot or count is out of range", fn);
            return -1;
        }
    }
    const int32_t *one = t->v[0].buf, *two = t->v[1].buf, *three = t->v[2].buf;
    const Py_ssize_t *m = t->m;
    t->narrow = width <= (1 << 16);
    if (width < (1 << 21) && m[2]) t->packed = PyMem_Malloc(m[2] * sizeof(uint64_t));
    if (t->narrow) {
        t->one16 = PyMem_Malloc((m[0] ? m[0] : 1) * sizeof(uint16_t));
        t->two16 = PyMem_Malloc((m[1] ? m[1] : 1) * sizeof(uint32_t));
    }
    if ((width < (1 << 21) && m[2] && t->packed == NULL) ||
        (t->narrow && (!t->one16 || !t->two16))) {
        PyErr_NoMemory();
        return -1;
    }
    if (t->narrow) { /* loops without a test in their condition, so they vectorise */
        for (Py_ssize_t i = 0; i < m[0]; i++) t->one16[i] = (uint16_t)one[i];
        for (Py_ssize_t i = 0; i < m[1]; i++)
            t->two16[i] = (uint32_t)two[2 * i] | (uint32_t)two[2 * i + 1] << 16;
    }
    if (t->packed)
        for (Py_ssize_t i = 0; i < m[2]; i++)
            t->packed[i] = (uint64_t)three[3 * i] | (uint64_t)three[3 * i + 1] << 21 |
                           (uint64_t)three[3 * i + 2] << 42;
    return 0;
}

/* Whether `given` (n_res rows of H + 3 counts) is in range: no negative count, no
 * draw from an empty table, no row's total past int32 (so no count can overflow). */
static int given_in_range(const int64_t *given, Py_ssize_t n_res, const tables_t *t) {
    const Py_ssize_t n_given = t->n_given;
    for (Py_ssize_t r = 0; r < n_res; r++) {
        int64_t total = 0;
        for (Py_ssize_t i = 0; i < n_given + 3; i++) {
            const int64_t c = given[r * (n_given + 3) + i];
            if (c < 0 || (i >= n_given && c > 0 && t->m[i - n_given] == 0)) return 0;
            total += c;
            if (total > INT32_MAX) return 0;
        }
    }
    return 1;
}

/* The counts of n_res resamples into out (n_res rows of t->width), the digit
 * streams `ds` running on (without the GIL); `clear`: zero each row first (else
 * the rows are zero already). */
static void count_rows(words_t *w, digits_t *ds, Py_ssize_t n_res, const int64_t *given,
                       int32_t *out, const tables_t *t, int clear) {
    (w->pcg ? (t->narrow ? label_loop_11 : label_loop_10)
            : (t->narrow ? label_loop_01 : label_loop_00))(
        w, ds, n_res, t->n_given, given, t->v[3].buf, out, t->width, t->v[0].buf, t->v[1].buf,
        t->packed, t->v[2].buf, t->one16, t->two16, clear);
}

static PyObject *label_counts(PyObject *self, PyObject *args) {
    PyObject *capsule, *pcg, *objs[6];
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &capsule, &pcg, &objs[0], &objs[1], &objs[2],
                          &objs[3], &objs[4], &objs[5]))
        return NULL;
    bitgen_t *bg = (bitgen_t *)PyCapsule_GetPointer(capsule, "BitGenerator");
    if (bg == NULL) return NULL;
    tables_t t = {0};
    Py_buffer v[2];
    int got = 0;
    PyObject *result = NULL;
    if (get_buffer(objs[4], &v[0], "given", 'i', 8, 0) < 0) goto done;
    got = 1;
    if (get_buffer(objs[5], &v[1], "out", 'i', 4, 1) < 0) goto done;
    got = 2;
    if (v[0].ndim != 2 || v[1].ndim != 2) {
        PyErr_Format(PyExc_ValueError, "label_counts: inconsistent array sizes (%s)",
                     v[0].ndim != 2 ? "given" : "out");
        goto done;
    }
    if (tables_init(&t, objs, v[1].shape[1], "label_counts") < 0) goto done;
    const int64_t *restrict given = v[0].buf;
    const Py_ssize_t n_res = v[1].shape[0];
    if (v[0].shape[0] != n_res || v[0].shape[1] != t.n_given + 3) {
        PyErr_SetString(PyExc_ValueError, "label_counts: inconsistent array sizes");
        goto done;
    }
    if (!given_in_range(given, n_res, &t)) {
        PyErr_SetString(PyExc_ValueError, "label_counts: a slot or count is out of range");
        goto done;
    }
    words_t w;
    if (words_init(&w, bg, pcg) < 0) goto done;
    digits_t ds[3];
    for (int k = 0; k < 3; k++) digits_init(&ds[k], t.m[k]);
    Py_BEGIN_ALLOW_THREADS
    count_rows(&w, ds, n_res, given, v[1].buf, &t, 1);
    words_done(&w);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    tables_free(&t);
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

/* One class's (or the micro sums') precision, recall or F-beta from TP, FP and FN:
 * which 0 precision, 1 recall, 2 F-beta (b2 = beta**2); 0 where the denominator,
 * also returned, is 0. prf_deltas averages them macro (over the classes present:
 * den > 0 for F, any count otherwise), micro, or weighted by gold count tp + fn. */
static inline double prf_class(double t, double p, double f, int which, double b2,
                               double *den_out) {
    const double num = which == 2 ? t * (1 + b2) : t;
    const double den = which == 0 ? t + p : which == 1 ? t + f : num + p + b2 * f;
    *den_out = den;
    return den > 0 ? num / den : 0.0;
}

/* A macro average of one system's classes: `which` is a constant at each use, so
 * the loop has no branch and gcc vectorises it (the division most of all); the
 * values are summed in four interleaved partial sums. */
static inline __attribute__((always_inline)) double macro_average(
    const int32_t *restrict both, const int32_t *restrict mine, const int32_t *restrict other,
    const int32_t *restrict neither, const int32_t *restrict fp, Py_ssize_t c, const int which,
    double b2, double *restrict value, double *restrict present) {
    for (Py_ssize_t i = 0; i < c; i++) {
        const double t = both[i] + mine[i], p = fp[i], f = other[i] + neither[i];
        const double num = which == 2 ? t * (1 + b2) : t;
        const double den = which == 0 ? t + p : which == 1 ? t + f : num + p + b2 * f;
        const double defined = (double)(den > 0); /* if not, num is 0 too: the value is 0 */
        value[i] = num / (den + (1.0 - defined));
        present[i] = which == 2 ? defined : (double)(t + p + f > 0);
    }
    /* the four partial sums as two vectors of two: lane q adds value[i + q] in
     * order, as the loop over q it replaces (which gcc vectorised into lane
     * extractions and scalar adds) */
    typedef double four_t __attribute__((vector_size(4 * sizeof(double)), aligned(8), may_alias));
    four_t sum4 = {0, 0, 0, 0}, count4 = {0, 0, 0, 0};
    Py_ssize_t i = 0;
    for (; i + 4 <= c; i += 4) {
        sum4 += *(const four_t *)(value + i);
        count4 += *(const four_t *)(present + i);
    }
    double sum[4] = {sum4[0], sum4[1], sum4[2], sum4[3]};
    double count[4] = {count4[0], count4[1], count4[2], count4[3]};
    for (; i < c; i++) {
        sum[0] += value[i];
        count[0] += present[i];
    }
    /* 0/0: NaN, as numpy */
    return ((sum[0] + sum[1]) + (sum[2] + sum[3])) / ((count[0] + count[1]) + (count[2] + count[3]));
}

#ifdef KERNEL_AVX512
/* The macro average in AVX-512 intrinsics, chosen at run time where the CPU has it:
 * gcc's own vectorisation of macro_average (above) converts, stores and reloads each
 * class's value, and sums them in a second pass. Eight classes a step, both systems,
 * the same operations on each value and the same order of the sums (lane q of a
 * system's four partial sums adds classes q, q + 4, q + 8, ... in turn; the last
 * c mod 4 classes go to lane 0): the same bits (contraction off, as CLONES). The
 * classes present are counted as integers: macro_average's four partial counts of
 * ones are exact, so their sum is that integer whatever the order. */
#define AVX512_FN __attribute__((target("avx512f"), optimize("fp-contract=off")))

static inline __attribute__((always_inline)) AVX512_FN __m512d values8(
    __m256i tp, __m256i fp, __m256i fn, const int which, __m512d b2v, __m512d scale,
    int64_t *present) {
    const __m512d t = _mm512_cvtepi32_pd(tp), p = _mm512_cvtepi32_pd(fp),
                  f = _mm512_cvtepi32_pd(fn), one = _mm512_set1_pd(1.0),
                  zero = _mm512_setzero_pd();
    const __m512d num = which == 2 ? _mm512_mul_pd(t, scale) : t;
    const __m512d den = which == 0   ? _mm512_add_pd(t, p)
                        : which == 1 ? _mm512_add_pd(t, f)
                                     : _mm512_add_pd(_mm512_add_pd(num, p), _mm512_mul_pd(b2v, f));
    const __mmask8 defined = _mm512_cmp_pd_mask(den, zero, _CMP_GT_OQ);
    const __mmask8 seen = which == 2 ? defined
                                     : _mm512_cmp_pd_mask(_mm512_add_pd(_mm512_add_pd(t, p), f),
                                                          zero, _CMP_GT_OQ);
    *present += __builtin_popcount((unsigned)seen);
    /* num / (den + (1 - defined)): den + 0 = den where defined (den > 0), else den + 1 */
    return _mm512_div_pd(num, _mm512_mask_add_pd(den, (__mmask8)~defined, den, one));
}

static inline __attribute__((always_inline)) AVX512_FN __m256d add_halves(__m256d sum,
                                                                           __m512d v) {
    return _mm256_add_pd(_mm256_add_pd(sum, _mm512_castpd512_pd256(v)),
                         _mm512_extractf64x4_pd(v, 1));
}

static inline __attribute__((always_inline)) AVX512_FN double macro_delta8(
    const int32_t *row, Py_ssize_t c, const int which, double b2, int32_t *zero) {
    const int32_t *both = row, *only_a = row + c, *only_b = row + 2 * c, *neither = row + 3 * c,
                  *fp_a = row + 4 * c, *fp_b = row + 5 * c;
    const __m512d b2v = _mm512_set1_pd(b2), scale = _mm512_set1_pd(1 + b2);
    __m256d sum[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t seen[2] = {0, 0}; /* the classes present: every partial count is an exact integer */
    Py_ssize_t i = 0;
#define LOAD8(p) _mm256_loadu_si256((const __m256i *)((p) + i))
    for (; i + 8 <= c; i += 8) {
        const __m256i bo = LOAD8(both), oa = LOAD8(only_a), ob = LOAD8(only_b),
                      ne = LOAD8(neither), fa = LOAD8(fp_a), fb = LOAD8(fp_b);
        if (zero)
            for (int k = 0; k < 6; k++)
                _mm256_storeu_si256((__m256i *)(zero + k * c + i), _mm256_setzero_si256());
        sum[0] = add_halves(sum[0], values8(_mm256_add_epi32(bo, oa), fa,
                                            _mm256_add_epi32(ob, ne), which, b2v, scale,
                                            &seen[0]));
        sum[1] = add_halves(sum[1], values8(_mm256_add_epi32(bo, ob), fb,
                                            _mm256_add_epi32(oa, ne), which, b2v, scale,
                                            &seen[1]));
    }
#undef LOAD8
    double value[2];
    for (int s = 0; s < 2; s++) {
        double total[4], count = (double)seen[s];
        _mm256_storeu_pd(total, sum[s]);
        const int32_t *mine = s ? only_b : only_a, *other = s ? only_a : only_b;
        const int32_t *fp = s ? fp_b : fp_a;
        for (Py_ssize_t j = i; j < c; j++) { /* macro_average's value of class j */
            const double t = both[j] + mine[j], p = fp[j], f = other[j] + neither[j];
            const double num = which == 2 ? t * (1 + b2) : t;
            const double den = which == 0 ? t + p : which == 1 ? t + f : num + p + b2 * f;
            const double defined = (double)(den > 0);
            total[j < c - c % 4 ? j % 4 : 0] += num / (den + (1.0 - defined));
            count += which == 2 ? defined : (double)(t + p + f > 0);
        }
        /* 0/0: NaN, as numpy */
        value[s] = ((total[0] + total[1]) + (total[2] + total[3])) / count;
    }
    if (zero)
        for (int k = 0; k < 6; k++) memset(zero + k * c + i, 0, (c - i) * sizeof(int32_t));
    return value[0] - value[1];
}

/* A's macro average minus B's from one row of counts (prf_deltas' columns); `zero`:
 * NULL, or the row itself, whose 6 c counts are then zeroed as they are read. */
static __attribute__((noinline)) AVX512_FN double macro_delta_avx512(const int32_t *row,
                                                                     Py_ssize_t c, int which,
                                                                     double b2, int32_t *zero) {
    return which == 0   ? macro_delta8(row, c, 0, b2, zero)
           : which == 1 ? macro_delta8(row, c, 1, b2, zero)
                        : macro_delta8(row, c, 2, b2, zero);
}
#undef AVX512_FN
#endif

/* prf_deltas' macro averages, resample by resample. */
static __attribute__((noinline)) CLONES void macro_deltas(
    const int32_t *counts, Py_ssize_t n_res, Py_ssize_t width, Py_ssize_t c, int which,
    double b2, double *scratch, double *present_scratch, double *out) {
#ifdef KERNEL_AVX512
    if (has_avx512) {
        for (Py_ssize_t r = 0; r < n_res; r++)
            out[r] = macro_delta_avx512(counts + r * width, c, which, b2, NULL);
        return;
    }
#endif
    for (Py_ssize_t r = 0; r < n_res; r++) {
        const int32_t *both = counts + r * width, *only_a = both + c, *only_b = both + 2 * c,
                      *neither = both + 3 * c, *fp_a = both + 4 * c, *fp_b = both + 5 * c;
        double value[2];
#define MACRO(w)                                                                              \
    value[0] = macro_average(both, only_a, only_b, neither, fp_a, c, w, b2, scratch,          \
                             present_scratch);                                                \
    value[1] = macro_average(both, only_b, only_a, neither, fp_b, c, w, b2, scratch,          \
                             present_scratch)
        if (which == 0) {
            MACRO(0);
        } else if (which == 1) {
            MACRO(1);
        } else {
            MACRO(2);
        }
#undef MACRO
        out[r] = value[0] - value[1];
    }
}

/* numpy's pairwise sum, as its add.reduce sums a contiguous row (checked bit for bit
 * against np.sum(axis=-1) in the tests): in order below 8 values; to 128, eight
 * partial sums a lane each, then the rest in order; past 128, the two halves (the
 * first a multiple of 8) each so. */
static double pairwise_sum(const double *a, Py_ssize_t n) {
    if (n < 8) {
        double res = -0.0;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = a[j];
        Py_ssize_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    const Py_ssize_t half = n / 2 - (n / 2) % 8;
    return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

/* MCC (Gorodkin's multi-class form, classification.mcc_from_counts) of A minus B
 * from one row of counts. Its sums are of integers, exact in int64; numpy's, in
 * doubles, are exact too while s * s < 2**53 (the caller's limit, MCC_EXACT_ITEMS),
 * so after them the same three roundings (the product, the square root, the
 * quotient) give numpy's bits. */
static double mcc_delta(const int32_t *both, const int32_t *only_a, const int32_t *only_b,
                        const int32_t *neither, const int32_t *fp_a, const int32_t *fp_b,
                        Py_ssize_t c) {
    int64_t s = 0, tt = 0, hits[2] = {0, 0}, tp_dot[2] = {0, 0}, pp[2] = {0, 0};
    for (Py_ssize_t i = 0; i < c; i++) {
        const int64_t t = (int64_t)both[i] + only_a[i] + only_b[i] + neither[i]; /* gold */
        const int64_t tp[2] = {(int64_t)both[i] + only_a[i], (int64_t)both[i] + only_b[i]};
        const int64_t p[2] = {tp[0] + fp_a[i], tp[1] + fp_b[i]};
        s += t;
        tt += t * t;
        for (int k = 0; k < 2; k++) {
            hits[k] += tp[k];
            tp_dot[k] += t * p[k];
            pp[k] += p[k] * p[k];
        }
    }
    double value[2];
    for (int k = 0; k < 2; k++) {
        const double cov_tp = (double)(hits[k] * s - tp_dot[k]);
        const double den = (double)(s * s - pp[k]) * (double)(s * s - tt);
        value[k] = den > 0 ? cov_tp / sqrt(den) : 0.0;
    }
    return value[0] - value[1];
}

/* Balanced accuracy (adjusted: rescaled so that chance is 0) of A minus B from one
 * row of counts, as classification.balanced_accuracy_from_counts: each class's
 * recall (0 for a class without gold items; as tp / 1 there, the same +0), summed
 * pairwise as numpy sums them, over the number of gold classes. `scratch`: 2 c. */
static double balanced_delta(const int32_t *both, const int32_t *only_a,
                             const int32_t *only_b, const int32_t *neither, Py_ssize_t c,
                             int adjusted, double *restrict scratch) {
    double *restrict recall_a = scratch, *restrict recall_b = scratch + c;
    int64_t k = 0;
    for (Py_ssize_t i = 0; i < c; i++) {
        const int32_t t = both[i] + only_a[i] + only_b[i] + neither[i];
        const double support = t > 0 ? (double)t : 1.0;
        recall_a[i] = (double)(both[i] + only_a[i]) / support;
        recall_b[i] = (double)(both[i] + only_b[i]) / support;
        k += t > 0;
    }
    double value[2] = {(0.0 + pairwise_sum(recall_a, c)) / (double)k,
                       (0.0 + pairwise_sum(recall_b, c)) / (double)k};
    for (int s = 0; s < 2 && adjusted; s++) {
        const double chance = 1.0 / (double)k;
        value[s] = k > 1 ? (value[s] - chance) / (1.0 - chance) : NAN;
    }
    return value[0] - value[1];
}

/* prf_deltas' micro and weighted averages, MCC and balanced accuracy, resample by resample. */
static void other_deltas(const int32_t *counts, Py_ssize_t n_res, Py_ssize_t width,
                         Py_ssize_t c, int average, int which, double b2, double *scratch,
                         double *out) {
    for (Py_ssize_t r = 0; r < n_res; r++) {
        const int32_t *both = counts + r * width, *only_a = both + c, *only_b = both + 2 * c,
                      *neither = both + 3 * c, *fp_a = both + 4 * c, *fp_b = both + 5 * c;
        double value[2];
        if (average == 3) {
            out[r] = mcc_delta(both, only_a, only_b, neither, fp_a, fp_b, c);
            continue;
        }
        if (average == 4) {
            out[r] = balanced_delta(both, only_a, only_b, neither, c, which, scratch);
            continue;
        }
        if (average == 1) {
            /* integer sums (which vectorise): sums of counts in doubles were exact too */
            int64_t sums[6] = {0, 0, 0, 0, 0, 0};
            for (Py_ssize_t i = 0; i < c; i++) {
                sums[0] += both[i] + only_a[i];
                sums[1] += both[i] + only_b[i];
                sums[2] += fp_a[i];
                sums[3] += fp_b[i];
                sums[4] += only_b[i] + neither[i];
                sums[5] += only_a[i] + neither[i];
            }
            double den;
            for (int s = 0; s < 2; s++)
                value[s] = prf_class((double)sums[s], (double)sums[2 + s], (double)sums[4 + s],
                                     which, b2, &den);
        } else {
            double sum[2] = {0, 0}, weight[2] = {0, 0}, present[2] = {0, 0}, den;
            for (Py_ssize_t i = 0; i < c; i++) {
                const double t[2] = {both[i] + only_a[i], both[i] + only_b[i]};
                const double p[2] = {fp_a[i], fp_b[i]};
                const double f[2] = {only_b[i] + neither[i], only_a[i] + neither[i]};
                for (int s = 0; s < 2; s++) {
                    const double x = prf_class(t[s], p[s], f[s], which, b2, &den);
                    if (average == 2) {
                        sum[s] += x * (t[s] + f[s]);
                        weight[s] += t[s] + f[s];
                    } else {
                        sum[s] += x;
                        present[s] += which == 2 ? den > 0 : t[s] + p[s] + f[s] > 0;
                    }
                }
            }
            for (int s = 0; s < 2; s++) /* 0/0: NaN, as numpy */
                value[s] = sum[s] / (average == 2 ? weight[s] : present[s]);
        }
        out[r] = value[0] - value[1];
    }
}

/* The combine of prf_deltas (see there); `scratch` holds 2 c doubles for a macro
 * average or balanced accuracy. */
static void prf_rows(const int32_t *counts, Py_ssize_t n_res, Py_ssize_t width, Py_ssize_t c,
                     int average, int which, double b2, double *scratch, double *out) {
    if (average == 0)
        macro_deltas(counts, n_res, width, c, which, b2, scratch, scratch + c, out);
    else
        other_deltas(counts, n_res, width, c, average, which, b2, scratch, out);
}

/* prf_deltas(counts, n_classes, average, which, b2, out)
 *
 *   counts  int32 (R, W), W >= 6 C: per resample, in blocks of C columns, the items
 *           of each gold class that both systems got right, only A, only B,
 *           neither; then A's and B's false positives of each predicted class (the
 *           columns of label_counts). So A's TP = both + only A, FN = only B +
 *           neither; B's TP = both + only B, FN = only A + neither.
 *   average 0 macro, 1 micro, 2 weighted; which 0 precision, 1 recall, 2 F-beta
 *           with b2 = beta**2 (prf_class). Or average 3: MCC (which, b2 unused);
 *           4: balanced accuracy, which 1 adjusted (b2 unused).
 *   out     float64 (R,): A's metric minus B's.
 */
static PyObject *prf_deltas(PyObject *self, PyObject *args) {
    PyObject *objs[2];
    Py_ssize_t c;
    int average, which;
    double b2;
    if (!PyArg_ParseTuple(args, "OniidO", &objs[0], &c, &average, &which, &b2, &objs[1]))
        return NULL;
    Py_buffer v[2];
    int got = 0;
    PyObject *result = NULL;
    if (get_buffer(objs[0], &v[0], "counts", 'i', 4, 0) < 0) goto done;
    got = 1;
    if (get_buffer(objs[1], &v[1], "out", 'f', 8, 1) < 0) goto done;
    got = 2;
    const Py_ssize_t n_res = v[0].ndim == 2 ? v[0].shape[0] : -1;
    const Py_ssize_t width = v[0].ndim == 2 ? v[0].shape[1] : -1;
    if (n_res < 0 || c < 1 || width < 6 * c || v[1].len / 8 != n_res || average < 0 ||
        average > 4 || which < 0 || which > 2) {
        PyErr_SetString(PyExc_ValueError, "prf_deltas: inconsistent arguments");
        goto done;
    }
    const int scratched = average == 0 || average == 4;
    double *scratch = scratched ? PyMem_Malloc(2 * c * sizeof(double)) : NULL;
    if (scratched && scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    prf_rows(v[0].buf, n_res, width, c, average, which, b2, scratch, v[1].buf);
    Py_END_ALLOW_THREADS
    PyMem_Free(scratch);
    result = Py_None;
    Py_INCREF(result);
done:
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

/* label_deltas(capsule, pcg, one, two, three, given_slots, draw, n_res, step, n_classes,
 *              average, which, b2, out)
 *
 * label_counts and then prf_deltas of n_res resamples, in one call: the resamples
 * in blocks of `step`, each block as one label_counts call (the digit streams
 * start afresh at each block) whose `given` is draw(size), called with the GIL
 * (the caller's Generator.multinomial: it takes the generator's words between two
 * blocks, exactly where it would between two label_counts calls; a pending signal,
 * Ctrl-C, stops the call there). Each resample's
 * counts are combined as soon as drawn, in one row of 6 n_classes + 16 columns
 * that stays in the cache: no table of counts, one check of the tables.
 *
 *   out     float64 (n_res,): A's metric minus B's.
 */
static PyObject *label_deltas(PyObject *self, PyObject *args) {
    PyObject *capsule, *pcg, *objs[4], *draw, *out_obj;
    Py_ssize_t n_res, step, c;
    int average, which;
    double b2;
    if (!PyArg_ParseTuple(args, "OOOOOOOnnniidO", &capsule, &pcg, &objs[0], &objs[1],
                          &objs[2], &objs[3], &draw, &n_res, &step, &c, &average, &which, &b2,
                          &out_obj))
        return NULL;
    bitgen_t *bg = (bitgen_t *)PyCapsule_GetPointer(capsule, "BitGenerator");
    if (bg == NULL) return NULL;
    tables_t t = {0};
    Py_buffer out_view, given_view;
    int have_out = 0, have_given = 0;
    PyObject *result = NULL, *given_obj = NULL;
    int32_t *row = NULL;
    double *scratch = NULL;
    if (get_buffer(out_obj, &out_view, "out", 'f', 8, 1) < 0) goto done;
    have_out = 1;
    if (n_res < 0 || step < 1 || c < 1 || c > (INT32_MAX - 16) / 6 || out_view.len / 8 != n_res ||
        average < 0 || average > 4 || which < 0 || which > 2) {
        PyErr_SetString(PyExc_ValueError, "label_deltas: inconsistent arguments");
        goto done;
    }
    const Py_ssize_t width = 6 * c + 16;
    if (tables_init(&t, objs, width, "label_deltas") < 0) goto done;
    row = PyMem_Calloc(width, sizeof(int32_t));
    scratch = PyMem_Malloc(2 * c * sizeof(double));
    if (row == NULL || scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *out = out_view.buf;
#ifdef KERNEL_AVX512
    const int zeroing = has_avx512 && average == 0;
#endif
    words_t w;
    if (words_init(&w, bg, pcg) < 0) goto done;
    for (Py_ssize_t pos = 0; pos < n_res; pos += step) {
        const Py_ssize_t size = n_res - pos < step ? n_res - pos : step;
        words_done(&w); /* the generator where the words taken so far leave it */
        if (PyErr_CheckSignals() < 0) goto done;
        given_obj = PyObject_CallFunction(draw, "n", size);
        if (given_obj == NULL) goto done;
        if (get_buffer(given_obj, &given_view, "given", 'i', 8, 0) < 0) goto done;
        have_given = 1;
        const int64_t *given = given_view.buf;
        if (given_view.ndim != 2 || given_view.shape[0] != size ||
            given_view.shape[1] != t.n_given + 3) {
            PyErr_SetString(PyExc_ValueError, "label_deltas: inconsistent array sizes (given)");
            goto done;
        }
        if (!given_in_range(given, size, &t)) {
            PyErr_SetString(PyExc_ValueError, "label_deltas: a slot or count is out of range");
            goto done;
        }
        words_resume(&w); /* the generator after draw's words */
        digits_t ds[3];
        for (int k = 0; k < 3; k++) digits_init(&ds[k], t.m[k]);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t r = 0; r < size; r++) {
#ifdef KERNEL_AVX512
            if (zeroing) { /* the combine zeroes the row as it reads it */
                count_rows(&w, ds, 1, given + r * (t.n_given + 3), row, &t, 0);
                out[pos + r] = macro_delta_avx512(row, c, which, b2, row);
                memset(row + 6 * c, 0, 16 * sizeof(int32_t));
                continue;
            }
#endif
            count_rows(&w, ds, 1, given + r * (t.n_given + 3), row, &t, 1);
            prf_rows(row, 1, width, c, average, which, b2, scratch, out + pos + r);
        }
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&given_view);
        have_given = 0;
        Py_CLEAR(given_obj);
    }
    words_done(&w);
    result = Py_None;
    Py_INCREF(result);
done:
    if (have_given) PyBuffer_Release(&given_view);
    Py_XDECREF(given_obj);
    PyMem_Free(row);
    PyMem_Free(scratch);
    tables_free(&t);
    if (have_out) PyBuffer_Release(&out_view);
    return result;
}

static PyMethodDef methods[] = {
    {"resample_sums", resample_sums, METH_VARARGS,
     "Each resample's sums of its types' rows, given and drawn counts (see the source)."},
    {"label_counts", label_counts, METH_VARARGS,
     "Each resample's counts, accumulated at each draw (see the source)."},
    {"label_deltas", label_deltas, METH_VARARGS,
     "label_counts and prf_deltas of many blocks of resamples in one call (see the source)."},
    {"prf_deltas", prf_deltas, METH_VARARGS,
     "Precision, recall, F-beta, MCC or balanced accuracy of A minus B from per-class counts "
     "(see the source)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bootkernel",
                                    "The paired bootstrap's compiled inner loop.", -1, methods};

PyMODINIT_FUNC PyInit__bootkernel(void) {
#ifdef KERNEL_AVX512
    __builtin_cpu_init();
    has_avx512 = __builtin_cpu_supports("avx512f") && getenv("VAREVAL_NO_AVX512") == NULL;
#endif
    return PyModule_Create(&module);
}
