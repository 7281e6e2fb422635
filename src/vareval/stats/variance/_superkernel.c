/* The numeric phase of the supernodal Cholesky factorisation (supernodal.py): the
 * multifrontal factorisation, the triangular solves and the selected inverse, each one
 * loop over the supernodes, as the numpy path in supernodal.py does them (see there for
 * the method); and the supernode partition's dynamic program. The numpy path pays tens
 * of microseconds of Python per supernode and call; here a supernode costs its flops
 * and a few BLAS calls, so the partition is tuned for narrower supernodes.
 *
 * Dense work inside a front goes to BLAS/LAPACK through the function pointers scipy
 * exports (scipy.linalg.cython_blas / cython_lapack `__pyx_capi__`) rather than plain C
 * loops: no link step, the same library (and threads setting) as the numpy path, and
 * the fronts with many rows (over a thousand below a root on the banded designs with
 * long-range links, where most flops are) run blocked code several times faster than
 * plain loops; a call from C costs well under a microsecond, so small fronts lose
 * little.
 *
 * plan(k, m, offset, parent, rows_ptr, rows, rel, kids_ptr, kids, last_child,
 *      bounds, assemble, rinv_offset) -> capsule
 *   The symbolic analysis, copied once (all int64; SparseCholesky._kernel_plan).
 *   Supernode j has k[j] columns and m[j] rows below them: its panel [L11' | L21']
 *   (k x (k + m), Fortran) at storage[offset[j]:], its parent supernode parent[j]
 *   (or -1), its rows below rows[rows_ptr[j]:rows_ptr[j+1]] (increasing) and their
 *   positions in the parent's front rel[...] (same range), its children
 *   kids[kids_ptr[j]:kids_ptr[j+1]] and last_child[j] the lowest-numbered one (or -1),
 *   its values' positions in [F11 | F12] assemble[bounds[j]:bounds[j+1]], and
 *   R^-1 = L11^-T at rinv[rinv_offset[j]:] (k x k, Fortran).
 * factor(plan, v, storage, rinv) -> 0, or 1 if not positive definite
 *   v: float64 values in assemble's order; storage (offset[-1],) and rinv
 *   (rinv_offset[-1],) float64, written.
 * solve(plan, storage, rinv, start, x, width): x float64 C-ordered (n, width) in the
 *   elimination order, overwritten by S^-1 x; start int64 (ns + 1,) the supernodes'
 *   first columns, then n.
 * inverse(plan, storage, rinv, out): out float64 (bounds[-1],) in assemble's order,
 *   the entries of S^-1 on the pattern.
 * partition(t_in, inner, low, t_out, c_in, c_out, cube, top, start) -> the supernodes' first
 *   columns as bytes of int64 (start: each column's cheapest start): see run_partition.
 * symbolic(ptr, ind) -> (ptr, ind) as bytes of int64: the structure of L (see there).
 * postorder(parent) -> (post, size) as bytes of int64 (see there).
 * argsort(key, size) -> order as bytes of int64 (see there).
 * positions(k, start, rows_ptr, rows, bounds, r, c, kids_ptr, kids) -> (assemble, rel)
 *   or None (see there).
 * amd(lo, hi, n[, dense]) -> perm as bytes of int64, or None (see there).
 * schur_pattern(ptr, ind, val, lo_col, lo_row, r, where, pind, pval) -> (keys, pptr) as
 *   bytes (see there).
 * components(a, b, n) -> labels as bytes of int64 (see there).
 * csr_product(ptr, ind, val, x, y, w): y = A x for a CSR matrix A (see there).
 * potrf, potrs, potri, trtrs, geqp3: single LAPACK calls for dense.py (see there).
 * Every call releases the GIL for its work (not for geqp3's workspace query).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void potrf_t(char *, int *, double *, int *, int *);
typedef void trtri_t(char *, char *, int *, double *, int *, int *);
typedef void trsm_t(char *, char *, char *, char *, int *, int *, double *, double *, int *,
                    double *, int *);
typedef void syrk_t(char *, char *, int *, int *, double *, double *, int *, double *, double *,
                    int *);
typedef void potrs_t(char *, int *, int *, double *, int *, double *, int *, int *);
typedef void trtrs_t(char *, char *, char *, int *, int *, double *, int *, double *, int *,
                     int *);
typedef void geqp3_t(int *, int *, double *, int *, int *, double *, double *, int *, int *);
typedef void gemm_t(char *, char *, int *, int *, int *, double *, double *, int *, double *,
                    int *, double *, double *, int *);

static potrf_t *dpotrf, *dpotri;
static potrs_t *dpotrs;
static trtrs_t *dtrtrs;
static geqp3_t *dgeqp3;
static trtri_t *dtrtri;
static trsm_t *dtrmm;
static syrk_t *dsyrk;
static gemm_t *dgemm;

typedef struct {
    int64_t ns, nvals, nstore, nrinv, maxkm, maxm;
    int64_t *k, *m, *offset, *parent, *rows_ptr, *rows, *rel, *kids_ptr, *kids, *last_child,
        *bounds, *assemble, *rinv_offset;
    void *block; /* one allocation holding every array */
} Plan;

static char cU = 'U', cL = 'L', cN = 'N', cT = 'T', cR = 'R';
static double one = 1.0, zero = 0.0, minus_one = -1.0;

static void plan_free(PyObject *capsule) {
    Plan *p = PyCapsule_GetPointer(capsule, "supernodal plan");
    if (p) {
        free(p->block);
        free(p);
    }
}

#define NARRAYS 13

static PyObject *plan(PyObject *self, PyObject *args) {
    Py_buffer b[NARRAYS];
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*y*", &b[0], &b[1], &b[2], &b[3], &b[4],
                          &b[5], &b[6], &b[7], &b[8], &b[9], &b[10], &b[11], &b[12]))
        return NULL;
    PyObject *result = NULL;
    Plan *p = calloc(1, sizeof(Plan));
    Py_ssize_t total = 0;
    for (int i = 0; i < NARRAYS; i++) total += b[i].len;
    if (!p || !(p->block = malloc(total + 8))) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t **dest[NARRAYS] = {&p->k,    &p->m,        &p->offset,   &p->parent, &p->rows_ptr,
                               &p->rows, &p->rel,      &p->kids_ptr, &p->kids,   &p->last_child,
                               &p->bounds, &p->assemble, &p->rinv_offset};
    char *at = p->block;
    for (int i = 0; i < NARRAYS; i++) {
        if (b[i].len % 8) {
            PyErr_SetString(PyExc_ValueError, "plan arrays must be int64");
            goto done;
        }
        memcpy(at, b[i].buf, b[i].len);
        *dest[i] = (int64_t *)at;
        at += b[i].len;
    }
    p->ns = b[0].len / 8;
    if (b[1].len / 8 != p->ns || b[2].len / 8 != p->ns + 1 || b[3].len / 8 != p->ns ||
        b[4].len / 8 != p->ns + 1 || b[6].len != b[5].len || b[7].len / 8 != p->ns + 1 ||
        b[9].len / 8 != p->ns || b[10].len / 8 != p->ns + 1 || b[12].len / 8 != p->ns + 1) {
        PyErr_SetString(PyExc_ValueError, "plan arrays of inconsistent sizes");
        goto done;
    }
    p->nvals = p->bounds[p->ns];
    p->nstore = p->offset[p->ns];
    p->nrinv = p->rinv_offset[p->ns];
    if (b[11].len / 8 != p->nvals) {
        PyErr_SetString(PyExc_ValueError, "plan arrays of inconsistent sizes");
        goto done;
    }
    for (int64_t j = 0; j < p->ns; j++) {
        if (p->k[j] * p->m[j] > p->maxkm) p->maxkm = p->k[j] * p->m[j];
        if (p->m[j] > p->maxm) p->maxm = p->m[j];
    }
    result = PyCapsule_New(p, "supernodal plan", plan_free);
done:
    for (int i = 0; i < NARRAYS; i++)
        if (b[i].obj) PyBuffer_Release(&b[i]);
    if (!result && p) {
        free(p->block);
        free(p);
    }
    return result;
}

static Plan *get_plan(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, "supernodal plan");
}

static int check(Py_buffer *buf, int64_t doubles, const char *name) {
    if (buf->len != doubles * 8) {
        PyErr_Format(PyExc_ValueError, "%s: expected %lld float64 values", name,
                     (long long)doubles);
        return 0;
    }
    return 1;
}

/* Ri = R^-1 (k x k, upper triangular, its lower part zero), or LAPACK's info. */
static int invert(int k, const double *R, double *Ri) {
    int info = 0;
    for (int64_t c = 0; c < k; c++)
        for (int64_t r = 0; r < k; r++) Ri[r + k * c] = r <= c ? R[r + k * c] : 0.0;
    dtrtri(&cU, &cN, &k, Ri, &k, &info);
    return info;
}

/* The multifrontal factorisation, and R^-1 of each supernode's diagonal block: returns
 * 0, 1 (not positive definite) or -1 (memory). */
