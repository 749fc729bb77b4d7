#include "server/predict/model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace cutune::predict {
namespace {

double Work(const Shape& shape) {
  double work = 1;
  for (int64_t d : shape) work *= static_cast<double>(d);
  return work;
}

}  // namespace

std::vector<double> Model::Features(const Shape& shape) const {
  std::vector<double> f;
  f.reserve(2 * shape.size());
  for (int64_t d : shape) f.push_back(std::log2(static_cast<double>(std::max<int64_t>(d, 1))));
  for (int64_t d : shape) f.push_back(d % 4 != 0 ? options_.unaligned_penalty : 0.0);
  return f;
}

void Model::Precompute() {
  const Portfolio& p = portfolio_;
  shape_features_.clear();
  efficiency_at_.assign(p.shapes.size(), std::vector<double>(p.members.size(), 1.0));
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    shape_features_.push_back(Features(p.shapes[s]));
    if (!efficiency_) continue;
    for (size_t m = 0; m < p.members.size(); ++m) {
      efficiency_at_[s][m] = efficiency_(p.members[m], p.shapes[s]);
    }
  }
}

std::vector<double> Model::Scores(const Shape& shape) const {
  const Portfolio& p = portfolio_;
  if (p.empty() || p.shapes.empty() || p.shapes.front().size() != shape.size()) return {};
  for (int64_t d : shape) {
    if (d <= 0) return {};
  }
  const std::vector<double> asked = Features(shape);
  std::vector<std::pair<double, size_t>> near;
  near.reserve(p.shapes.size());
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    const std::vector<double>& f = shape_features_[s];
    double d = 0;
    for (size_t i = 0; i < f.size(); ++i) d += std::fabs(f[i] - asked[i]);
    near.push_back({d, s});
  }
  const size_t k = std::min(near.size(), std::max<size_t>(options_.neighbours, 1));
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
  near.resize(k);
  std::vector<double> scores(p.members.size(), 0);
  for (size_t m = 0; m < p.members.size(); ++m) {
    const double at_asked = efficiency_ ? efficiency_(p.members[m], shape) : 1.0;
    double sum = 0, weights = 0;
    for (const auto& [distance, s] : near) {
      const double w = 1.0 / (distance + options_.distance_offset);
      const double t = p.Time(s, m);
      double v = t > 0 ? std::log(t / p.best_us[s]) : std::log(options_.unmeasured_slowdown);
      if (efficiency_ && at_asked > 0) {
        const double there = efficiency_at_[s][m];
        if (there > 0) v += std::log(there / at_asked);
      }
      sum += w * std::max(v, 0.0);
      weights += w;
    }
    scores[m] = sum / weights;
  }
  return scores;
}

std::optional<Prediction> Model::Predict(const Shape& shape) const {
  const std::vector<double> scores = Scores(shape);
  if (scores.empty()) return std::nullopt;
  const size_t m = static_cast<size_t>(std::min_element(scores.begin(), scores.end()) -
                                       scores.begin());
  const Portfolio& p = portfolio_;
  Prediction out;
  out.member = m;
  out.params = p.members[m];
  out.raw_slowdown = std::exp(scores[m]);
  out.expected_slowdown = std::max(1.0, out.raw_slowdown * calibration_);
  // The time: each measuring neighbour's time scaled by the work and by how the launch fits,
  // averaged in log space with the neighbours' weights; the nearest one is reported as measured.
  const std::vector<double> asked = Features(shape);
  const double at_asked = efficiency_ ? efficiency_(out.params, shape) : 1.0;
  std::vector<std::pair<double, size_t>> near;
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    if (!(p.Time(s, m) > 0)) continue;
    const std::vector<double>& f = shape_features_[s];
    double d = 0;
    for (size_t i = 0; i < f.size(); ++i) d += std::fabs(f[i] - asked[i]);
    near.push_back({d, s});
  }
  std::sort(near.begin(), near.end());
  near.resize(std::min(near.size(), std::max<size_t>(options_.neighbours, 1)));
  double sum = 0, weights = 0;
  for (const auto& [distance, s] : near) {
    const double w = 1.0 / (distance + options_.distance_offset);
    double log_t = std::log(p.Time(s, m)) + std::log(Work(shape) / Work(p.shapes[s]));
    if (efficiency_ && at_asked > 0) {
      const double there = efficiency_at_[s][m];
      if (there > 0) log_t += std::log(there / at_asked);
    }
    sum += w * log_t;
    weights += w;
  }
  if (!near.empty()) {
    out.predicted_time_us = std::exp(sum / weights);
    out.measured_shape = p.shapes[near.front().second];
    out.measured_us = p.Time(near.front().second, m);
  }
  return out;
}

