//===- Pipeline.cpp - the ggc pipeline as named stages ---------------------===//
//
// A stage is a point in the pipeline whose IR a user can ask for
// (`ggc --emit=<stage>`, `kernel.asm[<stage>]`). Each stage adds the passes
// that lead to it from the previous one. Stages this build cannot produce
// yet are listed as unavailable, and asking for them is an error.
//
//===----------------------------------------------------------------------===//
#include "ggc/Compiler.h"
#include "ggc/Passes.h"

#include "gg/GGDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace ggc {

namespace {

using AddPasses = void (*)(OpPassManager &, const CompileOptions &);

struct Stage {
  StageInfo info;
  AddPasses addPasses; // passes that lead from the previous stage here
};

void addNothing(OpPassManager &, const CompileOptions &) {}
void addSelectConfig(OpPassManager &pm, const CompileOptions &options) {
  SelectConfigOptions passOptions;
  passOptions.numSMs = options.numSMs;
  pm.addPass(createSelectConfig(passOptions));
}

const Stage kStages[] = {
    {{"gg", "the input, parsed and verified", true}, addNothing},
    {{"gg-config", "tile configuration chosen (gg-select-config)", true},
     addSelectConfig},
    {{"llvm", "LLVM IR of the kernel (needs the NVVM lowering)", false},
     addNothing},
    {{"ptx", "PTX for the target architecture", false}, addNothing},
    {{"cubin", "ptxas output for the target architecture", false}, addNothing},
};

std::vector<StageInfo> stageInfos() {
  std::vector<StageInfo> infos;
  for (const Stage &s : kStages)
    infos.push_back(s.info);
  return infos;
}

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

} // namespace

llvm::ArrayRef<StageInfo> stages() {
  static const std::vector<StageInfo> infos = stageInfos();
  return infos;
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<gg::GGDialect, arith::ArithDialect, math::MathDialect,
                  func::FuncDialect, memref::MemRefDialect>();
}

void registerAllPasses() { registerGGCPasses(); }

const char *versionString() {
  return "ggc 0.1.0 (LLVM " LLVM_VERSION_STRING ")";
}

CompileResult compile(llvm::StringRef source, llvm::StringRef sourceName,
                      const CompileOptions &options) {
  CompileResult result;
  llvm::raw_string_ostream diag(result.diagnostics);

  const Stage *last = nullptr;
  for (const Stage &s : kStages)
    if (options.emit == s.info.name)
      last = &s;
  if (!last) {
    diag << "error: unknown stage '" << options.emit << "' for emit; expected "
         << "one of:";
    for (const Stage &s : kStages)
      diag << " " << s.info.name;
    diag << "\n";
    return result;
  }
  if (options.arch != "sm_90a") {
    diag << "error: unsupported arch '" << options.arch
         << "'; ggc targets sm_90a (Hopper: wgmma and TMA)\n";
    return result;
  }
  if (options.numSMs < 1) {
    diag << "error: num_sms must be positive, got " << options.numSMs << "\n";
    return result;
  }

  DialectRegistry registry;
  registerDialects(registry);
  MLIRContext context(registry);
  context.disableMultithreading(); // stage outputs are collected in order
  // Users read these errors; the generic form of the whole op adds noise.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, sourceName), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diag);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return result;

  for (const Stage &s : kStages) {
    if (!s.info.available) {
      diag << "error: stage '" << s.info.name << "' (" << s.info.description
           << ") is not available in this build of ggc; the last stage it "
              "can emit is '"
           << result.stageOutputs.back().stage << "'\n";
      return result;
    }
    PassManager pm(&context);
    std::string irDump;
    llvm::raw_string_ostream irStream(irDump);
    if (options.printIRAfterAll)
      pm.enableIRPrinting(
          /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
          /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
          /*printAfterOnlyOnFailure=*/false, irStream);
    s.addPasses(pm, options);
    if (failed(pm.run(*module)))
      return result;
    result.irAfterAll += irDump;
    result.stageOutputs.push_back({s.info.name, printModule(*module)});
    if (&s == last)
      break;
  }
  result.ok = true;
  return result;
}

} // namespace ggc
