//===- TensorMapFast.cpp - nvtma::tensormap as a CPython module -----------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// nvtma.tensormap's native half: the descriptor schema (enums, element
// sizes, swizzle spans, rule names), encode / validate / decode /
// replace_address, CuTe's box rule, and encode_tiled's fast path. Limited
// API (abi3): one build serves every CPython >= 3.10, so the runtime staged
// for another machine's Python keeps it. No MLIR, no CUDA.
//
// The checked entry points take arguments the Python side has already
// checked and converted (exact ints, tuples of exact ints); anything else is
// a TypeError here. A broken driver rule comes back as a tuple (rule, index,
// value, message) for Python to raise as TensorMapError.
//
// The fast path, encode_tiled, takes the caller's arguments as they are and
// returns None for anything it does not take (an int subclass such as bool,
// a float, an unknown spelling) or that the validator refuses; the Python
// side then takes its checked path, which names the argument or the rule.
//
//===----------------------------------------------------------------------===//

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nvtma/TensorMap/TensorMap.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

using namespace nvtma::tensormap;

namespace {

//===----------------------------------------------------------------------===//
// Argument reading
//===----------------------------------------------------------------------===//

/// An exact int (not bool, not another int subclass) that fits `T`.
template <typename T> bool readInt(PyObject *o, T &out) {
  if (!o || !PyLong_CheckExact(o))
    return false;
  if constexpr (std::is_signed_v<T>) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred())
      return false;
    if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
        v > static_cast<long long>(std::numeric_limits<T>::max()))
      return false;
    out = static_cast<T>(v);
  } else {
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred())
      return false;
    if (v > static_cast<unsigned long long>(std::numeric_limits<T>::max()))
      return false;
    out = static_cast<T>(v);
  }
  return true;
}

/// A list or tuple of exactly `n` exact ints that fit `T`.
template <typename T> bool readInts(PyObject *seq, Py_ssize_t n, T *out) {
  bool isList = PyList_Check(seq), isTuple = !isList && PyTuple_Check(seq);
  if (!isList && !isTuple)
    return false;
  Py_ssize_t size = isList ? PyList_Size(seq) : PyTuple_Size(seq);
  if (size != n)
    return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = isList ? PyList_GetItem(seq, i) : PyTuple_GetItem(seq, i);
    if (!readInt(item, out[i]))
      return false;
  }
  return true;
}

PyObject *typeError(const char *what) {
  PyErr_Clear();
  PyErr_Format(PyExc_TypeError, "_tensormap_fast: %s", what);
  return nullptr;
}

/// The failure tuple (rule, index, value, message).
PyObject *failure(const Diagnostic &d) {
  return Py_BuildValue("(siLs)", ruleName(d.rule), d.index,
                       static_cast<long long>(d.value), d.message);
}

//===----------------------------------------------------------------------===//
// Schema
//===----------------------------------------------------------------------===//

// schema() -> tuple of (name, ods_name, cuda_prefix, description,
//                       ((symbol, value, spelling, cuda_suffix), ...))
PyObject *schema(PyObject *, PyObject *) {
  PyObject *enums = PyTuple_New(static_cast<Py_ssize_t>(numEnums()));
  if (!enums)
    return nullptr;
  for (size_t e = 0; e < numEnums(); ++e) {
    const EnumInfo &info = enumInfo(e);
    PyObject *cases = PyTuple_New(static_cast<Py_ssize_t>(info.numCases));
    if (!cases) {
      Py_DECREF(enums);
      return nullptr;
    }
    for (size_t c = 0; c < info.numCases; ++c) {
      const EnumCase &k = info.cases[c];
      PyObject *t = Py_BuildValue("(sIss)", k.symbol, k.value, k.spelling,
                                  k.cudaSuffix);
      if (!t) {
        Py_DECREF(cases);
        Py_DECREF(enums);
        return nullptr;
      }
      PyTuple_SetItem(cases, static_cast<Py_ssize_t>(c), t);
    }
    PyObject *t = Py_BuildValue("(ssssN)", info.name, info.odsName,
                                info.cudaPrefix, info.description, cases);
    if (!t) {
      Py_DECREF(enums);
      return nullptr;
    }
    PyTuple_SetItem(enums, static_cast<Py_ssize_t>(e), t);
  }
  return enums;
}

