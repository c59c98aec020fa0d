//===- GGKFrameOps.td - the kernel's frame ------------------*- tablegen -*-===//
//
// The ops of a kernel's frame around its work: its parameters
// (ggk.kernel_param, made arguments by ggk-collect-launch), the warp roles
// and the register split between them (ggk.warp_specialize, lowered by
// ggk-warp-specialize). Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_WarpSpecializeOp : GGK_Op<"warp_specialize", [RecursiveMemoryEffects]> {
  let summary = "the kernel's warp roles: the producer's threads, the consumer warpgroups, and the registers each role keeps";
  let description = [{
    Splits the CTA's threads into roles by warpgroup (128 threads, by
    `thread`, the thread index): warpgroup 0 gives registers back
    (`setmaxnreg.dec` to `plan`'s producer registers) and, in the thread
    where `leader` holds, runs `producer` (the TMA loads); every other
    warpgroup takes registers (`setmaxnreg.inc` to the consumer registers)
    and runs `consumers` with its index among the consumers (warpgroup
    - 1), made warp-uniform (`shfl.sync` from lane 0) so that ptxas keeps
    what is computed from it in uniform registers. `plan` is the op's
    `#gg.kernel_plan`, whose `registers` gg-plan-kernel chose (and a user
    may override): `setmaxnreg.inc` waits until the registers are free, so
    the split must fit the CTA's share of the register file, which
    gg-plan-kernel checks. `ggk-warp-specialize` lowers it.

    Before sm_90a (no setmaxnreg, no TMA) the `consumer_warpgroups`
    consumer warpgroups come first, warpgroup `c` running `consumers` with
    index `c`, and the producer warpgroup after them, if the plan has one,
    runs `producer` on every thread (each copies its share by cp.async);
    no register count moves. On sm_90a `consumer_warpgroups` is the number
    of warpgroups after warpgroup 0.

    Example:
    ```mlir
    ggk.warp_specialize %tid, %is_leader attributes {
        plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                               registers = [24, 240], staging = swizzled>,
        consumer_warpgroups = 2}
    producer {
      ...
      ggk.yield
    } consumers {
    ^bb0(%consumer: i32):
      ...
      ggk.yield
    }
    ```
  }];
  let arguments = (ins I32:$thread, I1:$leader, GG_KernelPlanAttr:$plan,
                       I64Attr:$consumer_warpgroups);
  let regions = (region SizedRegion<1>:$producer, SizedRegion<1>:$consumers);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $thread `,` $leader attr-dict-with-keyword `producer` $producer
    `consumers` $consumers
  }];
}

def GGK_KernelParamOp : GGK_Op<"kernel_param"> {
  let summary = "a parameter of the kernel, stated with what feeds it at launch";
  let description = [{
    The value of one kernel parameter, whose `#ggk.param` says what the
    runtime passes for it: a tensor map it encodes (an `!llvm.ptr` to the
    map), a device pointer to a tensor (`!llvm.ptr<1>`) or a run-time size
    (`i64`). Whoever needs a parameter states it here, at the top of the
    kernel; `ggk-collect-launch` makes each, in the order they appear, an
    argument of the kernel (a tensor map by value, `__grid_constant__`)
    and lists its `#ggk.param` in the launch contract. It is not pure:
    an unused parameter stays one, as the runtime passes it.

    Example:
    ```mlir
    %groups = ggk.kernel_param #ggk.param<pointer, operand = "groups", arg = 2> -> !llvm.ptr<1>
    ```
  }];
  let arguments = (ins GGK_ParamAttr:$param);
  let results = (outs AnyType:$value);
  let hasVerifier = 1;
  let assemblyFormat = "qualified($param) attr-dict `->` type($value)";
}
