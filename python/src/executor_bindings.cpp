//===- executor_bindings.cpp - ggc._executor, the executor for Python ------===//
//
// Device memory goes in and out as integer addresses; python/ggc/executor.py
// wraps this with torch tensors. std::invalid_argument becomes ValueError.
//
//===----------------------------------------------------------------------===//
#include "ggc/Executor.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
namespace ex = ggc::executor;

namespace {

ex::DType parseDType(const std::string &name, const char *argument) {
  for (ex::DType t : {ex::DType::F32, ex::DType::F16, ex::DType::BF16, ex::DType::F8E4M3})
    if (name == ex::name(t))
      return t;
  throw std::invalid_argument(std::string("ggc executor: ") + argument +
                              " must be 'f32', 'f16' or 'bf16', got '" + name + "'");
}

std::unique_ptr<ex::GroupedGemmExecutor>
makeExecutor(int64_t groupCount, const std::string &algorithm, bool useTensorCores,
             int64_t workspaceBytes, const std::string &precision,
             int maxConcurrentCalls, int device) {
  ex::ExecutorConfig c;
  c.groupCount = groupCount;
  c.algorithm = ex::parseAlgorithm(algorithm, "algorithm");
  c.useTensorCores = useTensorCores;
  c.workspaceBytes = workspaceBytes;
  c.precision = ex::parsePrecision(precision, "precision");
  c.maxConcurrentCalls = maxConcurrentCalls;
  c.device = device;
  return std::make_unique<ex::GroupedGemmExecutor>(c);
}

ex::ExpertWeightManager loadWeights(const std::vector<py::bytes> &experts,
                                    const std::vector<py::bytes> &biases,
                                    int64_t expertDim, int64_t hiddenDim,
                                    const std::string &dtype, int device) {
  ex::DType t = parseDType(dtype, "dtype");
  auto pointers = [&](const std::vector<py::bytes> &list, int64_t elements,
                      const char *argument) {
    std::vector<const void *> out;
    for (size_t i = 0; i < list.size(); ++i) {
      std::string_view view = list[i];
      if (static_cast<int64_t>(view.size()) != elements * ex::dtypeBytes(t))
        throw std::invalid_argument(
            std::string("ggc executor: ") + argument + "[" + std::to_string(i) +
            "] holds " + std::to_string(view.size()) + " bytes, expected " +
            std::to_string(elements * ex::dtypeBytes(t)));
      out.push_back(view.data());
    }
    return out;
  };
  return ex::ExpertWeightManager::load(
      pointers(experts, expertDim * hiddenDim, "expert_weights"),
      pointers(biases, expertDim, "expert_biases"), expertDim, hiddenDim, t, device);
}

} // namespace

PYBIND11_MODULE(_executor, m) {
  m.doc() = "The grouped-GEMM executor (use ggc.executor instead).";
  py::class_<ex::GroupedExpertWeights, std::shared_ptr<ex::GroupedExpertWeights>>(
      m, "GroupedExpertWeights");
  py::class_<ex::ExpertWeightManager>(m, "ExpertWeightManager")
      .def_static("load", &loadWeights, py::arg("expert_weights"),
                  py::arg("expert_biases"), py::arg("expert_dim"),
                  py::arg("hidden_dim"), py::arg("dtype"), py::arg("device"))
      .def("quantize", &ex::ExpertWeightManager::quantize,
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("quantized", [](const ex::ExpertWeightManager &w) {
        return w.quantizedWeights() != nullptr;
      });
  py::class_<ex::GroupedInput>(m, "GroupedInput")
      .def_property_readonly("tokens_per_expert",
                             [](const ex::GroupedInput &i) { return i.mapping.tokensPerExpert; })
      .def_property_readonly("expert_offsets",
                             [](const ex::GroupedInput &i) { return i.mapping.expertOffsets; })
      .def_property_readonly("assignment_of_row",
                             [](const ex::GroupedInput &i) { return i.mapping.assignmentOfRow; })
      .def_property_readonly("expert_of_row",
                             [](const ex::GroupedInput &i) { return i.mapping.expertOfRow; })
      .def_property_readonly("active_experts",
                             [](const ex::GroupedInput &i) { return i.mapping.activeExperts(); })
      .def_property_readonly("num_rows", &ex::GroupedInput::numRows)
      .def_property_readonly("rows", [](const ex::GroupedInput &i) { return i.rows.address(); });
  py::class_<ex::GroupedGemmExecutor>(m, "Executor")
      .def(py::init(&makeExecutor), py::arg("group_count"), py::arg("algorithm"),
           py::arg("use_tensor_cores"), py::arg("workspace_bytes"), py::arg("precision"),
           py::arg("max_concurrent_calls"), py::arg("device"))
      .def("supports_grouped_gemm", &ex::GroupedGemmExecutor::supportsGroupedGemm)
      .def("select_algorithm",
           [](const ex::GroupedGemmExecutor &e, int64_t batch, int64_t active) {
             return std::string(ex::name(e.selectAlgorithm(batch, active)));
           }, py::arg("batch_size"), py::arg("active_experts"))
      .def_property_readonly("capabilities", [](const ex::GroupedGemmExecutor &e) {
        const ex::DeviceCapabilities &c = e.capabilities();
        py::dict d;
        d["name"] = c.name;
        d["major"] = c.major;
        d["minor"] = c.minor;
        d["multiprocessors"] = c.multiprocessors;
        return d;
      })
      .def("prepare_input",
           [](const ex::GroupedGemmExecutor &e, uint64_t tokens, int64_t numTokens,
              int64_t hidden, std::vector<int32_t> expertIds, int topK, uint64_t stream) {
             ex::RoutingDecision r;
             r.numTokens = numTokens;
             r.topK = topK;
             r.numExperts = e.config().groupCount;
             r.expertIds = std::move(expertIds);
             py::gil_scoped_release release;
             return e.prepareInput(tokens, numTokens, hidden, r, stream);
           })
      .def("execute",
           [](const ex::GroupedGemmExecutor &e, const ex::GroupedInput &in,
              const ex::ExpertWeightManager &w, uint64_t out, const std::string &algorithm) {
             ex::Algorithm a = ex::parseAlgorithm(algorithm, "algorithm");
             py::gil_scoped_release release;
             if (a == ex::Algorithm::CublasSequential)
               e.executeSequential(in, w.weights(), out);
             else
               e.executeGrouped(in, w.weights(), out, a);
           })
      .def("scatter_output",
           [](const ex::GroupedGemmExecutor &e, uint64_t expertOutputs, int64_t width,
              const std::string &dtype, const ex::GroupedInput &in, uint64_t out) {
             ex::DType t = parseDType(dtype, "dtype");
             py::gil_scoped_release release;
             e.scatterOutput(expertOutputs, width, t, in, out);
           });
}
