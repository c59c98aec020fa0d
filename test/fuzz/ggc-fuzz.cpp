//===- ggc-fuzz.cpp - mutation fuzzing of the parser, verifier and pipeline -===//
//
//   ggc-fuzz [--seed=N] [--runs=N] [--max-total-time=S] [--timeout=S]
//            [--jobs=N] [--emit=STAGE] [--arch=TARGET] [--crash-dir=DIR]
//            CORPUS...
//   ggc-fuzz --replay FILE...
//   ggc-fuzz --help
//
// Takes gg IR files (or folders of them) as a corpus, mutates them with a
// fixed seed (Mutator.h), and compiles each mutant through libggc's C API
// (parse, verify, every pass, PTX) in a forked child with a time limit.
// A child that crashes, aborts, trips a sanitizer or runs past the limit
// is a finding, and so is one whose compile fails without a diagnostic or
// succeeds without a kernel; each is saved to the crash folder with the
// child's stderr. Exits 1 when there is any finding.
//
//===----------------------------------------------------------------------===//
#include "Mutator.h"

#include "ggc-c/Compiler.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <execinfo.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  uint64_t seed = 1;
  size_t runs = 1000; // 0: until --max-total-time
  double maxTotalSeconds = 0;
  double timeoutSeconds = 20;
  size_t jobs = 1;
  std::string emit = "ptx";
  std::string arch = "sm_90a";
  std::string crashDir = "ggc-fuzz-findings";
  bool replay = false;
  bool saveAll = false; // every input with its log, to tune mutations
  std::vector<std::string> paths;
};

// How a child ends: exit codes of its own, anything else is a crash.
enum Outcome : int {
  kCompiled = 0,
  kRejected = 10,      // failed with diagnostics: the expected failure
  kSilentFailure = 11, // failed with no diagnostic at all
  kNoKernel = 12,      // succeeded, but the output has no kernel
};

const char *kUsage = R"(usage: ggc-fuzz [options] CORPUS...
       ggc-fuzz --replay FILE...

Mutates the gg IR files of CORPUS (files or folders of .mlir) and compiles
each mutant through libggc in a forked child; a crash, a hang, a failure
without a diagnostic or a success without a kernel is a finding, saved to
the crash folder. Exits 1 when there is any finding.

options:
  --seed=N              the mutations' seed (default 1)
  --runs=N              mutants to compile (default 1000; 0: until
                        --max-total-time)
  --max-total-time=S    stop after S seconds
  --timeout=S           a child running past S seconds is a hang (default 20)
  --jobs=N              children at once (default 1)
  --emit=STAGE          the last stage to compile to (default ptx)
  --arch=TARGET         the target to compile for (default sm_90a): )";

/// The targets libggc compiles for, as "a, b and c".
std::string targetNames() {
  std::string names;
  size_t n = ggc_num_targets();
  for (size_t i = 0; i < n; ++i) {
    if (i)
      names += i + 1 == n ? " and " : ", ";
    names += ggc_target(i)->name;
  }
  return names;
}

bool isTarget(const std::string &name) {
  for (size_t i = 0; i < ggc_num_targets(); ++i)
    if (name == ggc_target(i)->name)
      return true;
  return false;
}

void printUsage() {
  std::cout << kUsage << targetNames() << R"(
  --crash-dir=DIR       where findings go (default ggc-fuzz-findings)
  --save-all            save every input with its log, to tune mutations
  --replay              compile FILE... once in this process, printing the
                        diagnostics (for a debugger)
  --help                this text
)";
}

bool parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *prefix) -> const char * {
      size_t n = std::strlen(prefix);
      return arg.compare(0, n, prefix) == 0 ? argv[i] + n : nullptr;
    };
    if (const char *v = value("--seed="))
      o.seed = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("--runs="))
      o.runs = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("--max-total-time="))
      o.maxTotalSeconds = std::atof(v);
    else if (const char *v = value("--timeout="))
      o.timeoutSeconds = std::atof(v);
    else if (const char *v = value("--jobs="))
      o.jobs = std::max<size_t>(1, std::strtoull(v, nullptr, 10));
    else if (const char *v = value("--emit="))
      o.emit = v;
    else if (const char *v = value("--arch=")) {
      o.arch = v;
      if (!isTarget(o.arch)) {
        std::cerr << "ggc-fuzz: error: --arch=" << o.arch
                  << " is not a target; libggc compiles for "
                  << targetNames() << "\n";
        return false;
      }
    }
    else if (const char *v = value("--crash-dir="))
      o.crashDir = v;
    else if (arg == "--replay")
      o.replay = true;
    else if (arg == "--save-all")
      o.saveAll = true;
    else if (arg == "--help") {
      printUsage();
      std::exit(0);
    }
    else if (arg.rfind("-", 0) == 0) {
      std::cerr << "ggc-fuzz: error: unknown option '" << arg << "'\n";
      return false;
    } else
      o.paths.push_back(arg);
  }
  if (o.paths.empty()) {
    std::cerr << "ggc-fuzz: error: no corpus (files or folders of .mlir)\n";
    return false;
  }
  return true;
}

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Corpus {
  std::vector<std::string> inputs;
  std::vector<double> weights;
};

