//===- op_kernels.cpp - the torch ops' eager kernels, in C++ --------------===//
//
// torch.ops.ggc.grouped_gemm and its kin have Python kernels: the dispatcher
// boxes a call's arguments into Python objects, calls the op's body, which
// finds the launch ggc.ops keeps for the call's signature (ops.remembered),
// and unboxes what the body returns. That round trip through Python is most
// of a cached call's host time. Here an op may instead get a C++ kernel on
// its backend and autograd keys: a call whose packed arguments it has seen
// before launches the kept plan without Python (and without the GIL, which
// torch's Python entry to the dispatcher released); any other call runs the
// op's Python kernel (`fallback`) as before, and then the kernel asks Python
// (`learn`) whether ggc keeps a launch for that call, and keeps what it says.
//
// A plan holds for as long as what decided it: the packed arguments (each
// tensor's signature and each constant), grad mode, and ggc's settings
// (target, SMs, shared memory, DRAM bandwidth, validation by default), whose
// setters call forget_op_plans(). A call whose dispatch keys ask for more than the
// backend (a mode, a subclass, a negative view) always takes the Python
// kernel, which decides as before; so does a call that needs a gradient,
// but for an op that describes a call's backward as calls of other ops
// (GradientOp: grouped_mm's and grouped_gemm's), which then runs in a C++
// autograd node.
//
//===----------------------------------------------------------------------===//

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include "op_gradients.h"
#include "signature_packing.h"

#include <Python.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ggc::signature {
namespace {

/// How a kept launch record is launched: ggc._ggc's LaunchRecord.raw gives
/// the record's address and this function's. 0 on success; else the error
/// is written to `error`.
using LaunchFn = int (*)(const void *record, const uint64_t *addresses, size_t count,
                         uint64_t stream, char *error, size_t errorSize);

/// Where a launch address comes from: a stack position (>= 0), the output
/// the call allocates, or (kConstant - i) the plan's constant i.
constexpr int kNewOutput = -1;
constexpr int kConstant = -2;

/// A kept launch, as learn() describes it.
struct Plan {
  PyObject *owner = nullptr; // Python's plan: keeps the launch, kernel, unit scales
  const void *record = nullptr;
  LaunchFn launch = nullptr; // null: nothing to launch (an empty problem)
  int cudaDevice = -1;       // -1: not a CUDA device (host_time's CPU stub)
  std::vector<int> sources;
  std::vector<uint64_t> constants;
  bool allocates = false;
  std::vector<int64_t> outShape;
  at::TensorOptions outOptions;
  /// For a call launched in an autograd node: its gradients' calls
  /// (interned, never freed), else null.
  const GradientOps *gradients = nullptr;

  ~Plan() {
    if (owner && Py_IsInitialized()) {
      PyGILState_STATE gil = PyGILState_Ensure();
      Py_DECREF(owner);
      PyGILState_Release(gil);
    }
  }
};

/// An op's kept plans, shared by its kernels on every key, and the keys
/// whose calls learn() said ggc keeps no launch for (offsets made from
/// `offs`, validation, a copied argument): those skip learn() until the
/// plans are forgotten.
struct PlanTable {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const Plan>> plans;
  std::unordered_set<std::string> refused;

  /// The key's plan, or null; `isRefused` whether learn() refused it.
  std::shared_ptr<const Plan> find(const std::string &key, bool &isRefused) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = plans.find(key);
    isRefused = found == plans.end() && refused.count(key);
    return found == plans.end() ? nullptr : found->second;
  }
};

// As many signatures as ggc.ops keeps plans for.
constexpr size_t kMaxPlans = 512;

std::mutex registryMutex;
std::unordered_map<std::string, PlanTable *> tables; // by op; never freed
std::atomic<uint64_t> hits{0};
// Counts forget_op_plans() calls: a plan learnt while one ran (another
// thread's) is not kept.
std::atomic<uint64_t> generation{0};

