/* The reader's number checks in one pass: is each cell of a text column exactly
 * Python's repr of the float it reads as (or an int's decimal form, int_cells
 * below)?  The numbers are parsed in the same pass. And utf8_cells: arrow's UTF-8
 * check, run only on the columns that stay text.
 *
 * repr_floats(offsets, data, first, n, wide, out, unknown) -> (rejected, unknowns)
 *
 *   offsets, data  an arrow string array's buffers: int32 offsets (int64 when
 *                  `wide`, a large_string) and the bytes; `first` is the array's
 *                  offset into them and `n` its length (no nulls).
 *   out            float64 (n,): cell i's float where it is proved.
 *   unknown        uint8 (n,): set to 1 where the cell is neither proved nor refuted;
 *                  the caller decides those with Python's repr.
 *   rejected       the first cell that is surely not its float's repr, or -1; the
 *                  scan stops there.
 *   unknowns       how many cells were left unknown.
 *
 * The rule (Python's float_repr_style "short": David Gay's shortest digits, mode 0):
 * repr(v) writes the fewest significant digits that read back as v and, of those,
 * the digits closest to v; in fixed notation when the point's position decpt
 * (v = 0.d1d2... * 10**decpt) is in -4 < decpt <= 16, with ".0" after a whole
 * number, else as d[.ddd]e[+-]XX (at least two exponent digits).
 *
 * A cell T = D * 10**p (D its n significant digits) is proved to be repr(v) when
 * its form is the one repr writes for its decpt (sign, no leading zero, no
 * trailing zero, the exponent's form) and, in exact integer arithmetic:
 *   (1) T lies inside v's rounding interval, so v = float(T) (v starts from a
 *       floating-point estimate and moves an ulp at a time until it holds); on an
 *       end only when v's mantissa is even (a tie reads as the even one, and Gay's
 *       digits then accept the end too);
 *   (2) T is strictly closer to v than half the step 10**p of its last digit: no
 *       other n-digit decimal is as close;
 *   (3) neither decimal of n - 1 digits next to T (T with its last digit cut, and
 *       that plus one step 10**(p+1)) reads back as v (lies in the interval, an end
 *       counting as in (1)): a shorter decimal that did would lie between v and one
 *       of those two.
 * A cell is refuted when its form is not repr's, it has more than 17 significant
 * digits, or (3) finds a shorter decimal that reads back. A cell failing only (2)
 * (a tie between two n-digit decimals, or a nearer one outside the interval), or
 * whose integers could reach 2**126 (5**k past 2**64: |p| > 27), or whose float is
 * subnormal, is left unknown. The integers: every quantity is multiplied by
 * 2**(-g2) 5**(-g5), g2 = min(p, e - 2), g5 = min(p, 0), where v = m 2**e, so that
 * T, v, the quarter ulp 2**(e-2) and 10**p are integers. Where the quarter ulp and
 * 10**p are small in those units (a cell of 16-17 digits, a short one near 1), the
 * test runs in 64-bit integers: T - V is exact modulo 2**64 and small, and so is
 * every quantity compared; elsewhere in 128-bit integers. Both give each cell the
 * same verdict (tests/data/test_readkernel.py). The estimate of v comes from the top
 * 64 bits of D times 10**p's 64-bit mantissa, not a division.
 * A whole number "I.0" (|I| < 10**16) is repr(v) exactly when I converts to a
 * double exactly.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;

enum { PROVED, UNKNOWN, REFUTED };

static uint64_t pow5[28];  /* 5**k < 2**64 */
static int pow5_bits[28];
static uint64_t pow10_mant[50];  /* 10**p ~ pow10_mant[p + 27] 2**pow10_exp[p + 27], */
static int pow10_exp[50];        /* -27 <= p <= 22, the mantissa in [2**63, 2**64) */

static inline int bits64(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }

