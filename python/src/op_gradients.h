//===- op_gradients.h - an op's backward as calls of other ops ------------===//
//
// The torch ops' C++ kernels (op_kernels.cpp) run a call that needs a
// gradient in an autograd node whose backward calls other ops through the
// dispatcher. Which calls, for each call signature, the op's Python side
// describes (torch_ops.lean_eager's gradient_ops); here a description is
// checked against the ops' schemas and kept for as long as the process.
//
//===----------------------------------------------------------------------===//

#ifndef GGC_PYTHON_OP_GRADIENTS_H
#define GGC_PYTHON_OP_GRADIENTS_H

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/utils/pybind.h>

#include <vector>

namespace ggc::signature {

/// A gradient call's argument that is constant i: kFirstGradientConstant - i.
constexpr int kFirstGradientConstant = -2;

/// An op's gradient for one of its inputs as another op's call: `op` on
/// (for each of its arguments) the incoming gradient (-1), the forward's
/// argument at a position (>= 0: a tensor, or None where the forward had
/// none), or (kFirstGradientConstant - i) constants[i].
struct GradientOp {
  int input;
  c10::OperatorHandle op;
  std::vector<int> sources;
  std::vector<c10::IValue> constants;
};
using GradientOps = std::vector<GradientOp>;

/// The gradient calls `described` ([(input, "ns::op", sources[,
/// constants])]) for a call of the op of schema `forward`, checked (a
/// c10::Error naming what is wrong otherwise) and interned: the same
/// description gives the same list, never freed, since plans and autograd
/// nodes point at it. Null past kMaxGradientPrograms distinct ones.
const GradientOps *internGradients(const c10::FunctionSchema &forward,
                                   pybind11::handle described);

} // namespace ggc::signature

#endif // GGC_PYTHON_OP_GRADIENTS_H