/// The keys below autograd of a call the fast path may take: the CPU or
/// CUDA backend or both, with or without ADInplaceOrView (left out of an op
/// that mutates nothing); what torch_ops._DIRECT lets a Python kernel run
/// its body for.
bool plainBackend(c10::DispatchKeySet keys) {
  using c10::DispatchKey;
  using c10::DispatchKeySet;
  DispatchKeySet below = keys & c10::after_autograd_keyset;
  DispatchKeySet cpu(DispatchKey::CPU), cuda(DispatchKey::CUDA);
  for (DispatchKeySet backends : {cpu, cuda, cpu | cuda})
    for (DispatchKeySet extra : {DispatchKeySet(DispatchKey::ADInplaceOrView), DispatchKeySet()})
      if (below == (backends | extra))
        return true;
  return false;
}

bool anyRequiresGrad(c10::ArrayRef<c10::IValue> args) {
  for (const c10::IValue &arg : args)
    if (arg.isTensor() && arg.toTensor().defined() && arg.toTensor().requires_grad())
      return true;
  return false;
}

/// The first byte of a key: grad mode (0 or 1) of a call launched as is,
/// or this for one launched in an autograd node (KeptLaunchWithGradients).
constexpr char kThroughGradients = 2;

/// packKey's packing: false where an argument is not covered.
bool packArguments(c10::ArrayRef<c10::IValue> args, std::string &key, char mode) {
  key.reserve(64 * args.size());
  key.push_back(mode);
  try {
    for (const c10::IValue &arg : args) {
      if (arg.isNone() || (arg.isTensor() && !arg.toTensor().defined())) {
        key.push_back(kNone);
      } else if (arg.isTensor()) {
        key.push_back(kTensor);
        putTensor(key, arg.toTensor());
      } else if (arg.isBool()) {
        key.push_back(kBool);
        key.push_back(arg.toBool());
      } else if (arg.isInt()) { // ScalarType too, as the dispatcher boxes it
        key.push_back(kInt);
        put(key, arg.toInt());
      } else if (arg.isDouble()) {
        key.push_back(kFloat);
        double value = arg.toDouble();
        int64_t bits;
        std::memcpy(&bits, &value, sizeof(bits));
        put(key, bits);
      } else if (arg.isString()) {
        const std::string &text = arg.toStringRef();
        key.push_back(kString);
        put(key, static_cast<int64_t>(text.size()));
        key.append(text);
      } else {
        return false;
      }
    }
  } catch (...) { // symbolic sizes, say
    return false;
  }
  return true;
}

/// The call's arguments packed as ggc.signature packs them, after `mode`
/// (above); false, `key` left empty, for an argument it does not cover (a
/// key of the arguments before it would find another call's plan).
bool packKey(c10::ArrayRef<c10::IValue> args, std::string &key, char mode) {
  if (!packArguments(args, key, mode)) {
    key.clear();
    return false;
  }
  return true;
}

/// An argument's type, an Optional's element type for an Optional
/// (real_type: type() says int for a ScalarType).
c10::TypePtr elementType(const c10::Argument &argument) {
  c10::TypePtr type = argument.real_type();
  if (auto optional = type->cast<c10::OptionalType>())
    return optional->getElementType();
  return type;
}

bool isScalarType(const c10::Argument &argument) {
  return elementType(argument)->kind() == c10::TypeKind::ScalarTypeType;
}

/// Why the op's C++ kernel cannot pass its arguments to Python, or "".
std::string unsupportedSchema(const c10::FunctionSchema &schema) {
  for (const c10::Argument &argument : schema.arguments()) {
    switch (elementType(argument)->kind()) {
    case c10::TypeKind::TensorType:
    case c10::TypeKind::BoolType:
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::FloatType:
    case c10::TypeKind::StringType:
    case c10::TypeKind::ScalarTypeType:
      break;
    default:
      return "argument '" + argument.name() + "' is a " + argument.real_type()->str();
    }
    if (argument.kwarg_only())
      return "argument '" + argument.name() + "' is keyword-only";
  }
  if (schema.returns().size() > 1 ||
      (schema.returns().size() == 1 &&
       schema.returns()[0].type()->kind() != c10::TypeKind::TensorType))
    return "it returns something other than one tensor or nothing";
  return "";
}

