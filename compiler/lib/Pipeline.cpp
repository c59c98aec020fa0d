//===- Pipeline.cpp - the ggc pipeline as named stages ---------------------===//
//
// A stage is a point in the pipeline whose output a user can ask for
// (`ggc --emit=<stage>`, `kernel.asm[<stage>]`). Each stage runs the step
// that leads to it from the previous one and prints what it holds.
//
//===----------------------------------------------------------------------===//
#include "ggc/Compiler.h"
#include "ggc-c/Compiler.h"
#include "ggc/Passes.h"
#include "CompileTiming.h"
#include "Target.h"

#include "gg/GGDialect.h"
#include "ggk/GGKDialect.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <mutex>

using namespace mlir;

namespace ggc {

namespace {

/// What the stages pass along: the MLIR module until `llvm`, then the LLVM
/// module, the PTX text and the cubin.
struct CompileState {
  const CompileOptions &options;
  llvm::raw_ostream &diag;
  MLIRContext &context;
  OwningOpRef<ModuleOp> module;
  std::string irAfterAll;
  CompileClock *clock; // null unless options.timing
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  std::unique_ptr<llvm::TargetMachine> targetMachine;
  std::string ptx;
  std::string cubin;
};

using StageStep = LogicalResult (*)(CompileState &);
using StagePrinter = std::string (*)(CompileState &);

struct Stage {
  StageInfo info;
  StageStep step;     // leads from the previous stage to this one
  StagePrinter print; // this stage's output
};

std::string printModule(CompileState &state) {
  std::string text;
  llvm::raw_string_ostream os(text);
  state.module->print(os);
  return text;
}

/// Runs MLIR passes on the module, recording IR after each when asked.
LogicalResult runPasses(CompileState &state,
                        function_ref<void(OpPassManager &)> addPasses) {
  PassManager pm(&state.context);
  std::string irDump;
  llvm::raw_string_ostream irStream(irDump);
  if (state.options.printIRAfterAll)
    pm.enableIRPrinting(
        /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
        /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, irStream);
  if (state.clock)
    pm.addInstrumentation(std::make_unique<PassTimes>(*state.clock));
  addPasses(pm);
  LogicalResult result = pm.run(*state.module);
  state.irAfterAll += irDump;
  return result;
}

LogicalResult verifiedInput(CompileState &) { return success(); }

LogicalResult selectConfig(CompileState &state) {
  return runPasses(state, [&](OpPassManager &pm) {
    SelectConfigOptions options;
    options.numSMs = state.options.numSMs;
    options.smemBudget = state.options.sharedMemoryBytes;
    options.memoryGBps = state.options.memoryGBps;
    pm.addPass(createSelectConfig(options));
    TmaStorePoolOptions pool;
    pool.smemBudget = state.options.sharedMemoryBytes;
    pm.addPass(createTmaStorePool(pool));
    ScheduleGroupsOptions schedule;
    schedule.memoryGBps = state.options.memoryGBps;
    pm.addPass(createScheduleGroups(schedule));
    pm.addPass(createEliminatePadding());
    pm.addPass(createPlanOverfetch());
    pm.addPass(createPlanKernel());
  });
}

LogicalResult lowerToKernel(CompileState &state) {
  return runPasses(state,
                   [](OpPassManager &pm) {
                     pm.addPass(createLowerSortRoutes());
                     pm.addPass(createLowerQuantizeRows());
                     pm.addPass(createLowerQuantizeBlocks());
                     pm.addPass(createLowerQuantizeGroupTokens());
                     pm.addPass(createLowerCombineRoutes());
                     pm.addPass(createLowerSwigluRows());
                     pm.addPass(createLowerSelectExperts());
                     pm.addPass(createLowerCopyRows());
                     pm.addPass(createLowerTransposeScales());
                     pm.addPass(createLowerToNVVM());
                   });
}

/// The ggk passes, in the kernel's story: where the scales and the output
/// tile live, the shared memory, the loads, the operands, the epilogue, the
/// promotion, the schedule and the roles; then the conversions of the
/// ring, the MMA, the loads, async copies and threads to the target's NVVM;
/// the wait for the grid ahead at entry; last, the launch contract
/// collected from the kernel.
LogicalResult lowerKernelOps(CompileState &state) {
  Target target = targetOf(*state.module);
  return runPasses(state, [&](OpPassManager &pm) {
    pm.addPass(createPlaceScales());
    pm.addPass(createStageTileStores());
    pm.addPass(createAllocateSharedMemory());
    // With TMA, the copies left are gathered rows of A.
    if (target.asyncCopy == AsyncCopyKind::tma)
      pm.addPass(createSplitPartialLoads());
    pm.addPass(createLowerLoadsCpAsync());
    pm.addPass(createMulticast());
    pm.addPass(createPrepareOperands());
    pm.addPass(createLowerStorePool());
    pm.addPass(createDeferEpilogue());
    pm.addPass(createLowerKLoop());
    pm.addPass(createPipelinePromotion());
    pm.addPass(createLowerPromotion());
    pm.addPass(createLowerEpilogue());
    pm.addPass(createSkipIdleWarpgroups());
    pm.addPass(createLowerTileSchedule());
    pm.addPass(createWarpSpecialize());
    if (target.mbarrierTryWait)
      pm.addPass(createLowerRing());
    else
      pm.addPass(createLowerRingTestWait());
    if (target.mma == MmaKind::wgmma) {
      // f32 accuracy (3xTF32) splits the operands in registers: mma.sync's.
      LowerMmaSyncOptions threeTf32Only;
      threeTf32Only.threeTf32Only = true;
      pm.addPass(createLowerMmaSync(threeTf32Only));
      pm.addPass(createLowerMma());
      pm.addPass(createLowerMNMajorLoads());
    } else {
      pm.addPass(createLowerMmaSync());
    }
    pm.addPass(createLowerAccumulators());
    pm.addPass(createLowerAsyncCopies());
    pm.addPass(createLowerTma());
    pm.addPass(createLowerThreads());
    pm.addPass(createAwaitPriorGrid());
    // Last: the launch contract from the kernel that remains.
    pm.addPass(createCollectLaunch());
  });
}

llvm::TargetMachine *nvptxTargetMachine(CompileState &state) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  if (state.targetMachine)
    return state.targetMachine.get();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    state.diag << "error: NVPTX target not available: " << error << "\n";
    return nullptr;
  }
  // PTX ISA 8.6 for the CTA-only form of the TMA load; ptxas of CUDA 12.8+
  // assembles it.
  state.targetMachine.reset(target->createTargetMachine(
      triple, state.options.arch, "+ptx86", llvm::TargetOptions(),
      std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  return state.targetMachine.get();
}

LogicalResult translateToLLVM(CompileState &state) {
  if (failed(runPasses(state, [](OpPassManager &pm) {
        pm.addPass(createSCFToControlFlowPass());
        pm.addPass(createConvertMathToLLVMPass());
        pm.addPass(createArithToLLVMConversionPass());
        pm.addPass(createConvertControlFlowToLLVMPass());
        pm.addPass(createConvertNVVMToLLVMPass());
        pm.addPass(createReconcileUnrealizedCastsPass());
        pm.addPass(createCanonicalizerPass());
      })))
    return failure();
  state.llvmModule = translateModuleToLLVMIR(*state.module, state.llvmContext,
                                             "ggc_kernels");
  if (!state.llvmModule) {
    state.diag << "error: translating the kernel module to LLVM IR failed\n";
    return failure();
  }
  llvm::TargetMachine *tm = nvptxTargetMachine(state);
  if (!tm)
    return failure();
  state.llvmModule->setTargetTriple(tm->getTargetTriple());
  state.llvmModule->setDataLayout(tm->createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*state.llvmModule, mam);
  return success();
}

std::string printLLVM(CompileState &state) {
  std::string text;
  llvm::raw_string_ostream os(text);
  state.llvmModule->print(os, nullptr);
  return text;
}

LogicalResult emitPTX(CompileState &state) {
  llvm::TargetMachine *tm = nvptxTargetMachine(state);
  if (!tm)
    return failure();
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr,
                              llvm::CodeGenFileType::AssemblyFile)) {
    state.diag << "error: the NVPTX backend cannot emit PTX\n";
    return failure();
  }
  codegen.run(*state.llvmModule);
  state.ptx = ptx.str().str();
  return success();
}