/* x 2**a 5**b, or 0 with *fits cleared when it could reach 2**126 (or b > 27). */
static inline u128 scaled(uint64_t x, int a, int b, int *fits) {
    if (b > 27 || bits64(x) + a + pow5_bits[b] > 126) {
        *fits = 0;
        return 0;
    }
    return ((u128)x * pow5[b]) << a;
}

static inline double next_to(double v, int up) {
    uint64_t u;
    memcpy(&u, &v, 8);
    u += up ? 1 : -1;  /* v > 0 and normal: the next double up or down */
    memcpy(&v, &u, 8);
    return v;
}

/* Where C lies against the interval (V - lo, V + hi): 1 inside, 2 on an end, 0 outside. */
static inline int inside(u128 c, u128 v, u128 lo, u128 hi) {
    u128 d = c > v ? c - v : v - c, reach = c > v ? hi : lo;
    return d < reach ? 1 : d == reach ? 2 : 0;
}

/* Where X = C - V lies against (-lo, hi), X exact in an int64: as inside(). */
static inline int inside64(int64_t x, uint64_t lo, uint64_t hi) {
    uint64_t d = x > 0 ? (uint64_t)x : 0 - (uint64_t)x, reach = x > 0 ? hi : lo;
    return d < reach ? 1 : d == reach ? 2 : 0;
}

/* The exact part: T = D 10**p (D > 0, its last digit `last` not 0); *value = float(T).
 * `exact` forces the 128-bit integers (the tests compare both ways). */
static int prove(uint64_t D, int last, int p, double *value, int exact) {
    if (p < -27 || p > 22) return UNKNOWN;  /* past what the 128-bit integers below hold */
    /* The estimate v: D 10**p from the top 64 bits of D's and 10**p's mantissas' product,
     * rounded to 53 bits (within an ulp of T, and nearly always float(T)). */
    int lz = __builtin_clzll(D);
    u128 product = (u128)(D << lz) * pow10_mant[p + 27];
    uint64_t top = (uint64_t)(product >> 64);
    int shift = !(top >> 63);  /* the product's top bit is bit 127 or 126 */
    if (shift) top = top << 1 | (uint64_t)product >> 63;
    uint64_t mant = (top >> 11) + ((top >> 10) & 1);
    int biased0 = pow10_exp[p + 27] - lz - shift + 1150 + (int)(mant >> 53);
    mant >>= mant >> 53;
    if (biased0 <= 0 || biased0 >= 0x7ff) return UNKNOWN;
    uint64_t bits0 = (uint64_t)biased0 << 52 | (mant & ((1ULL << 52) - 1));
    double v;
    memcpy(&v, &bits0, 8);
    for (int step = 0; step < 4; step++) {
        uint64_t bits;
        memcpy(&bits, &v, 8);
        int biased = (int)(bits >> 52);
        if (biased == 0 || biased >= 0x7ff) return UNKNOWN;  /* subnormal or infinite */
        uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
        int e = biased - 1075;
        int g2 = p < e - 2 ? p : e - 2, g5 = p < 0 ? p : 0, fits = 1;
        /* The same test in 64-bit integers when the quarter ulp is below 2**56 and the
         * step 10**p below 2**57 (scaled): T and V themselves may pass 2**64, but T - V
         * is exact modulo 2**64, and small. The estimate is within two of v's ulps of T
         * and each move brings v nearer: |T - V| <= 8 quarters < 2**59, so every
         * quantity below (|T - V| plus ten steps < 2**61) is exact in an int64. */
        int q_shift = e - 2 - g2, s_shift = p - g2;
        if (!exact && q_shift + pow5_bits[-g5] <= 56 && s_shift + pow5_bits[p - g5] <= 57) {
            uint64_t quarter = pow5[-g5] << q_shift, step10 = pow5[p - g5] << s_shift;
            int64_t x = (int64_t)(D * pow5[p - g5] * (1ULL << s_shift) -
                                  (m * pow5[-g5] << (e - g2)));  /* T - V, mod 2**64 */
            uint64_t hi = 2 * quarter, lo = (m == (1ULL << 52) && biased > 1) ? quarter : hi;
            uint64_t d = x > 0 ? (uint64_t)x : 0 - (uint64_t)x, reach = x > 0 ? hi : lo;
            if (d > reach || (d == reach && (m & 1))) {
                v = next_to(v, x > 0);
                continue;
            }
            int64_t cut = x - (int64_t)(last * step10);
            int a = inside64(cut, lo, hi), b = inside64(cut + (int64_t)(10 * step10), lo, hi);
            if (a == 1 || b == 1 || ((a || b) && !(m & 1))) return REFUTED;
            if (2 * d >= step10) return UNKNOWN;
            *value = v;
            return PROVED;
        }
        u128 T = scaled(D, p - g2, p - g5, &fits);
        u128 V = scaled(m, e - g2, -g5, &fits);
        u128 quarter = scaled(1, e - 2 - g2, -g5, &fits);
        u128 step10 = scaled(1, p - g2, p - g5, &fits);
        if (!fits || (step10 >> 121)) return UNKNOWN;
        u128 hi = 2 * quarter, lo = (m == (1ULL << 52) && biased > 1) ? quarter : hi;
        u128 d = T > V ? T - V : V - T, reach = T > V ? hi : lo;
        /* (1) a tie reads as the even mantissa; else move the estimate towards T */
        if (d > reach || (d == reach && (m & 1))) {
            v = next_to(v, T > V);
            continue;
        }
        u128 cut = T - (u128)last * step10;  /* (3) the (n-1)-digit neighbours */
        int a = inside(cut, V, lo, hi), b = inside(cut + 10 * step10, V, lo, hi);
        if (a == 1 || b == 1 || ((a || b) && !(m & 1))) return REFUTED;
        if (2 * d >= step10) return UNKNOWN;  /* not (2) */
        *value = v;
        return PROVED;
    }
    return UNKNOWN;
}

