//===- TensorMapFast.cpp - encode_tiled's fast path as a CPython module ---===//
//
// nvtma.tensormap.encode_tiled spends most of its time in Python: packing a
// struct and crossing ctypes. This module does the same work in one call:
// it reads the arguments (enum spellings through the tables the Python side
// passes once), fills nvtma::tensormap::Params and encodes. It returns None
// for anything it does not take or that the validator refuses, and the
// Python side then takes its checked path, which names the argument or the
// rule. Limited API (abi3): one build serves every CPython >= 3.10, so the
// runtime staged for another machine's Python keeps it. No MLIR, no CUDA.
//
//===----------------------------------------------------------------------===//

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nvtma/TensorMap/TensorMap.h"

#include <cstdint>

using namespace nvtma::tensormap;

namespace {

// dtype, interleave, swizzle, l2_promotion, oob_fill: spelling or int -> value
PyObject *tables[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
// The last key object seen per field and its value: callers pass the same
// constant objects again and again, and an identity check is cheaper than
// a dict lookup. The cache holds a reference, so the address can't be
// reused by another object while it is cached.
PyObject *lastKey[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
uint32_t lastValue[5] = {0, 0, 0, 0, 0};

bool enumValue(int which, PyObject *key, uint32_t &out) {
  if (key == lastKey[which]) {
    out = lastValue[which];
    return true;
  }
  PyObject *v = PyDict_GetItemWithError(tables[which], key); // borrowed
  if (!v)
    return false;
  unsigned long x = PyLong_AsUnsignedLong(v);
  if (x == static_cast<unsigned long>(-1) && PyErr_Occurred())
    return false;
  out = static_cast<uint32_t>(x);
  Py_INCREF(key);
  PyObject *old = lastKey[which];
  lastKey[which] = key;
  lastValue[which] = out;
  Py_XDECREF(old);
  return true;
}

template <typename T>
bool readInts(PyObject *seq, Py_ssize_t n, T *out) {
  // list and tuple only: other sequences take the checked path
  bool isList = PyList_Check(seq), isTuple = !isList && PyTuple_Check(seq);
  if (!isList && !isTuple)
    return false;
  Py_ssize_t size = isList ? PyList_Size(seq) : PyTuple_Size(seq);
  if (size != n)
    return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = isList ? PyList_GetItem(seq, i) : PyTuple_GetItem(seq, i);
    if (!item || !PyLong_Check(item))
      return false;
    unsigned long long v = PyLong_AsUnsignedLongLong(item);
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred())
      return false;
    T t = static_cast<T>(v);
    if (static_cast<unsigned long long>(t) != v)
      return false;
    out[i] = t;
  }
  return true;
}

PyObject *declined() {
  PyErr_Clear();
  Py_RETURN_NONE;
}

// encode_tiled(dtype, rank, address, dims, strides, box, elem_strides,
//              interleave, swizzle, l2_promotion, oob_fill, sm) -> bytes | None
PyObject *encodeTiled(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 12 || !tables[0])
    return declined();
  Params p;
  p.mode = Mode::Tiled;
  uint32_t v;
  if (!enumValue(0, args[0], v))
    return declined();
  p.dataType = static_cast<DataType>(v);
  if (!PyLong_Check(args[1]) || !PyLong_Check(args[2]) || !PyLong_Check(args[11]))
    return declined();
  long rank = PyLong_AsLong(args[1]);
  if (rank < 1 || rank > static_cast<long>(kMaxRank))
    return declined();
  p.rank = static_cast<uint32_t>(rank);
  unsigned long long addr = PyLong_AsUnsignedLongLong(args[2]);
  if (addr == static_cast<unsigned long long>(-1) && PyErr_Occurred())
    return declined();
  p.globalAddress = addr;
  if (!readInts(args[3], rank, p.globalDim) || !readInts(args[4], rank - 1, p.globalStrides) ||
      !readInts(args[5], rank, p.boxDim) || !readInts(args[6], rank, p.elementStrides))
    return declined();
  // interleave, swizzle, l2_promotion, oob_fill: arguments 7..10, tables 1..4
  uint32_t e[4];
  for (int i = 0; i < 4; ++i)
    if (!enumValue(i + 1, args[7 + i], e[i]))
      return declined();
  p.interleave = static_cast<Interleave>(e[0]);
  p.swizzle = static_cast<Swizzle>(e[1]);
  p.l2Promotion = static_cast<L2Promotion>(e[2]);
  p.oobFill = static_cast<OOBFill>(e[3]);
  long sm = PyLong_AsLong(args[11]);
  if (sm < 0 || sm > 1000)
    return declined();
  uint8_t out[kDescriptorBytes];
  if (!encode(p, Target{static_cast<unsigned>(sm)}, out))
    return declined();
  return PyBytes_FromStringAndSize(reinterpret_cast<const char *>(out), kDescriptorBytes);
}

// set_tables((dtype, interleave, swizzle, l2_promotion, oob_fill) dicts)
PyObject *setTables(PyObject *, PyObject *arg) {
  if (!PyTuple_Check(arg) || PyTuple_Size(arg) != 5) {
    PyErr_SetString(PyExc_TypeError, "set_tables takes a tuple of 5 dicts");
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < 5; ++i) {
    PyObject *t = PyTuple_GetItem(arg, i);
    if (!PyDict_Check(t)) {
      PyErr_SetString(PyExc_TypeError, "set_tables takes a tuple of 5 dicts");
      return nullptr;
    }
  }
  for (Py_ssize_t i = 0; i < 5; ++i) {
    Py_CLEAR(lastKey[i]);
    PyObject *t = PyTuple_GetItem(arg, i);
    Py_INCREF(t);
    PyObject *old = tables[i];
    tables[i] = t;
    Py_XDECREF(old);
  }
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"encode_tiled", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(encodeTiled)),
     METH_FASTCALL, "encode_tiled's fast path: bytes, or None to take the checked path"},
    {"set_tables", setTables, METH_O, "enum spelling tables, set once by nvtma.tensormap"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT, "_tensormap_fast", nullptr, -1, methods,
                         nullptr, nullptr, nullptr, nullptr};

} // namespace

PyMODINIT_FUNC PyInit__tensormap_fast(void) { return PyModule_Create(&moduleDef); }