std::string printPTX(CompileState &state) { return state.ptx; }

LogicalResult assembleCubin(CompileState &state) {
  std::string ptxas = findPtxas(state.options);
  if (ptxas.empty()) {
    state.diag << "error: stage 'cubin' needs ptxas (CUDA toolkit); none at "
                  "/usr/local/cuda/bin, on PATH or in GGC_PTXAS\n";
    return failure();
  }
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("ggc", "ptx", fd, ptxPath) ||
      llvm::sys::fs::createTemporaryFile("ggc", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("ggc", "log", logPath)) {
    state.diag << "error: cannot create temporary files for ptxas\n";
    return failure();
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << state.ptx;
  }
  std::string archFlag = "-arch=" + state.options.arch;
  llvm::SmallVector<llvm::StringRef> args = {ptxas,   archFlag, "-O3", "-v",
                                             ptxPath, "-o",     cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &error);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false);
  llvm::sys::fs::remove(ptxPath);
  llvm::sys::fs::remove(cubinPath);
  llvm::sys::fs::remove(logPath);
  if (rc != 0 || !cubin) {
    state.diag << "error: ptxas failed (" << ptxas << ", exit " << rc
               << (error.empty() ? "" : ", " + error) << ")\n";
    if (log)
      state.diag << (*log)->getBuffer();
    return failure();
  }
  // ptxas -v reports registers, shared memory and spills: worth seeing.
  if (log)
    for (llvm::StringRef line : llvm::split((*log)->getBuffer(), '\n'))
      if (!line.trim().empty())
        state.diag << "remark: " << line.trim() << "\n";
  state.cubin = (*cubin)->getBuffer().str();
  return success();
}

