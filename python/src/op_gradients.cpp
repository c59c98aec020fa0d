//===- op_gradients.cpp - an op's backward as calls of other ops ----------===//
//
// internGradients (op_gradients.h): a call's gradient calls, as the op's
// Python side describes them, checked against the schemas and kept.
//
//===----------------------------------------------------------------------===//

#include "op_gradients.h"

#include <pybind11/stl.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace ggc::signature {
namespace {

/// Whether an argument takes a tensor (or None: Optional[Tensor]).
bool takesTensor(const c10::Argument &argument) {
  return argument.type()->kind() == c10::TypeKind::TensorType ||
         argument.type()->isSubtypeOf(*c10::OptionalType::ofTensor());
}

/// One gradient call, (input, "ns::op", sources[, constants]), checked
/// against the forward's schema: each source -1 (the incoming gradient),
/// the position of a tensor argument of the forward's, or (kFirstGradientConstant - i)
/// a constant, which becomes the gradient op's argument's IValue.
GradientOp gradientOp(const c10::FunctionSchema &forward, pybind11::handle item) {
  auto entry = item.cast<pybind11::tuple>();
  int input = entry[0].cast<int>();
  std::string name = entry[1].cast<std::string>();
  std::vector<int> sources = entry[2].cast<std::vector<int>>();
  auto op = c10::Dispatcher::singleton().findSchema({name, ""});
  TORCH_CHECK_VALUE(op, "ggc gradient ops: no op ", name);
  const auto &arguments = forward.arguments();
  const auto &taken = op->schema().arguments();
  TORCH_CHECK_VALUE(input >= 0 && input < static_cast<int>(arguments.size()),
                    "ggc gradient ops: input ", input, " is not an argument of ", forward.name());
  TORCH_CHECK_VALUE(sources.size() == taken.size(), "ggc gradient ops: ", name, " takes ",
                    taken.size(), " arguments, given ", sources.size());
  std::vector<c10::IValue> constants; // None where no source names it
  if (entry.size() > 3)
    constants.resize(entry[3].cast<pybind11::list>().size());
  for (size_t i = 0; i < sources.size(); ++i) {
    int source = sources[i];
    if (source <= kFirstGradientConstant) {
      size_t at = static_cast<size_t>(kFirstGradientConstant - source);
      TORCH_CHECK_VALUE(at < constants.size(), "ggc gradient ops: source ", source, " of ",
                        name, " names a constant not given");
      constants[at] = torch::jit::toIValue(entry[3].cast<pybind11::list>()[at],
                                           taken[i].real_type());
      continue;
    }
    TORCH_CHECK_VALUE(source >= -1 && source < static_cast<int>(arguments.size()),
                      "ggc gradient ops: source ", source, " of ", name,
                      " is neither -1, an argument nor a constant");
    TORCH_CHECK_VALUE(takesTensor(taken[i]),
                      "ggc gradient ops: ", name, "'s '", taken[i].name(),
                      "' takes no tensor, given source ", source);
    TORCH_CHECK_VALUE(source == -1 || takesTensor(arguments[source]),
                      "ggc gradient ops: source ", source, " of ", name, " is '",
                      arguments[source].name(), "', not a tensor");
  }
  return {input, *op, std::move(sources), std::move(constants)};
}

// As many as the ops' distinct backward programs (layouts and dtypes).
constexpr size_t kMaxGradientPrograms = 512;

std::mutex internMutex;
std::map<std::string, std::unique_ptr<const GradientOps>> interned;

} // namespace

const GradientOps *internGradients(const c10::FunctionSchema &forward,
                                   pybind11::handle described) {
  std::string key =
      forward.name() + ": " + pybind11::repr(described).cast<std::string>();
  {
    std::lock_guard<std::mutex> lock(internMutex);
    auto found = interned.find(key);
    if (found != interned.end())
      return found->second.get();
  }
  // Built outside the lock: it runs Python, which may hand the GIL over.
  auto ops = std::make_unique<GradientOps>();
  for (pybind11::handle item : described)
    ops->push_back(gradientOp(forward, item));
  std::lock_guard<std::mutex> lock(internMutex);
  auto &slot = interned[key];
  if (!slot) {
    if (interned.size() > kMaxGradientPrograms) {
      interned.erase(key);
      return nullptr;
    }
    slot = std::move(ops);
  }
  return slot.get();
}

} // namespace ggc::signature
