#include <spindle/ecs/commands.h>

#include <spindle/base/assert.h>
#include <spindle/jobs/job_system.h>

namespace spindle::core {

namespace {
std::atomic<std::uint64_t> g_buffers_generation{1};
thread_local std::uint64_t t_slot_generation = 0;
thread_local std::uint32_t t_slot = 0;
}  // namespace

CommandBuffers::CommandBuffers(std::uint32_t participants) {
  resize(participants);
}

void CommandBuffers::resize(std::uint32_t participants) {
  if (participants == 0) participants = 1;
  if (participants == participants_) return;
  participants_ = participants;
  generation_ = g_buffers_generation.fetch_add(1, std::memory_order_relaxed);
  next_external_.store(0, std::memory_order_relaxed);
  buffers_.clear();
  buffers_.reserve(participants + kExternalSlots);
  for (std::uint32_t i = 0; i < participants; ++i) buffers_.emplace_back();
  // External slots start small: only the tbb reference mode uses them.
  for (std::uint32_t i = 0; i < kExternalSlots; ++i) buffers_.emplace_back(64, 1024);
}

std::uint32_t CommandBuffers::slot(const jobs::JobSystem& jobs) {
  const std::uint32_t worker = jobs.current_worker();
  if (worker < participants_) return worker;
  if (t_slot_generation != generation_) {
    const std::uint32_t n = next_external_.fetch_add(1, std::memory_order_relaxed);
    SPINDLE_ASSERTF(n < kExternalSlots, "at most %u non-participant threads record commands",
                    static_cast<unsigned>(kExternalSlots));
    t_slot = participants_ + n;
    t_slot_generation = generation_;
  }
  return t_slot;
}

}  // namespace spindle::core
