//===- CompileTiming.h - where a compile's time goes ------------*- C++ -*-===//
//
// `ggc --timing` (CompileOptions::timing): the wall time of every stage of
// ggc::compile and of every MLIR pass a stage runs, as text for a reader
// (CompileResult::timing). A cold compile's cost is mostly LLVM's, the
// NVPTX backend's and ptxas's; the passes show which of ggc's own grew.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_COMPILER_LIB_COMPILETIMING_H
#define GGC_COMPILER_LIB_COMPILETIMING_H

#include "mlir/Pass/PassInstrumentation.h"

#include <chrono>
#include <string>
#include <vector>

namespace ggc {

/// The times of one compile: its stages in order, each with its passes in
/// the order they started.
class CompileClock {
public:
  using Clock = std::chrono::steady_clock;

  /// A pass `depth` levels inside its stage's pass manager started: its
  /// line, listed in the order passes start, whose time passEnded fills.
  size_t passStarted(std::string pass, unsigned depth);
  void passEnded(size_t line, double ms) { pending[line].ms = ms; }
  /// The stage `stage` took `stepMs` to make and `printMs` to print; the
  /// passes reported since the last stage were its.
  void stageRan(std::string stage, double stepMs, double printMs);
  /// Parsing and verifying the input, before the first stage.
  void parsed(double ms) { parseMs = ms; }
  std::string report() const;

  static double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start)
        .count();
  }

private:
  struct PassTime {
    std::string name;
    unsigned depth;
    double ms;
  };
  struct StageTime {
    std::string name;
    double stepMs, printMs;
    std::vector<PassTime> passes;
  };
  double parseMs = 0;
  std::vector<PassTime> pending;
  std::vector<StageTime> stages;
};

/// Reports each pass's wall time to a CompileClock (the context runs one
/// thread: ggc::compile disables multithreading, so passes nest as a
/// stack).
class PassTimes : public mlir::PassInstrumentation {
public:
  explicit PassTimes(CompileClock &clock) : clock(clock) {}
  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override;

private:
  CompileClock &clock;
  /// The passes running, outermost first: when each started, its line.
  std::vector<std::pair<CompileClock::Clock::time_point, size_t>> running;
};

} // namespace ggc

#endif // GGC_COMPILER_LIB_COMPILETIMING_H
