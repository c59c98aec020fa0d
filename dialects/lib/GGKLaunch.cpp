//===- GGKLaunch.cpp - #ggk.launch and its parameters ----------------------===//
//
// The launch contract: its verifiers, and the JSON form hosts read
// (ggc_result_kernel_info, the runtime's Kernel).
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::ggk;

FailureOr<SmallVector<int64_t>> mlir::ggk::parseSizes(AsmParser &parser) {
  SmallVector<int64_t> sizes;
  if (failed(parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            return parser.parseInteger(sizes.emplace_back());
          })))
    return failure();
  return sizes;
}

LogicalResult ParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                ParamKind kind, StringRef operand, int64_t arg,
                                StringAttr dtype, ArrayRef<int64_t> box,
                                StringAttr swizzle, std::optional<int64_t> dim) {
  if (arg < 0)
    return emitError() << "param of '" << operand
                       << "' must name a function argument, got arg = " << arg;
  bool isMap = kind == ParamKind::tensor_map;
  if (isMap != bool(dtype) || isMap != !box.empty() || isMap != bool(swizzle))
    return emitError() << "param of '" << operand << "': dtype, box and "
                       << "swizzle are given exactly for tensor maps";
  if ((kind == ParamKind::size) != dim.has_value())
    return emitError() << "param of '" << operand
                       << "': dim is given exactly for sizes";
  return success();
}

LogicalResult ArgAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              StringRef dtype, ArrayAttr shape, bool) {
  for (Attribute d : shape)
    if (!isa<IntegerAttr, StringAttr>(d))
      return emitError() << "arg shape entries must be sizes or names of "
                            "run-time sizes, got "
                         << d;
  return success();
}

LogicalResult LaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, StringRef layout,
                                 std::optional<int64_t> block,
                                 std::optional<int64_t> sharedBytes,
                                 int64_t cluster, int64_t maxGrid,
                                 ArrayRef<int64_t> tile, int64_t numGroups,
                                 int64_t n, std::optional<int64_t> k,
                                 ArrayAttr params, ArrayAttr args,
                                 int64_t ungroupedSpans, bool) {
  if ((block && *block < 1) || (sharedBytes && *sharedBytes < 0) ||
      cluster < 1 || maxGrid < 1 || ungroupedSpans < 0)
    return emitError() << "launch of '" << name
                       << "': block, cluster and max_grid must be positive "
                          "and shared bytes and ungrouped spans not negative";
  if (tile.size() != 3)
    return emitError() << "launch of '" << name
                       << "': tile must be [block M, block N, block K]";
  if (params &&
      !llvm::all_of(params, [](Attribute a) { return isa<ParamAttr>(a); }))
    return emitError() << "launch of '" << name
                       << "': params must all be #ggk.param";
  if (!llvm::all_of(args, [](Attribute a) { return isa<ArgAttr>(a); }))
    return emitError() << "launch of '" << name
                       << "': args must all be #ggk.arg";
  return success();
}

namespace {
llvm::json::Value paramJson(ParamAttr p) {
  llvm::json::Object o{{"kind", stringifyParamKind(p.getKind())},
                       {"operand", p.getOperand()},
                       {"arg", p.getArg()}};
  if (p.getKind() == ParamKind::tensor_map) {
    o["dtype"] = p.getDtype().getValue();
    o["box"] = llvm::json::Array(p.getBox());
    o["swizzle"] = p.getSwizzle().getValue();
  }
  if (p.getDim())
    o["dim"] = *p.getDim();
  return o;
}

llvm::json::Value argJson(ArgAttr a) {
  llvm::json::Array shape;
  for (Attribute d : a.getShape())
    if (auto size = dyn_cast<IntegerAttr>(d))
      shape.push_back(size.getInt());
    else
      shape.push_back(cast<StringAttr>(d).getValue());
  return llvm::json::Object{{"dtype", a.getDtype()},
                            {"shape", std::move(shape)},
                            {"written", a.getWritten()}};
}
} // namespace

bool LaunchAttr::isComplete() const {
  return getBlock() && getSharedBytes() && getParams();
}

std::string LaunchAttr::toJson() const {
  assert(isComplete() && "ggk-collect-launch completes the contract");
  llvm::json::Array params, args;
  for (Attribute p : getParams())
    params.push_back(paramJson(cast<ParamAttr>(p)));
  for (Attribute a : getArgs())
    args.push_back(argJson(cast<ArgAttr>(a)));
  ArrayRef<int64_t> tile = getTile();
  llvm::json::Object info{
      {"name", getName()},
      {"layout", getLayout()},
      {"block", *getBlock()},
      {"shared_bytes", *getSharedBytes()},
      {"cluster", getCluster()},
      {"max_grid", getMaxGrid()},
      {"block_m", tile[0]},
      {"block_n", tile[1]},
      {"block_k", tile[2]},
      {"num_groups", getNumGroups()},
      {"n", getN()},
      {"k", getK() ? llvm::json::Value(*getK()) : llvm::json::Value(nullptr)},
      {"params", std::move(params)},
      {"args", std::move(args)}};
  // Only where there are any: the contracts of other kernels stay as they were.
  if (getUngroupedSpans() != 0)
    info["ungrouped_spans"] = getUngroupedSpans();
  if (getDependentLaunch())
    info["dependent_launch"] = true;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(info));
  return text;
}

LogicalResult KernelParamOp::verify() {
  if (!isa_and_nonnull<LLVM::LLVMFuncOp>((*this)->getParentOp()))
    return emitOpError() << "states a parameter of the kernel: it must sit "
                            "in the body of an llvm.func";
  Type type = getValue().getType();
  auto generic = LLVM::LLVMPointerType::get(getContext(), 0);
  auto global = LLVM::LLVMPointerType::get(getContext(), 1);
  switch (getParam().getKind()) {
  case ParamKind::tensor_map:
    if (type == generic)
      return success();
    return emitOpError() << "of kind tensor_map is the map's address, an "
                         << generic << ", got " << type;
  case ParamKind::pointer:
    if (type == generic || type == global)
      return success();
    return emitOpError() << "of kind pointer is a device address, an "
                         << global << " or " << generic << ", got " << type;
  case ParamKind::size:
    if (type.isInteger(64))
      return success();
    return emitOpError() << "of kind size is an i64, got " << type;
  }
  return success();
}
