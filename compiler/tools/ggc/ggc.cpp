//===- ggc.cpp - the ggc compiler driver ------------------------------------===//
//
//   ggc kernel.mlir --emit=<stage> [-o out] [--dump-dir=DIR]
//
// A thin command line over the C API, so the driver, the Python bindings and
// any other host compile exactly the same way.
//
//===----------------------------------------------------------------------===//
#include "ggc-c/Compiler.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <sys/stat.h>

namespace {

const char *kUsage =
    "usage: ggc INPUT.mlir [--emit=STAGE] [-o OUTPUT] [--arch=sm_90a]\n"
    "           [--num-sms=N] [--shared-memory-bytes=B] [--memory-gbps=G]\n"
    "           [--dump-dir=DIR] [--print-ir-after-all] [--timing]\n"
    "       ggc --list-stages | --version | --help\n"
    "\n"
    "Compiles gg IR through the ggc pipeline up to STAGE (default: ptx) and\n"
    "writes that stage's output to OUTPUT\n"
    "(default: standard output). INPUT may be '-' for standard input.\n"
    "--dump-dir writes every stage that ran to DIR/<input>.<stage>.<ext>.\n"
    "--timing prints to standard error the wall time of every stage and\n"
    "of each of its passes.\n";

int usageError(const std::string &message) {
  std::cerr << "ggc: error: " << message << "\n" << kUsage;
  return 2;
}

void listStages(std::ostream &os) {
  for (size_t i = 0; i < ggc_num_stages(); ++i)
    os << "  " << ggc_stage_name(i) << ": " << ggc_stage_description(i)
       << "\n";
}

constexpr int64_t kMaxNumSMs = GGC_MAX_NUM_SMS;
constexpr int64_t kMaxSharedMemoryBytes = 1 << 20;
constexpr int64_t kMaxMemoryGBps = 1 << 20;

const char *extensionFor(const std::string &stage) {
  if (stage == "llvm")
    return ".ll";
  if (stage == "ptx")
    return ".ptx";
  if (stage == "cubin")
    return ".cubin";
  return ".mlir";
}

/// Reads `path` into `text`, or says why not. A directory opens as an
/// ifstream and only fails (throwing std::ios_failure) when read.
bool readFile(const std::string &path, std::string &text) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    std::cerr << "ggc: error: input '" << path
              << "' is a directory, not a file of gg IR\n";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "ggc: error: cannot read input file '" << path << "'\n";
    return false;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  text = contents.str();
  return true;
}

/// False where any byte did not reach the file: a full disk shows only
/// when the buffer is flushed, so the stream is closed before it is asked.
bool writeFile(const std::string &path, const char *data, size_t length) {
  std::ofstream out(path, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(length));
  out.close();
  return !out.fail();
}

} // namespace

bool isStage(const std::string &name) {
  for (size_t i = 0; i < ggc_num_stages(); ++i)
    if (name == ggc_stage_name(i))
      return true;
  return false;
}

/// The command line, read by llvm::cl (the LLVM copy linked into this
/// tool; libggc.so keeps its own hidden).
struct Options {
  std::string input, output, emit, arch, dumpDir;
  int64_t numSMs = 132;
  int64_t sharedMemoryBytes = 0;
  int64_t memoryGBps = 0;
  bool printAfterAll = false;
  bool timing = false;
};

/// `text` as an integer in [lo, hi], or nothing.
std::optional<int64_t> parseInteger(const std::string &text, int64_t lo,
                                    int64_t hi) {
  char *end = nullptr;
  errno = 0;
  int64_t value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < lo ||
      value > hi)
    return std::nullopt;
  return value;
}