static inline int is_digit(unsigned char c) { return (unsigned)(c - '0') < 10; }

/* Eight digits at s (the SWAR parse of fast_float): 1 and *value when all are digits. */
static inline int eight_digits(const unsigned char *s, uint64_t *value) {
    uint64_t x;
    memcpy(&x, s, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    if (((x + 0x4646464646464646ULL) | (x - 0x3030303030303030ULL)) & 0x8080808080808080ULL)
        return 0;
    x = (x & 0x0F0F0F0F0F0F0F0FULL) * 2561 >> 8;
    x = (x & 0x00FF00FF00FF00FFULL) * 6553601 >> 16;
    *value = (uint32_t)((x & 0x0000FFFF0000FFFFULL) * 42949672960001ULL >> 32);
    return 1;
}

/* Digits from s on, into *D (mod 2**64); where the first non-digit is. */
static inline const unsigned char *digits(const unsigned char *s, const unsigned char *end,
                                          uint64_t *D) {
    uint64_t eight;
    while (end - s >= 8 && eight_digits(s, &eight)) {
        *D = *D * 100000000ULL + eight;
        s += 8;
    }
    while (s < end && is_digit(*s)) *D = 10 * *D + (uint64_t)(*s++ - '0');
    return s;
}

/* One cell: PROVED (with *value), UNKNOWN or REFUTED. */
static int check_cell(const unsigned char *s, Py_ssize_t len, double *value, int exact) {
    const unsigned char *end = s + len;
    int negative = s < end && *s == '-';
    s += negative;
    const unsigned char *int_start = s;
    uint64_t D = 0;
    s = digits(s, end, &D);
    int n_int = (int)(s - int_start);
    if (n_int == 0 || (n_int > 1 && *int_start == '0')) return REFUTED;
    if (n_int > 16) return REFUTED;  /* |v| >= 1e16: repr writes an exponent */
    const unsigned char *frac_start = s, *frac_end = s;
    if (s < end && *s == '.') {
        frac_start = ++s;
        s = digits(s, end, &D);
        frac_end = s;
        if (frac_end == frac_start) return REFUTED;  /* "1." */
    }
    int n_frac = (int)(frac_end - frac_start);
    if (s == end) {  /* fixed notation: the point is required */
        if (n_frac == 0) return REFUTED;
        if (n_frac == 1 && *frac_start == '0') {  /* "I.0": a whole number, D = 10 I */
            double v = (double)(D / 10);
            if ((uint64_t)v != D / 10) return REFUTED;  /* I < 1e16 < 2**64 */
            *value = negative ? -v : v;
            return PROVED;
        }
        if (frac_end[-1] == '0') return REFUTED;  /* a trailing zero */
        int zeros = 0;  /* leading zeros of "0.000ddd" */
        if (*int_start == '0')
            while (frac_start + zeros < frac_end && frac_start[zeros] == '0') zeros++;
        if (zeros > 3) return REFUTED;  /* decpt <= -4 has an exponent */
        if ((*int_start == '0' ? 0 : n_int) + n_frac - zeros > 17)
            return REFUTED;  /* repr never writes more than 17 digits */
        int state = prove(D, frac_end[-1] - '0', -n_frac, value, exact);
        if (state == PROVED && negative) *value = -*value;
        return state;
    }
    /* d[.ddd]e[+-]XX: one nonzero digit before the point */
    if (n_int != 1 || *int_start == '0' || *s != 'e' || end - s < 4) return REFUTED;
    if (n_frac > 16 || (n_frac && frac_end[-1] == '0')) return REFUTED;
    int sign = s[1] == '-' ? -1 : s[1] == '+' ? 1 : 0;
    const unsigned char *x = s + 2;
    int n_exp = (int)(end - x), E = 0;
    if (!sign || n_exp > 3 || (n_exp == 3 && *x == '0')) return REFUTED;
    for (; x < end; x++) {
        if (!is_digit(*x)) return REFUTED;
        E = 10 * E + (*x - '0');
    }
    E *= sign;
    if (E > -5 && E < 16) return REFUTED;  /* -4 < decpt = E + 1 <= 16: fixed notation */
    int state = prove(D, (int)(D % 10), E - n_frac, value, exact);
    if (state == PROVED && negative) *value = -*value;
    return state;
}

static int get_buffer(PyObject *obj, Py_buffer *view, const char *name, Py_ssize_t size,
                      int writable) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    if (view->len < size) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes, %zd needed", name,
                     view->len, size);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The cells' two buffers, arrow's offsets (int32, or int64 when `wide`) and its
 * text, into v[0] and v[1] for cells first .. first + n - 1; -1 with the error set
 * (and nothing held) where they cannot serve. */