uint64_t currentStream(const Plan &plan) {
  if (plan.cudaDevice < 0)
    return 0;
  c10::Device device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(plan.cudaDevice));
  return reinterpret_cast<uint64_t>(
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device).native_handle());
}

/// One call of a kept plan: its addresses gathered, then launched.
struct KeptCall {
  static constexpr size_t kMaxAddresses = 64;
  const Plan *plan;
  uint64_t addresses[kMaxAddresses];
  int newOutputAt;

  /// The call's addresses; false where one is not 16-byte aligned.
  bool gather(c10::ArrayRef<c10::IValue> args) {
    size_t n = plan->sources.size();
    if (n > kMaxAddresses)
      return false;
    for (size_t i = 0; i < n; ++i) {
      int source = plan->sources[i];
      if (source == kNewOutput) {
        newOutputAt = static_cast<int>(i);
        addresses[i] = 0;
      } else if (source <= kConstant) {
        addresses[i] = plan->constants[kConstant - source];
      } else {
        addresses[i] = reinterpret_cast<uint64_t>(args[source].toTensor().data_ptr());
      }
      if (addresses[i] & 15)
        return false;
    }
    return true;
  }

  /// Launches; the new output, where the plan allocates one.
  at::Tensor run() {
    at::Tensor out;
    if (plan->allocates) {
      out = at::empty(plan->outShape, plan->outOptions);
      if (newOutputAt >= 0)
        addresses[newOutputAt] = reinterpret_cast<uint64_t>(out.data_ptr());
    }
    if (plan->launch) {
      char error[512] = {0};
      if (plan->launch(plan->record, addresses, plan->sources.size(), currentStream(*plan),
                       error, sizeof(error)))
        throw std::runtime_error(error);
    }
    hits.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
};

/// The autograd node of a kept launch whose op's gradients are ops
/// (GradientOp): the forward launches the plan, the backward calls the
/// gradients' ops through the dispatcher (their own C++ kernels). `inputs`
/// are the call's tensors; `indexOf` gives each argument's index among
/// them, or -1 where the argument is no tensor (autograd takes defined
/// tensors only).
struct KeptLaunchWithGradients
    : public torch::autograd::Function<KeptLaunchWithGradients> {
  using Variables = torch::autograd::variable_list;
  static constexpr size_t kLeading = 3; // the arguments before `inputs`

  static Variables forward(torch::autograd::AutogradContext *ctx, KeptCall *call,
                           const GradientOps *gradients, std::vector<int64_t> indexOf,
                           at::TensorList inputs) {
    ctx->saved_data["gradients"] = reinterpret_cast<int64_t>(gradients);
    ctx->saved_data["index_of"] = std::move(indexOf);
    ctx->save_for_backward(inputs.vec());
    return {call->run()};
  }

  static Variables backward(torch::autograd::AutogradContext *ctx, Variables grads) {
    auto gradients = reinterpret_cast<const GradientOps *>(ctx->saved_data["gradients"].toInt());
    std::vector<int64_t> indexOf = ctx->saved_data["index_of"].toIntVector();
    Variables saved = ctx->get_saved_variables();
    Variables result(saved.size() + kLeading);
    if (!grads[0].defined())
      return result;
    at::Tensor grad = grads[0].contiguous();
    for (const GradientOp &gradient : *gradients) {
      int64_t input = indexOf[gradient.input];
      if (input < 0 || !ctx->needs_input_grad(input))
        continue;
      torch::jit::Stack stack;
      for (int source : gradient.sources) {
        if (source <= kFirstGradientConstant)
          stack.emplace_back(gradient.constants[kFirstGradientConstant - source]);
        else if (source < 0)
          stack.emplace_back(grad);
        else if (indexOf[source] >= 0)
          stack.emplace_back(saved[indexOf[source]]);
        else
          stack.emplace_back(); // None: the forward had no tensor there
      }
      gradient.op.callBoxed(stack);
      result[input + kLeading] = stack.at(0).toTensor();
    }
    return result;
  }
};

class OpKernel final : public c10::OperatorKernel {
public:
  OpKernel(PlanTable *table, bool autogradKey, PyObject *fallback, PyObject *learn,
           std::vector<int> mutated, PyObject *gradientsFor)
      : table_(table), autogradKey_(autogradKey), fallback_(fallback), learn_(learn),
        mutated_(std::move(mutated)), gradientsFor_(gradientsFor) {}

