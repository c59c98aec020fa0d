//===- signature_packing.h - a call's signature packed into bytes --------===//
//
// What ggc._signature's signature() packs for a tensor or a constant, shared
// with the torch ops' C++ kernels (op_kernels.cpp), which key their kept
// launches by the same bytes read from the dispatcher's arguments.
//
//===----------------------------------------------------------------------===//

#ifndef GGC_PYTHON_SIGNATURE_PACKING_H
#define GGC_PYTHON_SIGNATURE_PACKING_H

#include <ATen/core/Tensor.h>

#include <Python.h>

#include <cstdint>
#include <string>

namespace ggc::signature {

// One tag byte a slot says what follows; the value is the layout of the
// bytes, not an interface.
enum Tag : char {
  kNone = 0,
  kTensor = 1,
  kParameter = 2,
  kBool = 3,
  kInt = 4,
  kFloat = 5,
  kString = 6,
};

inline void put(std::string &out, int64_t value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

inline void putTensor(std::string &out, const at::Tensor &t) {
  put(out, t.dim());
  for (int64_t size : t.sizes())
    put(out, size);
  for (int64_t stride : t.strides())
    put(out, stride);
  put(out, static_cast<int64_t>(t.scalar_type()));
  put(out, static_cast<int64_t>(t.device().type()));
  put(out, t.device().index());
  put(out, t.requires_grad());
  put(out, t.is_neg());
}

// The torch ops' C++ kernels (op_kernels.cpp), as ggc._signature's
// functions.
PyObject *installOpKernel(PyObject *, PyObject *const *args, Py_ssize_t nargs);
PyObject *forgetOpPlans(PyObject *, PyObject *);
PyObject *opKernelHits(PyObject *, PyObject *);

} // namespace ggc::signature

#endif // GGC_PYTHON_SIGNATURE_PACKING_H
