// VulkanBackend::init / execute. init: checks the record (dataflow, then
// every prepacked operand's constness), plans each op (vulkan_ops.h),
// places every value and prepacked weight in one of two buffers allocated
// once — device memory for weights and intermediates, host-visible memory
// for the delegate's runtime inputs and outputs — uploads the constants
// through a staging buffer, and records the one command buffer every call
// submits. Destroying the handle releases all of it.
#include <cstring>
#include <mutex>

#include "lathe/analysis/constness.h"
#include "lathe/backends/payload.h"
#include "lathe/backends/prepacked.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/vulkan/vulkan_device.h"
#include "lathe/backends/vulkan/vulkan_ops.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

constexpr uint64_t kFenceTimeoutNs = 600ull * 1000 * 1000 * 1000;
enum Pool : int { kDevice = 0, kHost = 1 };

struct Region {
  Pool pool = kDevice;
  VkDeviceSize offset = 0, size = 0;
};

struct Memory {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

// A memory type allowed by `bits` with every flag in `need`; the first also
// having `want` if there is one.
Result<uint32_t> memory_type(const VkPhysicalDeviceMemoryProperties& m, uint32_t bits, VkMemoryPropertyFlags need, VkMemoryPropertyFlags want) {
  int found = -1;
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = m.memoryTypes[i].propertyFlags;
    if (!(bits & (1u << i)) || (f & need) != need) continue;
    if ((f & want) == want) return i;
    if (found < 0) found = static_cast<int>(i);
  }
  if (found < 0) return Error("vulkan: the device has no memory type with the properties this buffer needs");
  return static_cast<uint32_t>(found);
}

class VulkanHandle final : public DelegateHandle {
 public:
  ~VulkanHandle() override;
  Status init(const DelegateInitArgs& args);
  Status execute(KernelCall& call) override;

 private:
  Status check(const DelegateInitArgs& args);
  Status plan(const DelegateInitArgs& args);
  VkDeviceSize place(Pool pool, int64_t numel);
  void place_values(const DelegateInitArgs& args);
  Result<Memory> create_memory(VkDeviceSize size, VkBufferUsageFlags usage, bool host);
  Status allocate();
  Status upload(const DelegateInitArgs& args);
  Status write_descriptors();
  Status record();
  VkDescriptorBufferInfo info(const VulkanSlot& slot, size_t op) const;
  Status run_once(VkCommandBuffer cb);

  std::shared_ptr<VulkanContext> ctx_;
  DelegatePayload payload_;
  std::vector<VulkanOpPlan> plans_;
  std::vector<bool> constant_;          // per value: a delegate input bound to a compile-time constant
  std::vector<bool> read_raw_;          // per value: read by a shader as itself (not only prepacked)
  std::vector<int> region_of_;          // per value: index into regions_, or -1 (not on the device)
  std::vector<std::vector<int>> packed_region_;  // per op, per prepacked weight
  std::vector<std::pair<int, int>> output_copies_;  // (from, to) regions: outputs that alias a device buffer
  std::vector<int> output_region_;      // per payload output
  std::vector<Region> regions_;
  int dummy_ = -1;                      // bound where a shader has no operand
  VkDeviceSize align_ = 256;
  Memory pools_[2];
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets_;   // per dispatch, in order
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool pending_ = false;                // submitted, not yet waited for
  std::mutex mu_;                       // one call at a time: the buffers are the handle's
};

VulkanHandle::~VulkanHandle() {
  if (!ctx_) return;
  VkDevice d = ctx_->device();
  if (fence_) {
    if (pending_) vkWaitForFences(d, 1, &fence_, VK_TRUE, kFenceTimeoutNs);  // a wait that failed: the work may still run
    vkDestroyFence(d, fence_, nullptr);
  }
  if (command_pool_) vkDestroyCommandPool(d, command_pool_, nullptr);
  if (descriptor_pool_) vkDestroyDescriptorPool(d, descriptor_pool_, nullptr);
  for (Memory& m : pools_) {
    if (m.buffer) vkDestroyBuffer(d, m.buffer, nullptr);
    if (m.memory) vkFreeMemory(d, m.memory, nullptr);
  }
}