  void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                  torch::jit::Stack *stack) {
    size_t count = op.schema().arguments().size();
    c10::ArrayRef<c10::IValue> args = torch::jit::last(*stack, count);
    uint64_t seen = generation.load();
    std::string key;
    bool withGradients = throughGradients(keys, args);
    bool packed = withGradients ? packKey(args, key, kThroughGradients)
                                : mayKeep(keys, args) &&
                                      packKey(args, key, c10::GradMode::is_enabled());
    if (packed) {
      bool refused = false;
      if (std::shared_ptr<const Plan> plan = table_->find(key, refused)) {
        if (withGradients ? launchWithGradients(*plan, args, stack, count)
                          : launchKept(*plan, args, stack, count))
          return;
      } else if (refused) {
        key.clear(); // nothing to learn
      }
    }
    runInPython(op, keys, stack, count, key, withGradients, seen);
  }

private:
  /// Whether this call needs a gradient that the op's gradient ops give
  /// (GradientOp): nothing but the backend below autograd, and grad mode.
  bool throughGradients(c10::DispatchKeySet keys, c10::ArrayRef<c10::IValue> args) const {
    return autogradKey_ && gradientsFor_ && plainBackend(keys) &&
           c10::GradMode::is_enabled() && anyRequiresGrad(args);
  }

  /// launchKept for a call that needs a gradient: the launch in an
  /// autograd node whose backward calls the gradient ops.
  bool launchWithGradients(const Plan &plan, c10::ArrayRef<c10::IValue> args,
                           torch::jit::Stack *stack, size_t count) {
    KeptCall call{&plan, {}, -1};
    if (!plan.allocates || !plan.gradients || !call.gather(args))
      return false;
    std::vector<at::Tensor> inputs;
    std::vector<int64_t> indexOf;
    for (const c10::IValue &arg : args) {
      bool tensor = arg.isTensor() && arg.toTensor().defined();
      indexOf.push_back(tensor ? static_cast<int64_t>(inputs.size()) : -1);
      if (tensor)
        inputs.push_back(arg.toTensor());
    }
    Variables outputs = KeptLaunchWithGradients::apply(&call, plan.gradients, std::move(indexOf),
                                                       at::TensorList(inputs));
    torch::jit::drop(*stack, count);
    stack->emplace_back(std::move(outputs.at(0)));
    return true;
  }

  using Variables = torch::autograd::variable_list;
  /// Whether a kept plan may run this call: at an autograd key only when no
  /// gradient is needed and nothing but the backend is below.
  bool mayKeep(c10::DispatchKeySet keys, c10::ArrayRef<c10::IValue> args) const {
    if (!autogradKey_)
      return true;
    return plainBackend(keys) && !(c10::GradMode::is_enabled() && anyRequiresGrad(args));
  }

  /// Launches `plan` on the call's tensors and replaces the arguments on
  /// the stack by its result; false where an address is not 16-byte
  /// aligned (the Python kernel then says which).
  bool launchKept(const Plan &plan, c10::ArrayRef<c10::IValue> args, torch::jit::Stack *stack,
                  size_t count) {
    KeptCall call{&plan, {}, -1};
    if (!call.gather(args))
      return false;
    // What ADInplaceOrView would have done below this key, before the
    // write (an inference tensor refuses it before anything is written).
    if (autogradKey_)
      for (int position : mutated_)
        torch::autograd::impl::bump_version(args[position].toTensor());
    at::Tensor out = call.run();
    torch::jit::drop(*stack, count);
    if (plan.allocates)
      stack->emplace_back(std::move(out));
    return true;
  }

