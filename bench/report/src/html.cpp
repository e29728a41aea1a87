// report.html: one self-contained page, inline SVG charts drawn here (no scripts, no fonts).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <filesystem>

#include "model.h"

namespace spindle::report::detail {
namespace {

// ---- drawing helpers ----

std::string num(double v) {  // coordinates: 1 decimal, locale-independent
  if (!std::isfinite(v)) v = 0;
  return fixed(std::clamp(v, -1e6, 1e6), 1);
}

struct Svg {
  std::string out;
  void line(double x1, double y1, double x2, double y2, const std::string& color, double w = 1,
            const char* extra = "") {
    out += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
           num(y2) + "\" stroke=\"" + color + "\" stroke-width=\"" + num(w) + "\"" + extra + "/>\n";
  }
  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& stroke = "none") {
    out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, w)) +
           "\" height=\"" + num(std::max(0.0, h)) + "\" fill=\"" + fill + "\" stroke=\"" + stroke +
           "\"/>\n";
  }
  void circle(double x, double y, double r, const std::string& fill) {
    out += "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\" fill=\"" +
           fill + "\"/>\n";
  }
  void text(double x, double y, std::string_view s, const char* anchor = "start",
            const char* extra = "") {
    out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" +
           extra + ">" + html_escape(s) + "</text>\n";
  }
  void polyline(const std::vector<std::pair<double, double>>& pts, const std::string& color,
                double w = 2) {
    if (pts.size() < 2) return;
    out += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" + num(w) +
           "\" points=\"";
    for (const auto& [x, y] : pts) out += num(x) + "," + num(y) + " ";
    out += "\"/>\n";
  }
};

struct Linear {
  double d0, d1, r0, r1;
  double operator()(double v) const {
    if (d1 == d0) return (r0 + r1) / 2;
    return r0 + (v - d0) / (d1 - d0) * (r1 - r0);
  }
};

// About `target` round tick values covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target = 5) {
  std::vector<double> t;
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo) return {lo};
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9 && t.size() < 50; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

// Upper end of a y axis starting at 0.
double y_max(double v) {
  return std::isfinite(v) && v > 0 ? v * 1.08 : 1.0;
}

void y_axis(Svg& s, const Linear& y, double x0, double x1, const std::string& label) {
  for (double v : nice_ticks(y.d0, y.d1)) {
    const double py = y(v);
    s.line(x0, py, x1, py, "#e3e3e3");
    s.line(x0 - 4, py, x0, py, "#333");
    s.text(x0 - 7, py + 4, tick_label(v), "end");
  }
  s.line(x0, y.r0, x0, y.r1, "#333");
  const double mid = (y.r0 + y.r1) / 2;
  s.text(x0 - 52, mid, label, "middle",
         (" transform=\"rotate(-90 " + num(x0 - 52) + " " + num(mid) + ")\"").c_str());
}

const std::string kModeColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
const std::string kStageColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

const std::string& stage_color(std::size_t i) {
  return kStageColors[i % 10];
}

// A line of the charts: one mode at one worker count.
struct Key {
  std::string mode;
  std::uint32_t workers;
  std::string label, color;
};

std::vector<Key> scene_keys(const Model& m, const Scene& sc) {
  std::vector<Key> keys;
  for (std::size_t gi : sc.groups) {
    const Group& g = m.groups[gi];
    bool seen = false;
    for (const Key& k : keys) seen = seen || (k.mode == g.mode && k.workers == g.workers);
    if (!seen) keys.push_back({g.mode, g.workers, series_label(m, sc, g), ""});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::make_tuple(mode_rank(a.mode), a.mode, a.workers) <
           std::make_tuple(mode_rank(b.mode), b.mode, b.workers);
  });
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const int r = mode_rank(keys[i].mode);
    keys[i].color = r < 4 && (i == 0 || keys[i - 1].mode != keys[i].mode)
                        ? kModeColors[r]
                        : kModeColors[4 + (i % 6)];
  }
  return keys;
}

const Group* find_group(const Model& m, const Scene& sc, const Key& k, std::uint32_t objects) {
  for (std::size_t gi : sc.groups) {
    const Group& g = m.groups[gi];
    if (g.mode == k.mode && g.workers == k.workers && g.objects == objects) return &g;
  }
  return nullptr;
}

// The first repeat of a group that has frames (time series are not pooled across repeats).
const Series* first_series(const Group* g) {
  if (!g) return nullptr;
  for (const Series* se : g->series)
    if (!se->frames.empty()) return se;
  return nullptr;
}