static int run_factor(const Plan *p, const double *v, double *storage, double *rinv) {
    double **update = calloc(p->ns > 0 ? p->ns : 1, sizeof(double *));
    double *scratch = malloc(((size_t)p->maxkm + 1) * sizeof(double));
    int status = 0;
    if (!update || !scratch) {
        free(update);
        free(scratch);
        return -1;
    }
    for (int64_t j = 0; j < p->ns; j++) {
        int k = (int)p->k[j], m = (int)p->m[j], info = 0;
        int64_t ks = (int64_t)k * (k + m);
        double *panel = storage + p->offset[j], *F22 = NULL;
        memset(panel, 0, ks * sizeof(double));
        if (m && !(F22 = calloc((size_t)m * m, sizeof(double)))) {
            status = -1;
            break;
        }
        for (int64_t e = p->bounds[j]; e < p->bounds[j + 1]; e++) panel[p->assemble[e]] = v[e];
        for (int64_t t = p->kids_ptr[j]; t < p->kids_ptr[j + 1]; t++) { /* extend-add */
            int64_t c = p->kids[t], mc = p->m[c];
            const int64_t *rel = p->rel + p->rows_ptr[c];
            double *U = update[c]; /* lower triangle of the child's m x m update */
            for (int64_t bb = 0; bb < mc; bb++) {
                int64_t pb = rel[bb];
                const double *col = U + mc * bb;
                if (pb < k) /* row pb of [F11 | F12], columns rel[a] >= pb */
                    for (int64_t a = bb; a < mc; a++) panel[pb + (int64_t)k * rel[a]] += col[a];
                else {
                    double *dst = F22 + (int64_t)m * (pb - k) - k;
                    for (int64_t a = bb; a < mc; a++) dst[rel[a]] += col[a];
                }
            }
            free(U);
            update[c] = NULL;
        }
        dpotrf(&cU, &k, panel, &k, &info); /* F11 = R'R, R = L11' */
        double *Ri = rinv + p->rinv_offset[j];
        if (!info) info = invert(k, panel, Ri);
        if (info) {
            free(F22);
            status = 1;
            break;
        }
        if (m) {
            /* L21' = R^-T F12 as a product with R^-1 (needed anyway by the solves and
             * the inverse): at these sizes OpenBLAS's dgemm is faster than its dtrsm */
            double *W = panel + (int64_t)k * k;
            memcpy(scratch, W, (size_t)k * m * sizeof(double));
            dgemm(&cT, &cN, &k, &m, &k, &one, Ri, &k, scratch, &k, &zero, W, &k);
            dsyrk(&cL, &cT, &m, &k, &minus_one, W, &k, &one, F22, &m); /* F22 - L21 L21' */
            update[j] = F22;
        }
    }
    for (int64_t j = 0; j < p->ns; j++) free(update[j]);
    free(update);
    free(scratch);
    return status;
}

static PyObject *factor(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer v = {0}, storage = {0}, rinv = {0};
    if (!PyArg_ParseTuple(args, "Oy*w*w*", &capsule, &v, &storage, &rinv)) return NULL;
    PyObject *result = NULL;
    Plan *p = get_plan(capsule);
    if (p && check(&v, p->nvals, "v") && check(&storage, p->nstore, "storage") &&
        check(&rinv, p->nrinv, "rinv")) {
        int status;
        Py_BEGIN_ALLOW_THREADS status = run_factor(p, v.buf, storage.buf, rinv.buf);
        Py_END_ALLOW_THREADS if (status < 0) PyErr_NoMemory();
        else result = PyLong_FromLong(status);
    }
    PyBuffer_Release(&v);
    PyBuffer_Release(&storage);
    PyBuffer_Release(&rinv);
    return result;
}

/* x (n x w, C order) is, in BLAS's column-major terms, X' (w x n, leading dimension w):
 * supernode j's rows are the w x k block at column start[j]. L y = b is, per supernode,
 * y_J' = b_J' R^-1 then b_I' -= y_J' L21'; L' x = y is x_J' -= x_I' L21 then
 * x_J' = x_J' R^-T. */
static int run_solve(const Plan *p, const double *storage, const double *rinv,
                     const int64_t *start, double *x, int w) {
    double *T = malloc(((size_t)p->maxm * w + 1) * sizeof(double));
    if (!T) return -1;
    for (int64_t j = 0; j < p->ns; j++) {
        int k = (int)p->k[j], m = (int)p->m[j];
        double *xj = x + start[j] * w;
        const double *Ri = rinv + p->rinv_offset[j];
        dtrmm(&cR, &cU, &cN, &cN, &w, &k, &one, (double *)Ri, &k, xj, &w);
        if (m) {
            const int64_t *rows = p->rows + p->rows_ptr[j];
            double *W = (double *)storage + p->offset[j] + (int64_t)k * k;
            dgemm(&cN, &cN, &w, &m, &k, &one, xj, &w, W, &k, &zero, T, &w);
            for (int a = 0; a < m; a++) {
                double *dst = x + rows[a] * w;
                const double *src = T + (int64_t)w * a;
                for (int c = 0; c < w; c++) dst[c] -= src[c];
            }
        }
    }
    for (int64_t j = p->ns - 1; j >= 0; j--) {
        int k = (int)p->k[j], m = (int)p->m[j];
        double *xj = x + start[j] * w;
        const double *Ri = rinv + p->rinv_offset[j];
        if (m) {
            const int64_t *rows = p->rows + p->rows_ptr[j];
            double *W = (double *)storage + p->offset[j] + (int64_t)k * k;
            for (int a = 0; a < m; a++) memcpy(T + (int64_t)w * a, x + rows[a] * w, w * sizeof(double));
            dgemm(&cN, &cT, &w, &k, &m, &minus_one, T, &w, W, &k, &one, xj, &w);
        }
        dtrmm(&cR, &cU, &cT, &cN, &w, &k, &one, (double *)Ri, &k, xj, &w);
    }
    free(T);
    return 0;
}

