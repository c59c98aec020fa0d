//===- ggc-opt.cpp - mlir-opt for gg IR and the ggc passes -----------------===//
#include "ggc/Compiler.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  ggc::registerDialects(registry);
  ggc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "ggc optimizer driver: gg IR and the ggc passes\n",
      registry));
}
