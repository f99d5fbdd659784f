/*
 * The per-record walk of record_check.py, in C: the produce path runs it over every
 * record of every batch, which in Python costs ~0.3 us a record (as much as the whole
 * rest of the produce path for 100-byte records); here it is a few nanoseconds.
 *
 * walk(buffer, start, end, count, keyless[, release_gil]) -> (min_timestamp_delta, max_timestamp_delta, [keyless])
 * (the indexes of keyless records are collected only when ``keyless`` is true: compacted topics)
 * raises ValueError(message) on the first record that disagrees with the batch header.
 * Same algorithm, same checks, same order as record_check.walk_records_py (the tests hold
 * the two to each other). Reads only; never writes or allocates beyond the result.
 *
 * ``release_gil`` (default false) walks without holding the GIL: the records of a compressed
 * batch, decompressed on one of the broker's validation threads, may be 64 MiB of 7-byte
 * records (tens of milliseconds), during which the event loop thread must keep running. The
 * loop itself walks with the GIL held: giving it up there would let another thread take it
 * for up to a switch interval (5 ms). The buffer export (y*) keeps the buffer alive and
 * unresizable meanwhile; keyless indexes are gathered in a C array and become a list after.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define MIN_BODY 6
#define ERRLEN 200

/* Zigzag varint at *pos, read no further than limit and max_bytes; 0 on success. */
static int read_varint(const unsigned char *d, Py_ssize_t *pos, Py_ssize_t limit, int max_bytes,
                       int64_t *out, char *err, size_t errlen)
{
    uint64_t result = 0;
    int shift = 0;
    Py_ssize_t p = *pos;
    Py_ssize_t end = p + max_bytes < limit ? p + max_bytes : limit;
    while (p < end) {
        unsigned char b = d[p++];
        if (shift == 63 && (b & 0x7E)) {
            snprintf(err, errlen, "varint out of range at byte %zd", p - 1);
            return -1;
        }
        result |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            if (max_bytes == 5 && result > 0xFFFFFFFFULL) {
                snprintf(err, errlen, "varint out of range at byte %zd", p - 1);
                return -1;
            }
            *out = (int64_t)((result >> 1) ^ (~(result & 1) + 1));
            *pos = p;
            return 0;
        }
        shift += 7;
    }
    if (p >= limit)
        snprintf(err, errlen, "record data ends inside a varint at byte %zd", p);
    else
        snprintf(err, errlen, "varint longer than %d bytes at byte %zd", max_bytes, p - max_bytes);
    return -1;
}

/* The common cases inline: one- and two-byte varints (values -8192..8191); else read_varint. */
#define VARINT(pos, limit, max_bytes, out)                                                    \
    do {                                                                                      \
        if ((pos) < (limit) && d[pos] < 0x80) {                                               \
            unsigned char b_ = d[pos];                                                        \
            (out) = (int64_t)(b_ >> 1) ^ -(int64_t)(b_ & 1);                                  \
            (pos)++;                                                                          \
        } else if ((pos) + 1 < (limit) && d[(pos) + 1] < 0x80) {                              \
            uint64_t u_ = (uint64_t)(d[pos] & 0x7F) | ((uint64_t)d[(pos) + 1] << 7);          \
            (out) = (int64_t)(u_ >> 1) ^ -(int64_t)(u_ & 1);                                  \
            (pos) += 2;                                                                       \
        } else if (read_varint(d, &(pos), (limit), (max_bytes), &(out), err, ERRLEN)) {     \
            goto fail;                                                                        \
        }                                                                                     \
    } while (0)

/* Keyless record indexes gathered without the GIL (PyMem_Raw* needs none). */
typedef struct {
    Py_ssize_t *items;
    Py_ssize_t len, cap;
} IndexArray;

static int index_append(IndexArray *a, Py_ssize_t value)
{
    if (a->len == a->cap) {
        Py_ssize_t cap = a->cap ? a->cap * 2 : 64;
        Py_ssize_t *items = PyMem_RawRealloc(a->items, (size_t)cap * sizeof(Py_ssize_t));
        if (items == NULL)
            return -1;
        a->items = items;
        a->cap = cap;
    }
    a->items[a->len++] = value;
    return 0;
}

/* The walk proper: 0 on success, -1 with ``err`` set, -2 when out of memory. Touches no
 * Python object, so it may run without the GIL. */
