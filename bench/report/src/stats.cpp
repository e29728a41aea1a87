// Statistics for load-test reports; the methods are documented in report.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "spindle/report/report.h"

namespace spindle::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::uint64_t kBootstrapSeed = 0x5b1dd1e5eed2024ULL;
constexpr int kBootstrapResamples = 2000;

std::vector<double> finite_sorted(std::span<const double> samples, std::size_t* dropped = nullptr) {
  std::vector<double> v;
  v.reserve(samples.size());
  for (double x : samples)
    if (std::isfinite(x)) v.push_back(x);
  if (dropped) *dropped = samples.size() - v.size();
  std::sort(v.begin(), v.end());
  return v;
}

double sorted_quantile(const std::vector<double>& s, double q) {
  if (s.empty()) return kNaN;
  const double h = std::clamp(q, 0.0, 1.0) * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = h - static_cast<double>(lo);
  return s[lo] + frac * (s[hi] - s[lo]);
}

// Median of v (reordered in place); v is not empty.
double median_inplace(std::vector<double>& v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + 0.5 * (upper - lower);
}

}  // namespace

double quantile(std::span<const double> samples, double q) {
  return sorted_quantile(finite_sorted(samples), q);
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  std::vector<double> v = finite_sorted(samples, &s.dropped);
  s.n = v.size();
  if (v.empty()) {
    s.median = s.mean = s.p95 = s.p99 = s.stddev = s.ci95_low = s.ci95_high = kNaN;
    return s;
  }
  const double n = static_cast<double>(v.size());
  s.median = sorted_quantile(v, 0.5);
  s.p95 = sorted_quantile(v, 0.95);
  s.p99 = sorted_quantile(v, 0.99);
  // Two-pass mean and variance; scale by the largest magnitude so huge values cannot overflow.
  const double scale = std::max(std::abs(v.front()), std::abs(v.back()));
  const double k = scale > 0 ? scale : 1.0;
  double sum = 0;
  for (double x : v) sum += x / k;
  const double mean_scaled = sum / n;
  s.mean = mean_scaled * k;
  if (v.size() >= 2) {
    double ss = 0;
    for (double x : v) ss += (x / k - mean_scaled) * (x / k - mean_scaled);
    s.stddev = std::sqrt(ss / (n - 1)) * k;
  } else {
    s.stddev = kNaN;
  }
  const double half = 1.96 * std::sqrt(n) / 2;
  const double lo_rank = std::clamp(std::floor(n / 2 - half), 1.0, n);
  const double hi_rank = std::clamp(std::ceil(1 + n / 2 + half), 1.0, n);
  s.ci95_low = v[static_cast<std::size_t>(lo_rank) - 1];
  s.ci95_high = v[static_cast<std::size_t>(hi_rank) - 1];
  return s;
}

RankSum rank_sum_test(std::span<const double> a, std::span<const double> b) {
  std::vector<double> fa = finite_sorted(a), fb = finite_sorted(b);
  if (fa.empty() || fb.empty()) return {kNaN, kNaN, kNaN};
  // Pool with the sample each value came from, sort, give tied runs their average rank.
  std::vector<std::pair<double, bool>> all;  // (value, from a)
  all.reserve(fa.size() + fb.size());
  for (double x : fa) all.emplace_back(x, true);
  for (double x : fb) all.emplace_back(x, false);
  std::sort(all.begin(), all.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  const double n1 = static_cast<double>(fa.size()), n2 = static_cast<double>(fb.size());
  const double n = n1 + n2;
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second) rank_sum_a += avg_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  RankSum r;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mu = n1 * n2 / 2;
  const double var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(var > 0)) {  // every value tied: no evidence of a difference
    r.z = 0;
    r.p_two_sided = 1;
    return r;
  }
  r.z = (r.u - mu) / std::sqrt(var);
  r.p_two_sided = std::min(1.0, std::erfc(std::abs(r.z) / std::sqrt(2.0)));
  return r;
}

Speedup speedup(std::span<const double> baseline, std::span<const double> other) {
  std::vector<double> fb = finite_sorted(baseline), fo = finite_sorted(other);
  if (fb.empty() || fo.empty()) return {kNaN, kNaN, kNaN};
  Speedup s;
  s.ratio = sorted_quantile(fb, 0.5) / sorted_quantile(fo, 0.5);
  // Resample indices with rng() % n: deterministic on every standard library (unlike
  // std::uniform_int_distribution); the modulo bias is negligible for n << 2^64.
  std::mt19937_64 rng(kBootstrapSeed);
  std::vector<double> ratios, rb(fb.size()), ro(fo.size());
  ratios.reserve(kBootstrapResamples);
  for (int i = 0; i < kBootstrapResamples; ++i) {
    for (double& x : rb) x = fb[rng() % fb.size()];
    for (double& x : ro) x = fo[rng() % fo.size()];
    const double r = median_inplace(rb) / median_inplace(ro);
    if (!std::isnan(r)) ratios.push_back(r);
  }
  std::sort(ratios.begin(), ratios.end());
  s.ci95_low = sorted_quantile(ratios, 0.025);
  s.ci95_high = sorted_quantile(ratios, 0.975);
  return s;
}

}  // namespace spindle::report
