//===- ggc.cpp - the ggc compiler driver ------------------------------------===//
//
//   ggc kernel.mlir --emit=<stage> [-o out] [--dump-dir=DIR]
//
// A thin command line over the C API, so the driver, the Python bindings and
// any other host compile exactly the same way.
//
//===----------------------------------------------------------------------===//
#include "ggc-c/Compiler.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/stat.h>

namespace {

const char *kUsage =
    "usage: ggc INPUT.mlir [--emit=STAGE] [-o OUTPUT] [--arch=sm_90a]\n"
    "           [--num-sms=N] [--dump-dir=DIR] [--mlir-print-ir-after-all]\n"
    "       ggc --list-stages | --version | --help\n"
    "\n"
    "Compiles gg IR through the ggc pipeline up to STAGE (default: ptx) and\n"
    "writes that stage's output to OUTPUT\n"
    "(default: standard output). INPUT may be '-' for standard input.\n"
    "--dump-dir writes every stage that ran to DIR/<input>.<stage>.<ext>.\n";

int usageError(const std::string &message) {
  std::cerr << "ggc: error: " << message << "\n" << kUsage;
  return 2;
}

void listStages(std::ostream &os) {
  for (size_t i = 0; i < ggc_num_stages(); ++i)
    os << "  " << ggc_stage_name(i) << ": " << ggc_stage_description(i)
       << "\n";
}

const char *extensionFor(const std::string &stage) {
  if (stage == "llvm")
    return ".ll";
  if (stage == "ptx")
    return ".ptx";
  if (stage == "cubin")
    return ".cubin";
  return ".mlir";
}

bool startsWith(const std::string &s, const char *prefix) {
  return s.rfind(prefix, 0) == 0;
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

bool writeFile(const std::string &path, const char *data, size_t length) {
  std::ofstream out(path, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(length));
  return static_cast<bool>(out);
}

} // namespace

bool isStage(const std::string &name) {
  for (size_t i = 0; i < ggc_num_stages(); ++i)
    if (name == ggc_stage_name(i))
      return true;
  return false;
}

int main(int argc, char **argv) {
  std::string input, output = "-", emit = "ptx", arch = "sm_90a",
                     dumpDir;
  int64_t numSMs = 132;
  bool printAfterAll = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage << "\nstages:\n";
      listStages(std::cout);
      return 0;
    } else if (arg == "--version") {
      std::cout << ggc_version() << "\n";
      return 0;
    } else if (arg == "--list-stages") {
      listStages(std::cout);
      return 0;
    } else if (startsWith(arg, "--emit=")) {
      emit = arg.substr(7);
      if (!isStage(emit)) {
        std::ostringstream known;
        listStages(known);
        return usageError("--emit expects a stage, got '" + emit +
                          "'; the stages:\n" + known.str());
      }
    } else if (startsWith(arg, "--arch=")) {
      arch = arg.substr(7);
    } else if (startsWith(arg, "--dump-dir=")) {
      dumpDir = arg.substr(11);
    } else if (startsWith(arg, "--num-sms=")) {
      char *end = nullptr;
      numSMs = std::strtoll(arg.c_str() + 10, &end, 10);
      if (*end != '\0' || numSMs < 1)
        return usageError("--num-sms expects a positive integer, got '" +
                          arg.substr(10) + "'");
    } else if (arg == "--mlir-print-ir-after-all") {
      printAfterAll = true;
    } else if (arg == "-o") {
      if (++i == argc)
        return usageError("-o expects a file name");
      output = argv[i];
    } else if (arg != "-" && startsWith(arg, "-")) {
      return usageError("unknown option '" + arg + "'");
    } else if (!input.empty()) {
      return usageError("more than one input file ('" + input + "' and '" +
                        arg + "')");
    } else {
      input = arg;
    }
  }
  if (input.empty())
    return usageError("no input file");

  std::string source;
  if (input == "-") {
    source.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else if (!readFile(input, source)) {
    return 1;
  }

  ggc_options options = {emit.c_str(), arch.c_str(), numSMs,
                         printAfterAll ? 1 : 0};
  ggc_result *result = ggc_compile(source.data(), source.size(),
                                   input == "-" ? "<stdin>" : input.c_str(),
                                   &options);
  std::cerr << ggc_result_diagnostics(result) << ggc_result_ir_after_all(result);

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
      std::string path =
          dumpDir + "/" + base + "." + stage + extensionFor(stage);
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
    if (dumpDir.empty())
      std::cout.write(text, static_cast<std::streamsize>(length));
  } else if (!writeFile(output, text, length)) {
    std::cerr << "ggc: error: cannot write output file '" << output << "'\n";
    status = 1;
  }
  ggc_result_destroy(result);
  return status;
}