// The record's dataflow, then (soundness first, before any weight is read)
// every prepacked operand: a compile-time constant of the program.
Status VulkanHandle::check(const DelegateInitArgs& args) {
  LATHE_ASSIGN_OR_RETURN(payload_, decode_payload(args.payload));
  if (payload_.backend != "vulkan") return Error("vulkan: the payload is for backend '" + payload_.backend + "'");
  Status flow = check_payload_dataflow(payload_, args.operands.size(), args.node.defined_values().size());
  if (!flow.ok()) return flow.error().context("vulkan");
  for (size_t i = 0; i < payload_.values.size(); ++i) {
    if (payload_.values[i].numel() >= (int64_t{1} << 31) / 4)
      return Error("vulkan: value " + std::to_string(i) + " " + shape_string(payload_.values[i].sizes) + " is too large for 32-bit indexing");
  }
  for (const PayloadOp& op : payload_.ops) {
    for (const PayloadOperand& o : op.inputs) {
      const std::optional<VulkanKind> kind = vulkan_kind_named(op.kind);
      if (!kind || !vulkan_prepacked_role(*kind, o.role)) continue;  // an unknown kind fails in plan_vulkan_op
      LATHE_RETURN_IF_ERROR(check_prepacked_operand(args, payload_, o, "vulkan", op.kind + " '" + op.node + "'", "the Vulkan backend"));
    }
  }
  const Constness constness(args.program);
  constant_.assign(payload_.values.size(), false);
  for (size_t i = 0; i < payload_.values.size(); ++i) {
    const int32_t k = payload_.values[i].input;
    if (k < 0) continue;
    const DelegateOperand& d = args.operands[k];
    constant_[i] = d.state && d.value && constness.is_compile_time_constant(d.value);
  }
  return Status::Ok();
}

Status VulkanHandle::plan(const DelegateInitArgs& args) {
  read_raw_.assign(payload_.values.size(), false);
  for (const PayloadOp& op : payload_.ops) {
    const std::string label = op.kind + " '" + op.node + "'";
    VulkanPrepackReader read = [&](uint32_t v, int64_t numel, std::string_view role) {
      return prepacked_floats(args, payload_, v, numel, label, role);
    };
    auto p = plan_vulkan_op(op, payload_.values, read);
    if (!p.ok()) return p.error().context("vulkan");
    for (const VulkanDispatch& d : p->dispatches) {
      for (const VulkanSlot& s : d.bind) {
        if (s.kind == VulkanSlot::Value) read_raw_[s.index] = true;
      }
    }
    if (p->alias) read_raw_[*p->alias] = true;
    plans_.push_back(std::move(p).value());
  }
  return Status::Ok();
}

VkDeviceSize VulkanHandle::place(Pool pool, int64_t numel) {
  Memory& m = pools_[pool];
  const VkDeviceSize size = std::max<VkDeviceSize>(16, static_cast<VkDeviceSize>(numel) * 4);
  regions_.push_back(Region{pool, m.size, size});
  m.size += (size + align_ - 1) / align_ * align_;
  return static_cast<VkDeviceSize>(regions_.size() - 1);
}

// Runtime inputs and outputs in host-visible memory; weights, constants
// and intermediates on the device; a view shares its input's region.
void VulkanHandle::place_values(const DelegateInitArgs& args) {
  const size_t n = payload_.values.size();
  region_of_.assign(n, -1);
  std::vector<bool> is_output(n, false);
  for (uint32_t o : payload_.outputs) is_output[o] = true;
  for (size_t i = 0; i < n; ++i) {
    const PayloadValue& v = payload_.values[i];
    if (v.input >= 0 && read_raw_[i]) region_of_[i] = static_cast<int>(place(constant_[i] ? kDevice : kHost, v.numel()));
  }
  for (size_t k = 0; k < payload_.ops.size(); ++k) {
    const uint32_t out = payload_.ops[k].outputs[0];
    if (plans_[k].alias) region_of_[out] = region_of_[*plans_[k].alias];
    else region_of_[out] = static_cast<int>(place(is_output[out] ? kHost : kDevice, payload_.values[out].numel()));
    packed_region_.emplace_back();
    for (const std::vector<float>& w : plans_[k].packed) packed_region_.back().push_back(static_cast<int>(place(kDevice, static_cast<int64_t>(w.size()))));
  }
  for (uint32_t o : payload_.outputs) {
    int r = region_of_[o];
    if (regions_[r].pool != kHost) {  // a view of a device buffer leaves through a copy
      const int to = static_cast<int>(place(kHost, payload_.values[o].numel()));
      output_copies_.push_back({r, to});
      r = to;
    }
    output_region_.push_back(r);
  }
  dummy_ = static_cast<int>(place(kDevice, 4));
  (void)args;
}