static PyObject *solve(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer storage = {0}, rinv = {0}, start = {0}, x = {0};
    int w;
    if (!PyArg_ParseTuple(args, "Oy*y*y*w*i", &capsule, &storage, &rinv, &start, &x, &w))
        return NULL;
    PyObject *result = NULL;
    Plan *p = get_plan(capsule);
    if (p && check(&storage, p->nstore, "storage") && check(&rinv, p->nrinv, "rinv")) {
        const int64_t *s = start.buf;
        if (start.len != (p->ns + 1) * 8 || w < 1 || x.len != s[p->ns] * w * 8)
            PyErr_SetString(PyExc_ValueError, "solve: start or x of the wrong size");
        else {
            int status;
            Py_BEGIN_ALLOW_THREADS status = run_solve(p, storage.buf, rinv.buf, s, x.buf, w);
            Py_END_ALLOW_THREADS if (status < 0) PyErr_NoMemory();
            else result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&storage);
    PyBuffer_Release(&rinv);
    PyBuffer_Release(&start);
    PyBuffer_Release(&x);
    return result;
}

/* The Takahashi equations from the root down. Supernode j's front is
 * [Z_JJ | Z_IJ'] (k x (k + m), Fortran; Z_JJ's upper triangle is read) then Z_II
 * (m x m, both triangles); it lives until its lowest-numbered child has read it.
 * With Ri = R^-1 and G = -Ri L21' (k x m): Z_IJ' = G Z_II, Z_JJ = Ri Ri' + G Z_IJ. */
static int run_inverse(const Plan *p, const double *storage, const double *rinv, double *out) {
    double **fronts = calloc(p->ns > 0 ? p->ns : 1, sizeof(double *));
    double *G = malloc(((size_t)p->maxkm + 1) * sizeof(double));
    int status = 0;
    if (!fronts || !G) {
        free(fronts);
        free(G);
        return -1;
    }
    for (int64_t j = p->ns - 1; j >= 0; j--) {
        int k = (int)p->k[j], m = (int)p->m[j];
        int64_t kk = (int64_t)k * k, ks = kk + (int64_t)k * m;
        const double *Ri = rinv + p->rinv_offset[j];
        double *buf = malloc(((size_t)ks + (size_t)m * m) * sizeof(double));
        if (!buf) {
            status = -1;
            break;
        }
        memcpy(buf, Ri, kk * sizeof(double));
        dtrmm(&cR, &cU, &cT, &cN, &k, &k, &one, (double *)Ri, &k, buf, &k); /* Ri Ri' */
        if (m) {
            int64_t q = p->parent[j], kp = p->k[q], mp = p->m[q];
            const int64_t *rel = p->rel + p->rows_ptr[j];
            const double *P = fronts[q], *P22 = P + kp * (kp + mp);
            double *Zii = buf + ks, *ZijT = buf + kk;
            for (int64_t bb = 0; bb < m; bb++) { /* Z_II from the parent's front */
                int64_t pb = rel[bb];
                for (int64_t a = bb; a < m; a++) {
                    int64_t pa = rel[a]; /* > pb */
                    double z = pb < kp ? P[pb + kp * pa] : P22[(pa - kp) + mp * (pb - kp)];
                    Zii[a + m * bb] = Zii[bb + m * a] = z;
                }
            }
            if (p->last_child[q] == j) {
                free(fronts[q]);
                fronts[q] = NULL;
            }
            memcpy(G, storage + p->offset[j] + kk, (size_t)k * m * sizeof(double));
            dtrmm(&cL, &cU, &cN, &cN, &k, &m, &minus_one, (double *)Ri, &k, G, &k); /* -Ri L21' */
            dgemm(&cN, &cN, &k, &m, &m, &one, G, &k, Zii, &m, &zero, ZijT, &k);
            dgemm(&cN, &cT, &k, &k, &m, &one, G, &k, ZijT, &k, &one, buf, &k);
        }
        for (int64_t e = p->bounds[j]; e < p->bounds[j + 1]; e++) out[e] = buf[p->assemble[e]];
        if (p->last_child[j] >= 0)
            fronts[j] = buf;
        else
            free(buf);
    }
    for (int64_t j = 0; j < p->ns; j++) free(fronts[j]);
    free(fronts);
    free(G);
    return status;
}

static PyObject *inverse(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer storage = {0}, rinv = {0}, out = {0};
    if (!PyArg_ParseTuple(args, "Oy*y*w*", &capsule, &storage, &rinv, &out)) return NULL;
    PyObject *result = NULL;
    Plan *p = get_plan(capsule);
    if (p && check(&storage, p->nstore, "storage") && check(&rinv, p->nrinv, "rinv") &&
        check(&out, p->nvals, "out")) {
        int status;
        Py_BEGIN_ALLOW_THREADS status = run_inverse(p, storage.buf, rinv.buf, out.buf);
        Py_END_ALLOW_THREADS if (status < 0) PyErr_NoMemory();
        else result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&storage);
    PyBuffer_Release(&rinv);
    PyBuffer_Release(&out);
    return result;
}

/* The least best[a] + cube[top - t + a] over [a0, a1), and the first such a. */
static void cheapest(const double *best, const double *cube, int64_t top, int64_t t, int64_t a0,
                     int64_t a1, double *val, int64_t *arg) {
    double v = best[a0] + cube[top - t + a0];
    int64_t at = a0;
    for (int64_t a = a0 + 1; a < a1; a++) {
        double w = best[a] + cube[top - t + a];
        if (w < v) {
            v = w;
            at = a;
        }
    }
    *val = v;
    *arg = at;
}

/* supernodal._partition's dynamic program, step for step (the same sums of the same
 * doubles, the first start among equal costs), so it gives the same partition. */
static void run_partition(int64_t n, const int64_t *t_in, const int64_t *inner,
                          const int64_t *low, const int64_t *t_out, const double *c_in,
                          const double *c_out, const double *cube, int64_t top, double *best,
                          int64_t *start) {
    int64_t t_cur = 0, a_cur = 0, arg = 0;
    double val = 0.0;
    best[0] = 0.0;
    for (int64_t b = 0; b < n; b++) {
        int64_t t = t_in[b], a_in = inner[b];
        if (t == t_cur && a_in >= a_cur && arg >= a_in) { /* the same costs, and b's */
            double v = best[b] + cube[top - t + b];
            if (v < val) {
                val = v;
                arg = b;
            }
        } else {
            cheapest(best, cube, top, t, a_in, b + 1, &val, &arg);
            t_cur = t;
            a_cur = a_in;
        }
        double cost = val + c_in[b];
        int64_t a = arg;
        if (low[b] < a_in) { /* ranges from earlier siblings' subtrees */
            double v;
            int64_t i;
            cheapest(best, cube, top, t_out[b], low[b], a_in, &v, &i);
            if (v + c_out[b] <= cost) {
                cost = v + c_out[b];
                a = i;
            }
        }
        best[b + 1] = cost;
        start[b] = a;
    }
}

static PyObject *partition(PyObject *self, PyObject *args) {
    Py_buffer b[8], start = {0};
    long long top;
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*Lw*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                          &b[6], &top, &start))
        return NULL;
    PyObject *result = NULL;
    int64_t n = b[0].len / 8;
    int ok = start.len == n * 8 && b[6].len == (top + 1) * 8;
    for (int i = 1; i < 6; i++) ok = ok && b[i].len == n * 8;
    double *best = ok ? malloc((n + 1) * sizeof(double)) : NULL;
    int64_t *first = ok ? malloc((n + 1) * sizeof(int64_t)) : NULL, count = 0;
    if (!ok)
        PyErr_SetString(PyExc_ValueError, "partition: arrays of inconsistent sizes");
    else if (!best || !first)
        PyErr_NoMemory();
    else {
        const int64_t *st = start.buf;
        Py_BEGIN_ALLOW_THREADS run_partition(n, b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf,
                                             b[5].buf, b[6].buf, top, best, start.buf);
        for (int64_t e = n - 1; e >= 0; e = st[e] - 1) first[count++] = st[e]; /* back */
        for (int64_t t = 0; t < count / 2; t++) { /* increasing */
            int64_t x = first[t];
            first[t] = first[count - 1 - t];
            first[count - 1 - t] = x;
        }
        Py_END_ALLOW_THREADS result = PyBytes_FromStringAndSize((char *)first, count * 8);
    }
    free(best);
    free(first);
    for (int i = 0; i < 7; i++) PyBuffer_Release(&b[i]);
    PyBuffer_Release(&start);
    return result;
}

/* argsort(key, size) -> order as bytes of int64: numpy's stable argsort of int64 keys
 * in [0, size), size <= 2**32, by a least-significant-digit radix sort on two 16-bit
 * digits (one when size <= 2**16): O(n), two passes over the keys. */
static PyObject *argsort(PyObject *self, PyObject *args) {
    Py_buffer kb = {0};
    long long size;
    if (!PyArg_ParseTuple(args, "y*L", &kb, &size)) return NULL;
    PyObject *result = NULL;
    const int64_t *key = kb.buf;
    int64_t n = kb.len / 8, *order = NULL, *tmp = NULL, *cnt = NULL;
    int ok = kb.len % 8 == 0 && size >= 0 && size <= (1LL << 32);
    for (int64_t t = 0; ok && t < n; t++) ok = key[t] >= 0 && key[t] < size;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "argsort: keys outside [0, size) or size > 2**32");
        goto done;
    }
    order = malloc((n + 1) * sizeof(int64_t));
    tmp = malloc((n + 1) * sizeof(int64_t));
    cnt = malloc((65536 + 1) * sizeof(int64_t));
    if (!order || !tmp || !cnt) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    int passes = size > 65536 ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        int shift = 16 * pass;
        int64_t *out = pass == passes - 1 ? order : tmp;
        memset(cnt, 0, (65536 + 1) * sizeof(int64_t));
        for (int64_t t = 0; t < n; t++) cnt[((key[t] >> shift) & 0xFFFF) + 1]++;
        for (int d = 0; d < 65536; d++) cnt[d + 1] += cnt[d];
        for (int64_t t = 0; t < n; t++) { /* pass 0 in index order, pass 1 in tmp's */
            int64_t i = pass ? tmp[t] : t;
            out[cnt[(key[i] >> shift) & 0xFFFF]++] = i;
        }
    }
    Py_END_ALLOW_THREADS
    result = PyBytes_FromStringAndSize((char *)order, n * sizeof(int64_t));
done:
    free(order);
    free(tmp);
    free(cnt);
    PyBuffer_Release(&kb);
    return result;
}

/* positions(k, start, rows_ptr, rows, bounds, r, c, kids_ptr, kids) -> (assemble, rel)
 * as bytes of int64 (supernodal.SparseCholesky._positions): with the pairs (r >= c)
 * grouped by supernode (bounds), each value's position c - start + at k in its front's
 * [F11 | F12], at being r's position in the front (its columns, then its rows below);
 * and each supernode's rows below as positions in its parent's front. One pass over
 * the fronts with a table row -> position; None if a row is missing from a front. */
