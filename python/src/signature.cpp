//===- signature.cpp - ggc._signature: a call's signature, read in C++ ----===//
//
// Every cached launch (ggc.ops, the torch ops, the drop-ins, @ggc.jit,
// ggc.Kernel) is found by its call's signature: each argument's type, and a
// tensor's dtype, shape, strides, device and requires_grad. Python reads
// them through five attribute calls a tensor, most of a cached call's host
// time; here they come straight from the at::Tensor behind each torch.Tensor
// and are packed into one bytes object: two calls get equal bytes exactly
// when ggc.signature's Python tuples would be equal (which, unlike these
// bytes, also take -0.0 for 0.0).
//
// addresses() reads the data addresses a cached launch passes, the same way,
// and empty() allocates a cached launch's output without Python's argument
// parsing of torch.empty.
//
// Built against the torch the build's Python imports (python/CMakeLists.txt);
// ggc.signature uses it only under that torch build, else keeps Python's.
//
//===----------------------------------------------------------------------===//

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <pybind11/pybind11.h>

#include "signature_packing.h"

#include <Python.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace ggc::signature;

// Appends one argument; false for one this packing does not cover (a
// tensor subclass or one not strided, an int past 64 bits, any other object).
bool putArgument(std::string &out, PyObject *arg) {
  if (arg == Py_None) {
    out.push_back(kNone);
    return true;
  }
  PyTypeObject *type = Py_TYPE(arg);
  if (THPVariableClass && THPVariable_CheckTypeExact(type)) {
    const at::Tensor &tensor = THPVariable_Unpack(arg);
    if (tensor.layout() != at::kStrided)
      return false;
    out.push_back(type == reinterpret_cast<PyTypeObject *>(ParameterClass)
                      ? kParameter
                      : kTensor);
    putTensor(out, tensor);
    return true;
  }
  if (PyBool_Check(arg)) {
    out.push_back(kBool);
    out.push_back(arg == Py_True);
    return true;
  }
  if (PyLong_CheckExact(arg)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (overflow)
      return false;
    out.push_back(kInt);
    put(out, value);
    return true;
  }
  if (PyFloat_CheckExact(arg)) {
    double value = PyFloat_AS_DOUBLE(arg);
    int64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    out.push_back(kFloat);
    put(out, bits);
    return true;
  }
  if (PyUnicode_CheckExact(arg)) {
    Py_ssize_t length = 0;
    const char *text = PyUnicode_AsUTF8AndSize(arg, &length);
    if (!text) {
      PyErr_Clear();
      return false;
    }
    out.push_back(kString);
    put(out, length);
    out.append(text, length);
    return true;
  }
  return false;
}

// signature(args) -> bytes, or None when an argument is not one this
// packing covers (the caller then builds Python's tuple).
PyObject *signature(PyObject *, PyObject *args) {
  // Under a TorchFunctionMode a tensor's attributes may answer otherwise:
  // Python reads them through the mode.
  if (at::impl::torch_function_mode_enabled())
    Py_RETURN_NONE;
  PyObject *sequence = PySequence_Fast(args, "signature: args must be a sequence");
  if (!sequence)
    return nullptr;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  PyObject **items = PySequence_Fast_ITEMS(sequence);
  std::string packed;
  packed.reserve(64 * count);
  bool covered = true;
  try {
    for (Py_ssize_t i = 0; i < count && covered; ++i)
      covered = putArgument(packed, items[i]);
  } catch (...) {
    PyErr_Clear();
    covered = false; // symbolic sizes, say: Python's path
  }
  Py_DECREF(sequence);
  if (!covered)
    Py_RETURN_NONE;
  return PyBytes_FromStringAndSize(packed.data(), packed.size());
}

