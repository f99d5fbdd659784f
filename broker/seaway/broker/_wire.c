/*
 * The Produce request's decoder in C: what the generated ProduceRequest.decode
 * (seaway.protocol.messages.produce_request) does, for every served version (3-11), built
 * into the very same frozen, slotted dataclass instances (their slots are set through the
 * classes' own member descriptors, as the generated __init__ does). Every produce request
 * of every client is decoded once on the event loop; in Python that is ~1.5 us per
 * partition plus the request's own fields, here a tenth of it.
 *
 * decode_produce(view, pos, version) -> ProduceRequest
 *   ``view`` is the request frame's memoryview (the records come back as slices of it, not
 *   copies), ``pos`` the first byte after the request header. Raises CorruptFrameError
 *   where the generated decoder raises it (truncation, a length or array that cannot fit,
 *   a null topic name, a string that is not UTF-8, a tagged field past the frame), with
 *   the same outcome for every input: tests/broker/clients/test_produce_decoder.py holds
 *   the two to each other over mutated frames.
 * set_types(ProduceRequest, TopicProduceData, PartitionProduceData, CorruptFrameError)
 *   once, at import (seaway.broker.wire).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyTypeObject *request_type, *topic_type, *partition_type;
static PyObject *corrupt_error;
/* The member descriptors of the slots, in field order. */
static PyObject *request_slots[4], *topic_slots[2], *partition_slots[2];

typedef struct {
    const unsigned char *d;
    Py_ssize_t pos, end;
} Reader;

static int corrupt(const char *message)
{
    PyErr_SetString(corrupt_error, message);
    return -1;
}

static int need(Reader *r, uint64_t n)
{
    if (n > (uint64_t)(r->end - r->pos)) {
        PyErr_Format(corrupt_error, "need %llu bytes at offset %zd, have %zd", (unsigned long long)n, r->pos,
                     r->end - r->pos);
        return -1;
    }
    return 0;
}

/* Reader.uvarint: up to 10 bytes; ``*big`` is set when the value does not fit 64 bits (the
 * Python reader would hold a bigger integer: no length that large fits a frame). */
static int uvarint(Reader *r, uint64_t *out, int *big)
{
    uint64_t result = 0;
    int shift = 0;
    *big = 0;
    for (;;) {
        if (r->pos >= r->end)
            return corrupt("truncated varint");
        unsigned char b = r->d[r->pos++];
        if (shift < 64)
            result |= (uint64_t)(b & 0x7F) << shift;
        if (shift == 63 && (b & 0x7E))
            *big = 1;
        if (!(b & 0x80))
            break;
        shift += 7;
        if (shift > 63)
            return corrupt("varint is too long");
    }
    *out = result;
    return 0;
}

static int int16(Reader *r, int16_t *out)
{
    if (need(r, 2) < 0)
        return -1;
    *out = (int16_t)(uint16_t)((r->d[r->pos] << 8) | r->d[r->pos + 1]);
    r->pos += 2;
    return 0;
}

static int int32(Reader *r, int32_t *out)
{
    if (need(r, 4) < 0)
        return -1;
    const unsigned char *p = r->d + r->pos;
    *out = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
    r->pos += 4;
    return 0;
}

/* Reader._length: -1 (or any negative) for null; ``*huge`` for a compact length past 2**63. */
static int length(Reader *r, int flexible, int wide, int64_t *out)
{
    if (flexible) {
        uint64_t v;
        int big;
        if (uvarint(r, &v, &big) < 0)
            return -1;
        if (big || v > (uint64_t)INT64_MAX) {
            *out = INT64_MAX; /* larger than any frame: every caller refuses it as Python does */
            return 0;
        }
        *out = (int64_t)v - 1;
        return 0;
    }
    if (wide) {
        int32_t v;
        if (int32(r, &v) < 0)
            return -1;
        *out = v;
        return 0;
    }
    int16_t v;
    if (int16(r, &v) < 0)
        return -1;
    *out = v;
    return 0;
}