Result<Memory> VulkanHandle::create_memory(VkDeviceSize size, VkBufferUsageFlags usage, bool host) {
  VkDevice d = ctx_->device();
  Memory m;
  m.size = std::max<VkDeviceSize>(size, 16);
  auto info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = m.size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  LATHE_VK(vkCreateBuffer(d, &info, nullptr, &m.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(d, m.buffer, &req);
  const VkMemoryPropertyFlags need = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0;
  const VkMemoryPropertyFlags want = host ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  auto type = memory_type(ctx_->memory(), req.memoryTypeBits, need, want);
  if (!type.ok()) {
    vkDestroyBuffer(d, m.buffer, nullptr);
    return type.error();
  }
  auto alloc = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = *type;
  VkResult r = vkAllocateMemory(d, &alloc, nullptr, &m.memory);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(d, m.buffer, m.memory, 0);
  if (r == VK_SUCCESS && host) r = vkMapMemory(d, m.memory, 0, VK_WHOLE_SIZE, 0, &m.mapped);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(d, m.buffer, nullptr);
    if (m.memory) vkFreeMemory(d, m.memory, nullptr);
    return vulkan_error("allocating " + std::to_string(m.size) + " bytes of " + (host ? "host-visible" : "device") + " memory", r);
  }
  return m;
}

Status VulkanHandle::allocate() {
  const VkDeviceSize range = ctx_->properties().limits.maxStorageBufferRange;
  for (const Region& r : regions_) {
    if (r.size > range) return Error("vulkan: a tensor of " + std::to_string(r.size) + " bytes exceeds the device's storage buffer range (" + std::to_string(range) + ")");
  }
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  LATHE_ASSIGN_OR_RETURN(pools_[kDevice], create_memory(pools_[kDevice].size, usage, false));
  LATHE_ASSIGN_OR_RETURN(pools_[kHost], create_memory(pools_[kHost].size, usage, true));
  auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.queueFamilyIndex = ctx_->queue_family();
  LATHE_VK(vkCreateCommandPool(ctx_->device(), &pool, nullptr, &command_pool_));
  auto fence = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  LATHE_VK(vkCreateFence(ctx_->device(), &fence, nullptr, &fence_));
  return Status::Ok();
}

// Submits `cb` and waits for it (the handle's fence).
Status VulkanHandle::run_once(VkCommandBuffer cb) {
  VkDevice d = ctx_->device();
  LATHE_VK(vkResetFences(d, 1, &fence_));
  LATHE_RETURN_IF_ERROR(ctx_->submit(cb, fence_));
  pending_ = true;
  VkResult r = vkWaitForFences(d, 1, &fence_, VK_TRUE, kFenceTimeoutNs);
  if (r != VK_SUCCESS) return vulkan_error("vkWaitForFences", r);
  pending_ = false;
  return Status::Ok();
}

// Prepacked weights and constant operands, once: written to a staging
// buffer, copied to device memory by one command buffer, staging freed.
Status VulkanHandle::upload(const DelegateInitArgs& args) {
  struct Item {
    int region;
    const float* data;
    size_t bytes;
  };
  std::vector<Item> items;
  std::vector<Tensor> keep;
  for (size_t k = 0; k < plans_.size(); ++k) {
    for (size_t j = 0; j < plans_[k].packed.size(); ++j)
      items.push_back({packed_region_[k][j], plans_[k].packed[j].data(), plans_[k].packed[j].size() * 4});
  }
  for (size_t i = 0; i < payload_.values.size(); ++i) {
    if (!constant_[i] || region_of_[i] < 0) continue;
    const Tensor& t = *args.operands[payload_.values[i].input].state;
    if (t.dtype != DType::Float32 || t.numel() != payload_.values[i].numel())
      return Error("vulkan: constant input " + std::to_string(payload_.values[i].input) + " is " + std::string(dtype_name(t.dtype)) + " " +
                   shape_string(t.sizes) + ", expected float32 " + shape_string(payload_.values[i].sizes));
    LATHE_RETURN_IF_ERROR(t.check_fits());
    keep.push_back(t.is_contiguous() ? t : kernels::contiguous_copy(t));
    items.push_back({region_of_[i], reinterpret_cast<const float*>(keep.back().data()), static_cast<size_t>(t.numel()) * 4});
  }
  if (items.empty()) return Status::Ok();
  VkDeviceSize total = 0;
  for (const Item& it : items) total += it.bytes;
  LATHE_ASSIGN_OR_RETURN(Memory staging, create_memory(total, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true));
  std::vector<VkBufferCopy> copies;
  VkDeviceSize at = 0;
  for (const Item& it : items) {
    if (it.bytes == 0) continue;
    std::memcpy(static_cast<char*>(staging.mapped) + at, it.data, it.bytes);
    copies.push_back(VkBufferCopy{at, regions_[it.region].offset, it.bytes});
    at += it.bytes;
  }
  auto alloc = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = command_pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  const VkResult ar = vkAllocateCommandBuffers(ctx_->device(), &alloc, &cb);
  Status s = ar == VK_SUCCESS ? Status::Ok() : Status(vulkan_error("vkAllocateCommandBuffers", ar));
  if (ar == VK_SUCCESS && !copies.empty()) {
    auto begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &begin);
    vkCmdCopyBuffer(cb, staging.buffer, pools_[kDevice].buffer, static_cast<uint32_t>(copies.size()), copies.data());
    VkResult r = vkEndCommandBuffer(cb);
    s = r == VK_SUCCESS ? run_once(cb) : Status(vulkan_error("vkEndCommandBuffer", r));
  }
  if (cb) vkFreeCommandBuffers(ctx_->device(), command_pool_, 1, &cb);
  vkDestroyBuffer(ctx_->device(), staging.buffer, nullptr);
  vkFreeMemory(ctx_->device(), staging.memory, nullptr);
  return s;
}

