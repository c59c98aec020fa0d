//===- CAPI.cpp - the C API over ggc::compile -------------------------------===//
#include "ggc-c/Compiler.h"
#include "ggc/Compiler.h"

#include "Target.h"

#include <vector>

struct ggc_result {
  ggc::CompileResult result;
};

namespace {
/// allTargets() in the C API's terms, made once.
const std::vector<ggc_target_info> &targetInfos() {
  static const std::vector<ggc_target_info> infos = [] {
    std::vector<ggc_target_info> out;
    for (const ggc::Target &t : ggc::allTargets())
      out.push_back({t.name.data(), t.capabilities.data(),
                     t.capabilities.size(), t.sharedMemoryBytes,
                     ggc::stringifyMmaKind(t.mma).data(),
                     ggc::stringifyAsyncCopyKind(t.asyncCopy).data(),
                     t.tensorMaps, t.clusters, t.registerReallocation,
                     t.mbarrierTryWait, t.fp8Mma, t.gridDependencies});
    return out;
  }();
  return infos;
}
} // namespace

extern "C" {

ggc_result *ggc_compile(const char *source, size_t length,
                        const char *source_name, const ggc_options *options) {
  ggc::CompileOptions opts;
  if (options) {
    if (options->emit)
      opts.emit = options->emit;
    if (options->arch)
      opts.arch = options->arch;
    if (options->num_sms != 0)
      opts.numSMs = options->num_sms;
    opts.printIRAfterAll = options->print_ir_after_all != 0;
    opts.sharedMemoryBytes = options->shared_memory_bytes;
    opts.memoryGBps = options->memory_gbps;
    opts.timing = options->timing != 0;
  }
  auto *r = new ggc_result;
  if (!source) {
    r->result.diagnostics = "error: ggc_compile: 'source' is NULL\n";
    return r;
  }
  r->result = ggc::compile(llvm::StringRef(source, length),
                           source_name ? source_name : "<source>", opts);
  return r;
}

int ggc_result_ok(const ggc_result *r) { return r && r->result.ok ? 1 : 0; }

const char *ggc_result_diagnostics(const ggc_result *r) {
  return r ? r->result.diagnostics.c_str() : "";
}

const char *ggc_result_ir_after_all(const ggc_result *r) {
  return r ? r->result.irAfterAll.c_str() : "";
}

const char *ggc_result_timing(const ggc_result *r) {
  return r ? r->result.timing.c_str() : "";
}

const char *ggc_result_kernel_info(const ggc_result *r) {
  return r ? r->result.kernelInfo.c_str() : "";
}

const char *ggc_result_kernel_plans(const ggc_result *r) {
  return r ? r->result.kernelPlans.c_str() : "";
}

size_t ggc_result_num_stages(const ggc_result *r) {
  return r ? r->result.stageOutputs.size() : 0;
}

const char *ggc_result_stage_name(const ggc_result *r, size_t i) {
  if (!r || i >= r->result.stageOutputs.size())
    return nullptr;
  return r->result.stageOutputs[i].stage.c_str();
}

const char *ggc_result_stage_text(const ggc_result *r, size_t i,
                                  size_t *length) {
  if (!r || i >= r->result.stageOutputs.size())
    return nullptr;
  const std::string &text = r->result.stageOutputs[i].text;
  if (length)
    *length = text.size();
  return text.c_str();
}

void ggc_result_destroy(ggc_result *r) { delete r; }

size_t ggc_num_stages(void) { return ggc::stages().size(); }

const char *ggc_stage_name(size_t i) {
  return i < ggc::stages().size() ? ggc::stages()[i].name : nullptr;
}

const char *ggc_stage_description(size_t i) {
  return i < ggc::stages().size() ? ggc::stages()[i].description : nullptr;
}

const char *ggc_version(void) { return ggc::versionString(); }

const char *ggc_ptxas(void) {
  thread_local std::string path;
  path = ggc::findPtxas(ggc::CompileOptions{});
  return path.c_str();
}

size_t ggc_num_targets(void) { return targetInfos().size(); }

const ggc_target_info *ggc_target(size_t i) {
  return i < targetInfos().size() ? &targetInfos()[i] : nullptr;
}

const char *ggc_target_for_capability(int major, int minor) {
  std::optional<ggc::Target> t = ggc::targetForCapability(major, minor);
  return t ? t->name.data() : nullptr;
}

} // extern "C"