static PyObject *positions(PyObject *self, PyObject *args) {
    Py_buffer b[9];
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                          &b[6], &b[7], &b[8]))
        return NULL;
    PyObject *result = NULL, *ao = NULL, *ro = NULL;
    const int64_t *k = b[0].buf, *start = b[1].buf, *rows_ptr = b[2].buf, *rows = b[3].buf,
                  *bounds = b[4].buf, *r = b[5].buf, *c = b[6].buf, *kids_ptr = b[7].buf,
                  *kids = b[8].buf;
    int64_t ns = b[0].len / 8, nrows = b[3].len / 8, npairs = b[5].len / 8, n = 0;
    int64_t nkids = b[8].len / 8, *pos = NULL, *stamp = NULL, *assemble = NULL, *rel = NULL;
    int ok = b[1].len == b[0].len && b[2].len / 8 == ns + 1 && b[4].len / 8 == ns + 1 &&
             b[6].len == b[5].len && b[7].len / 8 == ns + 1;
    for (int i = 0; i < 9; i++) ok = ok && b[i].len % 8 == 0;
    for (int64_t j = 0; ok && j < ns; j++) {
        ok = k[j] >= 1 && start[j] == n && rows_ptr[j] <= rows_ptr[j + 1] &&
             bounds[j] <= bounds[j + 1] && kids_ptr[j] <= kids_ptr[j + 1];
        n += k[j];
    }
    ok = ok && rows_ptr[0] == 0 && bounds[0] == 0 && kids_ptr[0] == 0;
    ok = ok && rows_ptr[ns] == nrows && bounds[ns] == npairs && kids_ptr[ns] == nkids;
    for (int64_t t = 0; ok && t < nrows; t++) ok = rows[t] >= 0 && rows[t] < n;
    for (int64_t t = 0; ok && t < npairs; t++) ok = r[t] >= 0 && r[t] < n && c[t] >= 0 && c[t] < n;
    for (int64_t t = 0; ok && t < nkids; t++) ok = kids[t] >= 0 && kids[t] < ns;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "positions: arrays of inconsistent sizes");
        goto done;
    }
    pos = malloc((n + 1) * sizeof(int64_t));
    stamp = malloc((n + 1) * sizeof(int64_t));
    assemble = malloc((npairs + 1) * sizeof(int64_t));
    rel = malloc((nrows + 1) * sizeof(int64_t));
    if (!pos || !stamp || !assemble || !rel) {
        PyErr_NoMemory();
        goto done;
    }
    int missing = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) stamp[i] = -1;
    for (int64_t j = 0; j < ns && !missing; j++) {
        for (int64_t i = 0; i < k[j]; i++) { /* the front's columns, then its rows */
            pos[start[j] + i] = i;
            stamp[start[j] + i] = j;
        }
        for (int64_t t = rows_ptr[j]; t < rows_ptr[j + 1]; t++) {
            pos[rows[t]] = k[j] + t - rows_ptr[j];
            stamp[rows[t]] = j;
        }
        for (int64_t e = bounds[j]; e < bounds[j + 1]; e++) {
            if (stamp[r[e]] != j || stamp[c[e]] != j || pos[c[e]] >= k[j]) missing = 1;
            assemble[e] = c[e] - start[j] + pos[r[e]] * k[j];
        }
        for (int64_t t = kids_ptr[j]; t < kids_ptr[j + 1]; t++) {
            int64_t child = kids[t];
            for (int64_t u = rows_ptr[child]; u < rows_ptr[child + 1]; u++) {
                if (stamp[rows[u]] != j) missing = 1;
                rel[u] = pos[rows[u]];
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (missing) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    ao = PyBytes_FromStringAndSize((char *)assemble, npairs * sizeof(int64_t));
    ro = ao ? PyBytes_FromStringAndSize((char *)rel, nrows * sizeof(int64_t)) : NULL;
    if (ro) result = PyTuple_Pack(2, ao, ro);
done:
    Py_XDECREF(ao);
    Py_XDECREF(ro);
    free(pos);
    free(stamp);
    free(assemble);
    free(rel);
    for (int i = 0; i < 9; i++) PyBuffer_Release(&b[i]);
    return result;
}

/* postorder(parent) -> (post, size) as bytes of int64: supernodal._postorder and
 * _subtree_sizes on an elimination forest (parent[j] > j, or -1 for a root): the
 * nodes depth first, children largest subtree first (ties by index), roots in index
 * order; and each node's subtree size. */
static const int64_t *sibling_size; /* the comparator's sizes (the GIL is held) */

static int by_size(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    if (sibling_size[a] != sibling_size[b]) return sibling_size[a] > sibling_size[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

static PyObject *postorder(PyObject *self, PyObject *args) {
    Py_buffer par = {0};
    if (!PyArg_ParseTuple(args, "y*", &par)) return NULL;
    PyObject *result = NULL, *po = NULL, *so = NULL;
    const int64_t *parent = par.buf;
    int64_t n = par.len / 8, *size = NULL, *post = NULL, *begin = NULL, *order = NULL,
            *group = NULL;
    int ok = par.len % 8 == 0;
    for (int64_t j = 0; ok && j < n; j++) ok = parent[j] == -1 || (parent[j] > j && parent[j] < n);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "postorder: not an elimination forest");
        goto done;
    }
    size_t bytes = (n + 2) * sizeof(int64_t);
    size = malloc(bytes), post = malloc(bytes), begin = malloc(bytes), order = malloc(bytes);
    group = calloc(n + 2, sizeof(int64_t));
    if (!size || !post || !begin || !order || !group) {
        PyErr_NoMemory();
        goto done;
    }
    for (int64_t j = 0; j < n; j++) size[j] = 1;
    for (int64_t j = 0; j < n; j++) /* children before their parents */
        if (parent[j] >= 0) size[parent[j]] += size[j];
    /* siblings grouped by parent (roots first), each group by index, then by size */
    for (int64_t j = 0; j < n; j++) group[parent[j] + 2]++;
    for (int64_t g = 0; g <= n; g++) group[g + 1] += group[g];
    for (int64_t j = 0; j < n; j++) order[group[parent[j] + 1]++] = j;
    /* now group[p + 1] is the end of p's children, group[p] their start */
    sibling_size = size;
    for (int64_t p = 0; p < n; p++)
        if (group[p + 1] - group[p] > 1)
            qsort(order + group[p], group[p + 1] - group[p], sizeof(int64_t), by_size);
    int64_t cursor = 0;
    for (int64_t t = 0; t < group[0]; t++) { /* roots, by index */
        begin[order[t]] = cursor;
        cursor += size[order[t]];
    }
    for (int64_t p = n - 1; p >= 0; p--) { /* a parent's position is known before its children's */
        cursor = begin[p];
        for (int64_t t = group[p]; t < group[p + 1]; t++) {
            begin[order[t]] = cursor;
            cursor += size[order[t]];
        }
    }
    for (int64_t j = 0; j < n; j++) post[begin[j] + size[j] - 1] = j;
    po = PyBytes_FromStringAndSize((char *)post, n * sizeof(int64_t));
    so = po ? PyBytes_FromStringAndSize((char *)size, n * sizeof(int64_t)) : NULL;
    if (so) result = PyTuple_Pack(2, po, so);
done:
    Py_XDECREF(po);
    Py_XDECREF(so);
    free(size);
    free(post);
    free(begin);
    free(order);
    free(group);
    PyBuffer_Release(&par);
    return result;
}

/* The strictly lower structure of L, column by column (supernodal._elimination): column
 * j holds A's rows below j and its children's rows below j, a child being a column
 * whose first row below the diagonal is j; each column's rows in the order found. */
static PyObject *symbolic(PyObject *self, PyObject *args) {
    Py_buffer ptr = {0}, ind = {0};
    if (!PyArg_ParseTuple(args, "y*y*", &ptr, &ind)) return NULL;
    PyObject *result = NULL;
    int64_t n = ptr.len / 8 - 1, size = 0, cap = 0;
    const int64_t *ap = ptr.buf, *ai = ind.buf;
    int64_t *lp = NULL, *li = NULL, *mark = NULL, *head = NULL, *next = NULL;
    int ok = n >= 0 && ap[0] == 0 && ap[n] * 8 == ind.len;
    for (int64_t j = 0; ok && j < n; j++) ok = ap[j] <= ap[j + 1];
    for (int64_t e = 0; ok && n >= 0 && e < ap[n]; e++) ok = ai[e] >= 0 && ai[e] < n;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "symbolic: not a CSC pattern");
        goto done;
    }
    cap = 2 * ap[n] + n + 1;
    lp = malloc((n + 1) * sizeof(int64_t));
    li = malloc(cap * sizeof(int64_t));
    mark = malloc((n + 1) * sizeof(int64_t));
    head = malloc((n + 1) * sizeof(int64_t));
    next = malloc((n + 1) * sizeof(int64_t));
    if (!lp || !li || !mark || !head || !next) {
        PyErr_NoMemory();
        goto done;
    }
    for (int64_t j = 0; j < n; j++) mark[j] = head[j] = -1;
    lp[0] = 0;
    for (int64_t j = 0; j < n; j++) {
        int64_t first = -1;
        mark[j] = j;
        for (int pass = 0; pass < 2; pass++) {
            /* A's column j, then each child's rows */
            for (int64_t c = pass ? head[j] : j; c >= 0; c = pass ? next[c] : -1) {
                const int64_t *rows = pass ? li + lp[c] : ai + ap[j];
                int64_t count = pass ? lp[c + 1] - lp[c] : ap[j + 1] - ap[j];
                if (size + count > cap) {
                    int64_t *grown = realloc(li, (cap = 2 * cap + count) * sizeof(int64_t));
                    if (!grown) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    li = grown;
                    rows = pass ? li + lp[c] : ai + ap[j];
                }
                for (int64_t t = 0; t < count; t++) {
                    int64_t i = rows[t];
                    if (i > j && mark[i] != j) {
                        mark[i] = j;
                        li[size++] = i;
                        if (first < 0 || i < first) first = i;
                    }
                }
            }
        }
        lp[j + 1] = size;
        if (first >= 0) { /* j is a child of its first row below */
            next[j] = head[first];
            head[first] = j;
        }
    }
    {
        PyObject *p = PyBytes_FromStringAndSize((char *)lp, (n + 1) * sizeof(int64_t));
        PyObject *i = p ? PyBytes_FromStringAndSize((char *)li, size * sizeof(int64_t)) : NULL;
        if (i) result = PyTuple_Pack(2, p, i);
        Py_XDECREF(p);
        Py_XDECREF(i);
    }
done:
    free(lp);
    free(li);
    free(mark);
    free(head);
    free(next);
    PyBuffer_Release(&ptr);
    PyBuffer_Release(&ind);
    return result;
}

/* ---- The approximate minimum degree ordering (Amestoy, Davis & Duff 1996) ----
 *
 * Minimum degree on the quotient graph: an eliminated variable becomes an element
 * (the clique of its uneliminated neighbours, stored as one list), and each variable
 * keeps a list of its adjacent elements followed by its adjacent variables not yet
 * covered by a common element. The degree of a variable is not computed exactly but
 * bounded above (the paper's approximate external degree): with p the pivot and Lp
 * its element,
 *   d_i <= min(n_left - |i|, d_i(old) + |Lp \ i|, |A_i| + |Lp \ i| + sum_e |Le \ Lp|),
 * the last sum over i's other elements, each |Le \ Lp| found for all of them at once
 * in one pass over the elements adjacent to Lp. Elements with Le inside Lp are
 * absorbed into p (aggressive absorption); variables of Lp whose only neighbour is p
 * are eliminated with it (mass elimination); variables with the same lists are
 * merged into one supervariable (found by a hash of the lists, then compared).
 * Dense variables, adjacent to more than half of the others and to more than
 * max(16, dense sqrt(n)) (dense = 40 by default: the paper's 10 left out so many of
 * InstEval's levels that fill grew 2.6 % over SuperLU's MMD, 1.05 % with 40), are left
 * out and ordered last: each would be in almost every Lp, its lists scanned each time
 * (67 ms instead of 1.6 ms on the banded design's 5,000 levels and 12 tasks).
 * Weights: nv[i] the number of variables in supervariable i; degrees count them.
 *
 * Only the ordering comes from here: the structure of L is derived from the
 * permuted pattern (symbolic), so the ordering affects fill and time, never the
 * factor's correctness.
 */