std::string open_svg(const std::string& id, double w, double h, const std::string& title) {
  return "<svg id=\"" + id + "\" role=\"img\" viewBox=\"0 0 " + num(w) + " " + num(h) +
         "\" width=\"" + num(w) + "\" height=\"" + num(h) + "\"><title>" + html_escape(title) +
         "</title>\n";
}

std::string no_data_svg(const std::string& id, const std::string& why) {
  Svg s;
  s.text(20, 30, why, "start", " fill=\"#777\"");
  return open_svg(id, 600, 50, why) + s.out + "</svg>";
}

void legend(Svg& s, double x, double y,
            const std::vector<std::pair<std::string, std::string>>& items, bool boxes = false) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double py = y + 18.0 * static_cast<double>(i);
    if (boxes)
      s.rect(x, py - 9, 12, 12, items[i].second);
    else {
      s.line(x, py - 3, x + 18, py - 3, items[i].second, 2.5);
      s.circle(x + 9, py - 3, 3.5, items[i].second);
    }
    s.text(x + 24, py + 1, items[i].first);
  }
}

// ---- (1) median frame time vs object count ----

std::string chart_frametime(const Model& m, const Scene& sc, const std::vector<Key>& keys) {
  const std::string id = "chart-frametime-" + sc.slug;
  double lo_c = 1e300, hi_c = 0, top = 0, bottom = 1e300;
  for (std::size_t gi : sc.groups) {
    const Group& g = m.groups[gi];
    if (g.summary.n == 0) continue;
    const double c = std::max(1.0, static_cast<double>(g.objects));
    lo_c = std::min(lo_c, c);
    hi_c = std::max(hi_c, c);
    top = std::max({top, g.summary.median, g.summary.ci95_high});
    bottom = std::min({bottom, g.summary.median, g.summary.ci95_low});
  }
  if (hi_c == 0) return no_data_svg(id, "no frame times recorded");
  const double W = 820, H = 380, ml = 75, mr = 170, mt = 20, mb = 55;
  double l0 = std::log10(lo_c), l1 = std::log10(hi_c);
  if (l1 - l0 < 1e-9) {
    l0 -= 0.5;
    l1 += 0.5;
  } else {
    const double pad = (l1 - l0) * 0.06;
    l0 -= pad;
    l1 += pad;
  }
  const Linear x{l0, l1, ml, W - mr};
  // Medians spanning more than 30x (tens to tens of thousands of objects): log y axis too.
  const bool log_y = bottom > 0 && top / bottom > 30;
  const Linear ly{std::log10(bottom) - 0.05, std::log10(top) + 0.05, H - mb, mt};
  const Linear lin{0, y_max(top), H - mb, mt};
  auto y = [&](double v) { return log_y ? ly(std::log10(std::max(v, bottom))) : lin(v); };
  Svg s;
  if (log_y) {
    for (double e = std::floor(ly.d0); e <= std::ceil(ly.d1); ++e)
      for (double mant : {1.0, 2.0, 5.0}) {
        const double v = mant * std::pow(10.0, e);
        if (std::log10(v) < ly.d0 || std::log10(v) > ly.d1) continue;
        s.line(ml, y(v), W - mr, y(v), "#e3e3e3");
        s.line(ml - 4, y(v), ml, y(v), "#333");
        s.text(ml - 7, y(v) + 4, tick_label(v), "end");
      }
    s.line(ml, H - mb, ml, mt, "#333");
    s.text(
        ml - 52, (H - mb + mt) / 2, "median frame time (ms, log scale)", "middle",
        (" transform=\"rotate(-90 " + num(ml - 52) + " " + num((H - mb + mt) / 2) + ")\"").c_str());
  } else {
    y_axis(s, lin, ml, W - mr, "median frame time (ms)");
  }
  s.line(ml, H - mb, W - mr, H - mb, "#333");
  double last_label = -1e9;
  for (std::uint32_t c : sc.object_counts) {
    const double px = x(std::log10(std::max(1.0, static_cast<double>(c))));
    s.line(px, H - mb, px, H - mb + 4, "#333");
    if (px - last_label >= 40) {
      s.text(px, H - mb + 17, std::to_string(c), "middle");
      last_label = px;
    }
  }
  s.text((ml + W - mr) / 2, H - 12, "objects (log scale)", "middle");
  std::vector<std::pair<std::string, std::string>> items;
  for (const Key& k : keys) {
    std::vector<std::pair<double, double>> pts;
    for (std::uint32_t c : sc.object_counts) {
      const Group* g = find_group(m, sc, k, c);
      if (!g || g->summary.n == 0) continue;
      const double px = x(std::log10(std::max(1.0, static_cast<double>(c))));
      pts.emplace_back(px, y(g->summary.median));
      const double e0 = y(g->summary.ci95_low), e1 = y(g->summary.ci95_high);
      s.line(px, e0, px, e1, k.color, 1.2);
      s.line(px - 4, e0, px + 4, e0, k.color, 1.2);
      s.line(px - 4, e1, px + 4, e1, k.color, 1.2);
    }
    if (pts.empty()) continue;
    s.polyline(pts, k.color);
    for (const auto& [px, py] : pts) s.circle(px, py, 3.5, k.color);
    items.emplace_back(k.label, k.color);
  }
  legend(s, W - mr + 18, mt + 12, items);
  return open_svg(id, W, H, "median frame time vs object count, " + sc.name) + s.out + "</svg>";
}