std::vector<Params> Model::Ranked(const Shape& shape) const {
  const std::vector<double> scores = Scores(shape);
  std::vector<size_t> order(portfolio_.members.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (!scores.empty()) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  }
  std::vector<Params> out;
  for (size_t m : order) out.push_back(portfolio_.members[m]);
  return out;
}

Evaluation Model::LeaveOneShapeOut(const std::vector<TunedShape>& tuned,
                                   const std::vector<Observation>& observations,
                                   const EfficiencyFn& efficiency, const ModelOptions& options) {
  const CandidateMatrix m = MakeCandidateMatrix(tuned, observations);
  Evaluation out;
  std::vector<bool> include(m.shapes.size(), true);
  for (size_t q = 0; q < m.shapes.size(); ++q) {
    include[q] = false;
    Model model;
    std::vector<size_t> members;
    model.portfolio_ = SelectPortfolio(m, include, kMaxMembers, &members);
    model.efficiency_ = efficiency;
    model.options_ = options;
    model.Precompute();
    include[q] = true;
    const std::optional<Prediction> pick = model.Predict(m.shapes[q]);
    if (!pick) continue;
    const double picked = m.time[q][members[pick->member]];
    // The nearest other tuned shape's winner (the NEAREST_SHAPE rung's answer).
    std::optional<size_t> nearest;
    for (size_t s = 0; s < m.shapes.size(); ++s) {
      if (s == q) continue;
      if (!nearest || ShapeDistance(m.shapes[s], m.shapes[q]) <
                          ShapeDistance(m.shapes[*nearest], m.shapes[q])) {
        nearest = s;
      }
    }
    const double nearest_time = nearest ? m.time[q][m.winner_of[*nearest]] : 0;
    if (!(picked > 0) || !(nearest_time > 0)) continue;
    out.shapes.push_back(m.shapes[q]);
    out.model_ratio.push_back(m.best_us[q] / picked);
    out.nearest_ratio.push_back(m.best_us[q] / nearest_time);
    out.predicted_slowdown.push_back(pick->raw_slowdown);
    out.actual_slowdown.push_back(picked / m.best_us[q]);
  }
  return out;
}

Model Model::Train(const std::vector<TunedShape>& tuned,
                   const std::vector<Observation>& observations, EfficiencyFn efficiency,
                   ModelOptions options) {
  Model model;
  model.portfolio_ = BuildPortfolio(tuned, observations);
  model.efficiency_ = std::move(efficiency);
  model.options_ = options;
  model.Precompute();
  model.evaluation_ = LeaveOneShapeOut(tuned, observations, model.efficiency_, options);
  const Evaluation& e = model.evaluation_;
  if (!e.shapes.empty()) {
    std::vector<double> ratio;
    for (size_t i = 0; i < e.shapes.size(); ++i) {
      ratio.push_back(e.actual_slowdown[i] / e.predicted_slowdown[i]);
    }
    std::nth_element(ratio.begin(), ratio.begin() + static_cast<std::ptrdiff_t>(ratio.size() / 2),
                     ratio.end());
    model.calibration_ = std::max(1.0, ratio[ratio.size() / 2]);
  }
  return model;
}

}  // namespace cutune::predict