VkDescriptorBufferInfo VulkanHandle::info(const VulkanSlot& slot, size_t op) const {
  int r = dummy_;
  if (slot.kind == VulkanSlot::Value) r = region_of_[slot.index];
  if (slot.kind == VulkanSlot::Packed) r = packed_region_[op][slot.index];
  const Region& g = regions_[r];
  return VkDescriptorBufferInfo{pools_[g.pool].buffer, g.offset, g.size};
}

// One descriptor set per dispatch, written once: the buffers never move.
Status VulkanHandle::write_descriptors() {
  uint32_t count = 0;
  for (const VulkanOpPlan& p : plans_) count += static_cast<uint32_t>(p.dispatches.size());
  if (count == 0) return Status::Ok();
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, count * kVulkanBindings};
  auto pool = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  pool.maxSets = count;
  pool.poolSizeCount = 1;
  pool.pPoolSizes = &size;
  LATHE_VK(vkCreateDescriptorPool(ctx_->device(), &pool, nullptr, &descriptor_pool_));
  std::vector<VkDescriptorSetLayout> layouts(count, ctx_->set_layout());
  auto alloc = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  alloc.descriptorPool = descriptor_pool_;
  alloc.descriptorSetCount = count;
  alloc.pSetLayouts = layouts.data();
  sets_.resize(count);
  LATHE_VK(vkAllocateDescriptorSets(ctx_->device(), &alloc, sets_.data()));
  size_t k = 0;
  for (size_t op = 0; op < plans_.size(); ++op) {
    for (const VulkanDispatch& d : plans_[op].dispatches) {
      std::array<VkDescriptorBufferInfo, kVulkanBindings> infos;
      std::array<VkWriteDescriptorSet, kVulkanBindings> writes{};
      for (uint32_t b = 0; b < kVulkanBindings; ++b) {
        infos[b] = info(d.bind[b], op);
        writes[b] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
        writes[b].dstSet = sets_[k];
        writes[b].dstBinding = b;
        writes[b].descriptorCount = 1;
        writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[b].pBufferInfo = &infos[b];
      }
      vkUpdateDescriptorSets(ctx_->device(), kVulkanBindings, writes.data(), 0, nullptr);
      ++k;
    }
  }
  return Status::Ok();
}