// ---- (2) frame-time distribution per mode at each object count ----

std::string chart_dist(const Model& m, const Scene& sc, const std::vector<Key>& keys) {
  const std::string id = "chart-dist-" + sc.slug;
  std::vector<std::uint32_t> counts;
  for (std::uint32_t c : sc.object_counts)
    for (const Key& k : keys)
      if (const Group* g = find_group(m, sc, k, c); g && g->summary.n > 0) {
        counts.push_back(c);
        break;
      }
  if (counts.empty()) return no_data_svg(id, "no frame times recorded");
  const double slot = 38, pml = 70, pmr = 12, ptop = 28, pbot = 62, ph = 200;
  const double pw = pml + pmr + slot * static_cast<double>(keys.size());
  const int cols = std::max(1, static_cast<int>(1000 / pw));
  const int rows = (static_cast<int>(counts.size()) + cols - 1) / cols;
  const double head = 46;
  const double W = std::max(pw * std::min<double>(cols, static_cast<double>(counts.size())), 600.0);
  const double H = head + rows * (ptop + ph + pbot);
  Svg s;
  std::vector<std::pair<std::string, std::string>> items;
  double lx = 10;
  for (const Key& k : keys) {
    s.rect(lx, 8, 12, 12, k.color);
    s.text(lx + 16, 18, k.label);
    lx += 30 + 7.0 * static_cast<double>(k.label.size());
  }
  s.text(10, 38, "box: p25-p75, bar: median, whiskers: p5-p95, dot: p99", "start",
         " fill=\"#555\"");
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double ox = pw * static_cast<double>(i % static_cast<std::size_t>(cols));
    const double oy =
        head + (ptop + ph + pbot) * static_cast<double>(i / static_cast<std::size_t>(cols));
    struct Box {
      double p5, p25, p50, p75, p95, p99;
    };
    std::vector<std::pair<const Key*, Box>> boxes;
    double top = 0;
    for (const Key& k : keys) {
      const Group* g = find_group(m, sc, k, counts[i]);
      if (!g || g->frame_ms.empty()) continue;
      std::vector<double> v = g->frame_ms;
      std::sort(v.begin(), v.end());
      auto q = [&](double p) { return quantile(v, p); };
      Box b{q(0.05), q(0.25), q(0.5), q(0.75), q(0.95), q(0.99)};
      top = std::max(top, b.p99);
      boxes.emplace_back(&k, b);
    }
    const Linear y{0, y_max(top), oy + ptop + ph, oy + ptop};
    s.text(ox + pml + (pw - pml - pmr) / 2, oy + 18, std::to_string(counts[i]) + " objects",
           "middle", " font-weight=\"bold\"");
    y_axis(s, y, ox + pml, ox + pw - pmr, "frame time (ms)");
    s.line(ox + pml, oy + ptop + ph, ox + pw - pmr, oy + ptop + ph, "#333");
    for (std::size_t b = 0; b < boxes.size(); ++b) {
      const Key& k = *boxes[b].first;
      const Box& bx = boxes[b].second;
      std::size_t slot_i = 0;
      while (&keys[slot_i] != &k) ++slot_i;
      const double cx = ox + pml + slot * (static_cast<double>(slot_i) + 0.5);
      const double hw = slot * 0.3;
      s.line(cx, y(bx.p5), cx, y(bx.p95), k.color, 1.2);
      s.line(cx - hw / 2, y(bx.p5), cx + hw / 2, y(bx.p5), k.color, 1.2);
      s.line(cx - hw / 2, y(bx.p95), cx + hw / 2, y(bx.p95), k.color, 1.2);
      s.rect(cx - hw, y(bx.p75), 2 * hw, y(bx.p25) - y(bx.p75), k.color + "55", k.color);
      s.line(cx - hw, y(bx.p50), cx + hw, y(bx.p50), "#000", 2);
      s.circle(cx, y(bx.p99), 2.5, k.color);
      const double ty = oy + ptop + ph + 12;
      s.text(cx, ty, k.label, "end",
             (" transform=\"rotate(-40 " + num(cx) + " " + num(ty) + ")\"").c_str());
    }
  }
  return open_svg(id, W, H, "frame-time distribution per mode, " + sc.name) + s.out + "</svg>";
}