enum { VAR = 0, ELEM = 1, DEAD = 2, DENSE = 3 };

typedef struct {
    int64_t n, iwlen, pfree;
    int64_t *iw, *pe, *len, *elen, *nv, *deg, *head, *next, *prev, *w, *hhead, *hnext, *mk,
        *chain, *tail, *tmp;
    char *kind;
} Amd;

static void amd_insert(Amd *a, int64_t i, int64_t d) {
    a->prev[i] = -1;
    a->next[i] = a->head[d];
    if (a->head[d] >= 0) a->prev[a->head[d]] = i;
    a->head[d] = i;
}

static void amd_remove(Amd *a, int64_t i) {
    if (a->prev[i] >= 0)
        a->next[a->prev[i]] = a->next[i];
    else
        a->head[a->deg[i]] = a->next[i];
    if (a->next[i] >= 0) a->prev[a->next[i]] = a->prev[i];
}

/* Compact the live lists to the front of iw (each list's first entry is replaced by
 * -(owner + 1) to find it in one pass) and make room for `need` more entries. */
static int amd_compact(Amd *a, int64_t need) {
    int64_t n = a->n, *iw = a->iw, r = 0, w = 0;
    for (int64_t i = 0; i < n; i++)
        if (a->kind[i] != DEAD && a->pe[i] >= 0 && a->len[i] > 0) {
            a->tmp[i] = iw[a->pe[i]];
            iw[a->pe[i]] = -(i + 1);
        }
    while (r < a->pfree) {
        if (iw[r] < 0) {
            int64_t i = -iw[r] - 1, L = a->len[i];
            iw[w] = a->tmp[i];
            memmove(iw + w + 1, iw + r + 1, (L - 1) * sizeof(int64_t));
            a->pe[i] = w;
            w += L;
            r += L;
        } else
            r++;
    }
    a->pfree = w;
    if (w + need > a->iwlen) {
        int64_t size = (w + need) + (w + need) / 2;
        int64_t *grown = realloc(a->iw, size * sizeof(int64_t));
        if (!grown) return -1;
        a->iw = grown;
        a->iwlen = size;
    }
    return 0;
}

/* perm (n): the elimination order, from the symmetric pattern without its diagonal
 * (ptr, adj: each column's neighbours). Returns 0, -1 (memory) or -2 (an internal
 * inconsistency: the caller falls back to another ordering). */
static int amd_order(int64_t n, const int64_t *ptr, const int64_t *adj, double dense,
                     int64_t *perm) {
    Amd a = {0};
    int status = -1;
    int64_t nnz = ptr[n];
    a.n = n;
    a.iwlen = nnz + nnz / 5 + 2 * n + 16;
    a.iw = malloc(a.iwlen * sizeof(int64_t));
    int64_t **arrays[] = {&a.pe, &a.len, &a.elen, &a.nv,    &a.deg,   &a.head,  &a.next, &a.prev,
                          &a.w,  &a.hhead, &a.hnext, &a.mk, &a.chain, &a.tail, &a.tmp};
    int narrays = sizeof arrays / sizeof *arrays, ok = a.iw != NULL;
    for (int t = 0; t < narrays; t++) ok = ok && (*arrays[t] = malloc((n + 1) * sizeof(int64_t)));
    a.kind = malloc(n + 1);
    if (!ok || !a.kind) goto done;
    status = -2;
    int64_t out = 0, left = 0, mindeg = 0, wflg = 1, stamp = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t d = ptr[i + 1] - ptr[i];
        int wide = d > 16 && 2 * d > n && (double)d * d > dense * dense * (double)n;
        a.kind[i] = dense >= 0 && wide ? DENSE : VAR;
        a.nv[i] = 1;
        a.w[i] = a.mk[i] = 0;
        a.chain[i] = -1;
        a.tail[i] = i;
        a.hhead[i] = -1;
        a.head[i] = -1;
    }
    a.head[n] = -1;
    for (int64_t i = 0; i < n; i++) {
        a.pe[i] = a.pfree;
        a.elen[i] = 0;
        if (a.kind[i] == DENSE) {
            a.pe[i] = -1;
            a.len[i] = 0;
            continue;
        }
        for (int64_t t = ptr[i]; t < ptr[i + 1]; t++)
            if (adj[t] != i && a.kind[adj[t]] == VAR) a.iw[a.pfree++] = adj[t];
        a.len[i] = a.deg[i] = a.pfree - a.pe[i];
        left++;
    }
    for (int64_t i = n - 1; i >= 0; i--) /* the lowest index first among equal degrees */
        if (a.kind[i] == VAR) amd_insert(&a, i, a.deg[i]);
    int64_t *iw;
    while (left > 0) {
        /* the pivot: a variable of least degree */
        while (mindeg < n && a.head[mindeg] < 0) mindeg++;
        if (mindeg >= n) goto done;
        int64_t p = a.head[mindeg];
        amd_remove(&a, p);
        int64_t nvp = a.nv[p];
        left -= nvp;
        a.nv[p] = -nvp;
        /* room for Lp: its size is at most p's degree (an upper bound), checked below */
        int64_t room = a.deg[p] + 1;
        if (a.pfree + room > a.iwlen && amd_compact(&a, room) < 0) {
            status = -1;
            goto done;
        }
        int64_t limit = a.pfree + room;
        iw = a.iw;
        /* its element Lp: the variables of its elements (absorbed) and its own */
        int64_t lp = a.pfree, degme = 0, ps = a.pe[p];
        for (int64_t t = 0; t < a.len[p]; t++) {
            int64_t x = iw[ps + t], s0 = x, s1 = x + 1;
            if (t < a.elen[p]) {
                if (a.kind[x] != ELEM) continue;
                s0 = a.pe[x];
                s1 = s0 + a.len[x];
                a.kind[x] = DEAD;
                a.pe[x] = -1;
            }
            for (int64_t s = s0; s < s1; s++) {
                int64_t j = t < a.elen[p] ? iw[s] : x;
                if (a.kind[j] == VAR && a.nv[j] > 0) {
                    if (a.pfree == limit) goto done; /* a degree below |Lp|: cannot happen */
                    degme += a.nv[j];
                    a.nv[j] = -a.nv[j];
                    iw[a.pfree++] = j;
                    amd_remove(&a, j);
                }
            }
        }
        int64_t lpend = a.pfree;
        a.kind[p] = ELEM;
        a.pe[p] = lp;
        a.len[p] = lpend - lp;
        a.elen[p] = -1;
        /* |Le \ Lp| for every element adjacent to Lp: w[e] - wflg */
        for (int64_t t = lp; t < lpend; t++) {
            int64_t i = iw[t], nvi = -a.nv[i];
            for (int64_t s = a.pe[i]; s < a.pe[i] + a.elen[i]; s++) {
                int64_t e = iw[s];
                if (a.kind[e] != ELEM) continue;
                if (a.w[e] < wflg) a.w[e] = a.deg[e] + wflg;
                a.w[e] -= nvi;
            }
        }
        /* each variable of Lp: prune its lists, add p, bound its degree, hash its lists */
        for (int64_t t = lp; t < lpend; t++) {
            int64_t i = iw[t], nvi = -a.nv[i], s0 = a.pe[i], wr = s0, dext = 0;
            uint64_t h = 0;
            for (int64_t s = s0; s < s0 + a.elen[i]; s++) {
                int64_t e = iw[s];
                if (a.kind[e] != ELEM) continue;
                int64_t we = a.w[e] - wflg;
                if (we > 0) {
                    dext += we;
                    iw[wr++] = e;
                    h += (uint64_t)e;
                } else { /* Le inside Lp: absorbed into p */
                    a.kind[e] = DEAD;
                    a.pe[e] = -1;
                }
            }
            int64_t vs = wr;
            for (int64_t s = s0 + a.elen[i]; s < s0 + a.len[i]; s++) {
                int64_t j = iw[s];
                if (a.kind[j] == VAR && a.nv[j] > 0) {
                    dext += a.nv[j];
                    iw[wr++] = j;
                    h += (uint64_t)j;
                }
            }
            if (vs == s0 && wr == vs) { /* p is its only neighbour: eliminated with p */
                a.kind[i] = DEAD;
                a.pe[i] = -1;
                a.nv[i] = 0;
                left -= nvi;
                a.chain[a.tail[p]] = i;
                a.tail[p] = a.tail[i];
                continue;
            }
            if (wr + 1 > s0 + a.len[i]) goto done; /* no room for p: cannot happen */
            iw[wr] = iw[vs]; /* p after the elements, the first variable moved last */
            iw[vs] = p;
            a.elen[i] = vs - s0 + 1;
            a.len[i] = wr - s0 + 1;
            h += (uint64_t)p;
            int64_t d = a.deg[i] + degme - nvi, d2 = dext + degme - nvi;
            a.deg[i] = d < d2 ? d : d2;
            int64_t b = (int64_t)(h % (uint64_t)n);
            a.prev[i] = b; /* its hash bucket (it is in no degree list now) */
            a.hnext[i] = a.hhead[b];
            a.hhead[b] = i;
        }
        /* supervariables: variables of Lp with the same lists are merged */
        for (int64_t t = lp; t < lpend; t++) {
            int64_t b = a.kind[iw[t]] == VAR ? a.prev[iw[t]] : -1;
            if (b < 0 || a.hhead[b] < 0) continue;
            for (int64_t i = a.hhead[b]; i >= 0; i = a.hnext[i]) {
                if (a.hnext[i] < 0) break;
                stamp++;
                for (int64_t s = a.pe[i]; s < a.pe[i] + a.len[i]; s++) a.mk[iw[s]] = stamp;
                int64_t before = i;
                for (int64_t j = a.hnext[i]; j >= 0; j = a.hnext[j]) {
                    int same = a.len[j] == a.len[i] && a.elen[j] == a.elen[i];
                    for (int64_t s = a.pe[j]; same && s < a.pe[j] + a.len[j]; s++)
                        same = a.mk[iw[s]] == stamp;
                    if (!same) {
                        before = j;
                        continue;
                    }
                    a.nv[i] += a.nv[j]; /* both negative while in Lp */
                    a.deg[i] += a.nv[j];
                    a.kind[j] = DEAD;
                    a.pe[j] = -1;
                    a.nv[j] = 0;
                    a.chain[a.tail[i]] = j;
                    a.tail[i] = a.tail[j];
                    a.hnext[before] = a.hnext[j];
                }
            }
            a.hhead[b] = -1;
        }
        /* back into the degree lists; Lp keeps its variables only */
        int64_t wr = lp, size = 0;
        for (int64_t t = lp; t < lpend; t++) {
            int64_t i = iw[t];
            if (a.kind[i] != VAR || a.nv[i] >= 0) continue;
            a.nv[i] = -a.nv[i];
            size += a.nv[i];
            iw[wr++] = i;
            int64_t d = a.deg[i], cap = left - a.nv[i];
            d = d < cap ? d : cap;
            a.deg[i] = d = d < 0 ? 0 : d;
            amd_insert(&a, i, d);
            if (d < mindeg) mindeg = d;
        }
        a.len[p] = wr - lp;
        a.deg[p] = size;
        a.nv[p] = nvp;
        a.pfree = wr;
        wflg += n + 1;
        for (int64_t x = p; x >= 0; x = a.chain[x]) perm[out++] = x;
    }
    for (int64_t i = 0; i < n; i++) /* the dense variables, last */
        if (a.kind[i] == DENSE) perm[out++] = i;
    status = out == n ? 0 : -2;
