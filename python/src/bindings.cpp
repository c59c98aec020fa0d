//===- bindings.cpp - ggc._ggc: Python over the ggc C API ------------------===//
#include "ggc-c/Compiler.h"
#include "ggc/Runtime.h"

// Weak, so that these bindings load against a libggc.so built before the
// timing report or ggc_ptxas (an older compiler's bundle, GGC_BUNDLE,
// timed beside today's): there the report and the path are "".
#pragma weak ggc_result_timing
#pragma weak ggc_ptxas

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace {

struct CompileOutput {
  bool ok;
  std::vector<std::pair<std::string, py::bytes>> stages;
  std::string diagnostics;
  std::string irAfterAll;
  std::string kernelInfo;
  std::string kernelPlans;
  std::string timing;
};

CompileOutput compile(const std::string &source, const std::string &sourceName,
                      const std::string &emit, const std::string &arch,
                      int64_t numSMs, bool printIRAfterAll,
                      int64_t sharedMemoryBytes, int64_t memoryGBps,
                      bool timing) {
  ggc_options options = {emit.c_str(),       arch.c_str(),
                         numSMs,             printIRAfterAll ? 1 : 0,
                         sharedMemoryBytes,  memoryGBps,
                         timing ? 1 : 0};
  std::unique_ptr<ggc_result, decltype(&ggc_result_destroy)> result(nullptr,
                                                                   &ggc_result_destroy);
  {
    // Compiling touches no Python state; let other threads run.
    py::gil_scoped_release release;
    result.reset(ggc_compile(source.data(), source.size(), sourceName.c_str(),
                             &options));
  }
  CompileOutput out{ggc_result_ok(result.get()) != 0, {},
                    ggc_result_diagnostics(result.get()),
                    ggc_result_ir_after_all(result.get()),
                    ggc_result_kernel_info(result.get()),
                    ggc_result_kernel_plans(result.get()),
                    ggc_result_timing ? ggc_result_timing(result.get()) : ""};
  for (size_t i = 0; i < ggc_result_num_stages(result.get()); ++i) {
    size_t length = 0;
    const char *text = ggc_result_stage_text(result.get(), i, &length);
    out.stages.emplace_back(ggc_result_stage_name(result.get(), i),
                            py::bytes(text, length));
  }
  return out;
}

namespace rt = ggc::runtime;

/// Python-side arguments: ("tensor_map", dtype, shape, box, address, swizzle),
/// ("pointer", address) or ("i64", value).
std::vector<rt::KernelArg> convertArgs(const py::list &args) {
  std::vector<rt::KernelArg> out;
  for (const py::handle &item : args) {
    auto t = item.cast<py::tuple>();
    auto kind = t[0].cast<std::string>();
    rt::KernelArg arg;
    if (kind == "tensor_map") {
      arg.kind = rt::KernelArg::Kind::TensorMap;
      arg.tensorMap = rt::rowMajorTensorMap(
          rt::parseElementType(t[1].cast<std::string>()),
          t[2].cast<std::vector<int64_t>>(), t[3].cast<std::vector<uint32_t>>(),
          t[4].cast<uint64_t>(), rt::parseSwizzle(t[5].cast<std::string>()));
    } else if (kind == "pointer" || kind == "i64") {
      arg.kind = kind == "pointer" ? rt::KernelArg::Kind::Pointer
                                   : rt::KernelArg::Kind::Int64;
      arg.value = static_cast<uint64_t>(t[1].cast<int64_t>());
    } else {
      throw rt::Error("ggc runtime: unknown kernel argument kind '" + kind + "'");
    }
    out.push_back(arg);
  }
  return out;
}

/// The per-call path of a cached launch: the addresses straight from a
/// tuple or list of ints, no conversion to a std::vector.
void launchRecord(const rt::LaunchRecord &record, py::handle addresses,
                  uint64_t stream) {
  PyObject *seq = addresses.ptr();
  if (!PyTuple_Check(seq) && !PyList_Check(seq))
    throw py::type_error("addresses must be a tuple or list of ints");
  constexpr Py_ssize_t kMax = 64;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  if (count > kMax)
    throw rt::Error("ggc runtime: a launch takes at most 64 addresses, got " +
                    std::to_string(count));
  uint64_t values[kMax];
  PyObject **items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < count; ++i) {
    values[i] = PyLong_AsUnsignedLongLong(items[i]);
    if (values[i] == static_cast<uint64_t>(-1) && PyErr_Occurred())
      throw py::error_already_set();
  }
  // cuLaunchKernelEx blocks while the launch queue is full.
  py::gil_scoped_release release;
  record.launch(values, static_cast<size_t>(count), stream);
}

/// A kept record's launch for the torch ops' C++ kernels
/// (python/src/op_kernels.cpp), which launch without Python: errors as text,
/// since an exception would cross into another module.
int launchRecordRaw(const void *record, const uint64_t *addresses, size_t count,
                    uint64_t stream, char *error, size_t errorSize) noexcept {
  try {
    static_cast<const rt::LaunchRecord *>(record)->launch(addresses, count, stream);
    return 0;
  } catch (const std::exception &e) {
    std::snprintf(error, errorSize, "%s", e.what());
    return 1;
  }
}

} // namespace