// ---- (3) per-stage breakdown at the largest object count ----

std::string chart_stages(const Model& m, const Scene& sc, const std::vector<Key>& keys) {
  const std::string id = "chart-stages-" + sc.slug;
  if (sc.stage_names.empty() || sc.object_counts.empty())
    return no_data_svg(id, "no stage timings recorded");
  const std::uint32_t count = sc.object_counts.back();
  std::vector<std::pair<const Key*, const Group*>> bars;
  double top = 0;
  for (const Key& k : keys) {
    const Group* g = find_group(m, sc, k, count);
    if (!g) continue;
    double sum = 0;
    bool any = false;
    for (double v : g->stage_median_ms)
      if (std::isfinite(v) && v > 0) sum += v, any = true;
    if (!any) continue;
    top = std::max(top, sum);
    bars.emplace_back(&k, g);
  }
  if (bars.empty()) return no_data_svg(id, "no stage timings at the largest object count");
  const double ml = 75, mr = 190, mt = 20, mb = 50, bw = 70;
  const double W = std::max(560.0, ml + mr + bw * 1.5 * static_cast<double>(bars.size()));
  const double H = 360;
  const Linear y{0, y_max(top), H - mb, mt};
  Svg s;
  y_axis(s, y, ml, W - mr, "median stage wall time (ms)");
  s.line(ml, H - mb, W - mr, H - mb, "#333");
  const double step = (W - mr - ml) / static_cast<double>(bars.size());
  for (std::size_t b = 0; b < bars.size(); ++b) {
    const double cx = ml + step * (static_cast<double>(b) + 0.5);
    const double w = std::min(bw, step * 0.7);
    double acc = 0;
    for (std::size_t st = 0; st < sc.stage_names.size(); ++st) {
      const double v = bars[b].second->stage_median_ms[st];
      if (!std::isfinite(v) || v <= 0) continue;
      s.rect(cx - w / 2, y(acc + v), w, y(acc) - y(acc + v), stage_color(st), "#fff");
      acc += v;
    }
    s.text(cx, H - mb + 17, bars[b].first->label, "middle");
  }
  s.text((ml + W - mr) / 2, H - 12, "mode at " + std::to_string(count) + " objects", "middle");
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t st = sc.stage_names.size(); st-- > 0;)  // top of the stack first
    items.emplace_back(sc.stage_names[st], stage_color(st));
  legend(s, W - mr + 18, mt + 12, items, true);
  return open_svg(id, W, H, "per-stage breakdown, " + sc.name) + s.out + "</svg>";
}

// ---- (4) worker utilisation heatmap at the largest object count ----

std::string busy_color(double f) {
  f = std::clamp(f, 0.0, 1.0);
  auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", mix(0xf4, 0x08), mix(0xf8, 0x30),
                mix(0xfc, 0x6b));
  return buf;
}

