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

/* --- check_batch: the produce path's whole check of one plain batch, in one call --------- */

static PyObject *header_type = NULL; /* seaway.protocol.record_batch.BatchHeader */
static PyObject *crc_function = NULL; /* crc32c.crc32c: the same CRC32C the Python checks use */

static inline int16_t be16(const unsigned char *p) { return (int16_t)(uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t ube32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
static inline int32_t be32(const unsigned char *p) { return (int32_t)ube32(p); }
static inline int64_t be64(const unsigned char *p) { return (int64_t)(((uint64_t)ube32(p) << 32) | ube32(p + 4)); }

#define BATCH_HEADER 61
#define LOG_OVERHEAD 12
#define CRC_START 21
#define ATTR_COMPRESSION 0x07
#define ATTR_CONTROL 0x20
#define MIN_RECORD 7

/* Whether a CreateTime ``timestamp`` lies outside [now - before, now + after] (as validation.py). */
static inline int time_outside(int64_t timestamp, int64_t oldest, int64_t now, int64_t after, int64_t before)
{
    return (timestamp >= 0 && (__int128)timestamp - now > after) ||
           (oldest >= 0 && (__int128)now - oldest > before);
}

static PyObject *set_types(PyObject *self, PyObject *args)
{
    PyObject *cls, *crc;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O", &PyType_Type, &cls, &crc))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type) || !PyCallable_Check(crc)) {
        PyErr_SetString(PyExc_TypeError, "set_types(BatchHeader, crc32c) needs a tuple type and a callable");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(header_type, cls);
    Py_INCREF(crc);
    Py_XSETREF(crc_function, crc);
    Py_RETURN_NONE;
}

/* check_batch(buffer, now_ms, max_message_bytes, after_max_ms, before_max_ms, check_time, keyless_refused)
 *   -> BatchHeader (position 0) | None
 *
 * The common case of the produce path: ``buffer`` is exactly one uncompressed, non-control
 * record batch v2 that passes every check validation.validate_batches makes (length,
 * magic, max.message.bytes, count against lastOffsetDelta and the bytes, batch and record
 * CreateTime timestamps when ``check_time``, CRC32C, the record walk, and no keyless
 * record when ``keyless_refused``: compacted topics). The producer id, epoch and sequence
 * are returned, not judged: the producer state does that. None means "not that case",
 * never "invalid": the caller then runs the general checks, which raise the precise
 * error. Nothing is raised for the bytes' sake and the buffer is only read. */
static PyObject *check_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "check_batch takes 7 arguments");
        return NULL;
    }
    if (header_type == NULL || crc_function == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "check_batch before set_types");
        return NULL;
    }
    long long now = PyLong_AsLongLong(args[1]);
    long long max_bytes = PyLong_AsLongLong(args[2]);
    long long after = PyLong_AsLongLong(args[3]);
    long long before = PyLong_AsLongLong(args[4]);
    int check_time = PyObject_IsTrue(args[5]);
    int keyless_refused = PyObject_IsTrue(args[6]);
    if (PyErr_Occurred())
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len;
    PyObject *result = Py_None;
    IndexArray keyless = {NULL, 0, 0};
    if (end < BATCH_HEADER)
        goto done;
    int64_t base_offset = be64(d), base_ts = be64(d + 27), max_ts = be64(d + 35), producer_id = be64(d + 43);
    int32_t length = be32(d + 8), leader_epoch = be32(d + 12), last_delta = be32(d + 23);
    int32_t base_sequence = be32(d + 53), count = be32(d + 57);
    int16_t attributes = be16(d + 21), producer_epoch = be16(d + 51);
    int magic = (int)(signed char)d[16];
    uint32_t crc = ube32(d + 17);
    if ((int64_t)length + LOG_OVERHEAD != end || magic != 2 || length < BATCH_HEADER - LOG_OVERHEAD ||
        end > max_bytes || last_delta < 0 || (int64_t)count != (int64_t)last_delta + 1 ||
        (attributes & (ATTR_CONTROL | ATTR_COMPRESSION)) || count > (end - BATCH_HEADER) / MIN_RECORD)
        goto done;
    if (check_time && max_ts >= 0 && time_outside(max_ts, base_ts < max_ts ? base_ts : max_ts, now, after, before))
        goto done;
    PyObject *body = PyMemoryView_FromMemory((char *)d + CRC_START, end - CRC_START, PyBUF_READ);
    if (body == NULL) {
        result = NULL;
        goto done;
    }
    PyObject *computed = PyObject_CallOneArg(crc_function, body);
    Py_DECREF(body);
    if (computed == NULL) {
        result = NULL;
        goto done;
    }
    unsigned long actual = PyLong_AsUnsignedLong(computed);
    Py_DECREF(computed);
    if (actual == (unsigned long)-1 && PyErr_Occurred()) {
        result = NULL;
        goto done;
    }
    if (actual != crc)
        goto done;
    char err[ERRLEN];
    int64_t min_delta = 0, max_delta = 0;
    int status = walk_records(d, BATCH_HEADER, end, count, keyless_refused, &keyless, &min_delta, &max_delta, err);
    if (status == -2) {
        result = PyErr_NoMemory();
        goto done;
    }
    if (status != 0 || keyless.len)
        goto done;
    if (check_time) {
        __int128 newest = (__int128)base_ts + max_delta, oldest = (__int128)base_ts + min_delta;
        if ((newest >= 0 && newest - now > after) || (oldest >= 0 && (__int128)now - oldest > before))
            goto done;
    }
    PyObject *items[14] = {
        PyLong_FromLongLong(base_offset), PyLong_FromLong(length), PyLong_FromLong(leader_epoch),
        PyLong_FromLong(magic), PyLong_FromUnsignedLong(crc), PyLong_FromLong(attributes),
        PyLong_FromLong(last_delta), PyLong_FromLongLong(base_ts), PyLong_FromLongLong(max_ts),
        PyLong_FromLongLong(producer_id), PyLong_FromLong(producer_epoch), PyLong_FromLong(base_sequence),
        PyLong_FromLong(count), PyLong_FromLong(0),
    };
    PyObject *header = NULL;
    int ok = 1;
    for (int i = 0; i < 14; i++)
        ok &= items[i] != NULL;
    /* Allocated after its items (whose creation never runs the garbage collector on a
     * half-filled tuple), then filled before anything else can run. */
    if (ok)
        header = ((PyTypeObject *)header_type)->tp_alloc((PyTypeObject *)header_type, 14);
    if (header == NULL) {
        for (int i = 0; i < 14; i++)
            Py_XDECREF(items[i]);
        result = NULL;
        goto done;
    }
    for (int i = 0; i < 14; i++)
        PyTuple_SET_ITEM(header, i, items[i]);
    result = header;
done:
    PyMem_RawFree(keyless.items);
    PyBuffer_Release(&view);
    if (result == Py_None)
        Py_INCREF(Py_None);
    return result;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(buffer, start, end, count, keyless[, release_gil]) -> (min_ts_delta, max_ts_delta, keyless)"},
    {"check_batch", (PyCFunction)(void (*)(void))check_batch, METH_FASTCALL,
     "check_batch(buffer, now_ms, max_message_bytes, after_max_ms, before_max_ms, check_time, keyless_refused)"
     " -> BatchHeader | None"},
    {"set_types", set_types, METH_VARARGS, "set_types(BatchHeader, crc32c): what check_batch builds and calls"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_record_walk", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__record_walk(void) { return PyModule_Create(&module); }
