//===- Runtime.cpp - ggc runtime on the CUDA Driver API --------------------===//
#include "ggc/Runtime.h"

#include "Driver.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace ggc::runtime {

//===----------------------------------------------------------------------===//
// The driver (Driver.h)
//===----------------------------------------------------------------------===//

namespace {

using driver::check;
using driver::Driver;
using driver::primaryContext;
using driver::ScopedContext;

/// The context a launch on `device` runs in: that device's primary
/// context, or for -1 the calling thread's current one (device 0's primary
/// context when none is current).
CUcontext launchContext(int device) {
  if (device >= 0)
    return primaryContext(device);
  CUcontext ctx = nullptr;
  check(driver::usable().ctxGetCurrent(&ctx), "cuCtxGetCurrent");
  return ctx ? ctx : primaryContext(0);
}

CUtensorMapDataType cudaType(ElementType t) {
  switch (t) {
  case ElementType::UInt8:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  case ElementType::Float16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case ElementType::BFloat16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case ElementType::Float32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  }
  throw Error("ggc runtime: unknown element type");
}

CUtensorMapSwizzle encodedSwizzle(Swizzle s) {
  switch (s) {
  case Swizzle::None:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  case Swizzle::Bytes64:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case Swizzle::Bytes128:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  throw Error("ggc runtime: unknown swizzle");
}

/// Encoded tensor maps, by spec: the same operands at the same addresses
/// (the common case in a training or serving loop) skip the encoding.
class TensorMapCache {
public:
  /// The map of `spec`, encoded on a miss (in context `encodeIn` when
  /// given: switching contexts costs driver calls, so only an encoding
  /// pays for it).
  CUtensorMap get(const TensorMapSpec &spec, CUcontext encodeIn = nullptr) {
    std::string key = spec.key();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = maps_.find(key);
      if (it != maps_.end())
        return it->second;
    }
    spec.validate();
    std::optional<driver::ScopedContext> scope;
    if (encodeIn)
      scope.emplace(encodeIn);
    CUtensorMap map;
    cuuint64_t dims[5], strides[5];
    cuuint32_t box[5], elementStrides[5];
    for (uint32_t i = 0; i < spec.rank; ++i) {
      dims[i] = spec.dims[i];
      box[i] = spec.box[i];
      elementStrides[i] = 1;
      if (i > 0)
        strides[i - 1] = spec.strideBytes[i];
    }
    check(driver::usable().tensorMapEncodeTiled(
              &map, cudaType(spec.type), spec.rank,
              reinterpret_cast<void *>(spec.address), dims, strides, box,
              elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
              encodedSwizzle(spec.swizzle),
              CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled");
    std::lock_guard<std::mutex> lock(mutex_);
    if (maps_.size() >= kMaxEntries)
      maps_.clear(); // a loop over fresh buffers must not grow without bound
    maps_.emplace(std::move(key), map);
    return map;
  }

private:
  static constexpr size_t kMaxEntries = 4096;
  std::mutex mutex_;
  std::unordered_map<std::string, CUtensorMap> maps_;
};

TensorMapCache &tensorMaps() {
  static TensorMapCache cache;
  return cache;
}

} // namespace

//===----------------------------------------------------------------------===//
// Specs and arguments
//===----------------------------------------------------------------------===//

ElementType parseElementType(const std::string &name) {
  if (name == "uint8")
    return ElementType::UInt8;
  if (name == "float16")
    return ElementType::Float16;
  if (name == "bfloat16")
    return ElementType::BFloat16;
  if (name == "float32")
    return ElementType::Float32;
  throw Error("ggc runtime: unknown tensor map element type '" + name +
              "'; expected uint8, float16, bfloat16 or float32");
}

Swizzle parseSwizzle(const std::string &name) {
  if (name == "128B")
    return Swizzle::Bytes128;
  if (name == "64B")
    return Swizzle::Bytes64;
  if (name == "none")
    return Swizzle::None;
  throw Error("ggc runtime: unknown swizzle '" + name +
              "'; expected 128B, 64B or none");
}

int64_t elementBytes(ElementType type) {
  switch (type) {
  case ElementType::UInt8:
    return 1;
  case ElementType::Float16:
  case ElementType::BFloat16:
    return 2;
  case ElementType::Float32:
    return 4;
  }
  return 0;
}

void TensorMapSpec::validate() const {
  auto fail = [](const std::string &what) {
    throw Error("ggc runtime: invalid tensor map: " + what);
  };
  if (rank < 1 || rank > 5)
    fail("rank must be in [1, 5], got " + std::to_string(rank));
  if (address % 16 != 0)
    fail("the address must be 16-byte aligned, got " + std::to_string(address));
  int64_t innerBytes = static_cast<int64_t>(box[0]) * elementBytes(type);
  int64_t swizzleBytes = swizzle == Swizzle::Bytes128  ? 128
                         : swizzle == Swizzle::Bytes64 ? 64
                                                       : 0;
  if (swizzleBytes && innerBytes > swizzleBytes)
    fail("the innermost box dimension spans " + std::to_string(innerBytes) +
         " bytes; the " + std::to_string(swizzleBytes) +
         "B swizzle allows at most " + std::to_string(swizzleBytes));
  if (innerBytes % 16 != 0)
    fail("the innermost box dimension spans " + std::to_string(innerBytes) +
         " bytes; TMA needs a multiple of 16");
  for (uint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (uint64_t(1) << 32))
      fail("dimension " + std::to_string(i) + " must be in [1, 2^32], got " +
           std::to_string(dims[i]));
    if (box[i] == 0 || box[i] > 256)
      fail("box dimension " + std::to_string(i) + " must be in [1, 256], got " +
           std::to_string(box[i]));
    if (i > 0 && (strideBytes[i] % 16 != 0 || strideBytes[i] >= (uint64_t(1) << 40)))
      fail("the stride of dimension " + std::to_string(i) +
           " must be a multiple of 16 bytes below 2^40, got " +
           std::to_string(strideBytes[i]));
  }
}

std::string TensorMapSpec::key() const {
  // Field by field: the struct's padding bytes are not part of the identity.
  // Only `rank` entries of each array are read: a rank past them is the
  // error validate() gives, before a read past their end.
  if (rank < 1 || rank > dims.size())
    validate();
  std::string k;
  auto put = [&](const void *data, size_t size) {
    k.append(static_cast<const char *>(data), size);
  };
  put(&type, sizeof(type));
  put(&rank, sizeof(rank));
  put(dims.data(), sizeof(uint64_t) * rank);
  put(strideBytes.data(), sizeof(uint64_t) * rank);
  put(box.data(), sizeof(uint32_t) * rank);
  put(&address, sizeof(address));
  put(&swizzle, sizeof(swizzle));
  return k;
}

TensorMapSpec rowMajorTensorMap(ElementType type,
                                const std::vector<int64_t> &shape,
                                const std::vector<uint32_t> &box,
                                uint64_t address, Swizzle swizzle) {
  if (shape.size() != box.size() || shape.empty() || shape.size() > 5)
    throw Error("ggc runtime: a tensor map needs one box size per dimension "
                "(1 to 5); got a rank-" +
                std::to_string(shape.size()) + " tensor and " +
                std::to_string(box.size()) + " box sizes");
  TensorMapSpec spec;
  spec.type = type;
  spec.rank = static_cast<uint32_t>(shape.size());
  spec.address = address;
  spec.swizzle = swizzle;
  uint64_t stride = elementBytes(type);
  for (uint32_t i = 0; i < spec.rank; ++i) {
    int64_t extent = shape[spec.rank - 1 - i];
    if (extent < 0)
      throw Error("ggc runtime: negative tensor dimension");
    spec.dims[i] = static_cast<uint64_t>(extent);
    spec.strideBytes[i] = stride;
    spec.box[i] = box[i];
    stride *= static_cast<uint64_t>(extent);
  }
  return spec;
}

std::vector<size_t> parameterOffsets(const std::vector<KernelArg> &args,
                                     size_t *totalBytes) {
  std::vector<size_t> offsets;
  size_t offset = 0;
  for (const KernelArg &arg : args) {
    size_t align = arg.kind == KernelArg::Kind::TensorMap ? 64 : 8;
    size_t size = arg.kind == KernelArg::Kind::TensorMap ? 128 : 8;
    offset = (offset + align - 1) / align * align;
    offsets.push_back(offset);
    offset += size;
  }
  if (totalBytes)
    *totalBytes = offset;
  return offsets;
}

bool driverAvailable(std::string *whyNot) {
  const Driver &d = driver::loaded();
  if (whyNot)
    *whyNot = d.error;
  return d.error.empty();
}

int pointerDevice(uint64_t address) {
  if (address == 0)
    throw Error("ggc runtime: a null pointer is not device memory");
  int ordinal = -1;
  CUresult rc = driver::usable().pointerGetAttribute(
      &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      static_cast<CUdeviceptr>(address));
  if (rc != CUDA_SUCCESS || ordinal < 0)
    throw Error("ggc runtime: address " + std::to_string(address) +
                " is not CUDA device memory (cuPointerGetAttribute returned " +
                std::to_string(static_cast<int>(rc)) + ")");
  return ordinal;
}

int64_t deviceMemoryGBps(int device) {
  const Driver &d = driver::usable();
  CUdevice dev;
  check(d.deviceGet(&dev, device), "cuDeviceGet");
  int clockKHz = 0, busBits = 0;
  check(d.deviceGetAttribute(&clockKHz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
                             dev),
        "cuDeviceGetAttribute");
  check(d.deviceGetAttribute(&busBits,
                             CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev),
        "cuDeviceGetAttribute");
  // Two transfers a clock, bus bits / 8 bytes each: kHz * bytes * 2 / 1e6.
  return int64_t(clockKHz) * (busBits / 8) * 2 / 1000000;
}

void copyToHost(int device, uint64_t address, void *destination, size_t bytes,
                uint64_t stream) {
  const Driver &d = driver::usable();
  ScopedContext scope(launchContext(device));
  CUstream s = reinterpret_cast<CUstream>(stream);
  check(d.memcpyDtoHAsync(destination, static_cast<CUdeviceptr>(address),
                          bytes, s),
        "cuMemcpyDtoHAsync");
  check(d.streamSynchronize(s), "cuStreamSynchronize");
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

struct Kernel::Loaded {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
};

/// Modules per context: a kernel object may be launched on several GPUs
/// (and in contexts other than the primary ones).
struct KernelCache {
  std::mutex mutex;
  std::map<void *, Kernel::Loaded> byContext;
};

namespace {
std::atomic<bool> &dependentLaunchSwitch() {
  static std::atomic<bool> enabled = [] {
    const char *v = std::getenv("GGC_DEPENDENT_LAUNCH");
    if (!v)
      return true;
    std::string off(v);
    for (char &c : off)
      c = char(std::tolower(static_cast<unsigned char>(c)));
    return !(off == "0" || off == "off" || off == "false" || off == "no");
  }();
  return enabled;
}
} // namespace

bool dependentLaunches() { return dependentLaunchSwitch().load(); }
void setDependentLaunches(bool enabled) { dependentLaunchSwitch() = enabled; }

Kernel::Kernel(std::string image, std::string name, int sharedBytes,
               int blockThreads, int clusterSize, bool dependentLaunch)
    : image_(std::move(image)), name_(std::move(name)),
      sharedBytes_(sharedBytes), blockThreads_(blockThreads),
      clusterSize_(clusterSize), dependentLaunch_(dependentLaunch),
      cache_(std::make_unique<KernelCache>()) {
  if (clusterSize_ < 1 || clusterSize_ > 8)
    throw Error("ggc runtime: cluster size must be in [1, 8], got " +
                std::to_string(clusterSize_));
  if (image_.empty())
    throw Error("ggc runtime: kernel '" + name_ + "' has an empty image");
  if (blockThreads_ < 1 || blockThreads_ > 1024)
    throw Error("ggc runtime: block size must be in [1, 1024], got " +
                std::to_string(blockThreads_));
  if (sharedBytes_ < 0)
    throw Error("ggc runtime: shared memory size must not be negative");
}

// Unloading needs the module's context current. Errors are ignored: at
// process exit the driver may already be shut down, and a destructor must
// not throw; the driver then frees the modules itself.
Kernel::~Kernel() {
  if (!driverAvailable())
    return;
  const Driver &d = driver::loaded();
  for (auto &[context, loaded] : cache_->byContext) {
    CUcontext previous = nullptr;
    if (d.ctxGetCurrent(&previous) != CUDA_SUCCESS)
      return;
    if (d.ctxSetCurrent(static_cast<CUcontext>(context)) != CUDA_SUCCESS)
      continue;
    d.moduleUnload(loaded.module);
    d.ctxSetCurrent(previous);
  }
}

Kernel::Loaded &Kernel::loadedIn(void *context) {
  const Driver &d = driver::usable();
  std::lock_guard<std::mutex> lock(cache_->mutex);
  auto it = cache_->byContext.find(context);
  if (it != cache_->byContext.end())
    return it->second;
  ScopedContext scope(static_cast<CUcontext>(context));
  Loaded loaded;
  check(d.moduleLoadData(&loaded.module, image_.data()),
        ("loading the module of kernel '" + name_ + "'").c_str());
  check(d.moduleGetFunction(&loaded.function, loaded.module, name_.c_str()),
        ("finding kernel '" + name_ + "' in its module").c_str());
  check(d.funcSetAttribute(loaded.function,
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           sharedBytes_),
        ("allowing kernel '" + name_ + "' " + std::to_string(sharedBytes_) +
         " bytes of shared memory")
            .c_str());
  return cache_->byContext.emplace(context, loaded).first->second;
}

PreparedLaunch Kernel::prepare(int grid, const std::vector<KernelArg> &args,
                               int device) {
  if (grid < 1 || grid % clusterSize_ != 0)
    throw Error("ggc runtime: grid must be a positive multiple of the cluster "
                "size " +
                std::to_string(clusterSize_) + ", got " + std::to_string(grid));
  CUcontext context = launchContext(device);
  Loaded &loaded = loadedIn(context);
  // Tensor maps are encoded by the driver of the tensors' context.
  ScopedContext scope(context);
  size_t total = 0;
  std::vector<size_t> offsets = parameterOffsets(args, &total);
  PreparedLaunch prepared;
  if (total > sizeof(PreparedLaunch::ParameterBlock::bytes))
    throw Error("ggc runtime: kernel parameters exceed 4 KiB");
  prepared.kernel_ = this;
  prepared.context_ = context;
  prepared.function_ = loaded.function;
  prepared.grid_ = grid;
  prepared.parameters_ = std::make_shared<PreparedLaunch::ParameterBlock>();
  for (size_t i = 0; i < args.size(); ++i) {
    void *slot = prepared.parameters_->bytes + offsets[i];
    switch (args[i].kind) {
    case KernelArg::Kind::TensorMap: {
      CUtensorMap map = tensorMaps().get(args[i].tensorMap);
      std::memcpy(slot, &map, sizeof(map));
      break;
    }
    case KernelArg::Kind::Pointer:
    case KernelArg::Kind::Int64:
      std::memcpy(slot, &args[i].value, sizeof(uint64_t));
      break;
    }
    prepared.pointers_.push_back(slot);
  }
  return prepared;
}

void Kernel::launchLoaded(void *context, void *function, int grid,
                          void **parameters, uint64_t stream) const {
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(grid);
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = static_cast<unsigned>(blockThreads_);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(sharedBytes_);
  config.hStream = reinterpret_cast<CUstream>(stream);
  CUlaunchAttribute attrs[2]{};
  unsigned count = 0;
  if (clusterSize_ > 1) {
    CUlaunchAttribute &cluster = attrs[count++];
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = static_cast<unsigned>(clusterSize_);
    cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
  }
  if (dependentLaunch_ && dependentLaunches()) {
    CUlaunchAttribute &serialization = attrs[count++];
    serialization.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    serialization.value.programmaticStreamSerializationAllowed = 1;
  }
  config.attrs = count ? attrs : nullptr;
  config.numAttrs = count;
  ScopedContext scope(static_cast<CUcontext>(context));
  CUresult rc = driver::usable().launchKernelEx(
      &config, static_cast<CUfunction>(function), parameters, nullptr);
  if (rc != CUDA_SUCCESS) // the message is built only on failure
    check(rc, ("launching kernel '" + name_ + "'").c_str());
}

void PreparedLaunch::launch(uint64_t stream) const {
  if (!kernel_)
    throw Error("ggc runtime: launch of an empty PreparedLaunch");
  // The driver copies the parameters at launch.
  std::vector<void *> pointers = pointers_;
  kernel_->launchLoaded(context_, function_, grid_, pointers.data(), stream);
}

//===----------------------------------------------------------------------===//
// Launch records
//===----------------------------------------------------------------------===//

// CUDA's limit on a kernel's parameters, as PreparedLaunch's block.
constexpr size_t kMaxParameterBytes = 4096;

/// Per slot, the maps of the last kMapsPerSlot addresses it saw: a loop
/// whose outputs come from the caching allocator alternates between a few
/// buffers, and each finds its maps here without a context switch or the
/// shared cache's string key.
struct LaunchRecord::EncodedMaps {
  static constexpr size_t kMapsPerSlot = 4;
  struct Entry {
    uint64_t address = 0;
    bool valid = false;
    CUtensorMap map{};
  };
  struct SlotMaps {
    Entry entries[kMapsPerSlot];
    size_t next = 0; // the entry a new address replaces
    const CUtensorMap *find(uint64_t address) const {
      for (const Entry &e : entries)
        if (e.valid && e.address == address)
          return &e.map;
      return nullptr;
    }
    void add(uint64_t address, const CUtensorMap &map) {
      entries[next] = {address, true, map};
      next = (next + 1) % kMapsPerSlot;
    }
  };
  std::mutex mutex;
  std::vector<SlotMaps> slots;
};

LaunchRecord Kernel::record(int grid, const std::vector<KernelArg> &args,
                            const std::vector<int> &sources, int device) {
  if (sources.size() != args.size())
    throw Error("ggc runtime: a launch record needs one source per argument; "
                "got " + std::to_string(args.size()) + " arguments and " +
                std::to_string(sources.size()) + " sources");
  // prepare() checks the grid, loads the module and checks the layout.
  PreparedLaunch prepared = prepare(grid, args, device);
  size_t total = 0;
  std::vector<size_t> offsets = parameterOffsets(args, &total);
  LaunchRecord record;
  record.kernel_ = this;
  record.context_ = prepared.context_;
  record.function_ = prepared.function_;
  record.grid_ = grid;
  record.bytes_ = total;
  record.parameters_.assign(prepared.parameters_->bytes,
                            prepared.parameters_->bytes + total);
  record.maps_ = std::make_shared<LaunchRecord::EncodedMaps>();
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg &arg = args[i];
    int source = arg.kind == KernelArg::Kind::Int64 ? -1 : sources[i];
    if (arg.kind != KernelArg::Kind::Int64 && source < 0)
      throw Error("ggc runtime: argument " + std::to_string(i) +
                  " of a launch record needs a source address");
    record.addressCount_ =
        std::max(record.addressCount_, static_cast<size_t>(source + 1));
    record.slots_.push_back({arg.kind, offsets[i], source, arg.tensorMap});
    if (arg.kind == KernelArg::Kind::TensorMap) {
      // The map prepare() encoded, at the address `args` gave.
      CUtensorMap map;
      std::memcpy(&map, prepared.parameters_->bytes + offsets[i], sizeof(map));
      record.maps_->slots.emplace_back();
      record.maps_->slots.back().add(arg.tensorMap.address, map);
    } else {
      record.maps_->slots.emplace_back();
    }
  }
  return record;
}

void LaunchRecord::launch(const uint64_t *addresses, size_t count,
                          uint64_t stream) const {
  if (!kernel_)
    throw Error("ggc runtime: launch of an empty LaunchRecord");
  if (count != addressCount_)
    throw Error("ggc runtime: kernel '" + kernel_->name_ + "' takes " +
                std::to_string(addressCount_) + " addresses, got " +
                std::to_string(count));
  alignas(64) unsigned char block[kMaxParameterBytes];
  void *pointers[sizeof(block) / sizeof(uint64_t)];
  std::memcpy(block, parameters_.data(), bytes_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot &slot = slots_[i];
    void *at = block + slot.offset;
    pointers[i] = at;
    if (slot.source < 0)
      continue; // an integer, already in the block
    uint64_t address = addresses[slot.source];
    if (address % 16 != 0)
      throw Error("ggc runtime: address " + std::to_string(address) +
                  " of kernel '" + kernel_->name_ + "' argument " +
                  std::to_string(i) + " is not 16-byte aligned");
    if (slot.kind != KernelArg::Kind::TensorMap) {
      std::memcpy(at, &address, sizeof(address));
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(maps_->mutex);
      if (const CUtensorMap *known = maps_->slots[i].find(address)) {
        std::memcpy(at, known, sizeof(CUtensorMap));
        continue;
      }
    }
    // From the shared cache, or encoded in the record's context, as
    // prepare() did.
    TensorMapSpec spec = slot.spec;
    spec.address = address;
    CUtensorMap map =
        tensorMaps().get(spec, static_cast<CUcontext>(context_));
    std::memcpy(at, &map, sizeof(map));
    std::lock_guard<std::mutex> lock(maps_->mutex);
    maps_->slots[i].add(address, map);
  }
  // The driver copies the parameters at launch.
  kernel_->launchLoaded(context_, function_, grid_, pointers, stream);
}

void Kernel::launch(int grid, const std::vector<KernelArg> &args,
                    uint64_t stream, int device) {
  prepare(grid, args, device).launch(stream);
}

} // namespace ggc::runtime