std::string chart_util(const Model& m, const Scene& sc, const std::vector<Key>& keys) {
  const std::string id = "chart-util-" + sc.slug;
  if (sc.object_counts.empty()) return no_data_svg(id, "no frames recorded");
  const std::uint32_t count = sc.object_counts.back();
  struct Panel {
    const Key* key;
    const Series* se;
    std::size_t workers;
  };
  std::vector<Panel> panels;
  for (const Key& k : keys) {
    const Series* se = first_series(find_group(m, sc, k, count));
    if (!se) continue;
    std::size_t nw = 0;
    for (const Frame& f : se->frames) nw = std::max(nw, f.worker_busy_ms.size());
    if (nw > 0) panels.push_back({&k, se, std::min<std::size_t>(nw, 256)});
  }
  if (panels.empty()) return no_data_svg(id, "no worker busy times recorded");
  const double ml = 120, mr = 30, pwid = 640, W = ml + pwid + mr;
  double H = 58;
  auto row_h = [](std::size_t nw) { return nw <= 16 ? 14.0 : std::max(2.0, 224.0 / nw); };
  for (const Panel& p : panels) H += 42 + row_h(p.workers) * static_cast<double>(p.workers);
  Svg s;
  // Colour scale.
  for (int i = 0; i <= 20; ++i) s.rect(ml + i * 12.0, 10, 12, 12, busy_color(i / 20.0));
  s.text(ml - 6, 21, "busy 0%", "end");
  s.text(ml + 21 * 12.0 + 6, 21, "100% of frame time", "start");
  double oy = 58;
  for (const Panel& p : panels) {
    const std::size_t nf = p.se->frames.size();
    const std::size_t bins = std::min<std::size_t>(nf, 320);
    const double rh = row_h(p.workers), cw = pwid / static_cast<double>(bins);
    s.text(ml, oy - 6, p.key->label + " (repeat " + std::to_string(p.se->repeat) + ")", "start",
           " font-weight=\"bold\"");
    for (std::size_t w = 0; w < p.workers; ++w) {
      const double py = oy + rh * static_cast<double>(w);
      if (rh >= 9) s.text(ml - 6, py + rh - 3, "worker " + std::to_string(w), "end");
      for (std::size_t b = 0; b < bins; ++b) {
        const std::size_t f0 = b * nf / bins, f1 = std::max(f0 + 1, (b + 1) * nf / bins);
        double sum = 0;
        int n = 0;
        for (std::size_t f = f0; f < f1; ++f) {
          const Frame& fr = p.se->frames[f];
          if (w >= fr.worker_busy_ms.size() || !(fr.frame_ms > 0)) continue;
          const double v = fr.worker_busy_ms[w] / fr.frame_ms;
          if (std::isfinite(v)) sum += v, ++n;
        }
        if (n > 0)
          s.rect(ml + cw * static_cast<double>(b), py, cw + 0.3, rh, busy_color(sum / n));
        else
          s.rect(ml + cw * static_cast<double>(b), py, cw + 0.3, rh, "#ddd");
      }
    }
    if (rh < 9)
      s.text(ml - 6, oy + rh * static_cast<double>(p.workers) / 2 + 4,
             std::to_string(p.workers) + " workers", "end");
    const double by = oy + rh * static_cast<double>(p.workers);
    const Linear x{0, static_cast<double>(nf), ml, ml + pwid};
    for (double t : nice_ticks(0, static_cast<double>(nf), 6)) {
      s.line(x(t), by, x(t), by + 4, "#333");
      s.text(x(t), by + 15, tick_label(t), "middle");
    }
    oy = by + 42;
  }
  s.text(ml + pwid / 2, H - 6, "frame", "middle");
  return open_svg(id, W, H, "worker utilisation over time, " + sc.name) + s.out + "</svg>";
}

// ---- (5) the dynamic allocator's decisions over time ----

std::string chart_alloc(const Model& m, const Scene& sc, const std::vector<Key>& keys) {
  const std::string id = "chart-alloc-" + sc.slug;
  const Series* se = nullptr;
  for (auto it = sc.object_counts.rbegin(); it != sc.object_counts.rend() && !se; ++it)
    for (const Key& k : keys) {
      if (k.mode != "dynamic") continue;
      const Series* cand = first_series(find_group(m, sc, k, *it));
      if (!cand) continue;
      bool any = false;
      for (const Frame& f : cand->frames) any = any || !f.decisions.empty();
      if (any) {
        se = cand;
        break;
      }
    }
  if (!se) return no_data_svg(id, "no dynamic-mode decisions recorded");
  const std::size_t nf = se->frames.size();
  const std::size_t stride = std::max<std::size_t>(1, (nf + 399) / 400);
  // stage -> points (frame, workers) and (frame, split)
  std::map<std::uint16_t, std::vector<std::pair<double, double>>> wk, sp;
  double max_w = 1, max_s = 1;
  for (std::size_t f = 0; f < nf; f += stride)
    for (const Decision& d : se->frames[f].decisions) {
      wk[d.stage].emplace_back(static_cast<double>(f), d.workers);
      sp[d.stage].emplace_back(static_cast<double>(f), d.split);
      max_w = std::max(max_w, static_cast<double>(d.workers));
      max_s = std::max(max_s, static_cast<double>(d.split));
    }
  const double ml = 75, mr = 190, W = 880, ph = 170, gap = 60, mt = 34;
  const double H = mt + 2 * ph + gap + 45;
  const Linear x{0, static_cast<double>(std::max<std::size_t>(nf - 1, 1)), ml, W - mr};
  const Linear yw{0, max_w * 1.1, mt + ph, mt};
  const Linear ys{0, max_s * 1.1, mt + 2 * ph + gap, mt + ph + gap};
  Svg s;
  s.text(ml, 16,
         "dynamic, " + std::to_string(se->objects) + " objects, " + std::to_string(se->workers) +
             " workers, repeat " + std::to_string(se->repeat),
         "start", " font-weight=\"bold\"");
  y_axis(s, yw, ml, W - mr, "workers");
  y_axis(s, ys, ml, W - mr, "split (chunks)");
  for (const Linear* y : {&yw, &ys}) {
    s.line(ml, y->r0, W - mr, y->r0, "#333");
    for (double t : nice_ticks(x.d0, x.d1, 6)) {
      s.line(x(t), y->r0, x(t), y->r0 + 4, "#333");
      s.text(x(t), y->r0 + 15, tick_label(t), "middle");
    }
  }
  s.text((ml + W - mr) / 2, H - 8, "frame", "middle");
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& [stage, pts] : wk) {
    const std::string& color = stage_color(stage);
    using Pts = const std::vector<std::pair<double, double>>*;
    const std::pair<Pts, const Linear*> panels[] = {{&pts, &yw}, {&sp[stage], &ys}};
    for (const auto& [series, y] : panels) {
      std::vector<std::pair<double, double>> px;  // step line: hold each value until the next
      for (std::size_t i = 0; i < series->size(); ++i) {
        const double xv = x((*series)[i].first), yv = (*y)((*series)[i].second);
        if (!px.empty()) px.emplace_back(xv, px.back().second);
        px.emplace_back(xv, yv);
      }
      if (px.size() == 1) s.circle(px[0].first, px[0].second, 3, color);
      s.polyline(px, color, 1.6);
    }
    items.emplace_back(
        stage < se->stage_names.size() ? se->stage_names[stage] : "stage " + std::to_string(stage),
        color);
  }
  legend(s, W - mr + 18, mt + 12, items, true);
  return open_svg(id, W, H, "dynamic allocator decisions, " + sc.name) + s.out + "</svg>";
}