// addresses(values, positions) -> [values[i].data_ptr() for i in positions],
// or None where one is not a plain tensor with data (Python's path then).
PyObject *addresses(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "addresses(values, positions)");
    return nullptr;
  }
  // Positions as a list, tuple or range only (an iterator read here would
  // leave nothing for Python's path); no TorchFunctionMode (data_ptr() goes
  // through it in Python).
  if (!(PyList_CheckExact(args[1]) || PyTuple_CheckExact(args[1]) ||
        PyRange_Check(args[1])) ||
      at::impl::torch_function_mode_enabled())
    Py_RETURN_NONE;
  PyObject *values = PySequence_Fast(args[0], "addresses: values must be a sequence");
  if (!values)
    return nullptr;
  PyObject *positions = PySequence_Fast(args[1], "addresses: positions must be a sequence");
  if (!positions) {
    Py_DECREF(values);
    return nullptr;
  }
  Py_ssize_t count = PySequence_Fast_GET_SIZE(positions);
  Py_ssize_t size = PySequence_Fast_GET_SIZE(values);
  PyObject *result = PyList_New(count);
  bool covered = result != nullptr && THPVariableClass;
  try {
    for (Py_ssize_t i = 0; i < count && covered; ++i) {
      Py_ssize_t at = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(positions, i));
      covered = at >= 0 && at < size;
      PyObject *value = covered ? PySequence_Fast_GET_ITEM(values, at) : nullptr;
      covered = covered && THPVariable_CheckTypeExact(Py_TYPE(value));
      if (!covered)
        break;
      auto address = reinterpret_cast<uintptr_t>(THPVariable_Unpack(value).data_ptr());
      PyObject *number = PyLong_FromUnsignedLongLong(address);
      covered = number != nullptr;
      if (covered)
        PyList_SET_ITEM(result, i, number);
    }
  } catch (...) {
    covered = false; // no storage (a meta tensor, say): Python's path
  }
  Py_DECREF(values);
  Py_DECREF(positions);
  if (covered)
    return result;
  Py_XDECREF(result);
  PyErr_Clear();
  Py_RETURN_NONE;
}

// empty(sizes, like) -> a new contiguous tensor of `sizes` (a tuple of
// ints) with like's dtype, device and layout, as torch.empty(sizes,
// dtype=like.dtype, device=like.device) makes it, the GIL released while
// the allocator works, and its errors raised as torch.empty raises them;
// None where Python's torch.empty must answer (a TorchFunctionMode, sizes
// not a tuple of non-negative ints, like not a plain tensor).
PyObject *empty(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "empty(sizes, like)");
    return nullptr;
  }
  if (!PyTuple_CheckExact(args[0]) || !THPVariableClass ||
      !THPVariable_CheckTypeExact(Py_TYPE(args[1])) ||
      at::impl::torch_function_mode_enabled())
    Py_RETURN_NONE;
  Py_ssize_t rank = PyTuple_GET_SIZE(args[0]);
  std::vector<int64_t> sizes(rank);
  for (Py_ssize_t i = 0; i < rank; ++i) {
    PyObject *size = PyTuple_GET_ITEM(args[0], i);
    long long value = PyLong_CheckExact(size) ? PyLong_AsLongLong(size) : -1;
    if (value < 0) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    sizes[i] = value;
  }
  at::TensorOptions options = THPVariable_Unpack(args[1]).options();
  at::Tensor made;
  {
    pybind11::gil_scoped_release released;
    made = at::empty(sizes, options);
  }
  return THPVariable_Wrap(std::move(made));
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"signature", signature, METH_O,
     "The signature of a call's arguments as bytes, or None."},
    {"addresses", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(addresses)),
     METH_FASTCALL, "The data addresses of values[i] for each i of positions, or None."},
    {"empty", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(empty)),
     METH_FASTCALL, "A new contiguous tensor of sizes with like's dtype and device, or None."},
    {"install_op_kernel",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(installOpKernel)),
     METH_FASTCALL, "Registers a torch op's C++ kernel for one dispatch key."},
    {"forget_op_plans", forgetOpPlans, METH_NOARGS,
     "Drops every launch the torch ops' C++ kernels keep."},
    {"op_kernel_hits", opKernelHits, METH_NOARGS,
     "How many calls the torch ops' C++ kernels launched without Python."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_signature", nullptr, -1, methods};

} // namespace

PyMODINIT_FUNC PyInit__signature() {
  PyObject *m = PyModule_Create(&module);
  // The torch build this module reads tensors of: ggc.signature compares
  // them with the imported torch's before using it.
  if (m && (PyModule_AddStringConstant(m, "torch_version", GGC_TORCH_VERSION) < 0 ||
            PyModule_AddStringConstant(m, "torch_git_version", GGC_TORCH_GIT_VERSION) < 0 ||
            PyModule_AddIntConstant(m, "cxx11_abi", _GLIBCXX_USE_CXX11_ABI) < 0)) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