  /// The op's Python kernel, with the keys' bits first (as torch passes a
  /// Python kernel its keys) and every argument positional; then, for a
  /// call a kept plan may run, learn(*arguments).
  void runInPython(const c10::OperatorHandle &op, c10::DispatchKeySet keys,
                   torch::jit::Stack *stack, size_t count, const std::string &key,
                   bool withGradients, uint64_t seen) {
    std::vector<c10::IValue> arguments = torch::jit::pop(*stack, count);
    const auto &schema = op.schema();
    PyGILState_STATE gil = PyGILState_Ensure();
    try {
      pybind11::tuple withKeys(count + 1);
      withKeys[0] = pybind11::reinterpret_steal<pybind11::object>(
          PyLong_FromUnsignedLongLong(keys.raw_repr()));
      for (size_t i = 0; i < count; ++i)
        withKeys[i + 1] = toPython(arguments[i], schema.arguments()[i]);
      auto result = pybind11::reinterpret_steal<pybind11::object>(
          PyObject_Call(fallback_, withKeys.ptr(), nullptr));
      if (!result)
        throw python_error();
      pushResult(schema, result.ptr(), stack);
      if (!key.empty()) {
        pybind11::tuple plain(count);
        for (size_t i = 0; i < count; ++i)
          plain[i] = withKeys[i + 1];
        // The Python kernel's autograd formula ran the body, and ggc.ops
        // kept its launch, with grad mode off.
        c10::AutoGradMode gradMode(withGradients ? false : c10::GradMode::is_enabled());
        learnQuietly(key, plain.ptr(), seen, withGradients ? &schema : nullptr);
      }
    } catch (...) {
      PyGILState_Release(gil);
      throw;
    }
    PyGILState_Release(gil);
  }

  static pybind11::object toPython(const c10::IValue &value, const c10::Argument &argument) {
    PyObject *made;
    if (value.isNone()) {
      made = Py_NewRef(Py_None);
    } else if (value.isTensor()) {
      made = THPVariable_Wrap(value.toTensor());
    } else if (value.isBool()) {
      made = PyBool_FromLong(value.toBool());
    } else if (value.isInt()) {
      made = isScalarType(argument)
                 ? Py_NewRef(reinterpret_cast<PyObject *>(torch::getTHPDtype(
                       static_cast<c10::ScalarType>(value.toInt()))))
                 : PyLong_FromLongLong(value.toInt());
    } else if (value.isSymInt()) { // traced: a mode or fake tensors below
      return pybind11::cast(value.toSymInt());
    } else if (value.isDouble()) {
      made = PyFloat_FromDouble(value.toDouble());
    } else if (value.isString()) {
      const std::string &text = value.toStringRef();
      made = PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
    } else {
      throw std::runtime_error("ggc: argument '" + argument.name() +
                               "' has a type the op's C++ kernel does not pass to Python");
    }
    if (!made)
      throw python_error();
    return pybind11::reinterpret_steal<pybind11::object>(made);
  }

  static void pushResult(const c10::FunctionSchema &schema, PyObject *result,
                         torch::jit::Stack *stack) {
    if (schema.returns().empty()) {
      if (result != Py_None)
        throw std::runtime_error("ggc: op " + schema.name() + " returned a value, none expected");
      return;
    }
    if (!THPVariable_Check(result))
      throw std::runtime_error("ggc: op " + schema.name() + " returned no tensor");
    stack->emplace_back(THPVariable_Unpack(result));
  }

  /// keep(), whose failure must not fail a call that has run: it is
  /// reported as Python reports an exception it cannot raise (stderr).
  void learnQuietly(const std::string &key, PyObject *args, uint64_t seen,
                    const c10::FunctionSchema *withGradients) {
    try {
      keep(key, args, seen, withGradients);
    } catch (python_error &e) {
      e.restore();
      PyErr_WriteUnraisable(learn_);
    } catch (const std::exception &e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      PyErr_WriteUnraisable(learn_);
    }
  }