/// Inputs of the files given and of the .mlir files in the folders given.
/// Those of negative tests (`*invalid*`) are picked a quarter as often:
/// their mutants mostly stop where the original did, in the verifier.
Corpus loadCorpus(const std::vector<std::string> &paths) {
  std::vector<fs::path> files;
  for (const std::string &p : paths) {
    if (!fs::is_directory(p)) {
      files.push_back(p);
      continue;
    }
    for (const auto &entry : fs::recursive_directory_iterator(p))
      if (entry.is_regular_file() && entry.path().extension() == ".mlir")
        files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end()); // the same corpus order everywhere
  Corpus corpus;
  for (const fs::path &file : files) {
    bool negative = file.filename().string().find("invalid") != std::string::npos;
    for (std::string &input : ggc::fuzz::splitCorpusFile(readFile(file))) {
      corpus.inputs.push_back(std::move(input));
      corpus.weights.push_back(negative ? 1.0 : 4.0);
    }
  }
  return corpus;
}

int compileOnce(const std::string &input, const std::string &emit,
                const std::string &arch, bool print) {
  ggc_options options = {emit.c_str(), arch.c_str(), 0, 0};
  ggc_result *r =
      ggc_compile(input.data(), input.size(), "fuzz.mlir", &options);
  std::string diagnostics = ggc_result_diagnostics(r);
  int outcome = kRejected;
  if (ggc_result_ok(r)) {
    size_t n = ggc_result_num_stages(r);
    const char *text = n ? ggc_result_stage_text(r, n - 1, nullptr) : "";
    bool kernel = emit != "ptx" || std::strstr(text, ".entry") != nullptr;
    outcome = kernel ? kCompiled : kNoKernel;
  } else if (diagnostics.find("error") == std::string::npos) {
    outcome = kSilentFailure;
  }
  if (print)
    std::cerr << diagnostics;
  ggc_result_destroy(r);
  return outcome;
}

struct Running {
  size_t index;
  std::string input;
  std::string log;
  Clock::time_point deadline;
};

struct Totals {
  size_t inputs = 0, compiled = 0, rejected = 0;
  std::map<std::string, size_t> findings; // kind -> count
  size_t numFindings() const {
    size_t n = 0;
    for (const auto &[kind, count] : findings)
      n += count;
    return n;
  }
};

/// A backtrace in the child's log before it dies of a signal. Sanitizer
/// builds keep their own handlers, which print better ones.
void printBacktraceAndDie(int signal) {
  void *frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  std::signal(signal, SIG_DFL);
  raise(signal);
}

void installCrashHandlers() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_UNDEFINED__)
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(signal, printBacktraceAndDie);
#endif
}