// ---- (6) predicted scaling: the simulator's replay on 1 to 64 workers ----

std::string chart_scaling(const Model& m, const Scene& sc, const std::vector<Key>& keys) {
  const std::string id = "chart-scaling-" + sc.slug;
  if (sc.object_counts.empty()) return no_data_svg(id, "no frames recorded");
  const std::uint32_t count = sc.object_counts.back();
  const Group* single = single_group(m, sc, count);
  struct Line {
    const Key* key;
    const Group* group;
  };
  std::vector<Line> lines;
  double top = 1, max_w = 1;
  double base = single != nullptr ? single->summary.median : NAN;
  for (const Key& k : keys) {
    const Group* g = find_group(m, sc, k, count);
    if (g == nullptr || g->predictions.empty()) continue;
    lines.push_back({&k, g});
    if (!std::isfinite(base))
      for (const Prediction& p : g->predictions)
        if (p.workers == 1) base = p.frame_ms;
  }
  if (lines.empty() || !(base > 0))
    return no_data_svg(id, "no replayed job graphs (run without --no-graph, and with single)");
  for (const Line& l : lines) {
    for (const Prediction& p : l.group->predictions) {
      if (p.frame_ms > 0) top = std::max(top, base / p.frame_ms);
      if (p.bound_ms > 0) top = std::max(top, base / p.bound_ms);
      max_w = std::max(max_w, static_cast<double>(p.workers));
    }
    if (l.group->summary.median > 0) top = std::max(top, base / l.group->summary.median);
  }
  // The best any scheduler could do, from dynamic's recorded frames cut for each count.
  const Group* bound_of = nullptr;
  for (const Line& l : lines)
    if (l.key->mode == "dynamic") bound_of = l.group;
  const double W = 860, H = 380, ml = 75, mr = 250, mt = 20, mb = 55;
  const Linear x{0, std::log2(max_w), ml, W - mr};
  const Linear y{0, y_max(std::min(top, max_w)), H - mb, mt};
  Svg s;
  y_axis(s, y, ml, W - mr, "speedup over single (measured)");
  s.line(ml, H - mb, W - mr, H - mb, "#333");
  for (double wv = 1; wv <= max_w; wv *= 2) {
    s.line(x(std::log2(wv)), H - mb, x(std::log2(wv)), H - mb + 4, "#333");
    s.text(x(std::log2(wv)), H - mb + 17, tick_label(wv), "middle");
  }
  s.text((ml + W - mr) / 2, H - 12, "workers (log scale)", "middle");
  std::vector<std::pair<std::string, std::string>> items;
  // Perfect scaling, clipped to the chart.
  std::vector<std::pair<double, double>> ideal;
  for (double wv = 1; wv <= max_w; wv *= 2)
    if (wv <= y.d1) ideal.emplace_back(x(std::log2(wv)), y(wv));
  s.polyline(ideal, "#bbbbbb", 1);
  items.emplace_back("perfect scaling", "#bbbbbb");
  if (bound_of != nullptr) {
    std::vector<std::pair<double, double>> bound;
    for (const Prediction& p : bound_of->predictions)
      if (p.bound_ms > 0)
        bound.emplace_back(x(std::log2(std::max<std::uint32_t>(p.workers, 1))),
                           y(std::min(y.d1, base / p.bound_ms)));
    s.polyline(bound, "#555555", 1);
    items.emplace_back("bound (dynamic's frames)", "#555555");
  }
  for (const Line& l : lines) {
    std::vector<std::pair<double, double>> pts;
    for (const Prediction& p : l.group->predictions)
      if (p.frame_ms > 0)
        pts.emplace_back(x(std::log2(std::max<std::uint32_t>(p.workers, 1))),
                         y(std::min(y.d1, base / p.frame_ms)));
    s.polyline(pts, l.key->color);
    for (const auto& [px, py] : pts) s.circle(px, py, 2.5, l.key->color);
    // What was measured, as a ring at its own worker count.
    if (l.group->summary.median > 0) {
      const double px = x(std::log2(std::max<std::uint32_t>(l.group->workers, 1)));
      const double py = y(std::min(y.d1, base / l.group->summary.median));
      s.out += "<circle cx=\"" + num(px) + "\" cy=\"" + num(py) +
               "\" r=\"6\" fill=\"none\" stroke=\"" + l.key->color + "\" stroke-width=\"2\"/>\n";
    }
    items.emplace_back(l.key->label, l.key->color);
  }
  legend(s, W - mr + 18, mt + 12, items);
  return open_svg(id, W, H, "predicted scaling, " + sc.name) + s.out + "</svg>";
}

