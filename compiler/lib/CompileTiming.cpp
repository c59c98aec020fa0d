//===- CompileTiming.cpp - where a compile's time goes -------------------===//
#include "CompileTiming.h"

#include "mlir/Pass/Pass.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace ggc {

size_t CompileClock::passStarted(std::string pass, unsigned depth) {
  pending.push_back({std::move(pass), depth, 0});
  return pending.size() - 1;
}

void CompileClock::stageRan(std::string stage, double stepMs, double printMs) {
  stages.push_back({std::move(stage), stepMs, printMs, std::move(pending)});
  pending.clear();
}

std::string CompileClock::report() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto line = [&](unsigned indent, llvm::StringRef name, double ms) {
    os << llvm::format("%*s%-*s %10.2f\n", indent, "", 44 - indent,
                       name.str().c_str(), ms);
  };
  os << "ggc timing, wall ms (a stage: making it, then printing it):\n";
  line(2, "parse and verify", parseMs);
  double total = parseMs;
  for (const StageTime &stage : stages) {
    line(2, "stage " + stage.name, stage.stepMs);
    // Passes nest inside their adaptors: a line's time includes the
    // passes indented under it.
    for (const PassTime &pass : stage.passes)
      line(4 + 2 * pass.depth, pass.name, pass.ms);
    if (stage.printMs > 0.005)
      line(4, "(print " + stage.name + ")", stage.printMs);
    total += stage.stepMs + stage.printMs;
  }
  line(2, "total", total);
  return text;
}

void PassTimes::runBeforePass(mlir::Pass *pass, mlir::Operation *) {
  llvm::StringRef name = pass->getArgument();
  size_t line = clock.passStarted((name.empty() ? pass->getName() : name).str(),
                                  static_cast<unsigned>(running.size()));
  running.push_back({CompileClock::Clock::now(), line});
}

void PassTimes::runAfterPass(mlir::Pass *, mlir::Operation *) {
  clock.passEnded(running.back().second,
                  CompileClock::msSince(running.back().first));
  running.pop_back();
}

void PassTimes::runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) {
  runAfterPass(pass, op);
}

} // namespace ggc