  /// learn(*arguments): None, or (owner, record address, launch
  /// function address, CUDA device or -1, sources, constants, output shape
  /// or None, a tensor the output is like or None). Kept unless plans were
  /// forgotten since the call began (`seen`). `withGradients` (the op's
  /// schema) for a call that needs a gradient: the plan's gradient calls
  /// are gradientsFor(*arguments)'s; where it gives none, the call is
  /// refused like one learn() keeps nothing for.
  void keep(const std::string &key, PyObject *args, uint64_t seen,
            const c10::FunctionSchema *withGradients) {
    PyObject *said = PyObject_Call(learn_, args, nullptr);
    if (!said)
      throw python_error();
    auto held = pybind11::reinterpret_steal<pybind11::object>(said);
    auto refuse = [&] {
      std::lock_guard<std::mutex> lock(table_->mutex);
      if (generation.load() == seen && table_->refused.size() < kMaxPlans)
        table_->refused.insert(key);
    };
    const GradientOps *gradients = nullptr;
    if (said != Py_None && withGradients) {
      try {
        gradients = learntGradients(*withGradients, args);
      } catch (...) {
        refuse(); // reported once (learnQuietly), not on every call
        throw;
      }
    }
    if (said == Py_None || (withGradients && !gradients)) {
      refuse();
      return;
    }
    if (!PyTuple_Check(said) || PyTuple_GET_SIZE(said) != 8)
      throw std::runtime_error("ggc: an op's learn() must return None or an 8-tuple");
    auto plan = std::make_shared<Plan>();
    auto item = [&](int i) { return PyTuple_GET_ITEM(said, i); };
    plan->record = reinterpret_cast<const void *>(PyLong_AsUnsignedLongLong(item(1)));
    plan->launch = reinterpret_cast<LaunchFn>(PyLong_AsUnsignedLongLong(item(2)));
    plan->cudaDevice = static_cast<int>(PyLong_AsLong(item(3)));
    for (pybind11::handle s : pybind11::reinterpret_borrow<pybind11::list>(item(4)))
      plan->sources.push_back(s.cast<int>());
    for (pybind11::handle c : pybind11::reinterpret_borrow<pybind11::list>(item(5)))
      plan->constants.push_back(c.cast<uint64_t>());
    if (item(6) != Py_None) {
      plan->allocates = true;
      for (pybind11::handle d : pybind11::reinterpret_borrow<pybind11::tuple>(item(6)))
        plan->outShape.push_back(d.cast<int64_t>());
      plan->outOptions = THPVariable_Unpack(item(7)).options();
    }
    if (PyErr_Occurred())
      throw python_error();
    for (int source : plan->sources)
      if (source <= kConstant && static_cast<size_t>(kConstant - source) >= plan->constants.size())
        throw std::runtime_error("ggc: an op's learn() named a constant it did not give");
    plan->gradients = gradients;
    Py_INCREF(item(0));
    plan->owner = item(0);
    std::vector<std::shared_ptr<const Plan>> dropped; // released after the lock
    {
      std::lock_guard<std::mutex> lock(table_->mutex);
      if (generation.load() != seen)
        return;
      if (table_->plans.size() >= kMaxPlans) {
        for (auto &[old, kept] : table_->plans)
          dropped.push_back(std::move(kept));
        table_->plans.clear();
      }
      auto &slot = table_->plans[key];
      dropped.push_back(std::move(slot));
      slot = std::move(plan);
    }
  }

  /// gradientsFor(*args)'s calls, interned (null where it gives none).
  const GradientOps *learntGradients(const c10::FunctionSchema &schema, PyObject *args);