void html_table(std::string& out, const Table& t) {
  out += "<table><thead><tr>";
  for (const auto& h : t.header) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out += std::string(i < 3 ? "<td>" : "<td class=\"n\">") +
             (row[i].empty() ? "&ndash;" : html_escape(row[i])) + "</td>";
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

void figure(std::string& out, const std::string& svg, const std::string& caption) {
  out += "<figure>\n" + svg + "\n<figcaption>" + html_escape(caption) + "</figcaption></figure>\n";
}

// The scene's screenshots (one per object count), linked relative to the report's folder.
void thumbnails(std::string& out, const Run& run, const std::string& scene,
                const std::string& root) {
  // A path relative to the report's folder where it can be.
  const auto link = [&root](const std::string& path) {
    std::error_code ec;
    const std::filesystem::path rel = std::filesystem::relative(
        std::filesystem::absolute(path, ec), std::filesystem::absolute(root, ec), ec);
    return html_escape(ec || rel.empty() ? path : rel.generic_string());
  };
  std::string row, strips;
  for (const Series& se : run.series) {
    if (se.scene != scene) continue;
    const std::string objects = std::to_string(se.objects) + " objects";
    if (!se.screenshot.empty()) {
      const std::string src = link(se.screenshot);
      row += "<figure style=\"display:inline-block;margin:4px\"><a href=\"" + src +
             "\"><img src=\"" + src + "\" width=\"320\" alt=\"" + html_escape(scene) + ", " +
             objects + "\"></a><figcaption>" + objects + ", last frame</figcaption></figure>\n";
    }
    if (!se.strip.empty())
      strips += "<figure><img src=\"" + link(se.strip) + "\" style=\"max-width:100%\" alt=\"" +
                html_escape(scene) + ", " + objects + ", moving\"><figcaption>" + objects +
                ": frames after the measured ones, left to right, 0.1 s apart</figcaption>"
                "</figure>\n";
  }
  if (!row.empty()) out += "<div>\n" + row + "</div>\n";
  out += strips;
}

}  // namespace

