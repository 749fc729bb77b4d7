#include "server/predict/portfolio.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "server/core/ties.h"

namespace cutune::predict {

double ShapeDistance(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] <= 0 || b[i] <= 0) return std::numeric_limits<double>::infinity();
    d += std::fabs(std::log2(static_cast<double>(a[i]) / static_cast<double>(b[i])));
  }
  return d;
}

double Portfolio::Coverage() const {
  size_t cells = 0, measured = 0;
  for (const auto& row : time_us) {
    for (double t : row) {
      ++cells;
      measured += t > 0;
    }
  }
  return cells == 0 ? 0 : static_cast<double>(measured) / static_cast<double>(cells);
}

Portfolio BuildPortfolio(const std::vector<TunedShape>& tuned,
                         const std::vector<Observation>& observations, size_t max_members) {
  // Shapes in the given order; observations indexed by (shape, configuration).
  std::map<Shape, size_t> shape_index;
  Portfolio all;
  for (const TunedShape& t : tuned) {
    if (!(t.winner_us > 0) || shape_index.count(t.shape)) continue;
    shape_index.emplace(t.shape, all.shapes.size());
    all.shapes.push_back(t.shape);
    all.best_us.push_back(t.winner_us);
  }
  // Candidates: the winners, in canonical order so that equal gains pick deterministically.
  std::map<Params, size_t> candidate_index;
  for (const TunedShape& t : tuned) {
    if (t.winner_us > 0) candidate_index.emplace(t.winner, 0);
  }
  std::vector<Params> candidates;
  for (auto& [params, index] : candidate_index) {
    index = candidates.size();
    candidates.push_back(params);
  }
  const size_t shapes = all.shapes.size();
  std::vector<std::vector<double>> time(shapes, std::vector<double>(candidates.size(), 0));
  auto note = [&](const Shape& shape, const Params& params, double us) {
    auto s = shape_index.find(shape);
    auto c = candidate_index.find(params);
    if (s == shape_index.end() || c == candidate_index.end() || !(us > 0)) return;
    double& cell = time[s->second][c->second];
    if (cell == 0 || us < cell) cell = us;
  };
  for (const Observation& o : observations) note(o.shape, o.params, o.time_us);
  for (const TunedShape& t : tuned) note(t.shape, t.winner, t.winner_us);
  for (size_t s = 0; s < shapes; ++s) {
    for (double cell : time[s]) {
      if (cell > 0) all.best_us[s] = std::min(all.best_us[s], cell);
    }
  }

  // Greedy selection on sum of log(score).
  std::vector<double> covered(shapes, kUncovered);
  std::vector<bool> chosen(candidates.size(), false);
  std::vector<size_t> order;
  while (order.size() < max_members) {
    double best_gain = 0;
    std::optional<size_t> best;
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (chosen[c]) continue;
      double gain = 0;
      for (size_t s = 0; s < shapes; ++s) {
        if (time[s][c] <= 0) continue;
        const double score = std::min(1.0, all.best_us[s] / time[s][c]);
        if (score > covered[s]) gain += std::log(score / covered[s]);
      }
      // Gains within a relative 1e-4 are equal (a table rounds times to 6 digits): the
      // canonically first candidate keeps the step.
      if (gain > best_gain * (1 + 1e-4) + 1e-12) {
        best_gain = gain;
        best = c;
      }
    }
    if (!best) break;
    chosen[*best] = true;
    order.push_back(*best);
    for (size_t s = 0; s < shapes; ++s) {
      if (time[s][*best] > 0) {
        covered[s] = std::max(covered[s], std::min(1.0, all.best_us[s] / time[s][*best]));
      }
    }
  }

  // Members in canonical order: the set is what the greedy chose, the order independent of it.
  std::sort(order.begin(), order.end());
  Portfolio out;
  out.shapes = all.shapes;
  out.best_us = all.best_us;
  out.time_us.assign(shapes, {});
  for (size_t c : order) out.members.push_back(candidates[c]);
  for (size_t s = 0; s < shapes; ++s) {
    for (size_t c : order) out.time_us[s].push_back(time[s][c]);
  }
  return out;
}

std::vector<Params> NearestWinners(const std::vector<TunedShape>& tuned, const Shape& shape,
                                   size_t max) {
  std::vector<std::pair<double, const Params*>> ranked;
  for (const TunedShape& t : tuned) ranked.push_back({ShapeDistance(t.shape, shape), &t.winner});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return CanonicalBefore(*a.second, *b.second);
  });
  std::vector<Params> out;
  for (const auto& [distance, params] : ranked) {
    if (out.size() == max) break;
    if (std::find(out.begin(), out.end(), *params) == out.end()) out.push_back(*params);
  }
  return out;
}

}  // namespace cutune::predict