static int cell_buffers(const char *fn, PyObject *offsets_obj, PyObject *data_obj,
                        Py_ssize_t first, Py_ssize_t n, int wide, Py_buffer *v) {
    if (first < 0 || n < 0) {
        PyErr_Format(PyExc_ValueError, "%s: negative offset or length", fn);
        return -1;
    }
    if (get_buffer(offsets_obj, &v[0], "offsets", (first + n + 1) * (wide ? 8 : 4), 0) < 0)
        return -1;
    if (get_buffer(data_obj, &v[1], "data", 0, 0) < 0) {
        PyBuffer_Release(&v[0]);
        return -1;
    }
    return 0;
}

/* Where cell i's bytes start and stop in the data buffer. */
static inline void cell_bounds(const char *offsets, int wide, Py_ssize_t i, int64_t *start,
                               int64_t *stop) {
    if (wide) {
        memcpy(start, offsets + i * 8, 8);
        memcpy(stop, offsets + (i + 1) * 8, 8);
    } else {
        int32_t a, b;
        memcpy(&a, offsets + i * 4, 4);
        memcpy(&b, offsets + (i + 1) * 4, 4);
        *start = a, *stop = b;
    }
}

/* Whether s[0:len] is UTF-8 as RFC 3629 has it (no overlong form, surrogate or code
 * point past U+10FFFF), as arrow's own check and Python's decoder require. */
