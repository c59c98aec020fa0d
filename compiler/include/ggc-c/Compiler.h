/*===- ggc-c/Compiler.h - C API of the ggc compiler library --------*- C -*-===*
 *
 * A small, stable C surface over the compiler for the Python bindings and
 * other hosts. All strings are UTF-8 and NUL-terminated; a result owns its
 * strings until ggc_result_destroy.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GGC_C_COMPILER_H
#define GGC_C_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGC_API __attribute__((visibility("default")))

typedef struct ggc_result ggc_result;

/* The most SMs a persistent grid is planned for (ggc_options.num_sms; the
 * driver's --num-sms and Python take the same bound). */
#define GGC_MAX_NUM_SMS 4096

typedef struct ggc_options {
  const char *emit;      /* last stage to run; NULL means "ptx" */
  const char *arch;      /* NULL means "sm_90a" */
  int64_t num_sms;       /* 0 means 132; at most GGC_MAX_NUM_SMS */
  int print_ir_after_all;
  /* Added after print_ir_after_all: zero-initialize the struct
   * (ggc_options o = {0};) so that a host written before it plans for the
   * target. The device's opt-in shared memory per CTA; 0 means the
   * target's (the driver and Python take at most 1 MiB). */
  int64_t shared_memory_bytes;
  /* Added after shared_memory_bytes, likewise: the device's peak DRAM
   * bandwidth in GB/s, which gg-select-config's tile rules read; 0 means
   * unknown (planned as for an H200's). */
  int64_t memory_gbps;
  /* Non-zero: time every stage and pass (ggc_result_timing). Last, so
   * that a host written before it and recompiled, zero-initialising the
   * struct, is unchanged. */
  int timing;
} ggc_options;

/* Compiles `source` (gg IR text, `length` bytes) up to options->emit.
 * `source_name` is used in diagnostics. Never returns NULL. */
GGC_API ggc_result *ggc_compile(const char *source, size_t length,
                                const char *source_name,
                                const ggc_options *options);
/* 1 when every stage up to `emit` ran without error. */
GGC_API int ggc_result_ok(const ggc_result *result);
/* Diagnostics as text ("" when there are none). */
GGC_API const char *ggc_result_diagnostics(const ggc_result *result);
/* IR after every pass, when print_ir_after_all was set ("" otherwise). */
GGC_API const char *ggc_result_ir_after_all(const ggc_result *result);
/* The wall time of every stage that ran and of each of its passes, as
 * text, when options.timing was set and the input parsed and held a
 * kernel ("" otherwise). */
GGC_API const char *ggc_result_timing(const ggc_result *result);
/* The launch contract of every kernel as a JSON array, once stage "nvvm"
 * has run (ggk-collect-launch completes it there; "" before). */
GGC_API const char *ggc_result_kernel_info(const ggc_result *result);
/* The plan chosen for every gg.grouped_matmul, in module order, as a JSON
 * array, once stage "gg-config" has run ("" before). One object per op:
 *   {"function": "<enclosing func>",
 *    "config": {"block": [bm, bn, bk], "stages": s, "cluster": [cm, cn],
 *               "sms": n, "split_n": k},
 *    "schedule": {"order": "m_fastest", "b_cache": "normal"},
 *    "padding": {"idle_warpgroups": "skip"},
 *    "overfetch": {"rows": r, "k": k},
 *    "store_pool": [128, 64, ...],
 *    "attributes": {"<name>": "<printed attribute>", ...}}
 * "schedule", "padding", "overfetch" and "store_pool" are null where the op
 * has none. "attributes" holds every plan attribute of the op (each gg
 * attribute but the scale kinds, which describe operands, and store_pool)
 * as the IR prints it, e.g. "config": "#gg.config<block = [128, ...]>". */
GGC_API const char *ggc_result_kernel_plans(const ggc_result *result);
/* Stages that ran, in order; index in [0, ggc_result_num_stages). */
GGC_API size_t ggc_result_num_stages(const ggc_result *result);
GGC_API const char *ggc_result_stage_name(const ggc_result *result, size_t i);
GGC_API const char *ggc_result_stage_text(const ggc_result *result, size_t i,
                                          size_t *length);
GGC_API void ggc_result_destroy(ggc_result *result);

/* Every stage of the pipeline, in order. */
GGC_API size_t ggc_num_stages(void);
GGC_API const char *ggc_stage_name(size_t i);
GGC_API const char *ggc_stage_description(size_t i);

GGC_API const char *ggc_version(void);

/* The ptxas that stage "cubin" runs ($GGC_PTXAS, else the CUDA toolkit's,
 * else PATH's), or "" where none is found; valid until the next call on
 * the same thread. A cache of cubins keys on it. */
GGC_API const char *ggc_ptxas(void);

/* What a target's hardware has, as the compiler's passes read it
 * (compiler/lib/Target.h). Fields are only ever added at the end. */
typedef struct ggc_target_info {
  const char *name;              /* "sm_90a", "sm_80", "sm_86", "sm_89" */
  const int *capabilities;       /* compute capabilities (major * 10 + minor)
                                    whose devices run its kernels */
  size_t num_capabilities;
  int64_t shared_memory_bytes;   /* opt-in shared memory of a CTA */
  const char *mma;               /* "wgmma" or "mma_sync" */
  const char *async_copy;        /* "tma" or "cp_async" */
  int tensor_maps;               /* TMA loads and stores through tensor maps */
  int clusters;                  /* thread-block clusters, multicast */
  int register_reallocation;     /* setmaxnreg */
  int mbarrier_try_wait;         /* mbarrier.try_wait (else test_wait) */
  int fp8_mma;                   /* FP8 tensor cores */
  int grid_dependencies;         /* griddepcontrol: dependent launches */
} ggc_target_info;

/* The targets ggc compiles for, the default (sm_90a) first; i in
 * [0, ggc_num_targets), NULL past the end. */
GGC_API size_t ggc_num_targets(void);
GGC_API const ggc_target_info *ggc_target(size_t i);
/* The name of the target whose kernels a device of compute capability
 * major.minor runs, or NULL where ggc has none. */
GGC_API const char *ggc_target_for_capability(int major, int minor);

#ifdef __cplusplus
}
#endif

#endif /* GGC_C_COMPILER_H */