  PlanTable *table_;
  bool autogradKey_;
  PyObject *fallback_; // strong references, never dropped: the
  PyObject *learn_;    // dispatcher keeps the kernel to the end
  std::vector<int> mutated_;
  PyObject *gradientsFor_; // as learn_; null: gradients go through Python
};

std::vector<int> intList(PyObject *sequence) {
  std::vector<int> out;
  for (pybind11::handle item : pybind11::reinterpret_borrow<pybind11::object>(sequence))
    out.push_back(item.cast<int>());
  return out;
}

const GradientOps *OpKernel::learntGradients(const c10::FunctionSchema &schema, PyObject *args) {
  auto said = pybind11::reinterpret_steal<pybind11::object>(
      PyObject_Call(gradientsFor_, args, nullptr));
  if (!said)
    throw python_error();
  return said.is_none() ? nullptr : internGradients(schema, said);
}

} // namespace

// install_op_kernel(op, key, autograd, fallback, learn, mutated, gradients):
// op "ns::name", key a dispatch key's name ("CUDA", "AutogradCUDA", ...),
// autograd whether it is an autograd key, mutated the argument positions
// the op writes, gradients None or a function of a call's arguments that
// gives that call's gradient calls (gradientOp's entries) or None.
PyObject *installOpKernel(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs == 7, "install_op_kernel(op, key, autograd, fallback, learn, mutated, "
                               "gradients)");
  std::string op = pybind11::reinterpret_borrow<pybind11::str>(args[0]);
  std::string keyName = pybind11::reinterpret_borrow<pybind11::str>(args[1]);
  bool autograd = PyObject_IsTrue(args[2]);
  size_t colons = op.find("::");
  TORCH_CHECK_VALUE(colons != std::string::npos,
                    "install_op_kernel: op must be 'namespace::name', got ", op);
  auto handle = c10::Dispatcher::singleton().findSchema({op, ""});
  TORCH_CHECK_VALUE(handle, "install_op_kernel: no op ", op);
  std::string unsupported = unsupportedSchema(handle->schema());
  TORCH_CHECK_VALUE(unsupported.empty(), "install_op_kernel: ", op,
                    " cannot have a C++ kernel: ", unsupported);
  PlanTable *table;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    PlanTable *&slot = tables[op];
    if (!slot)
      slot = new PlanTable();
    table = slot;
  }
  TORCH_CHECK_TYPE(args[6] == Py_None || PyCallable_Check(args[6]),
                   "install_op_kernel: gradients must be None or a function of a call's "
                   "arguments, got ", Py_TYPE(args[6])->tp_name);
  PyObject *gradientsFor = args[6] == Py_None ? nullptr : Py_NewRef(args[6]);
  Py_INCREF(args[3]);
  Py_INCREF(args[4]);
  auto kernel = std::make_unique<OpKernel>(table, autograd, args[3], args[4], intList(args[5]),
                                           gradientsFor);
  // Never freed: the dispatcher would otherwise drop the registration at
  // exit, after Python and perhaps the dispatcher itself are gone.
  auto *library = new torch::Library(torch::Library::IMPL, op.substr(0, colons),
                                     c10::parseDispatchKey(keyName), __FILE__, __LINE__);
  library->impl(op.substr(colons + 2).c_str(),
                torch::CppFunction::makeFromBoxedFunctor(std::move(kernel)));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject *forgetOpPlans(PyObject *, PyObject *) {
  HANDLE_TH_ERRORS
  std::vector<std::shared_ptr<const Plan>> dropped; // released after the locks
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    for (auto &[name, table] : tables) {
      std::lock_guard<std::mutex> tableLock(table->mutex);
      generation.fetch_add(1);
      for (auto &[key, plan] : table->plans)
        dropped.push_back(std::move(plan));
      table->plans.clear();
      table->refused.clear();
    }
  }
  generation.fetch_add(1); // also where no op has a table yet
  dropped.clear();
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject *opKernelHits(PyObject *, PyObject *) {
  return PyLong_FromUnsignedLongLong(hits.load(std::memory_order_relaxed));
}

} // namespace ggc::signature