pid_t spawn(const std::string &input, const Options &o,
            const std::string &log) {
  // Emptied here, so that a child killed before it opens its log leaves an
  // empty one rather than its predecessor's.
  std::ofstream(log, std::ios::trunc);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  // The child: sanitizer reports and LLVM's fatal errors go to its log.
  int fd = open(log.c_str(), O_WRONLY | O_TRUNC);
  if (fd >= 0) {
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  installCrashHandlers();
  // exit, not _exit: LeakSanitizer checks at exit.
  std::exit(compileOnce(input, o.emit, o.arch, /*print=*/true));
}

/// The kind of finding a child's end is, or "" for none.
std::string classify(int status, bool timedOut) {
  if (timedOut)
    return "hang";
  if (WIFSIGNALED(status))
    return "crash-signal" + std::to_string(WTERMSIG(status));
  int code = WEXITSTATUS(status);
  if (code == kCompiled || code == kRejected)
    return "";
  if (code == kSilentFailure)
    return "silent-failure";
  if (code == kNoKernel)
    return "no-kernel";
  return "crash-exit" + std::to_string(code); // sanitizers exit with 1
}

void record(const Running &r, int status, bool timedOut, const Options &o,
            Totals &totals) {
  ++totals.inputs;
  std::string kind = classify(status, timedOut);
  if (kind.empty()) {
    bool compiled = WEXITSTATUS(status) == kCompiled;
    ++(compiled ? totals.compiled : totals.rejected);
    if (!o.saveAll)
      return;
    kind = compiled ? "compiled" : "rejected";
  } else {
    ++totals.findings[kind];
  }
  std::string base = o.crashDir + "/" + kind + "-" + std::to_string(r.index);
  std::ofstream(base + ".mlir", std::ios::binary) << r.input;
  std::error_code error;
  fs::rename(r.log, base + ".log", error);
  if (kind == "compiled" || kind == "rejected")
    return;
  std::cerr << "ggc-fuzz: " << kind << " on input #" << r.index
            << ", saved to " << base << ".mlir (stderr in " << base
            << ".log)\n";
}

/// Reaps one finished child and returns its log file for the next, or
/// kills those past their deadline and returns "" when none has finished.
std::string reap(std::map<pid_t, Running> &running, const Options &o,
                 Totals &totals) {
  int status = 0;
  pid_t pid = waitpid(-1, &status, WNOHANG);
  if (pid > 0) {
    auto it = running.find(pid);
    bool timedOut = it->second.deadline == Clock::time_point();
    record(it->second, status, timedOut, o, totals);
    std::string log = it->second.log;
    running.erase(it);
    return log;
  }
  Clock::time_point now = Clock::now();
  for (auto &[child, r] : running)
    if (r.deadline != Clock::time_point() && now > r.deadline) {
      kill(child, SIGKILL);
      r.deadline = Clock::time_point(); // marks the timeout for record()
    }
  return "";
}

int fuzz(const Options &o, Corpus corpus) {
  fs::create_directories(o.crashDir);
  ggc::fuzz::Mutator mutator(std::move(corpus.inputs), corpus.weights, o.seed);
  Totals totals;
  std::map<pid_t, Running> running;
  std::vector<std::string> freeLogs;
  for (size_t j = 0; j < o.jobs; ++j)
    freeLogs.push_back(o.crashDir + "/.child-" + std::to_string(j) + ".log");
  Clock::time_point start = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(o.timeoutSeconds));
  size_t next = 0;
  while (true) {
    bool more = (o.runs == 0 || next < o.runs) &&
                (o.maxTotalSeconds <= 0 || elapsed() < o.maxTotalSeconds);
    if (!more && running.empty())
      break;
    if (more && running.size() < o.jobs) {
      Running r{next++, mutator.next(), freeLogs.back(), Clock::now() + timeout};
      freeLogs.pop_back();
      running.emplace(spawn(r.input, o, r.log), std::move(r));
      continue;
    }
    std::string log = reap(running, o, totals);
    if (log.empty()) {
      usleep(1000);
      continue;
    }
    freeLogs.push_back(log);
    if (totals.inputs % 1000 == 0)
      std::cerr << "ggc-fuzz: " << totals.inputs << " inputs, "
                << totals.numFindings() << " findings, " << int(elapsed())
                << " s\n";
  }
  for (const std::string &log : freeLogs)
    fs::remove(log);
  std::cout << "ggc-fuzz: seed " << o.seed << ": " << totals.inputs
            << " inputs in " << int(elapsed()) << " s: " << totals.compiled
            << " compiled to " << o.emit << ", " << totals.rejected
            << " rejected with a diagnostic, " << totals.numFindings()
            << " findings";
  for (const auto &[kind, count] : totals.findings)
    std::cout << " (" << kind << ": " << count << ")";
  std::cout << "\n";
  return totals.numFindings() == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseOptions(argc, argv, o))
    return 2;
  if (o.replay) {
    // In this process, so that a debugger sees the failure.
    for (const std::string &path : o.paths) {
      int outcome = compileOnce(readFile(path), o.emit, o.arch, /*print=*/true);
      std::cout << path << ": outcome " << outcome << "\n";
    }
    return 0;
  }
  Corpus corpus = loadCorpus(o.paths);
  if (corpus.inputs.empty()) {
    std::cerr << "ggc-fuzz: error: the corpus holds no gg.grouped_matmul\n";
    return 2;
  }
  std::cout << "ggc-fuzz: " << corpus.inputs.size() << " corpus inputs, for "
            << o.arch << "\n";
  return fuzz(o, std::move(corpus));
}