/* Reader.nullable_string; Py_None for null (a new reference either way). */
static PyObject *nullable_string(Reader *r, int flexible)
{
    int64_t n;
    if (length(r, flexible, 0, &n) < 0)
        return NULL;
    if (n < 0)
        Py_RETURN_NONE;
    if (need(r, (uint64_t)n) < 0)
        return NULL;
    PyObject *s = PyUnicode_DecodeUTF8((const char *)r->d + r->pos, (Py_ssize_t)n, "strict");
    if (s == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_Format(corrupt_error, "string is not UTF-8: %S", value ? value : Py_None);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        }
        return NULL;
    }
    r->pos += (Py_ssize_t)n;
    return s;
}

/* Reader.array_length, with Python's range() of a negative count: no elements. */
static int array_length(Reader *r, int flexible, Py_ssize_t *out)
{
    int64_t n;
    if (length(r, flexible, 1, &n) < 0)
        return -1;
    if (n > (int64_t)(r->end - r->pos)) {
        PyErr_Format(corrupt_error, "array of %lld elements cannot fit in %zd bytes", (long long)n, r->end - r->pos);
        return -1;
    }
    *out = n < 0 ? 0 : (Py_ssize_t)n;
    return 0;
}

/* The generated decoders' end of a flexible struct: one zero byte, else skip_tagged_fields. */
static int tagged_fields(Reader *r)
{
    if (r->pos < r->end && r->d[r->pos] == 0) {
        r->pos++;
        return 0;
    }
    uint64_t count, ignored, size;
    int big;
    if (uvarint(r, &count, &big) < 0)
        return -1;
    if (big)
        count = UINT64_MAX; /* Python counts on until the frame runs out: so does this */
    for (uint64_t i = 0; i < count; i++) {
        if (uvarint(r, &ignored, &big) < 0 || uvarint(r, &size, &big) < 0)
            return -1;
        if (big || need(r, size) < 0) {
            if (big)
                return corrupt("tagged field larger than the frame");
            return -1;
        }
        r->pos += (Py_ssize_t)size;
    }
    return 0;
}

/* A new instance of a generated class with its slots set (references to ``values`` stolen). */
static PyObject *build(PyTypeObject *type, PyObject **slots, PyObject **values, int n)
{
    PyObject *obj = type->tp_alloc(type, 0);
    for (int i = 0; i < n; i++) {
        if (obj != NULL && Py_TYPE(slots[i])->tp_descr_set(slots[i], obj, values[i]) < 0)
            Py_CLEAR(obj);
        Py_DECREF(values[i]);
    }
    return obj;
}

static PyObject *partition(Reader *r, PyObject *view, int flexible)
{
    int32_t index;
    if (int32(r, &index) < 0)
        return NULL;
    int64_t n;
    if (length(r, flexible, 1, &n) < 0)
        return NULL;
    PyObject *records;
    if (n < 0) {
        records = Py_NewRef(Py_None);
    } else {
        if (need(r, (uint64_t)n) < 0)
            return NULL;
        records = PySequence_GetSlice(view, r->pos, r->pos + (Py_ssize_t)n);
        if (records == NULL)
            return NULL;
        r->pos += (Py_ssize_t)n;
    }
    if (flexible && tagged_fields(r) < 0) {
        Py_DECREF(records);
        return NULL;
    }
    PyObject *index_obj = PyLong_FromLong(index);
    if (index_obj == NULL) {
        Py_DECREF(records);
        return NULL;
    }
    PyObject *values[2] = {index_obj, records};
    return build(partition_type, partition_slots, values, 2);
}

