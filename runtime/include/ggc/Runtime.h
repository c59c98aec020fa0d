//===- Runtime.h - ggc runtime on the CUDA Driver API ----------*- C++ -*-===//
//
// Loads compiled kernels, encodes TMA tensor maps and launches, with no
// device allocation and no host synchronisation on the launch path, so
// launches can be captured in CUDA graphs. The CUDA driver is loaded at run
// time: on a machine without one, every entry point throws a clear Error.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_RUNTIME_H
#define GGC_RUNTIME_H

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ggc::runtime {

/// Every failure: what was being done and what CUDA (or the check) said.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

enum class ElementType { UInt8, Float16, BFloat16, Float32 };
ElementType parseElementType(const std::string &name);

/// How TMA lays a box out in shared memory: the 128-byte swizzle that wgmma
/// reads operands with (and a staged output tile of whole 128-byte rows),
/// the 64-byte one (a staged tile of rows of 64-byte chunks), or plain
/// row-major (a dense staged tile).
enum class Swizzle { None, Bytes64, Bytes128 };
Swizzle parseSwizzle(const std::string &name);
int64_t elementBytes(ElementType type);

/// A tiled TMA view of a row-major tensor; dimensions innermost first.
struct TensorMapSpec {
  ElementType type = ElementType::BFloat16;
  uint32_t rank = 0;
  std::array<uint64_t, 5> dims{};        ///< elements per dimension
  std::array<uint64_t, 5> strideBytes{}; ///< bytes; [0] unused (contiguous)
  std::array<uint32_t, 5> box{};         ///< tile elements per dimension
  uint64_t address = 0;                  ///< device address
  Swizzle swizzle = Swizzle::Bytes128;
  /// Throws Error naming the first field TMA would reject.
  void validate() const;
  /// Bytes that identify the map, for caching encoded descriptors.
  std::string key() const;
};

/// The row-major view of a tensor of `shape` (outermost first), as TMA sees
/// it: dims and byte strides innermost first.
TensorMapSpec rowMajorTensorMap(ElementType type,
                                const std::vector<int64_t> &shape,
                                const std::vector<uint32_t> &boxInnermostFirst,
                                uint64_t address,
                                Swizzle swizzle = Swizzle::Bytes128);

struct KernelArg {
  enum class Kind { TensorMap, Pointer, Int64 } kind = Kind::Pointer;
  TensorMapSpec tensorMap;
  uint64_t value = 0; ///< the pointer or the integer
};

/// Bytes a kernel's parameter buffer would hold for `args`, in order, with
/// CUDA's alignment rules (tensor maps 64-byte aligned, 128 bytes each).
std::vector<size_t> parameterOffsets(const std::vector<KernelArg> &args,
                                     size_t *totalBytes);

/// True when a CUDA driver with at least one device can be loaded.
bool driverAvailable(std::string *whyNot = nullptr);

/// Whether kernels whose contract allows it (they wait for the grid ahead
/// of them at entry: `dependent_launch`) are launched with programmatic
/// stream serialization, so that their CTAs start while that grid ends.
/// On unless the environment's GGC_DEPENDENT_LAUNCH is 0 when first asked;
/// the setter wins over it, for every launch after the call.
bool dependentLaunches();
void setDependentLaunches(bool enabled);

/// The ordinal of the device whose memory holds `address`; throws Error
/// for a null pointer or one that is not device memory.
int pointerDevice(uint64_t address);

/// Device `device`'s peak DRAM bandwidth in GB/s, from the driver's memory
/// clock and bus width (double data rate); 0 where the driver reports
/// neither. gg-select-config's tile rules read it (ggc_options'
/// memory_gbps). Throws Error where the driver is unusable or the device
/// does not exist.
int64_t deviceMemoryGBps(int device);

/// Copies `bytes` from device memory at `address` to `destination` in
/// stream order on `device`'s primary context, and waits for the copy: a
/// host synchronisation, for the opt-in checks of group metadata.
void copyToHost(int device, uint64_t address, void *destination, size_t bytes,
                uint64_t stream);

class Kernel;

/// A launch with its parameters packed and its tensor maps encoded: a
/// serving or training loop that calls with the same buffers launches it
/// again for the cost of cuLaunchKernelEx alone.
class PreparedLaunch {
public:
  /// Launches on `stream` (0: the legacy default stream).
  void launch(uint64_t stream) const;

private:
  friend class Kernel;
  struct alignas(64) ParameterBlock {
    unsigned char bytes[4096];
  };
  const Kernel *kernel_ = nullptr;
  void *context_ = nullptr;  // CUcontext it was prepared in, made current to launch
  void *function_ = nullptr; // CUfunction loaded in that context
  int grid_ = 0;
  std::shared_ptr<ParameterBlock> parameters_;
  std::vector<void *> pointers_;
};

/// A launch fixed but for its tensors' addresses, which come with each
/// call: the function in its context, the grid and the packed parameter
/// block (integers written, each tensor map's shape and box) are made once
/// per argument signature (dtypes, shapes, device). A tensor map is encoded
/// again only when its tensor's address changes, so a loop that allocates
/// fresh outputs or activations launches without re-deriving anything.
/// Thread-safe: the memo of encoded maps is behind a mutex.
class LaunchRecord {
public:
  /// Launches with `addresses[s]` for every argument whose source is `s`,
  /// on `stream` (0: the legacy default stream). Throws Error for a wrong
  /// address count or an address that is not 16-byte aligned.
  void launch(const uint64_t *addresses, size_t count, uint64_t stream) const;
  /// How many addresses launch() takes.
  size_t addressCount() const { return addressCount_; }

private:
  friend class Kernel;
  struct Slot {
    KernelArg::Kind kind;
    size_t offset; // in the parameter block
    int source;    // index into launch()'s addresses; -1 for integers
    TensorMapSpec spec;
  };
  struct EncodedMaps; // per slot: its last few addresses' encoded maps
  const Kernel *kernel_ = nullptr;
  void *context_ = nullptr;
  void *function_ = nullptr;
  int grid_ = 0;
  size_t addressCount_ = 0;
  size_t bytes_ = 0;
  std::vector<unsigned char> parameters_; // integers written, the rest zero
  std::vector<Slot> slots_;
  std::shared_ptr<EncodedMaps> maps_;
};

class Kernel {
public:
  /// `image` is a cubin (or PTX, NUL-free text) holding `name`.
  /// `clusterSize` CTAs along x form a cluster (1: no clusters).
  /// `dependentLaunch`: the kernel waits for the grid ahead of it before
  /// it touches global memory (griddepcontrol.wait at entry), so it may be
  /// launched before that grid ends (see dependentLaunches()).
  Kernel(std::string image, std::string name, int sharedBytes,
         int blockThreads, int clusterSize = 1, bool dependentLaunch = false);
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  /// Launches `grid` CTAs on `stream` (0: the legacy default stream) on
  /// `device` (its primary context), or, for device -1, in the calling
  /// thread's current context (device 0's primary context when none is
  /// current). The calling thread's current context is left as it was.
  void launch(int grid, const std::vector<KernelArg> &args, uint64_t stream,
              int device = -1);

  /// Checks and packs a launch (encoding its tensor maps) for repeated use,
  /// on `device` as for launch().
  PreparedLaunch prepare(int grid, const std::vector<KernelArg> &args,
                         int device = -1);

  /// A LaunchRecord of `args` on `device` (as for launch()): argument i
  /// takes its address from launch()'s addresses[sources[i]] (tensor maps
  /// and pointers; ignored for integers), the address in `args` unused.
  LaunchRecord record(int grid, const std::vector<KernelArg> &args,
                      const std::vector<int> &sources, int device = -1);

  const std::string &name() const { return name_; }
  /// Whether the kernel was declared to wait for the grid ahead of it (its
  /// launches are dependent ones while dependentLaunches() is on).
  bool dependentLaunch() const { return dependentLaunch_; }

  /// The module and function loaded in one context.
  struct Loaded;

private:
  friend class PreparedLaunch;
  friend class LaunchRecord;
  Loaded &loadedIn(void *context);
  void launchLoaded(void *context, void *function, int grid, void **parameters,
                    uint64_t stream) const;
  std::string image_, name_;
  int sharedBytes_, blockThreads_, clusterSize_;
  bool dependentLaunch_;
  std::unique_ptr<struct KernelCache> cache_;
};

} // namespace ggc::runtime

#endif // GGC_RUNTIME_H