static int walk_records(const unsigned char *d, Py_ssize_t start, Py_ssize_t end, Py_ssize_t count,
                        int want_keyless, IndexArray *keyless, int64_t *min_out, int64_t *max_out, char *err)
{
    Py_ssize_t pos = start;
    int64_t min_ts = 0, max_ts = 0, v;
    for (Py_ssize_t index = 0; index < count; index++) {
        if (pos >= end) {
            snprintf(err, ERRLEN, "record batch holds %zd records, not the %zd its header claims", index, count);
            goto fail;
        }
        int64_t length;
        VARINT(pos, end, 5, length);
        Py_ssize_t body_end = pos + (Py_ssize_t)length;
        if (length < MIN_BODY || length > end - pos) {
            snprintf(err, ERRLEN, "record %zd has an invalid length %lld (at byte %zd)", index,
                     (long long)length, pos);
            goto fail;
        }
        pos += 1; /* attributes */
        VARINT(pos, body_end, 10, v);
        if (index == 0 || v < min_ts)
            min_ts = v;
        if (index == 0 || v > max_ts)
            max_ts = v;
        VARINT(pos, body_end, 5, v);
        if (v != index) {
            snprintf(err, ERRLEN, "record %zd has offset delta %lld, not %zd", index, (long long)v, index);
            goto fail;
        }
        VARINT(pos, body_end, 5, v);
        if (v >= 0) {
            pos += (Py_ssize_t)v;
        } else if (v == -1) {
            if (want_keyless && index_append(keyless, index) < 0)
                return -2;
        } else {
            snprintf(err, ERRLEN, "record %zd has an invalid key length %lld", index, (long long)v);
            goto fail;
        }
        VARINT(pos, body_end, 5, v);
        if (v >= 0) {
            pos += (Py_ssize_t)v;
        } else if (v != -1) {
            snprintf(err, ERRLEN, "record %zd has an invalid value length %lld", index, (long long)v);
            goto fail;
        }
        int64_t headers;
        VARINT(pos, body_end, 5, headers);
        if (headers < 0 || headers * 2 > (int64_t)(body_end - pos)) {
            snprintf(err, ERRLEN, "record %zd has an invalid header count %lld", index, (long long)headers);
            goto fail;
        }
        for (int64_t h = 0; h < headers; h++) {
            VARINT(pos, body_end, 5, v);
            if (v < 0) {
                snprintf(err, ERRLEN, "record %zd has a header with key length %lld", index, (long long)v);
                goto fail;
            }
            pos += (Py_ssize_t)v;
            VARINT(pos, body_end, 5, v);
            if (v >= 0) {
                pos += (Py_ssize_t)v;
            } else if (v != -1) {
                snprintf(err, ERRLEN, "record %zd has a header with value length %lld", index, (long long)v);
                goto fail;
            }
        }
        if (pos != body_end) {
            snprintf(err, ERRLEN, "record %zd claims %lld bytes but its fields take %lld", index,
                     (long long)length, (long long)(length + pos - body_end));
            goto fail;
        }
    }
    if (pos != end) {
        snprintf(err, ERRLEN, "%zd bytes follow the last of the %zd records the batch claims", end - pos, count);
        goto fail;
    }
    *min_out = min_ts;
    *max_out = max_ts;
    return 0;
fail:
    return -1;
}

static PyObject *walk(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end, count;
    int want_keyless, release_gil = 0, status;
    char err[ERRLEN];
    IndexArray keyless = {NULL, 0, 0};
    int64_t min_ts = 0, max_ts = 0;
    (void)self;
    err[0] = 0;
    if (!PyArg_ParseTuple(args, "y*nnnp|p", &view, &start, &end, &count, &want_keyless, &release_gil))
        return NULL;
    if (start < 0 || end > view.len || start > end) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "record range [%zd, %zd) is outside the buffer", start, end);
        return NULL;
    }
    const unsigned char *d = (const unsigned char *)view.buf;
    PyThreadState *released = release_gil ? PyEval_SaveThread() : NULL;
    status = walk_records(d, start, end, count, want_keyless, &keyless, &min_ts, &max_ts, err);
    if (released != NULL)
        PyEval_RestoreThread(released);
    PyBuffer_Release(&view);
    PyObject *list = NULL;
    if (status == 0 && (list = PyList_New(keyless.len)) != NULL) {
        for (Py_ssize_t i = 0; i < keyless.len; i++) {
            PyObject *item = PyLong_FromSsize_t(keyless.items[i]);
            if (item == NULL) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, i, item);
        }
    }
    PyMem_RawFree(keyless.items);
    if (status == -1) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    if (status == -2)
        return PyErr_NoMemory();
    if (list == NULL)
        return NULL;
    return Py_BuildValue("(LLN)", (long long)min_ts, (long long)max_ts, list);
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(buffer, start, end, count, keyless[, release_gil]) -> (min_ts_delta, max_ts_delta, keyless)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_record_walk", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__record_walk(void) { return PyModule_Create(&module); }