done:
    free(a.iw);
    for (int t = 0; t < narrays; t++) free(*arrays[t]);
    free(a.kind);
    return status;
}

/* amd(lo, hi, n[, dense]) -> perm as bytes of int64: the AMD ordering of the symmetric
 * pattern with off-diagonal pairs (lo[t], hi[t]) (each pair once, either way round);
 * dense < 0 leaves no variable out. None where the ordering failed a consistency check
 * (the caller orders otherwise). */
static PyObject *amd(PyObject *self, PyObject *args) {
    Py_buffer lo = {0}, hi = {0};
    long long nn;
    double dense = 40.0;
    if (!PyArg_ParseTuple(args, "y*y*L|d", &lo, &hi, &nn, &dense)) return NULL;
    PyObject *result = NULL;
    int64_t n = nn, m = lo.len / 8, *ptr = NULL, *adj = NULL, *perm = NULL;
    const int64_t *a = lo.buf, *b = hi.buf;
    int ok = n >= 1 && lo.len == hi.len && lo.len % 8 == 0;
    for (int64_t t = 0; ok && t < m; t++) ok = a[t] >= 0 && a[t] < n && b[t] >= 0 && b[t] < n;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "amd: pairs outside [0, n) or of unequal length");
        goto done;
    }
    ptr = calloc(n + 2, sizeof(int64_t));
    adj = malloc((2 * m + 1) * sizeof(int64_t));
    perm = malloc(n * sizeof(int64_t));
    if (!ptr || !adj || !perm) {
        PyErr_NoMemory();
        goto done;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t t = 0; t < m; t++) {
        ptr[a[t] + 2]++;
        ptr[b[t] + 2]++;
    }
    for (int64_t i = 0; i < n; i++) ptr[i + 2] += ptr[i + 1];
    for (int64_t t = 0; t < m; t++) {
        adj[ptr[a[t] + 1]++] = b[t];
        adj[ptr[b[t] + 1]++] = a[t];
    }
    status = amd_order(n, ptr, adj, dense, perm);
    Py_END_ALLOW_THREADS
    if (status == -1)
        PyErr_NoMemory();
    else if (status == -2)
        result = Py_NewRef(Py_None);
    else
        result = PyBytes_FromStringAndSize((char *)perm, n * sizeof(int64_t));
done:
    free(ptr);
    free(adj);
    free(perm);
    PyBuffer_Release(&lo);
    PyBuffer_Release(&hi);
    return result;
}

/* A BLAS/LAPACK routine's address from scipy's Cython API. */
static void *scipy_function(PyObject *capi, const char *name) {
    PyObject *capsule = PyDict_GetItemString(capi, name); /* borrowed */
    if (!capsule) {
        PyErr_Format(PyExc_ImportError, "scipy exports no %s", name);
        return NULL;
    }
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
}

/* The addresses come from vareval.stats._lapack_api.capi(), which loads scipy's two Cython
 * API modules without running scipy/linalg/__init__.py (~35 ms of CPU a process); the
 * import stays here, at the module's start, so that no function can run before they are
 * set. */
static int load_scipy(void) {
    PyObject *api = PyImport_ImportModule("vareval.stats._lapack_api");
    PyObject *pair = api ? PyObject_CallMethod(api, "capi", NULL) : NULL;
    PyObject *cb = NULL, *cl = NULL;
    int ok = pair && PyArg_ParseTuple(pair, "O!O!", &PyDict_Type, &cb, &PyDict_Type, &cl) &&
             (dpotrf = scipy_function(cl, "dpotrf")) && (dtrtri = scipy_function(cl, "dtrtri")) &&
             (dpotrs = scipy_function(cl, "dpotrs")) && (dpotri = scipy_function(cl, "dpotri")) &&
             (dtrtrs = scipy_function(cl, "dtrtrs")) && (dgeqp3 = scipy_function(cl, "dgeqp3")) &&
             (dtrmm = scipy_function(cb, "dtrmm")) &&
             (dsyrk = scipy_function(cb, "dsyrk")) && (dgemm = scipy_function(cb, "dgemm"));
    Py_XDECREF(api);
    Py_XDECREF(pair);
    return ok ? 0 : -1;
}

/* Dense LAPACK calls for dense.py, on float64 arrays in Fortran order (passed as their C-ordered
 * transposes' buffers), as scipy.linalg's f2py wrappers make them; each returns LAPACK's info.
 * potrf(a, n, lower, clean): a (n x n) overwritten by its factor; clean zeroes the other
 *   triangle as scipy's wrapper does (after the call, whatever info).
 * potrs(c, n, b, nrhs, lower): b (n x nrhs) overwritten by A^-1 b from A's factor c.
 * potri(c, n, lower): c overwritten by A^-1 in c's triangle.
 * trtrs(a, n, b, nrhs, lower, trans): b overwritten by op(a)^-1 b, op(a) = a or a' (trans).
 * geqp3(a, m, n, jpvt, tau): a (m x n) overwritten by its pivoted QR (R in its upper
 *   triangle); jpvt (int32, n, zero on entry: every column free) the 1-based pivots; the
 *   workspace LAPACK asks for in a query (lwork = -1) first, as scipy's qr does. */
static int dense_size(Py_buffer *b, long long rows, long long cols, Py_ssize_t item) {
    if (rows < 0 || cols < 0 || rows > INT32_MAX || cols > INT32_MAX ||
        (cols && rows > PY_SSIZE_T_MAX / item / cols) || /* the byte count overflows */
        b->len != rows * cols * item) {
        PyErr_SetString(PyExc_ValueError, "dense LAPACK call: an array of the wrong size");
        return 0;
    }
    return 1;
}

static PyObject *lapack_potrf(PyObject *self, PyObject *args) {
    Py_buffer a;
    int n, lower, clean, info = 0;
    if (!PyArg_ParseTuple(args, "w*ipp", &a, &n, &lower, &clean)) return NULL;
    PyObject *result = NULL;
    if (dense_size(&a, n, n, 8)) {
        double *c = a.buf;
        Py_BEGIN_ALLOW_THREADS
        dpotrf(lower ? &cL : &cU, &n, c, &n, &info);
        if (clean)
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) c[lower ? j * n + i : i * n + j] = 0.0;
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(info);
    }
    PyBuffer_Release(&a);
    return result;
}

static PyObject *lapack_potrs(PyObject *self, PyObject *args) {
    Py_buffer c, b;
    int n, nrhs, lower, info = 0;
    if (!PyArg_ParseTuple(args, "y*iw*ip", &c, &n, &b, &nrhs, &lower)) return NULL;
    PyObject *result = NULL;
    if (dense_size(&c, n, n, 8) && dense_size(&b, n, nrhs, 8)) {
        Py_BEGIN_ALLOW_THREADS
        dpotrs(lower ? &cL : &cU, &n, &nrhs, c.buf, &n, b.buf, &n, &info);
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(info);
    }
    PyBuffer_Release(&c);
    PyBuffer_Release(&b);
    return result;
}

static PyObject *lapack_potri(PyObject *self, PyObject *args) {
    Py_buffer c;
    int n, lower, info = 0;
    if (!PyArg_ParseTuple(args, "w*ip", &c, &n, &lower)) return NULL;
    PyObject *result = NULL;
    if (dense_size(&c, n, n, 8)) {
        Py_BEGIN_ALLOW_THREADS
        dpotri(lower ? &cL : &cU, &n, c.buf, &n, &info);
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(info);
    }
    PyBuffer_Release(&c);
    return result;
}