static int valid_utf8(const unsigned char *s, const unsigned char *end) {
    while (s < end) {
        uint64_t x;
        if (end - s >= 8 && (memcpy(&x, s, 8), !(x & 0x8080808080808080ULL))) {
            s += 8;  /* eight ASCII bytes */
            continue;
        }
        unsigned char c = *s, lo = 0x80, hi = 0xBF;
        int n;
        if (c < 0x80) {
            s++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF)
            n = 1;
        else if (c >= 0xE0 && c <= 0xEF)
            n = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4)
            n = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        else
            return 0;
        if (end - s < n + 1 || s[1] < lo || s[1] > hi) return 0;
        for (int k = 2; k <= n; k++)
            if ((s[k] & 0xC0) != 0x80) return 0;
        s += n + 1;
    }
    return 1;
}

/* The loops over a column's cells, shared by the functions below; each runs without
 * the GIL. `offsets` and `data` are a column's buffers (data_len bytes), its cells
 * first .. first + n - 1. OUT_OF_RANGE where an offset points outside the data. */
#define OUT_OF_RANGE (-2)

/* Each cell proved to be its float's repr into out[i] (unknown[i] = 1 where it is
 * neither proved nor refuted, *unknowns counting those; unknown may be NULL):
 * the first refuted cell (the scan stops there), or -1. *fraction (where fraction
 * is not NULL) is set to 1 when a proved value is not a whole number. */
static Py_ssize_t floats_of(const char *offsets, int wide, const unsigned char *data,
                            Py_ssize_t data_len, Py_ssize_t first, Py_ssize_t n, double *out,
                            unsigned char *unknown, Py_ssize_t *unknowns, int *fraction,
                            int exact) {
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t start, stop;
        cell_bounds(offsets, wide, first + i, &start, &stop);
        if (start < 0 || stop < start || stop > data_len) return OUT_OF_RANGE;
        int state = check_cell(data + start, stop - start, &out[i], exact);
        if (unknown) unknown[i] = state == UNKNOWN;
        *unknowns += state == UNKNOWN;
        if (state == REFUTED) return i;
        if (fraction && !*fraction && state == PROVED && out[i] != __builtin_floor(out[i]))
            *fraction = 1;
    }
    return -1;
}

/* Each cell as an int64 into out[i]: the first cell that is not the decimal form of
 * an int64 (-?(0|[1-9][0-9]*), not "-0"), or -1. */
static Py_ssize_t ints_of(const char *offsets, int wide, const unsigned char *data,
                          Py_ssize_t data_len, Py_ssize_t first, Py_ssize_t n, int64_t *out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t start, stop;
        cell_bounds(offsets, wide, first + i, &start, &stop);
        if (start < 0 || stop < start || stop > data_len) return OUT_OF_RANGE;
        const unsigned char *s = data + start, *end = data + stop;
        int negative = s < end && *s == '-';
        s += negative;
        uint64_t x = 0;
        const unsigned char *after = digits(s, end, &x);
        Py_ssize_t count = after - s;
        /* 19 digits hold every int64 (and never wrap): then checked against 2**63 */
        if (after != end || count == 0 || count > 19 || (*s == '0' && (count > 1 || negative)) ||
            (count == 19 && x > (uint64_t)INT64_MAX + (uint64_t)negative))
            return i;
        out[i] = negative ? (int64_t)(0 - x) : (int64_t)x;
    }
    return -1;
}

/* The first cell that is not UTF-8, or -1. All-ASCII text (no byte >= 0x80 in the
 * cells' span) is passed in one sweep. */