/// Parses argv into `options`; returns -1 to go on, or the exit status
/// (0 after --help/--version/--list-stages, 2 for a usage error).
int parseArguments(int argc, char **argv, Options &options) {
  namespace cl = llvm::cl;
  static cl::OptionCategory category("ggc options");
  static cl::list<std::string> inputs(cl::Positional, cl::desc("INPUT.mlir"),
                                      cl::cat(category));
  static cl::opt<std::string> output("o", cl::desc("output file"),
                                     cl::value_desc("OUTPUT"), cl::init("-"),
                                     cl::cat(category));
  static cl::opt<std::string> emit("emit", cl::desc("the last stage to run"),
                                   cl::init("ptx"), cl::cat(category));
  static cl::opt<std::string> arch("arch", cl::desc("target architecture"),
                                   cl::init("sm_90a"), cl::cat(category));
  static cl::opt<std::string> numSMs("num-sms", cl::desc("SMs of the GPU"),
                                     cl::init("132"), cl::cat(category));
  static cl::opt<std::string> sharedMemoryBytes(
      "shared-memory-bytes",
      cl::desc("the GPU's opt-in shared memory per CTA (0: the arch's)"),
      cl::init("0"), cl::cat(category));
  static cl::opt<std::string> memoryGBps(
      "memory-gbps",
      cl::desc("the GPU's peak DRAM bandwidth in GB/s (0: unknown)"),
      cl::init("0"), cl::cat(category));
  static cl::opt<std::string> dumpDir(
      "dump-dir", cl::desc("write every stage that ran into DIR"),
      cl::value_desc("DIR"), cl::cat(category));
  static cl::opt<bool> printAfterAll("mlir-print-ir-after-all",
                                     cl::desc("print the IR after each pass"),
                                     cl::cat(category));
  static cl::alias printAfterAllShort("print-ir-after-all",
                                      cl::desc("same as --mlir-print-ir-after-all"),
                                      cl::aliasopt(printAfterAll),
                                      cl::cat(category));
  static cl::opt<bool> listOnly("list-stages", cl::desc("list the stages"),
                                cl::cat(category));
  static cl::opt<bool> timing(
      "timing", cl::desc("print the wall time of every stage and pass"),
      cl::cat(category));
  // --help and --version are llvm::cl's own (they print and exit 0).
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << ggc_version() << "\n"; });
  cl::HideUnrelatedOptions(category);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  std::ostringstream overview;
  overview << kUsage << "\nstages:\n";
  listStages(overview);
  if (!cl::ParseCommandLineOptions(argc, argv, overview.str(), &errorStream)) {
    // llvm::cl writes some errors to its stream and others straight to
    // stderr: keep the first line it gave us, if any.
    std::istringstream lines(errorStream.str());
    std::string message;
    while (message.empty() && std::getline(lines, message))
      if (message.rfind("ggc: ", 0) == 0)
        message = message.substr(5);
    return usageError(message.empty() ? "bad command line (see above)"
                                      : message);
  }
  if (listOnly) {
    listStages(std::cout);
    return 0;
  }
  if (!isStage(emit)) {
    std::ostringstream known;
    listStages(known);
    return usageError("--emit expects a stage, got '" + emit +
                      "'; the stages:\n" + known.str());
  }
  // The Python API's bounds (ggc.compiler.MAX_NUM_SMS,
  // MAX_SHARED_MEMORY_BYTES): a GPU has far fewer SMs and far less memory.
  std::optional<int64_t> sms = parseInteger(numSMs, 1, kMaxNumSMs);
  if (!sms)
    return usageError("--num-sms expects an integer from 1 to " +
                      std::to_string(kMaxNumSMs) + ", got '" + numSMs + "'");
  options.numSMs = *sms;
  std::optional<int64_t> shared =
      parseInteger(sharedMemoryBytes, 0, kMaxSharedMemoryBytes);
  if (!shared)
    return usageError("--shared-memory-bytes expects an integer from 0 (the "
                      "arch's) to " +
                      std::to_string(kMaxSharedMemoryBytes) + ", got '" +
                      sharedMemoryBytes + "'");
  options.sharedMemoryBytes = *shared;
  std::optional<int64_t> gbps = parseInteger(memoryGBps, 0, kMaxMemoryGBps);
  if (!gbps)
    return usageError("--memory-gbps expects an integer from 0 (unknown) to " +
                      std::to_string(kMaxMemoryGBps) + ", got '" + memoryGBps +
                      "'");
  options.memoryGBps = *gbps;
  if (inputs.size() > 1)
    return usageError("more than one input file ('" + inputs[0] + "' and '" +
                      inputs[1] + "')");
  options.input = inputs.empty() ? "" : inputs[0];
  options.output = output;
  options.emit = emit;
  options.arch = arch;
  options.dumpDir = dumpDir;
  options.printAfterAll = printAfterAll;
  options.timing = timing;
  return -1;
}