std::string printCubin(CompileState &state) { return state.cubin; }

const Stage kStages[] = {
    {{"gg", "the input, parsed and verified"}, verifiedInput,
     printModule},
    {{"gg-config", "tile configuration and kernel plan chosen "
                   "(gg-select-config, gg-tma-store-pool, gg-schedule-groups, "
                   "gg-eliminate-padding, gg-plan-overfetch, gg-plan-kernel)"},
     selectConfig, printModule},
    {{"ggk", "one kernel per function in target-neutral ggk ops, its tile "
             "schedule still a ggk.foreach_tile, what the source fixes of "
             "its launch in #ggk.launch and each parameter's ggk.param "
             "(gg-lower-to-nvvm)"},
     lowerToKernel, printModule},
    {{"nvvm", "the kernels in the LLVM/NVVM dialects with scf/arith control "
              "flow (the ggk passes, then the target's conversions, then "
              "ggk-collect-launch's complete #ggk.launch: docs/pipeline.md)"},
     lowerKernelOps, printModule},
    {{"llvm", "LLVM IR of the kernels, optimised (O3)"}, translateToLLVM,
     printLLVM},
    {{"ptx", "PTX for the target architecture (NVPTX backend)"}, emitPTX,
     printPTX},
    {{"cubin", "machine code for the target (ptxas)"}, assembleCubin,
     printCubin},
};

std::vector<StageInfo> stageInfos() {
  std::vector<StageInfo> infos;
  for (const Stage &s : kStages)
    infos.push_back(s.info);
  return infos;
}

/// The launch contract (`ggk.launch`) of every kernel, as one JSON array.
std::string collectKernelInfo(ModuleOp module) {
  std::string text = "[";
  bool first = true;
  module.walk([&](LLVM::LLVMFuncOp fn) {
    if (auto launch = fn->getAttrOfType<ggk::LaunchAttr>("ggk.launch");
        launch && launch.isComplete()) {
      text += (first ? "" : ",") + launch.toJson();
      first = false;
    }
  });
  return text + "]";
}