void barrier(VkCommandBuffer cb, VkPipelineStageFlags from, VkAccessFlags write, VkPipelineStageFlags to, VkAccessFlags read) {
  auto b = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = write;
  b.dstAccessMask = read;
  vkCmdPipelineBarrier(cb, from, to, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// The command buffer every call submits: each dispatch in payload order,
// a barrier after each (the next may read what it wrote), the copies of
// outputs that are views of device buffers, and a barrier for the host.
Status VulkanHandle::record() {
  auto alloc = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = command_pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  LATHE_VK(vkAllocateCommandBuffers(ctx_->device(), &alloc, &cb_));
  auto begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  LATHE_VK(vkBeginCommandBuffer(cb_, &begin));
  const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, transfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  size_t k = 0;
  for (const VulkanOpPlan& p : plans_) {
    for (const VulkanDispatch& d : p.dispatches) {
      LATHE_ASSIGN_OR_RETURN(VkPipeline pipeline, ctx_->pipeline(d.shader));
      vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
      vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, ctx_->pipeline_layout(), 0, 1, &sets_[k++], 0, nullptr);
      vkCmdPushConstants(cb_, ctx_->pipeline_layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, kVulkanPushWords * 4, d.push.data());
      vkCmdDispatch(cb_, d.groups, 1, 1);
      barrier(cb_, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
  }
  if (!output_copies_.empty()) {
    barrier(cb_, compute, VK_ACCESS_SHADER_WRITE_BIT, transfer, VK_ACCESS_TRANSFER_READ_BIT);
    for (const auto& [from, to] : output_copies_) {
      const Region &a = regions_[from], &b = regions_[to];
      VkBufferCopy c{a.offset, b.offset, std::min(a.size, b.size)};
      vkCmdCopyBuffer(cb_, pools_[a.pool].buffer, pools_[b.pool].buffer, 1, &c);
    }
  }
  barrier(cb_, compute | transfer, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
  LATHE_VK(vkEndCommandBuffer(cb_));
  return Status::Ok();
}

Status VulkanHandle::init(const DelegateInitArgs& args) {
  LATHE_ASSIGN_OR_RETURN(ctx_, VulkanContext::shared());
  align_ = std::max<VkDeviceSize>(16, ctx_->properties().limits.minStorageBufferOffsetAlignment);
  LATHE_RETURN_IF_ERROR(check(args));
  LATHE_RETURN_IF_ERROR(plan(args));
  place_values(args);
  LATHE_RETURN_IF_ERROR(allocate());
  LATHE_RETURN_IF_ERROR(upload(args));
  for (VulkanOpPlan& p : plans_) p.packed = {};  // on the device now
  LATHE_RETURN_IF_ERROR(write_descriptors());
  return record();
}

// Inputs in, the recorded command buffer once, outputs out.
Status VulkanHandle::execute(KernelCall& call) {
  std::lock_guard<std::mutex> lock(mu_);
  LATHE_ASSIGN_OR_RETURN(std::vector<const Tensor*> ins, call.tensor_list("inputs"));
  char* host = static_cast<char*>(pools_[kHost].mapped);
  for (size_t i = 0; i < payload_.values.size(); ++i) {
    const PayloadValue& v = payload_.values[i];
    if (v.input < 0 || constant_[i] || region_of_[i] < 0) continue;
    if (static_cast<size_t>(v.input) >= ins.size()) return Error("vulkan: the node passes " + std::to_string(ins.size()) + " inputs");
    const Tensor* t = ins[v.input];
    if (t->dtype != DType::Float32 || t->numel() != v.numel()) {
      return Error("vulkan: input " + std::to_string(v.input) + " is " + std::string(dtype_name(t->dtype)) + " " + shape_string(t->sizes) +
                   ", expected float32 " + shape_string(v.sizes));
    }
    Tensor c = t->is_contiguous() ? *t : kernels::contiguous_copy(*t);
    std::memcpy(host + regions_[region_of_[i]].offset, c.data(), static_cast<size_t>(v.numel()) * 4);
  }
  LATHE_RETURN_IF_ERROR(run_once(cb_));
  for (size_t k = 0; k < payload_.outputs.size(); ++k) {
    const PayloadValue& v = payload_.values[payload_.outputs[k]];
    LATHE_ASSIGN_OR_RETURN(Tensor * out, call.alloc_output(k, DType::Float32, v.sizes));
    std::memcpy(kernels::mdata<float>(*out), host + regions_[output_region_[k]].offset, static_cast<size_t>(v.numel()) * 4);
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<DelegateHandle>> VulkanBackend::init(const DelegateInitArgs& args) const {
  return init_handle<VulkanHandle>(args);
}

}  // namespace lathe