static Py_ssize_t utf8_of(const char *offsets, int wide, const unsigned char *data,
                          Py_ssize_t data_len, Py_ssize_t first, Py_ssize_t n) {
    if (!n) return -1;
    int64_t start, stop, span_start, span_stop;  /* the cells' bytes: one span */
    cell_bounds(offsets, wide, first, &span_start, &stop);
    cell_bounds(offsets, wide, first + n - 1, &start, &span_stop);
    if (span_start < 0 || span_stop < span_start || span_stop > data_len) return OUT_OF_RANGE;
    uint64_t high = 0, x;
    const unsigned char *s = data + span_start, *end = data + span_stop;
    for (; end - s >= 8; s += 8) high |= (memcpy(&x, s, 8), x);
    for (; s < end; s++) high |= *s;
    if (!(high & 0x8080808080808080ULL)) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        cell_bounds(offsets, wide, first + i, &start, &stop);
        if (start < span_start || stop < start || stop > span_stop) return OUT_OF_RANGE;
        if (!valid_utf8(data + start, data + stop)) return i;
    }
    return -1;
}

static PyObject *repr_floats(PyObject *self, PyObject *args) {
    PyObject *offsets_obj, *data_obj, *out_obj, *unknown_obj;
    Py_ssize_t first, n;
    int wide, exact = 0;
    if (!PyArg_ParseTuple(args, "OOnnpOO|p", &offsets_obj, &data_obj, &first, &n, &wide, &out_obj,
                          &unknown_obj, &exact))
        return NULL;
    Py_buffer v[4];
    if (cell_buffers("repr_floats", offsets_obj, data_obj, first, n, wide, v) < 0) return NULL;
    int got = 2;
    PyObject *result = NULL;
    if (get_buffer(out_obj, &v[got], "out", n * 8, 1) < 0) goto done;
    got++;
    if (get_buffer(unknown_obj, &v[got], "unknown", n, 1) < 0) goto done;
    got++;
    Py_ssize_t rejected, unknowns = 0;
    Py_BEGIN_ALLOW_THREADS
    rejected = floats_of((const char *)v[0].buf, wide, (const unsigned char *)v[1].buf, v[1].len,
                         first, n, (double *)v[2].buf, (unsigned char *)v[3].buf, &unknowns,
                         NULL, exact);
    Py_END_ALLOW_THREADS
    if (rejected == OUT_OF_RANGE)
        PyErr_SetString(PyExc_ValueError, "repr_floats: an offset is out of range");
    else
        result = Py_BuildValue("nn", rejected, unknowns);
done:
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

/* int_cells(offsets, data, first, n, wide, out) -> the first cell that is not the
 * decimal form of an int64 (-?(0|[1-9][0-9]*), not "-0"), or -1; `out` (int64 (n,))
 * holds the ints up to it. */
static PyObject *int_cells(PyObject *self, PyObject *args) {
    PyObject *offsets_obj, *data_obj, *out_obj;
    Py_ssize_t first, n;
    int wide;
    if (!PyArg_ParseTuple(args, "OOnnpO", &offsets_obj, &data_obj, &first, &n, &wide, &out_obj))
        return NULL;
    Py_buffer v[3];
    if (cell_buffers("int_cells", offsets_obj, data_obj, first, n, wide, v) < 0) return NULL;
    int got = 2;
    PyObject *result = NULL;
    if (get_buffer(out_obj, &v[got], "out", n * 8, 1) < 0) goto done;
    got++;
    Py_ssize_t rejected;
    Py_BEGIN_ALLOW_THREADS
    rejected = ints_of((const char *)v[0].buf, wide, (const unsigned char *)v[1].buf, v[1].len,
                       first, n, (int64_t *)v[2].buf);
    Py_END_ALLOW_THREADS
    if (rejected == OUT_OF_RANGE)
        PyErr_SetString(PyExc_ValueError, "int_cells: an offset is out of range");
    else
        result = PyLong_FromSsize_t(rejected);
done:
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

/* utf8_cells(offsets, data, first, n, wide) -> the first cell that is not UTF-8, or -1. */
static PyObject *utf8_cells(PyObject *self, PyObject *args) {
    PyObject *offsets_obj, *data_obj;
    Py_ssize_t first, n;
    int wide;
    if (!PyArg_ParseTuple(args, "OOnnp", &offsets_obj, &data_obj, &first, &n, &wide)) return NULL;
    Py_buffer v[2];
    if (cell_buffers("utf8_cells", offsets_obj, data_obj, first, n, wide, v) < 0) return NULL;
    Py_ssize_t invalid;
    Py_BEGIN_ALLOW_THREADS
    invalid = utf8_of((const char *)v[0].buf, wide, (const unsigned char *)v[1].buf, v[1].len,
                      first, n);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v[1]);
    PyBuffer_Release(&v[0]);
    if (invalid == OUT_OF_RANGE) {
        PyErr_SetString(PyExc_ValueError, "utf8_cells: an offset is out of range");
        return NULL;
    }
    return PyLong_FromSsize_t(invalid);
}

/* columns(cells, outs) -> bytes: every column of a table read as the reader reads one
 * (io._arrow_lossless), in one call, one verdict a column:
 *   'i'  every cell an int64's decimal form: the ints are in its out (int64);
 *   'f'  every cell proved its float's repr, not every value whole: the floats are
 *        in its out (float64);
 *   'u'  no cell refuted, some left unknown (a tie, a subnormal, a magnitude past
 *        the 128-bit integers): Python decides the column;
 *   't'  text (a missing cell, or a cell that is no canonical number; or floats all
 *        whole), every cell UTF-8;
 *   'x'  text with a cell that is not UTF-8.
 * cells: a sequence of (offsets, data, first, n, wide, nulls) tuples, one a column, the
 * first five as repr_floats takes them, nulls true where the column has a missing cell;
 * outs: a sequence of writable buffers of n 8-byte cells, one a column. */
static PyObject *columns(PyObject *self, PyObject *args) {
    PyObject *cells_obj, *outs_obj;
    if (!PyArg_ParseTuple(args, "OO", &cells_obj, &outs_obj)) return NULL;
    PyObject *cells = PySequence_Fast(cells_obj, "columns: cells must be a sequence");
    if (!cells) return NULL;
    PyObject *outs = PySequence_Fast(outs_obj, "columns: outs must be a sequence");
    if (!outs) {
        Py_DECREF(cells);
        return NULL;
    }
    Py_ssize_t k = PySequence_Fast_GET_SIZE(cells), got = 0;
    PyObject *result = NULL;
    Py_buffer *v = PyMem_Calloc(3 * (size_t)(k ? k : 1), sizeof(Py_buffer));
    Py_ssize_t *first = PyMem_Calloc(2 * (size_t)(k ? k : 1), sizeof(Py_ssize_t));
    int *flags = PyMem_Calloc(2 * (size_t)(k ? k : 1), sizeof(int));
    char *verdict = PyMem_Calloc((size_t)(k ? k : 1), 1);
    if (!v || !first || !flags || !verdict) {
        PyErr_NoMemory();
        goto done;
    }
    if (PySequence_Fast_GET_SIZE(outs) != k) {
        PyErr_SetString(PyExc_ValueError, "columns: one out buffer a column is needed");
        goto done;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *offsets_obj, *data_obj;
        Py_ssize_t *n = &first[2 * j + 1];
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(cells, j), "OOnnpp;columns: a column",
                              &offsets_obj, &data_obj, &first[2 * j], n, &flags[2 * j],
                              &flags[2 * j + 1]))
            goto done;
        if (cell_buffers("columns", offsets_obj, data_obj, first[2 * j], *n, flags[2 * j],
                         &v[3 * j]) < 0)
            goto done;
        if (get_buffer(PySequence_Fast_GET_ITEM(outs, j), &v[3 * j + 2], "out", *n * 8, 1) < 0) {
            PyBuffer_Release(&v[3 * j + 1]);
            PyBuffer_Release(&v[3 * j]);
            goto done;
        }
        got++;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < k && !bad; j++) {
        const char *offsets = (const char *)v[3 * j].buf;
        const unsigned char *data = (const unsigned char *)v[3 * j + 1].buf;
        Py_ssize_t len = v[3 * j + 1].len, at = first[2 * j], n = first[2 * j + 1], r = -1;
        int wide = flags[2 * j];
        verdict[j] = 't';
        if (!flags[2 * j + 1] && n) {  /* no missing cell: perhaps numbers */
            r = ints_of(offsets, wide, data, len, at, n, (int64_t *)v[3 * j + 2].buf);
            if (r == -1) {
                verdict[j] = 'i';
                continue;
            }
            Py_ssize_t unknowns = 0;
            int fraction = 0;
            if (r != OUT_OF_RANGE)
                r = floats_of(offsets, wide, data, len, at, n, (double *)v[3 * j + 2].buf, NULL,
                              &unknowns, &fraction, 0);
            if (r == -1) {  /* numbers' cells are ASCII: no UTF-8 check */
                verdict[j] = unknowns ? 'u' : fraction ? 'f' : 't';
                continue;
            }
        }
        if (r != OUT_OF_RANGE) r = utf8_of(offsets, wide, data, len, at, n);
        if (r >= 0) verdict[j] = 'x';
        bad = r == OUT_OF_RANGE;
    }
    Py_END_ALLOW_THREADS
    if (bad)
        PyErr_SetString(PyExc_ValueError, "columns: an offset is out of range");
    else
        result = PyBytes_FromStringAndSize(verdict, k);