/// What the gg-config stage chose for every gg.grouped_matmul, as one JSON
/// array (ggc_result_kernel_plans): the typed config, schedule, padding,
/// overfetch and store pool, and every plan attribute as the IR prints it.
std::string collectKernelPlans(ModuleOp module) {
  llvm::json::Array plans;
  module.walk([&](gg::GroupedMatmulOp op) {
    auto fn = op->getParentOfType<func::FuncOp>();
    llvm::json::Object plan{
        {"function", fn ? llvm::json::Value(fn.getSymName()) : nullptr}};
    llvm::json::Value config = nullptr;
    if (gg::ConfigAttr c = op.getConfigAttr())
      config = llvm::json::Object{
          {"block", {c.getBlockM(), c.getBlockN(), c.getBlockK()}},
          {"stages", c.getStages()},
          {"cluster", {c.getClusterM(), c.getClusterN()}},
          {"sms", c.getNumSMs()},
          {"split_n", c.getSplitN()}};
    plan["config"] = std::move(config);
    llvm::json::Value schedule = nullptr;
    if (gg::ScheduleAttr s = op.getScheduleAttr())
      schedule = llvm::json::Object{
          {"order", gg::stringifyTileOrder(s.getOrder())},
          {"m_band", s.getMBand()},
          {"b_cache", gg::stringifyCachePolicy(s.getBCache())},
          {"group_reads", gg::stringifyGroupReads(s.getGroupReads())},
          {"odd_block_a", gg::stringifyOddBlockA(s.getOddBlockA())}};
    plan["schedule"] = std::move(schedule);
    llvm::json::Value padding = nullptr;
    if (gg::PaddingAttr p = op.getPaddingAttr())
      padding = llvm::json::Object{
          {"idle_warpgroups",
           gg::stringifyIdleWarpgroups(p.getIdleWarpgroups())}};
    plan["padding"] = std::move(padding);
    llvm::json::Value overfetch = nullptr;
    if (gg::OverfetchAttr o = op.getOverfetchAttr())
      overfetch = llvm::json::Object{{"rows", o.getRows()}, {"k", o.getK()}};
    plan["overfetch"] = std::move(overfetch);
    llvm::json::Value storePool = nullptr;
    if (DenseI64ArrayAttr pool = op.getStorePoolAttr())
      storePool = llvm::json::Array(pool.asArrayRef());
    plan["store_pool"] = std::move(storePool);
    // Every plan attribute, also those added after this code: the gg
    // attributes but the scale kinds (which describe operands), and the
    // store pool and slice (builtin attributes).
    llvm::json::Object attributes;
    for (NamedAttribute attr : op->getAttrs()) {
      Attribute value = attr.getValue();
      bool isPlan = isa<gg::GGDialect>(value.getDialect())
                        ? !isa<gg::ScaleAttr>(value)
                        : attr.getName() == op.getStorePoolAttrName() ||
                              attr.getName() == op.getStoreSliceAttrName();
      if (!isPlan)
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      value.print(os);
      attributes[attr.getName().getValue()] = std::move(text);
    }
    plan["attributes"] = std::move(attributes);
    plans.push_back(std::move(plan));
  });
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(plans));
  return text;
}

} // namespace