static PyObject *lapack_trtrs(PyObject *self, PyObject *args) {
    Py_buffer a, b;
    int n, nrhs, lower, trans, info = 0;
    if (!PyArg_ParseTuple(args, "y*iw*ipp", &a, &n, &b, &nrhs, &lower, &trans)) return NULL;
    PyObject *result = NULL;
    if (dense_size(&a, n, n, 8) && dense_size(&b, n, nrhs, 8)) {
        Py_BEGIN_ALLOW_THREADS
        dtrtrs(lower ? &cL : &cU, trans ? &cT : &cN, &cN, &n, &nrhs, a.buf, &n, b.buf, &n, &info);
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(info);
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

static PyObject *lapack_geqp3(PyObject *self, PyObject *args) {
    Py_buffer a, jpvt, tau;
    int m, n, info = 0, lwork = -1;
    if (!PyArg_ParseTuple(args, "w*iiw*w*", &a, &m, &n, &jpvt, &tau)) return NULL;
    PyObject *result = NULL;
    double query = 0.0, *work = NULL;
    int mn = m < n ? m : n;
    if (dense_size(&a, m, n, 8) && dense_size(&jpvt, n, 1, 4) && dense_size(&tau, mn, 1, 8)) {
        int lda = m > 1 ? m : 1;
        dgeqp3(&m, &n, a.buf, &lda, jpvt.buf, tau.buf, &query, &lwork, &info);
        lwork = (int)query;
        if (info == 0 && !(work = malloc((lwork > 1 ? lwork : 1) * sizeof(double))))
            PyErr_NoMemory();
        else {
            if (info == 0) {
                Py_BEGIN_ALLOW_THREADS
                dgeqp3(&m, &n, a.buf, &lda, jpvt.buf, tau.buf, work, &lwork, &info);
                Py_END_ALLOW_THREADS
            }
            result = PyLong_FromLong(info);
        }
    }
    free(work);
    PyBuffer_Release(&a);
    PyBuffer_Release(&jpvt);
    PyBuffer_Release(&tau);
    return result;
}

/* schur_pattern(ptr, ind, val, lo_col, lo_row, r, where, pind, pval) -> (keys, pptr) as
 * bytes (int64, int32): sparse.SparseSchur's lower pattern and pair table. ptr, ind, val:
 * N_br in CSR (int64, int64, float64; a row's columns increasing, each once); lo_col <=
 * lo_row (int64): N_rr's lower entries. The pattern is the distinct keys col * r + row of
 * those entries, of the pairs (a <= b) of columns sharing a row of N_br and of the
 * diagonal, increasing (keys). Written: where (int64, one per N_rr entry), its index in
 * keys; the pair table (pptr, pind int32, pval float64), the CSR matrix (keys x rows of
 * N_br) holding val[a] * val[b] at (key of (a, b), row), each table row's columns
 * increasing, as scipy's canonical format (no pair occurs twice). The keys' rows are
 * grouped by column (a counting sort), each column's distinct rows sorted and numbered
 * with a table over the r levels, and the keys then read back in the order they were
 * grouped: O(keys + r) memory where numpy's marking needs r * r, and time O(keys + r)
 * plus the sorts of each column's distinct rows. */
static int cmp_int32(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return a < b ? -1 : a > b;
}

static PyObject *schur_pattern(PyObject *self, PyObject *args) {
    Py_buffer b[8];
    memset(b, 0, sizeof b);
    long long r_in;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*Lw*w*w*", &b[0], &b[1], &b[2], &b[3], &b[4], &r_in,
                          &b[5], &b[6], &b[7]))
        return NULL;
    PyObject *result = NULL;
    const int64_t *ptr = b[0].buf, *ind = b[1].buf, *lc = b[3].buf, *lr = b[4].buf;
    const double *val = b[2].buf;
    int64_t *where = b[5].buf;
    int32_t *pind = b[6].buf;
    double *pval = b[7].buf;
    int64_t nb = b[0].len / 8 - 1, nnz = b[1].len / 8, n1 = b[3].len / 8, r = r_in, n2 = 0;
    int64_t *start = NULL, *cur = NULL, *keys = NULL, nu = 0;
    int32_t *bucket = NULL, *mark = NULL, *rowpos = NULL, *tmp = NULL, *pptr = NULL;
    int ok = nb >= 0 && r >= 0 && b[2].len / 8 == nnz && b[4].len / 8 == n1 && ptr[0] == 0 &&
             ptr[nb] == nnz && b[5].len / 8 == n1;
    for (int64_t i = 0; ok && i < nb; i++) {
        int64_t c = ptr[i + 1] - ptr[i];
        ok = c >= 0 && ptr[i + 1] <= nnz; /* no row reads past ind's end */
        for (int64_t t = ptr[i]; ok && t < ptr[i + 1]; t++)
            ok = ind[t] >= 0 && ind[t] < r && (t == ptr[i] || ind[t] > ind[t - 1]);
        n2 += c * (c + 1) / 2;
    }
    for (int64_t t = 0; ok && t < n1; t++) ok = lc[t] >= 0 && lc[t] <= lr[t] && lr[t] < r;
    int64_t nk = n1 + n2 + r; /* every key, duplicates included */
    if (!ok || nk > INT32_MAX || nb > INT32_MAX || b[6].len / 4 != n2 || b[7].len / 8 != n2) {
        PyErr_SetString(PyExc_ValueError, "schur_pattern: inconsistent or too large input");
        goto done;
    }
    start = calloc(r + 2, sizeof(int64_t));
    cur = malloc((r + 1) * sizeof(int64_t));
    bucket = malloc((nk + 1) * sizeof(int32_t));
    mark = malloc((r + 1) * sizeof(int32_t));
    rowpos = malloc((r + 1) * sizeof(int32_t));
    tmp = malloc((r + 1) * sizeof(int32_t));
    keys = malloc((nk + 1) * sizeof(int64_t)); /* nu <= nk of them touched */
    pptr = calloc(nk + 2, sizeof(int32_t));
    if (!start || !cur || !bucket || !mark || !rowpos || !tmp || !keys || !pptr) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    /* the rows of each column's keys, by a counting sort on the column: N_rr's entries,
     * then the pairs row by row, then the diagonal */
    for (int64_t t = 0; t < n1; t++) start[lc[t] + 2]++;
    for (int64_t i = 0; i < nb; i++)
        for (int64_t t = ptr[i]; t < ptr[i + 1]; t++) start[ind[t] + 2] += ptr[i + 1] - t;
    for (int64_t j = 0; j < r; j++) start[j + 2]++;
    for (int64_t j = 0; j < r; j++) start[j + 2] += start[j + 1];
    for (int64_t t = 0; t < n1; t++) bucket[start[lc[t] + 1]++] = (int32_t)lr[t];
    for (int64_t i = 0; i < nb; i++)
        for (int64_t t = ptr[i]; t < ptr[i + 1]; t++)
            for (int64_t u = t; u < ptr[i + 1]; u++) bucket[start[ind[t] + 1]++] = (int32_t)ind[u];
    for (int64_t j = 0; j < r; j++) bucket[start[j + 1]++] = (int32_t)j;
    /* now column j's keys are bucket[start[j]:start[j + 1]]: number its distinct rows in
     * increasing order and replace each key's row by its index in keys */
    for (int64_t j = 0; j < r; j++) mark[j] = -1;
    for (int64_t j = 0; j < r; j++) {
        int64_t m = 0;
        for (int64_t s = start[j]; s < start[j + 1]; s++)
            if (mark[bucket[s]] != j) {
                mark[bucket[s]] = (int32_t)j;
                tmp[m++] = bucket[s];
            }
        qsort(tmp, m, sizeof(int32_t), cmp_int32);
        for (int64_t q = 0; q < m; q++) {
            rowpos[tmp[q]] = (int32_t)(nu + q);
            keys[nu + q] = j * r + tmp[q];
        }
        for (int64_t s = start[j]; s < start[j + 1]; s++) bucket[s] = rowpos[bucket[s]];
        nu += m;
    }
    /* read back in the order of the grouping: N_rr's entries, then (twice) the pairs */
    for (int64_t j = 0; j < r; j++) cur[j] = start[j];
    for (int64_t t = 0; t < n1; t++) where[t] = bucket[cur[lc[t]]++];
    for (int64_t j = 0; j < r; j++) start[j] = cur[j]; /* each column's first pair */
    for (int64_t i = 0; i < nb; i++)
        for (int64_t t = ptr[i]; t < ptr[i + 1]; t++)
            for (int64_t u = t; u < ptr[i + 1]; u++) pptr[bucket[cur[ind[t]]++] + 2]++;
    for (int64_t e = 0; e < nu; e++) pptr[e + 2] += pptr[e + 1];
    /* the pair table by a counting sort on the key, the rows of N_br in increasing order */
    for (int64_t i = 0; i < nb; i++)
        for (int64_t t = ptr[i]; t < ptr[i + 1]; t++)
            for (int64_t u = t; u < ptr[i + 1]; u++) {
                int32_t at = pptr[bucket[start[ind[t]]++] + 1]++;
                pind[at] = (int32_t)i;
                pval[at] = val[t] * val[u];
            }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(y#y#)", (char *)keys, (Py_ssize_t)(nu * 8), (char *)pptr,
                           (Py_ssize_t)((nu + 1) * 4));
done:
    free(start);
    free(cur);
    free(bucket);
    free(mark);
    free(rowpos);
    free(tmp);
    free(keys);
    free(pptr);
    for (int q = 0; q < 8; q++) PyBuffer_Release(&b[q]);
    return result;
}