PYBIND11_MODULE(_ggc, m) {
  m.doc() = "Low-level bindings of the ggc compiler library (use ggc instead).";
  py::class_<CompileOutput>(m, "CompileOutput")
      .def_readonly("ok", &CompileOutput::ok)
      .def_readonly("stages", &CompileOutput::stages)
      .def_readonly("diagnostics", &CompileOutput::diagnostics)
      .def_readonly("ir_after_all", &CompileOutput::irAfterAll)
      .def_readonly("kernel_info", &CompileOutput::kernelInfo)
      .def_readonly("kernel_plans", &CompileOutput::kernelPlans)
      .def_readonly("timing", &CompileOutput::timing);
  m.def("compile", &compile, py::arg("source"), py::arg("source_name"),
        py::arg("emit"), py::arg("arch"), py::arg("num_sms"),
        py::arg("print_ir_after_all"), py::arg("shared_memory_bytes") = 0,
        py::arg("memory_gbps") = 0, py::arg("timing") = false);
  m.def("stages", []() {
    std::vector<std::pair<std::string, std::string>> stages;
    for (size_t i = 0; i < ggc_num_stages(); ++i)
      stages.emplace_back(ggc_stage_name(i), ggc_stage_description(i));
    return stages;
  });
  m.def("version", []() { return std::string(ggc_version()); });
  // An older bundle's libggc has no ggc_ptxas: "" (no ptxas part in the
  // cubin key), as before it.
  m.def("ptxas", []() { return std::string(ggc_ptxas ? ggc_ptxas() : ""); });
  m.def("targets", []() {
    py::list targets;
    for (size_t i = 0; i < ggc_num_targets(); ++i) {
      const ggc_target_info &t = *ggc_target(i);
      py::dict d;
      d["name"] = t.name;
      d["capabilities"] = std::vector<int>(
          t.capabilities, t.capabilities + t.num_capabilities);
      d["shared_memory_bytes"] = t.shared_memory_bytes;
      d["mma"] = t.mma;
      d["async_copy"] = t.async_copy;
      d["tensor_maps"] = t.tensor_maps != 0;
      d["clusters"] = t.clusters != 0;
      d["register_reallocation"] = t.register_reallocation != 0;
      d["mbarrier_try_wait"] = t.mbarrier_try_wait != 0;
      d["fp8_mma"] = t.fp8_mma != 0;
      d["grid_dependencies"] = t.grid_dependencies != 0;
      targets.append(d);
    }
    return targets;
  });

  py::register_exception<rt::Error>(m, "RuntimeError", PyExc_RuntimeError);
  m.def("dependent_launches", &rt::dependentLaunches,
        "Whether kernels that allow it launch before the grid ahead ends.");
  m.def("set_dependent_launches", &rt::setDependentLaunches,
        py::arg("enabled"));
  m.def("driver_available", []() {
    std::string why;
    bool ok = rt::driverAvailable(&why);
    return py::make_tuple(ok, why);
  });
  m.def("pointer_device", &rt::pointerDevice, py::arg("address"));
  m.def("device_memory_gbps", &rt::deviceMemoryGBps, py::arg("device"),
        "The device's peak DRAM bandwidth in GB/s (0: not reported).");
  m.def(
      "copy_to_host",
      [](int device, uint64_t address, size_t bytes, uint64_t stream) {
        std::string data(bytes, '\0');
        {
          py::gil_scoped_release release;
          rt::copyToHost(device, address, data.data(), bytes, stream);
        }
        return py::bytes(data);
      },
      py::arg("device"), py::arg("address"), py::arg("bytes"),
      py::arg("stream"));
  py::class_<rt::Kernel>(m, "Kernel")
      .def(py::init([](py::bytes image, std::string name, int sharedBytes,
                       int block, int cluster, bool dependentLaunch) {
             return std::make_unique<rt::Kernel>(std::string(image), name,
                                                 sharedBytes, block, cluster,
                                                 dependentLaunch);
           }),
           py::arg("image"), py::arg("name"), py::arg("shared_bytes"),
           py::arg("block"), py::arg("cluster") = 1,
           py::arg("dependent_launch") = false)
      .def_property_readonly("dependent_launch", &rt::Kernel::dependentLaunch)
      .def("launch",
           [](rt::Kernel &k, int grid, const py::list &args, uint64_t stream,
              int device) {
             std::vector<rt::KernelArg> converted = convertArgs(args);
             py::gil_scoped_release release;
             k.launch(grid, converted, stream, device);
           },
           py::arg("grid"), py::arg("args"), py::arg("stream"),
           py::arg("device") = -1)
      .def("prepare",
           [](rt::Kernel &k, int grid, const py::list &args, int device) {
             return k.prepare(grid, convertArgs(args), device);
           },
           py::arg("grid"), py::arg("args"), py::arg("device") = -1,
           py::keep_alive<0, 1>())
      .def("record",
           [](rt::Kernel &k, int grid, const py::list &args,
              const std::vector<int> &sources, int device) {
             return k.record(grid, convertArgs(args), sources, device);
           },
           py::arg("grid"), py::arg("args"), py::arg("sources"),
           py::arg("device") = -1, py::keep_alive<0, 1>());
  py::class_<rt::LaunchRecord>(m, "LaunchRecord")
      .def("launch", &launchRecord, py::arg("addresses"), py::arg("stream"))
      .def_property_readonly("address_count", &rt::LaunchRecord::addressCount)
      // (the record's address, its launch function's): the torch ops' C++
      // kernels launch it with them, while Python keeps the record alive.
      .def_property_readonly("raw", [](const rt::LaunchRecord &record) {
        return py::make_tuple(reinterpret_cast<uintptr_t>(&record),
                              reinterpret_cast<uintptr_t>(&launchRecordRaw));
      });
  py::class_<rt::PreparedLaunch>(m, "PreparedLaunch")
      .def("launch",
           [](const rt::PreparedLaunch &p, uint64_t stream) {
             py::gil_scoped_release release;
             p.launch(stream);
           },
           py::arg("stream"));
}