llvm::ArrayRef<StageInfo> stages() {
  static const std::vector<StageInfo> infos = stageInfos();
  return infos;
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<gg::GGDialect, ggk::GGKDialect, arith::ArithDialect, math::MathDialect,
                  func::FuncDialect, memref::MemRefDialect, scf::SCFDialect,
                  cf::ControlFlowDialect, LLVM::LLVMDialect,
                  NVVM::NVVMDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void registerAllPasses() {
  registerGGCPasses();
  // For lit tests that tidy a pass's output before checking it.
  registerCanonicalizerPass();
  registerCSEPass();
}

const char *versionString() {
  static const std::string version = std::string("ggc 0.1.0 (LLVM ") +
                                     LLVM_VERSION_STRING + "; sources " +
                                     sourceFingerprint() + ")";
  return version.c_str();
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
  if (!lookupTarget(options.arch)) {
    diag << "error: unsupported arch '" << options.arch
         << "'; ggc targets " << supportedTargets() << "\n";
    return result;
  }
  if (options.numSMs < 1 || options.numSMs > GGC_MAX_NUM_SMS) {
    diag << "error: num_sms must be from 1 to " << GGC_MAX_NUM_SMS << ", got "
         << options.numSMs << "\n";
    return result;
  }
  if (options.sharedMemoryBytes < 0) {
    diag << "error: shared_memory_bytes must be 0 (the target's) or the "
            "device's opt-in shared memory per CTA, got "
         << options.sharedMemoryBytes << "\n";
    return result;
  }
  if (options.memoryGBps < 0) {
    diag << "error: memory_gbps must be 0 (unknown) or the device's peak "
            "DRAM bandwidth in GB/s, got "
         << options.memoryGBps << "\n";
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

  // MLIR's lexer reads a NUL as the end of the buffer or as blank space:
  // either way what the user wrote is not what gets compiled.
  if (size_t nul = source.find('\0'); nul != llvm::StringRef::npos) {
    mlir::emitError(FileLineColLoc::get(
        &context, sourceName,
        1 + source.take_front(nul).count('\n'),
        1 + nul - (source.take_front(nul).rfind('\n') + 1)))
        << "IR text holds a NUL byte (offset " << nul
        << "): IR must be text without NULs";
    return result;
  }
  CompileClock clock;
  CompileState state{options, diag, context, {}, {}, options.timing ? &clock : nullptr,
                     {}, {}, {}, {}, {}};
  auto parseStart = CompileClock::Clock::now();
  state.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  clock.parsed(CompileClock::msSince(parseStart));
  if (!state.module)
    return result;
  // An empty module would "compile" to a PTX with no kernel in it, which a
  // host finds out only when it looks the kernel up.
  bool hasKernel = state.module
                       ->walk([](Operation *op) {
                         return isa<gg::GroupedMatmulOp, gg::SortRoutesOp,
                                    gg::QuantizeRowsOp, gg::QuantizeBlocksOp,
                                    gg::QuantizeGroupTokensOp,
                                    gg::CombineRoutesOp, gg::SwigluRowsOp,
                                    gg::SwigluRowsBackwardOp, gg::CopyRowsOp,
                                    gg::TransposeScalesOp, gg::SelectExpertsOp, gg::SelectExpertsBackwardOp>(op)
                                    ? WalkResult::interrupt()
                                    : WalkResult::advance();
                       })
                       .wasInterrupted();
  if (!hasKernel) {
    diag << "error: '" << sourceName
         << "' holds no function with an op that makes a kernel "
            "(gg.grouped_matmul, gg.sort_routes, gg.quantize_rows, "
            "gg.quantize_blocks, gg.quantize_group_tokens, gg.combine_routes, "
            "gg.swiglu_rows, gg.swiglu_rows_backward, gg.copy_rows, "
            "gg.transpose_scales, gg.select_experts, gg.select_experts_backward): no kernel "
            "to compile\n";
    return result;
  }
  // The arch becomes the module's gg.target, which every pass reads; IR
  // that names another target was written for it.
  auto written = (*state.module)->getAttrOfType<StringAttr>(kTargetAttr);
  if (written && written.getValue() != options.arch) {
    diag << "error: '" << sourceName << "' is for " << kTargetAttr << " '"
         << written.getValue() << "' but arch is '" << options.arch << "'\n";
    return result;
  }
  (*state.module)
      ->setAttr(kTargetAttr, StringAttr::get(&context, options.arch));

  for (const Stage &s : kStages) {
    auto stepStart = CompileClock::Clock::now();
    LogicalResult stepped = s.step(state);
    double stepMs = CompileClock::msSince(stepStart);
    result.irAfterAll = state.irAfterAll;
    if (failed(stepped)) {
      clock.stageRan(std::string(s.info.name) + " (failed)", stepMs, 0);
      break;
    }
    // Printing: the stage's text, and the plans and launch contracts it
    // hands back as data.
    auto printStart = CompileClock::Clock::now();
    if (s.step == selectConfig)
      result.kernelPlans = collectKernelPlans(*state.module);
    if (s.step == lowerKernelOps)
      result.kernelInfo = collectKernelInfo(*state.module);
    result.stageOutputs.push_back({s.info.name, s.print(state)});
    clock.stageRan(s.info.name, stepMs, CompileClock::msSince(printStart));
    if (&s == last) {
      result.ok = true;
      break;
    }
  }
  if (options.timing)
    result.timing = clock.report();
  return result;
}

std::string findPtxas(const CompileOptions &options) {
  if (!options.ptxas.empty())
    return options.ptxas;
  if (const char *env = std::getenv("GGC_PTXAS"))
    return env;
  for (const char *candidate :
       {"/usr/local/cuda/bin/ptxas", "/usr/local/bin/ptxas"})
    if (llvm::sys::fs::can_execute(candidate))
      return candidate;
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return "";
}

} // namespace ggc