done:
    for (Py_ssize_t j = 0; j < got; j++)
        for (int b = 2; b >= 0; b--) PyBuffer_Release(&v[3 * j + b]);
    PyMem_Free(v);
    PyMem_Free(first);
    PyMem_Free(flags);
    PyMem_Free(verdict);
    Py_DECREF(cells);
    Py_DECREF(outs);
    return result;
}

static PyMethodDef methods[] = {
    {"utf8_cells", utf8_cells, METH_VARARGS,
     "The first cell that is not UTF-8, or -1 (see the source)."},
    {"repr_floats", repr_floats, METH_VARARGS,
     "Prove each cell is its float's repr and parse it, in one pass (see the source)."},
    {"int_cells", int_cells, METH_VARARGS,
     "Parse each cell as the decimal form of an int64, in one pass (see the source)."},
    {"columns", columns, METH_VARARGS,
     "Every column of a table as ints, floats or text, in one call (see the source)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_readkernel",
                                    "The table reader's compiled float check.", -1, methods};

PyMODINIT_FUNC PyInit__readkernel(void) {
    pow5[0] = 1;
    for (int k = 1; k < 28; k++) pow5[k] = pow5[k - 1] * 5;
    for (int k = 0; k < 28; k++) pow5_bits[k] = bits64(pow5[k]);
    for (int p = -27; p <= 22; p++) {
        u128 ten = 1;  /* 10**|p| < 2**90 */
        for (int k = 0; k < (p < 0 ? -p : p); k++) ten *= 10;
        int b = 128 - (ten >> 64 ? __builtin_clzll((uint64_t)(ten >> 64))
                                 : 64 + __builtin_clzll((uint64_t)ten));  /* its bits */
        if (p >= 0) {  /* its top 64 bits */
            pow10_mant[p + 27] = (uint64_t)(ten << (128 - b) >> 64);
            pow10_exp[p + 27] = b - 64;
        } else {  /* floor(2**(b + 63) / 10**-p), by long division */
            u128 r = (u128)1 << (b - 1);
            uint64_t q = 0;
            for (int k = 0; k < 64; k++) {
                r <<= 1;
                q = q << 1 | (r >= ten);
                if (r >= ten) r -= ten;
            }
            pow10_mant[p + 27] = q;
            pow10_exp[p + 27] = -(b + 63);
        }
    }
    return PyModule_Create(&module);
}