int main(int argc, char **argv) {
  Options parsed;
  if (int status = parseArguments(argc, argv, parsed); status >= 0)
    return status;
  const std::string &input = parsed.input, &output = parsed.output,
                    &emit = parsed.emit, &arch = parsed.arch,
                    &dumpDir = parsed.dumpDir;
  int64_t numSMs = parsed.numSMs;
  bool printAfterAll = parsed.printAfterAll;
  if (input.empty())
    return usageError("no input file");

  std::string source;
  if (input == "-") {
    source.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else if (!readFile(input, source)) {
    return 1;
  }

  ggc_options options = {emit.c_str(),
                         arch.c_str(),
                         numSMs,
                         printAfterAll ? 1 : 0,
                         parsed.sharedMemoryBytes,
                         parsed.memoryGBps,
                         parsed.timing ? 1 : 0};
  ggc_result *result = ggc_compile(source.data(), source.size(),
                                   input == "-" ? "<stdin>" : input.c_str(),
                                   &options);
  std::cerr << ggc_result_diagnostics(result) << ggc_result_ir_after_all(result)
            << ggc_result_timing(result);

  int status = 0;
  if (!dumpDir.empty()) {
    std::error_code made;
    std::filesystem::create_directories(dumpDir, made);
    if (made) {
      std::cerr << "ggc: error: cannot create --dump-dir '" << dumpDir
                << "': " << made.message() << "\n";
      ggc_result_destroy(result);
      return 1;
    }
    std::string base = input == "-" ? "stdin" : input;
    base = base.substr(base.find_last_of('/') + 1);
    base = base.substr(0, base.rfind(".mlir"));
    for (size_t i = 0; i < ggc_result_num_stages(result); ++i) {
      std::string stage = ggc_result_stage_name(result, i);
      // k.gg.mlir, k.nvvm.mlir, ..., k.ll, k.ptx, k.cubin: a stage with a
      // file type of its own is named by it alone.
      std::string extension = extensionFor(stage);
      std::string path = dumpDir + "/" + base +
                         (extension == ".mlir" ? "." + stage : "") + extension;
      size_t length = 0;
      const char *text = ggc_result_stage_text(result, i, &length);
      if (!writeFile(path, text, length)) {
        std::cerr << "ggc: error: cannot write '" << path << "'\n";
        status = 1;
      } else {
        std::cout << "stage " << stage << " -> " << path << "\n";
      }
    }
  }

  if (!ggc_result_ok(result)) {
    ggc_result_destroy(result);
    return 1;
  }
  size_t last = ggc_result_num_stages(result) - 1;
  size_t length = 0;
  const char *text = ggc_result_stage_text(result, last, &length);
  if (output == "-") {
    if (dumpDir.empty() &&
        !std::cout.write(text, static_cast<std::streamsize>(length)).flush()) {
      std::cerr << "ggc: error: cannot write the output to standard output\n";
      status = 1;
    }
  } else if (!writeFile(output, text, length)) {
    std::cerr << "ggc: error: cannot write output file '" << output << "'\n";
    status = 1;
  }
  ggc_result_destroy(result);
  return status;
}