// element_bits(dtype: int) -> int (0 for an unknown type)
PyObject *elementBitsOf(PyObject *, PyObject *arg) {
  uint32_t v;
  if (!readInt(arg, v))
    return typeError("element_bits takes an int");
  return PyLong_FromUnsignedLong(elementBits(static_cast<DataType>(v)));
}

// swizzle_span_bytes(swizzle: int) -> int (0 for none or an unknown value)
PyObject *swizzleSpan(PyObject *, PyObject *arg) {
  uint32_t v;
  if (!readInt(arg, v))
    return typeError("swizzle_span_bytes takes an int");
  return PyLong_FromUnsignedLong(swizzleSpanBytes(static_cast<Swizzle>(v)));
}

// rule_names() -> tuple of str, indexed by rule number
PyObject *ruleNames(PyObject *, PyObject *) {
  auto n = static_cast<Py_ssize_t>(Rule::NumRules);
  PyObject *t = PyTuple_New(n);
  if (!t)
    return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *s = PyUnicode_FromString(ruleName(static_cast<Rule>(i)));
    if (!s) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SetItem(t, i, s);
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Checked entry points
//===----------------------------------------------------------------------===//

/// Params from the 16 checked arguments: mode, dtype, rank, address, dims,
/// strides, box, lower, upper, channels, pixels, element strides,
/// interleave, swizzle, l2 promotion, oob fill.
bool readParams(PyObject *const *a, Params &p) {
  uint32_t mode, dtype, rank, il, sw, l2, oob;
  if (!readInt(a[0], mode) || mode > 1 || !readInt(a[1], dtype) ||
      !readInt(a[2], rank) || rank < 1 || rank > kMaxRank ||
      !readInt(a[3], p.globalAddress) || !readInt(a[12], il) ||
      !readInt(a[13], sw) || !readInt(a[14], l2) || !readInt(a[15], oob))
    return false;
  p.mode = static_cast<Mode>(mode);
  p.dataType = static_cast<DataType>(dtype);
  p.rank = rank;
  p.interleave = static_cast<Interleave>(il);
  p.swizzle = static_cast<Swizzle>(sw);
  p.l2Promotion = static_cast<L2Promotion>(l2);
  p.oobFill = static_cast<OOBFill>(oob);
  if (!readInts(a[4], rank, p.globalDim) ||
      !readInts(a[5], rank - 1, p.globalStrides) ||
      !readInts(a[11], rank, p.elementStrides))
    return false;
  if (p.mode == Mode::Tiled)
    return readInts(a[6], rank, p.boxDim);
  return rank >= 3 && readInts(a[7], rank - 2, p.pixelBoxLowerCorner) &&
         readInts(a[8], rank - 2, p.pixelBoxUpperCorner) &&
         readInt(a[9], p.channelsPerPixel) && readInt(a[10], p.pixelsPerColumn);
}

// encode(mode, dtype, rank, address, dims, strides, box, lower, upper,
//        channels, pixels, element_strides, interleave, swizzle,
//        l2_promotion, oob_fill, sm, validate_only)
//   -> bytes | True (validate_only) | (rule, index, value, message)
PyObject *encodeChecked(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  Params p;
  uint32_t sm;
  if (nargs != 18 || !readParams(args, p) || !readInt(args[16], sm))
    return typeError("encode takes 18 checked arguments");
  int validateOnly = PyObject_IsTrue(args[17]);
  if (validateOnly < 0)
    return nullptr;
  Diagnostic d;
  if (validateOnly) {
    if (!validate(p, Target{sm}, &d))
      return failure(d);
    Py_RETURN_TRUE;
  }
  uint8_t out[kDescriptorBytes];
  if (!encode(p, Target{sm}, out, &d))
    return failure(d);
  return PyBytes_FromStringAndSize(reinterpret_cast<const char *>(out),
                                   kDescriptorBytes);
}

/// A tuple of the first `n` entries of `v`.
template <typename T> PyObject *intTuple(const T *v, unsigned n) {
  PyObject *t = PyTuple_New(n);
  if (!t)
    return nullptr;
  for (unsigned i = 0; i < n; ++i) {
    PyObject *x = std::is_signed_v<T>
                      ? PyLong_FromLongLong(static_cast<long long>(v[i]))
                      : PyLong_FromUnsignedLongLong(
                            static_cast<unsigned long long>(v[i]));
    if (!x) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SetItem(t, i, x);
  }
  return t;
}

// decode(desc: bytes of 128) -> dict of fields | (rule, index, value, message)
PyObject *decodeChecked(PyObject *, PyObject *arg) {
  char *data;
  Py_ssize_t size;
  if (!PyBytes_Check(arg) || PyBytes_AsStringAndSize(arg, &data, &size) < 0 ||
      size != kDescriptorBytes)
    return typeError("decode takes 128 bytes");
  Params p;
  Diagnostic d;
  if (!decode(reinterpret_cast<const uint8_t *>(data), p, &d))
    return failure(d);
  unsigned r = p.rank;
  bool im2col = p.mode == Mode::Im2col;
  return Py_BuildValue(
      "{s:s,s:I,s:I,s:K,s:N,s:N,s:N,s:I,s:I,s:I,s:I,s:N,s:N,s:N,s:I,s:I}",
      "mode", im2col ? "im2col" : "tiled", "dtype",
      static_cast<unsigned>(p.dataType), "rank", r, "global_address",
      static_cast<unsigned long long>(p.globalAddress), "global_dim",
      intTuple(p.globalDim, r), "global_strides",
      intTuple(p.globalStrides, r - 1), "element_strides",
      intTuple(p.elementStrides, r), "interleave",
      static_cast<unsigned>(p.interleave), "swizzle",
      static_cast<unsigned>(p.swizzle), "l2_promotion",
      static_cast<unsigned>(p.l2Promotion), "oob_fill",
      static_cast<unsigned>(p.oobFill), "box_dim",
      intTuple(p.boxDim, im2col ? 0 : r), "pixel_box_lower_corner",
      intTuple(p.pixelBoxLowerCorner, im2col ? r - 2 : 0),
      "pixel_box_upper_corner",
      intTuple(p.pixelBoxUpperCorner, im2col ? r - 2 : 0),
      "channels_per_pixel", p.channelsPerPixel, "pixels_per_column",
      p.pixelsPerColumn);
}

// replace_address(desc: bytes of 128, address: int)
//   -> bytes | (rule, index, value, message)
PyObject *replaceAddressChecked(PyObject *, PyObject *const *args,
                                Py_ssize_t nargs) {
  char *data;
  Py_ssize_t size;
  uint64_t address;
  if (nargs != 2 || !PyBytes_Check(args[0]) ||
      PyBytes_AsStringAndSize(args[0], &data, &size) < 0 ||
      size != kDescriptorBytes || !readInt(args[1], address))
    return typeError("replace_address takes 128 bytes and an int");
  uint8_t desc[kDescriptorBytes];
  std::memcpy(desc, data, kDescriptorBytes);
  Diagnostic d;
  if (!replaceAddress(desc, address, &d))
    return failure(d);
  return PyBytes_FromStringAndSize(reinterpret_cast<const char *>(desc),
                                   kDescriptorBytes);
}

// cute_box(tile: tuple of int, num_multicast, swizzle, element_bits,
//          interleave) -> list of int | (rule, index, value, message)
PyObject *cuteBoxChecked(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 5 || !PyTuple_Check(args[0]))
    return typeError("cute_box takes a tuple and four ints");
  Py_ssize_t rank = PyTuple_Size(args[0]);
  int64_t tile[kMaxRank] = {}, box[kMaxRank] = {};
  uint32_t multicast, swizzle, bits, interleave;
  if (rank < 1 || rank > static_cast<Py_ssize_t>(kMaxRank)) {
    Diagnostic d;
    d.rule = Rule::RankRange;
    d.value = rank;
    std::snprintf(d.message, sizeof(d.message),
                  "rank-range: the tile has %zd dims, the range is 1..%u",
                  rank, kMaxRank);
    return failure(d);
  }
  if (!readInts(args[0], rank, tile) || !readInt(args[1], multicast) ||
      !readInt(args[2], swizzle) || !readInt(args[3], bits) ||
      !readInt(args[4], interleave))
    return typeError("cute_box takes a tuple and four ints");
  Diagnostic d;
  if (!cuteBox(tile, static_cast<unsigned>(rank), multicast,
               static_cast<Swizzle>(swizzle), bits,
               static_cast<Interleave>(interleave), box, &d))
    return failure(d);
  PyObject *out = PyList_New(rank);
  if (!out)
    return nullptr;
  for (Py_ssize_t i = 0; i < rank; ++i)
    PyList_SetItem(out, i, PyLong_FromLongLong(box[i]));
  return out;
}

