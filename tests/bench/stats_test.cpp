// Statistics of spindle::report against hand-computed values.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "spindle/report/report.h"

namespace sr = spindle::report;

TEST(ReportStats, SummaryMatchesHandComputedValues) {
  // Sorted: 1 2 3 4 10. Median 3; mean 4; sample variance (9+4+1+0+36)/4 = 12.5.
  const std::vector<double> v = {4, 1, 10, 3, 2};
  const sr::Summary s = sr::summarize(v);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 4);
  EXPECT_NEAR(s.stddev, std::sqrt(12.5), 1e-12);
  // p95: h = 0.95*4 = 3.8 -> 4 + 0.8*(10-4) = 8.8; p99: h = 3.96 -> 4 + 0.96*6 = 9.76.
  EXPECT_NEAR(s.p95, 8.8, 1e-12);
  EXPECT_NEAR(s.p99, 9.76, 1e-12);
  EXPECT_EQ(s.dropped, 0u);
}

TEST(ReportStats, EvenCountMedianAndQuantileInterpolate) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(sr::summarize(v).median, 2.5);
  EXPECT_DOUBLE_EQ(sr::quantile(v, 0.25), 1.75);  // h = 0.75
  EXPECT_DOUBLE_EQ(sr::quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(sr::quantile(v, 1.0), 4);
}

TEST(ReportStats, EmptyAndNonFiniteInputs) {
  const sr::Summary e = sr::summarize({});
  EXPECT_EQ(e.n, 0u);
  EXPECT_TRUE(std::isnan(e.median));
  EXPECT_TRUE(std::isnan(e.ci95_low));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {nan, 1, inf, 3, -inf, 2};
  const sr::Summary s = sr::summarize(v);
  EXPECT_EQ(s.n, 3u);
  EXPECT_EQ(s.dropped, 3u);
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_TRUE(std::isnan(sr::summarize(std::vector<double>{5}).stddev));
  const sr::RankSum r = sr::rank_sum_test({}, v);
  EXPECT_TRUE(std::isnan(r.p_two_sided));
  EXPECT_TRUE(std::isnan(sr::speedup(v, {}).ratio));
}

TEST(ReportStats, MedianConfidenceIntervalContainsMedianAndNarrows) {
  // n = 100: ranks floor(50 - 9.8) = 40 and ceil(1 + 50 + 9.8) = 61 of 1..100.
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  const sr::Summary s = sr::summarize(v);
  EXPECT_DOUBLE_EQ(s.ci95_low, 40);
  EXPECT_DOUBLE_EQ(s.ci95_high, 61);
  double last_width = 1e300;
  for (int n : {10, 100, 1000, 10000}) {
    std::vector<double> w;
    for (int i = 0; i < n; ++i) w.push_back(std::sin(i * 12.9898) * 5 + 10);  // spread 5..15
    const sr::Summary t = sr::summarize(w);
    EXPECT_LE(t.ci95_low, t.median);
    EXPECT_GE(t.ci95_high, t.median);
    const double width = t.ci95_high - t.ci95_low;
    EXPECT_LT(width, last_width) << n;
    last_width = width;
  }
  const sr::Summary one = sr::summarize(std::vector<double>{7});
  EXPECT_DOUBLE_EQ(one.ci95_low, 7);
  EXPECT_DOUBLE_EQ(one.ci95_high, 7);
}

TEST(ReportStats, RankSumHandComputedSmallExample) {
  // a = {1, 2, 4}, b = {3, 5, 6, 7}: ranks of a are 1, 2, 4 -> R = 7, U = 7 - 6 = 1.
  // mu = 6, var = 3*4*8/12 = 8, z = -5/sqrt(8) = -1.76777, p = erfc(1.76777/sqrt2) = 0.077100.
  const std::vector<double> a = {1, 2, 4}, b = {3, 5, 6, 7};
  const sr::RankSum r = sr::rank_sum_test(a, b);
  EXPECT_DOUBLE_EQ(r.u, 1);
  EXPECT_NEAR(r.z, -5 / std::sqrt(8.0), 1e-12);
  EXPECT_NEAR(r.p_two_sided, 0.077100, 1e-5);
  // Symmetric: swapping the samples flips z, keeps p; U' = n1*n2 - U.
  const sr::RankSum s = sr::rank_sum_test(b, a);
  EXPECT_DOUBLE_EQ(s.u, 11);
  EXPECT_NEAR(s.p_two_sided, r.p_two_sided, 1e-12);
}

TEST(ReportStats, RankSumWithTies) {
  // a = {1, 2, 2}, b = {2, 3}: the three 2s share rank 3. R_a = 1 + 3 + 3 = 7, U = 1.
  // mu = 3; tie term t^3 - t = 24; var = 6/12 * (6 - 24/20) = 2.4; z = -2/sqrt(2.4).
  const std::vector<double> a = {1, 2, 2}, b = {2, 3};
  const sr::RankSum r = sr::rank_sum_test(a, b);
  EXPECT_DOUBLE_EQ(r.u, 1);
  EXPECT_NEAR(r.z, -2 / std::sqrt(2.4), 1e-12);
  EXPECT_NEAR(r.p_two_sided, std::erfc(2 / std::sqrt(2.4) / std::sqrt(2.0)), 1e-12);
}

TEST(ReportStats, RankSumTextbookValue) {
  // Completely separated samples of 10 and 10: U = 0, z = -50/sqrt(175) = -3.7796,
  // the textbook two-sided normal-approximation p = 1.57e-4.
  std::vector<double> a, b;
  for (int i = 0; i < 10; ++i) a.push_back(i), b.push_back(100 + i);
  const sr::RankSum r = sr::rank_sum_test(a, b);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.z, -3.7796, 1e-4);
  EXPECT_NEAR(r.p_two_sided, 1.57e-4, 0.01e-4);
}

TEST(ReportStats, RankSumIdenticalAndSeparated) {
  std::vector<double> a, far;
  for (int i = 0; i < 200; ++i) a.push_back(10 + (i % 17) * 0.1), far.push_back(50 + (i % 13));
  EXPECT_NEAR(sr::rank_sum_test(a, a).p_two_sided, 1.0, 1e-9);
  const std::vector<double> same(20, 3.0);
  EXPECT_DOUBLE_EQ(sr::rank_sum_test(same, same).p_two_sided, 1.0);
  EXPECT_LT(sr::rank_sum_test(a, far).p_two_sided, 1e-20);
}

TEST(ReportStats, SpeedupOfTwiceAsFastDataIsTwoWithDeterministicCi) {
  std::vector<double> base, fast;
  for (int i = 0; i < 300; ++i) {
    const double x = 20 + 4 * std::sin(i * 0.37) + (i % 7) * 0.3;
    base.push_back(x);
    fast.push_back(x / 2);
  }
  const sr::Speedup s = sr::speedup(base, fast);
  EXPECT_NEAR(s.ratio, 2.0, 1e-12);
  EXPECT_LE(s.ci95_low, 2.0);
  EXPECT_GE(s.ci95_high, 2.0);
  EXPECT_GT(s.ci95_low, 1.7);
  EXPECT_LT(s.ci95_high, 2.3);
  const sr::Speedup again = sr::speedup(base, fast);
  EXPECT_EQ(again.ci95_low, s.ci95_low);
  EXPECT_EQ(again.ci95_high, s.ci95_high);
}
