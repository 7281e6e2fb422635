/* The paired bootstrap's inner loop in one pass: draw an item, count its type; then
 * each resample's sums are its type counts times the types' rows.
 *
 * resample_sums(capsule, lookup, cols, vals, given_types, given, out)
 *
 *   capsule      numpy's bit generator (`Generator.bit_generator.capsule`); the
 *                caller holds `bit_generator.lock`.
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
 * No numpy headers are needed: only the bit generator's struct, stable since
 * numpy 1.17.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

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

static PyObject *resample_sums(PyObject *self, PyObject *args) {
    PyObject *capsule, *objs[6];
    if (!PyArg_ParseTuple(args, "OOOOOOO", &capsule, &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5]))
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

    const uint64_t h = high ? (uint64_t)high : 1;
    uint64_t big = h;
    int k = 1;
    while (k < 16 && big <= (UINT64_C(1) << 58) / h) {
        big *= h;
        k++;
    }
    const uint64_t threshold = (0 - big) % big; /* 2**64 mod N */
    const Py_ssize_t kr = k_row;
    uint32_t digit[16];
    int left = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < n_res; r++) {
        /* The draws are counted by type, in a table that stays in the cache: one
         * increment a draw, then each type's row once, times its count. */
        const int64_t *restrict g = given + r * (n_given + 1);
        for (Py_ssize_t i = 0; i < n_given; i++) count[given_types[i]] += (int32_t)g[i];
        for (int64_t j = g[n_given]; j > 0; j--) {
            if (left == 0) {
                uint64_t x;
                do {
                    x = bg->next_uint64(bg->state);
                    for (int i = 0; i < k; i++) digit[i] = (uint32_t)mul_high(x, h, &x);
                } while (x < threshold); /* x is now (u * N) mod 2**64 */
                left = k;
            }
            count[lookup[digit[k - left--]]]++;
        }
        double *restrict row = out + r * width;
        for (Py_ssize_t i = 0; i < width; i++) row[i] = 0.0;
        for (Py_ssize_t t = 0; t < n_types; t++) {
            const double c = count[t];
            count[t] = 0;
            for (Py_ssize_t q = 0; q < kr; q++) row[cols[t * kr + q]] += c * vals[t * kr + q];
        }
    }
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

static PyMethodDef methods[] = {
    {"resample_sums", resample_sums, METH_VARARGS,
     "Each resample's sums of its types' rows, given and drawn counts (see the source)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bootkernel",
                                    "The paired bootstrap's compiled inner loop.", -1, methods};

PyMODINIT_FUNC PyInit__bootkernel(void) { return PyModule_Create(&module); }