std::string render_html(const Run& run, const Model& m, const std::string& root) {
  const Machine& mc = run.machine;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>Spindle load-test report</title>\n<style>\n"
      "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}\n"
      "table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;"
      "padding:3px 8px}th{background:#f0f0f0}td.n{text-align:right;"
      "font-variant-numeric:tabular-nums}\nfigure{margin:16px 0;border:1px solid #eee;"
      "padding:8px}figcaption{color:#555;font-size:13px;margin-top:4px}\n"
      "svg{font-family:sans-serif;font-size:12px;max-width:100%;height:auto}\n"
      "code{background:#f4f4f4;padding:1px 4px}\n</style></head><body>\n"
      "<h1>Spindle load-test report</h1>\n<h2>Machine</h2>\n<ul>\n";
  auto li = [&](const char* name, const std::string& v) {
    out += "<li>" + std::string(name) + ": " + html_escape(v) + "</li>\n";
  };
  li("cores", std::to_string(mc.cores));
  li("cpu", mc.cpu);
  li("os", mc.os);
  li("compiler", mc.compiler);
  li("flags", mc.flags);
  li("build type", mc.build_type);
  li("date", mc.date);
  li("command line", mc.command_line);
  out += "</ul>\n<h2>Settings</h2>\n<ul>\n";
  li("frames per repeat", std::to_string(run.frames));
  li("warm-up frames (excluded)", std::to_string(run.warmup));
  li("repeats", std::to_string(run.repeats));
  li("background load", run.background);
  li("dynamic mode's weight on a worker's CPU time", fixed(run.cpu_weight, 2));
  li("dynamic mode pins while every core is busy",
     std::string(run.pin_when_busy ? "yes" : "no") + " (" + unpin_when_busy_scope(run) + ")");
  li("seed", std::to_string(run.seed));
  li("non-finite frame times dropped", std::to_string(m.dropped));
  for (const auto& [name, value] : run.parameters) li(name.c_str(), std::to_string(value));
  out += "</ul>\n<h2>How to read this</h2>\n<p>" + html_escape(kHowToRead) + "</p>\n<p>" +
         html_escape(kHowToReadLimit) + "</p>\n";
  for (const Scene& sc : m.scenes) {
    const std::vector<Key> keys = scene_keys(m, sc);
    const std::string largest =
        sc.object_counts.empty() ? "" : std::to_string(sc.object_counts.back());
    out += "<section>\n<h2>Scene " + html_escape(sc.name) + "</h2>\n";
    thumbnails(out, run, sc.name, root);
    out += "<h3>Frame time</h3>\n";
    html_table(out, summary_table(m, sc));
    if (!sc.stage_names.empty()) {
      out += "<h3>Median stage wall time (ms)</h3>\n";
      html_table(out, stage_table(m, sc));
    }
    if (!sc.count_names.empty()) {
      out += "<h3>Counted per frame (median [least, most])</h3>\n";
      html_table(out, count_table(m, sc));
    }
    out += "<h3>The limit: work, span, bound, CPU (medians per frame)</h3>\n";
    html_table(out, limit_table(m, sc));
    out += "<h3>Where the time beyond the bound went</h3>\n";
    html_table(out, lost_table(m, sc));
    out += "<h3>The simulator beside the measurement</h3>\n";
    html_table(out, model_table(m, sc));
    out += "<h3>Predicted scaling (speedup over single, replayed frames)</h3>\n";
    html_table(out, scaling_table(m, sc));
    out += "<h3>On the span with 16 workers (serial stretches to make parallel next)</h3>\n";
    html_table(out, critical_table(m, sc));
    for (const Reference& ref : run.references) {
      if (ref.scene != sc.name) continue;
      out +=
          "<h3>Beside " + html_escape(ref.source) + "</h3>\n<p>" + html_escape(ref.note) + "</p>\n";
      html_table(out, reference_table(m, ref));
    }
    figure(out, chart_frametime(m, sc, keys),
           "Median frame time vs object count per mode (log x axis; log y axis when medians span "
           "more than 30x); error bars: 95% CI of the "
           "median. Scene " +
               sc.name + ".");
    figure(out, chart_dist(m, sc, keys),
           "Frame-time distribution per mode at each object count, all repeats pooled. Scene " +
               sc.name + ".");
    figure(out, chart_stages(m, sc, keys),
           "Median wall time of each stage per mode at " + largest + " objects, stacked. Scene " +
               sc.name + ".");
    figure(out, chart_util(m, sc, keys),
           "Busy fraction of each worker per frame (worker busy time / frame time) at " + largest +
               " objects, first repeat of each mode. Scene " + sc.name + ".");
    figure(out, chart_scaling(m, sc, keys),
           "Predicted scaling at " + largest +
               " objects: each mode's recorded frames replayed on 1 to 64 workers under its "
               "policy (lines), as speedup over single's measured median; rings are what was "
               "measured at the run's own worker count; the bound is the best any scheduler "
               "could do with dynamic's frames cut for that many workers. Scene " +
               sc.name + ".");
    figure(out, chart_alloc(m, sc, keys),
           "Workers and split chosen per stage each frame by the dynamic allocator at the largest "
           "object count, first repeat. Scene " +
               sc.name + ".");
    out += "</section>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace spindle::report::detail