static PyObject *topic(Reader *r, PyObject *view, int flexible)
{
    PyObject *name = nullable_string(r, flexible);
    if (name == NULL)
        return NULL;
    if (name == Py_None) {
        Py_DECREF(name);
        corrupt("null where a non-nullable string is required");
        return NULL;
    }
    Py_ssize_t count;
    PyObject *list = NULL;
    if (array_length(r, flexible, &count) < 0 || (list = PyList_New(count)) == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = partition(r, view, flexible);
        if (item == NULL) {
            Py_DECREF(name);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    if (flexible && tagged_fields(r) < 0) {
        Py_DECREF(name);
        Py_DECREF(list);
        return NULL;
    }
    PyObject *values[2] = {name, list};
    return build(topic_type, topic_slots, values, 2);
}

static PyObject *decode_produce(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "decode_produce(view, pos, version)");
        return NULL;
    }
    if (request_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "decode_produce before set_types");
        return NULL;
    }
    PyObject *view = args[0];
    if (!PyMemoryView_Check(view)) {
        PyErr_SetString(PyExc_TypeError, "decode_produce needs the frame's memoryview");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    long version = PyLong_AsLong(args[2]);
    if (PyErr_Occurred())
        return NULL;
    Py_buffer *buffer = PyMemoryView_GET_BUFFER(view);
    if (!PyBuffer_IsContiguous(buffer, 'C') || buffer->itemsize != 1 || pos < 0 || pos > buffer->len) {
        PyErr_SetString(PyExc_ValueError, "decode_produce needs a contiguous byte view and a position in it");
        return NULL;
    }
    Reader r = {(const unsigned char *)buffer->buf, pos, buffer->len};
    int flexible = version >= 9;
    PyObject *transactional_id = nullable_string(&r, flexible);
    if (transactional_id == NULL)
        return NULL;
    int16_t acks;
    int32_t timeout_ms;
    Py_ssize_t count;
    PyObject *list = NULL, *acks_obj = NULL, *timeout_obj = NULL;
    if (need(&r, 6) < 0 || int16(&r, &acks) < 0 || int32(&r, &timeout_ms) < 0 ||
        array_length(&r, flexible, &count) < 0 || (list = PyList_New(count)) == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = topic(&r, view, flexible);
        if (item == NULL)
            goto fail;
        PyList_SET_ITEM(list, i, item);
    }
    if (flexible && tagged_fields(&r) < 0)
        goto fail;
    if ((acks_obj = PyLong_FromLong(acks)) == NULL || (timeout_obj = PyLong_FromLong(timeout_ms)) == NULL)
        goto fail;
    PyObject *values[4] = {transactional_id, acks_obj, timeout_obj, list};
    return build(request_type, request_slots, values, 4);
fail:
    Py_DECREF(transactional_id);
    Py_XDECREF(list);
    Py_XDECREF(acks_obj);
    Py_XDECREF(timeout_obj);
    return NULL;
}

/* The member descriptors of ``fields`` in ``type``'s own dictionary (its slots). */
static int slots_of(PyTypeObject *type, const char *const *fields, PyObject **out, int n)
{
    for (int i = 0; i < n; i++) {
        PyObject *descr = PyDict_GetItemString(type->tp_dict, fields[i]);
        if (descr == NULL || Py_TYPE(descr)->tp_descr_set == NULL) {
            PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, fields[i]);
            return -1;
        }
        Py_INCREF(descr);
        Py_XSETREF(out[i], descr);
    }
    return 0;
}

static PyObject *set_types(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *request, *topic_cls, *partition_cls, *error;
    if (!PyArg_ParseTuple(args, "O!O!O!O", &PyType_Type, &request, &PyType_Type, &topic_cls, &PyType_Type,
                          &partition_cls, &error))
        return NULL;
    static const char *const request_fields[] = {"transactional_id", "acks", "timeout_ms", "topic_data"};
    static const char *const topic_fields[] = {"name", "partition_data"};
    static const char *const partition_fields[] = {"index", "records"};
    if (slots_of((PyTypeObject *)request, request_fields, request_slots, 4) < 0 ||
        slots_of((PyTypeObject *)topic_cls, topic_fields, topic_slots, 2) < 0 ||
        slots_of((PyTypeObject *)partition_cls, partition_fields, partition_slots, 2) < 0)
        return NULL;
    Py_INCREF(request);
    Py_XSETREF(request_type, (PyTypeObject *)request);
    Py_INCREF(topic_cls);
    Py_XSETREF(topic_type, (PyTypeObject *)topic_cls);
    Py_INCREF(partition_cls);
    Py_XSETREF(partition_type, (PyTypeObject *)partition_cls);
    Py_INCREF(error);
    Py_XSETREF(corrupt_error, error);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode_produce", (PyCFunction)(void (*)(void))decode_produce, METH_FASTCALL,
     "decode_produce(view, pos, version) -> ProduceRequest"},
    {"set_types", set_types, METH_VARARGS,
     "set_types(ProduceRequest, TopicProduceData, PartitionProduceData, CorruptFrameError)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wire", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__wire(void) { return PyModule_Create(&module); }