//===----------------------------------------------------------------------===//
// encode_tiled's fast path
//===----------------------------------------------------------------------===//

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
  // Exact str or exact int keys only: True == 1 and 6.0 == 6 as dict keys,
  // and silently accepting those is what the checked path refuses.
  if (!PyUnicode_CheckExact(key) && !PyLong_CheckExact(key))
    return false;
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
  uint32_t rank, sm;
  if (!readInt(args[1], rank) || rank < 1 || rank > kMaxRank ||
      !readInt(args[2], p.globalAddress) || !readInt(args[11], sm))
    return declined();
  p.rank = rank;
  if (!readInts(args[3], rank, p.globalDim) ||
      !readInts(args[4], rank - 1, p.globalStrides) ||
      !readInts(args[5], rank, p.boxDim) ||
      !readInts(args[6], rank, p.elementStrides))
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
  uint8_t out[kDescriptorBytes];
  if (!encode(p, Target{sm}, out))
    return declined();
  return PyBytes_FromStringAndSize(reinterpret_cast<const char *>(out),
                                   kDescriptorBytes);
}

// set_tables((dtype, interleave, swizzle, l2_promotion, oob_fill) dicts)
PyObject *setTables(PyObject *, PyObject *arg) {
  if (!PyTuple_Check(arg) || PyTuple_Size(arg) != 5)
    return typeError("set_tables takes a tuple of 5 dicts");
  for (Py_ssize_t i = 0; i < 5; ++i)
    if (!PyDict_Check(PyTuple_GetItem(arg, i)))
      return typeError("set_tables takes a tuple of 5 dicts");
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

template <typename F> PyCFunction fast(F f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef methods[] = {
    {"schema", schema, METH_NOARGS,
     "the descriptor enums of Schema.def: ((name, ods_name, cuda_prefix, "
     "description, ((symbol, value, spelling, cuda_suffix), ...)), ...)"},
    {"element_bits", elementBitsOf, METH_O,
     "bits of one element of a CUtensorMapDataType value (0: unknown)"},
    {"swizzle_span_bytes", swizzleSpan, METH_O,
     "bytes a CUtensorMapSwizzle value permutes (0: none or unknown)"},
    {"rule_names", ruleNames, METH_NOARGS, "the validator's rule names"},
    {"encode", fast(encodeChecked), METH_FASTCALL,
     "encode / validate checked arguments: bytes, True or a failure tuple"},
    {"decode", decodeChecked, METH_O,
     "the fields of 128 descriptor bytes, or a failure tuple"},
    {"replace_address", fast(replaceAddressChecked), METH_FASTCALL,
     "a descriptor with another address, or a failure tuple"},
    {"cute_box", fast(cuteBoxChecked), METH_FASTCALL,
     "CuTe's TMA box of a tile, or a failure tuple"},
    {"encode_tiled", fast(encodeTiled), METH_FASTCALL,
     "encode_tiled's fast path: bytes, or None to take the checked path"},
    {"set_tables", setTables, METH_O,
     "enum spelling tables, set once by nvtma.tensormap"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT,
                         "_tensormap_fast",
                         "nvtma.tensormap's native half (no MLIR, no CUDA)",
                         -1,
                         methods,
                         nullptr,
                         nullptr,
                         nullptr,
                         nullptr};

} // namespace

PyMODINIT_FUNC PyInit__tensormap_fast(void) {
  return PyModule_Create(&moduleDef);
}