/* components(a, b, n) -> labels as bytes of int64: the connected components of the
 * undirected graph on n nodes with edges (a[t], b[t]) (int64), by union-find (each
 * set's root its smallest node, paths halved); labelled 0, 1, ... in the order of
 * their smallest nodes, as scipy.sparse.csgraph.connected_components numbers them. */
static int64_t root_of(int64_t *up, int64_t v) {
    while (up[v] != v) {
        up[v] = up[up[v]];
        v = up[v];
    }
    return v;
}

static PyObject *components(PyObject *self, PyObject *args) {
    Py_buffer ab = {0}, bb = {0};
    long long n_in;
    if (!PyArg_ParseTuple(args, "y*y*L", &ab, &bb, &n_in)) return NULL;
    PyObject *result = NULL;
    const int64_t *a = ab.buf, *b = bb.buf;
    int64_t m = ab.len / 8, n = n_in, *up = NULL, *label = NULL;
    int ok = n >= 0 && ab.len % 8 == 0 && bb.len == ab.len;
    for (int64_t t = 0; ok && t < m; t++) ok = a[t] >= 0 && a[t] < n && b[t] >= 0 && b[t] < n;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "components: nodes outside [0, n)");
        goto done;
    }
    up = malloc((n + 1) * sizeof(int64_t));
    label = malloc((n + 1) * sizeof(int64_t));
    if (!up || !label) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t v = 0; v < n; v++) up[v] = v;
    for (int64_t t = 0; t < m; t++) {
        int64_t x = root_of(up, a[t]), y = root_of(up, b[t]);
        if (x < y) up[y] = x;
        else if (y < x) up[x] = y;
    }
    /* a parent is always a smaller node (so is a grandparent): labelled before its child */
    int64_t next = 0;
    for (int64_t v = 0; v < n; v++) label[v] = up[v] == v ? next++ : label[up[v]];
    Py_END_ALLOW_THREADS
    result = PyBytes_FromStringAndSize((char *)label, n * sizeof(int64_t));
done:
    free(up);
    free(label);
    PyBuffer_Release(&ab);
    PyBuffer_Release(&bb);
    return result;
}

/* csr_product(ptr, ind, val, x, y, w): y = A x for the CSR matrix A (ptr, ind: int32 or
 * int64, the same; val float64) and x float64 C-ordered (n_col, w), y (n_row, w) written.
 * scipy's csr_matvec(s) without its Python dispatch: each of y's entries is 0.0 plus
 * the row's products added in storage order (duplicates and unsorted indices so too),
 * each product rounded before it is added (no fused multiply-add), so every bit is
 * scipy's. Widths up to 8 (the Schur complement's entries and their derivative at one
 * theta, one pass, are 2) keep their sums in registers. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
/* y = A x with w columns, each column's sum in a register (w <= 8: called with constant
 * w, so each width gets its own unrolled loop) or in y. */
#define CSR_ROWS(I)                                                                        \
    static inline int csr_rows_##I(int64_t n_row, int64_t n_col, int64_t w, const I *ptr, \
                                   const I *ind, const double *val, const double *x,      \
                                   double *y) {                                           \
        for (int64_t i = 0; i < n_row; i++) {                                              \
            double s[8] = {0.0}, *yi = y + w * i;                                          \
            if (w > 8)                                                                     \
                for (int64_t k = 0; k < w; k++) yi[k] = 0.0;                               \
            for (int64_t t = ptr[i], hi = ptr[i + 1]; t < hi; t++) {                       \
                int64_t j = ind[t];                                                        \
                if (j < 0 || j >= n_col) return -1;                                        \
                const double a = val[t], *xj = x + w * j;                                  \
                if (w <= 8)                                                                \
                    for (int64_t k = 0; k < w; k++) s[k] += a * xj[k];                     \
                else                                                                       \
                    for (int64_t k = 0; k < w; k++) yi[k] += a * xj[k];                    \
            }                                                                              \
            if (w <= 8)                                                                    \
                for (int64_t k = 0; k < w; k++) yi[k] = s[k];                              \
        }                                                                                  \
        return 0;                                                                          \
    }                                                                                      \
    static int csr_product_##I(int64_t n_row, int64_t n_col, int64_t w, const I *ptr,     \
                               const I *ind, const double *val, const double *x,          \
                               double *y) {                                               \
        switch (w) {                                                                       \
        case 1: return csr_rows_##I(n_row, n_col, 1, ptr, ind, val, x, y);                 \
        case 2: return csr_rows_##I(n_row, n_col, 2, ptr, ind, val, x, y);                 \
        case 3: return csr_rows_##I(n_row, n_col, 3, ptr, ind, val, x, y);                 \
        case 4: return csr_rows_##I(n_row, n_col, 4, ptr, ind, val, x, y);                 \
        case 5: return csr_rows_##I(n_row, n_col, 5, ptr, ind, val, x, y);                 \
        case 6: return csr_rows_##I(n_row, n_col, 6, ptr, ind, val, x, y);                 \
        case 7: return csr_rows_##I(n_row, n_col, 7, ptr, ind, val, x, y);                 \
        case 8: return csr_rows_##I(n_row, n_col, 8, ptr, ind, val, x, y);                 \
        default: return csr_rows_##I(n_row, n_col, w, ptr, ind, val, x, y);                \
        }                                                                                  \
    }
CSR_ROWS(int32_t)
CSR_ROWS(int64_t)
#undef CSR_ROWS
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

static PyObject *csr_product(PyObject *self, PyObject *args) {
    Py_buffer b[5];
    memset(b, 0, sizeof b);
    Py_ssize_t w;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*n", &b[0], &b[1], &b[2], &b[3], &b[4], &w))
        return NULL;
    PyObject *result = NULL;
    int64_t n_row = w > 0 ? b[4].len / 8 / w : -1, n_col = w > 0 ? b[3].len / 8 / w : -1;
    int64_t nnz = b[2].len / 8, size = n_row >= 0 ? b[0].len / (n_row + 1) : 0;
    int ok = w > 0 && (size == 4 || size == 8) && b[0].len == size * (n_row + 1) &&
             b[1].len == size * nnz && b[2].len == 8 * nnz && b[3].len == 8 * w * n_col &&
             b[4].len == 8 * w * n_row;
    const int32_t *p32 = b[0].buf;
    const int64_t *p64 = b[0].buf;
    for (int64_t i = 0; ok && i <= n_row; i++) { /* the rows' bounds: from 0 up to nnz */
        int64_t v = size == 4 ? p32[i] : p64[i];
        ok = i ? v >= (size == 4 ? p32[i - 1] : p64[i - 1]) && v <= nnz : v == 0;
    }
    if (ok) ok = (size == 4 ? p32[n_row] : p64[n_row]) == nnz;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "csr_product: arrays of inconsistent sizes");
        goto done;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = size == 4 ? csr_product_int32_t(n_row, n_col, w, b[0].buf, b[1].buf, b[2].buf,
                                       b[3].buf, b[4].buf)
                       : csr_product_int64_t(n_row, n_col, w, b[0].buf, b[1].buf, b[2].buf,
                                       b[3].buf, b[4].buf);
    Py_END_ALLOW_THREADS
    if (status < 0) PyErr_SetString(PyExc_ValueError, "csr_product: a column index outside x");
    else result = Py_NewRef(Py_None);
done:
    for (int q = 0; q < 5; q++) PyBuffer_Release(&b[q]);
    return result;
}

static PyMethodDef methods[] = {
    {"partition", partition, METH_VARARGS, "The supernode partition's dynamic program."},
    {"argsort", argsort, METH_VARARGS, "numpy's stable argsort of keys below 2**32, by radix."},
    {"positions", positions, METH_VARARGS, "Values' and children's positions in the fronts."},
    {"postorder", postorder, METH_VARARGS, "The elimination forest's postorder and subtree sizes."},
    {"symbolic", symbolic, METH_VARARGS, "The structure of L from A's lower pattern (CSC)."},
    {"amd", amd, METH_VARARGS, "The approximate minimum degree ordering (see the source)."},
    {"schur_pattern", schur_pattern, METH_VARARGS, "The Schur complement's pattern and pairs."},
    {"components", components, METH_VARARGS, "Connected components by union-find."},
    {"csr_product", csr_product, METH_VARARGS, "A x for a CSR matrix, as scipy's (see the source)."},
    {"plan", plan, METH_VARARGS, "The symbolic analysis as a capsule (see the source)."},
    {"factor", factor, METH_VARARGS, "The multifrontal factorisation (see the source)."},
    {"solve", solve, METH_VARARGS, "S^-1 x in place, in the elimination order (see the source)."},
    {"inverse", inverse, METH_VARARGS, "S^-1 on the pattern (see the source)."},
    {"potrf", lapack_potrf, METH_VARARGS, "LAPACK dpotrf as scipy.linalg calls it (see the source)."},
    {"potrs", lapack_potrs, METH_VARARGS, "LAPACK dpotrs (see the source)."},
    {"potri", lapack_potri, METH_VARARGS, "LAPACK dpotri (see the source)."},
    {"trtrs", lapack_trtrs, METH_VARARGS, "LAPACK dtrtrs (see the source)."},
    {"geqp3", lapack_geqp3, METH_VARARGS, "LAPACK dgeqp3 with its workspace query (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_superkernel",
                                    "The supernodal Cholesky's compiled numeric phase.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__superkernel(void) {
    if (load_scipy() < 0) return NULL;
    return PyModule_Create(&module);
}
