#include <spindle/anim/soa_pose.h>

#include <spindle/base/assert.h>

namespace spindle::anim {

void to_soa(std::span<const JointTransform> in, std::span<SoaTransform> out) {
  SPINDLE_ASSERTF(out.size() == soa_count(in.size()), "to_soa: %zu entries for %zu joints",
                  out.size(), in.size());
  for (std::size_t e = 0; e < out.size(); ++e)
    for (int lane = 0; lane < 4; ++lane) {
      const std::size_t j = 4 * e + static_cast<std::size_t>(lane);
      out[e].set(lane, j < in.size() ? in[j] : JointTransform{});
    }
}

void from_soa(std::span<const SoaTransform> in, std::span<JointTransform> out) {
  SPINDLE_ASSERTF(in.size() >= soa_count(out.size()), "from_soa: %zu entries for %zu joints",
                  in.size(), out.size());
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = in[j / 4].get(static_cast<int>(j % 4));
}

}  // namespace spindle::anim
